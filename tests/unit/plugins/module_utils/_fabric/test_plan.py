# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Resource-module states on the neutral shape, per platform, end to end (``plan.run``: what
``switch_tenants`` does with its options)."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import plan, registry
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.errors import FabricError, NativeConfigError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.model import desired
from tests.support.fabric import STALE, leaves, native, params

LEAVES = leaves()


@pytest.mark.parametrize("platform", list(LEAVES))
def test_merged_on_the_rendered_config_changes_nothing(platform):
    sw = LEAVES[platform]
    result = plan.run(params(sw, "merged", native(sw, sw["tenants"])))
    assert result["changed"] is False
    assert result["after"] == desired(sw)


@pytest.mark.parametrize("platform", list(LEAVES))
def test_overridden_removes_exactly_the_stale_tenant(platform):
    sw = LEAVES[platform]
    running = native(sw, [*sw["tenants"], STALE])
    result = plan.run(params(sw, "overridden", running))
    assert result["changes"] == {"added": [], "removed": ["stale"], "modified": []}
    commands = result["commands"]
    if platform == "nvue":
        assert commands["set"] == {}
        assert commands["unset"] == ["interface/vlan199", "vrf/stale", "evpn/vni/10199",
                                     "bridge/domain/br_default/vlan/199",
                                     "interface/swp3/bridge/domain/br_default/vlan/199"]
    elif platform == "sonic":
        assert commands["set"] == {}
        assert commands["delete"] == [
            "VLAN_INTERFACE|Vlan199|10.199.0.1/24", "VLAN_INTERFACE|Vlan199", "VLAN_INTERFACE|Vlan2199",
            "VRF|Vrf-stale", "VXLAN_TUNNEL_MAP|vtep|map_10199_Vlan199", "VXLAN_TUNNEL_MAP|vtep|map_50199_Vlan2199",
            "VLAN_MEMBER|Vlan199|swp3", "VLAN|Vlan199", "VLAN|Vlan2199"]
    else:
        assert commands["commands"][:10] == [
            "router bgp 65101", "   no vlan 199", "   no vrf stale", "interface Vxlan1",
            "   no vxlan vlan 199 vni 10199", "   no vxlan vrf stale vni 50199", "no interface Vlan199",
            "no ip routing vrf stale", "no vrf instance stale", "no vlan 199"]
        # the trunk gets its whole remaining list: never `remove`/`add` (a bare trunk allows every VLAN)
        assert commands["commands"][11:14] == [
            "interface swp3", "   switchport mode trunk", "   switchport trunk allowed vlan 102"]
    if platform in ("nvue", "sonic"):
        vrf = "Vrf-stale" if platform == "sonic" else "stale"
        assert commands["frr"] == ["router bgp %d" % sw["asn"], " address-family l2vpn evpn", "  no vni 10199",
                                   " exit-address-family", "exit", "no router bgp %d vrf %s" % (sw["asn"], vrf),
                                   "vrf %s" % vrf, " no vni 50199", "exit-vrf"]
    # merged and replaced leave it alone: it might be in use
    for state in ("merged", "replaced"):
        assert plan.run(params(sw, state, running))["changed"] is False


@pytest.mark.parametrize("platform", list(LEAVES))
def test_objects_made_by_hand_are_never_removed(platform):
    sw = LEAVES[platform]
    running = native(sw, [*sw["tenants"], STALE])
    hand = {"nvue": running.replace("gpucloud:stale", "made by hand"),
            "sonic": running.replace("gpucloud:stale", "uplink vlan"),
            "eos": running.replace("gpucloud:stale", "OPS-VLAN")}[platform]
    result = plan.run(params(sw, "overridden", hand))
    assert result["changed"] is False, result["commands"]


@pytest.mark.parametrize("platform", list(LEAVES))
def test_merged_on_an_empty_switch_adds_everything_and_deleted_one_tenant(platform):
    sw = LEAVES[platform]
    empty = {"nvue": {}, "sonic": "{}", "eos": ""}[platform]
    result = plan.run(params(sw, "merged", empty))
    assert result["changes"]["added"] == [t["name"] for t in sw["tenants"]]
    assert result["diff"]["before"] != result["diff"]["after"]
    first = sw["tenants"][0]["name"]
    deleted = plan.run(params(sw, "deleted", native(sw, sw["tenants"]), tenants=[first]))
    assert deleted["changes"] == {"added": [], "removed": [first], "modified": []}


