# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a shared tenant's vCluster may write into the host cluster: a ValidatingAdmissionPolicy.

Shared tenants' pods run on shared GPU nodes; the tenant is admin of its virtual cluster, and its
vCluster syncer creates the host pods. The policy binds to the tenant's host namespace and, by
``matchConditions``, only to what that syncer writes (``request.userInfo.username`` is the
service account the chart gives the control-plane pod, ``vc-<release>``): the control-plane pod
itself (created by the StatefulSet controller) and anything an administrator creates are left
alone, so the policy can exist before the Helm release. A synced pod is refused when it

- is privileged, mounts a hostPath, or uses the node's network, PID or IPC namespace (node root);
- names its node (``spec.nodeName``: past the scheduler and every quota);
- sets ``NVIDIA_VISIBLE_DEVICES`` (every GPU of the node, past the device plugin, where the
  container toolkit accepts the variable from unprivileged containers);
- does not use KAI's scheduler and the tenant's own queue label, except pods of the virtual
  ``kube-system`` (vCluster's CoreDNS) that request no GPU.

Pod Security admission (namespace labels, ``baseline``) covers the same node-root holes and more
(host ports, capabilities, /proc mounts) from Kubernetes 1.25; this policy adds what it does not
know: nodes, the NVIDIA variable, the scheduler and the queue. Expressions are plain CEL (no
Kubernetes library functions), so that tests can evaluate them with an independent implementation.
"""

from __future__ import annotations

POLICY_API = "admissionregistration.k8s.io/v1"  # ValidatingAdmissionPolicy: GA in Kubernetes 1.30
GPU_PREFIX = "nvidia.com/"
VIRTUAL_NAMESPACE_LABEL = "vcluster.loft.sh/namespace"  # set by vCluster's syncer on every synced pod
QUEUE_LABEL = "kai.scheduler/queue"
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _each_container(test: str) -> str:
    """``test`` (on ``c``) holds for no container of any list."""
    parts = []
    for field in CONTAINER_LISTS:
        found = "object.spec.%s.exists(c, %s)" % (field, test)
        parts.append("!(%s)" % found if field == "containers" else "!(has(object.spec.%s) && %s)" % (field, found))
    return " && ".join(parts)


def _flag(path: str) -> str:
    return "(has(object.spec.%s) && object.spec.%s)" % (path, path)


def _no_gpus() -> str:
    """No container requests or limits a resource of NVIDIA's (nvidia.com/gpu, MIG profiles)."""
    def has_gpu(field: str) -> str:
        return "(has(c.resources.%s) && c.resources.%s.exists(r, r.startsWith('%s')))" % (field, field, GPU_PREFIX)
    return _each_container("has(c.resources) && (%s || %s)" % (has_gpu("limits"), has_gpu("requests")))


def validations(tenant: dict, scheduler: str) -> list[dict]:
    """The policy's checks, each an expression that is true for an allowed pod, and its message."""
    name, queue = tenant["name"], tenant["queue"]
    labels = "has(object.metadata.labels)"
    virtual_kube_system = "(%s && '%s' in object.metadata.labels && object.metadata.labels['%s'] == 'kube-system')" % (
        labels, VIRTUAL_NAMESPACE_LABEL, VIRTUAL_NAMESPACE_LABEL)
    no_gpus = "(%s)" % _no_gpus()
    return [
        {"expression": _each_container(
            "has(c.securityContext) && has(c.securityContext.privileged) && c.securityContext.privileged"),
         "message": "tenant %s: privileged containers are not allowed on shared nodes" % name},
        {"expression": "!has(object.spec.volumes) || !object.spec.volumes.exists(v, has(v.hostPath))",
         "message": "tenant %s: hostPath volumes are not allowed on shared nodes" % name},
        {"expression": "!%s && !%s && !%s" % (_flag("hostNetwork"), _flag("hostPID"), _flag("hostIPC")),
         "message": "tenant %s: the node's network, PID and IPC namespaces are not allowed on shared nodes" % name},
        {"expression": "request.operation != 'CREATE' || !has(object.spec.nodeName) || object.spec.nodeName == ''",
         "message": "tenant %s: spec.nodeName is not allowed (the scheduler places pods)" % name},
        {"expression": _each_container("has(c.env) && c.env.exists(e, e.name == 'NVIDIA_VISIBLE_DEVICES')"),
         "message": "tenant %s: NVIDIA_VISIBLE_DEVICES is not allowed (GPUs come from the device plugin)" % name},
        {"expression": "(has(object.spec.schedulerName) && object.spec.schedulerName == '%s') || (%s && %s)"
                       % (scheduler, virtual_kube_system, no_gpus),
         "message": "tenant %s: pods must set spec.schedulerName: %s (KAI enforces the tenant's quota)"
                    % (name, scheduler)},
        {"expression": "%s || (%s && '%s' in object.metadata.labels && object.metadata.labels['%s'] == '%s')"
                       % ("(%s && %s)" % (virtual_kube_system, no_gpus), labels, QUEUE_LABEL, QUEUE_LABEL, queue),
         "message": "tenant %s: pods must carry the label %s: %s (the tenant's own queue)"
                    % (name, QUEUE_LABEL, queue)},
    ]


def syncer_user(namespace: str, service_account: str) -> str:
    return "system:serviceaccount:%s:%s" % (namespace, service_account)


def pod_policy(tenant: dict, scheduler: str, service_account: str, meta) -> list[dict]:
    """The ValidatingAdmissionPolicy and its binding (cluster-scoped; ``meta(name)`` makes their metadata)."""
    name = policy_name(tenant)
    policy = {
        "apiVersion": POLICY_API,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": meta(name),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{
                "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                "resources": ["pods", "pods/ephemeralcontainers"]}]},
            "matchConditions": [{
                "name": "written-by-the-tenants-vcluster",
                "expression": "request.userInfo.username == '%s'"
                              % syncer_user(tenant["namespace"], service_account)}],
            "validations": validations(tenant, scheduler),
        },
    }
    binding = {
        "apiVersion": POLICY_API,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": meta(name),
        "spec": {
            "policyName": name,
            "validationActions": ["Deny"],
            "matchResources": {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": tenant["namespace"]}}},
        },
    }
    return [policy, binding]


def policy_name(tenant: dict) -> str:
    return "gpucloud-tenant-%s-pods" % tenant["name"]
