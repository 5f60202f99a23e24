# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tenants stage on the lab, measured side by side in one run.

1. ``kai_queues``: the whole tree of N tenants (default 200) in one task, against
   ``kubernetes.core.k8s`` in a loop over the same N+1 Queue objects (target: at least 10x faster).
2. Onboarding a shared tenant: ``tenant_onboard.yml -e tenant=...`` (the tenants stage's plays; the
   fabric play is the fabric benchmark's) for the 1st, 2nd, ... and the Mth tenant (default 20) of a
   fleet made from the lab's with M extra shared tenants. Reported with and without the wait for the
   control plane's own start (the lab controller starting a real kube-apiserver); target under 15 s
   per tenant, and flat: the Mth costs what the 1st does.
3. Onboarding the lab's private tenant (acme) with its tunnel and its node's join
   (``--limit localhost,<gateway>,<its nodes>``), after offboarding it: target under 30 s.
4. Where the time goes: the tasks that took longest, summed per task name, for the 1st shared
   tenant, the Mth, and the private one.

Needs the running lab (``lab/gpucloud-lab up``, root; for 3, after ``site.yml``). Every tenant and queue
it makes is removed at the end; acme is onboarded again. Each onboarded tenant runs a real
kube-apiserver in the lab: M=20 needs ~5 GiB.
Run: .venv/bin/python bench/bench_tenants.py [--queues 200] [--tenants 20] [--private/--no-private]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / ".collections"))
sys.path.insert(0, str(REPO))

import ansible_runner  # noqa: E402

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.queue_tree import queue_tree  # noqa: E402
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.queues import queue_object  # noqa: E402

KUBECONFIG = "/var/lib/gpucloud-lab/kubeconfig"
LAB_INVENTORY = REPO / "inventories" / "lab"
WAIT_TASK = "Wait for the tenant control plane and export its kubeconfig"
QUEUES_PLAY = """
- name: Bench | queue tree
  hosts: localhost
  gather_facts: false
  tasks:
    - name: One task for the whole tree
      gpucloud.baremetal.kai_queues:
        kubeconfig: "{{ kubeconfig }}"
        tenants: "{{ bench_tenants }}"
        gpu_capacity: "{{ bench_capacity }}"
        parent: {name: bench-batch}
        state: "{{ bench_state }}"
      when: bench_mode == 'batch'
    - name: One task per queue
      kubernetes.core.k8s:
        kubeconfig: "{{ kubeconfig }}"
        definition: "{{ item }}"
        state: "{{ bench_state }}"
      loop: "{{ bench_objects }}"
      loop_control:
        label: "{{ item.metadata.name }}"
      when: bench_mode == 'loop'
"""


def run(playbook: Path, inventory: Path, extravars: dict, limit: str | None = None) -> tuple[float, list[dict], int]:
    with tempfile.TemporaryDirectory(prefix="gpucloud-bench-runner-") as private:
        start = time.perf_counter()
        result = ansible_runner.run(
            private_data_dir=private, project_dir=str(REPO), playbook=str(playbook), inventory=str(inventory),
            extravars=extravars, limit=limit, quiet=True,
            envvars={"ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "KUBECONFIG": KUBECONFIG,
                     "ANSIBLE_HOME": str(Path(private) / "ansible-home")},
        )
        elapsed = time.perf_counter() - start
        return elapsed, list(result.events), result.rc


FINISHED = ("runner_on_ok", "runner_on_failed", "runner_on_skipped")


def task_seconds(events: list[dict], task: str) -> float:
    return sum(float(e["event_data"].get("duration") or 0) for e in events
               if e.get("event") in FINISHED and e["event_data"].get("task") == task)


def where_time_goes(events: list[dict], top: int = 8) -> list[tuple[str, float]]:
    """(task, seconds) of the longest tasks, summed per task name over hosts and loop items (the longest host
    of a task counts for plays on several hosts: they run side by side)."""
    per_task: dict[str, dict[str, float]] = {}
    for event in events:
        data = event.get("event_data", {})
        if event.get("event") in FINISHED and not data.get("res", {}).get("_ansible_item_result"):
            hosts = per_task.setdefault(data.get("task", "?"), {})
            hosts[data.get("host", "")] = hosts.get(data.get("host", ""), 0.0) + float(data.get("duration") or 0)
    totals = {task: max(hosts.values()) for task, hosts in per_task.items()}
    return sorted(totals.items(), key=lambda kv: -kv[1])[:top]


