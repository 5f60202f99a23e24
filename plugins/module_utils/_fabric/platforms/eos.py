# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Arista EOS: tenant networks as EOS CLI, and back.

Private to the collection. EOS routes with its own BGP, so VRF, L3 VNI and EVPN are EOS
CLI too (``router bgp ... vlan`` / ``vrf`` blocks); no FRR file for EOS.

Every line is one entry (``cli.Line``): the writer's templates are joined from the entries,
and the parser reads with the same entries. Ownership: ``vlan N`` named ``gpucloud:<tenant>``
(and its SVI described so). A config line is an item: the tuple of lines from the top-level
block down to it.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ..cli import INDENT, Item, Line, block, blocks, first, items
from ..errors import FabricError
from ..model import check_distinct, pairs, port_groups, port_key
from ..ownership import Found, marker, owner, split_partial, stand_in, text_of, without_stand_ins

# Each line of the config, as written and as read. `getval` is given where EOS shows more
# than we write: its list forms (`vlan 10-12,20`, `vxlan vlan 10-12 vni 10010-10012`,
# `switchport trunk allowed vlan 101-102,110`, `... allowed vlan add 110`), `vrf forwarding`.
VARP_MAC = Line("varp_mac", "ip virtual-router mac-address %(mac)s")
VLAN = Line("vlan", "vlan %(vlan)d", r"^vlan (?P<vlans>[\d,-]+)$")
VLAN_NAME = Line("vlan_name", "name %(marker)s", r"^name (?P<marker>.+)$")
VRF_INSTANCE = Line("vrf_instance", "vrf instance %(vrf)s")
VRF_ROUTING = Line("vrf_routing", "ip routing vrf %(vrf)s")
SVI = Line("svi", "interface Vlan%(vlan)d")
SVI_DESCRIPTION = Line("svi_description", "description %(marker)s", r"^description (?P<marker>.+)$")
SVI_VRF = Line("svi_vrf", "vrf %(vrf)s", r"^vrf (?:.* )?(?P<vrf>\S+)$")
# A ``secondary`` virtual address is the operator's (we write one, the primary): not read as the gateway.
SVI_GATEWAY = Line("svi_gateway", "ip address virtual %(gateway)s", r"^ip address virtual\s+(?P<gateway>\S+)\s*$")
VXLAN = Line("vxlan", "interface Vxlan1", r"^interface Vxlan.*$")
VXLAN_SOURCE = Line("vxlan_source", "vxlan source-interface Loopback0")
VXLAN_PORT = Line("vxlan_port", "vxlan udp-port 4789")
VXLAN_VLAN = Line("vxlan_vlan", "vxlan vlan %(vlan)d vni %(vni)d",
                  r"^vxlan vlan (?P<vlans>[\d,-]+) vni (?P<vnis>[\d,-]+)$")  # fmt: skip
VXLAN_VRF = Line("vxlan_vrf", "vxlan vrf %(vrf)s vni %(l3vni)d")
PORT = Line("port", "interface %(port)s", r"^interface\s+(?P<port>.+)$")
PORT_ACCESS = Line("port_access", "switchport access vlan %(vlan)d")
PORT_TRUNK = Line("port_trunk", "switchport mode trunk")
PORT_ALLOWED = Line("port_allowed", "switchport trunk allowed vlan %(vlans)s",
                    r"^switchport trunk allowed vlan (?:add )?(?P<vlans>[\d,-]+)$")  # fmt: skip
BGP = Line("bgp", "router bgp %(asn)d")
BGP_ROUTER_ID = Line("bgp_router_id", "router-id %(loopback)s")
BGP_VLAN = Line("bgp_vlan", "vlan %(vlan)d")
BGP_VRF = Line("bgp_vrf", "vrf %(vrf)s")
RD_AUTO = Line("rd_auto", "rd auto")
RT_BOTH = Line("rt_both", "route-target both %(rt)s")
RT_IMPORT = Line("rt_import", "route-target import evpn %(rt3)s")
RT_EXPORT = Line("rt_export", "route-target export evpn %(rt3)s")
REDISTRIBUTE_LEARNED = Line("redistribute_learned", "redistribute learned")
REDISTRIBUTE_CONNECTED = Line("redistribute_connected", "redistribute connected")
# The top-level blocks the parser reads, in the order they are tried (an SVI or VTEP before a port).
READ = (VLAN, SVI, VXLAN, PORT)