def test_replaced_fixes_a_drifted_port_and_merged_only_adds():
    sw = LEAVES["eos"]
    drifted = copy.deepcopy(sw["tenants"])
    drifted[0]["ports"].append({"port": "Ethernet99", "node": "x", "mode": "access"})
    running = native(sw, drifted)
    replaced = plan.run(params(sw, "replaced", running))
    assert replaced["commands"]["commands"] == ["interface Ethernet99", "   no switchport access vlan"]
    assert plan.run(params(sw, "merged", running))["changed"] is False


def test_merged_unions_ports_and_overridden_with_names_touches_only_those():
    want = desired(LEAVES["nvue"])
    have = copy.deepcopy(want)
    have[0]["ports"] = [*have[0]["ports"], {"port": "swp40", "mode": "access"}]
    merged = plan.plan("merged", want, have)
    assert {"port": "swp40", "mode": "access"} in merged[0]["ports"]
    stale = {**STALE, "address": ""}
    after = plan.plan("overridden", want, [*want, stale], names=[want[0]["name"]])
    assert [t["name"] for t in after] == [t["name"] for t in want] + ["stale"]
    assert plan.changes(want, after) == {"added": ["stale"], "removed": [], "modified": []}


def test_parsed_and_gathered_need_no_switch():
    sw = LEAVES["sonic"]
    result = plan.run(params(None, "parsed", native(sw, sw["tenants"]), platform="sonic"))
    assert result["parsed"] == desired(sw)
    assert plan.run(params(None, "gathered", native(sw, sw["tenants"]), platform="sonic"))["gathered"]
    with pytest.raises(FabricError, match="platform: needed to parse a config"):
        plan.run(params(None, "parsed", "{}"))


def test_running_config_required_for_push_states():
    with pytest.raises(FabricError, match="gather the switch's config first"):
        plan.run(params(LEAVES["eos"], "overridden"))


def test_frr_is_only_parsed():
    with pytest.raises(FabricError) as err:
        plan.run(params(LEAVES["nvue"], "rendered", platform="frr"))
    assert err.value.problems == ["platform: frr is only for parsed/gathered; FRR is rendered with nvue and sonic"]


@pytest.mark.parametrize("platform", list(LEAVES))
def test_a_render_only_switch_plans_on_its_kept_files(platform, tmp_path):
    """``kept_dir``: the switch's native file there is its running config (none: an empty
    switch), and ``files`` are what to write back, named as kept."""
    sw = LEAVES[platform]
    first = plan.run(params(sw, "merged", kept_dir=str(tmp_path), render_after=True))
    assert first["changes"]["added"] == [t["name"] for t in sw["tenants"]]
    rendered = plan.run(params(sw, "rendered"))
    assert first["files"] == rendered["files"]
    native_name = "%s.%s" % (sw["name"], {"nvue": "nvue.yaml", "sonic": "sonic.json", "eos": "eos.cfg"}[platform])
    assert set(first["files"]) == {native_name} | ({"%s-frr.conf" % sw["name"]} if platform != "eos" else set())
    for name, text in first["files"].items():
        (tmp_path / name).write_text(text)
    again = plan.run(params(sw, "overridden", kept_dir=str(tmp_path), render_after=True))
    assert again["changed"] is False and again["files"] == first["files"]
    gone = plan.run(params(sw, "deleted", kept_dir=str(tmp_path), render_after=True, tenants=[sw["tenants"][0]["name"]]))
    assert gone["changes"]["removed"] == [sw["tenants"][0]["name"]]
    assert sw["tenants"][0]["name"] not in str(gone["files"])


def test_a_kept_file_that_cannot_be_read_is_named(tmp_path):
    sw = LEAVES["sonic"]
    (tmp_path / ("%s.sonic.json" % sw["name"])).write_text("[1, 2]")
    with pytest.raises(NativeConfigError, match=r"running_config: is \[1, 2\], not a mapping"):
        plan.run(params(sw, "merged", kept_dir=str(tmp_path)))


