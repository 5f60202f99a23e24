# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The desired KAI queue tree and its refusals (KAI does not check children against their parent)."""
from __future__ import annotations

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.errors import QueueTreeError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.queue_tree import queue_tree


def tenant(name: str, quota: int, limit: int = -1, weight: int = 1, **extra) -> dict:
    return {"name": name, "queue": f"tenant-{name}", "isolation": "shared",
            "gpu": {"quota": quota, "limit": limit, "over_quota_weight": weight}, **extra}


def test_tree_is_a_parent_and_one_leaf_per_tenant_in_kai_units() -> None:
    tree = queue_tree([tenant("a", 4, 8, 2), tenant("b", 2, cpu={"quota": 8000, "limit": -1, "over_quota_weight": 1})],
                      gpu_capacity=16)
    assert [q["name"] for q in tree] == ["gpucloud", "tenant-a", "tenant-b"]
    assert tree[0]["spec"] == {"displayName": "gpucloud",
                               "resources": {"gpu": {"quota": 16, "limit": 16, "overQuotaWeight": 1}}}
    assert tree[1]["spec"] == {"displayName": "a", "parentQueue": "gpucloud",
                               "resources": {"gpu": {"quota": 4, "limit": 8, "overQuotaWeight": 2}}}
    assert tree[2]["spec"]["resources"]["cpu"] == {"quota": 8000, "limit": -1, "overQuotaWeight": 1}


def test_quotas_above_the_capacity_are_refused_naming_the_queues() -> None:
    with pytest.raises(QueueTreeError) as err:
        queue_tree([tenant("a", 10), tenant("b", 8), tenant("c", 1)], gpu_capacity=16)
    assert err.value.problems == ["tenant-a, tenant-b, tenant-c: gpu quotas together 19 exceed the quota 16 "
                                  "of their parent gpucloud"]


def test_a_leaf_above_its_parent_and_a_parent_above_capacity_are_refused() -> None:
    with pytest.raises(ProblemsError) as err:
        queue_tree([tenant("a", 12, 40)], gpu_capacity=16, parent={"gpu": {"quota": 20, "limit": 32}})
    assert err.value.problems == [
        "gpucloud: GPU quota 20 exceeds the fleet's GPU capacity of 16 for this tree",
        "tenant-a: gpu limit 40 exceeds the limit 32 of its parent gpucloud",
    ]


def test_a_leaf_without_a_limit_is_capped_by_its_parent_and_accepted() -> None:
    tree = queue_tree([tenant("a", 2, -1)], gpu_capacity=8)
    assert tree[1]["spec"]["resources"]["gpu"]["limit"] == -1 and tree[0]["spec"]["resources"]["gpu"]["limit"] == 8


def test_a_quota_that_is_not_a_number_is_refused_naming_the_tenant() -> None:
    with pytest.raises(ProblemsError) as err:
        queue_tree([tenant("a", 1, cpu={"quota": "lots"})], gpu_capacity=8)
    assert err.value.problems == ["tenants[0] (tenant-a): cpu.quota: 'lots' is not a number (-1 for unlimited)"]


def test_tree_without_a_parent_quota_is_refused() -> None:
    with pytest.raises(ProblemsError, match="gpucloud: the parent queue needs a GPU quota"):
        queue_tree([tenant("a", 1)])


def test_a_refused_tree_is_one_of_the_collections_problems_with_its_heading() -> None:
    with pytest.raises(ProblemsError) as err:
        queue_tree([tenant("a", 9)], gpu_capacity=8)
    assert str(err.value).startswith("the queue tree is refused (2 problems):")