# The writer's templates, joined from the entries once.
_VARP = block(VARP_MAC, ())
_VLAN = block(VLAN, (VLAN_NAME,))
_SVI = block(SVI, (SVI_DESCRIPTION, SVI_VRF, SVI_GATEWAY))
_VXLAN = block(VXLAN, (VXLAN_SOURCE, VXLAN_PORT), end="")
_VXLAN_TENANT = INDENT + VXLAN_VLAN.fmt + "\n" + INDENT + VXLAN_VRF.fmt + "\n"  # vlan, vni, vrf, l3vni
_BGP = "!\n" + block(BGP, (BGP_ROUTER_ID,), end="")
_BGP_TENANT = block(BGP_VLAN, (RD_AUTO, RT_BOTH, REDISTRIBUTE_LEARNED), 1) + block(
    BGP_VRF, (RD_AUTO, RT_IMPORT, RT_EXPORT, REDISTRIBUTE_CONNECTED), 1
)
_PORT_ACCESS = INDENT + PORT_ACCESS.setval + "\n"
_PORT_TRUNK = INDENT + PORT_TRUNK.setval + "\n"
_PORT_ALLOWED = INDENT + PORT_ALLOWED.setval + "\n"

_TOP_RANK = (
    ("ip virtual-router", 0),
    ("vlan ", 1),
    ("vrf instance", 2),
    ("ip routing vrf", 3),
    ("interface Vlan", 5),
    ("interface Vxlan", 6),
    ("router bgp", 7),
    ("interface ", 4),
)


def rt(opts: dict, vni: int) -> str:
    return "%d:%d" % (opts["route_target_asn"], vni)


def _rank(line: str) -> tuple:
    for prefix, rank in _TOP_RANK:
        if line.startswith(prefix):
            return (rank, port_key(line))
    return (9, port_key(line))


def vlan_ranges(vlans: list[int]) -> str:
    """``[102, 103, 104, 110]`` -> ``102-104,110`` (EOS's VLAN list form)."""
    out: list[str] = []
    ordered = sorted(set(vlans))
    start = prev = ordered[0]
    for vlan in [*ordered[1:], None]:
        if vlan is not None and vlan == prev + 1:
            prev = vlan
            continue
        out.append("%d" % start if start == prev else "%d-%d" % (start, prev))
        if vlan is not None:
            start = prev = vlan
    return ",".join(out)


def vlan_list(text: str) -> set[int]:
    """``101-103,110`` -> {101, 102, 103, 110}: EOS's VLAN list form (parts that are not numbers are skipped)."""
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if re.match(r"^\d+-\d+$", part):
            lo, hi = (int(x) for x in part.split("-"))
            out.update(range(lo, hi + 1))
        elif part.isdigit():
            out.add(int(part))
    return out


def number_list(text: str) -> list[int]:
    """``10-12,20`` -> [10, 11, 12, 20], in the order written; [] when it is not such a list."""
    out: list[int] = []
    for part in text.split(","):
        m = re.match(r"^(\d+)(?:-(\d+))?$", part.strip())
        if m is None or (m.group(2) and int(m.group(2)) < int(m.group(1))):
            return []
        out.extend(range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1))
    return out


def to_text(items: list[Item], removals: bool = False) -> list[str]:
    """A delta's items to CLI lines, grouped into blocks; ``removals`` keeps the items' own order."""
    tree: dict[str, dict] = {}
    for item in items:
        node = tree
        for line in item:
            node = node.setdefault(line, {})
    tops = list(tree) if removals else sorted(tree, key=_rank)
    out: list[str] = []
    for top in tops:
        _emit(out, top, tree[top], 0)
        if not removals:
            out.append("!")
    return out


def _emit(out: list[str], line: str, children: dict, depth: int) -> None:
    out.append(INDENT * depth + line)
    for child, grand in children.items():
        _emit(out, child, grand, depth + 1)
        if grand and depth == 0:
            out.append(INDENT + "!")


