# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tenant_objects module: objects applied server-side (created, then unchanged), check mode as a dry run,
the diff only with --diff, and objects of a kind it does not know or without a name refused before any request."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.modules import tenant_objects
from tests.unit.plugins.module_utils._k8s.fake import FakeApi

NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tenant-beta"}}
QUOTA = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "tenant-quota", "namespace": "tenant-beta"},
         "spec": {"hard": {"requests.nvidia.com/gpu": "16"}}}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> FakeApi:
    fake = FakeApi()
    monkeypatch.setattr(tenant_objects, "Client", lambda params, field_manager: fake)
    return fake


def module(check: bool = False, diff: bool = False, **params) -> SimpleNamespace:
    base = {"objects": [], "field_manager": "gpucloud.baremetal", "force_conflicts": True}
    return SimpleNamespace(params={**base, **params}, check_mode=check, _diff=diff)


def test_objects_are_created_then_left_as_they_are(api: FakeApi) -> None:
    first = tenant_objects.run(module(objects=[NAMESPACE, QUOTA]))
    assert first["changed"] is True and "diff" not in first
    assert first["created"] == ["Namespace tenant-beta", "ResourceQuota tenant-beta/tenant-quota"]
    assert [w for w in api.writes if w[2] == "real"], api.writes
    again = tenant_objects.run(module(objects=[NAMESPACE, QUOTA]))
    assert again["changed"] is False and again["created"] == [] and again["updated"] == []
    assert again["unchanged"] == ["Namespace tenant-beta", "ResourceQuota tenant-beta/tenant-quota"]


def test_a_changed_object_is_updated_and_diff_mode_shows_it(api: FakeApi) -> None:
    tenant_objects.run(module(objects=[QUOTA]))
    more = dict(QUOTA, spec={"hard": {"requests.nvidia.com/gpu": "32"}})
    result = tenant_objects.run(module(diff=True, objects=[more]))
    assert result["changed"] is True and result["updated"] == ["ResourceQuota tenant-beta/tenant-quota"]
    assert result["diff"], result


def test_check_mode_writes_only_dry_runs(api: FakeApi) -> None:
    result = tenant_objects.run(module(check=True, objects=[NAMESPACE]))
    assert result["changed"] is True and result["created"] == ["Namespace tenant-beta"]
    assert api.writes and all(mode == "dry" for _m, _p, mode in api.writes), api.writes


@pytest.mark.parametrize(("obj", "problem"), [
    ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}, "objects[1].kind: 'Pod' is not one of"),
    ({"apiVersion": "v1", "kind": "Secret", "metadata": {}}, "objects[1]: needs apiVersion and metadata.name"),
    ({"kind": "Secret", "metadata": {"name": "x"}}, "objects[1]: needs apiVersion and metadata.name"),
])
def test_an_object_it_does_not_apply_is_refused_before_any_request(api: FakeApi, obj: dict, problem: str) -> None:
    with pytest.raises(ProblemsError) as err:
        tenant_objects.run(module(objects=[NAMESPACE, obj]))
    assert err.value.problems[0].startswith(problem), err.value.problems
    assert api.requests == 0 and api.writes == []
