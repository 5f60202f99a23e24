# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SIMULATION of KAI Scheduler's queue admission (NVIDIA/KAI-Scheduler v0.13.0), in every lab cluster where KAI
is installed (its chart's Deployment `kai-scheduler`).

A part of the lab controller (controller.py), which runs it every second. KAI's images cannot run here (no
kubelet runs pods), so this plays what its scheduler decides for a pod with `schedulerName: kai-scheduler`,
as strictly as KAI computes it:

* the queue: label `kai.scheduler/queue`, else `default-queue` (the pod grouper); a queue that does not
  exist leaves the pod Pending with `QueueDoesNotExist: Queue '<name>' does not exist`
  (`pkg/scheduler/cache/cluster_info/cluster_info.go`); a queue with children takes no jobs
  (`pkg/scheduler/actions/utils/input_jobs.go`: skipped, nothing reported);
* each queue's quota and limit per resource from its spec, a resource left out being quota 0 and limit 0
  (`pkg/scheduler/api/queue_info/queue_info.go` getQueueQuota; `docs/queues/README.md`: "limit 0 or unset:
  no additional resources allowed"), memory in MB of 10^6 bytes, CPU in millicores
  (`pkg/scheduler/plugins/proportion/proportion.go` createQueueResourceAttrs), -1 unlimited;
* the pod's request: the sum of its containers' requests, at least each init container's
  (`pkg/scheduler/api/pod_info/pod_info.go` getPodResourceRequest);
* the proportion plugin's capacity checks, the queue and then each parent
  (`pkg/scheduler/plugins/proportion/capacity_policy/max_allowed_check.go` resultsOverLimit: a resource
  over `limit` given what the queue already has allocated; `quota_check.go`
  resultsWithNonPreemptibleOverQuota for non-preemptible pods - label `kai.scheduler/preemptibility:
  non-preemptible` or a priority of 100 and more), with KAI's reasons and messages
  (`pkg/scheduler/api/unschedule_info.go`, `common_info/job_errors.go` JobFitErrorsToMessage);
* then a node that the pod's nodeSelector selects and whose allocatable cpu, memory and nvidia.com/gpu still
  hold the request.

A pod that passes is bound to that node through the pods/binding subresource (KAI's binder does the same
through a BindRequest); one that does not stays Pending, with condition PodScheduled False, reason
Unschedulable and KAI's message (`pkg/scheduler/cache/status_updater/default_status_updater.go`
markTaskUnschedulable). Not simulated: fair-share division of over-quota resources among queues,
reclaim and preemption, gangs, topology, GPU sharing and DRA; node affinity beyond nodeSelector, and taints
(the lab's Nodes keep the kubelet's not-ready taint: the lab runs no node lifecycle controller); the node fit is
a plain sum, and its message is this simulation's own.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from gpucloud_lab.infra.kubeapi import JSON, Api, ApiError

LOG = logging.getLogger("lab-controller")
QUEUES = "/apis/scheduling.run.ai/v2/queues"
SCHEDULER = "kai-scheduler"
QUEUE_LABEL = "kai.scheduler/queue"
PREEMPTIBILITY_LABEL = "kai.scheduler/preemptibility"
DEFAULT_QUEUE = "default-queue"
UNLIMITED = -1.0
MEGABYTE = 1000 * 1000
# KAI's order (resource_share.AllResources) and names in its messages.
RESOURCES = ("CPU", "Memory", "GPU")
SPEC_KEYS = {"CPU": "cpu", "Memory": "memory", "GPU": "gpu"}
DONE = ("Succeeded", "Failed")


@dataclass
class Queue:
    """A queue as the proportion plugin sees it: its quota and limit per resource (KAI's units), what is allocated."""

    name: str  # metadata.name (the queue's ID)
    shown: str  # spec.displayName, else the name: the name KAI's messages use
    parent: str
    quota: dict[str, float]
    limit: dict[str, float]
    children: list[str] = field(default_factory=list)
    allocated: dict[str, float] = field(default_factory=lambda: dict.fromkeys(RESOURCES, 0.0))
    allocated_non_preemptible: dict[str, float] = field(default_factory=lambda: dict.fromkeys(RESOURCES, 0.0))


