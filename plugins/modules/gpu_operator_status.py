#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: gpu_operator_status
short_description: Wait until the NVIDIA GPU Operator is ready and every GPU node advertises its GPUs
version_added: 0.1.0
description:
  - Reads ClusterPolicy O(policy) (C(nvidia.com/v1)) and the Nodes named in O(nodes), and waits
    until the policy's C(status.state) is C(ready) AND every node carries the label
    C(nvidia.com/gpu.present=true) AND advertises allocatable C(nvidia.com/gpu) equal to its
    expected count.
  - The operator reports C(ready) even when no node has a GPU (condition reason C(NoGPUNodes)),
    so the policy alone is never taken as proof.
  - On timeout it fails and says which nodes and which conditions are not right (for example
    C(OperandNotReady) with the operand states that are not ready), with a table per node.
  - Read-only; it never changes anything (C(changed=false)).
author:
  - gpucloud.baremetal contributors (@gpucloud)
extends_documentation_fragment:
  - gpucloud.baremetal.k8s_auth
options:
  policy:
    description:
      - Name of the ClusterPolicy (the GPU Operator chart creates C(cluster-policy)).
    type: str
    default: cluster-policy
  nodes:
    description:
      - The GPU nodes expected in this cluster, each with C(name) and C(count) (GPUs it must
        advertise); nodes with C(count) 0 must advertise none.
      - Only these fields are taken (a fleet node entry's C(gpu) also works, its C(count) used when
        C(count) is absent), so that no other node data, such as a BMC account, is ever passed in.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: The Node's name.
        type: str
        required: true
      count:
        description: GPUs the node must advertise.
        type: int
      gpu:
        description: The fleet's C(gpu) of the node; its C(count) is used when O(nodes[].count) is absent.
        type: dict
  wait:
    description:
      - Poll until ready or O(timeout); without it, report the current state once.
    type: bool
    default: true
  timeout:
    description:
      - Seconds to wait for readiness.
    type: int
    default: 600
  interval:
    description:
      - Seconds between polls.
    type: float
    default: 5
  fail_when_not_ready:
    description:
      - Fail when not ready (after waiting). With V(false) the result only reports it.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Read-only; in check mode it reports once without waiting and does not fail.
  diff_mode:
    support: none
    description: It changes nothing, so there is no diff.
seealso:
  - name: GPU Operator ClusterPolicy status
    description: States and conditions the operator reports.
    link: https://github.com/NVIDIA/gpu-operator/blob/main/controllers/clusterpolicy_controller.go
"""

EXAMPLES = r"""
- name: Wait for the GPU Operator and the shared nodes' GPUs
  gpucloud.baremetal.gpu_operator_status:
    kubeconfig: /etc/gpucloud/host.kubeconfig
    nodes:
      - {name: gpu2, count: 8}
      - {name: gpu3, count: 8}
    timeout: 900
"""

RETURN = r"""
ready:
  description: Whether the policy is ready and every node advertises its GPUs.
  returned: always
  type: bool
policy:
  description: The ClusterPolicy's C(name), C(state), and the C(reason) and C(message) of its active condition.
  returned: always
  type: dict
  sample: {name: cluster-policy, state: notReady, reason: OperandNotReady, message: "ClusterPolicy is not ready"}
nodes:
  description: Per node, C(node), C(expected), C(present) (label value), C(allocatable), C(product) and C(problems).
  returned: always
  type: list
  elements: dict
problems:
  description: Every problem found, one line each, naming the node or the policy.
  returned: always
  type: list
  elements: str
table:
  description: The per-node table as text.
  returned: always
  type: str
waited:
  description: Seconds spent waiting.
  returned: always
  type: float
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu.operator import POLICY_PATH, assess, table
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.args import AUTH_ARG_SPEC, run_module
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.client import Client
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.errors import K8sError


def _observe(client: Client, policy: str, expected: list[dict]) -> dict:
    obj = client.get("%s/%s" % (POLICY_PATH, policy), what="ClusterPolicy %s" % policy)
    nodes = {n["metadata"]["name"]: n for n in client.list("/api/v1/nodes", what="list Nodes")}
    return assess(obj, policy, nodes, expected)


def run(module: AnsibleModule) -> dict:
    p = module.params
    expected = []
    for i, node in enumerate(p["nodes"]):
        if not node["name"]:
            raise K8sError(["nodes[%d]: needs a name" % i])
        count = node["count"] if node["count"] is not None else (node["gpu"] or {}).get("count")
        expected.append({"name": str(node["name"]), "count": int(count or 0)})
    client = Client(p)
    wait = p["wait"] and not module.check_mode
    start = time.monotonic()
    while True:
        report = _observe(client, p["policy"], expected)
        if report["ready"] or not wait or time.monotonic() - start >= p["timeout"]:
            break
        time.sleep(p["interval"])
    report.update(changed=False, table=table(report["nodes"]), waited=round(time.monotonic() - start, 1))
    if not report["ready"] and p["fail_when_not_ready"] and not module.check_mode:
        head = "GPU Operator not ready after %ss" % p["timeout"] if wait else "GPU Operator not ready"
        module.fail_json(msg="%s: %s" % (head, "; ".join(report["problems"])), **report)
    return report


def main() -> None:
    spec = dict(
        AUTH_ARG_SPEC,
        policy={"type": "str", "default": "cluster-policy"},
        nodes={"type": "list", "elements": "dict", "default": [], "options": {
            "name": {"type": "str", "required": True},
            "count": {"type": "int"},
            "gpu": {"type": "dict"},
        }},
        wait={"type": "bool", "default": True},
        timeout={"type": "int", "default": 600},
        interval={"type": "float", "default": 5},
        fail_when_not_ready={"type": "bool", "default": True},
    )
    run_module(spec, run)


if __name__ == "__main__":
    main()
