# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter node_workloads, as role os_install calls it before a reinstall or a decommission
(tasks/node_check.yml: ``node_pods.resources | default([]) | gpucloud.baremetal.node_workloads``).

Held at the filter layer (which pods hold work is held in module_utils/_k8s/test_workloads.py): pods as
kubernetes.core.k8s_info returns them give ``namespace/name`` of the work, sorted; what is no list (the whole
k8s_info result, nothing) is an AnsibleFilterError naming the filter; entries the API server answered malformed
count as work and never raise (refuse, not wipe).
"""
from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucloud.baremetal.plugins.filter.node_workloads import FilterModule

FILTERS = FilterModule().filters()
WORKLOADS = FILTERS["node_workloads"]


def pod(namespace: str, name: str, owner: str | None = None, phase: str = "Running", mirror: bool = False) -> dict:
    meta: dict = {"namespace": namespace, "name": name}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner, "name": name.rsplit("-", 1)[0],
                                    "controller": True}]
    if mirror:
        meta["annotations"] = {"kubernetes.io/config.mirror": "0123456789abcdef"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"nodeName": "gpu1"},
            "status": {"phase": phase}}


PODS = [
    pod("kube-system", "cilium-x7k2p", owner="DaemonSet"),
    pod("gpu-operator", "nvidia-dcgm-exporter-4hq9z", owner="DaemonSet"),
    pod("kube-system", "kube-proxy-gpu1", mirror=True),
    pod("tenant-beta", "train-7d9c-abcde", owner="ReplicaSet"),
    pod("tenant-acme", "job-1-xyz", owner="Job", phase="Succeeded"),
    pod("tenant-acme", "job-2-xyz", owner="Job", phase="Failed"),
    pod("tenant-acme", "notebook"),
    pod("tenant-acme", "batch-0", owner="StatefulSet", phase="Pending"),
]


def test_the_filter_is_there() -> None:
    assert set(FILTERS) == {"node_workloads"}


def test_the_work_on_a_node_is_named_namespace_slash_name_and_sorted() -> None:
    assert WORKLOADS(PODS) == ["tenant-acme/batch-0", "tenant-acme/notebook", "tenant-beta/train-7d9c-abcde"]


def test_a_node_with_only_daemonsets_static_and_finished_pods_holds_no_work() -> None:
    assert WORKLOADS([p for p in PODS if not p["metadata"]["namespace"].startswith("tenant-")
                      or p["status"]["phase"] in ("Succeeded", "Failed")]) == []
    assert WORKLOADS([]) == []


@pytest.mark.parametrize("pods", [None, {"resources": []}, "pods", 3, ("a", "b")])
def test_what_is_no_list_of_pods_is_a_filter_error_naming_the_filter(pods: object) -> None:
    """The likely mistake: the registered k8s_info result itself, not its ``resources``."""
    with pytest.raises(AnsibleFilterError, match=r"^node_workloads: expects a list of Pod objects"):
        WORKLOADS(pods)


def test_entries_the_api_server_answered_malformed_count_as_work_and_never_raise() -> None:
    junk = [None, "pod", 3, [], {}, {"metadata": "x"}, {"metadata": None},
            {"metadata": {"namespace": "a", "name": "b", "ownerReferences": "DaemonSet"}, "status": "Succeeded"},
            {"metadata": {"namespace": "a", "name": "c", "annotations": ["kubernetes.io/config.mirror"]}},
            {"metadata": {"namespace": "a", "name": "d", "ownerReferences": ["DaemonSet", None]}}]
    found = WORKLOADS(junk)
    assert len(found) == len(junk)
    assert found.count("(a pod the API server answered without metadata)") == 7
    assert {"a/b", "a/c", "a/d"} <= set(found)