@pytest.mark.parametrize("platform", list(LEAVES))
def test_a_fleet_with_the_same_names_and_other_networks_counts_against_max_removals(platform):
    """A fleet file of another site with the same tenant names is no removal by name, but its other VLANs, VNIs
    and VRFs take every tenant's network down and make it again: max_removals counts those tenants too."""
    sw = LEAVES[platform]
    running = native(sw, sw["tenants"])
    moved = copy.deepcopy(sw)
    for i, tenant in enumerate(moved["tenants"]):
        tenant.update(vlan=tenant["vlan"] + 1000, vni=tenant["vni"] + 1000, l3vni=tenant["l3vni"] + 1000 + i)
    names = sorted(t["name"] for t in sw["tenants"])
    with pytest.raises(FabricError) as err:
        plan.run(params(moved, "replaced", running, max_removals=0))
    assert err.value.problems == [
        "%s: this run would remove %d tenants (%s) (taken down and made again with another VLAN, VNI or VRF: %s), "
        "more than max_removals 0; nothing was changed (check the fleet and the tenant list, or raise the limit for "
        "this run)" % (sw["name"], len(names), ", ".join(names), ", ".join(names))]
    assert plan.run(params(moved, "replaced", running, max_removals=len(names)))["changed"] is True
    # a change made in place (a port) is no removal
    ported = copy.deepcopy(sw)
    ported["tenants"][0]["ports"] = ported["tenants"][0]["ports"][:1]
    assert plan.run(params(ported, "replaced", running, max_removals=0))["changes"]["removed"] == []


def test_a_push_state_keeps_the_operators_own_vlan_on_a_tenants_trunk():
    """switch_tenants' push states give the gathered config to the change: removing the one tenant of an EOS trunk
    that also carries the operator's VLAN 10 leaves VLAN 10 allowed (not ``none``)."""
    sw = copy.deepcopy(LEAVES["eos"])
    tenant = sw["tenants"][0]
    tenant["ports"] = [{"port": "Ethernet47", "mode": "trunk"}]
    running = native(sw, [tenant]).replace("switchport trunk allowed vlan %d" % tenant["vlan"],
                                           "switchport trunk allowed vlan 10,%d" % tenant["vlan"])
    assert "allowed vlan 10," in running
    gone = plan.run(params(sw, "deleted", running, tenants=[tenant["name"]]))
    assert gone["changes"]["removed"] == [tenant["name"]]
    assert "   switchport trunk allowed vlan 10" in gone["commands"]["commands"], gone["commands"]


@pytest.mark.parametrize("platform", ["eos", "sonic", "nvue"])
def test_a_tenant_on_a_vlan_of_the_operators_is_refused_before_anything_is_pushed(platform):
    """A fleet tenant on VLAN 10, which the switch has and is not ours: the push would rename it, carry the tenant on
    it and remove it when the tenant goes. The plan fails naming it; a VLAN of ours is never in the list."""
    sw = copy.deepcopy(LEAVES[platform])
    tenant = sw["tenants"][0]
    with pytest.raises(FabricError) as err:
        plan.run(params(sw, "merged", "", foreign_vlans=[tenant["vlan"], 4000]))
    assert err.value.problems == [
        "%s: tenant %s: its VLAN %d is on the switch already and is not ours (no gpucloud: marker); the tenant would"
        " take it over and remove it when it goes. Give the tenant another VLAN in the fleet, or remove VLAN %d from"
        " the switch by hand; nothing was changed" % (sw["name"], tenant["name"], tenant["vlan"], tenant["vlan"])]
    # The switch's own VLANs elsewhere, and none given (a render-only switch): planned as before.
    assert plan.run(params(sw, "merged", "", foreign_vlans=[4000]))["changes"]["added"]
    assert plan.run(params(sw, "merged", ""))["changes"]["added"]
    # Read from a config that holds our tenants: ours are not foreign, so a second run plans nothing.
    whole = native(sw, sw["tenants"])
    assert registry.foreign_vlans(platform, whole) == []
    assert plan.run(params(sw, "merged", whole, foreign_vlans=[4000]))["changed"] is False


def test_a_sonic_tenants_l3_vni_vlan_on_a_vlan_of_the_operators_is_refused():
    sw = copy.deepcopy(LEAVES["sonic"])
    tenant = sw["tenants"][0]
    l3 = tenant["vlan"] + 2000
    with pytest.raises(FabricError) as err:
        plan.run(params(sw, "merged", "", foreign_vlans=[l3]))
    assert "tenant %s: its L3 VNI VLAN %d (vlan %d + l3vni_vlan_offset 2000) is on the switch already" % (
        tenant["name"], l3, tenant["vlan"]) in err.value.problems[0]


