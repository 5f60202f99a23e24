# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU gate on the lab: one node, two nodes at once, and the full profile, side by side in one run.

Times ``playbooks/gpu_gate.yml -e regate=... -e confirm=...`` (the gate re-run on nodes that passed) for gpu2
alone, then gpu2 and gpu3 at once, then gpu2 with the full profile; each ``--rounds`` times (default 3).
Ratio 2-at-once / 1: near 1 means the nodes are gated in parallel; 2 would mean one after another. The lab's
tools are simulated (lab/gpucloud_lab/sim/gpu_tools_sim.py answers at once), so the figures are the collection's
own cost around the tools, not a GPU's test time: on real GPUs the quick profile is DCGM level 2 (about 2 min)
plus nvbandwidth and NCCL, the full one DCGM level 3 (about 15 min).

Needs the running, converged lab (``make lab``: site.yml gated gpu2 and gpu3). Leaves both gated and passing.
Run: .venv/bin/python bench/bench_gate.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

import ansible_runner  # noqa: E402

LAB_INVENTORY = REPO / "inventories" / "lab"
KUBECONFIG = "/var/lib/gpucloud-lab/kubeconfig"
VAULT = "/var/lib/gpucloud-lab/vault-password"


def gate(nodes: str, profile: str = "quick") -> float:
    with tempfile.TemporaryDirectory(prefix="bench-runner-") as private:
        start = time.perf_counter()
        run = ansible_runner.run(
            private_data_dir=private, project_dir=str(REPO), playbook=str(REPO / "playbooks" / "gpu_gate.yml"),
            inventory=str(LAB_INVENTORY), extravars={"regate": nodes, "confirm": nodes, "gpu_gate_profile": profile},
            limit=nodes, quiet=True,
            envvars={"ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "KUBECONFIG": KUBECONFIG,
                     "ANSIBLE_VAULT_PASSWORD_FILE": VAULT})
        took = time.perf_counter() - start
        if run.rc != 0:
            sys.exit("gpu_gate.yml on %s failed (rc %s): is the lab up and converged?" % (nodes, run.rc))
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    cases = {"quick, gpu2": ("gpu2", "quick"), "quick, gpu2+gpu3 at once": ("gpu2,gpu3", "quick"),
             "full, gpu2": ("gpu2", "full")}
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _round in range(rounds):
        for name, (nodes, profile) in cases.items():
            times[name].append(gate(nodes, profile))
    one = statistics.median(times["quick, gpu2"])
    print("%-28s %10s %8s" % ("case", "median s", "ratio"))
    for name, values in times.items():
        print("%-28s %10.1f %8.2f" % (name, statistics.median(values), statistics.median(values) / one))
    print("(%d rounds; ratio against the quick gate of one node; simulated tools: the collection's own cost)" % rounds)


if __name__ == "__main__":
    main()
