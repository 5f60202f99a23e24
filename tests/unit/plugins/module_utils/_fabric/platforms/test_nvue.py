# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVUE: the one writer held against NVIDIA's own definitions, and the parser on NVIDIA's text.

- Every render (the example fleet's and a generated fleet's switches as NVUE) is one tree in
  both files, uses only paths of the NVUE command reference (the simulation's path table), and
  is held against NVIDIA's NVUE model of the switch's declared release (PyPI ``nvueschema``:
  Pydantic models generated from NVIDIA's NVUE OpenAPI specification): a key that release's
  model lacks is dropped by validation, so input and dump must be equal.
- The parser reads NVIDIA's Cumulus Linux 5.12 EVPN symmetric routing example (``data/vendor``,
  sources in its README): ``startup.yaml``, ``nv config show -o json`` and ``nv set`` commands
  with NVUE's range and list forms; objects without our marker are never ours.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import json
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import plan, registry
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.errors import (
    FabricError,
    IncompleteTenantError,
    NativeConfigError,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.model import (
    desired,
    normalise,
    options_with_defaults,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.platforms import nvue
from tests.support.fabric import GOLDEN, every_switch, leaves, native, overlapping, params, switches, underlay
from tests.support.nvue_api_sim import check_tree

VENDOR = Path(__file__).parents[2] / "data" / "vendor"
NVUE_YAML = (VENDOR / "nvue-evpn-symmetric-leaf03.yaml").read_text()
NVUE_NV = (VENDOR / "nvue-evpn-symmetric-leaf01.nv").read_text()
OPTS = options_with_defaults(None)
SWITCHES = every_switch("nvue")


def check_nvue(files: dict) -> dict:
    """Both files hold one tree, and the NVUE path table accepts every path and value of it."""
    tree = nvue.load(files["nvue.yaml"])
    assert nvue.from_nv(files["nvue.nv"]) == tree, "nvue.yaml and nvue.nv say different things"
    assert check_tree(tree) == []
    return tree


@pytest.mark.parametrize(("name", "switch", "underlay"), SWITCHES, ids=[s[0] for s in SWITCHES])
def test_render_against_the_vendor_definition(name, switch, underlay):
    tenants = desired(switch)
    files = registry.render_files(switch, underlay)
    check_nvue(files)
    assert registry.parse_native("nvue", files["nvue.yaml"]) == tenants
    frr = registry.renderer("frr")
    assert frr.parse(files["frr.conf"]) == frr.expected(switch, tenants)


@pytest.mark.parametrize(("name", "switch", "underlay"), SWITCHES[:6], ids=[s[0] for s in SWITCHES[:6]])
def test_delta_from_nothing_is_the_render(name, switch, underlay):
    """The items ``delta`` works on are the writer's own: set on an empty switch, they are its file."""
    tenants = desired(switch)
    d = nvue.delta(switch, [], tenants, underlay, OPTS)
    files = nvue.render_text(switch, tenants, underlay, OPTS)
    assert nvue.tree(d["set"]) == nvue.load(files["nvue.yaml"]) and d["unset"] == []


def test_overlapping_port_lists_against_the_vendor_definition():
    switch = dict(switches()["leaf-r1a"], platform="nvue")
    for tenants in overlapping(switch):
        files = registry.render_tenants(switch, tenants, underlay(), OPTS)
        once = [dict(t, ports=list({p["port"]: p for p in t["ports"]}.values())) for t in tenants]
        tree = check_nvue(files)
        port = tenants[1]["ports"][0]["port"]
        vlans = tree["interface"][port]["bridge"]["domain"]["br_default"]["vlan"]
        want = sorted(t["vlan"] for t in once if tenants[1]["ports"][0] in t["ports"])
        assert sorted(int(v) for v in vlans) == want


def test_colliding_tenants_are_refused_not_merged():
    """Two tenants on one VLAN, or a port named like a tenant's SVI, would overwrite each other's
    config on a switch: the writer refuses them (validation does first)."""
    switch = dict(switches()["leaf-r1a"], platform="nvue")
    tenants = copy.deepcopy(desired(switch))
    same_vlan = [*tenants, dict(tenants[0], name="zz", vrf="zz", vni=19999, l3vni=59999)]
    with pytest.raises(FabricError):
        registry.render_tenants(switch, normalise(same_vlan), underlay(), OPTS)
    named = [dict(tenants[0], ports=[{"port": "vlan%d" % tenants[1]["vlan"], "mode": "trunk"}]), *tenants[1:]]
    with pytest.raises(FabricError, match="named like a tenant's SVI"):
        registry.render_tenants(switch, named, underlay(), OPTS)


def test_rendered_nvue_uses_only_paths_of_the_nvue_reference():
    """The L3 VNI's route-targets on the VRF's BGP instance (not under the address family), and
    VRR up (it is down by default): ../shared/FACTS.md, NVIDIA's NVUE reference."""
    for name, sw in switches().items():
        if sw["platform"] == "nvue" and sw["role"] == "leaf":
            tree = nvue.load(native(sw, sw["tenants"]))
            assert check_tree(tree) == [], name
            vrf = tree["vrf"][sw["tenants"][0]["vrf"]]["router"]["bgp"]
            assert vrf["route-export"]["to-evpn"]["route-target"], "L3 VNI route-target not on the VRF's BGP"
            svi = tree["interface"]["vlan%d" % sw["tenants"][0]["vlan"]]["ip"]["vrr"]
            assert svi["state"] == {"up": {}}, "VRR stays down without state up"


# --- NVIDIA's NVUE model of the switch's release (PyPI nvueschema) ------------------------


def _dropped(given, dumped, path=""):
    """Every path of ``given`` that ``dumped`` lacks or holds otherwise."""
    if isinstance(given, dict) and isinstance(dumped, dict):
        out = []
        for key, value in given.items():
            here = "%s/%s" % (path, key)
            out += _dropped(value, dumped[key], here) if key in dumped else [here + " (dropped)"]
        return out
    return [] if given == dumped else ["%s: %r became %r" % (path, given, dumped)]


def nvue_model_drops(tree: dict, release: str) -> list[str]:
    """What NVIDIA's NVUE model of ``release`` does not hold of ``tree``: [] when it holds it all."""
    if importlib.util.find_spec("nvueschema") is None:
        pytest.skip("nvueschema is not installed (tests/requirements.txt): NVUE renders not held against NVIDIA's model")
    major, minor = release.split(".")[:2]
    model = importlib.import_module("nvueschema.models.v%s_%s" % (major, minor)).NvueConfig
    dumped = model.model_validate(tree).model_dump(mode="json", by_alias=True, exclude_unset=True)
    return _dropped(tree, dumped)


NVUE_GOLDEN = sorted(f for f in (p.name for p in Path(GOLDEN).iterdir()) if f.endswith(".nvue.yaml"))


@pytest.mark.parametrize("golden", NVUE_GOLDEN)
def test_every_golden_render_holds_in_nvidia_s_model_of_its_release(golden):
    """Each NVUE golden switch's tree (the ``nv config patch`` file, and the same as ``nv set``
    lines) against ``nvueschema.models.v5_<minor>.NvueConfig`` of the switch's ``os_version``."""
    name = golden[: -len(".nvue.yaml")]
    switch = switches()[name.split("-as-")[0]]
    release = switch["os_version"] if switch["platform"] == "nvue" else "5.12"  # cross renders: the default
    text = (Path(GOLDEN) / golden).read_text()
    tree = nvue.load(text)
    assert tree and nvue_model_drops(tree, release) == []
    nv = nvue.from_nv((Path(GOLDEN) / (name + ".nvue.nv")).read_text())
    assert nv == tree and nvue_model_drops(nv, release) == []


@pytest.mark.parametrize("release", ["5.%d" % minor for minor in range(4, 15)])
def test_every_supported_release_holds_the_render(release):
    """Each release the fleet accepts for NVUE (5.4 to 5.14)."""
    switch = dict(switches()["leaf-r1a"], os_version=release)
    tree = nvue.load(registry.render_files(switch, underlay())["nvue.yaml"])
    assert nvue_model_drops(tree, release) == []


@pytest.mark.parametrize(("release", "lost"), [("5.3", "/evpn/vni"), ("5.15", "/evpn/enable")])
def test_the_check_finds_what_a_release_lacks(release, lost):
    """The check itself: 5.3 has no `evpn vni` (it says `evpn evi`), 5.15 says `state enabled`
    for `enable on`; the fleet refuses both releases (test_model of _fleet)."""
    tree = nvue.load(registry.render_files(switches()["leaf-r1a"], underlay())["nvue.yaml"])
    assert "%s (dropped)" % lost in nvue_model_drops(tree, release)


# --- NVIDIA's text -------------------------------------------------------------------------


# NVIDIA's example: VLAN 10 and 20 in VRF RED (L3 VNI 4001), VLAN 30 in VRF BLUE (4002),
# VRR gateway .1 on every leaf, each VLAN's server on an MLAG bond (access).
NVUE_TENANTS = {10: ("RED", 4001, "bond1"), 20: ("RED", 4001, "bond2"), 30: ("BLUE", 4002, "bond3")}


def _mark_nvue(tree: dict) -> dict:
    """The vendor tree with our marker on each SVI, as the collection writes it."""
    tree = copy.deepcopy(tree)
    for vlan in NVUE_TENANTS:
        tree["interface"]["vlan%d" % vlan]["description"] = "gpucloud:t%d" % vlan
    return tree


def _expect_nvue(own_octet: int) -> list[dict]:
    return [
        {
            "name": "t%d" % vlan,
            "vlan": vlan,
            "vni": vlan,
            "vrf": vrf,
            "l3vni": l3vni,
            "gateway": "10.1.%d.1/24" % vlan,
            "subnet": "10.1.%d.0/24" % vlan,
            "address": "10.1.%d.%d/24" % (vlan, own_octet),
            "ports": [{"port": bond, "mode": "access"}],
        }
        for vlan, (vrf, l3vni, bond) in sorted(NVUE_TENANTS.items())
    ]


# --- NVUE ----------------------------------------------------------------------------


def test_nvue_vendor_config_without_our_marker_is_not_ours():
    assert nvue.parse(NVUE_YAML) == []
    assert nvue.parse(NVUE_NV) == []


def test_nvue_startup_yaml_tenants():
    """``/etc/nvue.d/startup.yaml`` (``- set:`` list form, YAML 1.1 ``on``) of leaf03."""
    tree = nvue.load(NVUE_YAML)
    assert tree["nve"]["vxlan"]["source"]["address"] == "10.10.10.3"
    assert registry.parse_native("nvue", _mark_nvue(tree)) == _expect_nvue(4)


def test_nvue_config_show_json_tenants():
    """The same tree as ``nv config show -o json`` prints it (a JSON object, string or parsed)."""
    text = json.dumps(_mark_nvue(nvue.load(NVUE_YAML)), indent=2)
    assert nvue.parse(text) == _expect_nvue(4)
    assert nvue.parse(json.loads(text)) == _expect_nvue(4)


def test_nvue_commands_tenants():
    """NVIDIA's ``nv set`` commands for leaf01, with ``nv set vrf RED`` (a VRF with no value).

    ``nv set vrf RED`` used to be read as a value ``vrf: RED`` and the parser crashed on the
    next ``nv set vrf RED ...`` line; a top-level word is always an object.
    """
    tree = nvue.load(NVUE_NV)
    assert set(tree["vrf"]) == {"RED", "BLUE"}
    assert tree["interface"]["vlan10"]["ip"]["vrf"] == "RED"
    marked = NVUE_NV + "".join("nv set interface vlan%d description gpucloud:t%d\n" % (v, v) for v in NVUE_TENANTS)
    assert nvue.parse(marked) == _expect_nvue(2)


# Two whole tenants in NVUE's range/list command form and, below, the same written out one by one.
_RANGED_HEAD = "".join(
    f"nv set interface vlan{v} description gpucloud:{n}\n"
    f"nv set interface vlan{v} ip vrf {vrf}\n"
    f"nv set interface vlan{v} ip vrr address 10.0.{v}.1/24\n"
    f"nv set vrf {vrf} evpn vni 500{v}\n"
    for v, n, vrf in ((10, "a", "RED"), (21, "b", "BLUE"))
)
RANGED = _RANGED_HEAD + (
    "nv set bridge domain br_default vlan 10,20-22\n"
    "nv set bridge domain br_default vlan 10 vni 10\n"
    "nv set bridge domain br_default vlan 21 vni 21\n"
    "nv set interface swp1-3,swp5 bridge domain br_default vlan 10,20-22\n"
    "nv set interface bond1-2 bridge domain br_default access 10\n"
)
ONE_BY_ONE = _RANGED_HEAD + "".join(
    ["nv set bridge domain br_default vlan %d\n" % v for v in (10, 20, 21, 22)]
    + ["nv set bridge domain br_default vlan 10 vni 10\n", "nv set bridge domain br_default vlan 21 vni 21\n"]
    + [
        "nv set interface %s bridge domain br_default vlan %d\n" % (port, v)
        for port in ("swp1", "swp2", "swp3", "swp5")
        for v in (10, 20, 21, 22)
    ]
    + ["nv set interface bond%d bridge domain br_default access 10\n" % i for i in (1, 2)]
)


def test_nvue_commands_ranges_and_lists_are_expanded():
    """``nv set interface swp1-3,swp5 ... vlan 10,20-22``: 4 ports x 4 VLANs, as NVUE reads it.

    Before (issue 8) an access range was one port named ``swp1-2`` and a trunk VLAN list was
    dropped without a word.
    """
    trunks = [{"port": p, "mode": "trunk"} for p in ("swp1", "swp2", "swp3", "swp5")]
    tenants = nvue.parse(RANGED)
    assert [(t["name"], t["vlan"], t["vni"], t["vrf"], t["l3vni"]) for t in tenants] == [
        ("a", 10, 10, "RED", 50010),
        ("b", 21, 21, "BLUE", 50021),
    ]
    assert tenants[0]["ports"] == [{"port": "bond1", "mode": "access"}, {"port": "bond2", "mode": "access"}, *trunks]
    assert tenants[1]["ports"] == trunks
    assert nvue.from_nv(RANGED) == nvue.from_nv(ONE_BY_ONE)
    assert tenants == nvue.parse(ONE_BY_ONE)


def test_nvue_commands_parse_as_their_tree_form():
    """The range form's tree, as ``nv config show -o json`` would print it, gives the same tenants."""
    tree = nvue.from_nv(RANGED)
    assert sorted(tree["bridge"]["domain"]["br_default"]["vlan"]) == ["10", "20", "21", "22"]
    assert nvue.parse(json.dumps(tree)) == nvue.parse(RANGED)
    patch = "- set:\n" + "".join("    " + line + "\n" for line in json.dumps(tree, indent=2).splitlines())
    assert nvue.parse(patch) == nvue.parse(RANGED)


@pytest.mark.parametrize(
    "line, ports",
    [
        ("nv set interface swp1-2,5-6 link mtu 9000", ["swp1", "swp2", "swp5", "swp6"]),  # nv set interface -h
        ("nv set interface swp1-3,swp49-54", ["swp%d" % i for i in (1, 2, 3, 49, 50, 51, 52, 53, 54)]),
        ("nv set interface swp1s0-3 link state up", ["swp1s0", "swp1s1", "swp1s2", "swp1s3"]),
        ("nv set interface bond1,peerlink.4094 type bond", ["bond1", "peerlink.4094"]),
        ("nv set interface peerlink.4094 type sub", ["peerlink.4094"]),
        ("nv set interface uplink-a type swp", ["uplink-a"]),  # a dash that is no range
    ],
)
def test_nvue_interface_ranges(line, ports):
    assert sorted(nvue.from_nv(line)["interface"], key=lambda p: (len(p), p)) == sorted(
        ports, key=lambda p: (len(p), p)
    )


def test_nvue_vendor_commands_read_as_the_vendor_tree():
    """NVIDIA's leaf01 commands use ranges (``swp1-3,swp49-54``, ``bond1-3``, ``vlan 10,20,30``,
    ``bond member swp49-50``); read back they hold what leaf03's startup.yaml holds."""
    commands = nvue.load(NVUE_NV)
    startup = nvue.load(NVUE_YAML)
    assert commands["bridge"]["domain"]["br_default"]["vlan"] == startup["bridge"]["domain"]["br_default"]["vlan"]
    assert commands["interface"]["peerlink"]["bond"]["member"] == startup["interface"]["peerlink"]["bond"]["member"]
    for bond in ("bond1", "bond2", "bond3"):
        assert commands["interface"][bond]["bridge"] == startup["interface"][bond]["bridge"]
    assert {"swp1", "swp2", "swp3", "swp49", "swp54"} <= set(commands["interface"])
    assert not [name for name in commands["interface"] if "-" in name or "," in name]


# A whole tenant, then each part the parser must find; without one, it is an error naming the path.
WHOLE_NV = (
    "nv set interface vlan10 description gpucloud:a\nnv set interface vlan10 ip vrf RED\n"
    "nv set interface vlan10 ip vrr address 10.0.10.1/24\nnv set vrf RED evpn vni 4001\n"
    "nv set bridge domain br_default vlan 10 vni 10\n"
)


@pytest.mark.parametrize(
    "drop, problem",
    [
        ("vlan 10 vni 10", "no L2 VNI (bridge domain br_default vlan 10 vni)"),
        ("ip vrf RED", "no VRF (interface vlan10 ip vrf)"),
        ("evpn vni 4001", "no L3 VNI (vrf RED evpn vni)"),
        ("vrr address", "no anycast gateway (interface vlan10 ip vrr address)"),
    ],
)
def test_nvue_half_tenant_is_an_error_naming_what_is_missing(drop, problem):
    assert nvue.parse(WHOLE_NV)[0]["vni"] == 10
    text = "".join(line + "\n" for line in WHOLE_NV.splitlines() if drop not in line)
    with pytest.raises(IncompleteTenantError) as err:
        registry.parse_native("nvue", text)
    assert any(p == "interface vlan10 (gpucloud:a): " + problem for p in err.value.problems), err.value.problems


def test_nvue_second_gateway_is_reported_not_dropped():
    text = WHOLE_NV + "nv set interface vlan10 ip vrr address 10.0.11.1/24\n"
    with pytest.raises(IncompleteTenantError, match=r"10\.0\.10\.1/24, 10\.0\.11\.1/24"):
        nvue.parse(text)


def test_half_tenant_stops_the_module_before_any_command():
    """``switch_tenants`` fails with the problems (``fail_json``) instead of planning on half a
    tenant; ``deleted`` removes the parts it has (test_ownership.py)."""
    half = WHOLE_NV.replace("nv set interface vlan10 ip vrf RED\n", "")
    for state in ("merged", "replaced", "overridden", "parsed"):
        with pytest.raises(FabricError, match=r"interface vlan10 \(gpucloud:a\): no VRF"):
            plan.run(params(leaves()["nvue"], state, half))
    removed = plan.run(params(leaves()["nvue"], "deleted", half))
    assert removed["commands"]["nv"] == [
        "nv unset interface vlan10",
        "nv unset evpn vni 10",
        "nv unset bridge domain br_default vlan 10",
    ]


def test_nvue_foreign_objects_next_to_ours_are_left_out():
    """Only the marked SVI is a tenant; the vendor's other SVIs, bonds and VRFs are not ours."""
    tree = nvue.load(NVUE_YAML)
    tree["interface"]["vlan20"]["description"] = "gpucloud:t20"
    tenants = nvue.parse(tree)
    assert [t["name"] for t in tenants] == ["t20"]
    assert tenants[0]["ports"] == [{"port": "bond2", "mode": "access"}]


def test_a_running_config_that_is_not_nvue_s_is_named():
    with pytest.raises(NativeConfigError, match="neither nv set lines nor an NVUE tree"):
        nvue.parse("hello")
    with pytest.raises(NativeConfigError, match="neither nv set lines nor NVUE YAML/JSON"):
        nvue.parse("interface: [unclosed")
    with pytest.raises(NativeConfigError) as err:
        nvue.parse({"interface": {"swp1": {"bridge": {"domain": {"br_default": {"access": "ten"}}}}}})
    assert err.value.problems == ["interface swp1 bridge domain br_default access: 'ten' is not a number"]
    with pytest.raises(NativeConfigError) as err:
        nvue.parse({"interface": ["swp1"]})
    assert err.value.problems == ["interface: is ['swp1'], not a mapping"]
    # What is no NVUE config at all is named, not read as a switch without config (every tenant planned anew, none
    # of ours seen to remove).
    for junk, problem in ((42, "running_config: is int, not an NVUE config (a tree, [{set: tree}] or nv set lines)"),
                          ("42", "running_config: is int, not an NVUE config (a tree, [{set: tree}] or nv set lines)"),
                          ([1, 2], "running_config[0]: is not {set: <NVUE tree>} (nv config show -o yaml)"),
                          ([{"set": {}}, {"sett": {}}],
                           "running_config[1]: is not {set: <NVUE tree>} (nv config show -o yaml)")):
        with pytest.raises(NativeConfigError) as err:
            nvue.parse(junk)
        assert err.value.problems == [problem]
    assert nvue.parse(None) == [] and nvue.parse("") == [] and nvue.parse([]) == []


def _with_hand_vlan(sw: dict, tenant: dict, port: str) -> list[dict]:
    """The switch's config holding ``tenant`` on trunk ``port``, which also carries the operator's VLAN 10 (a bridge
    VLAN of theirs, no SVI marked as ours) and their STP setting on that port."""
    tree = nvue.load(native(sw, [tenant]))
    tree["bridge"]["domain"]["br_default"]["vlan"]["10"] = {}
    dom = tree["interface"][port]["bridge"]["domain"]["br_default"]
    dom["vlan"]["10"] = {}
    dom["stp"] = {"bpdu-guard": "on", "admin-edge": "on"}
    return [{"set": tree}]


def test_a_port_that_keeps_the_operators_vlan_stays_in_the_bridge_when_our_last_vlan_goes():
    """Our last VLAN leaving a port took the port out of the bridge (``unset interface P bridge domain br_default``),
    and with it the operator's VLAN and STP settings there; a port with a VLAN not ours loses only our VLAN (it has a
    VLAN of its own, so it does not inherit every VLAN of the bridge)."""
    sw = copy.deepcopy(leaves()["nvue"])
    tenant = dict(sw["tenants"][0], ports=[{"port": "swp5", "mode": "trunk"}])
    sw["tenants"] = [tenant]
    running = _with_hand_vlan(sw, tenant, "swp5")
    assert nvue.foreign_ports(running) == {"swp5"}
    assert [(t["name"], t["ports"]) for t in nvue.parse(running)] == [(tenant["name"], tenant["ports"])]
    gone = plan.run(params(sw, "deleted", running, tenants=[tenant["name"]]))["commands"]
    assert "interface/swp5/bridge/domain/br_default/vlan/%d" % tenant["vlan"] in gone["unset"], gone["unset"]
    assert "interface/swp5/bridge/domain/br_default" not in gone["unset"], gone["unset"]
    # The port with only our VLAN still leaves the bridge (else it would inherit every VLAN of the domain).
    alone = plan.run(params(sw, "deleted", native(sw, [tenant]), tenants=[tenant["name"]]))["commands"]
    assert "interface/swp5/bridge/domain/br_default" in alone["unset"], alone["unset"]
    assert nvue.foreign_ports(native(sw, [tenant])) == set()


def test_a_hand_vlan_range_or_access_vlan_is_foreign_too():
    sw = copy.deepcopy(leaves()["nvue"])
    tenant = dict(sw["tenants"][0], ports=[{"port": "swp5", "mode": "trunk"}, {"port": "swp6", "mode": "access"}])
    tree = nvue.load(native(dict(sw, tenants=[tenant]), [tenant]))
    tree["interface"]["swp5"]["bridge"]["domain"]["br_default"]["vlan"]["20-29"] = {}
    tree["interface"]["swp7"] = {"type": "swp", "bridge": {"domain": {"br_default": {"access": 30}}}}
    assert nvue.foreign_ports([{"set": tree}]) == {"swp5", "swp7"}


def test_the_interfaces_not_ours_are_read_by_the_vrf_each_is_in():
    """NVIDIA's leaf (SVIs vlan10, vlan20 in RED, vlan30 in BLUE) with vlan20 marked as ours, and a routed port and a
    bond of the operator's: the SVIs not ours and those are named, by VRF, in every form of the config."""
    tree = nvue.load(NVUE_YAML)
    tree["interface"]["vlan20"]["description"] = "gpucloud:t20"
    tree["interface"]["swp9"] = {"type": "swp", "ip": {"vrf": "RED", "address": {"10.9.0.1/31": {}}}}
    tree["interface"]["bond9"] = {"type": "bond", "ip": {"vrf": "mgmt"}}
    want = {"RED": ["swp9", "vlan10"], "BLUE": ["vlan30"], "mgmt": ["bond9"]}
    assert nvue.vrf_users(tree) == want
    assert nvue.vrf_users([{"set": tree}]) == want
    assert nvue.vrf_users(NVUE_NV) == {"RED": ["vlan10", "vlan20"], "BLUE": ["vlan30"]}  # none of them ours
    sw = leaves()["nvue"]
    assert nvue.vrf_users(native(sw, sw["tenants"])) == {} and nvue.vrf_users(None) == {}
