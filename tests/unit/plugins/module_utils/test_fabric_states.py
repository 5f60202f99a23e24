# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Resource-module states on the neutral shape, per platform, and the NVUE push flow."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils import _fabric, _render_nvue
from ansible_collections.gpucloud.baremetal.plugins.module_utils import _fabric_platforms as platforms
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric_nvue import NvueClient, NvueError, change
from ansible_collections.gpucloud.baremetal.plugins.modules import switch_tenants
from tests.support.fabric import example_model
from tests.support.nvue_api_sim import NvueSimulation

MODEL = example_model()
UNDERLAY = MODEL["fabric"]["underlay"]
SWITCHES = {s["name"]: s for s in MODEL["fabric"]["switches"]}
LEAVES = {
    "nvue": SWITCHES["leaf-r1a"],
    "sonic": SWITCHES["leaf-r2a"],
    "eos": dict(SWITCHES["leaf-r1a"], platform="eos"),
}
STALE = {"name": "stale", "vlan": 199, "vni": 10199, "vrf": "stale", "l3vni": 50199,
         "gateway": "10.199.0.1/24", "subnet": "10.199.0.0/24", "ports": [{"port": "swp3", "mode": "trunk"}]}


def params(switch, state, running=None, **extra):
    p = {"switch": switch, "underlay": UNDERLAY, "platform": None, "state": state, "running_config": running,
         "tenants": None, "fleet_tenants": None, "route_target_asn": 64512, "l3vni_vlan_offset": 2000}
    p.update(extra)
    return p


def native(switch, tenants):
    """The switch's native config holding ``tenants`` (what gathering it would return)."""
    s = dict(switch, tenants=tenants)
    files = platforms.render_files(s, UNDERLAY)
    return files[{"nvue": "nvue.yaml", "sonic": "sonic.json", "eos": "eos.cfg"}[switch["platform"]]]


@pytest.mark.parametrize("platform", list(LEAVES))
def test_merged_on_the_rendered_config_changes_nothing(platform):
    sw = LEAVES[platform]
    result = switch_tenants.run(params(sw, "merged", native(sw, sw["tenants"])))
    assert result["changed"] is False
    assert result["after"] == _fabric.desired(sw)


@pytest.mark.parametrize("platform", list(LEAVES))
def test_overridden_removes_exactly_the_stale_tenant(platform):
    sw = LEAVES[platform]
    running = native(sw, [*sw["tenants"], STALE])
    result = switch_tenants.run(params(sw, "overridden", running))
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
        assert switch_tenants.run(params(sw, state, running))["changed"] is False


@pytest.mark.parametrize("platform", list(LEAVES))
def test_objects_made_by_hand_are_never_removed(platform):
    sw = LEAVES[platform]
    running = native(sw, [*sw["tenants"], STALE])
    hand = {"nvue": running.replace("gpucloud:stale", "made by hand"),
            "sonic": running.replace("gpucloud:stale", "uplink vlan"),
            "eos": running.replace("gpucloud:stale", "OPS-VLAN")}[platform]
    result = switch_tenants.run(params(sw, "overridden", hand))
    assert result["changed"] is False, result["commands"]


@pytest.mark.parametrize("platform", list(LEAVES))
def test_merged_on_an_empty_switch_adds_everything_and_deleted_one_tenant(platform):
    sw = LEAVES[platform]
    empty = {"nvue": {}, "sonic": "{}", "eos": ""}[platform]
    result = switch_tenants.run(params(sw, "merged", empty))
    assert result["changes"]["added"] == [t["name"] for t in sw["tenants"]]
    assert result["diff"]["before"] != result["diff"]["after"]
    first = sw["tenants"][0]["name"]
    deleted = switch_tenants.run(params(sw, "deleted", native(sw, sw["tenants"]), tenants=[first]))
    assert deleted["changes"] == {"added": [], "removed": [first], "modified": []}


def test_replaced_fixes_a_drifted_port_and_merged_only_adds():
    sw = LEAVES["eos"]
    drifted = copy.deepcopy(sw["tenants"])
    drifted[0]["ports"].append({"port": "Ethernet99", "node": "x", "mode": "access"})
    running = native(sw, drifted)
    replaced = switch_tenants.run(params(sw, "replaced", running))
    assert replaced["commands"]["commands"] == ["interface Ethernet99", "   no switchport access vlan"]
    assert switch_tenants.run(params(sw, "merged", running))["changed"] is False


def test_parsed_and_gathered_need_no_switch():
    sw = LEAVES["sonic"]
    result = switch_tenants.run(params(None, "parsed", native(sw, sw["tenants"]), platform="sonic"))
    assert result["parsed"] == _fabric.desired(sw)
    assert switch_tenants.run(params(None, "gathered", native(sw, sw["tenants"]), platform="sonic"))["gathered"]


