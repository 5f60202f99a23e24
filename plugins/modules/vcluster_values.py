#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: vcluster_values
short_description: A tenant's vcluster.yaml and host-side objects, from the fleet model
version_added: 0.1.0
description:
  - Computes, without touching anything, what the role C(gpucloud.baremetal.vcluster_tenant)
    applies for one tenant, so that every input problem is found before any change.
  - C(values), the tenant's C(vcluster.yaml) for its tier. Shared tenants get pods synced to
    the host with C(schedulerName) O(scheduler_name) and the label C(kai.scheduler/queue) of the
    tenant's queue, and C(experimental.syncSettings.setOwner=false), so that KAI Scheduler on the
    host enforces the tenant's quota; how the pods get them is O(shared_enforcement). Private
    tenants get C(privateNodes.enabled) with their own CNI (flannel), kube-proxy and local-path
    storage, the control plane endpoint and TLS SAN on the tenant's WireGuard hub address, the
    vcluster-pro image and the vCluster Platform key.
  - C(objects), the tenant's host-side objects, labelled C(app.kubernetes.io/managed-by=gpucloud.baremetal)
    (namespace C(tenant-<name>), ResourceQuota, LimitRange, NetworkPolicy, ServiceAccount, Role, RoleBinding,
    and with O(shared_enforcement=admission-policy) a ValidatingAdmissionPolicy and its binding).
  - Fails, naming the variable and what is allowed, for a private tenant (or pod patches) without
    O(pro_image) or O(platform_secret), and for a tier change after the first install (O(installed_isolation)).
author:
  - gpucloud.baremetal contributors (@gpucloud)
