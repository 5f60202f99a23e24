# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Our NVUE and SONiC parsers on device config as the vendors document it, not on our own output.

The texts are in data/vendor/ (sources and versions in its README.md): NVIDIA's Cumulus Linux
5.12 EVPN symmetric routing example (startup.yaml tree and ``nv set`` commands) and a SONiC
config_db built from the EVPN VXLAN HLD's CONFIG_DB examples. The vendor files carry no
ownership marker; the tests add ``gpucloud:<tenant>`` where the collection would write it.

What the parsers do with what they do not own or cannot read, as found here:
- objects without our marker are ignored by design (never reported, never touched);
- NVUE ``nv set`` text with NVUE's range/list forms (``swp1-2``, ``vlan 10,20``) is not
  expanded: an access port range is read as one port named ``swp1-2``, and a trunk VLAN list
  is dropped without a word (``test_nvue_commands_ranges_are_not_expanded`` pins it). The
  tree form (REST ``GET``, ``nv config show -o json``, startup.yaml) lists each VLAN on
  its own and is read correctly.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils import _fabric_platforms as platforms
from ansible_collections.gpucloud.baremetal.plugins.module_utils import _render_nvue, _render_sonic

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


def test_nvue_commands_ranges_are_not_expanded():
    """Known limit (reported, issue 8): NVUE's range and list forms in ``nv set`` text.

    ``nv set interface swp1-2 ...`` and ``... vlan 10,20`` are how NVIDIA writes commands (and
    how ``nv config show -o commands`` may print them). The parser keeps a range as one port
    name and silently drops a trunk VLAN list; the tree form has neither problem. This test
    pins today's behaviour so that a fix shows up here.
    """
    head = (
        "nv set interface vlan10 description gpucloud:a\nnv set interface vlan10 ip vrf RED\n"
        "nv set bridge domain br_default vlan 10 vni 10\n"
    )
    access = _render_nvue.parse(head + "nv set interface swp1-2 bridge domain br_default access 10\n")
    assert access[0]["ports"] == [{"port": "swp1-2", "mode": "access"}]
    trunk = _render_nvue.parse(head + "nv set interface swp1 bridge domain br_default vlan 10,20\n")
    assert trunk[0]["ports"] == []


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


@pytest.mark.parametrize("release", ["202605", "master"])
def test_sonic_vendor_sample_is_valid_for_the_release(release):
    """The sample itself against SONiC's YANG (so the test data is a config a switch takes)."""
    from tests.support.sonic_yang import yanglint

    rc, message = yanglint(_mark_sonic(SONIC_DB), release)
    assert rc == 0, message
