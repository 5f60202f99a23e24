# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pods that hold work on a node, as kubectl drain sees them (what a reinstall or power-off would kill)."""
from __future__ import annotations

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.workloads import workloads


def pod(name: str, phase: str = "Running", owner: str | None = None, mirror: bool = False) -> dict:
    meta: dict = {"namespace": "ns", "name": name}
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": name + "-owner"}]
    if mirror:
        meta["annotations"] = {"kubernetes.io/config.mirror": "abc"}
    return {"metadata": meta, "status": {"phase": phase}}


def test_daemonset_static_and_finished_pods_hold_no_work() -> None:
    pods = [pod("train", owner="ReplicaSet"), pod("bare"), pod("pending", phase="Pending", owner="Job"),
            pod("agent", owner="DaemonSet"), pod("kube-proxy-node", mirror=True),
            pod("done", phase="Succeeded", owner="Job"), pod("crashed", phase="Failed")]
    assert workloads(pods) == ["ns/bare", "ns/pending", "ns/train"]
    assert workloads([]) == []


def test_what_the_api_server_answers_malformed_counts_as_work() -> None:
    assert workloads(["junk", {"status": {}}]) == ["(a pod the API server answered without metadata)"] * 2
    assert workloads([{"metadata": {"name": "x", "namespace": "n", "ownerReferences": "DaemonSet"}}]) == ["n/x"]
    with pytest.raises(TypeError, match="expects a list of Pod objects"):
        workloads({"items": []})
