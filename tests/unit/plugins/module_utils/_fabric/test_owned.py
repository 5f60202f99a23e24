# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What results may show of a switch's config (``registry.owned_native``, ``nvue.shown``): the tenants the
collection owns, read back the same, and nothing of the switch's own config - its users, SNMP community, BGP
passwords or other VLANs - in any platform's form."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import registry
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.errors import IncompleteTenantError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.model import desired
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.platforms import nvue
from tests.support.fabric import STALE, leaves, native

SNMP, BGP, USER = "snmp-Comm-3x7", "bgp-Pass-9q2", "$6$salt$user-Hash-5w1"
SECRETS = (SNMP, BGP, USER)

NVUE_OWN = {  # valid NVUE paths (5.x): the switch's own config beside the tenants
    "system": {"snmp-server": {"readonly-community": {SNMP: {"access": {"any": {}}}}},
               "aaa": {"user": {"netops": {"hashed-password": USER, "role": "system-admin"}}}},
    "vrf": {"default": {"router": {"bgp": {"neighbor": {"10.0.0.1": {"password": BGP, "remote-as": "external"}}}}},
            "ops": {"router": {"bgp": {"enable": "on"}}}},
    "bridge": {"domain": {"br_default": {"vlan": {"300": {"vni": {"10300": {}}}}}}},
    "evpn": {"vni": {"10300": {"route-target": {"both": {"64512:10300": {}}}}}},
    "interface": {"vlan300": {"type": "svi", "vlan": 300, "description": "ops vlan", "ip": {"vrf": "ops"}},
                  "swp30": {"bridge": {"domain": {"br_default": {"access": 300}}}},
                  "eth0": {"ip": {"address": {"192.0.2.5/24": {}}}}},
}
EOS_OWN = f"""username netops secret sha512 {USER}
snmp-server community {SNMP} ro
vlan 300
   name OPS
!
interface Ethernet48
   description uplink
   switchport access vlan 300
!
interface Vlan300
   description ops
   ip address 10.30.0.1/24
!
router bgp 65101
   neighbor 10.0.0.1 password 7 {BGP}
!
"""
SONIC_OWN = {
    "SNMP_COMMUNITY": {SNMP: {"TYPE": "RO"}},
    "TACPLUS_SERVER": {"10.0.0.9": {"passkey": BGP}},
    "USER": {"netops": {"password": USER}},
    "VLAN": {"Vlan300": {"vlanid": "300", "description": "ops"}},
    "VLAN_MEMBER": {"Vlan300|Ethernet120": {"tagging_mode": "untagged"}},
    "VLAN_INTERFACE": {"Vlan300": {"vrf_name": "Vrfops"}, "Vlan300|10.30.0.1/24": {}},
    "VRF": {"Vrfops": {"vni": "50300"}},
}


def _merge(into: dict, tree: dict) -> dict:
    for key, value in tree.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value)
    return into


def switch_config(platform: str, tenants: list[dict]) -> object:
    """A running config of ``platform``: the tenants as the collection writes them, and the switch's own."""
    text = native(leaves()[platform], tenants)
    if platform == "nvue":
        return _merge(nvue.load(text), NVUE_OWN)
    if platform == "sonic":
        return _merge(json.loads(text), SONIC_OWN)
    return EOS_OWN + text


def _text(config: object) -> str:
    return config if isinstance(config, str) else json.dumps(config)


@pytest.mark.parametrize("platform", ["nvue", "sonic", "eos"])
def test_what_a_result_may_show_holds_our_tenants_and_nothing_of_the_switch(platform):
    tenants = [*desired(leaves()[platform]), STALE]
    whole = switch_config(platform, tenants)
    assert all(s in _text(whole) for s in SECRETS)
    shown = registry.owned_native(platform, whole)
    assert registry.parse_native(platform, shown) == registry.parse_native(platform, whole)
    assert {t["name"] for t in registry.parse_native(platform, shown)} >= {"stale"}
    assert not [s for s in SECRETS if s in _text(shown)]
    assert "300" not in json.dumps(registry.parse_native(platform, shown))
    assert not [w for w in ("ops", "OPS", "uplink", "Ethernet48", "Ethernet120", "swp30", "eth0") if w in _text(shown)]
    assert registry.owned_native(platform, shown) == shown  # what it shows is all ours


