# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's simulation of KAI Scheduler's queue admission, on the queues the collection writes.

The simulation follows KAI v0.13.0's proportion plugin (sources named in its docstring); these tests hold
it to what those sources say, and show why every queue must state cpu and memory: a queue that states
only gpu admits no pod that asks for CPU.
"""
from __future__ import annotations

import copy

import pytest
from gpucloud_lab.sim import kai_scheduler_sim as kai

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.queue_tree import queue_tree
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.queues import queue_object


def tree(*tenants: dict, capacity: int = 16) -> list[dict]:
    queues = queue_tree(list(tenants), gpu_capacity=capacity)
    return [queue_object(q, queues[0]["name"]) for q in queues]


BETA = {"name": "beta", "queue": "tenant-beta", "gpu": {"quota": 8, "limit": 16, "over_quota_weight": 2}}


def pod(name: str, gpus: int = 1, cpu: str = "2", memory: str = "8Gi", queue: str | None = "tenant-beta",
        node: str = "", **labels: str) -> dict:
    meta_labels = dict(labels)
    if queue:
        meta_labels[kai.QUEUE_LABEL] = queue
    requests = {"cpu": cpu, "memory": memory}
    if gpus:
        requests["nvidia.com/gpu"] = str(gpus)
    return {"metadata": {"name": name, "namespace": "tenant-beta", "labels": meta_labels,
                         "creationTimestamp": "2026-01-01T00:00:0%dZ" % len(name)},
            "spec": {"schedulerName": kai.SCHEDULER, "nodeName": node,
                     "containers": [{"name": "c", "resources": {"requests": requests}}]},
            "status": {"phase": "Running" if node else "Pending"}}


def node(name: str, gpus: int = 8) -> dict:
    resources = {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": str(gpus)}
    return {"metadata": {"name": name}, "spec": {},
            "status": {"allocatable": resources, "conditions": [{"type": "Ready", "status": "True"}]}}


def problem(queues: list[dict], the_pod: dict, bound: tuple[dict, ...] = ()) -> str | None:
    attrs = kai.queues_of(queues)
    kai.account(attrs, list(bound))
    return kai.capacity_problem(attrs, the_pod)


def test_a_queue_that_states_only_gpu_admits_no_pod_that_asks_for_cpu() -> None:
    gpu_only = copy.deepcopy(tree(BETA))
    for queue in gpu_only:
        queue["spec"]["resources"] = {"gpu": queue["spec"]["resources"]["gpu"]}
    assert problem(gpu_only, pod("p")) == (
        "OverLimit: beta quota has reached the allowable limit of CPU cores. Limit is 0 cores, currently 0 cores "
        "allocated and workload requested 2 cores.")


def test_the_collections_queues_admit_a_cpu_and_gpu_pod_up_to_the_gpu_limit() -> None:
    queues = tree(BETA)
    assert problem(queues, pod("p", gpus=1)) is None
    running = tuple(pod(f"r{i}", gpus=8, node="gpu2") for i in range(2))
    assert problem(queues, pod("p", gpus=1), running) == (
        "OverLimit: beta quota has reached the allowable limit of GPUs. Limit is 16 GPUs, currently 16 GPUs "
        "allocated and workload requested 1 GPUs.")


def test_the_parent_caps_its_children() -> None:
    generous = dict(BETA, gpu={"quota": 2, "limit": -1, "over_quota_weight": 1})
    queues = tree(generous, capacity=4)
    assert problem(queues, pod("p", gpus=4)) is None
    assert problem(queues, pod("p", gpus=5)).startswith(
        "OverLimit: gpucloud quota has reached the allowable limit of GPUs. Limit is 4 GPUs")


def test_memory_limits_are_megabytes_of_a_million_bytes() -> None:
    capped = dict(BETA, memory={"quota": 0, "limit": "10G"})
    queues = tree(capped)
    assert problem(queues, pod("p", memory="10G")) is None
    assert problem(queues, pod("p", memory="10Gi")) == (
        "OverLimit: beta quota has reached the allowable limit of memory. Limit is 10 GB, currently 0 GB allocated "
        "and workload requested 10.737 GB.")


def test_a_cpu_quota_of_0_refuses_every_non_preemptible_pod_that_asks_for_cpu() -> None:
    queues = tree(dict(BETA, cpu={"quota": 0, "limit": -1}))
    assert problem(queues, pod("p")) is None
    assert problem(queues, pod("p", **{kai.PREEMPTIBILITY_LABEL: "non-preemptible"})).startswith(
        "NonPreemptibleOverQuota: Non-preemptible workload is over quota. Workload requested 2 CPU cores, but beta "
        "quota is 0 cores")


def test_a_non_preemptible_pod_must_fit_the_quota_a_preemptible_one_only_the_limit() -> None:
    queues = tree(BETA)
    running = (pod("r", gpus=8, node="gpu2", **{kai.PREEMPTIBILITY_LABEL: "non-preemptible"}),)
    assert problem(queues, pod("p", gpus=1), running) is None
    assert problem(queues, pod("p", gpus=1, **{kai.PREEMPTIBILITY_LABEL: "non-preemptible"}), running) == (
        "NonPreemptibleOverQuota: Non-preemptible workload is over quota. Workload requested 1 GPUs, but beta "
        "quota is 8 GPUs, while 8 GPUs are already allocated for non-preemptible pods. Use a preemptible workload "
        "to go over quota..")  # KAI's message ends with a period, and JobFitErrorsToMessage adds one


def test_the_pods_request_is_its_containers_at_least_each_init_container() -> None:
    the_pod = pod("p", gpus=1, cpu="500m")
    the_pod["spec"]["containers"].append({"name": "side", "resources": {"requests": {"cpu": "250m"}}})
    the_pod["spec"]["initContainers"] = [{"name": "i", "resources": {"requests": {"cpu": "2", "memory": "1Mi"}}}]
    assert kai.pod_request(the_pod) == {"CPU": 2000.0, "Memory": 8 * 2**30, "GPU": 1.0}


class FakeApi:
    """The API calls the cycle makes, against objects held in memory."""

    server = "https://fake"

    def __init__(self, pods: list[dict], queues: list[dict], nodes: list[dict]) -> None:
        self.pods, self.queues, self.nodes = pods, queues, nodes
        self.calls: list[tuple[str, str, dict]] = []

    def items(self, path: str) -> list[dict]:
        if path.startswith("/apis/apps/v1/deployments"):
            return [{"metadata": {"name": "kai-scheduler"}}]
        return {"/api/v1/pods": self.pods, kai.QUEUES: self.queues, "/api/v1/nodes": self.nodes}[path]

    def request(self, method: str, path: str, body: dict, content_type: str = "") -> dict:
        self.calls.append((method, path, body))
        name = path.split("/")[-2]
        found = next(p for p in self.pods if p["metadata"]["name"] == name)
        if path.endswith("/binding"):
            found["spec"]["nodeName"] = body["target"]["name"]
        else:
            found["status"]["conditions"] = body["status"]["conditions"]
        return {}


def test_a_cycle_binds_within_the_queue_and_leaves_the_rest_pending_with_kais_reason() -> None:
    pods = [pod("a", gpus=8), pod("bb", gpus=8), pod("ccc", gpus=1), pod("dddd", queue="tenant-nobody"),
            pod("eeeee", gpus=1, queue=None)]
    api = FakeApi(pods, tree(BETA), [node("gpu2"), node("gpu3")])
    kai.KaiScheduler().sync({"fake": api})
    bindings = {path.split("/")[-2]: body["target"]["name"] for m, path, body in api.calls if path.endswith("/binding")}
    assert bindings == {"a": "gpu2", "bb": "gpu3"}
    reasons = {p["metadata"]["name"]: p["status"].get("conditions", [{}])[0].get("message") for p in pods}
    assert reasons["ccc"].startswith("OverLimit: beta quota has reached the allowable limit of GPUs. Limit is 16 GPUs")
    assert reasons["dddd"] == "QueueDoesNotExist: Queue 'tenant-nobody' does not exist."
    assert reasons["eeeee"] == "QueueDoesNotExist: Queue 'default-queue' does not exist."
    assert all(c["reason"] == "Unschedulable" and c["status"] == "False" and c["type"] == "PodScheduled"
               for p in pods if not p["spec"]["nodeName"] for c in p["status"]["conditions"])
    calls = len(api.calls)
    kai.KaiScheduler().sync({"fake": api})
    assert len(api.calls) == calls, "an unchanged reason is not written again"


def test_no_node_with_room_leaves_the_pod_pending() -> None:
    api = FakeApi([pod("a", gpus=4)], tree(BETA), [node("gpu2", gpus=2)])
    kai.KaiScheduler().sync({"fake": api})
    assert api.pods[0]["status"]["conditions"][0]["message"] == (
        "Unable to schedule pod: 0/1 nodes are available: node(s) didn't have enough resources: GPU.")


def test_a_pod_goes_only_to_a_node_its_node_selector_selects() -> None:
    picky = pod("a", gpus=1)
    picky["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "gpu3"}
    nodes = [node("gpu2"), node("gpu3")]
    for n in nodes:
        n["metadata"]["labels"] = {"kubernetes.io/hostname": n["metadata"]["name"]}
    api = FakeApi([picky], tree(BETA), nodes)
    kai.KaiScheduler().sync({"fake": api})
    assert [(path.split("/")[-2], body["target"]["name"]) for m, path, body in api.calls] == [("a", "gpu3")]
    elsewhere = pod("bb", gpus=1)
    elsewhere["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "gpu9"}
    api = FakeApi([elsewhere], tree(BETA), nodes)
    kai.KaiScheduler().sync({"fake": api})
    assert api.pods[0]["status"]["conditions"][0]["message"] == (
        "Unable to schedule pod: 0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")


def test_a_parent_queue_takes_no_jobs() -> None:
    api = FakeApi([pod("a", queue="gpucloud")], tree(BETA), [node("gpu2")])
    kai.KaiScheduler().sync({"fake": api})
    assert api.calls == []


@pytest.mark.parametrize(("value", "unit", "shown"), [(16, 1, "16"), (0.5, 1, "0.5"), (2000, 1000, "2"),
                                                      (10 * 2**30, 1e9, "10.737"), (-1, 1, "Unlimited")])
def test_numbers_as_kai_prints_them(value: float, unit: float, shown: str) -> None:
    assert kai.humanize(value, unit) == shown
