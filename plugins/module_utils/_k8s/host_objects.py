# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A tenant's objects in the host cluster, every one labelled as ours, namespace first.

- the namespace ``tenant-<name>``, labelled with the tier and with Pod Security admission labels
  (``enforce`` at the chosen level, ``baseline`` by default; ``warn``/``audit`` at ``restricted``):
  baseline refuses what gives a pod the node (privileged, hostPath, host namespaces, host ports,
  added capabilities) and admits vCluster's own control-plane pod, which the chart runs as root
  (``runAsUser: 0``), as restricted would not;
- a ResourceQuota (the tenant's GPU limit; 0 for private tenants, whose GPUs are their own nodes)
  and a LimitRange;
- a NetworkPolicy: nothing crosses tenants; egress only within the namespace, to the cluster DNS
  and to the API servers (their CIDRs are required: without them "the API" would be anywhere);
- RBAC for the tenant's host credentials (read their namespace and their kubeconfig secret);
- for shared tenants, the pod admission policy (``pod_policy``), where the host serves its API
  (Kubernetes 1.30) or where it is required (the open-source tier, whose scheduler and queue only
  the policy enforces).
"""

from __future__ import annotations

import copy
import ipaddress
from typing import Any

from . import pod_policy as policy
from .errors import VclusterError
from .vcluster import TENANT_LABEL, service_account, settings_with_defaults, shared_enforcement

MANAGED_BY = ("app.kubernetes.io/managed-by", "gpucloud.baremetal")
ISOLATION_LABEL = "gpucloud.baremetal/isolation"
GPU_RESOURCE = "nvidia.com/gpu"
PSA = "pod-security.kubernetes.io/"
POD_POLICIES = ("required", "when-served")

DEFAULTS: dict[str, Any] = {
    "limit_range": {
        "default": {"cpu": "1", "memory": "2Gi"},
        "defaultRequest": {"cpu": "100m", "memory": "256Mi"},
    },
    "quota": {},
    "api_server_cidrs": [],
    "api_server_ports": [443, 6443],
    # The cluster DNS (kubeadm's CoreDNS: namespace kube-system, pods k8s-app=kube-dns).
    "dns_namespace": "kube-system",
    "dns_pod_labels": {"k8s-app": "kube-dns"},
    "pod_policy": "required",
    "policy_api_served": False,
}


def _settings(settings: dict | None) -> dict:
    out = settings_with_defaults(settings)
    for key, value in DEFAULTS.items():
        if out.get(key) is None:
            out[key] = copy.deepcopy(value)
    return out


def _meta(tenant: dict, name: str, namespace: str | None = None) -> dict:
    meta: dict[str, Any] = {"name": name, "labels": {MANAGED_BY[0]: MANAGED_BY[1], TENANT_LABEL: tenant["name"]}}
    if namespace:
        meta["namespace"] = namespace
    return meta


def host_objects(tenant: dict, settings: dict | None = None, values: dict | None = None) -> list[dict]:
    """The tenant's objects in the host cluster, namespace first; VclusterError before any is made."""
    s = _settings(settings)
    wants_policy = tenant["isolation"] == "shared"
    check_objects(tenant, s, wants_policy)
    ns = tenant["namespace"]
    objs = [namespace(tenant, s)]
    gpu = tenant.get("gpu") or {}
    # Shared tenants' pods run in this namespace (synced); private tenants' GPUs are their own nodes.
    gpus = 0 if tenant["isolation"] == "private" else (gpu.get("limit") if gpu.get("limit", -1) >= 0 else None)
    hard = {"requests.%s" % GPU_RESOURCE: str(gpus)} if gpus is not None else {}
    hard.update({k: str(v) for k, v in (s["quota"] or {}).items()})
    if hard:
        objs.append({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": _meta(tenant, "tenant-quota", ns),
                     "spec": {"hard": hard}})
    objs.append({"apiVersion": "v1", "kind": "LimitRange", "metadata": _meta(tenant, "tenant-limits", ns),
                 "spec": {"limits": [dict({"type": "Container"}, **copy.deepcopy(s["limit_range"]))]}})
    objs.extend(network_policies(tenant, s))
    objs.extend(rbac(tenant))
    if wants_policy and s["policy_api_served"]:
        account = service_account(values or {}, tenant)
        objs.extend(policy.pod_policy(tenant, s["scheduler_name"], account, lambda name: _meta(tenant, name)))
    return objs


def check_objects(tenant: dict, s: dict, wants_policy: bool) -> None:
    problems = []
    if not s["api_server_cidrs"]:
        problems.append("vcluster_tenant_api_server_cidrs: give the host API servers' addresses (CIDRs, e.g. "
                        "10.0.0.11/32); tenant pods may reach only the cluster DNS and the API, and without them "
                        "the API would be anywhere")
    for cidr in s["api_server_cidrs"]:
        problem = _cidr_problem(cidr)
        if problem:
            problems.append("vcluster_tenant_api_server_cidrs: %r %s" % (cidr, problem))
    ports = s["api_server_ports"]
    if not ports or any(isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= 65535 for p in ports):
        # an egress rule with no ports allows every port of those addresses
        problems.append("vcluster_tenant_api_server_ports: %r; give the API servers' TCP ports (1..65535, e.g. "
                        "[443, 6443]): an empty list would allow every port" % (ports,))
    if s["pod_policy"] not in POD_POLICIES:
        problems.append("vcluster_tenant_pod_policy: %r is not one of %s" % (s["pod_policy"], ", ".join(POD_POLICIES)))
    needed = s["pod_policy"] == "required" or shared_enforcement(s) == "admission-policy"
    if wants_policy and needed and not s["policy_api_served"]:
        problems.append(
            "vcluster_tenant_pod_policy: tenant %s (shared) runs on shared GPU nodes, and the host cluster must refuse "
            "its privileged, hostPath, host-namespace and nodeName pods and the NVIDIA_VISIBLE_DEVICES variable%s with "
            "a ValidatingAdmissionPolicy; this host cluster does not serve admissionregistration.k8s.io/v1 "
            "ValidatingAdmissionPolicy (Kubernetes 1.30 or later). Upgrade the host cluster%s. Nothing was changed."
            % (tenant["name"],
               ", and enforce the scheduler and queue (open-source vCluster)"
               if shared_enforcement(s) == "admission-policy" else "",
               "" if shared_enforcement(s) == "admission-policy"
               else ", or accept Pod Security admission alone with vcluster_tenant_pod_policy: when-served"))
    if problems:
        raise VclusterError(problems)


def _cidr_problem(cidr: object) -> str:
    """Why ``cidr`` is not one block of API server addresses (as NetworkPolicy's ipBlock.cidr takes it), or ''."""
    if not isinstance(cidr, str) or "/" not in cidr:
        return "is not a CIDR (address/prefix, e.g. 10.0.0.11/32)"
    try:
        net = ipaddress.ip_network(cidr, strict=True)
    except ValueError as err:
        return "is not a CIDR (%s)" % err
    if net.prefixlen == 0:
        return "is every address (BMCs and the management network included); give the API servers' addresses"
    return ""


def namespace(tenant: dict, s: dict) -> dict:
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(tenant, tenant["namespace"])}
    labels = obj["metadata"]["labels"]
    labels[ISOLATION_LABEL] = tenant["isolation"]
    labels.update({PSA + "enforce": s["pod_security"], PSA + "enforce-version": "latest",
                   PSA + "warn": "restricted", PSA + "warn-version": "latest",
                   PSA + "audit": "restricted", PSA + "audit-version": "latest"})
    return obj


