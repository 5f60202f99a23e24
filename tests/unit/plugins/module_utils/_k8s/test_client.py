# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The API client's retries, errors and request shapes (no network)."""
from __future__ import annotations

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.client import Client, object_path
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.errors import K8sError
from tests.unit.plugins.module_utils._k8s.fake import FakeApi


def test_object_paths() -> None:
    assert object_path("v1", "namespaces", "tenant-a") == "/api/v1/namespaces/tenant-a"
    assert object_path("v1", "secrets", "vc-a", "tenant-a") == "/api/v1/namespaces/tenant-a/secrets/vc-a"
    assert object_path("scheduling.run.ai/v2", "queues") == "/apis/scheduling.run.ai/v2/queues"


@pytest.mark.parametrize("status", [429, 500, 503, 409])
def test_retries_transient_answers_then_succeeds(status: int) -> None:
    api = FakeApi({"/api/v1/namespaces/a": {"metadata": {"name": "a"}}}, answers=[(status, {}), (status, {})])
    assert api.get("/api/v1/namespaces/a")["metadata"]["name"] == "a"
    assert api.requests == 3 and len(api.slept) == 2


def test_apply_conflict_is_not_retried_and_names_the_object() -> None:
    conflict = {"reason": "Conflict", "message": "Apply failed with 1 conflict: conflict with \"kubectl\""}
    api = FakeApi(answers=[(409, conflict)])
    with pytest.raises(K8sError) as err:
        api.apply("/apis/x/v1/things/a", {"metadata": {"name": "a"}}, force=False, what="apply thing a")
    assert api.requests == 1
    assert err.value.problems == ['apply thing a: 409 Conflict: Apply failed with 1 conflict: conflict with "kubectl"']
    assert isinstance(err.value, ProblemsError)


def test_gives_up_after_retries_with_the_last_answer() -> None:
    api = FakeApi(answers=[(503, {"reason": "ServiceUnavailable", "message": "etcd down"})] * 10)
    with pytest.raises(K8sError, match="503 ServiceUnavailable: etcd down"):
        api.list("/api/v1/namespaces")
    assert api.requests == 6


def test_validation_errors_fail_at_once() -> None:
    invalid = {"reason": "Invalid", "message": 'spec.resources.gpu.quota: Invalid value: "string"'}
    api = FakeApi(answers=[(422, invalid)])
    with pytest.raises(K8sError, match=r"422 Invalid: spec\.resources\.gpu\.quota"):
        api.apply("/apis/scheduling.run.ai/v2/queues/q", {"metadata": {"name": "q"}})
    assert api.requests == 1


def test_missing_object_is_none_and_delete_of_a_missing_object_is_false() -> None:
    api = FakeApi()
    assert api.get("/api/v1/namespaces/nope") is None
    assert api.delete("/api/v1/namespaces/nope") is False


def test_unreadable_kubeconfig_is_one_line_naming_the_option(tmp_path) -> None:
    bad = tmp_path / "kubeconfig"
    bad.write_text("clusters: nope\n")
    with pytest.raises(K8sError, match=r"^Kubernetes API request failed \(1 problem\):\n  - kubeconfig: cannot load it"):
        Client({"kubeconfig": str(bad)})


def test_unreachable_server_fails_with_what_and_where() -> None:
    client = Client({"host": "https://127.0.0.1:1", "validate_certs": False, "request_timeout": 2})
    with pytest.raises(K8sError, match="list queues: cannot reach the Kubernetes API"):
        client.list("/apis/scheduling.run.ai/v2/queues", what="list queues")
