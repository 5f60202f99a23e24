# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SONiC: every render held against SONiC's own YANG models of the switch's release (yanglint),
and the parser on config_db as SONiC's EVPN VXLAN HLD writes it.

Not our own golden files: the schema sonic-buildimage ships (../shared/upstream/sonic-yang/,
release branch 202605 and master), read by Debian's yanglint (``tests/support/sonic_yang.py``).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import registry
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
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.platforms import sonic
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet
from tests.support.fabric import every_switch, example_model, overlapping, switches, underlay
from tests.support.fleetgen import generate
from tests.support.sonic_yang import yanglint

VENDOR = Path(__file__).parents[2] / "data" / "vendor"
SONIC_DB = json.loads((VENDOR / "sonic-evpn-config_db.json").read_text())
OPTS = options_with_defaults(None)
MODEL = example_model()
UNDERLAY = MODEL["fabric"]["underlay"]
SWITCHES = every_switch("sonic")


def check_sonic(files: dict, release: str) -> None:
    rc, message = yanglint(json.loads(files["sonic.json"]), release)
    assert rc == 0, message


@pytest.mark.parametrize(("name", "switch", "underlay"), SWITCHES, ids=[s[0] for s in SWITCHES])
def test_render_parses_back(name, switch, underlay):
    tenants = desired(switch)
    files = registry.render_files(switch, underlay)
    if switch["role"] == "leaf" and name.startswith("leaf-"):
        # the switch's declared release (the generated fleet's renders: test_sonic_render_is_valid_for_the_release)
        check_sonic(files, "master" if sonic.uses_sag(switch) else "202605")
    assert registry.parse_native("sonic", files["sonic.json"]) == tenants
    frr = registry.renderer("frr")
    assert frr.parse(files["frr.conf"]) == frr.expected(switch, tenants)


@pytest.mark.parametrize(("name", "switch", "underlay"), SWITCHES[:6], ids=[s[0] for s in SWITCHES[:6]])
def test_delta_from_nothing_is_the_render(name, switch, underlay):
    """The items ``delta`` works on are the writer's own: set on an empty switch, they are its file."""
    tenants = desired(switch)
    d = sonic.delta(switch, [], tenants, underlay, OPTS)
    files = sonic.render_text(switch, tenants, underlay, OPTS)
    assert d["set"] == json.loads(files["sonic.json"]) and d["delete"] == []


def test_overlapping_port_lists_against_the_vendor_definition():
    switch = dict(switches()["leaf-r1a"], platform="sonic")
    for tenants in overlapping(switch):
        files = registry.render_tenants(switch, tenants, underlay(), OPTS)
        once = [dict(t, ports=list({p["port"]: p for p in t["ports"]}.values())) for t in tenants]
        check_sonic(files, "202605")
        assert registry.parse_native("sonic", files["sonic.json"]) == normalise(once)


def test_colliding_tenants_are_refused_not_merged():
    switch = dict(switches()["leaf-r1a"], platform="sonic")
    tenants = copy.deepcopy(desired(switch))
    same_vlan = [*tenants, dict(tenants[0], name="zz", vrf="zz", vni=19999, l3vni=59999)]
    with pytest.raises(FabricError):
        registry.render_tenants(switch, normalise(same_vlan), underlay(), OPTS)


def sonic_leaves():
    for s in MODEL["fabric"]["switches"]:
        if s["role"] == "leaf":
            yield "example-%s" % s["name"], dict(s, platform="sonic", os_version="202605")
    big = load_fleet(generate(nodes=60, tenants=40, switches=5))
    for s in big["fabric"]["switches"]:
        if s["role"] == "leaf":
            yield "generated-%s" % s["name"], dict(s, platform="sonic", os_version="202605")


CASES = list(sonic_leaves())


