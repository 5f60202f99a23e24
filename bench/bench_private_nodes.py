# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private nodes on the lab: joining one node, and three in parallel, side by side in one run.

A copy of the lab fleet gives the private tenant acme all three lab GPU hosts (gpu1-gpu3). After
the tenant's control plane (tenants.yml) and the tunnels (private_nodes.yml without the join), it
times ``private_nodes.yml`` doing the join (tunnels already there: no change) for one node, then
for three at once, resetting the nodes in between; each is run ``--rounds`` times (default 2).
Ratio 3-at-once / 1: near 1 means the joins run in parallel; 3 would mean one after another.

Needs the running lab (``lab/gpucloud-lab up``, root). It resets gpu1-gpu3 (``kubeadm reset``,
which takes gpu2/gpu3 out of the host cluster if site.yml had joined them) and removes the
tenant, the tunnels and the kubeconfigs at the end.
Run: .venv/bin/python bench/bench_private_nodes.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

import ansible_runner  # noqa: E402

LAB_INVENTORY = REPO / "inventories" / "lab"
KUBECONFIG = "/var/lib/gpucloud-lab/kubeconfig"
NODES = {"gpu1": "198.51.100.21", "gpu2": "198.51.100.22", "gpu3": "198.51.100.23"}
SSH = ["ssh", "-i", "/var/lib/gpucloud-lab/ssh/id_ed25519", "-o", "StrictHostKeyChecking=no",
       "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR"]


def inventory(where: Path) -> Path:
    inv = where / "lab"
    shutil.copytree(LAB_INVENTORY, inv)
    fleet = yaml.safe_load((inv / "fleet.yml").read_text())
    fleet["tenants"] = [t for t in fleet["tenants"] if t["name"] == "acme"]
    for node in fleet["nodes"]:
        if node["name"] in NODES:
            node["tenant"] = "acme"
    (inv / "fleet.yml").write_text(yaml.safe_dump(fleet, sort_keys=False))
    return inv


def play(inv: Path, playbook: str, extravars: dict, limit: str | None = None) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-runner-") as private:
        start = time.perf_counter()
        run = ansible_runner.run(private_data_dir=private, project_dir=str(REPO), playbook=str(REPO / playbook),
                                 inventory=str(inv), extravars=extravars, limit=limit, quiet=True,
                                 envvars={"ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "KUBECONFIG": KUBECONFIG})
        took = time.perf_counter() - start
        if run.rc != 0:
            failed = [e["event_data"].get("res", {}).get("msg") for e in run.events if e["event"] == "runner_on_failed"]
            raise SystemExit(f"{playbook} failed: {failed}")
        return took


def reset(kubeconfig: Path) -> None:
    for name, ip in NODES.items():
        subprocess.run([*SSH, f"root@{ip}", "kubeadm reset -f >/dev/null 2>&1 || true"], check=False)
        if kubeconfig.exists():
            subprocess.run(["kubectl", f"--kubeconfig={kubeconfig}", "delete", "node", name, "--ignore-not-found"],
                           capture_output=True, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-private-") as tmp:
        inv = inventory(Path(tmp))
        kdir = Path(tmp) / "kubeconfigs"
        common = {"tenants_kubeconfig_dir": str(kdir)}
        kubeconfig = kdir / "acme.kubeconfig"
        reset(kubeconfig)
        try:
            play(inv, "playbooks/tenants.yml", common)
            play(inv, "playbooks/private_nodes.yml", {**common, "private_node_join_join": False})
            one, three = [], []
            for _round in range(args.rounds):
                reset(kubeconfig)
                one.append(play(inv, "playbooks/private_nodes.yml", common, limit="cp,gpu1"))
                reset(kubeconfig)
                three.append(play(inv, "playbooks/private_nodes.yml", common, limit="cp,gpu1,gpu2,gpu3"))
        finally:
            play(inv, "playbooks/private_nodes.yml", {**common, "private_node_join_state": "absent"})
            play(inv, "playbooks/tenant_offboard.yml", {**common, "tenant": "acme", "confirm": "acme"},
                 limit="localhost")
    t1, t3 = statistics.median(one), statistics.median(three)
    print(f"{'case':<34}{'median s':>10}   runs")
    print(f"{'join 1 private node':<34}{t1:>10.1f}   {', '.join(f'{t:.1f}' for t in one)}")
    print(f"{'join 3 private nodes at once':<34}{t3:>10.1f}   {', '.join(f'{t:.1f}' for t in three)}")
    print(f"ratio 3 at once / 1: {t3 / t1:.2f} (1.0 = fully parallel, 3.0 = one after another)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
