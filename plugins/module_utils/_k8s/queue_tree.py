# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The KAI Scheduler queue tree of a cluster, from the fleet's tenants (what ``queues`` applies).

One parent queue for the cloud and one leaf queue per tenant, as ``scheduling.run.ai/v2``
Queue specs, each stating gpu, cpu and memory (KAI admits nothing of a resource a queue leaves
out). KAI itself never checks children against their parent (KAI-Scheduler docs/queues), so this
view does: it refuses a tree whose leaf quotas together exceed the parent's quota, a leaf whose
quota or (finite) limit exceeds the parent's, and a parent quota above the GPU capacity it is
given, naming the queues. Pure data in, data out: the Kubernetes side is ``queues``.
"""

from __future__ import annotations

from typing import Any

from .._fleet.schema import PARENT_QUEUE, TENANT_RESOURCE_DEFAULTS, UNLIMITED
from .._fleet.units import CPU_WHAT, MEMORY_WHAT, kai_cpu, kai_memory
from .errors import QueueTreeError

RESOURCES = ("gpu", "cpu", "memory")  # in the Queue: cpu in millicores, memory in MB (KAI's units)
FIELDS = (("quota", "quota"), ("limit", "limit"), ("over_quota_weight", "overQuotaWeight"))


def _number(value: Any) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _gpus(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return _number(value)


# resource -> (fleet amount -> KAI's unit, what the fleet may say)
CONVERT = {"gpu": (_gpus, "a number of GPUs (-1 for unlimited)"), "cpu": (kai_cpu, CPU_WHAT),
           "memory": (kai_memory, MEMORY_WHAT)}


def queue_resources(spec: dict, where: str = "") -> dict:
    """``{gpu: {quota, limit, over_quota_weight}, cpu: ..., memory: ...}`` in the fleet's units (GPUs, cores,
    Kubernetes quantities) -> KAI's ``resources`` mapping. Every queue states all three resources: KAI reads
    a missing ``limit`` as 0, "no additional resources allowed" (docs/queues/README.md), so a queue that left
    out cpu or memory would admit no pod; cpu and memory default to quota and limit -1 and the GPU's weight."""
    out = {}
    problems = []
    weight = (spec.get("gpu") or {}).get("over_quota_weight", 1)
    for res in RESOURCES:
        given = spec.get(res)
        if given is None and res != "gpu":
            given = dict(TENANT_RESOURCE_DEFAULTS, over_quota_weight=weight)
        if not isinstance(given, dict):
            problems.append("%s%s: must be a mapping with quota, limit, over_quota_weight" % (where, res))
            continue
        convert, what = CONVERT[res]
        out[res] = {}
        for ours, kai in FIELDS:
            value = given.get(ours)
            if value is None:
                continue
            amount = _gpus(value) if ours == "over_quota_weight" else convert(value)
            if amount is None:
                expected = "a number" if ours == "over_quota_weight" else what
                problems.append("%s%s.%s: %r is not %s" % (where, res, ours, value, expected))
                continue
            out[res][kai] = amount
    if problems:
        raise QueueTreeError(problems)
    return out


def _parent_resources(parent: dict, gpu_capacity: int | float | None, leaves: list[dict]) -> tuple[dict, list[str]]:
    """The parent's GPU quota and limit default to the capacity; its cpu and memory quota to the sum of its
    children's (KAI never checks children against the parent, ``check_tree`` does), limit -1."""
    name = parent.get("name") or PARENT_QUEUE
    pgpu = dict(parent.get("gpu") or {})
    if gpu_capacity is not None:
        pgpu.setdefault("quota", gpu_capacity)
        pgpu.setdefault("limit", gpu_capacity)
    pgpu.setdefault("over_quota_weight", 1)
    if "quota" not in pgpu:
        return {}, ["%s: the parent queue needs a GPU quota: give gpu_capacity or parent.gpu.quota" % name]
    resources = queue_resources({"gpu": pgpu}, "parent.")
    for res in ("cpu", "memory"):
        if parent.get(res):
            resources[res] = queue_resources({"gpu": pgpu, res: parent[res]}, "parent.")[res]
            continue
        quotas = [leaf["spec"]["resources"][res].get("quota", 0) for leaf in leaves]
        total = UNLIMITED if UNLIMITED in quotas else sum(quotas)
        resources[res] = {"quota": _number(total), "limit": UNLIMITED, "overQuotaWeight": 1}
    return resources, []


