# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A tenant's ``vcluster.yaml`` and its host-side objects, from the fleet model's tenant.

- ``vcluster_values``: the chart values for the tenant's tier (loft-sh/vcluster config and chart docs):
  shared: pods synced to the host with ``schedulerName: kai-scheduler`` and the queue label, and
  ``experimental.syncSettings.setOwner: false``, so KAI on the host enforces the quota. Who makes
  the pods carry them is ``shared_enforcement``: ``patches`` - vCluster sets them
  (``sync.toHost.pods.patches``, a vCluster Pro feature: the open-source syncer refuses a patch list,
  loft-sh/vcluster ``pkg/pro/patches.go``), so it needs the Pro image and Platform key; or
  ``admission-policy`` - open-source vCluster, tenants set them (the vCluster KAI docs' pattern) and a
  ValidatingAdmissionPolicy on the host (``host_objects``, Kubernetes >= 1.30) rejects a synced pod
  of the tenant's namespace with another scheduler or queue; ``auto``: patches when a Pro image is set.
  private: ``privateNodes.enabled`` with the tenant's own CNI, kube-proxy and storage, the
  control plane endpoint on the tenant's WireGuard hub address, the vcluster-pro image and the
  vCluster Platform key (required: the open-source build refuses private nodes).
  The fleet's ``tenants[].vcluster.values`` are merged over the collection's.
- ``host_objects``: namespace, ResourceQuota, LimitRange, NetworkPolicies and RBAC in the host
  cluster, every one labelled as ours.
- ``check_tier``: the tier is fixed at first install.

Pure data in, data out; problems are ``ProblemsError`` naming the field and what is allowed.
"""

from __future__ import annotations

import copy
from typing import Any

from .errors import VclusterError

MANAGED_BY = ("app.kubernetes.io/managed-by", "gpucloud.baremetal")
TENANT_LABEL = "gpucloud.baremetal/tenant"
ISOLATION_LABEL = "gpucloud.baremetal/isolation"
QUEUE_LABEL = "kai.scheduler/queue"
GPU_RESOURCE = "nvidia.com/gpu"

DEFAULT_SETTINGS: dict[str, Any] = {
    "scheduler_name": "kai-scheduler",
    "kubeconfig_server": "",
    "pro_image": "",
    "platform_secret": "",
    "shared_enforcement": "auto",
    "platform_secret_namespace": "",
    "api_port": 443,
    "values": {},
    "limit_range": {
        "default": {"cpu": "1", "memory": "2Gi"},
        "defaultRequest": {"cpu": "100m", "memory": "256Mi"},
    },
    "quota": {},
    "api_server_cidrs": [],
    "api_server_ports": [443, 6443],
}


def settings_with_defaults(settings: dict | None) -> dict:
    out = copy.deepcopy(DEFAULT_SETTINGS)
    out.update({k: v for k, v in (settings or {}).items() if v is not None})
    return out


def merge(base: Any, over: Any) -> Any:
    """Recursive merge of mappings; ``over`` wins; lists are replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            out[key] = merge(base.get(key), value) if key in base else copy.deepcopy(value)
        return out
    return copy.deepcopy(over)


def _pro_image(ref: str) -> dict:
    """``registry/repository:tag`` -> the chart's ``{registry, repository, tag}``."""
    name, tag = [*ref.rsplit(":", 1), ""][:2] if ":" in ref.rsplit("/", 1)[-1] else (ref, "")
    first = name.split("/", 1)[0]
    has_registry = "/" in name and ("." in first or ":" in first or first == "localhost")
    registry, repository = (first, name.split("/", 1)[1]) if has_registry else ("", name)
    image = {"registry": registry, "repository": repository}
    if tag:
        image["tag"] = tag
    return {k: v for k, v in image.items() if v}


ENFORCEMENTS = ("auto", "patches", "admission-policy")


def shared_enforcement(settings: dict) -> str:
    """How a shared tenant's pods get the scheduler and queue: 'patches' (vCluster Pro) or 'admission-policy'."""
    mode = settings.get("shared_enforcement") or "auto"
    if mode == "auto":
        return "patches" if settings.get("pro_image") else "admission-policy"
    return mode


def _pro_values(values: dict, s: dict) -> None:
    values["controlPlane"]["statefulSet"]["image"] = _pro_image(s["pro_image"])
    api_key = {"secretName": s["platform_secret"]}
    if s["platform_secret_namespace"]:
        api_key["namespace"] = s["platform_secret_namespace"]
    values["platform"] = {"apiKey": api_key}


def vcluster_values(tenant: dict, settings: dict | None = None) -> dict:
    """The tenant's ``vcluster.yaml``; raises VclusterError where Pro settings are needed and missing."""
    s = settings_with_defaults(settings)
    check_settings(tenant, s)
    name = tenant["name"]
    values: dict[str, Any] = {
        "controlPlane": {
            "distro": {"k8s": {"enabled": True}},
            "statefulSet": {"labels": {TENANT_LABEL: name}},
        },
    }
    if tenant["isolation"] == "private":
        hub = tenant["wireguard"]["hub_ip"]
        values["privateNodes"] = {"enabled": True}
        values["controlPlane"]["endpoint"] = "%s:%d" % (hub, s["api_port"])
        values["controlPlane"]["proxy"] = {"extraSANs": [hub]}
        _pro_values(values, s)
        values["deploy"] = {
            "cni": {"flannel": {"enabled": True}},
            "kubeProxy": {"enabled": True},
            "localPathProvisioner": {"enabled": True},
        }
        server = s["kubeconfig_server"] or "https://%s:%d" % (hub, s["api_port"])
    else:
        # Synced pods go to KAI on the host, in the tenant's queue (vCluster docs, KAI Scheduler integration).
        pods: dict[str, Any] = {"enabled": True}
        if shared_enforcement(s) == "patches":
            pods["patches"] = [
                {"path": "spec.schedulerName", "expression": '"%s"' % s["scheduler_name"]},
                {"path": "metadata.labels",
                 "expression": '({...(value || {}), "%s": "%s"})' % (QUEUE_LABEL, tenant["queue"])},
            ]
            _pro_values(values, s)
        values["sync"] = {"toHost": {"pods": pods}}
        values["experimental"] = {"syncSettings": {"setOwner": False}}
        server = s["kubeconfig_server"]
    if server:
        values["exportKubeConfig"] = {"server": server}
    values = merge(values, s["values"])
    return merge(values, (tenant.get("vcluster") or {}).get("values") or {})


def check_settings(tenant: dict, s: dict) -> None:
    mode = s.get("shared_enforcement") or "auto"
    if mode not in ENFORCEMENTS:
        raise VclusterError(["vcluster_tenant_shared_enforcement: %r is not one of %s"
                             % (mode, ", ".join(ENFORCEMENTS))])
    if tenant.get("isolation") == "private":
        where = "tenant %s (private)" % tenant.get("name")
        feature = "private nodes are a vCluster Pro feature and the open-source image refuses them with a licence error"
    elif shared_enforcement(s) == "patches":
        where = "tenant %s (shared, vcluster_tenant_shared_enforcement: patches)" % tenant.get("name")
        feature = ("pod patches (sync.toHost.pods.patches) are a vCluster Pro feature, the open-source syncer "
                   "refuses them; or use vcluster_tenant_shared_enforcement: admission-policy (open source, "
                   "Kubernetes >= 1.30)")
    else:
        return
    problems = []
    if not s.get("pro_image"):
        problems.append("vcluster_tenant_pro_image: %s needs the vcluster-pro image "
                        "(e.g. ghcr.io/loft-sh/vcluster-pro:0.30.0); %s" % (where, feature))
    if not s.get("platform_secret"):
        problems.append(
            "vcluster_tenant_platform_secret: %s needs the secret holding the vCluster Platform access key "
            "(its free mode is enough; created by `vcluster platform connect`/`add`)" % where
        )
    if tenant.get("isolation") == "private" and not (tenant.get("wireguard") or {}).get("hub_ip"):
        problems.append("tenants.%s.wireguard: a private tenant needs its WireGuard hub address" % tenant["name"])
    if problems:
        raise VclusterError(problems)


def check_tier(tenant: dict, installed: str | None) -> None:
    """The tier (shared/private) is fixed at first install; ``installed`` is the namespace's label."""
    if installed and installed != tenant["isolation"]:
        raise VclusterError(
            [
                "tenants.%s.isolation: the tenant was installed as %s and is now %s; the tier is fixed at first "
                "install (vCluster enables private nodes only at creation). Offboard the tenant "
                "(playbooks/tenant_offboard.yml) and onboard it again to change it, or set isolation back to %s"
                % (tenant["name"], installed, tenant["isolation"], installed)
            ]
        )


def _meta(tenant: dict, name: str, namespace: str | None = None) -> dict:
    meta: dict[str, Any] = {"name": name, "labels": {MANAGED_BY[0]: MANAGED_BY[1], TENANT_LABEL: tenant["name"]}}
    if namespace:
        meta["namespace"] = namespace
    return meta


def host_objects(tenant: dict, settings: dict | None = None) -> list[dict]:
    """The tenant's objects in the host cluster, namespace first."""
    s = settings_with_defaults(settings)
    ns = tenant["namespace"]
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(tenant, ns)}
    namespace["metadata"]["labels"][ISOLATION_LABEL] = tenant["isolation"]
    gpu = tenant.get("gpu") or {}
    # Shared tenants' pods run in this namespace (synced); private tenants' GPUs are their own nodes.
    gpus = 0 if tenant["isolation"] == "private" else (gpu.get("limit") if gpu.get("limit", -1) >= 0 else None)
    hard = {"requests.%s" % GPU_RESOURCE: str(gpus)} if gpus is not None else {}
    hard.update({k: str(v) for k, v in (s["quota"] or {}).items()})
    objs = [namespace]
    if hard:
        objs.append({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": _meta(tenant, "tenant-quota", ns),
                     "spec": {"hard": hard}})
    objs.append(
        {
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": _meta(tenant, "tenant-limits", ns),
            "spec": {"limits": [dict({"type": "Container"}, **copy.deepcopy(s["limit_range"]))]},
        }
    )
    objs.extend(network_policies(tenant, s))
    objs.extend(rbac(tenant))
    if tenant["isolation"] == "shared" and shared_enforcement(s) == "admission-policy":
        objs.extend(pod_policy(tenant, s))
    return objs


