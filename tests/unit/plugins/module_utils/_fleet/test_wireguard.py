# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The model's WireGuard part (``wireguard``): the tenants' interface names, the derived node address
(management host offset folded into the usable part of the tenant's subnet) and ``assign_wireguard``,
which claims explicit addresses first and reports each clash naming both nodes. The view of tunnels and
peers is tested in ``views/test_wireguard.py``."""

from __future__ import annotations

import ipaddress
import re

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.checker import Checker, Subnet
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.wireguard import (
    IFNAMSIZ,
    assign_wireguard,
    derived_address,
    interface_name,
)

MGMT = "192.0.2.0/24"


def subnet(text: str) -> Subnet:
    return Subnet.of(ipaddress.IPv4Network(text))


def addr(text: str) -> int:
    return int(ipaddress.IPv4Address(text))


# --- interface names --------------------------------------------------------------------------------------------


def test_a_short_tenant_name_is_kept_up_to_the_linux_limit() -> None:
    assert interface_name("acme") == "wg-acme"
    assert interface_name("a" * 12) == "wg-" + "a" * 12
    assert len(interface_name("a" * 12)) == IFNAMSIZ == 15


def test_a_long_tenant_name_becomes_a_prefix_and_a_hash_that_fit() -> None:
    for name in ("a" * 13, "research-lab-alpha", "x" * 40):
        short = interface_name(name)
        assert len(short) == IFNAMSIZ and re.fullmatch(r"wg-%s-[0-9a-f]{4}" % re.escape(name[:7]), short), short
    names = ["research-lab-%d" % i for i in range(50)]
    assert len({interface_name(n) for n in names}) == 50
    assert interface_name("research-lab-alpha") == interface_name("research-lab-alpha")


# --- the derived address ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("net", "offset", "expected"), [
    ("10.201.0.0/24", 21, "10.201.0.21"),   # an offset that fits stays
    ("10.201.0.0/24", 2, "10.201.0.2"),
    ("10.201.0.0/24", 254, "10.201.0.254"),
    ("10.201.0.0/24", 255, "10.201.0.2"),   # beyond the usable part: folded, 2 + 253 % 253
    ("10.201.0.0/24", 257, "10.201.0.4"),
    ("10.201.0.0/24", 1001, "10.201.0.242"),
    ("10.201.0.0/24", 1, "10.201.0.254"),   # below the first node offset: folds from the top
    ("10.201.0.0/28", 21, "10.201.0.8"),    # 2 + 19 % 13
    ("10.201.0.0/30", 77, "10.201.0.2"),    # one usable node address
])
def test_derived_address(net: str, offset: int, expected: str) -> None:
    n = subnet(net)
    assert derived_address(n.first, n.size, offset) == addr(expected)


@pytest.mark.parametrize("net", ["10.9.0.0/30", "10.9.0.0/29", "10.9.0.0/24", "10.9.0.0/22"])
def test_a_derived_address_is_never_the_network_the_hub_or_the_broadcast(net: str) -> None:
    n = subnet(net)
    got = {derived_address(n.first, n.size, o) for o in range(1, 3000)}
    assert got == set(range(n.first + 2, n.last))


# --- assign_wireguard -------------------------------------------------------------------------------------------


def private_node(i: int, ip: str, tenant: str = "acme", explicit: str | None = None) -> dict:
    """A node as the node section leaves it: the checked management address, an explicit WireGuard address."""
    n = {"_path": "nodes[%d]" % i, "name": "gpu%02d" % i, "ip": ip, "_ip": addr(ip), "tenant": tenant}
    if explicit is not None:
        n["_wg_explicit"] = addr(explicit)
    return n


def assign(nodes: list[dict], wg: str = "10.201.0.0/24", mgmt: str | None = MGMT) -> list[str]:
    tenants = {"acme": {"name": "acme", "wireguard": {"_net": subnet(wg)}},
               "beta": {"name": "beta", "wireguard": {}}}
    c = Checker()
    assign_wireguard(c, nodes, tenants, {"_net": subnet(mgmt)} if mgmt else {})
    return c.problems


def test_private_nodes_get_their_address_and_others_none() -> None:
    nodes = [private_node(0, "192.0.2.21"), private_node(1, "192.0.2.22", explicit="10.201.0.200"),
             private_node(2, "192.0.2.23", tenant=None), private_node(3, "192.0.2.24", tenant="beta")]
    assert assign(nodes) == []
    assert [n.get("wireguard_ip") for n in nodes] == ["10.201.0.21", "10.201.0.200", None, None]
    assert all("_wg_explicit" not in n for n in nodes)


def test_an_explicit_address_is_claimed_before_any_derived_one() -> None:
    nodes = [private_node(0, "192.0.2.21"), private_node(1, "192.0.2.22", explicit="10.201.0.21")]
    assert assign(nodes) == [
        "nodes[0].wireguard_ip: WireGuard address 10.201.0.21 (derived from host offset 21 of 192.0.2.21 in "
        "10.201.0.0/24) of nodes[0] (gpu00) is already used by nodes[1] (gpu01); set wireguard_ip on one of them"]
    assert nodes[1]["wireguard_ip"] == "10.201.0.21" and "wireguard_ip" not in nodes[0]


def test_two_derived_addresses_that_fold_together_name_both_nodes() -> None:
    nodes = [private_node(0, "192.0.2.8"), private_node(1, "192.0.2.21")]
    assert assign(nodes, wg="10.201.0.0/28") == [
        "nodes[1].wireguard_ip: WireGuard address 10.201.0.8 (derived from host offset 21 of 192.0.2.21 in "
        "10.201.0.0/28) of nodes[1] (gpu01) is already used by nodes[0] (gpu00); set wireguard_ip on one of them"]


def test_the_same_explicit_address_twice_is_refused() -> None:
    nodes = [private_node(0, "192.0.2.21", explicit="10.201.0.9"), private_node(1, "192.0.2.22", explicit="10.201.0.9")]
    assert assign(nodes) == [
        "nodes[1].wireguard_ip: WireGuard address 10.201.0.9 of nodes[1] (gpu01) is already used by nodes[0] "
        "(gpu00); set wireguard_ip on one of them"]


@pytest.mark.parametrize(("explicit", "problem"), [
    ("10.201.0.1", "nodes[0].wireguard_ip: 10.201.0.1 is the tenant's WireGuard hub address"),
    ("10.99.0.5", "nodes[0].wireguard_ip: 10.99.0.5 is outside the WireGuard subnet of tenant 'acme' 10.201.0.0/24"),
    ("10.201.0.0", "nodes[0].wireguard_ip: 10.201.0.0 is the network or broadcast address of 10.201.0.0/24"),
    ("10.201.0.255", "nodes[0].wireguard_ip: 10.201.0.255 is the network or broadcast address of 10.201.0.0/24"),
])
def test_an_explicit_address_must_be_a_node_address_of_the_tenants_subnet(explicit: str, problem: str) -> None:
    nodes = [private_node(0, "192.0.2.21", explicit=explicit)]
    assert assign(nodes) == [problem]
    assert "wireguard_ip" not in nodes[0]


def test_without_a_checked_management_subnet_nothing_is_derived() -> None:
    nodes = [private_node(0, "192.0.2.21"), dict(private_node(1, "192.0.2.22"), _ip=None)]
    assert assign(nodes, mgmt=None) == []
    assert all("wireguard_ip" not in n for n in nodes)
