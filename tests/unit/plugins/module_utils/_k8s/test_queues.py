# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The queue tree applied to a cluster: apply / prune / absent against a fake API."""
from __future__ import annotations

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.queue_tree import queue_tree
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.queues import QueueTree
from tests.unit.plugins.module_utils._k8s.fake import FakeApi

Q = "/apis/scheduling.run.ai/v2/queues"


def tenant(name: str, quota: int, limit: int = -1, weight: int = 1, **extra) -> dict:
    return {"name": name, "queue": f"tenant-{name}", "isolation": "shared",
            "gpu": {"quota": quota, "limit": limit, "over_quota_weight": weight}, **extra}


def test_apply_creates_then_changes_nothing() -> None:
    api = FakeApi()
    tree = queue_tree([tenant("a", 4, 8), tenant("b", 4, 8)], gpu_capacity=8)
    first = QueueTree(api, tree).present()
    assert first["created"] == ["gpucloud", "tenant-a", "tenant-b"] and first["changed"]
    assert api.objects[f"{Q}/tenant-a"]["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "gpucloud.baremetal", "gpucloud.baremetal/queue-tree": "gpucloud",
        "gpucloud.baremetal/tenant": "a"}
    writes = len(api.writes)
    second = QueueTree(api, tree).present()
    assert not second["changed"] and second["unchanged"] == ["gpucloud", "tenant-a", "tenant-b"]
    assert len(api.writes) == writes
    assert second["diff"] == {"before": {}, "after": {}}


def test_a_changed_quota_updates_only_that_queue_with_a_diff() -> None:
    api = FakeApi()
    QueueTree(api, queue_tree([tenant("a", 4, 8), tenant("b", 4, 8)], gpu_capacity=8)).present()
    result = QueueTree(api, queue_tree([tenant("a", 2, 8), tenant("b", 4, 8)], gpu_capacity=8)).present()
    assert result["updated"] == ["tenant-a"] and result["created"] == []
    assert result["diff"]["before"]["tenant-a"]["spec"]["resources"]["gpu"]["quota"] == 4
    assert result["diff"]["after"]["tenant-a"]["spec"]["resources"]["gpu"]["quota"] == 2


def test_check_mode_sends_dry_runs_and_stores_nothing() -> None:
    api = FakeApi()
    result = QueueTree(api, queue_tree([tenant("a", 4)], gpu_capacity=8, parent={"gpu": {"limit": -1}}),
                       check_mode=True).present()
    assert result["created"] == ["gpucloud", "tenant-a"]
    assert api.objects == {}
    assert {mode for _m, _p, mode in api.writes} == {"dry"}


def test_prune_removes_only_our_queues_of_this_tree() -> None:
    foreign = {"metadata": {"name": "default-queue"}, "spec": {"resources": {"gpu": {"quota": -1}}}}
    other_tree = {"metadata": {"name": "x", "labels": {"app.kubernetes.io/managed-by": "gpucloud.baremetal",
                                                       "gpucloud.baremetal/queue-tree": "other"}}}
    api = FakeApi({f"{Q}/default-queue": foreign, f"{Q}/x": other_tree})
    QueueTree(api, queue_tree([tenant("a", 4), tenant("b", 4)], gpu_capacity=8,
                              parent={"gpu": {"limit": -1}})).present()
    kept = QueueTree(api, queue_tree([tenant("a", 4)], gpu_capacity=8, parent={"gpu": {"limit": -1}})).present()
    assert kept["deleted"] == [] and f"{Q}/tenant-b" in api.objects  # no prune: nothing goes, it is reported
    assert (kept["stale"], kept["stale_tenants"], kept["changed"]) == (["tenant-b"], ["b"], False)
    pruned = QueueTree(api, queue_tree([tenant("a", 4)], gpu_capacity=8, parent={"gpu": {"limit": -1}})).present(
        prune=True)
    assert pruned["deleted"] == ["tenant-b"] and pruned["diff"]["after"] == {"tenant-b": None}
    assert sorted(p.rsplit("/", 1)[1] for p in api.objects) == ["default-queue", "gpucloud", "tenant-a", "x"]


def test_absent_removes_a_tenant_then_the_parent_when_it_is_empty() -> None:
    api = FakeApi()
    QueueTree(api, queue_tree([tenant("a", 4), tenant("b", 4)], gpu_capacity=8,
                              parent={"gpu": {"limit": -1}})).present()
    parent_only = [{"name": "gpucloud", "tenant": None, "spec": {}}]
    one = QueueTree(api, parent_only).absent(["a"])
    assert one["deleted"] == ["tenant-a"] and one["kept_parent_for"] == ["tenant-b"]
    rest = QueueTree(api, parent_only).absent(["b"])
    assert rest["deleted"] == ["tenant-b", "gpucloud"]
    assert api.objects == {}
    again = QueueTree(api, parent_only).absent(None)
    assert not again["changed"]
