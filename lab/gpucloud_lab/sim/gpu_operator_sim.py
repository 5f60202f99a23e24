# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SIMULATION of the NVIDIA GPU Operator (v25/v26) with NFD, GPU Feature Discovery and the device plugin.

A part of the lab controller (controller.py), which runs it every second. The real operator needs
GPUs and running pods; this plays its effect on the cluster: ClusterPolicy status, node labels
and node GPU capacity.

Sources: NVIDIA/gpu-operator `controllers/clusterpolicy_controller.go` (the reconcile's end:
`notReady` + Error/OperandNotReady "ClusterPolicy is not ready; states not ready: [...]" while
operands start; `ready` + Ready/NFDLabelsMissing without NFD labels, Ready/NoGPUNodes without a GPU
node, Ready/Reconciled otherwise), `internal/conditions/{clusterpolicy,consts}.go` (Ready and Error
conditions set together), `controllers/state_manager.go` (state names, the operator's one
ClusterPolicy — others are `ignored` —, `nvidia.com/gpu.present=true` on nodes with NFD's
`feature.node.kubernetes.io/pci-10de.present`), `controllers/object_controls.go` (DCGM exporter
ServiceMonitor: before v26.4 a missing monitoring.coreos.com CRD kept state-dcgm-exporter not
ready); NVIDIA/k8s-device-plugin `internal/lm/resource.go` (GFD's `nvidia.com/gpu.product|count`).
What the lab cannot have is played from the fleet file: a node has the PCI devices, model and
count the fleet gives it (a count of 0: no NVIDIA device, so no NFD pci-10de label); operands
take OPERAND_START_S on each new GPU node; without a ClusterPolicy in the node's own cluster the
device plugin is gone and the kubelet reports allocatable `nvidia.com/gpu: 0`. Each cluster is its
own: a private tenant's nodes get GPUs only from an operator installed in the tenant's cluster.
"""
from __future__ import annotations

import logging
import time
from typing import Any

from gpucloud_lab.infra.kubeapi import JSON, Api

LOG = logging.getLogger("lab-controller")
CLUSTER_POLICIES = "/apis/nvidia.com/v1/clusterpolicies"


class GpuOperator:
    """Plays the GPU Operator's reconcile of the ClusterPolicy and its operands' effect on each Node, in each
    cluster that has its own ClusterPolicy (an operator installed there): the host cluster, and a private
    tenant's control plane, into which the collection installs the operator. A cluster without one gets no
    operands, so its nodes advertise no GPUs."""

    OPERAND_START_S = 3.0
    NFD_PCI = "feature.node.kubernetes.io/pci-10de.present"
    NFD_OS = "feature.node.kubernetes.io/system-os_release.ID"
    STATES = (("driver", "state-driver"), ("toolkit", "state-container-toolkit"),
              (None, "state-operator-validation"), ("devicePlugin", "state-device-plugin"),
              ("dcgm", "state-dcgm"), ("dcgmExporter", "state-dcgm-exporter"),
              ("gfd", "gpu-feature-discovery"), ("migManager", "state-mig-manager"),
              ("nodeStatusExporter", "state-node-status-exporter"))
    SERVICE_MONITOR_CRD = ("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                           "servicemonitors.monitoring.coreos.com")

    def __init__(self) -> None:
        self.operands_since: dict[tuple[str, str], float] = {}  # (api server, node) -> when operands started

    # --- the cluster-wide part: one reconcile of each cluster's ClusterPolicy ------------------------
    def sync(self, apis: dict[str, Api], gpus: dict[str, JSON]) -> None:
        now = time.monotonic()
        for api in apis.values():
            policies = sorted(api.items(CLUSTER_POLICIES),
                              key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))
            self._discover(api, gpus, operator=bool(policies), now=now)
            if policies:
                self._reconcile(api, policies, now)
            else:
                self.operands_since = {k: v for k, v in self.operands_since.items() if k[0] != api.server}

    def _reconcile(self, api: Api, policies: list[JSON], now: float) -> None:
        policy, ignored = policies[0], policies[1:]
        for other in ignored:
            self._set_status(api, other, "ignored", None)
        spec = policy.get("spec", {})
        nodes = api.items("/api/v1/nodes")
        gpu_nodes = [node for node in nodes if node["metadata"].get("labels", {}).get(self.NFD_PCI) == "true"]
        starting = [node for node in gpu_nodes if self._starting(api, node["metadata"]["name"], now)]
        not_ready = [state for key, state in self.STATES if starting and (key is None or _enabled(spec, key))]
        if "state-dcgm-exporter" not in not_ready and self._monitor_blocks(api, spec):
            not_ready.append("state-dcgm-exporter")
        has_nfd = any(k.startswith("feature.node.kubernetes.io/") for n in nodes
                      for k in n["metadata"].get("labels", {}))
        if not_ready:
            message = "ClusterPolicy is not ready; states not ready: [%s]" % " ".join(not_ready)
            self._set_status(api, policy, "notReady", ("Error", "OperandNotReady", message))
        elif not has_nfd:
            self._set_status(api, policy, "ready", ("Ready", "NFDLabelsMissing", "No NFD labels found"))
        elif not gpu_nodes:
            self._set_status(api, policy, "ready", ("Ready", "NoGPUNodes",
                                                    "No GPU node found, watching for new nodes to join the cluster."))
        else:
            self._set_status(api, policy, "ready", ("Ready", "Reconciled",
                                                    "ClusterPolicy is ready as all resources have been successfully "
                                                    "reconciled"))

    def _starting(self, api: Api, node: str, now: float) -> bool:
        return now - self.operands_since.get((api.server, node), now) < self.OPERAND_START_S

    def _monitor_blocks(self, api: Api, spec: JSON) -> bool:
        """Before v26.4, a ServiceMonitor asked for without its CRD kept the DCGM exporter state not ready."""
        monitor = spec.get("dcgmExporter", {}).get("serviceMonitor", {})
        wanted = _enabled(spec, "dcgmExporter") and monitor.get("enabled")
        return bool(wanted) and self._version(api) < (26, 4) and api.get(self.SERVICE_MONITOR_CRD) is None

    @staticmethod
    def _version(api: Api) -> tuple[int, ...]:
        """The operator's version, from its Deployment's image tag (v26.7.0 -> (26, 7, 0))."""
        for deployment in api.items("/apis/apps/v1/deployments?labelSelector=app%3Dgpu-operator"):
            for container in deployment["spec"]["template"]["spec"].get("containers", []):
                tag = container.get("image", "").rpartition(":")[2].lstrip("v").split("-")[0]
                try:
                    return tuple(int(part) for part in tag.split("."))
                except ValueError:
                    continue
        return (0,)

    @staticmethod
    def _namespace(api: Api) -> str:
        for deployment in api.items("/apis/apps/v1/deployments?labelSelector=app%3Dgpu-operator"):
            return str(deployment["metadata"]["namespace"])
        return "gpu-operator"

    def _set_status(self, api: Api, policy: JSON, state: str, condition: tuple[str, str, str] | None) -> None:
        """status.state and the Ready/Error pair as the operator's conditions updater sets them."""
        name, old = policy["metadata"]["name"], policy.get("status", {})
        conditions = [dict(c) for c in old.get("conditions", [])]
        if condition:
            kind, reason, message = condition
            other = "Error" if kind == "Ready" else "Ready"
            _set_condition(conditions, kind, "True", reason, message)
            # Upstream leaves this message empty; this lab's API server (1.20) refuses an empty string
            # in a required field of a custom resource as null, so the lab writes one space.
            _set_condition(conditions, other, "False", kind, " ")
        status = {"state": state, "namespace": self._namespace(api)}
        if condition:
            status["conditions"] = conditions
        if all(old.get(k) == v for k, v in status.items()):
            return
        # An update of the status subresource, as the operator's conditions updater does.
        api.request("PUT", f"{CLUSTER_POLICIES}/{name}/status", {**policy, "status": {**old, **status}})
        LOG.info("ClusterPolicy %s in %s: state %s%s", name, api.server, state,
                 " (%s: %s)" % condition[1:] if condition else "")

    # --- the per-node part: NFD, the operator's labels, GFD and the device plugin ----------------
    def _discover(self, api: Api, gpus: dict[str, JSON], operator: bool, now: float) -> None:
        for node in api.items("/api/v1/nodes"):
            name = node["metadata"]["name"]
            if name not in gpus:
                continue
            gpu, labels = gpus[name], node["metadata"].get("labels", {})
            count = int(gpu.get("count") or 0)
            want = {}
            if operator:  # NFD (the chart's node-feature-discovery) labels every node, pci-10de where one is
                want[self.NFD_OS] = "debian"
            if operator and count:
                want[self.NFD_PCI] = "true"
                key = (api.server, name)
                since = self.operands_since.setdefault(key, now)
                want.update({"nvidia.com/gpu.present": "true", "nvidia.com/gpu.deploy.operands": "true"})
                if now - since >= self.OPERAND_START_S:  # GFD runs: product and count
                    want.update({"nvidia.com/gpu.product": _product(gpu.get("model")),
                                 "nvidia.com/gpu.count": str(count)})
            changed = {k: v for k, v in want.items() if labels.get(k) != v}
            if changed:
                api.patch(f"/api/v1/nodes/{name}", {"metadata": {"labels": changed}})
                LOG.info("node %s: labels %s", name, ", ".join(f"{k}={v}" for k, v in sorted(changed.items())))
            self._device_plugin(api, node, count if operator and "nvidia.com/gpu.count" in want else 0,
                                registered=operator and "nvidia.com/gpu.count" in want)

    @staticmethod
    def _device_plugin(api: Api, node: JSON, count: int, registered: bool) -> None:
        """Capacity while a device plugin has ever registered the resource; allocatable only while it runs."""
        name, status = node["metadata"]["name"], node.get("status", {})
        capacity = status.get("capacity", {}).get("nvidia.com/gpu")
        allocatable = status.get("allocatable", {}).get("nvidia.com/gpu")
        if registered:
            want = {"capacity": str(count), "allocatable": str(count)}
        elif capacity is not None:
            want = {"capacity": capacity, "allocatable": "0"}
        else:
            return
        if capacity == want["capacity"] and allocatable == want["allocatable"]:
            return
        api.patch(f"/api/v1/nodes/{name}/status",
                  {"status": {k: {"nvidia.com/gpu": v} for k, v in want.items()}})
        LOG.info("node %s: nvidia.com/gpu capacity %s, allocatable %s", name, want["capacity"], want["allocatable"])


def _enabled(spec: JSON, operand: str) -> bool:
    return bool(spec.get(operand, {}).get("enabled", True))


def _product(model: Any) -> str:
    """GFD's label value: the NVML device name with spaces as dashes (e.g. NVIDIA-H100-80GB-HBM3)."""
    return str(model or "unknown").replace(" ", "-")


def _set_condition(conditions: list[JSON], kind: str, status: str, reason: str, message: str) -> None:
    """apimachinery's meta.SetStatusCondition: lastTransitionTime moves only when the status does."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for cond in conditions:
        if cond.get("type") == kind:
            if cond.get("status") != status:
                cond["lastTransitionTime"] = now
            cond.update(status=status, reason=reason, message=message)
            return
    conditions.append({"type": kind, "status": status, "reason": reason, "message": message,
                       "lastTransitionTime": now})
