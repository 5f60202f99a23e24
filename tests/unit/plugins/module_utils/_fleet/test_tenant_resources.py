# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A tenant's CPU and memory in its KAI queue, and the NodePort of its API, as the fleet gives them."""

from __future__ import annotations

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, validate_fleet
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.units import kai_cpu, kai_memory
from tests.support.fleet_data import fleet


def _with(**tenant_keys) -> dict:
    data = fleet()
    data["tenants"][0].update(tenant_keys)
    return data


def test_cpu_and_memory_default_to_unlimited_with_the_gpu_weight() -> None:
    tenant = load_fleet(fleet())["tenants"][0]
    weight = tenant["gpu"]["over_quota_weight"]
    assert tenant["cpu"] == {"quota": -1, "limit": -1, "over_quota_weight": weight}
    assert tenant["memory"] == {"quota": -1, "limit": -1, "over_quota_weight": weight}


def test_cpu_in_cores_and_memory_as_quantities_are_kept_as_given() -> None:
    memory = {"quota": "256Gi", "limit": -1, "over_quota_weight": 3}
    tenant = load_fleet(_with(cpu={"quota": 32, "limit": 64.5}, memory=memory))["tenants"][0]
    assert tenant["cpu"]["quota"] == 32 and tenant["cpu"]["limit"] == 64.5
    assert tenant["memory"] == {"quota": "256Gi", "limit": -1, "over_quota_weight": 3}


@pytest.mark.parametrize(("keys", "expected"), [
    ({"cpu": {"quota": "8"}}, "tenants[0].cpu.quota: '8' is not a number of CPU cores"),
    ({"cpu": {"quota": -2}}, "tenants[0].cpu.quota: -2 is not a number of CPU cores"),
    ({"memory": {"limit": 512}}, "tenants[0].memory.limit: 512 is not a Kubernetes memory quantity"),
    ({"memory": {"quota": "1Gb"}}, "tenants[0].memory.quota: '1Gb' is not a Kubernetes memory quantity"),
    ({"memory": {"quota": "2Ti", "limit": "1Ti"}}, "tenants[0].memory.quota: quota 2Ti is above the limit 1Ti"),
    ({"cpu": {"quotas": 1}}, "tenants[0].cpu.quotas: unknown key"),
    ({"cpu": 8}, "tenants[0].cpu: must be a mapping"),
])
def test_a_wrong_amount_is_refused_with_its_path(keys: dict, expected: str) -> None:
    found = validate_fleet(_with(**keys))
    assert any(p.startswith(expected) for p in found), found


def test_kai_units() -> None:
    assert (kai_cpu(64), kai_cpu(0.5), kai_cpu(-1)) == (64000, 500, -1)
    assert (kai_memory("1Gi"), kai_memory("1G"), kai_memory("512Mi"), kai_memory(-1)) == (1074, 1000, 537, -1)
    assert kai_memory("lots") is None and kai_cpu("8") is None and kai_cpu(True) is None


def test_node_port_is_derived_from_the_vlan_or_given_and_unique() -> None:
    model = load_fleet(fleet())
    assert [t["vcluster"]["node_port"] for t in model["tenants"]] == [30000 + t["vlan"] for t in model["tenants"]]
    given = load_fleet(_with(vcluster={"node_port": 31000}))["tenants"][0]
    assert given["vcluster"]["node_port"] == 31000
    data = fleet()
    data["tenants"][0]["vcluster"] = {"node_port": 30000 + data["tenants"][1]["vlan"]}
    assert any("vcluster.node_port: vCluster NodePort" in p and "already used by" in p for p in validate_fleet(data))


def test_a_vlan_beyond_the_node_port_range_needs_an_explicit_port() -> None:
    found = validate_fleet(_with(vlan=3000))
    assert "tenants[0].vcluster.node_port: is required: the default NodePort 30000 + VLAN 3000 = 33000 is " \
           "outside 30000..32767" in found
    assert validate_fleet(_with(vlan=3000, vcluster={"node_port": 32000})) == []
    assert any("tenants[0].vcluster.node_port: 29999 is outside 30000..32767" in p
               for p in validate_fleet(_with(vcluster={"node_port": 29999})))
