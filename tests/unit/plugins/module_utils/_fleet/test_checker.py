# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet checker on its own: each check returns the cleaned value, or None after recording a problem that
names the path and what is allowed; the helpers that clean and name values; ``Subnet`` and ``Unique``."""

from __future__ import annotations

import ipaddress
import re

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.checker import (
    Checker,
    Subnet,
    Unique,
    cidr,
    ip_str,
    is_int,
    is_vault_value,
    normalise_mac,
    plain,
    type_name,
)

NAME = re.compile(r"^[a-z][a-z0-9-]*$")


def subnet(text: str) -> Subnet:
    return Subnet.of(ipaddress.IPv4Network(text))


# --- helpers ----------------------------------------------------------------------------------------------------


def test_vault_values_are_told_by_their_class_name_of_either_ansible_core() -> None:
    class EncryptedString(str):
        pass

    class AnsibleVaultEncryptedUnicode(str):
        pass

    assert is_vault_value(EncryptedString("x")) and is_vault_value(AnsibleVaultEncryptedUnicode("x"))
    assert not is_vault_value("$ANSIBLE_VAULT;1.1;AES256") and not is_vault_value(None)


@pytest.mark.parametrize(("value", "expected"), [(0, True), (-3, True), (True, False), (3.0, False), ("3", False)])
def test_is_int_refuses_booleans_floats_and_strings(value, expected) -> None:
    assert is_int(value) == expected


def test_plain_drops_subclasses_and_keeps_values() -> None:
    class Tagged(str):
        pass

    class TaggedInt(int):
        pass

    assert type(plain(Tagged("a"))).__name__ == "str" and plain(Tagged("a")) == "a"
    assert type(plain(TaggedInt(7))).__name__ == "int" and plain(TaggedInt(7)) == 7
    assert isinstance(plain(True), bool) and plain(True) and plain([1]) == [1] and plain(None) is None


def test_macs_are_normalised_to_lower_case_colons() -> None:
    assert normalise_mac("52-54-00-AB-cd-EF") == "52:54:00:ab:cd:ef"
    assert normalise_mac("52:54:00:ab:cd:ef") == "52:54:00:ab:cd:ef"


@pytest.mark.parametrize(("value", "expected"), [
    (None, "nothing (null)"), (True, "a boolean"), (1, "an integer"), ("x", "a string"),
    ([], "a list"), ({}, "a mapping"), (1.5, "float"),
])
def test_type_name_says_what_a_user_wrote(value, expected) -> None:
    assert type_name(value) == expected


def test_ip_str_and_cidr_give_dotted_forms() -> None:
    assert ip_str(0xC0000201) == "192.0.2.1"
    net = subnet("10.8.0.0/14")
    assert cidr((net.first, net.last, "tenants[0].subnet")) == "10.8.0.0/14"
    # A range that is no single block: its first block.
    first, last = int(ipaddress.IPv4Address("10.0.0.0")), int(ipaddress.IPv4Address("10.0.2.255"))
    assert cidr((first, last, "x")) == "10.0.0.0/23"


# --- Subnet -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "size", "netmask"), [
    ("192.0.2.0/24", 256, "255.255.255.0"),
    ("10.0.0.0/8", 2 ** 24, "255.0.0.0"),
    ("10.1.2.4/30", 4, "255.255.255.252"),
    ("0.0.0.0/0", 2 ** 32, "0.0.0.0"),
    ("10.1.2.3/32", 1, "255.255.255.255"),
])
def test_subnet_bounds_size_cidr_and_netmask(text: str, size: int, netmask: str) -> None:
    net = subnet(text)
    assert (net.size, net.cidr, net.netmask, net.prefixlen) == (size, text, netmask, int(text.split("/")[1]))
    assert net.last - net.first + 1 == size


# --- structure --------------------------------------------------------------------------------------------------


def test_mapping_reports_unknown_and_missing_keys_with_their_paths() -> None:
    c = Checker()
    value = {"name": "a", "colour": "red"}
    assert c.mapping(value, "site", {"name": True, "domain": True, "size": False}) == value
    assert c.problems == [
        "site.colour: unknown key; allowed keys here are name, domain, size",
        "site.domain: is required",
    ]


def test_mapping_at_the_top_level_names_the_key_alone() -> None:
    c = Checker()
    c.mapping({"sitee": {}}, "", {"site": True})
    assert c.problems == ["sitee: unknown key; allowed keys here are site", "site: is required"]


def test_a_non_mapping_is_refused_listing_the_keys() -> None:
    c = Checker()
    assert c.mapping(["a"], "site.management", {"subnet": True, "gateway": False}) is None
    assert c.problems == ["site.management: must be a mapping with keys subnet, gateway, got a list"]


def test_sequence_refuses_a_non_list_and_an_empty_one_where_required() -> None:
    c = Checker()
    assert c.sequence({"a": 1}, "nodes") == []
    assert c.sequence([], "fabric.switches", allow_empty=False) == []
    assert c.sequence([], "tenants") == []
    assert c.sequence([1, 2], "x") == [1, 2]
    assert c.problems == ["nodes: must be a list, got a mapping", "fabric.switches: must not be empty"]


# --- scalars ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "problem"), [
    (None, "nodes[0].name: must be a non-empty string, got nothing (null)"),
    ("", "nodes[0].name: must be a non-empty string, got a string"),
    (7, "nodes[0].name: must be a non-empty string, got an integer"),
    ("Gpu_1", "nodes[0].name: 'Gpu_1' is not a host name"),
    ("gpu-1\n", "nodes[0].name: 'gpu-1\\n' is not a host name"),
])
def test_string_refuses_what_is_not_a_matching_non_empty_string(value, problem: str) -> None:
    c = Checker()
    assert c.string(value, "nodes[0].name", NAME, "a host name") is None
    assert c.problems == [problem]


def test_string_returns_a_matching_value_and_any_value_without_a_pattern() -> None:
    c = Checker()
    assert c.string("gpu-1", "nodes[0].name", NAME, "a host name") == "gpu-1"
    assert c.string("Any Thing", "site.domain") == "Any Thing"
    assert c.problems == []


def test_secret_takes_a_string_or_a_vault_value_only() -> None:
    class EncryptedString:
        pass

    c = Checker()
    assert c.secret("pw", "nodes[0].bmc.password") == "pw"
    assert isinstance(c.secret(EncryptedString(), "nodes[0].bmc.password"), EncryptedString)
    assert c.secret(1234, "nodes[1].bmc.password") is None
    assert c.secret("", "nodes[2].bmc.password") is None
    assert c.problems == [
        "nodes[1].bmc.password: must be a non-empty string or a vault-encrypted value (!vault), got an integer",
        "nodes[2].bmc.password: must be a non-empty string or a vault-encrypted value (!vault), got a string",
    ]


@pytest.mark.parametrize(("value", "problem"), [
    ("102", "tenants[1].vlan: must be an integer 1..4094, got a string"),
    (True, "tenants[1].vlan: must be an integer 1..4094, got a boolean"),
    (10.0, "tenants[1].vlan: must be an integer 1..4094, got float"),
    (0, "tenants[1].vlan: 0 is outside 1..4094"),
    (4095, "tenants[1].vlan: 4095 is outside 1..4094"),
])
def test_integer_refuses_wrong_types_and_values_outside_the_bounds(value, problem: str) -> None:
    c = Checker()
    assert c.integer(value, "tenants[1].vlan", (1, 4094)) is None
    assert c.problems == [problem]


def test_integer_keeps_bounds_inclusive_and_allows_the_extra_values() -> None:
    c = Checker()
    assert [c.integer(v, "v", (1, 4094)) for v in (1, 4094)] == [1, 4094]
    assert c.integer(-1, "tenants[0].gpu.limit", (0, 10), extra=(-1,)) == -1
    assert c.integer(-2, "tenants[0].gpu.limit", (0, 10), extra=(-1,)) is None
    assert c.integer("x", "tenants[0].gpu.limit", (0, 10), extra=[-1]) is None
    assert c.problems == [
        "tenants[0].gpu.limit: -2 is outside 0..10 or -1",
        "tenants[0].gpu.limit: must be an integer 0..10 or -1, got a string",
    ]


def test_choice_names_the_allowed_values() -> None:
    c = Checker()
    assert c.choice("leaf", "fabric.switches[0].role", ("leaf", "spine")) == "leaf"
    assert c.choice("border", "fabric.switches[0].role", ["leaf", "spine"]) is None
    assert c.choice(None, "fabric.switches[1].role", ("leaf", "spine")) is None
    assert c.problems == [
        "fabric.switches[0].role: 'border' is not one of leaf, spine",
        "fabric.switches[1].role: None is not one of leaf, spine",
    ]


@pytest.mark.parametrize(("value", "problem"), [
    (3232235777, "nodes[1].ip: must be an IPv4 address string, got an integer"),
    ("192.0.2.300", "nodes[1].ip: '192.0.2.300' is not a valid IPv4 address"),
    ("192.0.2.021", "nodes[1].ip: '192.0.2.021' is not a valid IPv4 address"),
    ("192.0.2.1/24", "nodes[1].ip: '192.0.2.1/24' is not a valid IPv4 address"),
    ("2001:db8::1", "nodes[1].ip: '2001:db8::1' is not a valid IPv4 address"),
])
def test_ip_refuses_what_is_not_a_strict_ipv4_address(value, problem: str) -> None:
    c = Checker()
    assert c.ip(value, "nodes[1].ip") is None
    assert c.problems == [problem]


def test_ip_returns_the_address_as_an_integer() -> None:
    c = Checker()
    assert c.ip("192.0.2.1", "x") == 0xC0000201
    assert c.problems == []


@pytest.mark.parametrize(("value", "problem"), [
    ("10.102.0.0", "tenants[1].subnet: must be an IPv4 subnet in CIDR form (a.b.c.d/len), got '10.102.0.0'"),
    (24, "tenants[1].subnet: must be an IPv4 subnet in CIDR form (a.b.c.d/len), got 24"),
    ("10.102.0.0/33", "tenants[1].subnet: '10.102.0.0/33' is not a valid IPv4 subnet"),
    ("10.102.0.1/24", "tenants[1].subnet: '10.102.0.1/24' has host bits set; did you mean 10.102.0.0/24?"),
    ("10.102.0.0/31", "tenants[1].subnet: '10.102.0.0/31' is too small; the prefix length must be at most /30"),
])
def test_network_refuses_what_is_not_a_usable_cidr_subnet(value, problem: str) -> None:
    c = Checker()
    assert c.network(value, "tenants[1].subnet") is None
    assert c.problems == [problem]


def test_network_reads_cidr_and_netmask_forms_and_honours_max_prefix() -> None:
    c = Checker()
    net = c.network("10.102.0.0/255.255.254.0", "tenants[1].subnet")
    assert net == subnet("10.102.0.0/23") and net.cidr == "10.102.0.0/23"
    assert c.network("10.0.0.0/30", "a") == subnet("10.0.0.0/30")
    assert c.network("10.0.0.0/28", "b", max_prefix=24) is None
    assert c.problems == ["b: '10.0.0.0/28' is too small; the prefix length must be at most /24"]


def test_in_subnet_wants_a_usable_host_address() -> None:
    net = subnet("192.0.2.0/24")
    c = Checker()
    assert c.in_subnet(int(ipaddress.IPv4Address("192.0.2.7")), net, "nodes[0].ip", "the management subnet")
    assert c.in_subnet(int(ipaddress.IPv4Address("198.51.100.7")), None, "nodes[0].ip", "the management subnet")
    assert c.problems == []
    assert not c.in_subnet(int(ipaddress.IPv4Address("198.51.100.7")), net, "nodes[1].ip", "the management subnet")
    assert not c.in_subnet(net.first, net, "nodes[2].ip", "the management subnet")
    assert not c.in_subnet(net.last, net, "nodes[3].ip", "the management subnet")
    assert c.problems == [
        "nodes[1].ip: 198.51.100.7 is outside the management subnet 192.0.2.0/24",
        "nodes[2].ip: 192.0.2.0 is the network or broadcast address of 192.0.2.0/24",
        "nodes[3].ip: 192.0.2.255 is the network or broadcast address of 192.0.2.0/24",
    ]


def test_in_subnet_takes_both_addresses_of_a_point_to_point_subnet() -> None:
    net = subnet("10.0.0.0/31")
    c = Checker()
    assert c.in_subnet(net.first, net, "a", "the link") and c.in_subnet(net.last, net, "b", "the link")
    assert c.problems == []


def test_claimed_subnets_are_remembered_with_their_paths_in_order() -> None:
    c = Checker()
    c.claim_subnet(subnet("10.1.0.0/24"), "tenants[0].subnet")
    c.claim_subnet(subnet("192.0.2.0/24"), "site.management.subnet")
    assert c.subnets == [
        (int(ipaddress.IPv4Address("10.1.0.0")), int(ipaddress.IPv4Address("10.1.0.255")), "tenants[0].subnet"),
        (0xC0000200, 0xC00002FF, "site.management.subnet"),
    ]
    assert c.problems == []


# --- Unique -----------------------------------------------------------------------------------------------------


def test_unique_reports_a_repeated_value_with_the_first_place_that_used_it() -> None:
    c = Checker()
    vlans = Unique(c, "VLAN")
    assert vlans.claim(101, "tenants[0].vlan")
    assert vlans.claim(102, "tenants[1].vlan")
    assert not vlans.claim(101, "tenants[2].vlan")
    assert not vlans.claim(101, "tenants[3].vlan")
    assert c.problems == [
        "tenants[2].vlan: VLAN 101 is already used by tenants[0].vlan",
        "tenants[3].vlan: VLAN 101 is already used by tenants[0].vlan",
    ]


def test_unique_shows_the_given_form_and_never_claims_nothing() -> None:
    c = Checker()
    ips = Unique(c, "IP")
    assert ips.claim(None, "nodes[0].ip") and ips.claim(None, "nodes[1].ip")
    assert ips.claim(0xC0000215, "nodes[0].ip", shown="192.0.2.21")
    assert not ips.claim(0xC0000215, "nodes[1].ip", shown="192.0.2.21")
    assert c.problems == ["nodes[1].ip: IP 192.0.2.21 is already used by nodes[0].ip"]


def test_every_problem_is_kept_in_the_order_found() -> None:
    c = Checker()
    c.add("a", "one")
    c.integer(0, "b", (1, 2))
    c.choice("z", "c", ("x",))
    assert c.problems == ["a: one", "b: 0 is outside 1..2", "c: 'z' is not one of x"]
