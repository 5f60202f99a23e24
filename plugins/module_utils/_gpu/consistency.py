# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUs across layers: the fleet's count = NVML's count = the node's allocatable ``nvidia.com/gpu``
in its cluster, and every tenant's KAI quota within the GPUs its nodes really have.

Pure data in, data out: the module reads the clusters and hands the observations here.
"""

from __future__ import annotations

from typing import Any

from .operator import allocatable_gpus


def _nvml_count(result: Any) -> tuple[int | None, str | None]:
    """(GPUs NVML saw, why not) from an ``nvml_health`` result (None when it did not run)."""
    if not isinstance(result, dict):
        return None, "NVML not run on the node (unreachable, or left out of the play)"
    if result.get("unreachable"):
        return None, "node unreachable: %s" % (result.get("msg") or "no answer").strip()
    if result.get("gpu_count") is None:
        return None, "NVML: %s" % (result.get("msg") or "no GPU count in the result").strip()
    return int(result["gpu_count"]), None


def node_rows(nodes: list[dict], nvml: dict, cluster_nodes: dict[str, dict | None]) -> list[dict]:
    """One row per fleet node with GPUs. ``cluster_nodes``: node name -> its Node in its cluster
    (None: not there); a node missing from ``cluster_nodes`` is not checked in a cluster."""
    rows = []
    for n in nodes:
        name, gpu = n["name"], n.get("gpu") or {}
        fleet = int(gpu.get("count") or 0)
        if not fleet:
            continue
        cluster = "tenant %s" % n["tenant"] if n.get("tenant") else "host"
        row: dict[str, Any] = {"node": name, "cluster": cluster, "fleet": fleet, "nvml": None,
                               "allocatable": None, "problems": [], "notes": []}
        count, why = _nvml_count(nvml.get(name))
        row["nvml"] = count
        if why:
            row["problems"].append("%s: %s" % (name, why))
        elif count != fleet:
            row["problems"].append("%s: NVML sees %d GPUs, the fleet says %d" % (name, count, fleet))
        else:
            failed = (nvml.get(name) or {}).get("failed")
            if failed:
                row["problems"].append("%s: NVML health: %s" % (name, nvml[name].get("msg")))
        if name not in cluster_nodes:
            row["notes"].append("%s cluster not checked (no kubeconfig for it)" % cluster)
        elif cluster_nodes[name] is None:
            row["problems"].append("%s: no Node in the %s cluster" % (name, cluster))
        else:
            alloc = allocatable_gpus(cluster_nodes[name])
            row["allocatable"] = alloc
            if alloc != fleet:
                row["problems"].append(
                    "%s: allocatable nvidia.com/gpu in the %s cluster is %s, the fleet says %d"
                    % (name, cluster, "absent" if alloc is None else alloc, fleet)
                )
        rows.append(row)
    return rows


def _observed(row: dict) -> int:
    """GPUs a node really offers: the smallest of what NVML and its cluster show (fleet when unknown)."""
    seen = [v for v in (row["nvml"], row["allocatable"]) if v is not None]
    return min(seen) if seen else 0


def tenant_rows(tenants: list[dict], rows: list[dict], queues: list[dict] | None) -> list[dict]:
    """Shared tenants: their queues' GPU quotas together within the shared nodes' GPUs (each leaf
    too); private tenants: quota within their own nodes' GPUs. ``queues`` None: no Queue CRD yet."""
    out = []
    shared_gpus = sum(_observed(r) for r in rows if r["cluster"] == "host")
    by_queue = {q["metadata"]["name"]: q for q in queues or []}
    shared_total = 0
    shared_names = []
    for t in tenants:
        name, gpu = t["name"], t.get("gpu") or {}
        row: dict[str, Any] = {"tenant": name, "isolation": t.get("isolation"), "quota": gpu.get("quota"),
                               "capacity": None, "problems": [], "notes": []}
        if t.get("isolation") == "private":
            own = [r for r in rows if r["cluster"] == "tenant %s" % name]
            row["capacity"] = sum(_observed(r) for r in own)
            if (gpu.get("quota") or 0) > row["capacity"]:
                row["problems"].append("tenant %s: GPU quota %s exceeds the %s GPUs its nodes offer"
                                       % (name, gpu.get("quota"), row["capacity"]))
        else:
            row["capacity"] = shared_gpus
            qname = t.get("queue") or "tenant-%s" % name
            if queues is None:
                row["notes"].append("no KAI Queue CRD on the host cluster yet (tenants stage not run)")
                quota = gpu.get("quota") or 0
            elif qname not in by_queue:
                row["problems"].append("tenant %s: KAI queue %s missing on the host cluster" % (name, qname))
                quota = gpu.get("quota") or 0
            else:
                quota = (((by_queue[qname].get("spec") or {}).get("resources") or {}).get("gpu") or {}).get("quota", 0)
                row["quota"] = quota
            shared_total += quota
            shared_names.append(row)
            if quota > shared_gpus:
                row["problems"].append("tenant %s: queue quota %s exceeds the %d GPUs the shared nodes offer"
                                       % (name, quota, shared_gpus))
        out.append(row)
    if shared_total > shared_gpus and len(shared_names) > 1:
        for row in shared_names:
            row["problems"].append("shared tenants' quotas add up to %s, more than the %d GPUs the shared nodes offer"
                                   % (shared_total, shared_gpus))
    return out


def _table(head: tuple, body: list[tuple]) -> str:
    widths = [max(len(str(x[i])) for x in [head, *body]) for i in range(len(head) - 1)]
    lines = []
    for line in [head, *body]:
        cells = [str(line[i]).ljust(widths[i]) for i in range(len(widths))]
        lines.append("  ".join([*cells, str(line[-1])]))
    return "\n".join(lines)


def _status(row: dict) -> str:
    if row["problems"]:
        return "; ".join(p.split(": ", 1)[-1] for p in row["problems"])
    return "OK" + (" (%s)" % "; ".join(row["notes"]) if row["notes"] else "")


def summary(rows: list[dict], tenants: list[dict]) -> str:
    def show(v: Any) -> str:
        return "-" if v is None else str(v)

    nodes = _table(("NODE", "CLUSTER", "FLEET", "NVML", "ALLOCATABLE", "STATUS"),
                   [(r["node"], r["cluster"], r["fleet"], show(r["nvml"]), show(r["allocatable"]), _status(r))
                    for r in rows])
    quotas = _table(("TENANT", "ISOLATION", "QUOTA", "GPUS", "STATUS"),
                    [(t["tenant"], t["isolation"], show(t["quota"]), show(t["capacity"]), _status(t)) for t in tenants])
    return nodes + "\n\n" + quotas
