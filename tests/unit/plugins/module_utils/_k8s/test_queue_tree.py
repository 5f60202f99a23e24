# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The desired KAI queue tree and its refusals (KAI does not check children against their parent).

Every queue states gpu, cpu and memory: KAI reads a missing ``limit`` as 0, "no additional resources
allowed" (KAI-Scheduler docs/queues/README.md, v0.13.0), so a queue with only ``gpu`` admits no pod
that requests CPU. Every generated Queue is held against the Queue CRD of the pinned KAI release
(../shared/upstream/kai-scheduler/<tag>/, test data).
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.errors import QueueTreeError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.queue_tree import queue_tree
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.queues import queue_object
from tests.support import inventory_yaml, upstream
from tests.support.fabric import example_model

REPO = Path(__file__).resolve().parents[5]
KAI_VERSION = yaml.safe_load((REPO / "roles" / "kai_scheduler" / "defaults" / "main.yml").read_text())[
    "kai_scheduler_chart_version"]
UPSTREAM = upstream.release("kai-scheduler", KAI_VERSION)
UNLIMITED = {"quota": -1, "limit": -1}

# A stated skip where it is missing; in CI, which installs tests/requirements.txt, any skip fails (tests/support/ci.py).
jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (tests/requirements.txt)")


def tenant(name: str, quota: int, limit: int = -1, weight: int = 1, **extra) -> dict:
    return {"name": name, "queue": f"tenant-{name}", "isolation": "shared",
            "gpu": {"quota": quota, "limit": limit, "over_quota_weight": weight}, **extra}


@pytest.fixture(scope="module")
def queue_crd_schema() -> dict:
    path = UPSTREAM / "scheduling.run.ai_queues.crd.yaml"
    if not path.exists():
        pytest.skip(f"UPSTREAM CRD MISSING: {path} (../shared/upstream); queues not checked against it")
    crd = yaml.safe_load(path.read_text())
    return next(v for v in crd["spec"]["versions"] if v["name"] == "v2")["schema"]["openAPIV3Schema"]


def test_every_queue_states_gpu_cpu_and_memory_with_cpu_and_memory_unlimited_by_default() -> None:
    tree = queue_tree([tenant("a", 4, 8, 2), tenant("b", 2)], gpu_capacity=16)
    assert [q["name"] for q in tree] == ["gpucloud", "tenant-a", "tenant-b"]
    assert tree[0]["spec"] == {"displayName": "gpucloud", "resources": {
        "gpu": {"quota": 16, "limit": 16, "overQuotaWeight": 1},
        "cpu": {**UNLIMITED, "overQuotaWeight": 1}, "memory": {**UNLIMITED, "overQuotaWeight": 1}}}
    assert tree[1]["spec"] == {"displayName": "a", "parentQueue": "gpucloud", "resources": {
        "gpu": {"quota": 4, "limit": 8, "overQuotaWeight": 2},
        "cpu": {**UNLIMITED, "overQuotaWeight": 2}, "memory": {**UNLIMITED, "overQuotaWeight": 2}}}
    for queue in tree:  # no resource a pod may request is left at KAI's "no resources allowed"
        assert all(queue["spec"]["resources"][r].get("limit") not in (None, 0) for r in ("gpu", "cpu", "memory"))


def test_cpu_in_cores_and_memory_as_quantities_become_kais_millicores_and_megabytes() -> None:
    tree = queue_tree([tenant("a", 2, cpu={"quota": 16, "limit": 32.5, "over_quota_weight": 3},
                              memory={"quota": "64Gi", "limit": "1T", "over_quota_weight": 1}),
                       tenant("b", 2, cpu={"quota": 0}, memory={"quota": 0})], gpu_capacity=8)
    leaf = tree[1]["spec"]["resources"]
    assert leaf["cpu"] == {"quota": 16000, "limit": 32500, "overQuotaWeight": 3}
    assert leaf["memory"] == {"quota": 68719, "limit": 1000000, "overQuotaWeight": 1}  # 64 GiB = 68719.48 MB
    # The parent guarantees what its children are guaranteed and caps nothing beyond the GPUs.
    assert tree[0]["spec"]["resources"]["cpu"] == {"quota": 16000, "limit": -1, "overQuotaWeight": 1}
    assert tree[0]["spec"]["resources"]["memory"] == {"quota": 68719, "limit": -1, "overQuotaWeight": 1}


def test_quotas_above_the_capacity_are_refused_naming_the_queues() -> None:
    with pytest.raises(QueueTreeError) as err:
        queue_tree([tenant("a", 10), tenant("b", 8), tenant("c", 1)], gpu_capacity=16)
    assert err.value.problems == ["tenant-a, tenant-b, tenant-c: gpu quotas together 19 exceed the quota 16 "
                                  "of their parent gpucloud"]


