# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""EOS: the one writer read back by arista.eos's own parsers, and the parser on EOS's text.

Every render (the example fleet's and a generated fleet's switches as EOS) is read back by each
arista.eos (``state: parsed``) resource parser that covers a part of it and compared with the
tenants; the lines none reads are listed exactly, with the reason. Our parser reads
running-config text in the form EOS prints it, with EOS's list forms (``data/vendor``).
"""

from __future__ import annotations

import copy
import re
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
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.ownership import marker, owner
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.platforms import eos
from tests.support.fabric import every_switch, overlapping, switches, underlay

VENDOR = Path(__file__).parents[2] / "data" / "vendor"
OPTS = options_with_defaults(None)
SWITCHES = every_switch("eos")


def eos_read_back(text: str) -> tuple[dict, dict]:
    """arista.eos's fact parsers on our text: VLAN names by id, and l2_interfaces by port."""
    from ansible_collections.arista.eos.plugins.module_utils.network.eos.facts.l2_interfaces.l2_interfaces import (
        L2_interfacesFacts,
    )
    from ansible_collections.arista.eos.plugins.module_utils.network.eos.facts.vlans.vlans import VlansFacts

    vlan_blocks = "\n".join(b for b in ("\n" + text).split("\n!") if b.strip().startswith("vlan "))
    vlans = {}
    if vlan_blocks:
        facts = VlansFacts(module=None).populate_facts(None, {"ansible_network_resources": {}}, vlan_blocks)
        vlans = {v["vlan_id"]: v.get("name") for v in facts["ansible_network_resources"]["vlans"]}
    l2 = L2_interfacesFacts(module=None)
    blocks = ("\n" + text).split("\ninterface ")[1:]
    ports = {b.split()[0]: l2.render_config(l2.generated_spec, b) for b in blocks}
    return vlans, ports


def check_eos(text: str, tenants: list[dict]) -> None:
    vlans, ports = eos_read_back(text)
    assert vlans == {t["vlan"]: marker(t["name"]) for t in tenants}
    for t in tenants:
        for p in t["ports"]:
            got = ports[p["port"]]
            if p["mode"] == "access":
                assert got["access"] == {"vlan": t["vlan"]}, p
            else:
                want = {x["vlan"] for x in tenants if p in x["ports"]}
                allowed = got["trunk"]["trunk_allowed_vlans"]
                assert got["mode"] == "trunk" and allowed not in ("add", "all"), (p, got)
                assert eos.vlan_list(allowed) == want, (p, allowed)


@pytest.mark.parametrize(("name", "switch", "underlay"), SWITCHES, ids=[s[0] for s in SWITCHES])
def test_render_against_the_vendor_definition(name, switch, underlay):
    tenants = desired(switch)
    files = registry.render_files(switch, underlay)
    assert set(files) == {"eos.cfg"}
    check_eos(files["eos.cfg"], tenants)
    assert registry.parse_native("eos", files["eos.cfg"]) == tenants


@pytest.mark.parametrize(("name", "switch", "underlay"), SWITCHES[:6], ids=[s[0] for s in SWITCHES[:6]])
def test_delta_from_nothing_is_the_render(name, switch, underlay):
    """The items ``delta`` works on are the writer's own: set on an empty switch, they are its file."""
    tenants = desired(switch)
    assert eos.parse(eos.delta(switch, [], tenants, underlay, OPTS)["commands"]) == tenants


def test_overlapping_port_lists_against_the_vendor_definition():
    switch = dict(switches()["leaf-r1a"], platform="eos")
    for tenants in overlapping(switch):
        files = registry.render_tenants(switch, tenants, underlay(), OPTS)
        once = [dict(t, ports=list({p["port"]: p for p in t["ports"]}.values())) for t in tenants]
        check_eos(files["eos.cfg"], once)
        assert registry.parse_native("eos", files["eos.cfg"]) == normalise(once)


