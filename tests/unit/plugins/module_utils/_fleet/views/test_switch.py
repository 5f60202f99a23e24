# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch view (``derive_switch_tenants``, ``svi_address``, ``compact_switch``, ``expand_switch``,
``port_key``): which tenants each leaf carries on which ports (a private tenant untagged on its own nodes' ports,
every shared tenant tagged on the shared nodes' ports), each leaf's own SVI address, ports in natural order; the
compact hostvars form, which holds each node's port once however many shared tenants there are, and rebuilds the
full form exactly, over the lab and a thousand nodes with a hundred tenants."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import (
    compact_switch,
    derive_switch_tenants,
    expand_switch,
    load_fleet,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.views.switch import port_key, svi_address
from tests.support import inventory_yaml
from tests.support.fleetgen import generate

LAB = Path(__file__).resolve().parents[6] / "inventories" / "lab" / "fleet.yml"


def lab() -> dict:
    return load_fleet(inventory_yaml.load(LAB))


def by_name(model: dict) -> dict[str, dict]:
    return {s["name"]: s for s in model["fabric"]["switches"]}


def trunk(port: str, node: str) -> dict:
    return {"port": port, "node": node, "mode": "trunk"}


def a_tenant(name: str, vlan: int, isolation: str = "shared") -> dict:
    """A tenant as the loaded model has it (the keys the switch view reads)."""
    return {"name": name, "isolation": isolation, "vlan": vlan, "vni": 10000 + vlan, "vrf": name,
            "l3vni": 50000 + vlan, "subnet": "10.%d.0.0/24" % vlan, "gateway_cidr": "10.%d.0.1/24" % vlan}


def a_switch(name: str, role: str = "leaf") -> dict:
    return {"name": name, "role": role, "platform": "nvue"}


def a_node(name: str, *ports: tuple[str, str], tenant: str | None = None) -> dict:
    return {"name": name, "tenant": tenant, "switch_ports": [{"switch": s, "port": p} for s, p in ports]}


# --- SVI addresses ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("subnet", "leaf", "address"), [
    ("10.102.0.0/24", 0, "10.102.0.254/24"),
    ("10.102.0.0/24", 1, "10.102.0.253/24"),
    ("10.102.0.0/23", 2, "10.102.1.252/23"),
    ("10.102.0.0/30", 0, "10.102.0.2/30"),  # the one leaf a /30 has room for, above the gateway .1
])
def test_each_leaf_takes_an_address_from_the_top_of_the_subnet(subnet: str, leaf: int, address: str) -> None:
    assert svi_address(subnet, leaf) == address


# --- tenants per leaf -------------------------------------------------------------------------------------------


def test_the_labs_leaves_carry_the_private_tenant_untagged_and_the_shared_one_tagged() -> None:
    switches = by_name(lab())
    leaf1 = switches["leaf1"]
    assert leaf1["leaf_index"] == 0
    assert leaf1["trunk_ports"] == [trunk("swp2", "gpu2"), trunk("swp3", "gpu3"), trunk("swp4", "gpu4")]
    assert leaf1["tenants"] == [
        {"name": "acme", "isolation": "private", "vlan": 101, "vni": 10101, "vrf": "acme", "l3vni": 50101,
         "subnet": "10.101.0.0/24", "gateway": "10.101.0.1/24", "trunk": False,
         "ports": [{"port": "swp1", "node": "gpu1", "mode": "access"}], "address": "10.101.0.254/24"},
        {"name": "beta", "isolation": "shared", "vlan": 102, "vni": 10102, "vrf": "beta", "l3vni": 50102,
         "subnet": "10.102.0.0/24", "gateway": "10.102.0.1/24", "trunk": True, "ports": leaf1["trunk_ports"],
         "address": "10.102.0.254/24"},
    ]
    leaf2 = switches["leaf2"]
    assert leaf2["leaf_index"] == 1
    assert [(t["name"], t["address"], [p["port"] for p in t["ports"]]) for t in leaf2["tenants"]] == [
        ("acme", "10.101.0.253/24", ["Ethernet0"]), ("beta", "10.102.0.253/24", ["Ethernet4", "Ethernet8"])]


def test_ports_are_in_natural_order_and_tenants_in_vlan_order() -> None:
    model = {
        "tenants": [a_tenant("zeta", 200), a_tenant("acme", 101, "private"), a_tenant("beta", 102)],
        "fabric": {"switches": [a_switch("leaf1")]},
        "nodes": [a_node("n10", ("leaf1", "swp10")), a_node("n2", ("leaf1", "swp2")),
                  a_node("a11", ("leaf1", "swp11"), tenant="acme"), a_node("a3", ("leaf1", "swp3"), tenant="acme"),
                  a_node("n1s1", ("leaf1", "swp1s1")), a_node("n1s0", ("leaf1", "swp1s0"))],
    }
    derive_switch_tenants(model)
    (leaf1,) = model["fabric"]["switches"]
    assert [p["port"] for p in leaf1["trunk_ports"]] == ["swp1s0", "swp1s1", "swp2", "swp10"]
    assert [(t["name"], [p["port"] for p in t["ports"]]) for t in leaf1["tenants"]] == [
        ("acme", ["swp3", "swp11"]), ("beta", ["swp1s0", "swp1s1", "swp2", "swp10"]),
        ("zeta", ["swp1s0", "swp1s1", "swp2", "swp10"])]