def show_where(label: str, events: list[dict]) -> None:
    print("  where the time goes (%s): %s" % (label, "; ".join("%s %.1f s" % kv for kv in where_time_goes(events))),
          flush=True)


def bench_queues(count: int, work: Path) -> tuple[float, float]:
    tenants = [{"name": "b%03d" % i, "queue": "bench-%03d" % i,
                "gpu": {"quota": 1, "limit": 2, "over_quota_weight": 1}} for i in range(count)]
    loop_tree = queue_tree([dict(t, queue=t["queue"] + "-l") for t in tenants], count, {"name": "bench-loop"})
    objects = [queue_object(q, "bench-loop") for q in loop_tree]
    playbook = work / "queues.yml"
    playbook.write_text(QUEUES_PLAY)
    inv = work / "hosts.ini"
    inv.write_text("localhost ansible_connection=local ansible_python_interpreter=%s\n" % sys.executable)
    common = {"kubeconfig": KUBECONFIG, "bench_tenants": tenants, "bench_capacity": count,
              "bench_objects": objects}
    try:
        batch, _ev, rc1 = run(playbook, inv, {**common, "bench_mode": "batch", "bench_state": "present"})
        loop, _ev, rc2 = run(playbook, inv, {**common, "bench_mode": "loop", "bench_state": "present"})
        assert rc1 == 0 and rc2 == 0, "a queue run failed"
        return batch, loop
    finally:  # both trees carry our labels: one task removes each
        run(playbook, inv, {**common, "bench_mode": "batch", "bench_state": "absent"})
        loop_parent = QUEUES_PLAY.replace("name: bench-batch", "name: bench-loop")
        playbook.write_text(loop_parent)
        run(playbook, inv, {**common, "bench_mode": "batch", "bench_state": "absent"})


class _Vault(str):
    """A ``!vault`` value of the fleet file (the BMC passwords), kept encrypted as it is."""


class _FleetLoader(yaml.SafeLoader):
    pass


class _FleetDumper(yaml.SafeDumper):
    pass


_FleetLoader.add_constructor("!vault", lambda loader, node: _Vault(loader.construct_scalar(node)))
_FleetDumper.add_representer(_Vault, lambda dumper, data: dumper.represent_scalar("!vault", str(data), style="|"))


def load_fleet() -> dict:
    return yaml.load((LAB_INVENTORY / "fleet.yml").read_text(), Loader=_FleetLoader)