def render_text(switch: dict, tenants: list[dict], underlay: dict, opts: dict) -> dict[str, str]:
    """``eos.cfg``: the switch's tenants as EOS CLI, blocks in running-config order.

    The one writer of EOS config: ``delta`` reads its tenants' lines back from it
    (``tenant_items``). A trunk port's VLANs are its whole allowed list, one ranged line
    (``switchport trunk allowed vlan 102-104,110``), as EOS shows them; a port block is
    formatted once.
    """
    head = "! gpucloud.baremetal: tenant networks of %s (EOS); generated, do not edit\n" % switch["name"]
    if switch.get("role") != "leaf":
        head += "! %s is a %s: spines carry no tenant networks\n" % (switch["name"], switch.get("role"))
    whole, half = split_partial(tenants)
    text = head + _cli_text(switch, whole, underlay, opts) if whole else head
    if half:
        # Half tenants (as parsed, for state=deleted's diff): the lines each has, after the rest.
        found = [item for t in half for item in tenant_items(switch, t, underlay, opts)]
        text += "! incomplete tenants (%s): the parts found\n" % ", ".join(t["name"] for t in half)
        text += "".join(line + "\n" for line in to_text(found))
    return {"eos.cfg": text}


def _cli_text(switch: dict, tenants: list[dict], underlay: dict, opts: dict) -> str:
    """Blocks in ``_rank`` order (as EOS sorts them), a port's block once."""
    check_distinct(tenants, "vlan", "vrf")
    vlans = [t["vlan"] for t in tenants]
    if vlans != sorted(vlans):
        tenants = sorted(tenants, key=lambda t: t["vlan"])  # blocks of tenants follow their VLAN
    groups = port_groups(tenants)
    clash = [p["port"] for g in groups for p in g.ports if _rank("interface " + p["port"])[0] != 4]
    if clash:
        raise FabricError(["port %s is named like an interface the tenants' config creates (VlanN, Vxlan1)" % clash[0]])
    vlan_t, svi_t, vxlan_t, bgp_t, vrfs, ports = [], [], [], [], [], []
    for t in tenants:
        v = {
            "vlan": t["vlan"],
            "vrf": t["vrf"],
            "marker": marker(t["name"]),
            "gateway": t["gateway"],
            "rt": rt(opts, t["vni"]),
            "rt3": rt(opts, t["l3vni"]),
        }
        vlan_t.append(_VLAN % v)
        svi_t.append(_SVI % v)
        vxlan_t.append(_VXLAN_TENANT % (t["vlan"], t["vni"], t["vrf"], t["l3vni"]))
        bgp_t.append(_BGP_TENANT % v)
        vrfs.append(t["vrf"])
    for g in groups:
        trunk = _PORT_TRUNK + (_PORT_ALLOWED % {"vlans": vlan_ranges(g.vlans)} if g.vlans else "")
        access = _PORT_ACCESS % {"vlan": g.vlans[-1]} if g.vlans else ""
        for p in g.ports:
            line = PORT.fmt % p["port"]
            ports.append((port_key(line), line + "\n" + (access if p["mode"] == "access" else trunk) + "!\n"))
    # Blocks of one kind are sorted by their natural key (``_rank``); tenants come in VLAN order.
    # ``vlan N`` and ``interface VlanN`` sort by N: the tenants' order (canonical, distinct VLANs).
    ports.sort(key=lambda kt: kt[0])
    # each block sorted by its line, as EOS sorts them
    instances = sorted([VRF_INSTANCE.fmt % vrf for vrf in vrfs], key=port_key)
    routings = sorted([VRF_ROUTING.fmt % vrf for vrf in vrfs], key=port_key)
    sw = {"asn": switch["asn"], "loopback": switch["loopback"], "mac": underlay["anycast_mac"]}
    return "".join(
        [
            _VARP % sw,
            *vlan_t,
            *(line + "\n!\n" for line in instances),
            *(line + "\n!\n" for line in routings),
            *(text for unused, text in ports),
            *svi_t,
            _VXLAN,
            *vxlan_t,
            _BGP % sw,
            *bgp_t,
            "!\n",
        ]
    )