def test_a_leaf_carries_only_what_its_ports_do_and_every_leaf_counts_in_fleet_order() -> None:
    model = {
        "tenants": [a_tenant("acme", 101, "private"), a_tenant("beta", 102)],
        "fabric": {"switches": [a_switch("spine1", "spine"), a_switch("leaf1"), a_switch("leaf2"),
                                a_switch("leaf3")]},
        "nodes": [a_node("gpu1", ("leaf1", "swp1"), tenant="acme"), a_node("gpu2", ("leaf3", "swp1"))],
    }
    derive_switch_tenants(model)
    switches = by_name(model)
    assert (switches["spine1"]["tenants"], switches["spine1"]["trunk_ports"]) == ([], [])
    assert "leaf_index" not in switches["spine1"]
    assert [(s["leaf_index"], [t["name"] for t in s["tenants"]]) for s in model["fabric"]["switches"][1:]] == [
        (0, ["acme"]), (1, []), (2, ["beta"])]  # leaf1 has no shared node: it carries no shared tenant
    assert switches["leaf3"]["tenants"][0]["address"] == "10.102.0.252/24"


def test_deriving_again_changes_nothing() -> None:
    model = lab()
    again = copy.deepcopy(model)
    derive_switch_tenants(again)
    assert again == model


# --- the compact form ---------------------------------------------------------------------------------------------


def test_the_compact_form_keeps_private_ports_and_a_flag_for_the_shared_tenants() -> None:
    switches = by_name(lab())
    compact = compact_switch(switches["leaf1"])
    assert "tenants" not in compact
    assert compact["access_ports"] == {"acme": [{"port": "swp1", "node": "gpu1", "mode": "access"}]}
    assert (compact["shared_tenants"], compact["trunk_ports"]) == (True, switches["leaf1"]["trunk_ports"])
    assert {k: v for k, v in compact.items() if k not in ("access_ports", "shared_tenants")} == {
        k: v for k, v in switches["leaf1"].items() if k != "tenants"}


def test_expanding_a_full_switch_keeps_it_and_a_compact_one_without_shared_ports_gets_no_shared_tenant() -> None:
    model = lab()
    leaf1 = by_name(model)["leaf1"]
    assert expand_switch(copy.deepcopy(leaf1), model["tenants"]) == leaf1
    compact = {"name": "leaf9", "role": "leaf", "leaf_index": 4, "trunk_ports": [], "shared_tenants": False,
               "access_ports": {"acme": [{"port": "swp9", "node": "gpu9", "mode": "access"}]}}
    assert [(t["name"], t["address"], t["ports"]) for t in expand_switch(compact, model["tenants"])["tenants"]] == [
        ("acme", "10.101.0.250/24", [{"port": "swp9", "node": "gpu9", "mode": "access"}])]


def test_a_thousand_nodes_and_a_hundred_tenants_compact_to_one_entry_per_port_and_expand_back() -> None:
    model = load_fleet(generate(nodes=1000, tenants=100, switches=10))
    shared = [t["name"] for t in model["tenants"] if t["isolation"] == "shared"]
    private_nodes = [n for n in model["nodes"] if n["tenant"]]
    assert (len(shared), len(private_nodes)) == (80, 20)
    leaves = [s for s in model["fabric"]["switches"] if s["role"] == "leaf"]
    assert len(leaves) == 8
    assert sum(len(s["trunk_ports"]) for s in leaves) == 1000 - 20
    for s in leaves:
        carried = [t for t in s["tenants"] if t["trunk"]]
        assert [t["name"] for t in carried] == shared
        assert all(t["ports"] == s["trunk_ports"] for t in carried)
    compact = [compact_switch(s) for s in model["fabric"]["switches"]]
    held = sum(len(c["trunk_ports"]) + sum(len(p) for p in c["access_ports"].values()) for c in compact)
    assert held == 1000  # each node's one port once, not once per shared tenant
    assert [expand_switch(c, model["tenants"]) for c in compact] == model["fabric"]["switches"]


# --- port order ---------------------------------------------------------------------------------------------------


def test_ports_sort_naturally() -> None:
    ports = ["swp10", "swp2", "swp1s1", "swp1", "swp1s0", "Ethernet12", "Ethernet4", "Ethernet0"]
    assert sorted(ports, key=port_key) == ["Ethernet0", "Ethernet4", "Ethernet12", "swp1", "swp1s0", "swp1s1", "swp2",
                                           "swp10"]