def queues_of(items: list[JSON]) -> dict[str, Queue]:
    """getQueueQuota and createQueueResourceAttrs: unset quota and limit are 0; memory MB -> bytes."""
    out = {}
    for item in items:
        spec = item.get("spec") or {}
        resources = spec.get("resources") or {}
        quota, limit = {}, {}
        for res in RESOURCES:
            given = resources.get(SPEC_KEYS[res]) or {}
            factor = MEGABYTE if res == "Memory" else 1
            quota[res] = max(UNLIMITED, float(given.get("quota", 0)) * factor)
            limit[res] = max(UNLIMITED, float(given.get("limit", 0)) * factor)
        name = item["metadata"]["name"]
        out[name] = Queue(name, spec.get("displayName") or name, spec.get("parentQueue") or "", quota, limit)
    for queue in out.values():
        if queue.parent in out:
            out[queue.parent].children.append(queue.name)
    return out


_QUANTITY = re.compile(r"^([0-9.]+)([a-zA-Z]*)$")
_SUFFIX = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def quantity(text: object) -> float:
    """A Kubernetes resource quantity as a number (cpu in cores, memory in bytes)."""
    match = _QUANTITY.match(str(text))
    if not match or match.group(2) not in _SUFFIX:
        raise ValueError(f"not a quantity: {text!r}")
    return float(match.group(1)) * _SUFFIX[match.group(2)]


def _requests(container: JSON) -> dict[str, float]:
    req = (container.get("resources") or {}).get("requests") or {}
    return {"CPU": quantity(req.get("cpu", 0)) * 1000, "Memory": quantity(req.get("memory", 0)),
            "GPU": quantity(req.get("nvidia.com/gpu", 0))}


def pod_request(pod: JSON) -> dict[str, float]:
    """getPodResourceRequest: the containers' sum, at least each init container's (CPU in millicores)."""
    total = dict.fromkeys(RESOURCES, 0.0)
    for container in pod["spec"].get("containers", []):
        for res, amount in _requests(container).items():
            total[res] += amount
    for container in pod["spec"].get("initContainers", []) or []:
        for res, amount in _requests(container).items():
            total[res] = max(total[res], amount)
    return total


def queue_of(pod: JSON) -> str:
    return (pod["metadata"].get("labels") or {}).get(QUEUE_LABEL) or DEFAULT_QUEUE


def non_preemptible(pod: JSON) -> bool:
    labels = pod["metadata"].get("labels") or {}
    return labels.get(PREEMPTIBILITY_LABEL) == "non-preemptible" or int(pod["spec"].get("priority") or 0) >= 100


def _chain(queues: dict[str, Queue], name: str) -> list[Queue]:
    chain, seen = [], set()
    while name in queues and name not in seen:
        seen.add(name)
        chain.append(queues[name])
        name = queues[name].parent
    return chain


def account(queues: dict[str, Queue], bound: list[JSON]) -> None:
    """What the queue tree has allocated: every bound, unfinished KAI pod, in its queue and each parent."""
    for pod in bound:
        request = pod_request(pod)
        for queue in _chain(queues, queue_of(pod)):
            for res in RESOURCES:
                queue.allocated[res] += request[res]
                if non_preemptible(pod):
                    queue.allocated_non_preemptible[res] += request[res]


