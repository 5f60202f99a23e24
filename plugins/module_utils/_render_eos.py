# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Arista EOS: tenant networks as EOS CLI, and back.

Private to the collection. EOS routes with its own BGP, so VRF, L3 VNI and EVPN are EOS
CLI too (``router bgp ... vlan`` / ``vrf`` blocks); no FRR file for EOS.

Ownership: ``vlan N`` named ``gpucloud:<tenant>`` (and its SVI described so). A config line
is an item: the tuple of lines from the top-level block down to it.
"""

from __future__ import annotations

import re
from typing import Any

from ._fabric import (
    FabricError,
    check_distinct,
    check_parsed,
    incomplete,
    marker,
    owner,
    pairs,
    port_groups,
    port_key,
    split_partial,
    stand_in,
    without_stand_ins,
)

INDENT = "   "
Item = tuple[str, ...]
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
        items = [item for t in half for item in tenant_items(switch, t, underlay, opts)]
        text += "! incomplete tenants (%s): the parts found\n" % ", ".join(t["name"] for t in half)
        text += "".join(line + "\n" for line in to_text(items))
    return {"eos.cfg": text}


_VRF_BGP = (
    "   vlan %(vlan)d\n      rd auto\n      route-target both %(rt)s\n      redistribute learned\n   !\n"
    "   vrf %(vrf)s\n      rd auto\n      route-target import evpn %(rt3)s\n"
    "      route-target export evpn %(rt3)s\n      redistribute connected\n   !\n"
)
_SVI = "interface Vlan%(vlan)d\n   description %(marker)s\n   vrf %(vrf)s\n   ip address virtual %(gateway)s\n!\n"


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
    vlans, svis, vxlan, bgp = [], [], [], []
    vrf_lines = []
    ports = []
    for t in tenants:
        v = {
            "vlan": t["vlan"],
            "vrf": t["vrf"],
            "marker": marker(t["name"]),
            "gateway": t["gateway"],
            "rt": rt(opts, t["vni"]),
            "rt3": rt(opts, t["l3vni"]),
        }
        vlans.append("vlan %(vlan)d\n   name %(marker)s\n!\n" % v)
        svis.append(_SVI % v)
        vxlan.append("   vxlan vlan %d vni %d\n   vxlan vrf %s vni %d\n" % (t["vlan"], t["vni"], t["vrf"], t["l3vni"]))
        bgp.append(_VRF_BGP % v)
        vrf_lines.append(t["vrf"])
    for g in groups:
        trunk = "   switchport mode trunk\n" + (
            "   switchport trunk allowed vlan %s\n" % vlan_ranges(g.vlans) if g.vlans else ""
        )
        access = "   switchport access vlan %d\n" % g.vlans[-1] if g.vlans else ""
        for p in g.ports:
            line = "interface %s" % p["port"]
            ports.append((port_key(line), line + "\n" + (access if p["mode"] == "access" else trunk) + "!\n"))
    # Blocks of one kind are sorted by their natural key (``_rank``); tenants come in VLAN order.
    # ``vlan N`` and ``interface VlanN`` sort by N: the tenants' order (canonical, distinct VLANs).
    vrf_sorted = sorted(vrf_lines, key=lambda vrf: port_key("vrf instance " + vrf))
    routing_sorted = sorted(vrf_lines, key=lambda vrf: port_key("ip routing vrf " + vrf))
    ports.sort(key=lambda kt: kt[0])
    return "".join(
        [
            "ip virtual-router mac-address %s\n!\n" % underlay["anycast_mac"],
            *vlans,
            *("vrf instance %s\n!\n" % vrf for vrf in vrf_sorted),
            *("ip routing vrf %s\n!\n" % vrf for vrf in routing_sorted),
            *(text for unused, text in ports),
            *svis,
            "interface Vxlan1\n   vxlan source-interface Loopback0\n   vxlan udp-port 4789\n",
            *vxlan,
            "!\nrouter bgp %d\n   router-id %s\n" % (switch["asn"], switch["loopback"]),
            *bgp,
            "!\n",
        ]
    )


# --- delta ---------------------------------------------------------------------------


def cli_items(text: str) -> list[Item]:
    """CLI text to items: each line as the tuple of lines from its top-level block down to it."""
    out: list[Item] = []

    def walk(prefix: Item, nodes: list) -> None:
        for line, children in nodes:
            if children:
                walk((*prefix, line), children)
            else:
                out.append((*prefix, line))

    walk((), blocks(text))
    return out


def global_items(switch: dict, underlay: dict, opts: dict) -> list[Item]:
    """Switch-wide lines every tenant needs (never removed), as the writer writes them."""
    return cli_items(_cli_text(switch, [], underlay, opts))


def tenant_items(switch: dict, t: dict, underlay: dict, opts: dict) -> list[Item]:
    """One tenant's lines, read back from the writer's text.

    A half tenant: the lines of the parts it has (``stand_in``), a block with its lines.
    """
    t, missing = stand_in(t)
    common = set(global_items(switch, underlay, opts))
    items = [i for i in cli_items(_cli_text(switch, [t], underlay, opts)) if i not in common]
    return without_stand_ins(items, missing)


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
    bgp = "router bgp %d" % switch["asn"]
    items: list[Item] = [
        (bgp, "no vlan %d" % t["vlan"]),
        (bgp, "no vrf %s" % t["vrf"]),
        ("interface Vxlan1", "no vxlan vlan %d vni %d" % (t["vlan"], t["vni"])),
        ("interface Vxlan1", "no vxlan vrf %s vni %d" % (t["vrf"], t["l3vni"])),
        ("no interface Vlan%d" % t["vlan"],),
    ]
    ports = {"interface %s" % p["port"] for p in t["ports"]}
    items += [_negate(i) for i in own if i[0] in ports and i[-1] != "switchport mode trunk"]
    items += [("no ip routing vrf %s" % t["vrf"],), ("no vrf instance %s" % t["vrf"],), ("no vlan %d" % t["vlan"],)]
    return without_stand_ins(items, missing)


def _shared(item: Item) -> bool:
    return item[-1] == "switchport mode trunk"


def delta(switch: dict, before: list[dict], after: list[dict], underlay: dict, opts: dict) -> dict:
    """``{"commands": [CLI lines]}``: removals first, then additions, blocks indented."""
    removals: list[Item] = []
    adds: list[Item] = []
    for old, new in pairs(before, after):
        if new is None or (old and (old["vlan"], old["vrf"]) != (new["vlan"], new["vrf"])):
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
    removals, adds = _trunk_lists(removals, adds, before, after)
    commands = to_text(removals, removals=True)
    if adds:
        commands += [line for line in to_text(global_items(switch, underlay, opts) + adds) if line.strip() != "!"]
    return {"commands": commands}


def _trunk_lists(removals: list[Item], adds: list[Item], before: list[dict], after: list[dict]) -> tuple:
    """Trunk memberships as each changed port's whole allowed list, never ``add``/``remove``.

    ``add`` only appends to a list that allows everything by default, so a port that has just
    become a trunk would carry every VLAN of the switch; the whole list (or ``none``) is exact.
    """
    def trunk_vlans(tenants: list[dict]) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for t in tenants:
            for p in t["ports"]:
                if p["mode"] == "trunk":
                    out.setdefault(p["port"], set()).add(t["vlan"])
        return out

    old, new = trunk_vlans(before), trunk_vlans(after)

    def membership(item: Item) -> bool:
        return len(item) == 2 and item[1].startswith("switchport trunk allowed vlan ")

    removals = [i for i in removals if not membership(i)]
    adds = [i for i in adds if not membership(i)]
    for port in sorted(set(old) | set(new), key=port_key):
        if old.get(port) == new.get(port):
            continue
        iface = "interface %s" % port
        if new.get(port):
            adds.append((iface, "switchport mode trunk"))
            adds.append((iface, "switchport trunk allowed vlan " + vlan_ranges(sorted(new[port]))))
        else:
            removals.append((iface, "switchport trunk allowed vlan none"))
    return removals, adds


# --- parse ---------------------------------------------------------------------------


def blocks(text: str) -> list[tuple[str, list]]:
    """Running-config text to a tree of (line, children) by indentation."""
    root: list[tuple[str, list]] = []
    stack: list[tuple[int, list]] = [(-1, root)]
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("!"):
            continue
        depth = len(raw) - len(raw.lstrip(" "))
        while stack[-1][0] >= depth:
            stack.pop()
        children: list = []
        stack[-1][1].append((stripped, children))
        stack.append((depth, children))
    return root


def _vlan_list(text: str) -> set[int]:
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if re.match(r"^\d+-\d+$", part):
            lo, hi = (int(x) for x in part.split("-"))
            out.update(range(lo, hi + 1))
        elif part.isdigit():
            out.add(int(part))
    return out


def _number_list(text: str) -> list[int]:
    """``10-12,20`` -> [10, 11, 12, 20], in the order written; [] when it is not such a list."""
    out: list[int] = []
    for part in text.split(","):
        m = re.match(r"^(\d+)(?:-(\d+))?$", part.strip())
        if m is None or (m.group(2) and int(m.group(2)) < int(m.group(1))):
            return []
        out.extend(range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1))
    return out


def parse(config: Any) -> list[dict]:
    """Tenants we own in an EOS running-config (or our rendered text), neutral shape.

    EOS's list forms are read as EOS defines them: a ``vlan 10-12,20`` block (running-config
    groups VLANs with the same config so; arista.eos's vlans parser reads it the same way) is
    each of those VLANs, ``switchport trunk allowed vlan 10-12,20`` allows each, and
    ``vxlan vlan 10-12 vni 10010-10012`` maps them pairwise. One tenant's marker on more than one
    VLAN is an ``IncompleteTenantError`` (the collection writes it on one).
    """
    text = "\n".join(config) if isinstance(config, list) else str(config or "")
    names: dict[int, str] = {}
    svis: dict[int, dict] = {}
    l2vni: dict[int, int] = {}
    l3vni: dict[str, int] = {}
    ports: dict[int, list[dict]] = {}
    for line, children in blocks(text):
        kids = [c for c, unused in children]
        m = re.match(r"^vlan ([\d,-]+)$", line)
        if m:
            for kid in kids:
                if kid.startswith("name ") and owner(kid[5:]):
                    for vlan in _number_list(m.group(1)):
                        names[vlan] = owner(kid[5:])
            continue
        m = re.match(r"^interface Vlan(\d+)$", line)
        if m:
            svi: dict[str, str] = {}
            for kid in kids:
                if kid.startswith("vrf ") or kid.startswith("vrf forwarding "):
                    svi["vrf"] = kid.split()[-1]
                elif kid.startswith("ip address virtual "):
                    svi["gateway"] = kid.split()[3]
            svis[int(m.group(1))] = svi
            continue
        if line.startswith("interface Vxlan"):
            for kid in kids:
                m = re.match(r"^vxlan vlan ([\d,-]+) vni ([\d,-]+)$", kid)
                if m:
                    vlans, vnis = _number_list(m.group(1)), _number_list(m.group(2))
                    if len(vlans) == len(vnis):
                        l2vni.update((vlan, vnis[i]) for i, vlan in enumerate(vlans))
                m = re.match(r"^vxlan vrf (\S+) vni (\d+)$", kid)
                if m:
                    l3vni[m.group(1)] = int(m.group(2))
            continue
        if line.startswith("interface "):
            port = line.split(None, 1)[1]
            for kid in kids:
                m = re.match(r"^switchport access vlan (\d+)$", kid)
                if m:
                    ports.setdefault(int(m.group(1)), []).append({"port": port, "mode": "access"})
                m = re.match(r"^switchport trunk allowed vlan (?:add )?([\d,-]+)$", kid)
                if m:
                    for v in sorted(_vlan_list(m.group(1))):
                        ports.setdefault(v, []).append({"port": port, "mode": "trunk"})
    tenants = []
    problems: list[str] = []
    half: list[str] = []
    by_name: dict[str, list[int]] = {}
    for vlan, name in names.items():
        by_name.setdefault(name, []).append(vlan)
    conflicts = [
        "vlan %s name (%s): one tenant's marker on %d VLANs; the collection writes it on one"
        % (vlan_ranges(vlans), marker(name), len(vlans))
        for name, vlans in sorted(by_name.items())
        if len(vlans) > 1
    ]
    for vlan, name in names.items():
        svi = svis.get(vlan, {})
        vrf = svi.get("vrf", "")
        t = {
            "name": name,
            "vlan": vlan,
            "vni": l2vni.get(vlan, 0),
            "vrf": vrf,
            "l3vni": l3vni.get(vrf, 0),
            "gateway": svi.get("gateway", ""),
            "subnet": "",
            "ports": sorted(ports.get(vlan, []), key=lambda p: port_key(p["port"])),
        }
        paths = {
            "vni": "interface Vxlan1 vxlan vlan %d vni" % vlan,
            "vrf": "interface Vlan%d vrf" % vlan,
            "l3vni": "interface Vxlan1 vxlan vrf %s vni" % (vrf or "<vrf>"),
            "gateway": "interface Vlan%d ip address virtual" % vlan,
        }
        gaps = incomplete("vlan %d name" % vlan, t, paths)
        if gaps:
            problems.extend(gaps)
            half.append(name)
        tenants.append(t)
    return check_parsed(tenants, problems, conflicts, half)
