# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is the GPU Operator done? The ClusterPolicy's state and conditions, and each GPU node's labels and GPUs.

The operator reports ``ready`` even when no node has a GPU (reason ``NoGPUNodes``; NVIDIA/gpu-operator
``controllers/clusterpolicy_controller.go``), so readiness is: ClusterPolicy ``status.state: ready``
AND every expected node carries ``nvidia.com/gpu.present=true`` AND advertises allocatable
``nvidia.com/gpu`` equal to its fleet count. Pure data in, data out (no API calls here): the module
reads the objects and polls; ``assess`` says what is not right, per node and for the policy.
"""

from __future__ import annotations

from typing import Any

GPU_RESOURCE = "nvidia.com/gpu"
PRESENT_LABEL = "nvidia.com/gpu.present"
PRODUCT_LABEL = "nvidia.com/gpu.product"
POLICY_PATH = "/apis/nvidia.com/v1/clusterpolicies"


def _active_condition(policy: dict) -> dict | None:
    """The condition that says why: Error when it is True, else Ready."""
    conditions = {c.get("type"): c for c in (policy.get("status") or {}).get("conditions") or []}
    for kind in ("Error", "Ready"):
        cond = conditions.get(kind)
        if cond and cond.get("status") == "True":
            return cond
    return None


def policy_report(policy: dict | None, name: str) -> dict:
    """``{"name", "state", "reason", "message", "problems"}`` of the ClusterPolicy."""
    if policy is None:
        return {"name": name, "state": None, "reason": None, "message": None,
                "problems": ["ClusterPolicy %s: not found (is the GPU Operator chart installed?)" % name]}
    state = (policy.get("status") or {}).get("state")
    cond = _active_condition(policy) or {}
    reason, message = cond.get("reason"), (cond.get("message") or "").strip()
    problems = []
    if state != "ready":
        why = " (%s %s: %s)" % (cond.get("type"), reason, message) if reason else ""
        problems.append("ClusterPolicy %s: state %s%s" % (name, state or "not reported yet", why))
    return {"name": name, "state": state, "reason": reason, "message": message, "problems": problems}


def allocatable_gpus(node: dict | None) -> int | None:
    """The node's allocatable ``nvidia.com/gpu`` as an int; None when it advertises none."""
    value = ((node or {}).get("status") or {}).get("allocatable", {}).get(GPU_RESOURCE)
    if value is None:
        return None
    try:
        return int(str(value))
    except ValueError:
        return None


def node_report(expected: dict, node: dict | None, policy_reason: str | None = None) -> dict:
    """One row: the node, what the fleet expects, what the cluster shows, and what is wrong."""
    name, want = expected["name"], int(expected.get("count") or 0)
    row: dict[str, Any] = {"node": name, "expected": want, "present": None, "allocatable": None,
                           "product": None, "problems": []}
    if node is None:
        row["problems"].append("%s: no Node in the cluster (not joined yet?)" % name)
        return row
    labels = (node.get("metadata") or {}).get("labels") or {}
    row["present"] = labels.get(PRESENT_LABEL)
    row["product"] = labels.get(PRODUCT_LABEL)
    row["allocatable"] = allocatable_gpus(node)
    if want and row["present"] != "true":
        hint = ""
        if policy_reason in ("NoGPUNodes", "NFDLabelsMissing"):
            hint = " (ClusterPolicy reason %s)" % policy_reason
        row["problems"].append("%s: label %s=true missing%s" % (name, PRESENT_LABEL, hint))
    if (row["allocatable"] or 0) != want:
        row["problems"].append(
            "%s: allocatable %s is %s, the fleet says %d"
            % (name, GPU_RESOURCE, "absent" if row["allocatable"] is None else row["allocatable"], want)
        )
    return row


def assess(policy: dict | None, policy_name: str, nodes: dict[str, dict], expected: list[dict]) -> dict:
    """The whole answer: ``ready`` (bool), ``policy`` and ``nodes`` reports, ``problems`` (flat list)."""
    pol = policy_report(policy, policy_name)
    rows = [node_report(e, nodes.get(e["name"]), pol["reason"]) for e in expected]
    problems = pol["problems"] + [p for row in rows for p in row["problems"]]
    return {"ready": not problems, "policy": pol, "nodes": rows, "problems": problems}


def table(rows: list[dict]) -> str:
    """A fixed-width table a person reads: node, expected, present label, allocatable, status."""
    head = ("NODE", "FLEET", "GPU.PRESENT", "ALLOCATABLE", "STATUS")
    body = [
        (r["node"], str(r["expected"]), str(r["present"] or "-"),
         "-" if r["allocatable"] is None else str(r["allocatable"]),
         "OK" if not r["problems"] else "; ".join(p.split(": ", 1)[-1] for p in r["problems"]))
        for r in rows
    ]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head) - 1)]
    lines = []
    for line in [head, *body]:
        cells = [line[i].ljust(widths[i]) for i in range(len(widths))]
        lines.append("  ".join([*cells, line[-1]]))
    return "\n".join(lines)