def test_colliding_tenants_are_refused_not_merged():
    switch = dict(switches()["leaf-r1a"], platform="eos")
    tenants = copy.deepcopy(desired(switch))
    same_vlan = [*tenants, dict(tenants[0], name="zz", vrf="zz", vni=19999, l3vni=59999)]
    with pytest.raises(FabricError):
        registry.render_tenants(switch, normalise(same_vlan), underlay(), OPTS)
    named = [dict(tenants[0], ports=[{"port": "Vxlan1", "mode": "trunk"}]), *tenants[1:]]
    with pytest.raises(FabricError, match="named like an interface"):
        registry.render_tenants(switch, named, underlay(), OPTS)


# Lines of our EOS render that no arista.eos (12.0.0) resource parser reads, each with the reason.
# ../shared/FACTS.md's EOS section names only `redistribute learned` (valid EOS, refused by
# eos_bgp_global); the other lines are Arista's EVPN/VXLAN CLI, which arista.eos has no module for.
EOS_NOT_READ = {
    r"ip virtual-router mac-address \S+": "no arista.eos resource module reads the virtual-router (VARP) MAC",
    r"ip routing vrf \S+": "no arista.eos resource module reads ip routing; vrf_global reads vrf instance blocks only",
    r"interface Vxlan1 / .*": "arista.eos has no VXLAN resource module (interface Vxlan1)",
    r"interface Vlan\d+ / vrf \S+": "eos_interfaces and eos_l3_interfaces read no VRF membership",
    r"router bgp \d+ / (vlan \d+|vrf \S+) / rd auto": "eos_bgp_global reads no rd",
    r"router bgp \d+ / vlan \d+ / redistribute learned": "eos_bgp_global parses it, its argspec refuses protocol 'learned'",
    r"router bgp \d+ / vrf \S+ / route-target import evpn \S+": (
        "eos_bgp_global keeps one route_target per vrf block: the export line after it replaces it"
    ),
}


def eos_read_back_all(text: str, tenants: list[dict], switch: dict) -> set[str]:
    """Every part of our EOS text that an arista.eos parser reads, compared with what we meant.

    Returns the lines (``block / line``) it compared; the caller checks that the rest is exactly
    ``EOS_NOT_READ``.
    """
    from ansible_collections.arista.eos.plugins.module_utils.network.eos.facts.interfaces.interfaces import (
        InterfacesFacts,
    )
    from ansible_collections.arista.eos.plugins.module_utils.network.eos.facts.l3_interfaces.l3_interfaces import (
        L3_interfacesFacts,
    )
    from ansible_collections.arista.eos.plugins.module_utils.network.eos.rm_templates.bgp_global import (
        Bgp_globalTemplate,
    )
    from ansible_collections.arista.eos.plugins.module_utils.network.eos.rm_templates.vrf_global import (
        Vrf_globalTemplate,
    )

    read: set[str] = set()
    check_eos(text, tenants)  # vlans and l2_interfaces
    for item in eos.cli_items(text):
        if item[0].startswith("vlan ") or (item[0].startswith("interface ") and item[-1].startswith("switchport")):
            read.add(" / ".join(item))
    # vrf instance blocks: eos_vrf_global
    vrf_lines = [line for line in text.splitlines() if line.startswith("vrf instance ")]
    vrfs = Vrf_globalTemplate(lines=vrf_lines, module=None).parse()
    assert sorted(vrfs) == sorted(t["vrf"] for t in tenants)
    read.update(vrf_lines)
    # SVIs: eos_interfaces (description) and eos_l3_interfaces (ip address virtual)
    ifaces, l3 = InterfacesFacts(module=None), L3_interfacesFacts(module=None)
    for t in tenants:
        block = next(b for b in ("\n" + text).split("\ninterface ")[1:] if b.split()[0] == "Vlan%d" % t["vlan"])
        assert ifaces.render_config(ifaces.generated_spec, block)["description"] == marker(t["name"])
        assert l3.render_config(l3.generated_spec, block)["ipv4"] == [{"virtual": True, "address": t["gateway"]}]
        read.update(
            "interface Vlan%d / %s" % (t["vlan"], line)
            for line in ("description " + marker(t["name"]), "ip address virtual " + t["gateway"])
        )
    # router bgp: eos_bgp_global, one vlan/vrf block at a time (it keeps one vlan per instance)
    bgp = "router bgp %d" % switch["asn"]
    nodes = dict(eos.blocks(text))[bgp]
    for line, children in nodes:
        lines = [bgp, "   " + line, *("      " + c for c, unused in children)]
        got = Bgp_globalTemplate(lines=lines, module=None).parse()
        assert got["as_number"] == switch["asn"]
        if not children:
            assert got["vrfs"]["vrf_"]["router_id"] == switch["loopback"] and line == "router-id " + switch["loopback"]
            read.add("%s / %s" % (bgp, line))
            continue
        t = next(x for x in tenants if line in ("vlan %d" % x["vlan"], "vrf %s" % x["vrf"]))
        if line.startswith("vlan "):
            block = got["vrfs"]["vrf_"]
            assert block["vlan"] == t["vlan"]
            assert block["route_target"] == {"action": "both", "target": eos.rt(OPTS, t["vni"])}
            read.add("%s / %s / route-target both %s" % (bgp, line, eos.rt(OPTS, t["vni"])))
        else:
            block = got["vrfs"]["vrf_" + t["vrf"]]
            assert block["route_target"] == {"action": "export", "type": "evpn", "target": eos.rt(OPTS, t["l3vni"])}
            assert block["redistribute"] == [{"protocol": "connected"}]
            read.update(
                "%s / %s / %s" % (bgp, line, c)
                for c in ("route-target export evpn " + eos.rt(OPTS, t["l3vni"]), "redistribute connected")
            )
    return read