@pytest.mark.parametrize("release", ["202605", "master"])
@pytest.mark.parametrize("name,switch", CASES, ids=[c[0] for c in CASES])
def test_sonic_render_is_valid_for_the_release(name, switch, release):
    switch = dict(switch, os_version=release)
    db = json.loads(registry.render_files(switch, UNDERLAY)["sonic.json"])
    rc, message = yanglint(db, release)
    assert rc == 0, "%s (%s): %s" % (name, release, message)
    assert ("SAG" in db) == (release == "master"), "the anycast gateway form does not follow the release"
    assert db["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == "split"


def test_a_release_switch_refuses_the_master_only_anycast_gateway():
    """The check itself: a render with SAG (master's form) fails against 202605's YANG."""
    _name, switch = CASES[0]
    db = json.loads(registry.render_files(dict(switch, os_version="master"), UNDERLAY)["sonic.json"])
    rc, message = yanglint(db, "202605")
    assert rc != 0 and ("SAG" in message or "static_anycast_gateway" in message), message


def test_sonic_delta_set_is_valid_for_the_release():
    _name, switch = CASES[0]
    want = desired(switch)
    delta = registry.renderer("sonic").delta(switch, [], want, UNDERLAY, OPTS)
    rc, message = yanglint(delta["set"], "202605")
    assert rc == 0, message


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
    assert sonic.parse(SONIC_DB) == []


@pytest.mark.parametrize("form", ["dict", "text"])
def test_sonic_config_db_tenant(form):
    """VLAN, VXLAN_TUNNEL_MAP (``Vlan5`` -> 50), VRF ``vni`` (L3 VNI 60 on its own VLAN 6),
    VLAN_INTERFACE (VRF binding, gateway prefix) and VLAN_MEMBER (untagged/tagged)."""
    db = _mark_sonic(SONIC_DB)
    config = db if form == "dict" else json.dumps(db, indent=4)
    assert registry.parse_native("sonic", config) == [SONIC_TENANT]


def test_sonic_l3vni_vlan_is_not_a_tenant_and_foreign_vlans_are_left_out():
    db = _mark_sonic(SONIC_DB)
    db["VLAN"]["Vlan7"] = {"vlanid": "7"}
    db["VLAN_MEMBER"]["Vlan7|Ethernet0"] = {"tagging_mode": "tagged"}
    assert [t["vlan"] for t in sonic.parse(db)] == [5]


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
    with pytest.raises(IncompleteTenantError) as err:
        registry.parse_native("sonic", db)
    assert err.value.problems == ["VLAN|Vlan5 (gpucloud:acme): " + problem]


def test_sonic_second_vlan_interface_prefix_is_reported_not_dropped():
    """VLAN_INTERFACE ``Vlan5|<prefix>`` twice: the collection writes one (the anycast gateway);
    taking the first would let a plan delete the other as if it were ours."""
    db = _mark_sonic(SONIC_DB)
    db["VLAN_INTERFACE"]["Vlan5|10.0.55.1/24"] = {}
    with pytest.raises(IncompleteTenantError) as err:
        sonic.parse(json.dumps(db))
    assert err.value.problems == [
        "VLAN|Vlan5 (gpucloud:acme): VLAN_INTERFACE has 2 prefixes on Vlan5 (10.0.5.1/24, 10.0.55.1/24);"
        " the collection writes one, the anycast gateway"
    ]


@pytest.mark.parametrize("release", ["202605", "master"])
def test_sonic_vendor_sample_is_valid_for_the_release(release):
    """The sample itself against SONiC's YANG (so the test data is a config a switch takes)."""
    rc, message = yanglint(_mark_sonic(SONIC_DB), release)
    assert rc == 0, message


def test_a_running_config_that_is_not_config_db_is_named():
    with pytest.raises(NativeConfigError, match="running_config: not config_db JSON"):
        sonic.parse("{not json")
    with pytest.raises(NativeConfigError) as err:
        sonic.parse({"VLAN": {"Vlan5": {"description": "gpucloud:a", "vlanid": "five"}}})
    assert err.value.problems == ["VLAN|Vlan5 vlanid: 'five' is not a number"]
    with pytest.raises(NativeConfigError) as err:
        sonic.parse({"VLAN_MEMBER": {"Vlan5|Ethernet0": "untagged"}})
    assert err.value.problems == ["VLAN_MEMBER|Vlan5|Ethernet0: is 'untagged', not a mapping"]
    # a tunnel map whose VLAN is a list raised TypeError (unhashable), in parse and in owned_config's cut
    junk = {"VLAN": {"Vlan5": {"vlanid": "5"}}, "VXLAN_TUNNEL_MAP": {"vtep|map_5_Vlan5": {"vlan": ["Vlan5"], "vni": "5"}}}
    for read in (sonic.parse, sonic.owned):
        with pytest.raises(NativeConfigError) as err:
            read(junk)
        assert err.value.problems == [
            "VXLAN_TUNNEL_MAP|vtep|map_5_Vlan5 vlan: ['Vlan5'] is not a VLAN name (config_db holds e.g. Vlan101)"]


def test_the_interfaces_not_ours_are_read_by_the_vrf_each_is_bound_to():
    """The VLAN interfaces of VLANs marked as ours (a tenant's, its L3 VNI VLAN's) are not named; the operator's VLAN
    interface, routed port, port channel, loopback and subinterface are, by their ``vrf_name`` (a prefix is no
    interface)."""
    db = _mark_sonic(SONIC_DB)
    assert sonic.vrf_users(db) == {}
    assert sonic.vrf_users(SONIC_DB) == {"Vrf-red": ["Vlan5", "Vlan6"]}  # none of them ours
    db["VLAN"]["Vlan999"] = {"vlanid": "999"}
    db["VLAN_INTERFACE"].update({"Vlan999": {"vrf_name": "Vrf-red"}, "Vlan999|10.99.0.1/24": {}})
    db["INTERFACE"] = {"Ethernet8": {"vrf_name": "Vrf-red"}, "Ethernet8|10.8.0.1/31": {}, "Ethernet12": {}}
    db["PORTCHANNEL_INTERFACE"] = {"PortChannel1": {"vrf_name": "Vrf-ops"}}
    db["LOOPBACK_INTERFACE"] = {"Loopback5": {"vrf_name": "Vrf-ops"}}
    db["VLAN_SUB_INTERFACE"] = {"Ethernet16.10": {"vrf_name": "Vrf-red", "admin_status": "up"}}
    want = {"Vrf-ops": ["Loopback5", "PortChannel1"], "Vrf-red": ["Ethernet8", "Ethernet16.10", "Vlan999"]}
    assert sonic.vrf_users(db) == want
    assert registry.vrf_users("sonic", json.dumps(db)) == want
    assert sonic.vrf_users("") == {}