@pytest.mark.parametrize("platform", ["eos", "sonic", "nvue"])
def test_a_tenant_in_a_vrf_of_the_operators_is_refused_before_anything_is_pushed(platform):
    sw = copy.deepcopy(LEAVES[platform])
    tenant = sw["tenants"][0]
    vrf = registry.tenant_vrf(platform, tenant)
    assert vrf == ("Vrf-" if platform == "sonic" else "") + tenant["vrf"]
    with pytest.raises(FabricError) as err:
        plan.run(params(sw, "merged", "", foreign_vrfs=[vrf, "mgmt"]))
    assert err.value.problems == [
        "%s: tenant %s: its VRF %s is on the switch already and no tenant of ours is in it; the tenant would share it"
        " and remove it when it goes. Give the tenant another VRF name in the fleet, or remove VRF %s from the switch"
        " by hand; nothing was changed" % (sw["name"], tenant["name"], vrf, vrf)]
    whole = native(sw, sw["tenants"])
    assert registry.foreign_vrfs(platform, whole) == []
    assert plan.run(params(sw, "merged", whole, foreign_vrfs=["mgmt"]))["changed"] is False


HAND_SVI = {"eos": "Vlan999", "sonic": "Vlan999", "nvue": "vlan999"}


def with_hand_svi(platform: str, running: str, vrf: str) -> object:
    """``running`` (a native config as rendered) with the operator's SVI on VLAN 999 (a VLAN of theirs, no marker) in
    ``vrf`` (as the switch names it), made by hand: the VRF too where no tenant of ours has it."""
    if platform == "eos":
        instance = "" if "vrf instance %s\n" % vrf in running else "vrf instance %s\n!\n" % vrf
        svi = "vlan 999\n   name OPS\n!\ninterface Vlan999\n   vrf %s\n   ip address 10.99.0.1/24\n!\n" % vrf
        return running + instance + svi
    if platform == "sonic":
        db = json.loads(running)
        db["VLAN"]["Vlan999"] = {"vlanid": "999", "description": "ops"}
        db["VLAN_INTERFACE"].update({"Vlan999": {"vrf_name": vrf}, "Vlan999|10.99.0.1/24": {}})
        db["VRF"].setdefault(vrf, {})
        return json.dumps(db)
    tree = yaml.safe_load(running)[0]["set"]
    tree["interface"]["vlan999"] = {"type": "svi", "vlan": 999, "ip": {"vrf": vrf, "address": {"10.99.0.1/24": {}}}}
    tree["bridge"]["domain"]["br_default"]["vlan"]["999"] = {}
    tree["vrf"].setdefault(vrf, {})
    return [{"set": tree}]


def in_use(sw: dict, tenant: dict, vrf: str, svi: str, how: str) -> str:
    return ("%s: tenant %s: its VRF %s is in use by interface %s, not ours (no gpucloud: marker); %s, moving that"
            " interface out of it or breaking it. Move or remove interface %s from VRF %s by hand, then run again;"
            " nothing was changed" % (sw["name"], tenant["name"], vrf, svi, how, svi, vrf))


@pytest.mark.parametrize("platform", ["eos", "sonic", "nvue"])
def test_a_vrf_of_ours_that_an_interface_not_ours_is_in_is_never_removed(platform):
    """The operator's SVI (EOS ``interface Vlan999`` / ``vrf acme``, NVUE ``interface vlan999 ip vrf``, SONiC
    ``VLAN_INTERFACE|Vlan999 vrf_name``) in a tenant's VRF: removing the tenant removed the VRF (``no vrf instance``,
    ``unset vrf``, ``VRF|Vrf-...`` deleted) under it. The plan fails naming the VRF, the tenant and the interface, and
    nothing is changed: not the other tenants' removals of the run either."""
    sw = copy.deepcopy(LEAVES[platform])
    tenant = sw["tenants"][0]
    vrf, svi = registry.tenant_vrf(platform, tenant), HAND_SVI[platform]
    running = with_hand_svi(platform, native(sw, [*sw["tenants"], STALE]), vrf)
    users = registry.vrf_users(platform, running)
    assert users == {vrf: [svi]}
    problem = in_use(sw, tenant, vrf, svi, "removing the tenant would remove the VRF")
    with pytest.raises(FabricError) as err:
        plan.run(params(sw, "deleted", running, tenants=[tenant["name"]], vrf_users=users))
    assert err.value.problems == [problem]
    # Gone from the fleet with STALE (no conflict), state overridden: the whole plan fails, STALE stays too.
    with pytest.raises(FabricError) as err:
        plan.run(params(dict(sw, tenants=sw["tenants"][1:]), "overridden", running, vrf_users=users))
    assert err.value.problems == [problem]
    # Alone, STALE goes; the tenant's own changes in place go on; unchecked without the map (a render-only switch).
    assert plan.run(params(sw, "deleted", running, tenants=["stale"], vrf_users=users))["changes"]["removed"] == [
        "stale"]
    assert plan.run(params(sw, "merged", running, vrf_users=users))["changed"] is False
    assert plan.run(params(sw, "deleted", running, tenants=[tenant["name"]]))["changes"]["removed"] == [tenant["name"]]


