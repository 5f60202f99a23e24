# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU health quarantine's circuit breakers: max(1, floor(ratio x nodes)) quarantined per window, for the fleet
and for the node's group (a private tenant's nodes, or the shared pool)."""
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


def record(name: str, minutes_ago: float) -> dict:
    """A private node's record in the host cluster (ConfigMap gpucloud-quarantine-<node>)."""
    found = node(f"gpucloud-quarantine-{name}", minutes_ago)
    found["metadata"]["labels"] = {quarantine.NODE_LABEL: name}
    return found


def fleet(n: int, prefix: str = "n") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def test_only_recent_quarantines_of_gpu_health_count() -> None:
    nodes = [node("a", 2), node("b", 11), node("c", None), node("d", 1, by="someone"), {"metadata": {"name": "e"}}]
    got = quarantine.breaker(nodes, 600, 0.1, [*"abcde", *fleet(15)], now=NOW)
    assert got["recent"] == ["a"] and got["limit"] == 2 and not got["open"] and got["now"] == "2026-12-04T12:00:00Z"


@pytest.mark.parametrize(("size", "ratio", "limit"), [(3, 0.1, 1), (10, 0.1, 1), (20, 0.1, 2), (29, 0.1, 2),
                                                      (100, 0.2, 20), (0, 0.1, 1)])
def test_the_limit_is_at_least_one_node(size: int, ratio: float, limit: int) -> None:
    got = quarantine.breaker([], 600, ratio, fleet(size), fleet(size), "pool", now=NOW)
    assert got["fleet"]["limit"] == got["group"]["limit"] == limit


def test_the_breaker_opens_at_the_limit_and_closes_after_the_window() -> None:
    assert quarantine.breaker([node("a", 9.9)], 600, 0.1, ["a", "b", "c"], now=NOW)["open"]
    assert not quarantine.breaker([node("a", 10.1)], 600, 0.1, ["a", "b", "c"], now=NOW)["open"]


def test_an_unreadable_time_counts_as_recent() -> None:
    assert quarantine.breaker([node("a", 0, at="yesterday")], 600, 0.1, ["a"], now=NOW)["recent"] == ["a"]


def test_a_node_given_back_counts_until_the_window_has_passed() -> None:
    back = {"metadata": {"name": "b", "annotations": {
        quarantine.LAST_AT: quarantine.stamp(NOW - datetime.timedelta(minutes=3))}}}
    old = {"metadata": {"name": "c", "annotations": {
        quarantine.LAST_AT: quarantine.stamp(NOW - datetime.timedelta(minutes=30))}}}
    got = quarantine.breaker([back, old], 600, 0.1, ["a", "b", "c"], now=NOW)
    assert got["recent"] == ["b"] and got["open"]
    # Quarantined again while its last one is recent: counted once.
    notes = {**back["metadata"]["annotations"], quarantine.BY: "gpu-health", quarantine.AT: quarantine.stamp(NOW)}
    again = {"metadata": {"name": "b", "annotations": notes}}
    assert quarantine.breaker([again], 600, 0.1, [*fleet(29), "b"], now=NOW)["recent"] == ["b"]


def test_a_tenant_stops_at_its_own_share_while_the_fleet_has_room() -> None:
    """40 nodes: 10 of tenant acme (limit 1), 30 shared (limit 3), fleet limit 4. One acme node out stops acme's
    next one; a shared node may still go."""
    acme, pool = fleet(10, "acme-"), fleet(30, "pool-")
    records = [record("acme-0", 2)]
    got = quarantine.breaker(records, 600, 0.1, acme + pool, acme, "tenant acme", now=NOW)
    assert got["open"] and got["by"] == "group" and got["group"]["name"] == "tenant acme"
    assert got["recent"] == ["acme-0"] and got["limit"] == 1 and got["group"]["size"] == 10
    assert not got["fleet"]["open"] and got["fleet"]["limit"] == 4
    shared = quarantine.breaker(records, 600, 0.1, acme + pool, pool, "shared pool", now=NOW)
    assert not shared["open"] and shared["group"]["recent"] == [] and shared["fleet"]["recent"] == ["acme-0"]


def test_the_fleet_stops_when_many_groups_each_have_room() -> None:
    """Four tenants of 20 nodes (limit 2 each) and a fleet of 80 (limit 8): one node out in each of eight tenants'
    worth of quarantines opens the fleet's breaker though no tenant reached its own."""
    tenants = {t: fleet(20, f"{t}-") for t in "abcd"}
    everyone = [n for nodes in tenants.values() for n in nodes]
    records = [record(f"{t}-{i}", 1) for t in "abcd" for i in range(2) if not (t == "d" and i == 1)]
    records.append(node("a-5", 1))  # a host cluster Node (shared pool) counts as well
    got = quarantine.breaker(records, 600, 0.1, everyone, tenants["d"], "tenant d", now=NOW)
    assert got["open"] and got["by"] == "fleet" and got["fleet"]["limit"] == 8 and len(got["fleet"]["recent"]) == 8
    assert not got["group"]["open"] and got["group"]["recent"] == ["d-0"]


def test_only_the_fleets_nodes_count() -> None:
    """A record of a node the fleet no longer lists (decommissioned) does not hold the breaker open."""
    assert not quarantine.breaker([record("gone", 1)], 600, 0.1, ["a"], ["a"], "pool", now=NOW)["open"]


def test_the_group_is_named_first_when_both_are_open() -> None:
    got = quarantine.breaker([record("a", 1)], 600, 0.1, ["a", "b"], ["a"], "tenant acme", now=NOW)
    assert got["open"] and got["by"] == "group" and got["fleet"]["open"]