EOS_LEAVES = [s for s in SWITCHES if s[1]["role"] == "leaf"]


@pytest.mark.parametrize(("name", "switch", "underlay"), EOS_LEAVES, ids=[s[0] for s in EOS_LEAVES])
def test_eos_render_read_back_by_every_arista_eos_parser(name, switch, underlay):
    """Every line of our EOS render is either read back by an arista.eos parser and compared with
    the tenants, or listed in ``EOS_NOT_READ`` with the reason (and each entry there is used)."""
    tenants = desired(switch)
    text = registry.render_files(switch, underlay)["eos.cfg"]
    read = eos_read_back_all(text, tenants, switch)
    lines = {" / ".join(item) for item in eos.cli_items(text)}
    rest = lines - read
    unexplained = sorted(line for line in rest if not any(re.fullmatch(p, line) for p in EOS_NOT_READ))
    assert unexplained == [], unexplained
    assert not [line for line in read if any(re.fullmatch(p, line) for p in EOS_NOT_READ)]
    if tenants:
        unused = [p for p in EOS_NOT_READ if not any(re.fullmatch(p, line) for line in rest)]
        assert unused == [], "EOS_NOT_READ lists lines the render no longer has: %s" % unused


def test_eos_trunk_vlans_are_one_ranged_line_and_parse_back():
    assert eos.vlan_ranges([110, 102, 103, 104, 120, 121]) == "102-104,110,120-121"
    switch = copy.deepcopy(dict(switches()["leaf-r1a"], platform="eos"))
    beta = next(t for t in switch["tenants"] if t["name"] == "beta")
    extra = []
    for i, vlan in enumerate((103, 104, 110)):
        t = copy.deepcopy(beta)
        t.update(name="extra%d" % i, vlan=vlan, vni=20000 + vlan, vrf="extra%d" % i, l3vni=60000 + vlan,
                 subnet="10.%d.0.0/24" % (200 + i), gateway="10.%d.0.1/24" % (200 + i))
        extra.append(t)
    switch["tenants"] = sorted(switch["tenants"] + extra, key=lambda t: t["vlan"])
    text = registry.render_files(switch, underlay())["eos.cfg"]
    trunk_lines = [line.strip() for line in text.splitlines() if "trunk allowed vlan" in line]
    assert trunk_lines and set(trunk_lines) == {"switchport trunk allowed vlan 102-104,110"}
    assert registry.parse_native("eos", text) == desired(switch)


