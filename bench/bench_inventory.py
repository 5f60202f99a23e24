# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The commands users type, on fleets written the way people write them, at 1,000 and 5,000 nodes.

Fleets: 1,000 tenants (half private, three dedicated nodes each where the fleet has room),
128 leaves, a /16 management network, no explicit WireGuard addresses. Each command runs in
its own process and is measured side by side in one run: wall time and peak memory (the
process's max RSS), and the growth from the smaller fleet to the larger one next to the growth
in nodes (linear growth: the ratios match once start-up is subtracted).
Targets at 5,000 nodes: `ansible-inventory --list` < 30 s and < 1.5 GiB; playbook start-up < 10 s.
Run: .venv/bin/python bench/bench_inventory.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)  # tests.support

from tests.support.fleetgen import generate  # noqa: E402

BIN = os.path.dirname(sys.executable)
SIZES = [1000, 5000]
TARGETS = {"list": (30.0, 1536), "start": (10.0, None)}  # seconds, MiB at the largest size
PLAYBOOK = """\
- name: Start-up
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Count what the inventory holds
      ansible.builtin.debug:
        msg: "{{ groups['gpu_nodes'] | length }} nodes, {{ gpucloud_tenants | length }} tenants"
"""


def measure(argv: list[str], env: dict) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one command, in its own process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    _pid, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("%s failed: %s" % (" ".join(argv), proc.stderr.read().decode()[-2000:]))
    return elapsed, usage.ru_maxrss / 1024


def main() -> int:
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), PATH=BIN + os.pathsep + os.environ["PATH"])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        playbook = os.path.join(tmp, "start.yml")
        with open(playbook, "w") as fh:
            fh.write(PLAYBOOK)
        for nodes in SIZES:
            path = os.path.join(tmp, "%d.fleet.yml" % nodes)
            with open(path, "w") as fh:
                yaml.safe_dump(generate(nodes, 1000, 128, private_share=0.5, nodes_per_private=3), fh, sort_keys=False)
            inv = os.path.join(BIN, "ansible-inventory")
            row = {"nodes": nodes, "kib": os.path.getsize(path) / 1024}
            row["list"] = measure([inv, "-i", path, "--list", "--output", os.path.join(tmp, "list.json")], env)
            row["list_kib"] = os.path.getsize(os.path.join(tmp, "list.json")) / 1024
            exported = os.path.join(tmp, "export.json")
            row["export"] = measure([inv, "-i", path, "--list", "--export", "--output", exported], env)
            row["start"] = measure([os.path.join(BIN, "ansible-playbook"), "-i", path, playbook], env)
            rows.append(row)
    print("inventory at scale (1,000 tenants, half private, 128 leaves); each command in its own process")
    header = ("nodes", "fleet KiB", "--list s / peak MiB", "output KiB", "--list --export", "ansible-playbook start")
    print("%6s %9s | %-22s %10s | %-22s | %-22s" % header)
    for r in rows:
        print("%6d %9.0f | %8.1f s %8.0f MiB %10.0f | %8.1f s %8.0f MiB | %8.1f s %8.0f MiB" % (
            r["nodes"], r["kib"], *r["list"], r["list_kib"], *r["export"], *r["start"]))
    small, large = rows[0], rows[-1]
    print("growth %d -> %d nodes (x%.1f): --list x%.1f time, x%.1f memory; start-up x%.1f time" % (
        small["nodes"], large["nodes"], large["nodes"] / small["nodes"], large["list"][0] / small["list"][0],
        large["list"][1] / small["list"][1], large["start"][0] / small["start"][0]))
    ok = True
    for key, (seconds, mib) in TARGETS.items():
        took, peak = large[key]
        met = took < seconds and (mib is None or peak < mib)
        ok = ok and met
        print("target %-5s at %d nodes: < %.0f s%s: %s (%.1f s, %.0f MiB)" % (
            key, large["nodes"], seconds, "" if mib is None else ", < %d MiB" % mib, "met" if met else "MISSED",
            took, peak))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
