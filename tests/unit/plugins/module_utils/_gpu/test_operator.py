# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU Operator readiness: the ClusterPolicy's state and conditions AND each node's labels and GPUs."""

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu.operator import assess, table


def policy(state, kind, reason, message):
    other = "Error" if kind == "Ready" else "Ready"
    return {"metadata": {"name": "cluster-policy"},
            "status": {"state": state, "conditions": [
                {"type": kind, "status": "True", "reason": reason, "message": message},
                {"type": other, "status": "False", "reason": kind, "message": ""}]}}


def node(name, gpus=None, present=True):
    labels = {"nvidia.com/gpu.present": "true"} if present else {}
    status = {"allocatable": {"nvidia.com/gpu": str(gpus)}} if gpus is not None else {"allocatable": {}}
    return {"metadata": {"name": name, "labels": labels}, "status": status}


EXPECTED = [{"name": "gpu2", "count": 8}, {"name": "gpu3", "count": 8}]


def test_ready_policy_and_every_node_with_its_gpus():
    report = assess(policy("ready", "Ready", "Reconciled", "ok"), "cluster-policy",
                    {"gpu2": node("gpu2", 8), "gpu3": node("gpu3", 8)}, EXPECTED)
    assert report["ready"] and report["problems"] == []
    assert "gpu3  8      true         8            OK" in table(report["nodes"])


def test_ready_with_no_gpu_nodes_is_not_ready_and_says_why():
    report = assess(policy("ready", "Ready", "NoGPUNodes", "No GPU node found"), "cluster-policy",
                    {"gpu2": node("gpu2", present=False), "gpu3": node("gpu3", present=False)}, EXPECTED)
    assert not report["ready"]
    assert report["policy"]["problems"] == []
    assert "gpu2: label nvidia.com/gpu.present=true missing (ClusterPolicy reason NoGPUNodes)" in report["problems"]
    assert "gpu2: allocatable nvidia.com/gpu is absent, the fleet says 8" in report["problems"]


def test_not_ready_policy_names_the_condition_and_operands():
    message = "ClusterPolicy is not ready; states not ready: [state-driver state-device-plugin]"
    report = assess(policy("notReady", "Error", "OperandNotReady", message), "cluster-policy",
                    {"gpu2": node("gpu2", 8), "gpu3": node("gpu3", 8)}, EXPECTED)
    assert report["problems"] == [
        "ClusterPolicy cluster-policy: state notReady (Error OperandNotReady: %s)" % message]


def test_one_node_short_of_gpus_and_one_missing():
    report = assess(policy("ready", "Ready", "Reconciled", "ok"), "cluster-policy", {"gpu2": node("gpu2", 4)},
                    EXPECTED)
    assert report["problems"] == ["gpu2: allocatable nvidia.com/gpu is 4, the fleet says 8",
                                  "gpu3: no Node in the cluster (not joined yet?)"]


def test_missing_policy():
    report = assess(None, "cluster-policy", {}, [])
    assert report["problems"] == ["ClusterPolicy cluster-policy: not found (is the GPU Operator chart installed?)"]