def test_eos_render_read_back_by_arista_eos_l2_interfaces():
    """arista.eos's own l2_interfaces fact parser (an independent reader of EOS text) sees each
    port's exact list: an `allowed vlan add N` line reads as the list 'add', and a trunk with no
    list allows every VLAN of the switch."""
    from ansible_collections.arista.eos.plugins.module_utils.network.eos.facts.l2_interfaces.l2_interfaces import (
        L2_interfacesFacts,
    )

    facts = L2_interfacesFacts(module=None)
    for name, switch in switches().items():
        if switch["role"] != "leaf":
            continue
        sw = dict(switch, platform="eos")
        text = registry.render_files(sw, underlay())["eos.cfg"]
        blocks = ("\n" + text).split("\ninterface ")[1:]
        parsed = {b.split()[0]: facts.render_config(facts.generated_spec, b) for b in blocks}
        for t in desired(sw):
            for p in t["ports"]:
                got = parsed[p["port"]]
                if p["mode"] == "access":
                    assert got["access"] == {"vlan": t["vlan"]}, (name, p)
                else:
                    want = {x["vlan"] for x in desired(sw) if p in x["ports"]}
                    assert got["mode"] == "trunk", (name, p)
                    allowed = got["trunk"]["trunk_allowed_vlans"]
                    assert _render_eos_vlans(allowed) == want, (name, p, allowed)


def _render_eos_vlans(text):
    assert text not in ("add", "all"), "the trunk's allowed list is %r" % text
    return eos.vlan_list(text)


def test_eos_parser_reads_running_config_text():
    """Running-config as EOS prints it (vendor documentation form), not our own output."""
    running = """\
vlan 101
   name gpucloud:acme
!
vlan 102
   name gpucloud:beta
!
interface Ethernet1
   description server01
   switchport access vlan 101
!
interface Ethernet2
   description server02
   switchport trunk allowed vlan 101-102
   switchport mode trunk
!
interface Vlan101
   description gpucloud:acme
   vrf acme
   ip address virtual 10.101.0.1/24
!
interface Vlan102
   description gpucloud:beta
   vrf beta
   ip address virtual 10.102.0.1/24
!
interface Vxlan1
   vxlan source-interface Loopback0
   vxlan udp-port 4789
   vxlan vlan 101 vni 10101
   vxlan vlan 102 vni 10102
   vxlan vrf acme vni 50101
   vxlan vrf beta vni 50102
!
"""
    tenants = {t["name"]: t for t in eos.parse(running)}
    assert tenants["acme"]["ports"] == [{"port": "Ethernet1", "mode": "access"}, {"port": "Ethernet2", "mode": "trunk"}]
    assert tenants["beta"]["ports"] == [{"port": "Ethernet2", "mode": "trunk"}]
    beta = tenants["beta"]
    assert (beta["vni"], beta["l3vni"], beta["gateway"]) == (10102, 50102, "10.102.0.1/24")


# --- EOS -----------------------------------------------------------------------------


def test_eos_half_tenant_is_an_error_naming_what_is_missing():
    text = (
        "vlan 10\n   name gpucloud:a\n!\ninterface Vlan10\n   vrf RED\n   ip address virtual 10.0.10.1/24\n!\n"
        "interface Vxlan1\n   vxlan vlan 10 vni 10\n!\n"
    )
    with pytest.raises(IncompleteTenantError) as err:
        registry.parse_native("eos", text)
    assert err.value.problems == ["vlan 10 name (gpucloud:a): no L3 VNI (interface Vxlan1 vxlan vrf RED vni)"]
    assert eos.parse(text + "interface Vxlan1\n   vxlan vrf RED vni 4001\n")[0]["l3vni"] == 4001


EOS_RANGES = (VENDOR / "eos-running-config-ranges.cfg").read_text()


def test_eos_running_config_ranges_are_expanded_as_eos_defines_them():
    """``vlan 10,20`` / ``vlan 30-32`` blocks, ranged trunk lists and ``vxlan vlan A-B vni X-Y``.

    Before (issue 8) a ``vlan 101-102`` block was not read at all (``^vlan (\\d+)$``) and a ranged
    ``vxlan vlan`` map left its tenants without an L2 VNI (an IncompleteTenantError).
    """
    tenants = eos.parse(EOS_RANGES)
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
    ours = {t["vlan"]: marker(t["name"]) for t in eos.parse(EOS_RANGES)}
    assert ours == {vlan: name for vlan, name in theirs.items() if owner(name)}


