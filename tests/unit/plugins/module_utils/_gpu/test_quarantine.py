# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU health quarantine's circuit breaker: max(1, floor(ratio x fleet)) Nodes quarantined per window."""
from __future__ import annotations

import datetime

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu import quarantine

NOW = datetime.datetime(2026, 12, 4, 12, 0, 0, tzinfo=datetime.UTC)


def node(name: str, minutes_ago: float | None, by: str = "gpu-health", at: str | None = None) -> dict:
    notes = {}
    if minutes_ago is not None:
        notes = {quarantine.BY: by, quarantine.AT: at or quarantine.stamp(NOW - datetime.timedelta(minutes=minutes_ago))}
    return {"metadata": {"name": name, "annotations": notes}}


def test_only_recent_quarantines_of_gpu_health_count() -> None:
    nodes = [node("a", 2), node("b", 11), node("c", None), node("d", 1, by="someone"), {"metadata": {"name": "e"}}]
    got = quarantine.breaker(nodes, 600, 0.1, 20, now=NOW)
    assert got["recent"] == ["a"] and got["limit"] == 2 and not got["open"] and got["now"] == "2026-12-04T12:00:00Z"


@pytest.mark.parametrize(("fleet", "ratio", "limit"), [(3, 0.1, 1), (10, 0.1, 1), (20, 0.1, 2), (29, 0.1, 2),
                                                       (100, 0.2, 20), (0, 0.1, 1)])
def test_the_limit_is_at_least_one_node(fleet: int, ratio: float, limit: int) -> None:
    assert quarantine.breaker([], 600, ratio, fleet, now=NOW)["limit"] == limit


def test_the_breaker_opens_at_the_limit_and_closes_after_the_window() -> None:
    assert quarantine.breaker([node("a", 9.9)], 600, 0.1, 3, now=NOW)["open"]
    assert not quarantine.breaker([node("a", 10.1)], 600, 0.1, 3, now=NOW)["open"]


def test_an_unreadable_time_counts_as_recent() -> None:
    assert quarantine.breaker([node("a", 0, at="yesterday")], 600, 0.1, 3, now=NOW)["recent"] == ["a"]


def test_a_node_given_back_counts_until_the_window_has_passed() -> None:
    back = {"metadata": {"name": "b", "annotations": {
        quarantine.LAST_AT: quarantine.stamp(NOW - datetime.timedelta(minutes=3))}}}
    old = {"metadata": {"name": "c", "annotations": {
        quarantine.LAST_AT: quarantine.stamp(NOW - datetime.timedelta(minutes=30))}}}
    got = quarantine.breaker([back, old], 600, 0.1, 3, now=NOW)
    assert got["recent"] == ["b"] and got["open"]
    # Quarantined again while its last one is recent: counted once.
    notes = {**back["metadata"]["annotations"], quarantine.BY: "gpu-health", quarantine.AT: quarantine.stamp(NOW)}
    again = {"metadata": {"name": "b", "annotations": notes}}
    assert quarantine.breaker([again], 600, 0.1, 30, now=NOW)["recent"] == ["b"]