# --- delta ---------------------------------------------------------------------------


def cli_items(text: str) -> list[Item]:
    """CLI text to items: each line as the tuple of lines from its top-level block down to it."""
    return items(text)


def global_items(switch: dict, underlay: dict, opts: dict) -> list[Item]:
    """Switch-wide lines every tenant needs (never removed), as the writer writes them."""
    return items(_cli_text(switch, [], underlay, opts))


def tenant_items(switch: dict, t: dict, underlay: dict, opts: dict) -> list[Item]:
    """One tenant's lines, read back from the writer's text.

    A half tenant: the lines of the parts it has (``stand_in``), a block with its lines.
    """
    t, missing = stand_in(t)
    common = set(global_items(switch, underlay, opts))
    own = [i for i in items(_cli_text(switch, [t], underlay, opts)) if i not in common]
    return without_stand_ins(own, missing)


def _negate(item: Item) -> Item:
    line = item[-1]
    if line.startswith("switchport trunk allowed vlan "):
        return (*item[:-1], line.replace(" vlan ", " vlan remove ", 1))
    if line.startswith("switchport access vlan "):
        return (*item[:-1], "no switchport access vlan")
    return (*item[:-1], "no " + line)


def _removal(switch: dict, t: dict, underlay: dict, opts: dict) -> list[Item]:
    """The lines that remove a tenant; a half tenant's: those of the parts it has."""
    own = tenant_items(switch, t, underlay, opts)
    t, missing = stand_in(t)
    bgp = BGP.set(switch)
    vxlan = VXLAN.setval
    found: list[Item] = [
        _negate((bgp, BGP_VLAN.set(t))),
        _negate((bgp, BGP_VRF.set(t))),
        _negate((vxlan, VXLAN_VLAN.set(t))),
        _negate((vxlan, VXLAN_VRF.set(t))),
        _negate((SVI.set(t),)),
    ]
    ports = {PORT.set(p) for p in t["ports"]}
    found += [_negate(i) for i in own if i[0] in ports and i[-1] != PORT_TRUNK.setval]
    found += [_negate((VRF_ROUTING.set(t),)), _negate((VRF_INSTANCE.set(t),)), _negate((VLAN.set(t),))]
    return without_stand_ins(found, missing)


# The keys of a tenant that ``delta`` cannot change in place: it removes the tenant's lines (``no vrf instance``
# among them) and adds them again, so the tenant's VRF is removed and made again with it.
VRF_REMADE_BY = ("vlan", "vrf")


def _shared(item: Item) -> bool:
    return item[-1] == PORT_TRUNK.setval


def delta(switch: dict, before: list[dict], after: list[dict], underlay: dict, opts: dict,
          foreign: dict[str, set[int]] | None = None) -> dict:
    """``{"commands": [CLI lines]}``: removals first, then additions, blocks indented.

    ``foreign``: the VLANs each port's trunk allows that are none of ours (``foreign_trunks`` of the
    running config); a trunk list this writes keeps them."""
    removals: list[Item] = []
    adds: list[Item] = []
    for old, new in pairs(before, after):
        if new is None or (old and any(old[key] != new[key] for key in VRF_REMADE_BY)):
            removals.extend(_removal(switch, old, underlay, opts))
            if new is not None:
                adds.extend(tenant_items(switch, new, underlay, opts))
            continue
        new_items = tenant_items(switch, new, underlay, opts)
        if old is None:
            adds.extend(new_items)
            continue
        old_items = tenant_items(switch, old, underlay, opts)
        new_set, old_set = set(new_items), set(old_items)
        removals.extend(_negate(i) for i in old_items if i not in new_set and not _shared(i))
        adds.extend(i for i in new_items if i not in old_set)
    removals, adds = _trunk_lists(removals, adds, before, after, foreign or {})
    commands = to_text(removals, removals=True)
    if adds:
        commands += [line for line in to_text(global_items(switch, underlay, opts) + adds) if line.strip() != "!"]
    return {"commands": commands}


