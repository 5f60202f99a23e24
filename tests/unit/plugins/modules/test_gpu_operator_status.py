# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_operator_status module: ready only when the ClusterPolicy's state is ready AND every expected node
carries nvidia.com/gpu.present=true AND advertises allocatable nvidia.com/gpu equal to its count (a ready policy
with reason NoGPUNodes is not enough); ``count`` falls back to ``gpu.count``; a node without a name fails naming
nodes[i]; with wait it polls until ready and on timeout fails naming the node and the condition; check mode
reports once and never fails; fail_when_not_ready=false only reports; the result is never changed. A node entry
with fields the module does not compare is refused before any API call. The API is
tests/unit/plugins/module_utils/_k8s/fake.py's FakeApi stand-in, the module's clock a fake one: no network, no
real sleeps."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.args import AUTH_ARG_SPEC
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.errors import K8sError
from ansible_collections.gpucloud.baremetal.plugins.modules import gpu_operator_status
from tests.support.module_args import Failed, ModuleStub, patch_module_args, run_unreachable
from tests.unit.plugins.module_utils._k8s.fake import FakeApi

POLICY = "/apis/nvidia.com/v1/clusterpolicies/cluster-policy"


def policy(state: str | None = "ready", kind: str = "Ready", reason: str = "Reconciled", message: str = "") -> dict:
    other = "Error" if kind == "Ready" else "Ready"
    status = {"conditions": [{"type": kind, "status": "True", "reason": reason, "message": message},
                             {"type": other, "status": "False", "reason": kind, "message": ""}]}
    if state is not None:
        status["state"] = state
    return {"metadata": {"name": "cluster-policy"}, "status": status}


def node(name: str, gpus: int | None = 8, present: bool = True, product: str = "NVIDIA-H100-80GB-HBM3") -> dict:
    labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product} if present else {}
    allocatable = {"cpu": "64"} if gpus is None else {"cpu": "64", "nvidia.com/gpu": str(gpus)}
    return {"metadata": {"name": name, "labels": labels}, "status": {"allocatable": allocatable}}


def want(name: str, count: int | None = 8, gpu: dict | None = None) -> dict:
    """A node entry as AnsibleModule hands it to run(): every suboption present."""
    return {"name": name, "count": count, "gpu": gpu}


def module(check: bool = False, **params) -> ModuleStub:
    base = {"kubeconfig": None, "context": None, "request_timeout": 30.0, "policy": "cluster-policy",
            "nodes": [want("gpu2"), want("gpu3")], "wait": True, "timeout": 600, "interval": 5.0,
            "fail_when_not_ready": True}
    return ModuleStub(params={**base, **params}, check_mode=check)