def humanize(value: float, unit: float = 1) -> str:
    """KAI's resource_info.HumanizeResource: Unlimited, or at most 3 decimals without trailing zeros."""
    if value == UNLIMITED:
        return "Unlimited"
    text = f"{value / unit:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def _over_limit_message(queue: Queue, res: str, requested: float) -> str:
    """api.GetJobOverMaxAllowedMessageForQueue."""
    unit, shown, amount = {"GPU": (1, "GPUs", "GPUs"), "CPU": (1000, "CPU cores", "cores"),
                           "Memory": (1e9, "memory", "GB")}[res]
    details = "Limit is %s %s, currently %s %s allocated and workload requested %s %s" % (
        humanize(queue.limit[res], unit), amount, humanize(queue.allocated[res], unit), amount,
        humanize(requested, unit), amount)
    return "%s quota has reached the allowable limit of %s. %s" % (queue.shown, shown, details)


def _over_quota_message(queue: Queue, res: str, request: dict[str, float]) -> str:
    """api.GetBuildOverCapacityMessageForQueue."""
    deserved, used = queue.quota[res], queue.allocated_non_preemptible[res]
    if res == "GPU":
        detail = "Workload requested %s GPUs, but %s quota is %s GPUs, while %s GPUs are already allocated for " \
                 "non-preemptible pods." % (humanize(request[res]), queue.shown, humanize(deserved), humanize(used))
    elif res == "CPU":
        detail = "Workload requested %s CPU cores, but %s quota is %s cores, while %s cores are already allocated " \
                 "for non-preemptible pods." % (humanize(request[res], 1000), queue.shown, humanize(deserved, 1000),
                                                humanize(used, 1000))
    else:
        detail = "Workload requested %s GB memory, but %s quota is %s GB, while %s GB are already allocated for " \
                 "non-preemptible pods." % (humanize(request[res], 1e9), queue.shown, humanize(deserved, 1e9),
                                            humanize(used, 1e9))
    return "Non-preemptible workload is over quota. %s Use a preemptible workload to go over quota." % detail


def capacity_problem(queues: dict[str, Queue], pod: JSON) -> str | None:
    """KAI's reason and message for a pod its queue tree refuses (JobFitErrorsToMessage form), or None."""
    request = pod_request(pod)
    for queue in _chain(queues, queue_of(pod)):  # resultsOverLimit
        for res in RESOURCES:
            if queue.limit[res] == UNLIMITED or not request[res]:
                continue
            if queue.limit[res] < queue.allocated[res] + request[res]:
                return "OverLimit: %s." % _over_limit_message(queue, res, request[res])
    if non_preemptible(pod):  # resultsWithNonPreemptibleOverQuota
        for queue in _chain(queues, queue_of(pod)):
            for res in RESOURCES:
                if queue.quota[res] == UNLIMITED or not request[res]:
                    continue
                if queue.quota[res] < queue.allocated_non_preemptible[res] + request[res]:
                    return "NonPreemptibleOverQuota: %s." % _over_quota_message(queue, res, request)
    return None


def _allocatable(node: JSON) -> dict[str, float]:
    have = (node.get("status") or {}).get("allocatable") or {}
    return {"CPU": quantity(have.get("cpu", 0)) * 1000, "Memory": quantity(have.get("memory", 0)),
            "GPU": quantity(have.get("nvidia.com/gpu", 0))}


def ready(node: JSON) -> bool:
    conditions = (node.get("status") or {}).get("conditions", [])
    return not (node.get("spec") or {}).get("unschedulable") and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def selected(node: JSON, pod: JSON) -> bool:
    """Whether the node has every label of the pod's ``nodeSelector`` (KAI's predicates take kube-scheduler's
    NodeAffinity plugin, which requires them all)."""
    labels = node["metadata"].get("labels") or {}
    return all(labels.get(key) == value for key, value in ((pod.get("spec") or {}).get("nodeSelector") or {}).items())


