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
  - C(values), the tenant's C(vcluster.yaml) for its tier and for the chart version O(chart_version)
    (the Platform key is C(platform.apiKey) from 0.32.0, C(external.platform.apiKey) before). Both tiers
    expose the control plane's Service as O(expose) says, and C(exportKubeConfig.server) names that
    address (O(expose_host) and the tenant's C(vcluster.node_port), or 443), which is also in the serving
    certificate (C(controlPlane.proxy.extraSANs)). Shared tenants get pods synced to the host with
    C(schedulerName) O(scheduler_name) and the label C(kai.scheduler/queue) of the tenant's queue,
    C(experimental.syncSettings.setOwner=false), and vCluster's own C(policies.podSecurityStandard)
    O(pod_security); how the pods get scheduler and queue is O(shared_enforcement). Private tenants get
    C(privateNodes.enabled) with their own CNI (flannel), kube-proxy and local-path storage, the control
    plane endpoint and TLS SAN on the tenant's WireGuard hub address, the vcluster-pro image and the
    vCluster Platform key.
  - C(objects), the tenant's host-side objects, labelled C(app.kubernetes.io/managed-by=gpucloud.baremetal)
    - namespace C(tenant-<name>) with Pod Security admission labels (C(enforce) O(pod_security), C(warn) and
    C(audit) restricted), ResourceQuota, LimitRange, NetworkPolicy (egress only to the namespace, the cluster
    DNS and O(api_server_cidrs)), ServiceAccount, Role, RoleBinding, and for a shared tenant a
    ValidatingAdmissionPolicy and its binding - see O(pod_policy).
  - Fails, naming the variable and what is allowed, for a private tenant (or pod patches) without
    O(pro_image) or O(platform_secret), without O(expose_host) or O(api_server_cidrs), for a shared tenant
    whose host cluster does not serve the admission policy API where it is required, and for a tier change
    after the first install (O(installed_isolation)).
author:
  - gpucloud.baremetal contributors (@gpucloud)
options:
  tenant:
    description:
      - One entry of C(gpucloud_tenants) (the C(gpucloud.baremetal.fleet) inventory), with its
        derived C(namespace), C(queue), C(vcluster_release), C(vcluster_secret), C(vcluster.node_port) and,
        for private tenants, C(wireguard.hub_ip).
    type: dict
    required: true
  installed_isolation:
    description:
      - The tier the tenant was installed with (label C(gpucloud.baremetal/isolation) of its
        namespace); empty for a tenant not installed yet.
    type: str
    default: ""
  chart_version:
    description: The vCluster chart version the values are for.
    type: str
    default: 0.36.1
  scheduler_name:
    description: Scheduler of the shared tenants' synced pods.
    type: str
    default: kai-scheduler
  expose:
    description:
      - How the tenant API (the vCluster Service) is reached - V(NodePort) (the tenant's
        C(vcluster.node_port) on every host cluster node), V(LoadBalancer) (port 443 of the load balancer's
        address) or V(Ingress) (port 443 of the Ingress host, TLS passed through).
    type: str
    choices: [NodePort, LoadBalancer, Ingress]
    default: NodePort
  expose_host:
    description:
      - The address clients use - a host cluster node (NodePort), the load balancer's address, or the Ingress
        host name. Required.
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
      - Secret with the vCluster Platform access key; required for private tenants.
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
        and the tenant's C(ValidatingAdmissionPolicy) on the host cluster (Kubernetes 1.30 or later) rejects a
        pod with another scheduler or queue, so none can skip KAI or use another tenant's quota.
      - V(auto) - V(patches) when O(pro_image) is set, else V(admission-policy).
    choices: [auto, patches, admission-policy]
    type: str
    default: auto
  pod_security:
    description:
      - Pod Security Standard enforced on the tenant's host namespace (label C(pod-security.kubernetes.io/enforce))
        and, for a shared tenant, inside its virtual cluster (C(policies.podSecurityStandard)).
      - V(baseline) refuses privileged pods, hostPath, host namespaces and ports and added capabilities, and admits
        vCluster's control-plane pod, which runs as root; V(restricted) refuses that pod.
    type: str
    choices: [baseline, restricted, privileged]
    default: baseline
  pod_policy:
    description:
      - Whether a shared tenant's admission policy (privileged, hostPath, host namespaces, C(spec.nodeName),
        C(NVIDIA_VISIBLE_DEVICES), scheduler and queue) is V(required) - a host cluster without the
        ValidatingAdmissionPolicy API (Kubernetes < 1.30) is refused before any change - or applied
        V(when-served). With O(shared_enforcement=admission-policy) it is always required.
    type: str
    choices: [required, when-served]
    default: required
  policy_api_served:
    description: Whether the host cluster serves admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy.
    type: bool
    default: false
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
    description:
      - Where the host API servers are (CIDRs); tenant pods may reach them on O(api_server_ports), the cluster
        DNS and their own namespace, nothing else. Required.
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
    expose_host: 10.0.0.11
    api_server_cidrs: [10.0.0.11/32]
    policy_api_served: true
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
server:
  description: The tenant API's address for clients (C(exportKubeConfig.server)).
  returned: success
  type: str
  sample: https://10.0.0.11:30102
