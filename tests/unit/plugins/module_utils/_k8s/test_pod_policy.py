# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared tenants' pod admission policy, evaluated by an independent CEL implementation (PyPI
cel-python, not ours) on pods as the API server hands them to a ValidatingAdmissionPolicy: the
policy applies when every matchCondition is true, and admits a pod when every validation is true.

The pods are what vCluster's syncer writes into the host namespace (labels as loft-sh/vcluster
pkg/util/translate/labels.go sets them) and the control-plane pod as the chart's StatefulSet makes it.
"""
from __future__ import annotations

import copy
from typing import Any

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s import pod_policy

# A stated skip where it is missing; in CI, which installs tests/requirements.txt, any skip fails (tests/support/ci.py).
celpy = pytest.importorskip("celpy", reason="cel-python is not installed (tests/requirements.txt)")

TENANT = {"name": "beta", "namespace": "tenant-beta", "queue": "tenant-beta", "vcluster_release": "beta"}
SYNCER = "system:serviceaccount:tenant-beta:vc-beta"
STATEFULSET_CONTROLLER = "system:serviceaccount:kube-system:statefulset-controller"


def _meta(name: str) -> dict:
    return {"name": name, "labels": {"app.kubernetes.io/managed-by": "gpucloud.baremetal"}}


POLICY = pod_policy.pod_policy(TENANT, "kai-scheduler", "vc-beta", _meta)[0]
ENV = celpy.Environment()


def _program(expression: str) -> Any:
    return ENV.program(ENV.compile(expression))


CONDITIONS = [_program(c["expression"]) for c in POLICY["spec"]["matchConditions"]]
CHECKS = [(_program(v["expression"]), v["message"]) for v in POLICY["spec"]["validations"]]


def admission(pod: dict, user: str = SYNCER, operation: str = "CREATE") -> list[str]:
    """What the policy says: ['not matched'], or the messages of the validations the pod fails (none: admitted)."""
    activation = {"object": celpy.json_to_cel(pod), "oldObject": celpy.json_to_cel(None),
                  "request": celpy.json_to_cel({"operation": operation, "userInfo": {"username": user}})}
    if not all(_true(program.evaluate(activation)) for program in CONDITIONS):
        return ["not matched"]
    return [message for program, message in CHECKS if not _true(program.evaluate(activation))]


def _true(result: Any) -> bool:
    """A CEL boolean true; anything else (false, an evaluation error) is not, as with failurePolicy Fail."""
    return isinstance(result, celpy.celtypes.BoolType) and bool(result)


def synced_pod(**spec: Any) -> dict:
    """A tenant's GPU pod as the syncer writes it: KAI's scheduler, the tenant's queue, one GPU."""
    base = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "train-x-default-x-beta", "namespace": "tenant-beta",
                     "labels": {"kai.scheduler/queue": "tenant-beta", "vcluster.loft.sh/namespace": "default",
                                "vcluster.loft.sh/managed-by": "beta"}},
        "spec": {"schedulerName": "kai-scheduler", "serviceAccountName": "vc-workload-beta",
                 "containers": [{"name": "train", "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                                 "resources": {"limits": {"nvidia.com/gpu": "1"},
                                               "requests": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"}}}]},
    }
    base["spec"].update(spec)
    return base


def coredns() -> dict:
    """vCluster's CoreDNS, synced from the virtual kube-system: the default scheduler, no queue, no GPU."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "coredns-5d78c9869d-abcde-x-kube-system-x-beta", "namespace": "tenant-beta",
                         "labels": {"k8s-app": "kube-dns", "vcluster.loft.sh/namespace": "kube-system",
                                    "vcluster.loft.sh/managed-by": "beta"}},
            "spec": {"schedulerName": "default-scheduler",
                     "containers": [{"name": "coredns", "image": "coredns/coredns:1.12.1",
                                     "resources": {"requests": {"cpu": "20m", "memory": "64Mi"}},
                                     "securityContext": {"allowPrivilegeEscalation": False,
                                                         "capabilities": {"add": ["NET_BIND_SERVICE"],
                                                                          "drop": ["ALL"]}}}]}}


def control_plane_pod() -> dict:
    """The vCluster control-plane pod (chart templates/statefulset.yaml of 0.36.1): default scheduler, root."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "beta-0", "namespace": "tenant-beta", "labels": {"app": "vcluster", "release": "beta"}},
            "spec": {"schedulerName": "default-scheduler", "serviceAccountName": "vc-beta",
                     "containers": [{"name": "syncer", "image": "ghcr.io/loft-sh/vcluster-pro:0.36.1",
                                     "securityContext": {"allowPrivilegeEscalation": False, "runAsUser": 0,
                                                         "runAsGroup": 0}}]}}


def test_a_tenants_gpu_pod_in_its_queue_is_admitted() -> None:
    assert admission(synced_pod()) == []


def test_vclusters_own_control_plane_pod_is_left_alone() -> None:
    assert admission(control_plane_pod(), user=STATEFULSET_CONTROLLER) == ["not matched"]
    # The same pod written by the tenant's syncer would be refused: the condition, not the pod, lets it pass.
    assert "tenant beta: pods must set spec.schedulerName: kai-scheduler (KAI enforces the tenant's quota)" in admission(
        control_plane_pod())


def test_vclusters_coredns_from_the_virtual_kube_system_is_admitted_without_kai() -> None:
    assert admission(coredns()) == []


def test_a_kube_system_pod_that_requests_a_gpu_must_still_go_through_kai() -> None:
    pod = coredns()
    pod["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "1"}
    assert len(admission(pod)) == 2
    mig = coredns()
    mig["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/mig-1g.10gb"] = "1"
    assert len(admission(mig)) == 2


def _with(path: list, value: Any, pod: dict | None = None) -> dict:
    pod = copy.deepcopy(pod or synced_pod())
    node = pod
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return pod


PRIVILEGED = {"securityContext": {"privileged": True}}
DENIED = [
    ("privileged", _with(["spec", "containers", 0, "securityContext"], {"privileged": True}), "privileged containers"),
    ("privileged init container", synced_pod(initContainers=[{"name": "i", "image": "x", **PRIVILEGED}]),
     "privileged containers"),
    ("privileged ephemeral container", synced_pod(ephemeralContainers=[{"name": "d", "image": "x", **PRIVILEGED}]),
     "privileged containers"),
    ("hostPath", synced_pod(volumes=[{"name": "root", "hostPath": {"path": "/"}}]), "hostPath volumes"),
    ("hostNetwork", synced_pod(hostNetwork=True), "network, PID and IPC namespaces"),
    ("hostPID", synced_pod(hostPID=True), "network, PID and IPC namespaces"),
    ("hostIPC", synced_pod(hostIPC=True), "network, PID and IPC namespaces"),
    ("nodeName", synced_pod(nodeName="gpu2"), "spec.nodeName is not allowed"),
    ("NVIDIA_VISIBLE_DEVICES", _with(["spec", "containers", 0, "env"], [{"name": "NVIDIA_VISIBLE_DEVICES",
                                                                        "value": "all"}]), "NVIDIA_VISIBLE_DEVICES"),
    ("NVIDIA_VISIBLE_DEVICES in an init container",
     synced_pod(initContainers=[{"name": "i", "image": "x", "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "0"}]}]),
     "NVIDIA_VISIBLE_DEVICES"),
    ("default scheduler", synced_pod(schedulerName="default-scheduler"), "spec.schedulerName: kai-scheduler"),
    ("another tenant's queue", _with(["metadata", "labels", "kai.scheduler/queue"], "tenant-acme"),
     "kai.scheduler/queue: tenant-beta"),
    ("no queue label", _with(["metadata", "labels"], {"vcluster.loft.sh/namespace": "default"}),
     "kai.scheduler/queue: tenant-beta"),
    ("a privileged CoreDNS", _with(["spec", "containers", 0, "securityContext"], {"privileged": True}, coredns()),
     "privileged containers"),
]


@pytest.mark.parametrize(("pod", "message"), [c[1:] for c in DENIED], ids=[c[0] for c in DENIED])
def test_a_pod_that_could_take_the_node_or_skip_the_quota_is_denied(pod: dict, message: str) -> None:
    found = admission(pod)
    assert len(found) == 1 and message in found[0], found


def test_harmless_settings_are_not_mistaken_for_holes() -> None:
    pod = synced_pod(hostNetwork=False, hostPID=False, volumes=[{"name": "data", "emptyDir": {}}],
                     initContainers=[{"name": "i", "image": "x", "securityContext": {"privileged": False}}])
    pod["spec"]["containers"][0]["env"] = [{"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"}]
    assert admission(pod) == []


def test_node_name_is_only_refused_when_the_pod_is_created() -> None:
    """The scheduler binds through pods/binding; later updates of a bound pod carry its nodeName."""
    assert admission(synced_pod(nodeName="gpu2"), operation="UPDATE") == []


def test_the_policy_binds_every_pod_operation_of_the_tenants_namespace() -> None:
    rules = POLICY["spec"]["matchConstraints"]["resourceRules"]
    assert rules == [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                      "resources": ["pods", "pods/ephemeralcontainers"]}]
    assert POLICY["spec"]["failurePolicy"] == "Fail"