@pytest.mark.parametrize(("mutate", "expected"), [
    (lambda s: s["tenants"][0].update(l3vni=s["tenants"][1]["vni"]),
     "leaf-r2a.tenants[0] (beta).l3vni: 10103 equals the L2 VNI of leaf-r2a.tenants[1] (cobalt); an L3 VNI may not equal any L2 VNI"),
    (lambda s: s["tenants"][0].update(vrf="averyverylongv"),
     "leaf-r2a.tenants[0] (beta).vrf: SONiC names VRFs 'Vrf-<name>' with at most 15 characters; 'averyverylongv' is too long (at most 11)"),
    (lambda s: s["tenants"][1].update(vlan=2102),
     "leaf-r2a.tenants[0] (beta): the L3 VNI VLAN 2102 (vlan + l3vni_vlan_offset 2000) is the VLAN of leaf-r2a.tenants[1] (cobalt); choose another offset"),
    (lambda s: s["tenants"][1]["ports"].append({"port": "Ethernet4", "mode": "access"}),
     "leaf-r2a: port Ethernet4 is both access and trunk"),
    (lambda s: s["tenants"][1].update(gateway="10.103.0.0/24"),
     "leaf-r2a.tenants[1] (cobalt).gateway: 10.103.0.0/24 is not a usable host address of its subnet"),
    (lambda s: s.update(role="spine"), "leaf-r2a: a spine carries no tenant networks, but 2 are assigned"),
])
def test_bad_input_is_reported_before_rendering(mutate, expected):
    sw = copy.deepcopy(LEAVES["sonic"])
    mutate(sw)
    with pytest.raises(_fabric.FabricError) as err:
        switch_tenants.run(params(sw, "rendered"))
    assert expected in err.value.problems


def test_every_problem_at_once():
    sw = copy.deepcopy(LEAVES["nvue"])
    sw["tenants"][0]["vlan"] = 5000
    sw["tenants"][1]["vrf"] = "1bad"
    problems = _fabric.check_switch(sw, UNDERLAY)
    assert len(problems) == 2, problems


def test_running_config_required_for_push_states():
    with pytest.raises(_fabric.FabricError, match="gather the switch's config first"):
        switch_tenants.run(params(LEAVES["eos"], "overridden"))


# --- NVUE REST revision flow, against the NVUE API simulation ----------------------------


def _client(sim):
    return NvueClient("http://127.0.0.1:%d/nvue_v1" % sim.port, "cumulus", "sim", validate_certs=False)


def _push(sim, state, check_mode=False):
    sw = LEAVES["nvue"]
    client = _client(sim)
    plan = switch_tenants.run(params(sw, state, client.applied()))
    cmds = plan["commands"]
    return plan, change(client, cmds.get("set") or {}, cmds.get("unset") or [], check_mode, wait=5)


def test_nvue_push_apply_idempotent_and_check_mode():
    sw = LEAVES["nvue"]
    with NvueSimulation(applied={"system": {"hostname": "leaf-r1a"}}, apply_polls=2) as sim:
        plan, result = _push(sim, "merged", check_mode=True)
        assert plan["changed"] and result["changed"] and result["revision"] is None
        assert sim.applied == {"system": {"hostname": "leaf-r1a"}}, "check mode applied something"
        assert sim.revisions == {}, "check mode left a revision behind"

        plan, result = _push(sim, "merged")
        assert result["changed"] and result["revision"]
        assert _render_nvue.parse(sim.applied) == _fabric.desired(sw)
        assert sim.applied["system"] == {"hostname": "leaf-r1a"}, "a setting we do not own was lost"

        plan, result = _push(sim, "merged")
        assert plan["changed"] is False and result["changed"] is False
        assert ("PATCH", "/nvue_v1/revision/%s" % sim.next_rev) not in sim.log


def test_nvue_push_overridden_removes_only_the_stale_tenant():
    sw = LEAVES["nvue"]
    start = _render_nvue.load(native(sw, _fabric.normalise([*sw["tenants"], STALE])))
    start["interface"]["vlan300"] = {"type": "svi", "vlan": 300, "description": "ops vlan"}
    with NvueSimulation(applied=copy.deepcopy(start)) as sim:
        plan, result = _push(sim, "overridden")
        assert plan["changes"]["removed"] == ["stale"] and result["changed"]
        assert _render_nvue.parse(sim.applied) == _fabric.desired(sw)
        assert "vlan300" in sim.applied["interface"] and "stale" not in sim.applied["vrf"]
        assert "199" not in sim.applied["interface"]["swp3"]["bridge"]["domain"]["br_default"]["vlan"]