def test_eos_one_marker_on_a_vlan_range_is_refused():
    """``vlan 101,103`` named ``gpucloud:acme``: one tenant on two VLANs, which the collection never
    writes; planning on either would touch the other. Refused, also for deleted."""
    text = EOS_RANGES.replace("vlan 101\n", "vlan 101,103\n")
    with pytest.raises(IncompleteTenantError) as err:
        eos.parse(text)
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
    assert eos.number_list(line) == vlans


def test_a_running_config_given_as_a_list_must_be_lines():
    text = registry.render_files(dict(switches()["leaf-r1a"], platform="eos"), underlay())["eos.cfg"]
    assert eos.parse(text.splitlines()) == eos.parse(text)
    with pytest.raises(NativeConfigError, match="must hold EOS config lines"):
        eos.parse(["vlan 10", 10])


def _with_hand_trunks(switch: dict, tenant: dict) -> str:
    """A running config holding ``tenant`` on trunk Ethernet2, which also carries the operator's VLAN 10 (named by
    hand, none of ours), and a trunk Ethernet3 of the operator's own, its list written in two lines as EOS does."""
    ours = eos.delta(switch, [], [tenant], underlay(), OPTS)["commands"]
    text = "\n".join(ours).replace("switchport trunk allowed vlan %d" % tenant["vlan"],
                                   "switchport trunk allowed vlan 10,%d" % tenant["vlan"])
    assert "allowed vlan 10," in text
    return ("vlan 10\n   name mgmt\n!\n" + text
            + "\ninterface Ethernet3\n   switchport trunk allowed vlan 20-21\n   switchport trunk allowed vlan add 30\n"
              "   switchport mode trunk\n!\n")


def test_a_trunk_list_keeps_the_operators_own_vlans_as_tenants_come_and_go():
    """The allowed list is written whole (``add`` on a new trunk would allow every VLAN); written from our tenants
    alone it dropped the operator's VLANs on the same port (a management VLAN: the server gone from the network)."""
    switch = dict(switches()["leaf-r1a"], platform="eos")
    a, b = (dict(t, ports=[{"port": "Ethernet2", "mode": "trunk"}]) for t in desired(switch)[:2])
    b["ports"].append({"port": "Ethernet3", "mode": "trunk"})
    running = _with_hand_trunks(switch, a)
    assert eos.foreign_trunks(running) == {"Ethernet2": {10}, "Ethernet3": {20, 21, 30}}
    assert eos.parse(running) == [a]

    def trunk_lines(after: list[dict], given: object) -> dict[str, str]:
        lines = eos.commands(switch, [a], after, underlay(), OPTS, given)["commands"]
        out, port = {}, ""
        for line in lines:
            port = line.split(" ", 1)[1] if line.startswith("interface Ethernet") else port
            if "switchport trunk allowed vlan" in line:
                out[port] = line.strip()
        return out

    vlans = sorted([a["vlan"], b["vlan"]])
    assert trunk_lines([a, b], running) == {
        "Ethernet2": "switchport trunk allowed vlan " + eos.vlan_ranges([10, *vlans]),
        "Ethernet3": "switchport trunk allowed vlan " + eos.vlan_ranges([20, 21, 30, b["vlan"]])}
    assert trunk_lines([], running) == {"Ethernet2": "switchport trunk allowed vlan 10"}
    # Without the running config (what the change was given before), the operator's VLANs were dropped.
    assert trunk_lines([], None) == {"Ethernet2": "switchport trunk allowed vlan none"}
    assert trunk_lines([a, b], None)["Ethernet3"] == "switchport trunk allowed vlan %d" % b["vlan"]


def test_the_module_path_gives_the_running_config_to_the_trunk_lists():
    """Through the registry, as switch_tenants' merged/overridden states run it."""
    switch = dict(switches()["leaf-r1a"], platform="eos")
    a = dict(desired(switch)[0], ports=[{"port": "Ethernet2", "mode": "trunk"}])
    lines = registry.commands(switch, [a], [], underlay(), OPTS, _with_hand_trunks(switch, a))["commands"]
    assert "   switchport trunk allowed vlan 10" in lines and not any(line.endswith(" none") for line in lines), lines


