# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NVUE simulation's path table is NVIDIA's NVUE model of the simulated release (PyPI nvueschema)."""

from __future__ import annotations

import pytest
from gpucloud_lab.sim import nvue_schema

L3_RT = {"vrf": {"acme": {"router": {"bgp": {"route-export": {"to-evpn": {"route-target": {"64512:50101": {}}}}}}}}}
L2_RT = {"evpn": {"vni": {"10101": {"route-target": {"both": {"64512:10101": {}}}}}}}


def test_a_path_of_the_release_is_accepted():
    assert nvue_schema.check_tree(L3_RT, release="5.12") == []
    assert nvue_schema.check_tree({"1:1": {}}, ("vrf", "x", "router", "bgp", "route-export", "to-evpn",
                                                "route-target"), release="5.12") == []
    assert nvue_schema.check_path(["vrf", "acme", "router", "bgp", "route-import", "from-evpn"], "5.12") is None


def test_the_model_alone_would_let_an_unknown_path_through():
    """Why the table is read from the model's fields: validating drops unknown keys without a word."""
    bogus = {"vrf": {"acme": {"router": {"bgp": {"route-targets": {"1:1": {}}}}}}}
    dumped = nvue_schema.model("5.12").model_validate(bogus).model_dump(by_alias=True, exclude_unset=True)
    assert dumped == {"vrf": {"acme": {"router": {"bgp": {}}}}}
    [problem] = nvue_schema.check_tree(bogus)
    assert problem.startswith("vrf acme router bgp route-targets: no such path in NVUE; valid here: address-family, ")
    assert ", route-export, route-import, " in problem


def test_a_made_up_path_is_refused_on_patch_and_delete():
    assert nvue_schema.check_tree({"interface": {"swp1": {"frobnicate": "on"}}})[0].startswith(
        "interface swp1 frobnicate: no such path in NVUE; valid here: ")
    assert nvue_schema.check_tree({"nonsense": None}) == [
        "(root) nonsense: no such path in NVUE; valid here: acl, bridge, evpn, header, interface, mlag, nve, "
        "platform, qos, router, service, system, vrf"]
    assert nvue_schema.check_path(["interface", "swp1", "link", "mtu", "deeper"]) == (
        "interface swp1 link mtu deeper: no such path in NVUE")


def test_l3_route_targets_are_not_under_the_address_family():
    """FACTS.md: under address-family ipv4-unicast, route-export to-evpn has no route-target."""
    wrong = {"vrf": {"acme": {"router": {"bgp": {"address-family": {"ipv4-unicast": {"route-export": {
        "to-evpn": {"route-target": {"64512:50101": {}}}}}}}}}}}
    assert nvue_schema.check_tree(wrong) == [
        "vrf acme router bgp address-family ipv4-unicast route-export to-evpn route-target: no such path in NVUE; "
        "valid here: default-route-origination, enable, route-map"]


@pytest.mark.parametrize("release, accepted", [("5.3", False), ("5.4", True), ("5.12", True)])
def test_l2_vni_route_targets_exist_from_5_4(release, accepted):
    """FACTS.md: `evpn vni <vni> route-target` from 5.4; 5.3 and earlier call it `evpn evi`."""
    problems = nvue_schema.check_tree(L2_RT, release=release)
    assert problems == ([] if accepted else [
        "evpn vni: no such path in NVUE; valid here: dad, enable, evi, multihoming, route-advertise"])
    assert (nvue_schema.check_path(["evpn", "vni", "10101"], release) is None) is accepted


def test_values_are_the_models_to_check():
    problems = nvue_schema.check_tree({"interface": {"swp1": {"link": {"mtu": 99999}},
                                                     "vlan101": {"ip": {"vrr": {"mac-address": "zz"}}}}})
    assert problems[0] == "interface swp1 link mtu 99999: Input should be less than or equal to 9216"
    assert problems[1].startswith("interface vlan101 ip vrr mac-address zz: String should match pattern")
    assert nvue_schema.check_tree({"mtu": 9216}, ("interface", "swp1", "link")) == []


def test_null_unsets_any_path_the_release_has():
    assert nvue_schema.check_tree({"vrf": {"acme": None}, "interface": {"swp1": {"link": {"mtu": None}}}}) == []


def test_only_releases_with_a_model_can_be_simulated():
    assert {"5.0", "5.12", "5.18"} <= set(nvue_schema.releases())
    assert nvue_schema.check_tree(L2_RT, release="5.12.1") == [] != nvue_schema.check_tree(L2_RT, release="5.3.2")
    with pytest.raises(ValueError, match=r"no NVUE model of Cumulus Linux 4\.4"):
        nvue_schema.model("4.4")