def commands(switch: dict, before: list[dict], after: list[dict], underlay: dict, opts: dict,
             running: Any = None) -> dict:
    """The native change in the module's result form (``delta``'s); ``running``: the switch's config as
    gathered, whose trunk VLANs that are none of ours each changed trunk list keeps."""
    return delta(switch, before, after, underlay, opts, foreign_trunks(running) if running is not None else {})


def foreign_trunks(config: Any) -> dict[str, set[int]]:
    """``{port: VLANs}``: what each port's ``switchport trunk allowed vlan`` lists (``add`` lines
    included) that is no VLAN of ours (no ``gpucloud:`` name): the operator's own VLANs on a port
    that also carries a tenant's (a management or storage VLAN), which a trunk list written whole
    would drop. A trunk without a list (EOS: every VLAN) has none here."""
    owned: set[int] = set()
    allowed: dict[str, set[int]] = {}
    for line, children in blocks(text_of(config, "EOS")):
        entry, values = first(line, READ)
        kids = [c for c, unused in children]
        if entry is VLAN:
            if any(owner((VLAN_NAME.get(kid) or {}).get("marker", "")) for kid in kids):
                owned.update(number_list(values["vlans"]))
        elif entry is PORT:
            for kid in kids:
                found = PORT_ALLOWED.get(kid)
                if found:
                    allowed.setdefault(values["port"], set()).update(vlan_list(found["vlans"]))
    return {port: vlans - owned for port, vlans in allowed.items() if vlans - owned}


class _Ownership(NamedTuple):
    ours: set[int]  # VLANs named as ours
    others: set[int]  # the other VLANs
    vrfs: set[str]  # vrf instance V
    bound: list[tuple[int | None, str, str]]  # each interface in a VRF: (its VLAN for an SVI else None, name, VRF)


def _read_ownership(config: Any) -> _Ownership:
    """One pass over an EOS running-config for the three readers below."""
    ours: set[int] = set()
    others: set[int] = set()
    vrfs: set[str] = set()
    bound: list[tuple[int | None, str, str]] = []
    for line, children in blocks(text_of(config, "EOS")):
        entry, values = first(line, READ)
        if entry is VLAN:
            named = any(owner((VLAN_NAME.get(c) or {}).get("marker", "")) for c, unused in children)
            (ours if named else others).update(number_list(values["vlans"]))
        elif entry in (SVI, PORT):
            vlan = int(values["vlan"]) if entry is SVI else None
            name = line.split(None, 1)[1]
            bound.extend((vlan, name, SVI_VRF.get(c)["vrf"]) for c, unused in children if SVI_VRF.get(c))
        elif entry is None and VRF_INSTANCE.get(line):
            vrfs.add(VRF_INSTANCE.get(line)["vrf"])
    return _Ownership(ours, others, vrfs, bound)


def foreign_vlans(config: Any) -> set[int]:
    """The VLANs of an EOS running-config that are none of ours (no ``gpucloud:`` name): a tenant put on one
    would take the operator's VLAN over, and remove it with the tenant."""
    return _read_ownership(config).others


def foreign_vrfs(config: Any) -> set[str]:
    """The VRFs (``vrf instance V``) of an EOS running-config that no SVI of ours is in: a tenant put in one would
    share the operator's VRF, and remove it when the tenant goes."""
    read = _read_ownership(config)
    return read.vrfs - {vrf for vlan, unused, vrf in read.bound if vlan is not None and vlan in read.ours}


def vrf_users(config: Any) -> dict[str, list[str]]:
    """``{VRF: interfaces}``: the interfaces of an EOS running-config that are not ours (an SVI of a VLAN without
    our name, a routed port, a loopback, the management port) by the VRF each is in (``vrf V``): removing a VRF of
    ours that one of them is in would move the operator's interface out of it, or break it."""
    read = _read_ownership(config)
    out: dict[str, list[str]] = {}
    for vlan, name, vrf in read.bound:
        if vlan is None or vlan not in read.ours:
            out.setdefault(vrf, []).append(name)
    return {vrf: sorted(names, key=port_key) for vrf, names in out.items()}


def _trunk_vlans(tenants: list[dict]) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for t in tenants:
        for p in t["ports"]:
            if p["mode"] == "trunk":
                out.setdefault(p["port"], set()).add(t["vlan"])
    return out