@pytest.mark.parametrize("platform", ["eos", "sonic", "nvue"])
def test_a_vrf_of_ours_that_an_interface_not_ours_is_in_is_not_renamed(platform):
    sw = copy.deepcopy(LEAVES[platform])
    tenant = sw["tenants"][0]
    vrf, svi = registry.tenant_vrf(platform, tenant), HAND_SVI[platform]
    running = with_hand_svi(platform, native(sw, sw["tenants"]), vrf)
    renamed = copy.deepcopy(sw)
    renamed["tenants"][0]["vrf"] = "renamed"
    new = registry.tenant_vrf(platform, renamed["tenants"][0])
    with pytest.raises(FabricError) as err:
        plan.run(params(renamed, "replaced", running, vrf_users=registry.vrf_users(platform, running)))
    assert err.value.problems == [
        in_use(sw, tenant, vrf, svi, "renaming its VRF to %s in the fleet would remove VRF %s" % (new, vrf))]


@pytest.mark.parametrize("platform", ["eos", "sonic", "nvue"])
def test_a_tenant_made_again_with_another_vlan_is_refused_where_its_vrf_goes_with_it(platform):
    """EOS takes a tenant whose VLAN changes down (``no vrf instance`` among its lines) and makes it again; NVUE unsets
    and sets it in one revision and SONiC deletes a VRF entry only by its name: the VRF stays there."""
    sw = copy.deepcopy(LEAVES[platform])
    tenant = sw["tenants"][0]
    vrf, svi = registry.tenant_vrf(platform, tenant), HAND_SVI[platform]
    running = with_hand_svi(platform, native(sw, sw["tenants"]), vrf)
    moved = copy.deepcopy(sw)
    moved["tenants"][0]["vlan"] += 1000
    args = params(moved, "replaced", running, vrf_users=registry.vrf_users(platform, running))
    if platform != "eos":
        assert plan.run(args)["changes"]["modified"] == [tenant["name"]]
        return
    with pytest.raises(FabricError) as err:
        plan.run(args)
    assert err.value.problems == [in_use(sw, tenant, vrf, svi, "taking the tenant down and making it again (its VLAN"
                                         " changes) would remove the VRF before making it again")]


@pytest.mark.parametrize("platform", ["eos", "sonic", "nvue"])
def test_a_tenants_removal_goes_on_when_no_interface_not_ours_is_in_its_vrf(platform):
    """The operator's SVI in a VRF of theirs, or only our SVIs: the tenant and its VRF are removed as before, and the
    operator's VRF is not touched."""
    sw = copy.deepcopy(LEAVES[platform])
    tenant = sw["tenants"][0]
    ops = ("Vrf-" if platform == "sonic" else "") + "OPS"
    for running, users in ((with_hand_svi(platform, native(sw, sw["tenants"]), ops), {ops: [HAND_SVI[platform]]}),
                           (native(sw, sw["tenants"]), {})):
        assert registry.vrf_users(platform, running) == users
        result = plan.run(params(sw, "deleted", running, tenants=[tenant["name"]], vrf_users=users))
        assert result["changes"]["removed"] == [tenant["name"]]
        assert registry.tenant_vrf(platform, tenant) in json.dumps(result["commands"])
        assert "OPS" not in json.dumps(result["commands"]) and "999" not in json.dumps(result["commands"])