def choose_node(nodes: list[JSON], bound: list[JSON], pod: JSON) -> str | None:
    """The first Ready node (by name) that the pod's nodeSelector selects and whose allocatable still holds the
    request."""
    request = pod_request(pod)
    for node in sorted(nodes, key=lambda n: n["metadata"]["name"]):
        if not ready(node) or not selected(node, pod):
            continue
        free = _allocatable(node)
        for other in bound:
            if other["spec"].get("nodeName") == node["metadata"]["name"]:
                for res, amount in pod_request(other).items():
                    free[res] -= amount
        if all(request[res] <= free[res] for res in RESOURCES):
            return str(node["metadata"]["name"])
    return None


def no_node_message(nodes: list[JSON], pod: JSON) -> str:
    unselected = sum(1 for node in nodes if not selected(node, pod))
    short = sorted({res for res in RESOURCES for node in nodes
                    if selected(node, pod) and pod_request(pod)[res] > _allocatable(node)[res]})
    reasons = (["%d node(s) didn't match Pod's node affinity/selector" % unselected] if unselected else []) + (
        ["node(s) didn't have enough resources: " + ", ".join(short)] if short else [])
    return "Unable to schedule pod: 0/%d nodes are available%s." % (
        len(nodes), (": " + "; ".join(reasons)) if reasons else "")


class KaiScheduler:
    """Plays KAI's scheduling cycle for the kai-scheduler pods of every cluster where KAI is installed."""

    def sync(self, apis: dict[str, Api]) -> None:
        for api in apis.values():
            if api.items("/apis/apps/v1/deployments?labelSelector=app%3Dkai-scheduler"):
                self.cycle(api)

    def cycle(self, api: Api) -> None:
        pods = [p for p in api.items("/api/v1/pods") if (p.get("status") or {}).get("phase") not in DONE]
        ours = [p for p in pods if p["spec"].get("schedulerName") == SCHEDULER]
        pending = sorted((p for p in ours if not p["spec"].get("nodeName") and not p["metadata"].get(
            "deletionTimestamp")), key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))
        if not pending:
            return
        queues = queues_of(api.items(QUEUES))
        bound = [p for p in pods if p["spec"].get("nodeName")]
        account(queues, [p for p in bound if p["spec"].get("schedulerName") == SCHEDULER])
        nodes = api.items("/api/v1/nodes")
        for pod in pending:
            self._schedule(api, queues, nodes, bound, pod)

    def _schedule(self, api: Api, queues: dict[str, Queue], nodes: list[JSON], bound: list[JSON], pod: JSON) -> None:
        name = queue_of(pod)
        if name not in queues:
            self._unschedulable(api, pod, "QueueDoesNotExist: Queue '%s' does not exist." % name)
            return
        if queues[name].children:
            return  # only leaf queues take jobs; KAI skips the job without a word
        problem = capacity_problem(queues, pod)
        node = None if problem else choose_node(nodes, bound, pod)
        if problem or node is None:
            self._unschedulable(api, pod, problem or no_node_message(nodes, pod))
            return
        meta = pod["metadata"]
        try:
            api.request("POST", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/binding",
                        {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": meta["name"]},
                         "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
        except ApiError as err:
            LOG.warning("kai-scheduler: binding %s/%s to %s: %s", meta["namespace"], meta["name"], node, err)
            return
        pod["spec"]["nodeName"] = node
        bound.append(pod)
        account(queues, [pod])
        LOG.info("kai-scheduler: %s/%s bound to %s (queue %s)", meta["namespace"], meta["name"], node, name)

    @staticmethod
    def _unschedulable(api: Api, pod: JSON, message: str) -> None:
        conditions = (pod.get("status") or {}).get("conditions") or []
        current = next((c for c in conditions if c.get("type") == "PodScheduled"), {})
        if current.get("reason") == "Unschedulable" and current.get("message") == message:
            return
        meta = pod["metadata"]
        condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
        api.request("PATCH", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status",
                    {"status": {"conditions": [condition]}}, "application/strategic-merge-patch+json")
        LOG.info("kai-scheduler: %s/%s unschedulable: %s", meta["namespace"], meta["name"], message)