def _trunk_lists(removals: list[Item], adds: list[Item], before: list[dict], after: list[dict],
                 foreign: dict[str, set[int]]) -> tuple:
    """Trunk memberships as each changed port's whole allowed list, never ``add``/``remove``.

    ``add`` only appends to a list that allows everything by default, so a port that has just
    become a trunk would carry every VLAN of the switch; the whole list (or ``none``) is exact.
    The list keeps the port's ``foreign`` VLANs (not ours): ours come and go, theirs stay.
    """
    old, new = _trunk_vlans(before), _trunk_vlans(after)

    def membership(item: Item) -> bool:
        return len(item) == 2 and item[1].startswith("switchport trunk allowed vlan ")

    removals = [i for i in removals if not membership(i)]
    adds = [i for i in adds if not membership(i)]
    for port in sorted(set(old) | set(new), key=port_key):
        if old.get(port) == new.get(port):
            continue
        iface = PORT.set({"port": port})
        keep = foreign.get(port, set())
        if new.get(port):
            adds.append((iface, PORT_TRUNK.setval))
            adds.append((iface, PORT_ALLOWED.set({"vlans": vlan_ranges(sorted(new[port] | keep))})))
        else:
            removals.append((iface, PORT_ALLOWED.set({"vlans": vlan_ranges(sorted(keep)) if keep else "none"})))
    return removals, adds


# --- parse ---------------------------------------------------------------------------


def parse(config: Any) -> list[dict]:
    """Tenants we own in an EOS running-config (or our rendered text), neutral shape.

    EOS's list forms are read as EOS defines them: a ``vlan 10-12,20`` block (running-config
    groups VLANs with the same config so; arista.eos's vlans parser reads it the same way) is
    each of those VLANs, ``switchport trunk allowed vlan 10-12,20`` allows each, and
    ``vxlan vlan 10-12 vni 10010-10012`` maps them pairwise. One tenant's marker on more than one
    VLAN is an ``IncompleteTenantError`` (the collection writes it on one).
    """
    names: dict[int, str] = {}
    svis: dict[int, dict] = {}
    l2vni: dict[int, int] = {}
    l3vni: dict[str, int] = {}
    ports: dict[int, list[dict]] = {}
    for line, children in blocks(text_of(config, "EOS")):
        entry, values = first(line, READ)
        kids = [c for c, unused in children]
        if entry is VLAN:
            for kid in kids:
                name = VLAN_NAME.get(kid)
                if name and owner(name["marker"]):
                    for vlan in number_list(values["vlans"]):
                        names[vlan] = owner(name["marker"])
        elif entry is SVI:
            svi: dict[str, str] = {}
            for kid in kids:
                child, found = first(kid, (SVI_VRF, SVI_GATEWAY))
                svi.update(found)
            svis[int(values["vlan"])] = svi
        elif entry is VXLAN:
            for kid in kids:
                child, found = first(kid, (VXLAN_VLAN, VXLAN_VRF))
                if child is VXLAN_VLAN:
                    vlans, vnis = number_list(found["vlans"]), number_list(found["vnis"])
                    if len(vlans) == len(vnis):
                        l2vni.update((vlan, vnis[i]) for i, vlan in enumerate(vlans))
                elif child is VXLAN_VRF:
                    l3vni[found["vrf"]] = int(found["l3vni"])
        elif entry is PORT:
            for kid in kids:
                child, found = first(kid, (PORT_ACCESS, PORT_ALLOWED))
                if child is PORT_ACCESS:
                    ports.setdefault(int(found["vlan"]), []).append({"port": values["port"], "mode": "access"})
                elif child is PORT_ALLOWED:
                    for v in sorted(vlan_list(found["vlans"])):
                        ports.setdefault(v, []).append({"port": values["port"], "mode": "trunk"})
    return _tenants(names, svis, l2vni, l3vni, ports)