@pytest.mark.parametrize("platform", ["nvue", "sonic", "eos"])
def test_a_switch_with_none_of_our_tenants_shows_nothing(platform):
    whole = switch_config(platform, [])
    shown = registry.owned_native(platform, whole)
    assert not shown.strip() if isinstance(shown, str) else shown == {}


def test_a_half_tenant_reads_the_same_from_what_is_shown():
    whole = switch_config("nvue", desired(leaves()["nvue"]))
    svi = next(k for k, v in whole["interface"].items() if str(v.get("description", "")).startswith("gpucloud:"))
    vlan = str(whole["interface"][svi]["vlan"])
    del whole["bridge"]["domain"]["br_default"]["vlan"][vlan]["vni"]
    with pytest.raises(IncompleteTenantError) as on_whole:
        registry.parse_native("nvue", whole)
    with pytest.raises(IncompleteTenantError) as on_shown:
        registry.parse_native("nvue", registry.owned_native("nvue", whole))
    assert on_shown.value.problems == on_whole.value.problems


def test_a_bgp_session_in_a_vrf_of_ours_is_not_shown():
    whole = switch_config("nvue", desired(leaves()["nvue"]))
    vrf = next(iter(k for k in whole["vrf"] if k not in ("default", "ops")))
    whole["vrf"][vrf]["router"]["bgp"]["neighbor"] = {"10.9.9.9": {"password": BGP, "remote-as": "external"}}
    shown = registry.owned_native("nvue", whole)
    assert BGP not in json.dumps(shown) and shown["vrf"][vrf]["evpn"] == whole["vrf"][vrf]["evpn"]


def test_a_changes_diff_shows_what_it_sets_and_unsets_and_what_we_own_only():
    leaf = leaves()["nvue"]
    before = switch_config("nvue", [*desired(leaf), STALE])
    change = registry.commands(leaf, registry.parse_native("nvue", before), desired(leaf),
                               leaf_underlay(), {"route_target_asn": 64512, "l3vni_vlan_offset": 2000})
    assert change["unset"] and not [s for s in SECRETS if s in json.dumps(change)]
    shown = nvue.shown(before, change["set"], change["unset"])
    assert shown["vrf"]["stale"] == before["vrf"]["stale"] and shown["interface"]["vlan199"]
    assert not [s for s in SECRETS if s in json.dumps(shown)] and "vlan300" not in shown["interface"]
    operator = nvue.shown(before, {"interface": {"vlan300": {"description": "ops"}}}, [])
    assert operator["interface"]["vlan300"] == {"description": "ops vlan"}  # a path the change sets: shown


def leaf_underlay() -> dict:
    from tests.support.fabric import underlay

    return underlay()


def test_the_eos_part_shown_is_running_config_text_eos_reads_back():
    whole = switch_config("eos", desired(leaves()["eos"]))
    shown = registry.owned_native("eos", whole)
    assert shown.startswith("vlan ") and shown.rstrip().endswith("!")
    assert yaml.safe_load(json.dumps(registry.parse_native("eos", shown))) == registry.parse_native("eos", whole)


def test_frr_has_no_config_of_its_own():
    from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.errors import FabricError

    with pytest.raises(FabricError, match="frr has no config of its own"):
        registry.owned_native("frr", "")


def test_eos_list_forms_read_the_same_from_what_is_shown():
    """EOS's own list forms (vlan 10,20 / 30-32 blocks, ranged allowed lists, ranged VXLAN maps)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "data" / "vendor" / "eos-running-config-ranges.cfg").read_text()
    shown = registry.owned_native("eos", text)
    assert registry.parse_native("eos", shown) == registry.parse_native("eos", text)
    assert "SERVERS" not in shown and "vlan 10,20" not in shown
