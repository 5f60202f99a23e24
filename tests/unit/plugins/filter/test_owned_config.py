# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter owned_config, as role switch_fabric calls it on what it gathered (tasks/gather_eos.yml: the
running-config text; tasks/gather_sonic.yml: config_db JSON text) before keeping it unprotected by no_log.

Held at the filter layer (what the owned part holds per platform is held in module_utils/_fabric/test_owned.py):
the platform argument (unknown ones and FRR, which has no config of its own, refused naming the choices), the
forms the role hands over, none of the switch's own secrets in what comes back, and a config that cannot be read
an AnsibleFilterError that says where (the problems alone, without the error's heading), never a Python
exception.
"""
from __future__ import annotations

import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucloud.baremetal.plugins.filter.owned_config import FilterModule
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import registry
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.model import desired
from tests.support.fabric import leaves, native

FILTERS = FilterModule().filters()
OWNED = FILTERS["owned_config"]
SNMP, BGP, USER = "snmp-Comm-3x7", "bgp-Pass-9q2", "$6$salt$user-Hash-5w1"
EOS_OWN = f"""username netops secret sha512 {USER}
snmp-server community {SNMP} ro
router bgp 65101
   neighbor 10.0.0.1 password 7 {BGP}
!
"""
SONIC_OWN = {"SNMP_COMMUNITY": {SNMP: {"TYPE": "RO"}}, "TACPLUS_SERVER": {"10.0.0.9": {"passkey": BGP}},
             "USER": {"netops": {"password": USER}}}


def gathered(platform: str) -> str:
    """What the role's gather task hands the filter: the switch's whole config, as text."""
    leaf = leaves()[platform]
    text = native(leaf, desired(leaf))
    if platform == "sonic":
        return json.dumps({**json.loads(text), **SONIC_OWN})
    return EOS_OWN + text


def test_the_filter_is_there() -> None:
    assert set(FILTERS) == {"owned_config", "foreign_vlans", "foreign_vrfs", "vrf_users"}


@pytest.mark.parametrize("platform", ["eos", "sonic"])
def test_the_part_kept_holds_our_tenants_and_none_of_the_switchs_secrets(platform: str) -> None:
    whole = gathered(platform)
    assert all(secret in whole for secret in (SNMP, BGP, USER))
    kept = OWNED(whole, platform)
    text = kept if isinstance(kept, str) else json.dumps(kept)
    assert not [secret for secret in (SNMP, BGP, USER) if secret in text]
    tenants = registry.parse_native(platform, kept)
    assert tenants and tenants == registry.parse_native(platform, whole)
    assert OWNED(kept, platform) == kept


def test_the_eos_part_comes_back_as_running_config_text_and_sonics_as_a_mapping() -> None:
    assert isinstance(OWNED(gathered("eos"), "eos"), str)
    assert isinstance(OWNED(gathered("sonic"), "sonic"), dict)


@pytest.mark.parametrize("platform", ["eos", "sonic", "nvue"])
def test_an_empty_config_holds_nothing_of_ours(platform: str) -> None:
    assert not OWNED("", platform)


@pytest.mark.parametrize("platform", ["junos", "EOS", "", None, ["eos"], 3])
def test_an_unknown_platform_is_a_filter_error_naming_the_choices(platform: object) -> None:
    with pytest.raises(AnsibleFilterError) as err:
        OWNED("", platform)
    assert str(err.value) == "owned_config: unknown platform %r; one of nvue, sonic, eos, frr" % (platform,)


def test_frr_has_no_config_of_its_own_to_keep() -> None:
    with pytest.raises(AnsibleFilterError, match=r"^owned_config: platform: frr has no config of its own to read$"):
        OWNED("router bgp 65101\n", "frr")


@pytest.mark.parametrize(("platform", "config", "message"), [
    ("sonic", "% Invalid input detected", "owned_config: running_config: not config_db JSON (Expecting value"),
    ("sonic", "[1, 2]", "owned_config: running_config: is [1, 2], not a mapping"),
    ("sonic", json.dumps({"VLAN": {"Vlan300": "x"}}), "owned_config: VLAN|Vlan300: is 'x', not a mapping"),
    ("eos", ["vlan 300", 300], "owned_config: running_config: a list must hold EOS config lines (strings)"),
    ("nvue", "a: [", "owned_config: running_config: neither nv set lines nor NVUE YAML/JSON"),
    ("nvue", {"interface": {"vlan300": "x"}}, "owned_config: interface vlan300: is 'x', not a mapping"),
])
def test_a_config_that_cannot_be_read_is_a_filter_error_saying_where(platform: str, config: object,
                                                                     message: str) -> None:
    with pytest.raises(AnsibleFilterError) as err:
        OWNED(config, platform)
    assert str(err.value).startswith(message), str(err.value)
    assert "cannot be read as the platform's config (1 problem)" not in str(err.value)  # the problems, no heading


FOREIGN = FILTERS["foreign_vlans"]


def test_the_vlans_not_ours_are_read_from_the_whole_config_of_each_platform() -> None:
    """The operator's VLAN 10 beside our tenants: only it is named (ours carry our marker; SONiC's L3 VNI VLANs too)."""
    eos = "vlan 10\n   name mgmt\n!\nvlan 20-21\n!\n" + gathered("eos")
    assert FOREIGN(eos, "eos") == [10, 20, 21]
    sonic = json.loads(gathered("sonic"))
    sonic["VLAN"]["Vlan10"] = {"vlanid": "10", "description": "mgmt"}
    sonic["VLAN"]["Vlan30"] = {"vlanid": "30"}
    assert FOREIGN(json.dumps(sonic), "sonic") == [10, 30]
    for platform in ("eos", "sonic"):
        assert FOREIGN(gathered(platform), platform) == []


@pytest.mark.parametrize("platform", ["frr", "junos", None])
def test_foreign_vlans_of_an_unknown_platform_is_a_filter_error(platform: object) -> None:
    with pytest.raises(AnsibleFilterError, match=r"^foreign_vlans: unknown platform .*; one of nvue, sonic, eos$"):
        FOREIGN("", platform)


VRFS = FILTERS["foreign_vrfs"]


def test_the_vrfs_no_tenant_of_ours_is_in_are_read_from_the_whole_config_of_each_platform() -> None:
    eos = "vrf instance MGMT\n!\n" + gathered("eos")
    assert VRFS(eos, "eos") == ["MGMT"]
    sonic = json.loads(gathered("sonic"))
    sonic["VRF"]["Vrf-storage"] = {}
    assert VRFS(json.dumps(sonic), "sonic") == ["Vrf-storage"]
    for platform in ("eos", "sonic"):
        assert VRFS(gathered(platform), platform) == []
    with pytest.raises(AnsibleFilterError, match=r"^foreign_vrfs: unknown platform 'frr'; one of nvue, sonic, eos$"):
        VRFS("", "frr")


USERS = FILTERS["vrf_users"]


def test_the_interfaces_not_ours_are_read_by_vrf_from_the_whole_config_of_each_platform() -> None:
    """The operator's SVI on VLAN 999 in a tenant's VRF (and, on EOS, their management port): named by VRF, as the
    switch names both; our SVIs never are. FRR binds no interface to a VRF (the switch's own config does)."""
    tenant = desired(leaves()["eos"])[0]
    hand = "vlan 999\n!\ninterface Vlan999\n   vrf %s\n!\ninterface Management1\n   vrf MGMT\n!\n" % tenant["vrf"]
    eos = gathered("eos") + hand
    assert USERS(eos, "eos") == {"MGMT": ["Management1"], tenant["vrf"]: ["Vlan999"]}
    sonic = json.loads(gathered("sonic"))
    vrf = "Vrf-" + desired(leaves()["sonic"])[0]["vrf"]
    sonic["VLAN"]["Vlan999"] = {"vlanid": "999"}
    sonic["VLAN_INTERFACE"]["Vlan999"] = {"vrf_name": vrf}
    assert USERS(json.dumps(sonic), "sonic") == {vrf: ["Vlan999"]}
    nvue = native(leaves()["nvue"], desired(leaves()["nvue"]))
    assert USERS(nvue, "nvue") == {}
    for platform in ("eos", "sonic"):
        assert USERS(gathered(platform), platform) == {}
    assert registry.vrf_users("frr", "vrf acme\n vni 50101\nexit-vrf\n") == {}
    with pytest.raises(AnsibleFilterError, match=r"^vrf_users: unknown platform 'frr'; one of nvue, sonic, eos$"):
        USERS("", "frr")
    with pytest.raises(AnsibleFilterError, match=r"^vrf_users: running_config: not config_db JSON"):
        USERS("{not json", "sonic")