def queue_tree(
    tenants: list[dict],
    gpu_capacity: int | float | None = None,
    parent: dict | None = None,
) -> list[dict]:
    """The queues, parent first: ``{"name", "tenant", "spec"}`` each; raises QueueTreeError.

    ``tenants`` are fleet tenants (``name``, ``queue``, ``gpu``; ``cpu`` in cores and ``memory`` as
    Kubernetes quantities, optional). ``parent`` may give ``name``, ``display_name`` and
    ``gpu``/``cpu``/``memory``; its GPU quota and limit default to ``gpu_capacity`` (the GPUs the
    tree's nodes have).
    """
    parent = dict(parent or {})
    name = parent.get("name") or PARENT_QUEUE
    problems = []
    leaves = []
    for i, t in enumerate(tenants):
        qname = t.get("queue") or "tenant-%s" % t.get("name")
        if not t.get("name") or not t.get("gpu") or t["gpu"].get("quota") is None:
            problems.append("tenants[%d] (%s): needs name and gpu.quota" % (i, qname))
            continue
        spec_in = {res: t.get(res) for res in RESOURCES}
        leaves.append(
            {
                "name": qname,
                "tenant": t["name"],
                "spec": {
                    "displayName": t["name"],
                    "parentQueue": name,
                    "resources": queue_resources(spec_in, "tenants[%d] (%s): " % (i, qname)),
                },
            }
        )
    if problems:
        raise QueueTreeError(problems)
    resources, problems = _parent_resources(parent, gpu_capacity, leaves)
    if problems:
        raise QueueTreeError(problems)
    parent_queue = {
        "name": name,
        "tenant": None,
        "spec": {"displayName": parent.get("display_name") or name, "resources": resources},
    }
    check_tree(parent_queue, leaves, gpu_capacity)
    return [parent_queue, *leaves]


def check_tree(parent: dict, leaves: list[dict], gpu_capacity: int | float | None) -> None:
    """Children against the parent (per resource) and the parent against the GPU capacity."""
    problems = []
    presources = parent["spec"]["resources"]
    pgpu = presources.get("gpu", {})
    quota = pgpu.get("quota")
    if gpu_capacity is not None and quota is not None and (quota == UNLIMITED or quota > gpu_capacity):
        problems.append(
            "%s: GPU quota %s exceeds the fleet's GPU capacity of %s for this tree"
            % (parent["name"], _show(quota), _show(gpu_capacity))
        )
    seen: dict[str, str] = {}
    for leaf in leaves:
        if leaf["name"] in seen or leaf["name"] == parent["name"]:
            problems.append("%s: queue name used twice (tenant %s)" % (leaf["name"], leaf["tenant"]))
        seen[leaf["name"]] = leaf["tenant"]
    for res in RESOURCES:
        pres = presources.get(res)
        if not pres:
            continue
        quota, limit = pres.get("quota"), pres.get("limit")
        given = [leaf for leaf in leaves if res in leaf["spec"]["resources"]]
        for leaf in given:
            lres = leaf["spec"]["resources"][res]
            lq, ll = lres.get("quota"), lres.get("limit")
            if quota is not None and quota != UNLIMITED and lq is not None and (lq > quota or lq == UNLIMITED):
                problems.append(
                    "%s: %s quota %s exceeds the quota %s of its parent %s"
                    % (leaf["name"], res, _show(lq, res), _show(quota, res), parent["name"])
                )
            # A leaf without a limit of its own (-1) is capped by its parent's; a larger one is a mistake.
            if limit is not None and limit != UNLIMITED and ll is not None and ll != UNLIMITED and ll > limit:
                problems.append(
                    "%s: %s limit %s exceeds the limit %s of its parent %s"
                    % (leaf["name"], res, _show(ll, res), _show(limit, res), parent["name"])
                )
        quotas = [leaf["spec"]["resources"][res].get("quota") or 0 for leaf in given]
        total = UNLIMITED if UNLIMITED in quotas else sum(quotas)
        if quota is not None and quota != UNLIMITED and total != UNLIMITED and total > quota:
            problems.append(
                "%s: %s quotas together %s exceed the quota %s of their parent %s"
                % (", ".join(leaf["name"] for leaf in given), res, _show(total, res), _show(quota, res), parent["name"])
            )
    if problems:
        raise QueueTreeError(problems)


def _show(value: Any, res: str = "gpu") -> str:
    if value == UNLIMITED:
        return "unlimited (-1)"
    if res == "cpu":
        return "%s cores" % _number(value / 1000)
    return "%s MB" % _number(value) if res == "memory" else str(_number(value))