def test_a_leaf_above_its_parent_and_a_parent_above_capacity_are_refused() -> None:
    with pytest.raises(ProblemsError) as err:
        queue_tree([tenant("a", 12, 40), tenant("b", 1, cpu={"quota": 8, "limit": 64})], gpu_capacity=16,
                   parent={"gpu": {"quota": 20, "limit": 32}, "cpu": {"quota": 4, "limit": 32}})
    assert err.value.problems == [
        "gpucloud: GPU quota 20 exceeds the fleet's GPU capacity of 16 for this tree",
        "tenant-a: gpu limit 40 exceeds the limit 32 of its parent gpucloud",
        "tenant-a: cpu quota unlimited (-1) exceeds the quota 4 cores of its parent gpucloud",
        "tenant-b: cpu quota 8 cores exceeds the quota 4 cores of its parent gpucloud",
        "tenant-b: cpu limit 64 cores exceeds the limit 32 cores of its parent gpucloud",
    ]


def test_a_leaf_without_a_limit_is_capped_by_its_parent_and_accepted() -> None:
    tree = queue_tree([tenant("a", 2, -1)], gpu_capacity=8)
    assert tree[1]["spec"]["resources"]["gpu"]["limit"] == -1 and tree[0]["spec"]["resources"]["gpu"]["limit"] == 8


@pytest.mark.parametrize(("extra", "problem"), [
    ({"cpu": {"quota": "lots"}}, "cpu.quota: 'lots' is not a number of CPU cores such as 64 or 0.5, or -1"),
    ({"memory": {"limit": 512}}, "memory.limit: 512 is not a Kubernetes memory quantity such as 512Gi"),
    ({"memory": {"limit": "512 GB"}}, "memory.limit: '512 GB' is not a Kubernetes memory quantity"),
])
def test_an_amount_that_is_not_one_is_refused_naming_the_tenant(extra: dict, problem: str) -> None:
    with pytest.raises(ProblemsError) as err:
        queue_tree([tenant("a", 1, **extra)], gpu_capacity=8)
    assert len(err.value.problems) == 1 and err.value.problems[0].startswith("tenants[0] (tenant-a): " + problem)


def test_tree_without_a_parent_quota_is_refused() -> None:
    with pytest.raises(ProblemsError, match="gpucloud: the parent queue needs a GPU quota"):
        queue_tree([tenant("a", 1)])


def test_a_refused_tree_is_one_of_the_collections_problems_with_its_heading() -> None:
    with pytest.raises(ProblemsError) as err:
        queue_tree([tenant("a", 9)], gpu_capacity=8)
    assert str(err.value).startswith("the queue tree is refused (2 problems):")


def _fleet_trees() -> list[tuple[str, list[dict]]]:
    lab = load_fleet(inventory_yaml.load(REPO / "inventories" / "lab" / "fleet.yml"))
    out = []
    for name, model in (("example", example_model()), ("lab", lab)):
        shared = [t for t in model["tenants"] if t["isolation"] == "shared"]
        capacity = sum(n["gpu"]["count"] for n in model["nodes"] if not n.get("tenant"))
        out.append((name + "-shared", queue_tree(shared, capacity)))
        for t in model["tenants"]:
            if t["isolation"] == "private":  # a private tenant's own tree, inside its cluster
                own = sum(n["gpu"]["count"] for n in model["nodes"] if n.get("tenant") == t["name"])
                out.append((name + "-" + t["name"], queue_tree([t], own)))
    return out


@pytest.mark.parametrize(("name", "tree"), _fleet_trees(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_generated_queue_is_valid_under_the_pinned_kai_crd(
        queue_crd_schema: dict, name: str, tree: list[dict]) -> None:
    validator = jsonschema.Draft7Validator(queue_crd_schema)
    for queue in tree:
        obj = queue_object(queue, tree[0]["name"])
        assert [e.message for e in validator.iter_errors(obj)] == [], (name, obj)
        assert set(obj["spec"]["resources"]) == {"gpu", "cpu", "memory"}


def test_the_crd_check_catches_a_wrong_type(queue_crd_schema: dict) -> None:
    queue = queue_object(queue_tree([tenant("a", 1)], gpu_capacity=8)[1], "gpucloud")
    queue["spec"]["resources"]["gpu"]["quota"] = "1"
    assert any("is not of type 'number'" in e.message
               for e in jsonschema.Draft7Validator(queue_crd_schema).iter_errors(queue))