def bench_fleet(work: Path, count: int) -> Path:
    """The lab fleet plus ``count`` shared tenants (no GPU quota of their own: the shared GPUs stay 16)."""
    fleet = load_fleet()
    for i in range(1, count + 1):
        fleet["tenants"].append({
            "name": "bench%02d" % i, "isolation": "shared", "vlan": 300 + i, "vni": 30300 + i,
            "vrf": {"name": "bench%02d" % i, "l3vni": 60300 + i}, "subnet": "10.%d.%d.0/24" % (150 + i // 200, i % 200),
            "gpu": {"quota": 0, "limit": 8, "over_quota_weight": 1}})
    inv = work / "inventory"
    inv.mkdir()
    (inv / "fleet.yml").write_text(yaml.dump(fleet, Dumper=_FleetDumper, sort_keys=False))
    for sub in ("group_vars", "host_vars"):
        if (LAB_INVENTORY / sub).exists():
            os.symlink(LAB_INVENTORY / sub, inv / sub)
    return inv


def bench_onboarding(count: int, work: Path) -> list[tuple[str, float, float]]:
    inv = bench_fleet(work, count)
    kdir = work / "kubeconfigs"
    onboard, offboard = REPO / "playbooks" / "tenant_onboard.yml", REPO / "playbooks" / "tenant_offboard.yml"
    rows = []
    names = ["bench%02d" % i for i in range(1, count + 1)]
    try:
        for index, name in enumerate(names):
            elapsed, events, rc = run(onboard, inv, {"tenant": name, "tenants_kubeconfig_dir": str(kdir)},
                                      limit="localhost")
            assert rc == 0, "onboarding %s failed" % name
            rows.append((name, elapsed, task_seconds(events, WAIT_TASK)))
            print("  onboarded %s: %.1f s (control plane start %.1f s)" % (name, elapsed, rows[-1][2]), flush=True)
            if index in (0, len(names) - 1):
                show_where(name, events)
    finally:
        for name in reversed(names):
            run(offboard, inv, {"tenant": name, "confirm": name, "tenants_kubeconfig_dir": str(kdir)},
                limit="localhost")
    return rows


def bench_private(work: Path) -> float:
    """Onboarding the lab fleet's private tenant with its tunnel and join (its gateway and nodes), after
    offboarding it; it stays onboarded."""
    inventory = load_fleet()
    tenant = next(t for t in inventory["tenants"] if t["isolation"] == "private")
    nodes = [n["name"] for n in inventory["nodes"] if n.get("tenant") == tenant["name"]]
    gateway = inventory["site"]["host_cluster"]["wireguard_gateway"]["name"]
    limit = ",".join(["localhost", gateway, *nodes])
    kdir = work / "kubeconfigs-private"
    common = {"tenant": tenant["name"], "tenants_kubeconfig_dir": str(kdir)}
    _elapsed, _events, rc = run(REPO / "playbooks" / "tenant_offboard.yml", LAB_INVENTORY,
                                {**common, "confirm": tenant["name"]}, limit=limit)
    assert rc == 0, "offboarding %s failed" % tenant["name"]
    elapsed, events, rc = run(REPO / "playbooks" / "tenant_onboard.yml", LAB_INVENTORY, common, limit=limit)
    assert rc == 0, "onboarding %s failed" % tenant["name"]
    verdict = "OK" if elapsed < 30 else "OVER TARGET"
    print("  onboarded %s (private: control plane, KAI and the GPU Operator inside, tunnel, join of %s): %.1f s "
          "(control plane start %.1f s) (target < 30 s): %s"
          % (tenant["name"], ", ".join(nodes), elapsed, task_seconds(events, WAIT_TASK), verdict), flush=True)
    show_where(tenant["name"], events)
    return elapsed


def lab_ready() -> str | None:
    if os.geteuid() != 0:
        return "needs root (the lab)"
    status = subprocess.run([str(REPO / "lab" / "gpucloud-lab"), "status"], capture_output=True, text=True, check=False)
    return None if status.returncode == 0 else "the lab is not up (lab/gpucloud-lab up)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--queues", type=int, default=200)
    parser.add_argument("--tenants", type=int, default=20)
    parser.add_argument("--private", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    reason = lab_ready()
    if reason:
        print("BENCHMARK NOT RUN: %s" % reason, file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="gpucloud-bench-tenants-"))
    try:
        if args.queues:
            batch, loop = bench_queues(args.queues, work)
            print("kai_queues, %d tenants (%d queues): one task %.1f s, kubernetes.core.k8s loop %.1f s: x%.1f "
                  "(target >= 10): %s" % (args.queues, args.queues + 1, batch, loop, loop / batch,
                                          "OK" if loop / batch >= 10 else "UNDER TARGET"), flush=True)
        rows = bench_onboarding(args.tenants, work) if args.tenants else []
        if args.private:
            bench_private(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if rows:
        first, last = rows[0], rows[-1]
        own = [(n, total - wait) for n, total, wait in rows]
        worst = max(t for _n, t in own)
        print(json.dumps({"onboarding_s": {n: round(t, 1) for n, t, _w in rows},
                          "without_control_plane_start_s": {n: round(t, 1) for n, t in own}}))
        worst_total = max(t for _n, t, _w in rows)
        print("onboarding a shared tenant: 1st %.1f s, %dth %.1f s (x%.2f), worst %.1f s (target < 15 s): %s; "
              "without the control plane's own start: 1st %.1f s, %dth %.1f s (x%.2f), worst %.1f s"
              % (first[1], len(rows), last[1], last[1] / first[1], worst_total,
                 "OK" if worst_total < 15 else "OVER TARGET", own[0][1], len(rows), own[-1][1],
                 own[-1][1] / own[0][1], worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