options:
  tenant:
    description:
      - One entry of C(gpucloud_tenants) (the C(gpucloud.baremetal.fleet) inventory), with its
        derived C(namespace), C(queue), C(vcluster_secret) and, for private tenants, C(wireguard.hub_ip).
    type: dict
    required: true
  installed_isolation:
    description:
      - The tier the tenant was installed with (label C(gpucloud.baremetal/isolation) of its
        namespace); empty for a tenant not installed yet.
    type: str
    default: ""
  scheduler_name:
    description: Scheduler of the shared tenants' synced pods.
    type: str
    default: kai-scheduler
  kubeconfig_server:
    description:
      - Server written into the exported tenant kubeconfig (C(exportKubeConfig.server)); empty
        for the chart's default (shared) or C(https://<hub>:<api_port>) (private).
    type: str
    default: ""
  api_port:
    description: Port of the tenant API on the WireGuard hub address (private tenants).
    type: int
    default: 443
  pro_image:
    description:
      - The vcluster-pro image (C(registry/repository:tag)); required for private tenants.
    type: str
    default: ""
  platform_secret:
    description:
      - Secret with the vCluster Platform access key (C(platform.apiKey.secretName)); required for
        private tenants.
    type: str
    default: ""
  platform_secret_namespace:
    description: Namespace of O(platform_secret); empty for the tenant's namespace.
    type: str
    default: ""
  shared_enforcement:
    description:
      - How a shared tenant's synced pods get KAI's scheduler and the tenant's queue label.
      - V(patches) - vCluster sets them (C(sync.toHost.pods.patches)). That is a vCluster Pro feature (the
        open-source syncer refuses a patch list), so it needs O(pro_image) and O(platform_secret), which the
        shared tenant's values then get too.
      - V(admission-policy) - open-source vCluster; tenants set both themselves (the vCluster KAI docs' pattern)
        and a C(ValidatingAdmissionPolicy) on the host cluster (Kubernetes 1.30 or later) rejects a pod of the
        tenant's namespace with another scheduler or queue, so none can skip KAI or use another tenant's quota.
      - V(auto) - V(patches) when O(pro_image) is set, else V(admission-policy).
    choices: [auto, patches, admission-policy]
    type: str
    default: auto
  values:
    description:
      - Chart values merged over the collection's; the fleet's C(tenants[].vcluster.values) are
        merged over these.
    type: dict
    default: {}
  quota:
    description: More C(ResourceQuota) hard limits (e.g. C(requests.cpu)) besides the GPUs.
    type: dict
    default: {}
  limit_range:
    description: The container C(LimitRange) entry (C(default), C(defaultRequest), C(max), C(min)).
    type: dict
  api_server_cidrs:
    description: Where the host API servers are; egress to them on O(api_server_ports) is allowed (empty for anywhere).
    type: list
    elements: str
    default: []
  api_server_ports:
    description: Ports of the Kubernetes API that tenant pods may reach.
    type: list
    elements: int
    default: [443, 6443]
attributes:
  check_mode:
    support: full
    description: The module only computes.
  diff_mode:
    support: none
    description: Nothing to compare; see the result.
  platform:
    support: full
    platforms: [kubernetes]
    description: Runs on the controller; talks to nothing.
"""

EXAMPLES = r"""
- name: What the tenant needs
  gpucloud.baremetal.vcluster_values:
    tenant: "{{ gpucloud_tenants | selectattr('name', 'eq', 'beta') | first }}"
  register: beta
"""

RETURN = r"""
values:
  description: The tenant's vcluster.yaml (chart values).
  returned: success
  type: dict
  sample: {"experimental": {"syncSettings": {"setOwner": false}}}
objects:
  description: The tenant's host-side objects, namespace first.
  returned: success
  type: list
  elements: dict
shared_enforcement:
  description:
    - How a shared tenant's pods get the scheduler and queue, V(patches) or V(admission-policy).
    - Empty for a private tenant.
  returned: success
  type: str
"""

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.vcluster import (
    DEFAULT_SETTINGS,
    check_tier,
    host_objects,
    shared_enforcement,
    vcluster_values,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._runner import run_module

SETTINGS = ("scheduler_name", "kubeconfig_server", "api_port", "pro_image", "platform_secret",
            "platform_secret_namespace", "shared_enforcement", "values", "quota", "limit_range", "api_server_cidrs",
            "api_server_ports")


def run(params: dict) -> dict:
    if params.get("limit_range") is None:
        params = dict(params, limit_range=DEFAULT_SETTINGS["limit_range"])
    tenant = params["tenant"]
    missing = [k for k in ("name", "isolation", "namespace", "queue", "vcluster_secret") if not tenant.get(k)]
    if missing:
        raise ProblemsError(["tenant: missing %s; pass one entry of gpucloud_tenants (the fleet inventory)"
                             % ", ".join(missing)])
    check_tier(tenant, params["installed_isolation"])
    settings = {k: params[k] for k in SETTINGS}
    return {"changed": False, "values": vcluster_values(tenant, settings), "objects": host_objects(tenant, settings),
            "shared_enforcement": shared_enforcement(settings) if tenant["isolation"] == "shared" else ""}


def main() -> None:
    spec = dict(
        tenant={"type": "dict", "required": True},
        installed_isolation={"type": "str", "default": ""},
        scheduler_name={"type": "str", "default": "kai-scheduler"},
        kubeconfig_server={"type": "str", "default": ""},
        api_port={"type": "int", "default": 443},
        pro_image={"type": "str", "default": ""},
        platform_secret={"type": "str", "default": "", "no_log": False},  # a secret's name, not its value
        platform_secret_namespace={"type": "str", "default": "", "no_log": False},
        shared_enforcement={"type": "str", "default": "auto", "choices": ["auto", "patches", "admission-policy"]},
        values={"type": "dict", "default": {}},
        quota={"type": "dict", "default": {}},
        limit_range={"type": "dict"},
        api_server_cidrs={"type": "list", "elements": "str", "default": []},
        api_server_ports={"type": "list", "elements": "int", "default": [443, 6443]},
    )
    run_module(spec, lambda module: run(module.params))


if __name__ == "__main__":
    main()