class Clock:
    """The module's ``time``: monotonic() reads the fake clock, sleep() advances it and calls the hook."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []
        self.on_sleep = None

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        if self.on_sleep:
            self.on_sleep(len(self.slept))


class Api(FakeApi):
    def __init__(self, objects: dict) -> None:
        super().__init__(objects)
        self.params: list[dict] = []


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(gpu_operator_status, "time", SimpleNamespace(monotonic=clock.monotonic, sleep=clock.sleep))
    return clock


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch, clock: Clock) -> Api:
    api = Api({POLICY: policy(), "/api/v1/nodes/gpu2": node("gpu2"), "/api/v1/nodes/gpu3": node("gpu3"),
               "/api/v1/nodes/cpu1": node("cpu1", gpus=None, present=False)})

    def client(params: dict) -> Api:
        api.params.append(params)
        return api

    monkeypatch.setattr(gpu_operator_status, "Client", client)
    return api


def test_ready_when_the_policy_is_ready_and_every_node_advertises_its_gpus(api: Api, clock: Clock) -> None:
    result = gpu_operator_status.run(module())
    assert result["ready"] is True and result["changed"] is False and result["problems"] == []
    assert result["policy"] == {"name": "cluster-policy", "state": "ready", "reason": "Reconciled", "message": "",
                                "problems": []}
    assert [(r["node"], r["expected"], r["present"], r["allocatable"], r["product"]) for r in result["nodes"]] == [
        ("gpu2", 8, "true", 8, "NVIDIA-H100-80GB-HBM3"), ("gpu3", 8, "true", 8, "NVIDIA-H100-80GB-HBM3")]
    assert result["table"].splitlines()[1].split() == ["gpu2", "8", "true", "8", "OK"]
    assert clock.slept == [] and result["waited"] == 0.0  # ready at once: no polling
    assert api.writes == [] and api.slept == []


def test_a_ready_policy_with_no_gpu_nodes_is_not_ready(api: Api, clock: Clock) -> None:
    api.objects[POLICY] = policy("ready", "Ready", "NoGPUNodes", "No GPU node found in the cluster")
    api.objects["/api/v1/nodes/gpu2"] = node("gpu2", gpus=0, present=False)
    result = gpu_operator_status.run(module(nodes=[want("gpu2")], wait=False, fail_when_not_ready=False))
    assert result["ready"] is False and result["changed"] is False
    assert result["policy"]["state"] == "ready" and result["policy"]["reason"] == "NoGPUNodes"
    assert result["problems"] == [
        "gpu2: label nvidia.com/gpu.present=true missing (ClusterPolicy reason NoGPUNodes)",
        "gpu2: allocatable nvidia.com/gpu is 0, the fleet says 8"]


@pytest.mark.parametrize(("gpus", "present", "problems"), [
    (7, True, ["gpu3: allocatable nvidia.com/gpu is 7, the fleet says 8"]),
    (16, True, ["gpu3: allocatable nvidia.com/gpu is 16, the fleet says 8"]),
    (None, True, ["gpu3: allocatable nvidia.com/gpu is absent, the fleet says 8"]),
    (8, False, ["gpu3: label nvidia.com/gpu.present=true missing"]),
])
def test_each_node_must_carry_the_label_and_advertise_exactly_its_count(api: Api, clock: Clock, gpus, present,
                                                                        problems) -> None:
    api.objects["/api/v1/nodes/gpu3"] = node("gpu3", gpus=gpus, present=present)
    result = gpu_operator_status.run(module(wait=False, fail_when_not_ready=False))
    assert result["ready"] is False and result["problems"] == problems
    assert result["nodes"][0]["problems"] == [] and result["nodes"][1]["problems"] == problems


def test_a_node_with_count_zero_must_advertise_none(api: Api, clock: Clock) -> None:
    nodes = [want("cpu1", count=0)]
    assert gpu_operator_status.run(module(nodes=nodes, wait=False))["ready"] is True
    api.objects["/api/v1/nodes/cpu1"] = node("cpu1", gpus=2, present=False)
    result = gpu_operator_status.run(module(nodes=nodes, wait=False, fail_when_not_ready=False))
    assert result["problems"] == ["cpu1: allocatable nvidia.com/gpu is 2, the fleet says 0"]


@pytest.mark.parametrize(("entry", "expected"), [
    (want("gpu2", count=None, gpu={"count": 8, "model": "H100"}), 8),
    (want("gpu2", count=None, gpu={"count": 4}), 4),
    (want("gpu2", count=8, gpu={"count": 4}), 8),  # count, when given, wins
    (want("gpu2", count=None, gpu=None), 0),
])
def test_count_falls_back_to_the_fleet_gpu_count(api: Api, clock: Clock, entry: dict, expected: int) -> None:
    result = gpu_operator_status.run(module(nodes=[entry], wait=False, fail_when_not_ready=False))
    assert result["nodes"][0]["expected"] == expected
    assert result["ready"] is (expected == 8)


def test_a_node_without_a_name_fails_naming_its_index_before_any_api_call(api: Api, clock: Clock) -> None:
    with pytest.raises(K8sError) as err:
        gpu_operator_status.run(module(nodes=[want("gpu2"), want("", count=8)]))
    assert err.value.problems == ["nodes[1]: needs a name"]
    assert api.params == [] and api.requests == 0


def test_a_missing_cluster_policy_is_not_ready_and_says_so(api: Api, clock: Clock) -> None:
    del api.objects[POLICY]
    result = gpu_operator_status.run(module(wait=False, fail_when_not_ready=False))
    assert result["ready"] is False and result["policy"]["state"] is None
    assert result["problems"] == ["ClusterPolicy cluster-policy: not found (is the GPU Operator chart installed?)"]


def test_the_policy_named_is_the_one_read(api: Api, clock: Clock) -> None:
    api.objects["/apis/nvidia.com/v1/clusterpolicies/gpu-policy"] = policy(
        "notReady", "Error", "OperandNotReady", "dcgm not ready")
    result = gpu_operator_status.run(module(policy="gpu-policy", wait=False, fail_when_not_ready=False))
    assert result["policy"]["name"] == "gpu-policy" and result["policy"]["state"] == "notReady"
    assert result["problems"] == ["ClusterPolicy gpu-policy: state notReady (Error OperandNotReady: dcgm not ready)"]


def test_wait_polls_until_ready_and_stops_there(api: Api, clock: Clock) -> None:
    api.objects[POLICY] = policy(None)  # the operator has not reported yet
    del api.objects["/api/v1/nodes/gpu3"]  # not joined yet

    def progress(sleeps: int) -> None:
        if sleeps == 1:
            api.objects[POLICY] = policy("notReady", "Error", "OperandNotReady", "driver not ready")
            api.objects["/api/v1/nodes/gpu3"] = node("gpu3", gpus=None, present=False)
        if sleeps == 3:
            api.objects[POLICY] = policy("ready")
            api.objects["/api/v1/nodes/gpu3"] = node("gpu3")

    clock.on_sleep = progress
    result = gpu_operator_status.run(module(timeout=60, interval=2.5))
    assert result["ready"] is True and result["problems"] == [] and result["changed"] is False
    assert clock.slept == [2.5, 2.5, 2.5]  # four looks, none after the ready one
    assert api.requests == 8  # the policy and the node list, per look
    assert result["waited"] == 7.5


def test_on_timeout_it_fails_naming_the_nodes_and_the_condition(api: Api, clock: Clock) -> None:
    api.objects[POLICY] = policy("notReady", "Error", "OperandNotReady",
                                 "ClusterPolicy is not ready, states not ready: [state-driver]")
    del api.objects["/api/v1/nodes/gpu3"]
    with pytest.raises(Failed) as failed:
        gpu_operator_status.run(module(timeout=10, interval=4))
    result = failed.value.result
    problems = ["ClusterPolicy cluster-policy: state notReady (Error OperandNotReady: ClusterPolicy is not ready, "
                "states not ready: [state-driver])",
                "gpu3: no Node in the cluster (not joined yet?)"]
    assert result["msg"] == "GPU Operator not ready after 10s: " + "; ".join(problems)
    assert result["problems"] == problems and result["ready"] is False and result["changed"] is False
    assert clock.slept == [4, 4, 4] and result["waited"] == 12.0  # looks at 0, 4, 8 and 12 s
    assert result["table"].splitlines()[2].startswith("gpu3")
    assert "no Node in the cluster" in result["table"]


def test_without_wait_a_node_that_is_not_ready_fails_at_once(api: Api, clock: Clock) -> None:
    api.objects["/api/v1/nodes/gpu2"] = node("gpu2", gpus=4)
    with pytest.raises(Failed) as failed:
        gpu_operator_status.run(module(wait=False))
    assert failed.value.result["msg"] == "GPU Operator not ready: gpu2: allocatable nvidia.com/gpu is 4, the fleet says 8"
    assert clock.slept == [] and api.requests == 2


def test_check_mode_reports_once_without_waiting_and_does_not_fail(api: Api, clock: Clock) -> None:
    api.objects[POLICY] = policy("notReady", "Error", "OperandNotReady", "driver not ready")
    result = gpu_operator_status.run(module(check=True, wait=True, timeout=60, interval=1))
    assert result["ready"] is False and result["changed"] is False
    assert result["problems"] == ["ClusterPolicy cluster-policy: state notReady (Error OperandNotReady: driver not ready)"]
    assert clock.slept == [] and api.requests == 2 and api.writes == []


def test_fail_when_not_ready_false_waits_then_only_reports(api: Api, clock: Clock) -> None:
    api.objects["/api/v1/nodes/gpu2"] = node("gpu2", present=False)
    result = gpu_operator_status.run(module(timeout=4, interval=2, fail_when_not_ready=False))
    assert result["ready"] is False and result["changed"] is False
    assert result["problems"] == ["gpu2: label nvidia.com/gpu.present=true missing"]
    assert clock.slept == [2, 2] and result["waited"] == 4.0


def run_main(capsys: pytest.CaptureFixture, **args) -> tuple[int, dict]:
    with patch_module_args(args), pytest.raises(SystemExit) as exited:
        gpu_operator_status.main()
    return exited.value.code, json.loads(capsys.readouterr().out)


def test_main_reports_ready_and_never_changed(api: Api, clock: Clock, capsys) -> None:
    code, out = run_main(capsys, kubeconfig="/etc/gpucloud/host.kubeconfig",
                         nodes=[{"name": "gpu2", "count": 8}, {"name": "gpu3", "gpu": {"count": 8}}])
    assert code == 0 and out["ready"] is True and out["changed"] is False
    assert set(out) >= set(yaml.safe_load(gpu_operator_status.RETURN))
    assert [r["expected"] for r in out["nodes"]] == [8, 8]
    assert api.params[0]["kubeconfig"] == "/etc/gpucloud/host.kubeconfig" and api.params[0]["policy"] == "cluster-policy"


def test_main_fails_after_the_timeout_with_the_report(api: Api, clock: Clock, capsys) -> None:
    api.objects["/api/v1/nodes/gpu3"] = node("gpu3", gpus=0)
    code, out = run_main(capsys, nodes=[{"name": "gpu3", "count": 8}], timeout=3, interval=1)
    assert code == 1 and out["failed"] is True and out["ready"] is False and out["changed"] is False
    assert out["msg"] == "GPU Operator not ready after 3s: gpu3: allocatable nvidia.com/gpu is 0, the fleet says 8"
    assert clock.slept == [1.0, 1.0, 1.0] and "gpu3" in out["table"]


def test_main_a_node_with_an_empty_name_fails_naming_it(api: Api, clock: Clock, capsys) -> None:
    code, out = run_main(capsys, nodes=[{"name": "gpu2", "count": 8}, {"name": "", "count": 8}])
    assert code == 1 and "nodes[1]: needs a name" in out["msg"] and out["problems"] == ["nodes[1]: needs a name"]
    assert api.requests == 0


def test_main_in_check_mode_does_not_wait_or_fail(api: Api, clock: Clock, capsys) -> None:
    del api.objects["/api/v1/nodes/gpu2"]
    code, out = run_main(capsys, nodes=[{"name": "gpu2", "count": 8}], _ansible_check_mode=True)
    assert code == 0 and out["ready"] is False and out["changed"] is False
    assert out["problems"] == ["gpu2: no Node in the cluster (not joined yet?)"] and clock.slept == []


# --- the node fields taken: argument-level, against an unreachable API ----------------------------------------


@pytest.mark.parametrize("node", [
    {"name": "gpu2", "count": 8, "mac": "52:54:00:00:00:02"},
    {"name": "gpu2", "gpu": {"count": 8}, "bmc": {"address": "10.0.2.22"}},
])
def test_a_node_with_fields_the_module_does_not_compare_is_refused(capsys, node):
    result = run_unreachable(capsys, gpu_operator_status.main, nodes=[node])
    assert result["failed"] and result["msg"].startswith("Unsupported parameters"), result["msg"]


@pytest.mark.parametrize("node", [
    {"name": "gpu2", "count": 8},
    {"name": "gpu2", "gpu": {"count": 8, "model": "H100", "driver": "operator"}},
])
def test_the_fields_a_module_compares_are_taken(capsys, node):
    result = run_unreachable(capsys, gpu_operator_status.main, nodes=[node], wait=False)
    assert result["failed"] and "Unsupported parameters" not in result["msg"], result["msg"]


# --- documentation -------------------------------------------------------------------------------------------


def test_documentation_takes_auth_from_the_fragment_and_names_its_returns() -> None:
    """The rest of the documentation (each option's type, default, choices, suboptions) against the argument spec
    is ansible-test's validate-modules to judge (sanity, empty ignore file)."""
    doc = yaml.safe_load(gpu_operator_status.DOCUMENTATION)
    assert "gpucloud.baremetal.k8s_auth" in doc["extends_documentation_fragment"]
    assert not set(doc["options"]) & set(AUTH_ARG_SPEC)
    assert set(yaml.safe_load(gpu_operator_status.RETURN)) == {"ready", "policy", "nodes", "problems", "table", "waited"}
