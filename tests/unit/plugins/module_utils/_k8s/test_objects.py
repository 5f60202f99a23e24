# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Batch apply of plain objects: only what differs is written; check mode in a namespace still to come."""
from __future__ import annotations

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.objects import apply_objects, contains, path_of
from tests.unit.plugins.module_utils._k8s.fake import FakeApi

NS = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tenant-a", "labels": {"x": "1"}}}
QUOTA = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "tenant-a"},
         "spec": {"hard": {"requests.nvidia.com/gpu": "4"}}}
POLICY = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
          "metadata": {"name": "p", "namespace": "tenant-a"},
          "spec": {"podSelector": {}, "ingress": [{"ports": [{"protocol": "TCP", "port": 8443}]}]}}


def test_paths_without_discovery() -> None:
    assert path_of(NS) == "/api/v1/namespaces/tenant-a"
    assert path_of(POLICY) == "/apis/networking.k8s.io/v1/namespaces/tenant-a/networkpolicies/p"
    with pytest.raises(ValueError, match="kind 'Deployment' is not one of"):
        path_of({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}})


def test_contains_ignores_what_the_server_adds() -> None:
    have = {"spec": {"podSelector": {}, "ingress": [{"ports": [{"protocol": "TCP", "port": 8443}]}],
                     "policyTypes": ["Ingress"]}}
    assert contains(have, {"spec": POLICY["spec"]})
    assert not contains(have, {"spec": {"ingress": [{"ports": [{"port": 443}]}]}})
    assert not contains({"items": [1, 2]}, {"items": [1]})


def test_second_apply_writes_nothing() -> None:
    api = FakeApi()
    first = apply_objects(api, [NS, QUOTA, POLICY])
    assert first["created"] == ["Namespace tenant-a", "ResourceQuota tenant-a/q", "NetworkPolicy tenant-a/p"]
    writes = len(api.writes)
    second = apply_objects(api, [NS, QUOTA, POLICY])
    assert not second["changed"] and len(api.writes) == writes


def test_check_mode_in_a_new_namespace_reports_without_dry_running_its_objects() -> None:
    api = FakeApi()
    result = apply_objects(api, [NS, QUOTA], check_mode=True)
    assert result["created"] == ["Namespace tenant-a", "ResourceQuota tenant-a/q"]
    assert api.objects == {} and api.writes == [("PATCH", "/api/v1/namespaces/tenant-a", "dry")]
    assert result["diff"]["after"]["ResourceQuota tenant-a/q"]["spec"]["hard"] == {"requests.nvidia.com/gpu": "4"}


def test_a_changed_quota_is_updated_with_before_and_after() -> None:
    api = FakeApi()
    apply_objects(api, [NS, QUOTA])
    bigger = {**QUOTA, "spec": {"hard": {"requests.nvidia.com/gpu": "8"}}}
    result = apply_objects(api, [NS, bigger])
    assert result["updated"] == ["ResourceQuota tenant-a/q"] and result["unchanged"] == ["Namespace tenant-a"]
    assert result["diff"]["before"]["ResourceQuota tenant-a/q"]["spec"]["hard"]["requests.nvidia.com/gpu"] == "4"
