# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Validation of a switch's tenants: every problem at once, each with its path, in one path.

There is one check (no fast check beside a full one): a valid switch gives no problem, and
each mutation below gives exactly the problem it should, also among many valid tenants (the
checks that run in bulk, per set or per port group, must still name the one tenant).
"""

from __future__ import annotations

import copy

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.errors import FabricError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.validate import check_switch, validate
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet
from tests.support.fabric import leaves, switches, underlay
from tests.support.fleetgen import generate

UNDERLAY = underlay()
LEAVES = leaves()


@pytest.mark.parametrize(("mutate", "expected"), [
    (lambda s: s["tenants"][0].update(l3vni=s["tenants"][1]["vni"]),
     "leaf-r2a.tenants[0] (beta).l3vni: 10103 equals the L2 VNI of leaf-r2a.tenants[1] (cobalt); an L3 VNI may not equal any L2 VNI"),
    (lambda s: s["tenants"][0].update(vrf="averyverylongv"),
     "leaf-r2a.tenants[0] (beta).vrf: SONiC names VRFs 'Vrf-<name>' with at most 15 characters; 'averyverylongv' is too long (at most 11)"),
    (lambda s: s["tenants"][1].update(vlan=2102),
     "leaf-r2a.tenants[0] (beta): the L3 VNI VLAN 2102 (vlan + l3vni_vlan_offset 2000) is the VLAN of leaf-r2a.tenants[1] (cobalt); choose another offset"),
    (lambda s: s["tenants"][1].update(vlan=3000),
     "leaf-r2a.tenants[1] (cobalt): the L3 VNI VLAN 5000 (vlan + l3vni_vlan_offset 2000) is outside 1..4094"),
    (lambda s: s["tenants"][1]["ports"].append({"port": "Ethernet4", "mode": "access"}),
     "leaf-r2a: port Ethernet4 is both access and trunk"),
    (lambda s: s["tenants"][1].update(gateway="10.103.0.0/24"),
     "leaf-r2a.tenants[1] (cobalt).gateway: 10.103.0.0/24 is not a usable host address of its subnet"),
    (lambda s: s["tenants"][1].update(gateway="10.103.0/24"),
     "leaf-r2a.tenants[1] (cobalt).gateway: '10.103.0/24' is not an IPv4 address with prefix (a.b.c.d/len)"),
    (lambda s: s["tenants"][1].update(vrf=s["tenants"][0]["vrf"]),
     "leaf-r2a.tenants[1] (cobalt).vrf: beta is already used by leaf-r2a.tenants[0] (beta) on this switch"),
    (lambda s: s["tenants"][1].update(vrf="mgmt"),  # the switch's management VRF, removed with the tenant
     "leaf-r2a.tenants[1] (cobalt).vrf: 'mgmt' is reserved by the switch OS; pick another name"),
    (lambda s: s["tenants"][1].update(vrf="Default"),
     "leaf-r2a.tenants[1] (cobalt).vrf: 'Default' is reserved by the switch OS; pick another name"),
    (lambda s: s["tenants"][1].update(vlan=True),
     "leaf-r2a.tenants[1] (cobalt).vlan: True is outside 1..4094"),
    (lambda s: s["tenants"][1].update(name="Cobalt"),
     "leaf-r2a.tenants[1] (Cobalt).name: 'Cobalt' is not a DNS-1123 label"),
    (lambda s: s["tenants"][1]["ports"].append({"port": "1bad", "mode": "access"}),
     "leaf-r2a.tenants[1] (cobalt).ports[1]: needs a port name"),
    (lambda s: s["tenants"][1]["ports"].append({"port": "Ethernet8\n", "mode": "access"}),
     "leaf-r2a.tenants[1] (cobalt).ports[1]: needs a port name"),  # a line break would reach the switch's config
    (lambda s: s["tenants"][1]["ports"][0].update(mode="hybrid"),
     "leaf-r2a.tenants[1] (cobalt).ports[0].mode: 'hybrid' is not access or trunk"),
    (lambda s: s["tenants"][1].pop("gateway"), "leaf-r2a.tenants[1]: missing gateway"),
    (lambda s: s["tenants"].append("acme"), "leaf-r2a.tenants[2]: must be a mapping"),
    (lambda s: s.update(role="spine"), "leaf-r2a: a spine carries no tenant networks, but 2 are assigned"),
    (lambda s: s.update(platform="junos"), "leaf-r2a.platform: 'junos' is not one of nvue, sonic, eos"),
    (lambda s: s.update(loopback="10.0.0"), "leaf-r2a.loopback: '10.0.0' is not an IPv4 address"),
])  # fmt: skip
def test_bad_input_is_reported_before_rendering(mutate, expected):
    sw = copy.deepcopy(LEAVES["sonic"])
    mutate(sw)
    problems = check_switch(sw, UNDERLAY)
    assert expected in problems, problems
    with pytest.raises(FabricError) as err:
        validate(sw, UNDERLAY)
    assert expected in err.value.problems


def test_every_problem_at_once():
    sw = copy.deepcopy(LEAVES["nvue"])
    sw["tenants"][0]["vlan"] = 5000
    sw["tenants"][1]["vrf"] = "1bad"
    problems = check_switch(sw, UNDERLAY)
    assert len(problems) == 2, problems


def test_options_and_underlay_are_checked():
    sw = LEAVES["nvue"]
    assert check_switch(sw, {"anycast_mac": "00:00:5E:00:01:01"}) == [
        "underlay.anycast_mac: '00:00:5E:00:01:01' is not a lowercase MAC address"
    ]
    assert check_switch(sw, UNDERLAY, {"route_target_asn": 70000}) == [
        "route_target_asn: 70000 must be a 2-byte ASN 1..65535 (RT format ASN:VNI)"
    ]
    assert check_switch("leaf", UNDERLAY) == ["switch: must be a mapping (the gpucloud_switch host variable), got str"]
    assert check_switch({"name": "x"}, UNDERLAY)[0] == "switch.platform: is required"


GENERATED = load_fleet(generate(nodes=300, tenants=120, switches=8))


@pytest.mark.parametrize("platform", ["nvue", "sonic", "eos"])
def test_valid_switches_have_no_problem(platform):
    for sw in [*switches().values(), *GENERATED["fabric"]["switches"]]:
        assert check_switch(dict(sw, platform=platform), UNDERLAY) == [], sw["name"]


@pytest.mark.parametrize("rule", ["unique", "l3vni", "ports"])
def test_one_bad_tenant_among_many_is_named(rule):
    """A clash found in bulk (a set per field, a port group once) still names the one tenant,
    also when it holds its own copy of the leaf's trunk ports."""
    sw = copy.deepcopy(GENERATED["fabric"]["switches"][0])
    tenants = sw["tenants"]
    i, j = len(tenants) - 3, 5
    t, other = tenants[i], tenants[j]
    t["ports"] = copy.deepcopy(t["ports"])
    where = "leaf000.tenants[%d] (%s)" % (i, t["name"])
    if rule == "unique":
        t["vni"] = other["vni"]
        expected = "%s.vni: %d is already used by leaf000.tenants[%d] (%s) on this switch" % (
            where, other["vni"], j, other["name"])
    elif rule == "l3vni":
        t["l3vni"] = other["vni"]
        expected = "%s.l3vni: %d equals the L2 VNI of leaf000.tenants[%d] (%s); an L3 VNI may not equal any L2 VNI" % (
            where, other["vni"], j, other["name"])
    else:
        access = next(p["port"] for x in tenants for p in x["ports"] if p["mode"] == "access")
        t["ports"].append({"port": access, "mode": "trunk", "node": "x"})
        expected = "leaf000: port %s is both access and trunk" % access
    assert check_switch(sw, UNDERLAY) == [expected]