POLICY_API = "admissionregistration.k8s.io/v1"  # ValidatingAdmissionPolicy: GA in Kubernetes 1.30


def pod_policy_name(tenant: dict) -> str:
    return "gpucloud-tenant-%s-pods" % tenant["name"]


def pod_policy(tenant: dict, s: dict) -> list[dict]:
    """A ValidatingAdmissionPolicy and its binding: pods in the tenant's host namespace (what vCluster syncs)
    must use KAI's scheduler and the tenant's own queue, so a tenant can neither skip KAI nor spend another
    tenant's quota. Cluster-scoped, labelled as ours (offboarding deletes them by name)."""
    name, scheduler, queue = pod_policy_name(tenant), s["scheduler_name"], tenant["queue"]
    policy = {
        "apiVersion": POLICY_API,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": _meta(tenant, name),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                    "operations": ["CREATE", "UPDATE"], "resources": ["pods"]}]},
            "validations": [
                {"expression": "object.spec.schedulerName == '%s'" % scheduler,
                 "message": "tenant %s: pods must set spec.schedulerName: %s (KAI enforces the tenant's GPU quota)"
                            % (tenant["name"], scheduler)},
                {"expression": "has(object.metadata.labels) && '%s' in object.metadata.labels && "
                               "object.metadata.labels['%s'] == '%s'" % (QUEUE_LABEL, QUEUE_LABEL, queue),
                 "message": "tenant %s: pods must carry the label %s: %s (the tenant's own queue)"
                            % (tenant["name"], QUEUE_LABEL, queue)},
            ],
        },
    }
    binding = {
        "apiVersion": POLICY_API,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": _meta(tenant, name),
        "spec": {
            "policyName": name,
            "validationActions": ["Deny"],
            "matchResources": {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": tenant["namespace"]}}},
        },
    }
    return [policy, binding]


def network_policies(tenant: dict, s: dict) -> list[dict]:
    """Deny traffic between tenant namespaces; allow the namespace itself, non-tenant namespaces, DNS and the API."""
    ns = tenant["namespace"]
    not_a_tenant = {"namespaceSelector": {"matchExpressions": [{"key": TENANT_LABEL, "operator": "DoesNotExist"}]}}
    same = {"podSelector": {}}
    api_to: list[dict] = [{"ipBlock": {"cidr": c}} for c in s["api_server_cidrs"]]
    api_rule: dict[str, Any] = {"ports": [{"protocol": "TCP", "port": p} for p in s["api_server_ports"]]}
    if api_to:
        api_rule["to"] = api_to
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
                    {"to": [same, not_a_tenant]},
                    {"ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
                    api_rule,
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
