# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_quarantine_breaker, as role gpu_quarantine calls it (tasks/present.yml).

Held at the filter layer (the breakers' counting is held in module_utils/_gpu/test_quarantine.py): the window and
the ratio as templating hands them (text of numbers read as numbers, anything else an AnsibleFilterError that names
the filter), the records, the fleet and the group checked before counting, the group optional, and what the
result holds that the role reads (open, by, the scope's recent/limit/size, now as the record writes it).
"""
from __future__ import annotations

import datetime
import re

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucloud.baremetal.plugins.filter.gpu_health import FilterModule
from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu import quarantine

FILTERS = FilterModule().filters()
BREAKER = FILTERS["gpu_quarantine_breaker"]
FLEET = ["gpu1", "gpu2", "gpu3", "gpu4"]


def node(name: str, minutes_ago: float, by: str = "gpu-health") -> dict:
    """A host cluster Node as kubernetes.core.k8s_info returns it, quarantined ``minutes_ago``."""
    at = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=minutes_ago)
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "annotations": {quarantine.BY: by, quarantine.AT: quarantine.stamp(at)}}}


def test_the_filter_is_there() -> None:
    assert set(FILTERS) == {"gpu_quarantine_breaker"}


def test_a_quiet_fleet_leaves_the_breaker_closed_and_says_when() -> None:
    out = BREAKER([], 600, 0.25, FLEET)
    assert out["open"] is False and out["by"] == "" and "group" not in out
    assert out["fleet"] == {"recent": [], "limit": 1, "size": 4, "open": False}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", out["now"]), out["now"]


def test_a_recent_quarantine_opens_the_fleets_breaker() -> None:
    out = BREAKER([node("gpu2", 5), node("gpu3", 120)], 600, 0.25, FLEET)
    assert out["open"] is True and out["by"] == "fleet"
    assert out["recent"] == ["gpu2"] and out["limit"] == 1
    assert out["fleet"] == {"recent": ["gpu2"], "limit": 1, "size": 4, "open": True}


def test_the_group_and_its_name_are_passed_on() -> None:
    """tasks/present.yml: ``gpu_quarantine_breaker(window, ratio, fleet, group, group_name)``."""
    out = BREAKER([node("gpu1", 5)], 600, 0.5, FLEET, ["gpu1", "gpu2"], "tenant acme")
    assert out["open"] is True and out["by"] == "group"
    assert out["group"] == {"recent": ["gpu1"], "limit": 1, "size": 2, "open": True, "name": "tenant acme"}
    assert out["fleet"]["open"] is False  # 1 of 4 at 0.5: limit 2
    assert BREAKER([], 600, 0.5, FLEET, ["gpu1"], None)["group"]["name"] == "None"


def test_window_and_ratio_given_as_text_read_as_numbers() -> None:
    """Extra vars (``-e gpu_quarantine_window=600``) arrive as text."""
    as_text = BREAKER([node("gpu2", 5)], "600", "0.5", FLEET)
    as_numbers = BREAKER([node("gpu2", 5)], 600, 0.5, FLEET)
    assert {k: v for k, v in as_text.items() if k != "now"} == {k: v for k, v in as_numbers.items() if k != "now"}
    assert as_text["fleet"]["limit"] == 2 and as_text["recent"] == ["gpu2"]


def test_the_window_is_what_counts_as_recent() -> None:
    records = [node("gpu2", 30)]
    assert BREAKER(records, 3600, 0.25, FLEET)["open"] is True
    assert BREAKER(records, "600", 0.25, FLEET)["open"] is False


@pytest.mark.parametrize(("window", "ratio"), [
    ("ten minutes", 0.1), (600, "a tenth"), (None, 0.1), (600, None), ("600.5", 0.1), ([600], 0.1), (600, {}),
])
def test_a_window_or_ratio_that_is_no_number_is_a_filter_error(window: object, ratio: object) -> None:
    with pytest.raises(AnsibleFilterError, match=r"^gpu_quarantine_breaker: window and ratio must be numbers$"):
        BREAKER([], window, ratio, FLEET)


@pytest.mark.parametrize("records", [None, {"resources": []}, "records", 3])
def test_records_that_are_no_list_are_a_filter_error(records: object) -> None:
    """``k8s_info`` registered whole (not ``.resources``) is the likely mistake."""
    with pytest.raises(AnsibleFilterError, match=r"^gpu_quarantine_breaker: expects the list of records"):
        BREAKER(records, 600, 0.1, FLEET)


@pytest.mark.parametrize("fleet", [None, "gpu1", ["gpu1", 2], [{"name": "gpu1"}], {"gpu1": {}}])
def test_a_fleet_that_is_no_list_of_names_is_a_filter_error(fleet: object) -> None:
    with pytest.raises(AnsibleFilterError, match=r"^gpu_quarantine_breaker: fleet must be a list of node names$"):
        BREAKER([], 600, 0.1, fleet)


@pytest.mark.parametrize("group", ["gpu1", ["gpu1", None], {"gpu1": {}}])
def test_a_group_that_is_no_list_of_names_is_a_filter_error(group: object) -> None:
    with pytest.raises(AnsibleFilterError, match=r"^gpu_quarantine_breaker: group must be a list of node names$"):
        BREAKER([], 600, 0.1, FLEET, group)


def test_records_that_are_no_mapping_are_passed_over() -> None:
    """A list entry that is no object names no node: it counts nowhere, and the breaker still answers."""
    out = BREAKER(["junk", None, 3, ["x"], node("gpu2", 5)], 600, 0.25, FLEET)
    assert out["recent"] == ["gpu2"] and out["open"] is True


@pytest.mark.parametrize("ratio", [10, "10", -0.1, float("nan"), float("inf"), "nan"])
def test_a_ratio_that_is_no_share_of_the_fleet_is_refused(ratio: object) -> None:
    """10 meant as 10 % would let every node go in one window; NaN would fail deep in the arithmetic."""
    with pytest.raises(AnsibleFilterError, match=r"^gpu_quarantine_breaker: ratio \(gpu_quarantine_max_ratio\) must be"
                                                 r" a share of the fleet between 0 and 1 \(0.1 is 10 %\), not "):
        BREAKER([node("gpu2", 5)], 600, ratio, FLEET)


@pytest.mark.parametrize("window", [0, -600, "0"])
def test_a_window_under_a_second_is_refused(window: object) -> None:
    with pytest.raises(AnsibleFilterError, match=r"^gpu_quarantine_breaker: window \(gpu_quarantine_window\) must be"
                                                 r" at least 1 second"):
        BREAKER([node("gpu2", 5)], window, 0.1, FLEET)


def test_records_whose_parts_are_no_mappings_count_only_by_what_they_hold() -> None:
    """A Node whose metadata, labels or annotations are of the wrong type: no AttributeError."""
    junk = [{"metadata": "gpu1"}, {"metadata": {"name": "gpu1", "labels": ["x"], "annotations": "y"}}]
    out = BREAKER([*junk, node("gpu2", 5)], 600, 0.25, FLEET)
    assert out["recent"] == ["gpu2"] and out["open"] is True
