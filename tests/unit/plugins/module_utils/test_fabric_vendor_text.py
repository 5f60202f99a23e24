# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Our NVUE and SONiC parsers on device config as the vendors document it, not on our own output.

The texts are in data/vendor/ (sources and versions in its README.md): NVIDIA's Cumulus Linux
5.12 EVPN symmetric routing example (startup.yaml tree and ``nv set`` commands) and a SONiC
config_db built from the EVPN VXLAN HLD's CONFIG_DB examples. The vendor files carry no
ownership marker; the tests add ``gpucloud:<tenant>`` where the collection would write it.

What the parsers do with what they do not own or cannot read, as found here:
- objects without our marker are ignored by design (never reported, never touched);
- NVUE ``nv set`` text with NVUE's range/list forms (``swp1-3,swp49-54``, ``swp1-2,5-6``,
  ``vlan 10,20-22``) is expanded as NVUE expands it (``nv set interface -h``: "multiple
  interfaces using ranging (e.g. swp1-2,5-6 -> swp1,swp2,swp5,swp6)", Cumulus Linux 5.12 "NVUE
  CLI"), so command text reads as the tree form (REST ``GET``, ``nv config show -o json``,
  startup.yaml) does;
- an object marked as ours that is not a whole tenant (no L2 VNI, VRF, L3 VNI or gateway), or
  that holds more than the one value the collection writes (SONiC: a second VLAN_INTERFACE
  prefix), is an ``IncompleteTenantError`` naming the native path: never half a tenant.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils import (
    _fabric,
    _render_eos,
    _render_nvue,
    _render_sonic,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils import _fabric_platforms as platforms
from ansible_collections.gpucloud.baremetal.plugins.modules import switch_tenants

VENDOR = Path(__file__).parent / "data" / "vendor"
NVUE_YAML = (VENDOR / "nvue-evpn-symmetric-leaf03.yaml").read_text()
NVUE_NV = (VENDOR / "nvue-evpn-symmetric-leaf01.nv").read_text()
SONIC_DB = json.loads((VENDOR / "sonic-evpn-config_db.json").read_text())

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
    assert _render_nvue.parse(NVUE_YAML) == []
    assert _render_nvue.parse(NVUE_NV) == []


def test_nvue_startup_yaml_tenants():
    """``/etc/nvue.d/startup.yaml`` (``- set:`` list form, YAML 1.1 ``on``) of leaf03."""
    tree = _render_nvue.load(NVUE_YAML)
    assert tree["nve"]["vxlan"]["source"]["address"] == "10.10.10.3"
    assert platforms.parse_native("nvue", _mark_nvue(tree)) == _expect_nvue(4)


def test_nvue_config_show_json_tenants():
    """The same tree as ``nv config show -o json`` prints it (a JSON object, string or parsed)."""
    text = json.dumps(_mark_nvue(_render_nvue.load(NVUE_YAML)), indent=2)
    assert _render_nvue.parse(text) == _expect_nvue(4)
    assert _render_nvue.parse(json.loads(text)) == _expect_nvue(4)


def test_nvue_commands_tenants():
    """NVIDIA's ``nv set`` commands for leaf01, with ``nv set vrf RED`` (a VRF with no value).

    ``nv set vrf RED`` used to be read as a value ``vrf: RED`` and the parser crashed on the
    next ``nv set vrf RED ...`` line; a top-level word is always an object.
    """
    tree = _render_nvue.load(NVUE_NV)
    assert set(tree["vrf"]) == {"RED", "BLUE"}
    assert tree["interface"]["vlan10"]["ip"]["vrf"] == "RED"
    marked = NVUE_NV + "".join("nv set interface vlan%d description gpucloud:t%d\n" % (v, v) for v in NVUE_TENANTS)
    assert _render_nvue.parse(marked) == _expect_nvue(2)


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
    tenants = _render_nvue.parse(RANGED)
    assert [(t["name"], t["vlan"], t["vni"], t["vrf"], t["l3vni"]) for t in tenants] == [
        ("a", 10, 10, "RED", 50010),
        ("b", 21, 21, "BLUE", 50021),
    ]
    assert tenants[0]["ports"] == [{"port": "bond1", "mode": "access"}, {"port": "bond2", "mode": "access"}, *trunks]
    assert tenants[1]["ports"] == trunks
    assert _render_nvue.from_nv(RANGED) == _render_nvue.from_nv(ONE_BY_ONE)
    assert tenants == _render_nvue.parse(ONE_BY_ONE)


def test_nvue_commands_parse_as_their_tree_form():
    """The range form's tree, as ``nv config show -o json`` would print it, gives the same tenants."""
    tree = _render_nvue.from_nv(RANGED)
    assert sorted(tree["bridge"]["domain"]["br_default"]["vlan"]) == ["10", "20", "21", "22"]
    assert _render_nvue.parse(json.dumps(tree)) == _render_nvue.parse(RANGED)
    patch = "- set:\n" + "".join("    " + line + "\n" for line in json.dumps(tree, indent=2).splitlines())
    assert _render_nvue.parse(patch) == _render_nvue.parse(RANGED)


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
    assert sorted(_render_nvue.from_nv(line)["interface"], key=lambda p: (len(p), p)) == sorted(
        ports, key=lambda p: (len(p), p)
    )


def test_nvue_vendor_commands_read_as_the_vendor_tree():
    """NVIDIA's leaf01 commands use ranges (``swp1-3,swp49-54``, ``bond1-3``, ``vlan 10,20,30``,
    ``bond member swp49-50``); read back they hold what leaf03's startup.yaml holds."""
    commands = _render_nvue.load(NVUE_NV)
    startup = _render_nvue.load(NVUE_YAML)
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
    assert _render_nvue.parse(WHOLE_NV)[0]["vni"] == 10
    text = "".join(line + "\n" for line in WHOLE_NV.splitlines() if drop not in line)
    with pytest.raises(_fabric.IncompleteTenantError) as err:
        platforms.parse_native("nvue", text)
    assert any(p == "interface vlan10 (gpucloud:a): " + problem for p in err.value.problems), err.value.problems


def test_nvue_second_gateway_is_reported_not_dropped():
    text = WHOLE_NV + "nv set interface vlan10 ip vrr address 10.0.11.1/24\n"
    with pytest.raises(_fabric.IncompleteTenantError, match=r"10\.0\.10\.1/24, 10\.0\.11\.1/24"):
        _render_nvue.parse(text)


def test_half_tenant_stops_the_module_before_any_command():
    """``switch_tenants`` fails with the problems (``fail_json``) instead of planning on half a
    tenant; ``deleted`` removes the parts it has (test_fabric_half_tenants.py)."""
    from tests.unit.plugins.module_utils.test_fabric_states import LEAVES, params

    half = WHOLE_NV.replace("nv set interface vlan10 ip vrf RED\n", "")
    for state in ("merged", "replaced", "overridden", "parsed"):
        with pytest.raises(_fabric.FabricError, match=r"interface vlan10 \(gpucloud:a\): no VRF"):
            switch_tenants.run(params(LEAVES["nvue"], state, half))
    removed = switch_tenants.run(params(LEAVES["nvue"], "deleted", half))
    assert removed["commands"]["nv"] == [
        "nv unset interface vlan10",
        "nv unset evpn vni 10",
        "nv unset bridge domain br_default vlan 10",
    ]


def test_nvue_foreign_objects_next_to_ours_are_left_out():
    """Only the marked SVI is a tenant; the vendor's other SVIs, bonds and VRFs are not ours."""
    tree = _render_nvue.load(NVUE_YAML)
    tree["interface"]["vlan20"]["description"] = "gpucloud:t20"
    tenants = _render_nvue.parse(tree)
    assert [t["name"] for t in tenants] == ["t20"]
    assert tenants[0]["ports"] == [{"port": "bond2", "mode": "access"}]


# --- SONiC ---------------------------------------------------------------------------


def _mark_sonic(db: dict) -> dict:
    db = copy.deepcopy(db)
    db["VLAN"]["Vlan5"]["description"] = "gpucloud:acme"
    db["VLAN"]["Vlan6"]["description"] = "gpucloud:acme:l3vni"
    return db


SONIC_TENANT = {
    "name": "acme",
    "vlan": 5,
    "vni": 50,
    "vrf": "red",
    "l3vni": 60,
    "gateway": "10.0.5.1/24",
    "subnet": "10.0.5.0/24",
    "address": "",
    "ports": [{"port": "Ethernet0", "mode": "access"}, {"port": "Ethernet4", "mode": "trunk"}],
}


def test_sonic_vendor_config_db_without_our_marker_is_not_ours():
    assert _render_sonic.parse(SONIC_DB) == []


@pytest.mark.parametrize("form", ["dict", "text"])
def test_sonic_config_db_tenant(form):
    """VLAN, VXLAN_TUNNEL_MAP (``Vlan5`` -> 50), VRF ``vni`` (L3 VNI 60 on its own VLAN 6),
    VLAN_INTERFACE (VRF binding, gateway prefix) and VLAN_MEMBER (untagged/tagged)."""
    db = _mark_sonic(SONIC_DB)
    config = db if form == "dict" else json.dumps(db, indent=4)
    assert platforms.parse_native("sonic", config) == [SONIC_TENANT]


def test_sonic_l3vni_vlan_is_not_a_tenant_and_foreign_vlans_are_left_out():
    db = _mark_sonic(SONIC_DB)
    db["VLAN"]["Vlan7"] = {"vlanid": "7"}
    db["VLAN_MEMBER"]["Vlan7|Ethernet0"] = {"tagging_mode": "tagged"}
    assert [t["vlan"] for t in _render_sonic.parse(db)] == [5]


@pytest.mark.parametrize(
    "break_it, problem",
    [
        (lambda db: db["VXLAN_TUNNEL_MAP"].pop("vtep1|map_50_Vlan5"), "no L2 VNI (VXLAN_TUNNEL_MAP with vlan Vlan5)"),
        (lambda db: db["VLAN_INTERFACE"]["Vlan5"].pop("vrf_name"), "no VRF (VLAN_INTERFACE|Vlan5 vrf_name)"),
        (lambda db: db["VRF"]["Vrf-red"].pop("vni"), "no L3 VNI (VRF|Vrf-red vni)"),
        (
            lambda db: db["VLAN_INTERFACE"].pop("Vlan5|10.0.5.1/24"),
            "no anycast gateway (VLAN_INTERFACE|Vlan5|<prefix>)",
        ),
    ],
)
def test_sonic_half_tenant_is_an_error_naming_what_is_missing(break_it, problem):
    db = _mark_sonic(SONIC_DB)
    break_it(db)
    with pytest.raises(_fabric.IncompleteTenantError) as err:
        platforms.parse_native("sonic", db)
    assert err.value.problems == ["VLAN|Vlan5 (gpucloud:acme): " + problem]


def test_sonic_second_vlan_interface_prefix_is_reported_not_dropped():
    """VLAN_INTERFACE ``Vlan5|<prefix>`` twice: the collection writes one (the anycast gateway);
    taking the first would let a plan delete the other as if it were ours."""
    db = _mark_sonic(SONIC_DB)
    db["VLAN_INTERFACE"]["Vlan5|10.0.55.1/24"] = {}
    with pytest.raises(_fabric.IncompleteTenantError) as err:
        _render_sonic.parse(json.dumps(db))
    assert err.value.problems == [
        "VLAN|Vlan5 (gpucloud:acme): VLAN_INTERFACE has 2 prefixes on Vlan5 (10.0.5.1/24, 10.0.55.1/24);"
        " the collection writes one, the anycast gateway"
    ]


# --- EOS -----------------------------------------------------------------------------


def test_eos_half_tenant_is_an_error_naming_what_is_missing():
    text = (
        "vlan 10\n   name gpucloud:a\n!\ninterface Vlan10\n   vrf RED\n   ip address virtual 10.0.10.1/24\n!\n"
        "interface Vxlan1\n   vxlan vlan 10 vni 10\n!\n"
    )
    with pytest.raises(_fabric.IncompleteTenantError) as err:
        platforms.parse_native("eos", text)
    assert err.value.problems == ["vlan 10 name (gpucloud:a): no L3 VNI (interface Vxlan1 vxlan vrf RED vni)"]
    assert _render_eos.parse(text + "interface Vxlan1\n   vxlan vrf RED vni 4001\n")[0]["l3vni"] == 4001


@pytest.mark.parametrize("release", ["202605", "master"])
def test_sonic_vendor_sample_is_valid_for_the_release(release):
    """The sample itself against SONiC's YANG (so the test data is a config a switch takes)."""
    from tests.support.sonic_yang import yanglint

    rc, message = yanglint(_mark_sonic(SONIC_DB), release)
    assert rc == 0, message


EOS_RANGES = (VENDOR / "eos-running-config-ranges.cfg").read_text()


def test_eos_running_config_ranges_are_expanded_as_eos_defines_them():
    """``vlan 10,20`` / ``vlan 30-32`` blocks, ranged trunk lists and ``vxlan vlan A-B vni X-Y``.

    Before (issue 8) a ``vlan 101-102`` block was not read at all (``^vlan (\\d+)$``) and a ranged
    ``vxlan vlan`` map left its tenants without an L2 VNI (an IncompleteTenantError).
    """
    tenants = _render_eos.parse(EOS_RANGES)
    got = [(t["name"], t["vlan"], t["vni"], t["vrf"], t["l3vni"], t["gateway"]) for t in tenants]
    assert got == [
        ("acme", 101, 10101, "acme", 50101, "10.101.0.1/24"),
        ("beta", 102, 10102, "beta", 50102, "10.102.0.1/24"),
        ("cobalt", 110, 10110, "cobalt", 50110, "10.110.0.1/24"),
    ]
    trunk = {"port": "Ethernet2", "mode": "trunk"}
    assert [t["ports"] for t in tenants] == [[{"port": "Ethernet1", "mode": "access"}, trunk], [trunk], [trunk]]
    # the switch's own VLANs (a ranged, suspended block) and its own trunk are not ours
    assert not [p for t in tenants for p in t["ports"] if p["port"] == "Ethernet3"]


def test_eos_vlan_blocks_read_as_arista_eos_reads_them():
    """arista.eos's vlans parser (an independent reader) and ours agree on every VLAN's name."""
    from ansible_collections.arista.eos.plugins.module_utils.network.eos.facts.vlans.vlans import VlansFacts

    text = "".join(line + "\n" for line in EOS_RANGES.splitlines() if not line.startswith("! "))  # the header
    blocks = "\n".join(b for b in ("\n" + text).split("\n!") if b.strip().startswith("vlan "))
    facts = VlansFacts(module=None).populate_facts(None, {"ansible_network_resources": {}}, blocks)
    theirs = {v["vlan_id"]: v.get("name") for v in facts["ansible_network_resources"]["vlans"]}
    assert {10, 20, 30, 31, 32} <= set(theirs) and theirs[20] == "SERVERS"
    ours = {t["vlan"]: _fabric.marker(t["name"]) for t in _render_eos.parse(EOS_RANGES)}
    assert ours == {vlan: name for vlan, name in theirs.items() if _fabric.owner(name)}


def test_eos_one_marker_on_a_vlan_range_is_refused():
    """``vlan 101,103`` named ``gpucloud:acme``: one tenant on two VLANs, which the collection never
    writes; planning on either would touch the other. Refused, also for deleted."""
    text = EOS_RANGES.replace("vlan 101\n", "vlan 101,103\n")
    with pytest.raises(_fabric.IncompleteTenantError) as err:
        _render_eos.parse(text)
    assert (
        "vlan 101,103 name (gpucloud:acme): one tenant's marker on 2 VLANs; the collection writes it on one"
        in err.value.problems
    )
    assert err.value.tenants is None


@pytest.mark.parametrize(
    "line, vlans",
    [("10-12,20", [10, 11, 12, 20]), ("5", [5]), ("12-10", []), ("10,x", []), ("1-3,2", [1, 2, 3, 2])],
)
def test_eos_number_lists(line, vlans):
    assert _render_eos._number_list(line) == vlans
