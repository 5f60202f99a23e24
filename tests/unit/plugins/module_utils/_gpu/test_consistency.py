# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUs across layers: fleet = NVML = allocatable, and the tenants' quotas within real GPUs."""

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu.consistency import (
    node_rows,
    summary,
    tenant_rows,
)

NODES = [
    {"name": "gpu1", "gpu": {"count": 8}, "tenant": "acme"},
    {"name": "gpu2", "gpu": {"count": 8}, "tenant": None},
    {"name": "gpu3", "gpu": {"count": 8}, "tenant": None},
    {"name": "gpu4", "gpu": {"count": 0}, "tenant": None},
]
TENANTS = [
    {"name": "acme", "isolation": "private", "gpu": {"quota": 8}},
    {"name": "beta", "isolation": "shared", "queue": "tenant-beta", "gpu": {"quota": 8}},
]


def k8s_node(gpus):
    return {"metadata": {"labels": {}}, "status": {"allocatable": {"nvidia.com/gpu": str(gpus)}}}


def queue(name, quota):
    return {"metadata": {"name": name}, "spec": {"resources": {"gpu": {"quota": quota}}}}


NVML = {name: {"gpu_count": 8, "failed": False} for name in ("gpu1", "gpu2", "gpu3")}


def test_all_layers_agree():
    rows = node_rows(NODES, NVML, {"gpu2": k8s_node(8), "gpu3": k8s_node(8)})
    tenants = tenant_rows(TENANTS, rows, [queue("tenant-beta", 8)])
    assert [r["node"] for r in rows] == ["gpu1", "gpu2", "gpu3"]  # gpu4 has no GPU: not checked
    assert not [p for r in rows + tenants for p in r["problems"]]
    text = summary(rows, tenants)
    assert "gpu1  tenant acme  8      8     -            OK (tenant acme cluster not checked" in text
    assert "beta    shared     8      16    OK" in text


def test_each_layer_that_disagrees_is_named():
    nvml = dict(NVML, gpu2={"gpu_count": 7, "failed": True, "msg": "1 GPU lost"}, gpu3=None)
    rows = node_rows(NODES, nvml, {"gpu2": k8s_node(8), "gpu3": None})
    problems = [p for r in rows for p in r["problems"]]
    assert "gpu2: NVML sees 7 GPUs, the fleet says 8" in problems
    assert "gpu3: NVML not run on the node (unreachable, or left out of the play)" in problems
    assert "gpu3: no Node in the host cluster" in problems


def test_allocatable_short_of_the_fleet_and_quota_above_real_gpus():
    rows = node_rows(NODES, NVML, {"gpu2": k8s_node(8), "gpu3": k8s_node(0)})
    assert "gpu3: allocatable nvidia.com/gpu in the host cluster is 0, the fleet says 8" in rows[2]["problems"]
    tenants = tenant_rows(TENANTS, rows, [queue("tenant-beta", 12)])
    assert tenants[1]["problems"] == ["tenant beta: queue quota 12 exceeds the 8 GPUs the shared nodes offer"]


def test_missing_queue_and_no_queue_crd():
    rows = node_rows(NODES, NVML, {"gpu2": k8s_node(8), "gpu3": k8s_node(8)})
    assert tenant_rows(TENANTS, rows, [])[1]["problems"] == [
        "tenant beta: KAI queue tenant-beta missing on the host cluster"]
    before = tenant_rows(TENANTS, rows, None)[1]
    assert before["problems"] == [] and before["notes"]


def test_private_quota_above_its_nodes():
    nvml = dict(NVML, gpu1={"gpu_count": 4})
    rows = node_rows([dict(NODES[0], gpu={"count": 4})], nvml, {})
    assert tenant_rows(TENANTS[:1], rows, None)[0]["problems"] == [
        "tenant acme: GPU quota 8 exceeds the 4 GPUs its nodes offer"]
