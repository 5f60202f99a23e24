# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""From an installed OS to a Ready Node, on the lab: one node, and three at once, side by side in one run.

Each case starts from fresh lab hosts (``gpucloud-lab down`` then ``up``: the hosts boot from their base image,
which has no kubeadm, kubelet or kubectl, as a server has after its OS install) and runs ``gpu_hosts.yml``: the
node stack from the site's mirror (Kubernetes packages pinned and held, kernel prep, containerd with the site's
registry), then ``kubeadm join`` to the host cluster and the wait for the Node's Ready condition (node_join). The
time is the playbook's wall time; the bench then checks every Node is Ready in the API. A copy of the lab fleet
makes gpu1 a shared node too (the lab's fleet gives it to the private tenant acme), so that three nodes join the
host cluster. Ratio 3-at-once / 1: near 1 means the nodes are set up in parallel; 3 one after another.

``--kubelet simulated`` (the default) joins with the lab's simulated kubelet (lab/README.md): the join, TLS
bootstrap and registration are real, no pod runs, so the time to Ready has no runtime start, image pulls or CNI
in it. ``--kubelet real`` points the nodes at the lab mirror's real-kubelet repository (a site whose mirror that
is) and writes each node's pod network first, as a site's network add-on would (the bridge network of
tests/integration/test_real_kubelet.py): the real kubelet starts its container manager, PLEG and the runtime's
network before the Node turns Ready.

Needs root and the lab's caches (``gpucloud-lab prepare``); it takes the lab down and up for each case and leaves
it up, unconverged (run site.yml, or ``gpucloud-lab down``, after).
Run: .venv/bin/python bench/bench_node_stack.py [--rounds 1] [--kubelet simulated|real]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

import ansible_runner  # noqa: E402

LAB = REPO / "lab" / "gpucloud-lab"
LAB_INVENTORY = REPO / "inventories" / "lab"
KUBECONFIG = "/var/lib/gpucloud-lab/kubeconfig"
NODES = ["gpu1", "gpu2", "gpu3"]


def inventory(where: Path, kubelet: str = "simulated") -> Path:
    """The lab inventory (for ``kubelet`` real, the real-kubelet repository as the nodes' mirror) with gpu1 shared
    (its `tenant: acme` line and the tenant dropped; the fleet's vaulted BMC passwords stay as they are, so the text
    is edited rather than loaded)."""
    inv = where / "lab"
    shutil.copytree(LAB_INVENTORY, inv)
    fleet = (inv / "fleet.yml").read_text()
    gpu1 = re.search(r"^  - name: gpu1\n(?:    .*\n|\s*\n)*?(?=  - name: )", fleet, re.M)
    assert gpu1 and "    tenant: acme\n" in gpu1.group(0), "gpu1 in the lab fleet"
    fleet = fleet[:gpu1.start()] + gpu1.group(0).replace("    tenant: acme\n", "") + fleet[gpu1.end():]
    # acme, a private tenant, is left without nodes, which the fleet model refuses: it goes too.
    acme = re.search(r"^  - name: acme\n(?:    .*\n)*", fleet, re.M)
    assert acme and "isolation: private" in acme.group(0), "tenant acme in the lab fleet"
    (inv / "fleet.yml").write_text(fleet[:acme.start()] + fleet[acme.end():])
    if kubelet == "real":
        group = inv / "group_vars" / "gpu_nodes.yml"
        text = group.read_text()
        assert "/core:/stable:" in text, "the lab mirror in group_vars/gpu_nodes.yml"
        group.write_text(text.replace("8881/core:/stable:", "8881/real-kubelet/core:/stable:"))
    return inv


def pod_network(nodes: list[str]) -> None:
    """Each node's CNI configuration, as the site's network add-on writes it (the real kubelet's Node turns Ready
    only once the runtime's network is)."""
    from tests.integration.lab import write_pod_network  # the pod network of tests/integration/test_real_kubelet.py
    for node in nodes:
        write_pod_network(node, f"10.244.{20 + NODES.index(node)}.0/24")


def fresh_lab() -> None:
    for action in ("down", "up"):
        subprocess.run([str(LAB), action], check=True, stdout=subprocess.DEVNULL)


def ready_nodes() -> set[str]:
    out = subprocess.run(["kubectl", f"--kubeconfig={KUBECONFIG}", "get", "nodes", "-o", "json"],
                         capture_output=True, text=True, check=True).stdout
    return {n["metadata"]["name"] for n in json.loads(out)["items"]
            if any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"].get("conditions", []))}


def play(inv: Path, limit: str) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-runner-") as private:
        start = time.perf_counter()
        run = ansible_runner.run(private_data_dir=private, project_dir=str(REPO),
                                 playbook=str(REPO / "playbooks" / "gpu_hosts.yml"), inventory=str(inv),
                                 limit=limit, quiet=True,
                                 envvars={"ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "KUBECONFIG": KUBECONFIG})
        took = time.perf_counter() - start
        if run.rc != 0:
            failed = [e["event_data"].get("res", {}).get("msg") for e in run.events if e["event"] == "runner_on_failed"]
            raise SystemExit(f"gpu_hosts.yml --limit {limit} failed: {failed}")
    missing = set(limit.split(",")) - ready_nodes()
    if missing:
        raise SystemExit(f"not Ready after gpu_hosts.yml: {sorted(missing)}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--kubelet", choices=("simulated", "real"), default="simulated")
    args = parser.parse_args()
    one: list[float] = []
    three: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-node-stack-") as tmp:
        inv = inventory(Path(tmp), args.kubelet)
        for _round in range(args.rounds):
            for cases, limit in ((one, "gpu1"), (three, ",".join(NODES))):
                fresh_lab()
                if args.kubelet == "real":
                    pod_network(limit.split(","))
                cases.append(play(inv, limit))
                print(f"  {limit}: {cases[-1]:.1f} s", flush=True)
    t1, t3 = statistics.median(one), statistics.median(three)
    print(f"kubelet: {args.kubelet}")
    print(f"{'case (installed OS to Ready Node)':<40}{'median s':>10}   runs")
    print(f"{'1 node':<40}{t1:>10.1f}   {', '.join(f'{t:.1f}' for t in one)}")
    print(f"{'3 nodes at once':<40}{t3:>10.1f}   {', '.join(f'{t:.1f}' for t in three)}")
    print(f"ratio 3 at once / 1: {t3 / t1:.2f} (1.0 = fully parallel, 3.0 = one after another)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
