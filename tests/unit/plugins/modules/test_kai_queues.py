# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kai_queues module: options to tree to API, refusals before any request, diff only with --diff."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.modules import kai_queues
from tests.unit.plugins.module_utils._k8s.fake import FakeApi

BETA = {"name": "beta", "queue": "tenant-beta", "gpu": {"quota": 8, "limit": 16, "over_quota_weight": 2}}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> FakeApi:
    fake = FakeApi()

    def connect(params: dict, field_manager: str) -> FakeApi:
        fake.requests = 0  # a new connection per task, the same stored objects
        return fake

    monkeypatch.setattr(kai_queues, "Client", connect)
    return fake


def module(check: bool = False, diff: bool = False, **params) -> SimpleNamespace:
    base = {"tenants": [], "gpu_capacity": None, "parent": {}, "state": "present", "prune": False,
            "field_manager": "gpucloud.baremetal", "force_conflicts": True}
    return SimpleNamespace(params={**base, **params}, check_mode=check, _diff=diff)


def test_present_reports_requests_and_keeps_diff_for_diff_mode(api: FakeApi) -> None:
    result = kai_queues.run(module(diff=True, tenants=[BETA], gpu_capacity=16))
    assert result["created"] == ["gpucloud", "tenant-beta"] and result["requests"] == 3
    assert set(result["diff"]["after"]) == {"gpucloud", "tenant-beta"}
    again = kai_queues.run(module(tenants=[BETA], gpu_capacity=16))
    assert not again["changed"] and again["requests"] == 1 and "diff" not in again


def test_over_capacity_is_refused_before_any_request(api: FakeApi) -> None:
    with pytest.raises(ProblemsError, match="tenant-beta: gpu quotas together 8 exceed the quota 4"):
        kai_queues.run(module(tenants=[BETA], gpu_capacity=4))
    assert api.requests == 0


def test_absent_needs_no_capacity_and_removes_the_named_tenant(api: FakeApi) -> None:
    kai_queues.run(module(tenants=[BETA], gpu_capacity=16))
    gone = kai_queues.run(module(tenants=[BETA], state="absent"))
    assert gone["deleted"] == ["tenant-beta", "gpucloud"]


def test_documentation_matches_the_argument_spec() -> None:
    import yaml

    doc = yaml.safe_load(kai_queues.DOCUMENTATION)
    assert {"tenants", "gpu_capacity", "parent", "state", "prune", "field_manager", "force_conflicts"} <= set(
        doc["options"])
    assert doc["attributes"]["check_mode"]["support"] == "full"
