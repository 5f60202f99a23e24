#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: plan_tenants
short_description: The tenant layers of the plan, offline, for every tenant in one call
version_added: 0.1.0
description:
  - Computes, touching nothing, what the tenant stage applies, as files of the plan (C(playbooks/plan.yml)),
    for every tenant at once.
  - C(vcluster/<tenant>.values.yaml) and C(vcluster/<tenant>.objects.yaml), the tenant's C(vcluster.yaml) and
    host-side objects, by the code of M(gpucloud.baremetal.vcluster_values), for a tenant as it would be installed
    now (no cluster is read, so a tier change of an installed tenant is not seen here).
  - C(kai/queues.yaml), the Queue objects of every KAI queue tree, by the code of M(gpucloud.baremetal.kai_queues)
    - the host cluster's (the shared tenants on the shared nodes' GPUs) and each private tenant's own (its nodes' GPUs).
  - C(wireguard/<tenant>.yaml) for each private tenant, the tunnels of the WireGuard gateway and the tenant's nodes
    as the fleet inventory gives them (addresses, ports, endpoints, allowed IPs). No key is ever read or written.
  - Fails with every problem of every tenant at once (e.g. a private tenant without the vCluster Pro settings,
    a queue tree above the GPUs it schedules on).
author:
  - gpucloud.baremetal contributors (@gpucloud)
options:
  tenants:
    description: C(gpucloud_tenants) of the C(gpucloud.baremetal.fleet) inventory.
    type: list
    elements: dict
    required: true
  gpus:
    description: Node name -> its GPU count (C(gpucloud_node.gpu.count)), for every GPU node.
    type: dict
    default: {}
  shared_nodes:
    description: The nodes of no tenant (group C(shared_nodes)), whose GPUs the host cluster's queue tree schedules.
    type: list
    elements: str
    default: []
  vcluster_settings:
    description:
      - Role C(gpucloud.baremetal.vcluster_tenant)'s variables as the inventory sets them (C(vcluster_tenant_pro_image),
        C(vcluster_tenant_platform_secret), C(vcluster_tenant_values), ...); each one not set takes the role's
        default. Variables that do not shape the values or objects are ignored.
    type: dict
    default: {}
  kai_parent:
    description: The parent queue (C(kai_scheduler_parent_queue)); see O(gpucloud.baremetal.kai_queues#module:parent).
    type: dict
    default: {}
  wireguard_tunnels:
    description: Host name -> its C(gpucloud_wireguard_tunnels) (the gateway and the private nodes).
    type: dict
    default: {}
  wireguard_gateway:
    description: The WireGuard gateway's host name (group C(wireguard_gateways)); empty when the fleet has none.
    type: str
    default: ""
attributes:
  check_mode:
    support: full
    description: The module only computes.
  diff_mode:
    support: none
    description: Nothing to compare; M(gpucloud.baremetal.plan_files) shows what changed.
  platform:
    support: full
    platforms: posix
    description: Runs on the controller; talks to nothing.
"""

EXAMPLES = r"""
- name: The tenant layers of the plan
  gpucloud.baremetal.plan_tenants:
    tenants: "{{ gpucloud_tenants }}"
    gpus: "{{ dict(nodes | zip(nodes | map('extract', hostvars, ['gpucloud_node', 'gpu', 'count']))) }}"
    shared_nodes: "{{ groups['shared_nodes'] }}"
    vcluster_settings:
      vcluster_tenant_pro_image: ghcr.io/loft-sh/vcluster-pro:0.30.0
      vcluster_tenant_platform_secret: vcluster-platform-api-key
  vars:
    nodes: "{{ groups['gpu_nodes'] }}"
  register: tenants
"""

RETURN = r"""
data:
  description: Path in the plan folder -> the object, for O(gpucloud.baremetal.plan_files#module:data).
  returned: success
  type: dict
  sample: {"vcluster/beta.values.yaml": {"experimental": {"syncSettings": {"setOwner": false}}}}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._plan.tenants import tenant_files, vcluster_settings
from ansible_collections.gpucloud.baremetal.plugins.module_utils._runner import run_module

SPEC = {
    "tenants": {"type": "list", "elements": "dict", "required": True},
    "gpus": {"type": "dict", "default": {}},
    "shared_nodes": {"type": "list", "elements": "str", "default": []},
    "vcluster_settings": {"type": "dict", "default": {}},
    "kai_parent": {"type": "dict", "default": {}},
    "wireguard_tunnels": {"type": "dict", "default": {}},
    "wireguard_gateway": {"type": "str", "default": ""},
}


def run(module: AnsibleModule) -> dict:
    p = module.params
    data = tenant_files(p["tenants"], p["gpus"], p["shared_nodes"], vcluster_settings(p["vcluster_settings"]),
                        p["kai_parent"], p["wireguard_tunnels"], p["wireguard_gateway"] or None)
    return {"changed": False, "data": data}


def main() -> None:
    run_module(SPEC, run)


if __name__ == "__main__":
    main()