def test_nvue_errors_are_one_line():
    with NvueSimulation() as sim:
        bad = NvueClient("http://127.0.0.1:%d/nvue_v1" % sim.port, "cumulus", "wrong", validate_certs=False)
        with pytest.raises(NvueError, match="authentication failed"):
            bad.applied()
    with pytest.raises(NvueError, match="unreachable"):
        NvueClient("http://127.0.0.1:9/nvue_v1", "u", "p", timeout=2).applied()


# --- NVUE as a real switch takes it (../shared/FACTS.md, NVIDIA's NVUE API page and reference) ---


def test_rendered_nvue_uses_only_paths_of_the_nvue_reference():
    from tests.support.nvue_api_sim import check_tree

    for name, sw in SWITCHES.items():
        if sw["platform"] == "nvue" and sw["role"] == "leaf":
            tree = _render_nvue.load(native(sw, sw["tenants"]))
            assert check_tree(tree) == [], name
            vrf = tree["vrf"][sw["tenants"][0]["vrf"]]["router"]["bgp"]
            assert vrf["route-export"]["to-evpn"]["route-target"], "L3 VNI route-target not on the VRF's BGP"
            svi = tree["interface"]["vlan%d" % sw["tenants"][0]["vlan"]]["ip"]["vrr"]
            assert svi["state"] == {"up": {}}, "VRR stays down without state up"


def test_the_simulation_refuses_a_path_no_switch_has():
    bad = {"vrf": {"acme": {"router": {"bgp": {"address-family": {"ipv4-unicast": {"route-export": {
        "to-evpn": {"route-target": {"64512:50101": {}}}}}}}}}}}
    with NvueSimulation() as sim:
        client = _client(sim)
        rev = client.create_revision()
        with pytest.raises(NvueError, match=r"answered 400.*route-target: no such path"):
            client.patch(rev, bad)
        with pytest.raises(NvueError, match="answered 400"):
            client.unset(rev, "vrf/acme/router/bgp/address-family/ipv4-unicast/route-export/to-evpn/route-target")


@pytest.mark.parametrize("version,state,save_calls", [("5.8", "applied", 1), ("5.12", "applied_and_saved", 0)])
def test_nvue_apply_is_saved_on_every_release(version, state, save_calls):
    with NvueSimulation(version=version) as sim:
        _plan, result = _push(sim, "merged")
        assert result["changed"] and result["saved"] is True
        assert sim.saved == sim.applied, "the applied config would be lost at reboot"
        assert sim.log.count(("PATCH", "/nvue_v1/revision/applied")) == save_calls
        assert sim.revisions[result["revision"]]["state"] == state


@pytest.mark.parametrize("failure", ["verify_error", "apply_fail", "frobnicate_error"])
def test_nvue_failure_state_is_named_at_once(failure):
    import time

    with NvueSimulation(fail_state=failure) as sim:
        start = time.monotonic()
        with pytest.raises(NvueError, match="apply ended in state %s" % failure):
            _push(sim, "merged")
        assert time.monotonic() - start < 4, "waited for the timeout instead of reading the failure"
        assert sim.applied == {}, "a failed revision changed the switch"


def test_nvue_default_password_gets_a_clear_error():
    with NvueSimulation(password_changed=False) as sim, pytest.raises(NvueError, match=r"403.*default password"):
        _client(sim).applied()


def test_nvue_removing_the_last_vlan_of_a_port_takes_it_out_of_the_bridge():
    """A bridge port with no VLAN of its own carries every VLAN of the bridge: a tenant leak."""
    sw = LEAVES["nvue"]
    private = next(t for t in sw["tenants"] if not t.get("trunk"))
    port = private["ports"][0]["port"]
    with NvueSimulation(version="5.12") as sim:
        _push(sim, "merged")
        assert "access" in sim.applied["interface"][port]["bridge"]["domain"]["br_default"]
        client = _client(sim)
        plan = switch_tenants.run(params(sw, "deleted", client.applied(), tenants=[private["name"]]))
        cmds = plan["commands"]
        change(client, cmds.get("set") or {}, cmds.get("unset") or [], False, wait=5)
        assert "bridge" not in sim.applied["interface"].get(port, {}), sim.applied["interface"].get(port)
        shared = next(t for t in sw["tenants"] if t.get("trunk"))
        trunk = shared["ports"][0]["port"]
        assert sim.applied["interface"][trunk]["bridge"]["domain"]["br_default"]["vlan"], "other tenants lost"
