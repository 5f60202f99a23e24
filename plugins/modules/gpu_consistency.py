#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: gpu_consistency
short_description: GPUs across layers - fleet, NVML, the cluster's allocatable, and the tenants' KAI quotas
version_added: 0.1.0
description:
  - For every node of O(nodes) with GPUs - the fleet's C(gpu.count) must equal the GPUs NVML sees
    on the node (its M(gpucloud.baremetal.nvml_health) result in O(nvml)) and the node's allocatable
    C(nvidia.com/gpu) in its cluster - the host cluster for shared nodes, a private tenant's
    cluster where O(tenant_kubeconfigs) names one (otherwise that layer is reported as not checked).
  - For every tenant of O(tenants) - a shared tenant's KAI queue must exist on the host cluster
    (once the Queue CRD does) and its GPU quota, and the shared tenants' quotas together, must fit
    the GPUs the shared nodes really offer; a private tenant's quota must fit its own nodes' GPUs.
  - Returns a table per node and per tenant - C(OK), or what is wrong and where. Fails when
    anything is wrong unless O(fail_on_problems=false).
  - Read-only (C(changed=false)).
author:
  - gpucloud.baremetal contributors (@gpucloud)
extends_documentation_fragment:
  - gpucloud.baremetal.k8s_auth
options:
  nodes:
    description:
      - The fleet's nodes, each with the fields of its fleet entry that are compared (C(gpucloud_node) of the
        C(gpucloud.baremetal.fleet) inventory - C(name), C(gpu.count), C(tenant)) and no others, so that no
        other node data is ever passed in. Nodes without GPUs are not checked.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: The node's name (its Node's name in its cluster).
        type: str
        required: true
      gpu:
        description: The fleet's GPUs of the node; C(count) is compared.
        type: dict
        suboptions:
          count:
            description: GPUs the fleet gives the node.
            type: int
            default: 0
      tenant:
        description: The private tenant the node belongs to; none for a shared node.
        type: str
  nvml:
    description:
      - Node name to its M(gpucloud.baremetal.nvml_health) result (C(gpu_count), C(failed),
        C(msg)). A node without one is reported as not checked by NVML.
    type: dict
    default: {}
  tenants:
    description: The fleet's tenants (C(gpucloud_tenants)).
    type: list
    elements: dict
    default: []
  tenant_kubeconfigs:
    description: Private tenant name to the kubeconfig (path) of its own cluster, to check its nodes there.
    type: dict
    default: {}
  queue_tree:
    description: Label value C(gpucloud.baremetal/queue-tree) of the queues to read (the parent queue's name).
    type: str
    default: gpucloud
  fail_on_problems:
    description: Fail when anything is wrong (after building the table).
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Read-only; runs the same in check mode.
  diff_mode:
    support: none
    description: It changes nothing, so there is no diff.
seealso:
  - module: gpucloud.baremetal.nvml_health
  - module: gpucloud.baremetal.gpu_operator_status
"""

EXAMPLES = r"""
- name: Compare the GPU layers
  gpucloud.baremetal.gpu_consistency:
    kubeconfig: "{{ gpucloud_site.host_cluster.kubeconfig }}"
    nodes:
      - {name: gpu2, gpu: {count: 8}}
      - {name: gpu1, gpu: {count: 8}, tenant: acme}
    nvml: "{{ nvml_results }}"  # node name -> its registered nvml_health result
    tenants: "{{ gpucloud_tenants }}"
"""

RETURN = r"""
ok:
  description: Whether every layer agrees.
  returned: always
  type: bool
nodes:
  description: Per node C(node), C(cluster), C(fleet), C(nvml), C(allocatable), C(problems), C(notes).
  returned: always
  type: list
  elements: dict
tenants:
  description: Per tenant C(tenant), C(isolation), C(quota), C(capacity) (GPUs its nodes offer), C(problems), C(notes).
  returned: always
  type: list
  elements: dict
problems:
  description: Every problem, one line each, naming the node or tenant and the layer.
  returned: always
  type: list
  elements: str
table:
  description: The summary tables (nodes, then tenants) as text.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu.consistency import node_rows, summary, tenant_rows
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.args import AUTH_ARG_SPEC, run_module
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.client import Client
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.errors import ApiStatus

QUEUES = "/apis/scheduling.run.ai/v2/queues"


def _cluster_nodes(client: Client, names: list[str]) -> dict:
    found = {n["metadata"]["name"]: n for n in client.list("/api/v1/nodes", what="list Nodes")}
    return {name: found.get(name) for name in names}


def _queues(client: Client, tree: str) -> list[dict] | None:
    try:
        return client.list(QUEUES, label_selector="gpucloud.baremetal/queue-tree=%s" % tree, what="list KAI queues")
    except ApiStatus as err:
        if err.status == 404:
            return None
        raise


def run(module: AnsibleModule) -> dict:
    p = module.params
    gpu_nodes = [n for n in p["nodes"] if n.get("name") and int((n.get("gpu") or {}).get("count") or 0)]
    host = Client(p)
    cluster_nodes = _cluster_nodes(host, [n["name"] for n in gpu_nodes if not n.get("tenant")])
    for tenant, kubeconfig in (p["tenant_kubeconfigs"] or {}).items():
        names = [n["name"] for n in gpu_nodes if n.get("tenant") == tenant]
        if names:
            cluster_nodes.update(_cluster_nodes(Client(dict(p, kubeconfig=kubeconfig, context=None)), names))
    rows = node_rows(gpu_nodes, p["nvml"] or {}, cluster_nodes)
    tenants = tenant_rows(p["tenants"] or [], rows, _queues(host, p["queue_tree"]))
    problems = [x for r in rows + tenants for x in r["problems"]]
    result = {"changed": False, "ok": not problems, "nodes": rows, "tenants": tenants, "problems": problems,
              "table": summary(rows, tenants)}
    if problems and p["fail_on_problems"]:
        module.fail_json(msg="GPU layers disagree: %s" % "; ".join(problems), **result)
    return result


def main() -> None:
    spec = dict(
        AUTH_ARG_SPEC,
        nodes={"type": "list", "elements": "dict", "required": True, "options": {
            "name": {"type": "str", "required": True},
            "gpu": {"type": "dict", "options": {"count": {"type": "int", "default": 0}}},
            "tenant": {"type": "str"},
        }},
        nvml={"type": "dict", "default": {}},
        tenants={"type": "list", "elements": "dict", "default": []},
        tenant_kubeconfigs={"type": "dict", "default": {}},
        queue_tree={"type": "str", "default": "gpucloud"},
        fail_on_problems={"type": "bool", "default": True},
    )
    run_module(spec, run)


if __name__ == "__main__":
    main()