def _tenants(names: dict, svis: dict, l2vni: dict, l3vni: dict, ports: dict) -> list[dict]:
    found = Found()
    by_name: dict[str, list[int]] = {}
    for vlan, name in names.items():
        by_name.setdefault(name, []).append(vlan)
    found.conflicts.extend(
        "%s name (%s): one tenant's marker on %d VLANs; the collection writes it on one"
        % ("vlan " + vlan_ranges(vlans), marker(name), len(vlans))
        for name, vlans in sorted(by_name.items())
        if len(vlans) > 1
    )
    for vlan, name in names.items():
        svi = svis.get(vlan, {})
        vrf = svi.get("vrf", "")
        paths = {
            "vni": "interface Vxlan1 vxlan vlan %d vni" % vlan,
            "vrf": "interface Vlan%d vrf" % vlan,
            "l3vni": "interface Vxlan1 vxlan vrf %s vni" % (vrf or "<vrf>"),
            "gateway": "interface Vlan%d ip address virtual" % vlan,
        }
        found.add(
            "vlan %d name" % vlan,
            paths,
            name=name,
            vlan=vlan,
            vni=l2vni.get(vlan, 0),
            vrf=vrf,
            l3vni=l3vni.get(vrf, 0),
            gateway=svi.get("gateway", ""),
            ports=ports.get(vlan, []),
        )
    return found.result()


# --- what results may show -------------------------------------------------------------------


def _ours(block: Line | None, line: str, ours: set[int], vrfs: set[str]) -> bool:
    """Whether a line of a block (an SVI of ours, the VXLAN interface, a port) belongs to one of our tenants."""
    if block is SVI:
        return first(line, (SVI_DESCRIPTION, SVI_VRF, SVI_GATEWAY))[0] is not None
    entry, values = first(line, (VXLAN_VLAN, VXLAN_VRF) if block is VXLAN else (PORT_ACCESS, PORT_ALLOWED))
    if entry is VXLAN_VLAN:
        return bool(ours & set(number_list(values["vlans"])))
    if entry is VXLAN_VRF:
        return values["vrf"] in vrfs
    if entry is PORT_ACCESS:
        return int(values["vlan"]) in ours
    return entry is PORT_ALLOWED and bool(ours & vlan_list(values["vlans"]))


def owned(config: Any) -> str:
    """The part of an EOS running-config (text or lines) the collection reads, as running-config text: the
    VLANs named as ours, their SVIs, their VXLAN maps and the ports' lines that carry them (a trunk's whole
    allowed list, the VLANs on it that are not ours included: a change writes it back whole). ``parse`` reads the
    same tenants from it as from the whole config; nothing else of the switch (users, SNMP, AAA, BGP sessions,
    other VLANs) is in it: what a result may show. Read ``show running-config sanitized`` all the same."""
    tree = blocks(text_of(config, "EOS"))
    ours: set[int] = set()
    kept: list[tuple[str, list[str]]] = []
    for line, children in tree:
        entry, values = first(line, READ)
        if entry is VLAN:
            names = [c for c, unused in children if owner((VLAN_NAME.get(c) or {}).get("marker"))]
            if names:
                ours.update(number_list(values["vlans"]))
                kept.append((line, names))
    svis = [(line, children) for line, children in tree
            if first(line, READ)[0] is SVI and int(first(line, READ)[1]["vlan"]) in ours]
    vrfs = {SVI_VRF.get(c)["vrf"] for unused, children in svis for c, unused in children if SVI_VRF.get(c)}
    for line, children in tree:
        entry = first(line, READ)[0]
        if entry is SVI and (line, children) not in svis:
            continue
        if entry in (SVI, VXLAN, PORT):
            lines = [c for c, unused in children if _ours(entry, c, ours, vrfs)]
            if entry is PORT and any(PORT_ALLOWED.get(c) for c in lines):
                # a trunk of ours: its whole allowed list (every line of it, ``add`` lines of VLANs not ours
                # included), which the change writes back whole with the VLANs that are not ours kept
                lines = [c for c, unused in children if _ours(entry, c, ours, vrfs) or PORT_ALLOWED.get(c)]
            if lines or entry is SVI:
                kept.append((line, lines))
    return "".join(line + "\n" + "".join(INDENT + c + "\n" for c in lines) + "!\n" for line, lines in kept)
