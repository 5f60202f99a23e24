# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each platform's one writer (``render_text``), held against the vendors' own definitions.

Every switch of the example fleet and of a generated one, rendered as each platform, and the
tenant lists only a gathered config gives (ports lists that overlap):
NVUE - both files hold one tree, and the NVUE path table of the simulation (written from NVIDIA's
command reference) accepts every path and value of it; SONiC - the config_db passes yanglint
with SONiC's YANG models of the release; EOS - arista.eos's own fact parsers (``state: parsed``)
read every VLAN and every port's exact VLANs back. The delta functions read a tenant's items back
from the same writer; applied to nothing, they give the rendered config.
"""

from __future__ import annotations

import copy
import json

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils import _fabric
from ansible_collections.gpucloud.baremetal.plugins.module_utils import _fabric_platforms as platforms
from ansible_collections.gpucloud.baremetal.plugins.module_utils import _render_eos as eos
from ansible_collections.gpucloud.baremetal.plugins.module_utils import _render_nvue as nvue
from ansible_collections.gpucloud.baremetal.plugins.module_utils import _render_sonic as sonic
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet
from tests.support.fabric import example_model
from tests.support.fleetgen import generate
from tests.support.nvue_api_sim import check_tree
from tests.support.sonic_yang import yanglint

OPTS = _fabric.options_with_defaults(None)
EXAMPLE = example_model()


def _switches():
    generated = load_fleet(generate(nodes=120, tenants=40, switches=8))
    for model in (EXAMPLE, generated):
        for s in model["fabric"]["switches"]:
            for platform in _fabric.PLATFORMS:
                yield "%s-%s" % (s["name"], platform), dict(s, platform=platform), model["fabric"]["underlay"]


SWITCHES = list(_switches())


def check_nvue(files: dict) -> dict:
    tree = nvue.load(files["nvue.yaml"])
    assert nvue.from_nv(files["nvue.nv"]) == tree, "nvue.yaml and nvue.nv say different things"
    assert check_tree(tree) == []
    return tree


def check_sonic(files: dict, release: str) -> None:
    rc, message = yanglint(json.loads(files["sonic.json"]), release)
    assert rc == 0, message


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
    assert vlans == {t["vlan"]: _fabric.marker(t["name"]) for t in tenants}
    for t in tenants:
        for p in t["ports"]:
            got = ports[p["port"]]
            if p["mode"] == "access":
                assert got["access"] == {"vlan": t["vlan"]}, p
            else:
                want = {x["vlan"] for x in tenants if p in x["ports"]}
                allowed = got["trunk"]["trunk_allowed_vlans"]
                assert got["mode"] == "trunk" and allowed not in ("add", "all"), (p, got)
                assert eos._vlan_list(allowed) == want, (p, allowed)


@pytest.mark.parametrize(("name", "switch", "underlay"), SWITCHES, ids=[s[0] for s in SWITCHES])
def test_render_against_the_vendor_definition(name, switch, underlay):
    tenants = _fabric.desired(switch)
    files = platforms.render_files(switch, underlay)
    platform = switch["platform"]
    if platform == "nvue":
        check_nvue(files)
    elif platform == "sonic" and switch["role"] == "leaf" and name.startswith("leaf-"):
        # the switch's declared release (the generated fleet's SONiC renders: test_fabric_sonic_yang)
        check_sonic(files, "master" if sonic.uses_sag(switch) else "202605")
    elif platform == "eos":
        check_eos(files["eos.cfg"], tenants)
    native = files[{"nvue": "nvue.yaml", "sonic": "sonic.json", "eos": "eos.cfg"}[platform]]
    assert platforms.parse_native(platform, native) == tenants
    if "frr.conf" in files:
        frr = platforms.renderer("frr")
        assert frr.parse(files["frr.conf"]) == frr.expected(switch, tenants)


@pytest.mark.parametrize(("name", "switch", "underlay"), SWITCHES[:12], ids=[s[0] for s in SWITCHES[:12]])
def test_delta_from_nothing_is_the_render(name, switch, underlay):
    """The items ``delta`` works on are the writer's own: set on an empty switch, they are its file."""
    tenants = _fabric.desired(switch)
    r = platforms.renderer(switch["platform"])
    d = r.delta(switch, [], tenants, underlay, OPTS)
    files = r.render_text(switch, tenants, underlay, OPTS)
    if switch["platform"] == "nvue":
        assert nvue.tree(d["set"]) == nvue.load(files["nvue.yaml"]) and d["unset"] == []
    elif switch["platform"] == "sonic":
        assert d["set"] == json.loads(files["sonic.json"]) and d["delete"] == []
    else:
        assert eos.parse(d["commands"]) == tenants


def _overlapping(switch: dict) -> list[list[dict]]:
    """Tenant lists a gathered config can give: a port in two lists, a port twice in one list."""
    tenants = copy.deepcopy(_fabric.desired(switch))
    shared = tenants[1]["ports"]
    return [
        [dict(tenants[0], ports=[*tenants[0]["ports"], shared[0]]), *tenants[1:]],
        [dict(tenants[0], ports=[shared[0], shared[0]]), *tenants[1:]],
    ]