shared_enforcement:
  description:
    - How a shared tenant's pods get the scheduler and queue, V(patches) or V(admission-policy).
    - Empty for a private tenant.
  returned: success
  type: str
"""

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.host_objects import DEFAULTS, host_objects
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.vcluster import (
    check_tier,
    shared_enforcement,
    vcluster_values,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._runner import run_module

SETTINGS = ("chart_version", "scheduler_name", "expose", "expose_host", "api_port", "pro_image", "platform_secret",
            "platform_secret_namespace", "shared_enforcement", "pod_security", "pod_policy", "policy_api_served",
            "values", "quota", "limit_range", "api_server_cidrs", "api_server_ports")


def run(params: dict) -> dict:
    if params.get("limit_range") is None:
        params = dict(params, limit_range=DEFAULTS["limit_range"])
    tenant = params["tenant"]
    missing = [k for k in ("name", "isolation", "namespace", "queue", "vcluster_release", "vcluster_secret")
               if not tenant.get(k)]
    if missing:
        raise ProblemsError(["tenant: missing %s; pass one entry of gpucloud_tenants (the fleet inventory)"
                             % ", ".join(missing)])
    check_tier(tenant, params["installed_isolation"])
    settings = {k: params[k] for k in SETTINGS}
    values = vcluster_values(tenant, settings)
    return {"changed": False, "values": values, "objects": host_objects(tenant, settings, values),
            "server": values["exportKubeConfig"]["server"],
            "shared_enforcement": shared_enforcement(settings) if tenant["isolation"] == "shared" else ""}


def main() -> None:
    spec = dict(
        tenant={"type": "dict", "required": True},
        installed_isolation={"type": "str", "default": ""},
        chart_version={"type": "str", "default": "0.36.1"},
        scheduler_name={"type": "str", "default": "kai-scheduler"},
        expose={"type": "str", "default": "NodePort", "choices": ["NodePort", "LoadBalancer", "Ingress"]},
        expose_host={"type": "str", "default": ""},
        api_port={"type": "int", "default": 443},
        pro_image={"type": "str", "default": ""},
        platform_secret={"type": "str", "default": "", "no_log": False},  # a secret's name, not its value
        platform_secret_namespace={"type": "str", "default": "", "no_log": False},
        shared_enforcement={"type": "str", "default": "auto", "choices": ["auto", "patches", "admission-policy"]},
        pod_security={"type": "str", "default": "baseline", "choices": ["baseline", "restricted", "privileged"]},
        pod_policy={"type": "str", "default": "required", "choices": ["required", "when-served"]},
        policy_api_served={"type": "bool", "default": False},
        values={"type": "dict", "default": {}},
        quota={"type": "dict", "default": {}},
        limit_range={"type": "dict"},
        api_server_cidrs={"type": "list", "elements": "str", "default": []},
        api_server_ports={"type": "list", "elements": "int", "default": [443, 6443]},
    )
    run_module(spec, lambda module: run(module.params))


if __name__ == "__main__":
    main()