def network_policies(tenant: dict, s: dict) -> list[dict]:
    """Nothing crosses tenant namespaces; egress only to the namespace, the cluster DNS and the API servers."""
    ns = tenant["namespace"]
    not_a_tenant = {"namespaceSelector": {"matchExpressions": [{"key": TENANT_LABEL, "operator": "DoesNotExist"}]}}
    same = {"podSelector": {}}
    dns = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": s["dns_namespace"]}},
           "podSelector": {"matchLabels": dict(s["dns_pod_labels"])}}
    return [
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": _meta(tenant, "tenant-isolation", ns),
            "spec": {
                "podSelector": {},
                "policyTypes": ["Ingress", "Egress"],
                # Anyone may reach the tenant's API server (8443, authenticated); nothing else crosses tenants.
                "ingress": [{"from": [same, not_a_tenant]}, {"ports": [{"protocol": "TCP", "port": 8443}]}],
                "egress": [
                    {"to": [same]},
                    {"to": [dns], "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
                    {"to": [{"ipBlock": {"cidr": c}} for c in s["api_server_cidrs"]],
                     "ports": [{"protocol": "TCP", "port": p} for p in s["api_server_ports"]]},
                ],
            },
        }
    ]


def rbac(tenant: dict) -> list[dict]:
    """The tenant's host credentials (service account + group) reach only its namespace, read-only,
    and its kubeconfig secret."""
    ns, name = tenant["namespace"], tenant["name"]
    subjects = [
        {"kind": "ServiceAccount", "name": "tenant-admin", "namespace": ns},
        {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "gpucloud:tenant:%s" % name},
    ]
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(tenant, "tenant-admin", ns)},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": _meta(tenant, "tenant-access", ns),
            "rules": [
                {"apiGroups": [""], "resources": ["pods", "pods/log", "services", "events", "configmaps",
                                                  "persistentvolumeclaims"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["secrets"], "resourceNames": [tenant["vcluster_secret"]],
                 "verbs": ["get"]},
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": _meta(tenant, "tenant-access", ns),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "tenant-access"},
            "subjects": subjects,
        },
    ]