@pytest.mark.parametrize("platform", _fabric.PLATFORMS)
def test_overlapping_port_lists_against_the_vendor_definition(platform):
    switch = dict(next(s for s in EXAMPLE["fabric"]["switches"] if s["name"] == "leaf-r1a"), platform=platform)
    underlay = EXAMPLE["fabric"]["underlay"]
    for tenants in _overlapping(switch):
        files = platforms.render_tenants(switch, tenants, underlay, OPTS)
        once = [dict(t, ports=list({p["port"]: p for p in t["ports"]}.values())) for t in tenants]
        if platform == "nvue":
            tree = check_nvue(files)
            port = tenants[1]["ports"][0]["port"]
            vlans = tree["interface"][port]["bridge"]["domain"]["br_default"]["vlan"]
            want = sorted(t["vlan"] for t in once if tenants[1]["ports"][0] in t["ports"])
            assert sorted(int(v) for v in vlans) == want
        elif platform == "sonic":
            check_sonic(files, "202605")
            assert platforms.parse_native("sonic", files["sonic.json"]) == _fabric.normalise(once)
        else:
            check_eos(files["eos.cfg"], once)
            assert platforms.parse_native("eos", files["eos.cfg"]) == _fabric.normalise(once)


@pytest.mark.parametrize("platform", _fabric.PLATFORMS)
def test_colliding_tenants_are_refused_not_merged(platform):
    """Two tenants on one VLAN, or a port named like an interface the config creates, would
    overwrite each other's config on a switch: the writer refuses them (validation does first)."""
    switch = dict(next(s for s in EXAMPLE["fabric"]["switches"] if s["name"] == "leaf-r1a"), platform=platform)
    tenants = copy.deepcopy(_fabric.desired(switch))
    underlay = EXAMPLE["fabric"]["underlay"]
    same_vlan = [*tenants, dict(tenants[0], name="zz", vrf="zz", vni=19999, l3vni=59999)]
    with pytest.raises(_fabric.FabricError):
        platforms.render_tenants(switch, _fabric.normalise(same_vlan), underlay, OPTS)
    if platform != "sonic":
        port = {"nvue": "vlan%d" % tenants[1]["vlan"], "eos": "Vxlan1"}[platform]
        named = [dict(tenants[0], ports=[{"port": port, "mode": "trunk"}]), *tenants[1:]]
        with pytest.raises(_fabric.FabricError):
            platforms.render_tenants(switch, named, underlay, OPTS)


def test_shared_trunk_ports_are_one_list():
    model = load_fleet(generate(nodes=60, tenants=20, switches=5))
    leaf = model["fabric"]["switches"][0]
    trunk = [t for t in _fabric.desired(leaf) if t["ports"] and t["ports"][0]["mode"] == "trunk"]
    assert len(trunk) > 1 and len({id(t["ports"]) for t in trunk}) == 1
    # also from separate but equal lists (hostvars that went through JSON)
    copied = dict(leaf, tenants=copy.deepcopy(leaf["tenants"]))
    trunk = [t for t in _fabric.desired(copied) if t["ports"] and t["ports"][0]["mode"] == "trunk"]
    assert len({id(t["ports"]) for t in trunk}) == 1


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
        assert ifaces.render_config(ifaces.generated_spec, block)["description"] == _fabric.marker(t["name"])
        assert l3.render_config(l3.generated_spec, block)["ipv4"] == [{"virtual": True, "address": t["gateway"]}]
        read.update(
            "interface Vlan%d / %s" % (t["vlan"], line)
            for line in ("description " + _fabric.marker(t["name"]), "ip address virtual " + t["gateway"])
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


EOS_LEAVES = [s for s in SWITCHES if s[1]["platform"] == "eos" and s[1]["role"] == "leaf"]


@pytest.mark.parametrize(("name", "switch", "underlay"), EOS_LEAVES, ids=[s[0] for s in EOS_LEAVES])
def test_eos_render_read_back_by_every_arista_eos_parser(name, switch, underlay):
    """Every line of our EOS render is either read back by an arista.eos parser and compared with
    the tenants, or listed in ``EOS_NOT_READ`` with the reason (and each entry there is used)."""
    import re

    tenants = _fabric.desired(switch)
    text = platforms.render_files(switch, underlay)["eos.cfg"]
    read = eos_read_back_all(text, tenants, switch)
    lines = {" / ".join(item) for item in eos.cli_items(text)}
    rest = lines - read
    unexplained = sorted(line for line in rest if not any(re.fullmatch(p, line) for p in EOS_NOT_READ))
    assert unexplained == [], unexplained
    assert not [line for line in read if any(re.fullmatch(p, line) for p in EOS_NOT_READ)]
    if tenants:
        unused = [p for p in EOS_NOT_READ if not any(re.fullmatch(p, line) for line in rest)]
        assert unused == [], "EOS_NOT_READ lists lines the render no longer has: %s" % unused