def test_the_owned_part_keeps_a_trunks_whole_list_so_the_change_keeps_the_operators_vlans():
    """The roles give switch_tenants only the owned part of the running config (owned_config): a trunk of ours keeps
    every line of its allowed list there, ``add`` lines of VLANs not ours included, else the list written whole
    would drop them."""
    switch = dict(switches()["leaf-r1a"], platform="eos")
    a = dict(desired(switch)[0], ports=[{"port": "Ethernet2", "mode": "trunk"}])
    running = _with_hand_trunks(switch, a).replace(
        "switchport trunk allowed vlan 10,%d\n" % a["vlan"],
        "switchport trunk allowed vlan 10,%d\n   switchport trunk allowed vlan add 200-210\n" % a["vlan"])
    assert "allowed vlan add 200-210" in running
    part = eos.owned(running)
    assert "switchport trunk allowed vlan add 200-210" in part and "Ethernet3" not in part and "name mgmt" not in part
    assert eos.foreign_trunks(part) == {"Ethernet2": {10, *range(200, 211)}}
    lines = eos.commands(switch, [a], [], underlay(), OPTS, part)["commands"]
    assert "   switchport trunk allowed vlan 10,200-210" in lines, lines


def test_a_secondary_virtual_address_of_the_operators_is_not_read_as_the_gateway():
    """`ip address virtual A secondary` on an SVI of ours is the operator's: the tenant's gateway stays the primary,
    no second value stops the plan, and the change does not touch the secondary line."""
    switch = dict(switches()["leaf-r1a"], platform="eos")
    tenant = desired(switch)[0]
    svi = "interface Vlan%d" % tenant["vlan"]
    text = "\n".join(eos.delta(switch, [], [tenant], underlay(), OPTS)["commands"])
    primary = "ip address virtual %s" % tenant["gateway"]
    assert svi in text and primary in text
    running = text.replace(primary, primary + "\n   ip address virtual 192.0.2.1/24 secondary")
    assert [t["gateway"] for t in eos.parse(running)] == [tenant["gateway"]]
    assert "192.0.2.1/24" not in eos.owned(running)
    assert eos.commands(switch, eos.parse(running), [tenant], underlay(), OPTS, running)["commands"] == []


def test_the_interfaces_not_ours_are_read_by_the_vrf_each_is_in():
    """An SVI of a VLAN of the operator's, a routed port, a loopback and the management port, each in a VRF (ours or
    not); an SVI of ours is not named, whatever its VRF."""
    switch = dict(switches()["leaf-r1a"], platform="eos")
    tenant = desired(switch)[0]
    text = "\n".join(eos.delta(switch, [], [tenant], underlay(), OPTS)["commands"]) + "\n"
    running = text + (
        "vlan 998-999\n   name OPS\n!\ninterface Vlan999\n   vrf %(vrf)s\n   ip address 10.99.0.1/24\n!\n"
        "interface Vlan998\n   vrf forwarding OPS\n!\ninterface Ethernet10\n   no switchport\n   vrf %(vrf)s\n!\n"
        "interface Ethernet9\n   no switchport\n   vrf %(vrf)s\n!\ninterface Loopback5\n   vrf OPS\n!\n"
        "interface Management1\n   vrf MGMT\n!\ninterface Ethernet11\n   switchport access vlan 999\n!\n"
        % {"vrf": tenant["vrf"]})
    assert eos.vrf_users(running) == {tenant["vrf"]: ["Ethernet9", "Ethernet10", "Vlan999"],
                                      "OPS": ["Loopback5", "Vlan998"], "MGMT": ["Management1"]}
    assert registry.vrf_users("eos", running) == {"MGMT": ["Management1"], "OPS": ["Loopback5", "Vlan998"],
                                                  tenant["vrf"]: ["Ethernet9", "Ethernet10", "Vlan999"]}
    assert eos.vrf_users(text) == {} and eos.vrf_users("") == {}
