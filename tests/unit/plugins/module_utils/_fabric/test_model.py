# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The neutral shape: a switch's tenants from the fleet, canonical order, port groups by value."""

from __future__ import annotations

import copy
import random

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.errors import FabricError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.model import (
    desired,
    full_switch,
    group_ids,
    normalise,
    pairs,
    port_groups,
    port_key,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import compact_switch, load_fleet
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.views import switch as fleet_switch
from tests.support.fabric import example_model, switches
from tests.support.fleetgen import generate

SWITCHES = switches()


def test_model_tenants_in_neutral_shape():
    leaf = SWITCHES["leaf-r2a"]
    want = desired(leaf)
    assert [t["name"] for t in want] == ["beta", "cobalt"]
    assert want[1] == {
        "name": "cobalt", "vlan": 103, "vni": 10103, "vrf": "cobalt", "l3vni": 50103,
        "gateway": "10.103.0.1/24", "subnet": "10.103.0.0/24", "address": "",
        "ports": [{"port": "Ethernet0", "mode": "access"}],
    }
    # NVUE leaves carry their own SVI address (from the top of the subnet, one per leaf in fleet order)
    nvue = {t["name"]: t for t in desired(SWITCHES["leaf-r1a"])}
    other = {t["name"]: t for t in desired(SWITCHES["leaf-r1b"])}
    assert nvue["beta"]["address"] != other["beta"]["address"]
    assert nvue["beta"]["address"].endswith("/24") and nvue["beta"]["address"] != nvue["beta"]["gateway"]
    assert desired(SWITCHES["spine1"]) == []


def test_the_compact_hostvars_form_gives_the_same_tenants():
    model = example_model()
    tenants = model["tenants"]
    for sw in model["fabric"]["switches"]:
        assert desired(full_switch(compact_switch(sw), tenants)) == desired(sw), sw["name"]
    with pytest.raises(FabricError, match="fleet_tenants: required"):
        full_switch(compact_switch(SWITCHES["leaf-r1a"]), None)


def test_normalise_sorts_by_vlan_and_ports_naturally():
    raw = [
        {"name": "b", "vlan": 20, "vni": 2, "vrf": "b", "l3vni": 3, "gateway": "10.0.2.1/24",
         "ports": [{"port": "swp10", "mode": "trunk"}, {"port": "swp2", "mode": "trunk"}]},
        {"name": "a", "vlan": 10, "vni": 1, "vrf": "a", "l3vni": 4, "gateway": "10.0.1.1/24",
         "ports": [{"port": "swp10"}, {"port": "swp9"}]},
    ]  # fmt: skip
    out = normalise(raw)
    assert [t["name"] for t in out] == ["a", "b"]
    assert out[0]["ports"] == [{"port": "swp9", "mode": "access"}, {"port": "swp10", "mode": "access"}]
    assert [p["port"] for p in out[1]["ports"]] == ["swp2", "swp10"]
    assert out[0]["subnet"] == "10.0.1.0/24" and out[0]["address"] == ""


def test_port_groups_are_found_by_value():
    """Equal ports lists are one group whether or not they are one list object; a list with
    another port or another mode is a group of its own."""
    trunk = [{"port": "swp1", "mode": "trunk"}, {"port": "swp2", "mode": "trunk"}]
    tenants = [
        {"ports": trunk},
        {"ports": copy.deepcopy(trunk)},
        {"ports": [dict(p, node="gpu7") for p in trunk]},  # what a switch stores: port and mode
        {"ports": [{"port": "swp1", "mode": "access"}, {"port": "swp2", "mode": "trunk"}]},
        {"ports": list(reversed(trunk))},
        {"ports": []},
        {},
        {"ports": ["not a port"]},
        "not a tenant",
    ]
    ids = group_ids(tenants)
    assert ids[0] == ids[1] == ids[2]
    assert len({ids[0], ids[3], ids[4], ids[5], ids[7]}) == 5
    assert ids[5] == ids[6]  # no ports and an empty list


def test_a_leaf_renders_its_trunk_ports_as_one_group_also_from_copies():
    model = load_fleet(generate(nodes=60, tenants=20, switches=5))
    leaf = model["fabric"]["switches"][0]
    copied = dict(leaf, tenants=copy.deepcopy(leaf["tenants"]))
    for sw in (leaf, copied):
        tenants = desired(sw)
        shared = [t for t in tenants if t["ports"] and t["ports"][0]["mode"] == "trunk"]
        assert len(shared) > 1
        groups = port_groups(tenants)
        trunk = [g for g in groups if g.ports and g.ports[0]["mode"] == "trunk"]
        assert len(trunk) == 1 and trunk[0].vlans == [t["vlan"] for t in shared]


def test_overlapping_port_lists_are_grouped_per_port():
    a = {"vlan": 10, "ports": [{"port": "swp1", "mode": "trunk"}, {"port": "swp2", "mode": "trunk"}]}
    b = {"vlan": 20, "ports": [{"port": "swp2", "mode": "trunk"}]}
    groups = port_groups([a, b])
    assert [(g.ports[0]["port"], g.vlans, g.first) for g in groups] == [("swp1", [10], 0), ("swp2", [10, 20], 0)]
    with pytest.raises(FabricError, match="port swp2 is both access and trunk"):
        port_groups([a, {"vlan": 20, "ports": [{"port": "swp2", "mode": "access"}]}])


def test_pairs_name_what_differs_in_vlan_order():
    one = {"name": "a", "vlan": 20}
    two = {"name": "b", "vlan": 10}
    assert pairs([one, two], [dict(one, vlan=30), two]) == [(one, dict(one, vlan=30))]
    assert pairs([one], [two]) == [(None, two), (one, None)]


def test_one_sort_order_of_ports_in_the_fleet_and_the_fabric():
    """The inventory and every switch config sort ports with the same key (the fleet's), which
    orders digits as numbers: swp2 before swp10, Ethernet1/2 before Ethernet1/10."""
    ports = ["swp10", "swp2", "swp1s1", "swp1", "Ethernet1/10", "Ethernet1/2", "bond1", "swp1s0", ""]
    random.Random(7).shuffle(ports)
    assert sorted(ports, key=port_key) == sorted(ports, key=fleet_switch.port_key) == [
        "", "Ethernet1/2", "Ethernet1/10", "bond1", "swp1", "swp1s0", "swp1s1", "swp2", "swp10",
    ]  # fmt: skip
    model = load_fleet(generate(nodes=40, tenants=4, switches=3))
    for sw in [s for s in model["fabric"]["switches"] if s["role"] == "leaf"]:
        names = [p["port"] for p in sw["trunk_ports"]]
        assert names == sorted(names, key=port_key) and [p["port"] for p in desired(sw)[-1]["ports"]] == names
