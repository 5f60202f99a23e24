# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA Cumulus Linux (NVUE): tenant networks as NVUE config, and back.

Private to the collection. One writer (``render_text``) produces both files of a switch:

- the patch file of ``nv config patch`` (YAML: ``- set: TREE``), whose tree is what the NVUE
  REST API takes in ``PATCH /nvue_v1/?rev=ID`` and returns from ``GET /nvue_v1/?rev=applied``;
- ``nv set`` commands.

``delta`` works on ``items``, ``(path, value)`` pairs (value ``None``: a key with no
attributes, ``vni: {10101: {}}``), read back from the writer's ``nv set`` lines of a tenant
(``tenant_items``); ``tree`` and ``nv_set``/``nv_unset`` turn a delta into the REST body and
commands.

Ownership: an SVI ``interface vlanN`` whose ``description`` is ``gpucloud:<tenant>`` marks the
tenant's VLAN, VNI, VRF and port memberships as ours. Nothing else is ever unset.
Anycast gateway: VRR on the SVI (``ip vrr address``/``mac-address``), the VRF's L3 VNI with
``vrf V evpn vni``; NVUE generates the FRR config from the ``vrf V router bgp`` part.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from typing import Any
from urllib.parse import quote, unquote

from ansible.module_utils.common.yaml import yaml_load

from ..errors import FabricError, NativeConfigError
from ..model import PortGroup, check_distinct, group_ids, pairs, port_groups, port_key
from ..ownership import Found, at, marker, number, owner, split_partial, stand_in, without_stand_ins

try:
    from yaml import YAMLError
except ImportError:  # pragma: no cover - ansible-core brings PyYAML
    YAMLError = ValueError  # type: ignore[assignment,misc]

BRIDGE = "br_default"
Path = tuple[str, ...]
Item = tuple[Path, Any]
# Path ends whose last word takes a value (everything else is a key with no attributes).
_SCALAR_LEAVES = frozenset(
    {"type", "description", "vrf", "enable", "mac-address", "autonomous-system", "router-id", "access"}
)
_SVI = re.compile(r"^vlan(\d+)$")


def rt(opts: dict, vni: int) -> str:
    return "%d:%d" % (opts["route_target_asn"], vni)


def tenant_roots(t: dict) -> list[Path]:
    """What to unset to remove a tenant: whole objects, plus its memberships on shared ports.

    A half tenant (parsed, ``state=deleted``): the objects it names; not what it lacks.
    """
    t, missing = stand_in(t)
    roots: list[Path] = [
        ("interface", "vlan%d" % t["vlan"]),
        ("vrf", t["vrf"]),
        ("evpn", "vni", str(t["vni"])),
        ("bridge", "domain", BRIDGE, "vlan", str(t["vlan"])),
    ]
    for p in t["ports"]:
        if p["mode"] == "access":
            roots.append(("interface", p["port"], "bridge", "domain", BRIDGE, "access"))
        else:
            roots.append(("interface", p["port"], "bridge", "domain", BRIDGE, "vlan", str(t["vlan"])))
    return without_stand_ins(roots, missing)


def tree(items: list[Item]) -> dict:
    out: dict = {}
    for path, value in items:
        node = out
        for key in path[:-1]:
            node = node.setdefault(key, {})
        if value is None:
            node.setdefault(path[-1], {})
        else:
            node[path[-1]] = value
    return out


def _word(value: Any) -> str:
    text = str(value)
    return '"%s"' % text if not text or re.search(r"\s", text) else text


def nv_set(items: list[Item]) -> list[str]:
    return ["nv set " + " ".join(path) + ("" if v is None else " " + _word(v)) for path, v in items]


def nv_unset(paths: list[Path]) -> list[str]:
    return ["nv unset " + " ".join(path) for path in paths]


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    text = str(value)
    if re.fullmatch(r"^[A-Za-z_][A-Za-z0-9_./-]*$", text) and text not in ("on", "off", "yes", "no", "true", "false"):
        return text
    return "'%s'" % text.replace("'", "''")


_yaml_scalar_cached = functools.lru_cache(maxsize=65536, typed=True)(_yaml_scalar)


def render_text(switch: dict, tenants: list[dict], underlay: dict, opts: dict, nv: bool = True) -> dict[str, str]:
    """Files: ``nvue.yaml`` (``nv config patch`` file) and, with ``nv``, ``nvue.nv`` (``nv set``).

    The one writer of NVUE config: ``delta`` reads its tenants' items back from its ``nv set``
    lines (``tenant_items``). The tree is written in the order the REST API returns it: a
    tenant's SVI is followed by the ports it brings first. A port list shared by many tenants
    (a leaf's trunk ports) is formatted once per file, not once per tenant.
    """
    head = "# gpucloud.baremetal: tenant networks of %s (NVUE); generated, do not edit\n" % switch["name"]
    whole, half = split_partial(tenants)
    if half:
        return _with_half(switch, whole, half, underlay, opts, nv, head)
    if not tenants:
        return {"nvue.yaml": head + "[]\n", **({"nvue.nv": head} if nv else {})}
    check_distinct(tenants, "vlan", "vni", "vrf")
    ids = group_ids(tenants)
    groups = port_groups(tenants, ids)
    svis = {"vlan%d" % t["vlan"] for t in tenants}
    clash = sorted({p["port"] for g in groups for p in g.ports} & svis)
    if clash:
        raise FabricError(["port %s is named like a tenant's SVI; NVUE has one interface of that name" % clash[0]])
    out = {"nvue.yaml": head + _yaml_text(switch, tenants, groups, underlay, opts)}
    if nv:
        out["nvue.nv"] = head + _nv_text(switch, tenants, underlay, opts, ids)
    return out


def _with_half(
    switch: dict, whole: list[dict], half: list[dict], underlay: dict, opts: dict, nv: bool, head: str
) -> dict[str, str]:
    """The files with half tenants (as parsed, for ``state=deleted``'s diff): the whole ones as
    always, then the parts each half tenant has, as one more ``- set:`` entry and ``nv set`` lines."""
    out = render_text(switch, whole, underlay, opts, nv)
    items = [item for t in half for item in tenant_items(switch, t, underlay, opts)]
    names = ", ".join(t["name"] for t in half)
    out["nvue.yaml"] = (out["nvue.yaml"] if whole else head) + (
        "# incomplete tenants (%s): the parts found\n- set: %s\n" % (names, json.dumps(tree(items)))
    )
    if nv:
        out["nvue.nv"] += "# incomplete tenants (%s): the parts found\n" % names
        out["nvue.nv"] += "".join(line + "\n" for line in nv_set(items))
    return out


_Y_EVPN = "        %(vni)s:\n          route-target:\n            both:\n              %(rt)s: {}\n"
_Y_BRIDGE = "            %(vlan)s:\n              vni:\n                %(vni)s: {}\n"
_Y_SVI = (
    "      %(svi)s:\n        type: svi\n        vlan: %(vlan_int)s\n        description: %(marker)s\n"
    "        ip:\n          vrf: %(vrf)s\n%(own_address)s"
    "          vrr:\n            enable: 'on'\n            address:\n"
    "              %(gateway)s: {}\n            mac-address: %(mac)s\n            state:\n              up: {}\n"
)
_Y_VRF = (
    "      %(vrf)s:\n        evpn:\n          enable: 'on'\n          vni:\n            %(l3vni)s: {}\n"
    "        router:\n          bgp:\n            enable: 'on'\n            autonomous-system: %(asn)s\n"
    "            router-id: %(loopback)s\n            address-family:\n              ipv4-unicast:\n"
    "                enable: 'on'\n                redistribute:\n                  connected:\n"
    "                    enable: 'on'\n                route-export:\n                  to-evpn:\n"
    "                    enable: 'on'\n            route-export:\n              to-evpn:\n"
    "                route-target:\n                  %(rt3)s: {}\n            route-import:\n"
    "              from-evpn:\n                route-target:\n                  %(rt3)s: {}\n"
)
_Y_PORT = "      %s:\n        bridge:\n          domain:\n            br_default:\n"


def _yaml_text(switch: dict, tenants: list[dict], groups: list[PortGroup], underlay: dict, opts: dict) -> str:
    q = _yaml_scalar_cached
    sw = {"asn": q(switch["asn"]), "loopback": q(switch["loopback"]), "mac": q(underlay["anycast_mac"])}
    evpn, bridge, iface, vrfs = [], [], [], []
    starts: dict[int, list[PortGroup]] = {}
    for g in groups:
        starts.setdefault(g.first, []).append(g)
    for i, t in enumerate(tenants):
        v = dict(
            sw,
            vni="'%d'" % t["vni"],  # digits, a key: always quoted, as _yaml_scalar does
            rt=q(rt(opts, t["vni"])),
            vlan="'%d'" % t["vlan"],
            vlan_int=t["vlan"],
            svi="vlan%d" % t["vlan"],
            marker=q(marker(t["name"])),
            vrf=q(t["vrf"]),
            gateway=q(t["gateway"]),
            own_address="          address:\n            %s: {}\n" % q(t["address"]) if t.get("address") else "",
            l3vni="'%d'" % t["l3vni"],
            rt3=q(rt(opts, t["l3vni"])),
        )
        evpn.append(_Y_EVPN % v)
        bridge.append(_Y_BRIDGE % v)
        vrfs.append(_Y_VRF % v)
        iface.append(_Y_SVI % v)
        iface.extend(_yaml_ports(g) for g in starts.get(i, ()))  # ports appear with their first tenant
    return "".join(
        [
            "- set:\n    nve:\n      vxlan:\n        enable: 'on'\n        source:\n          address: %(loopback)s\n"
            "    evpn:\n      enable: 'on'\n      vni:\n" % sw,
            *evpn,
            "    router:\n      bgp:\n        enable: 'on'\n        autonomous-system: %(asn)s\n"
            "        router-id: %(loopback)s\n    bridge:\n      domain:\n        br_default:\n          vlan:\n" % sw,
            *bridge,
            "    interface:\n",
            *iface,
            "    vrf:\n",
            *vrfs,
        ]
    )


def _yaml_ports(g: PortGroup) -> str:
    """The ``interface`` entries of a group's ports: access VLAN (the last tenant's) or trunk VLANs."""
    trunk = "              vlan:\n" + "".join("                '%d': {}\n" % v for v in g.vlans)
    access = "              access: %d\n" % g.vlans[-1]
    return "".join((_Y_PORT % _yaml_scalar(p["port"])) + (access if p["mode"] == "access" else trunk) for p in g.ports)


_NV_GLOBAL = (
    "nv set nve vxlan enable on\nnv set nve vxlan source address %(loopback)s\nnv set evpn enable on\n"
    "nv set router bgp enable on\nnv set router bgp autonomous-system %(asn)s\n"
    "nv set router bgp router-id %(loopback)s\n"
)
_NV_TENANT = (
    "nv set bridge domain br_default vlan %(vlan)d vni %(vni)d\n"
    "nv set evpn vni %(vni)d route-target both %(rt)s\n"
    "nv set interface %(svi)s type svi\n"
    "nv set interface %(svi)s vlan %(vlan)d\n"
    "nv set interface %(svi)s description %(marker)s\n"
    "nv set interface %(svi)s ip vrf %(vrf_value)s\n"
    "%(own_address)s"
    "nv set interface %(svi)s ip vrr enable on\n"
    "nv set interface %(svi)s ip vrr address %(gateway)s\n"
    "nv set interface %(svi)s ip vrr mac-address %(mac)s\n"
    "nv set interface %(svi)s ip vrr state up\n"
    "nv set vrf %(vrf)s evpn enable on\n"
    "nv set vrf %(vrf)s evpn vni %(l3vni)d\n"
    "nv set vrf %(vrf)s router bgp enable on\n"
    "nv set vrf %(vrf)s router bgp autonomous-system %(asn)s\n"
    "nv set vrf %(vrf)s router bgp router-id %(loopback)s\n"
    "nv set vrf %(vrf)s router bgp address-family ipv4-unicast enable on\n"
    "nv set vrf %(vrf)s router bgp address-family ipv4-unicast redistribute connected enable on\n"
    "nv set vrf %(vrf)s router bgp address-family ipv4-unicast route-export to-evpn enable on\n"
    # The L3 VNI's route-targets sit on the VRF's BGP instance, not under the address family
    # (NVUE reference: vrf <vrf-id> router bgp route-export to-evpn route-target <rt>).
    "nv set vrf %(vrf)s router bgp route-export to-evpn route-target %(rt3)s\n"
    "nv set vrf %(vrf)s router bgp route-import from-evpn route-target %(rt3)s\n"
)


def _nv_switch(switch: dict, underlay: dict) -> dict:
    return {"asn": _word(switch["asn"]), "loopback": _word(switch["loopback"]), "mac": _word(underlay["anycast_mac"])}


def _nv_tenant(sw: dict, t: dict, opts: dict, ports: str) -> str:
    """One tenant's ``nv set`` lines; ``ports``: its ports' lines (``_nv_ports``)."""
    svi = "vlan%d" % t["vlan"]
    text = _NV_TENANT % dict(
        sw,
        vlan=t["vlan"],
        vni=t["vni"],
        rt=rt(opts, t["vni"]),
        svi=svi,
        marker=_word(marker(t["name"])),
        vrf=t["vrf"],
        vrf_value=_word(t["vrf"]),
        own_address="nv set interface %s ip address %s\n" % (svi, t["address"]) if t.get("address") else "",
        gateway=t["gateway"],
        l3vni=t["l3vni"],
        rt3=rt(opts, t["l3vni"]),
    )
    return text + ports.replace("\0", str(t["vlan"])) if ports else text


def _nv_ports(ports: list[dict]) -> str:
    """The ``nv set`` lines of a ports list, with the VLAN as NUL: formatted once per port group."""
    return "".join(
        "nv set interface %s bridge domain br_default access \0\n" % p["port"]
        if p["mode"] == "access"
        else "nv set interface %s bridge domain br_default vlan \0\n" % p["port"]
        for p in ports
    )


def _nv_text(switch: dict, tenants: list[dict], underlay: dict, opts: dict, ids: list[int]) -> str:
    """The ``nv set`` lines; ``ids``: the tenants' port groups (``group_ids``)."""
    sw = _nv_switch(switch, underlay)
    ports: dict[int, str] = {}  # port group -> its lines
    out = [_NV_GLOBAL % sw]
    for t, gid in zip(tenants, ids, strict=True):
        own = ports.get(gid)
        if own is None:
            own = ports[gid] = _nv_ports(t["ports"])
        out.append(_nv_tenant(sw, t, opts, own))
    return "".join(out)


def nv_items(text: str) -> list[Item]:
    """``nv set`` lines (as rendered or as ``nv config show -o commands``) to items.

    NVUE's range and list forms are expanded as NVUE expands them (``expand``): ``nv set
    interface swp1-3,swp5 bridge domain br_default vlan 10,20-22`` is 4 x 4 items.
    """
    items: list[Item] = []
    for raw in text.splitlines():
        words = raw.split()
        if len(words) < 3 or words[0] != "nv" or words[1] != "set":
            continue
        path = tuple(w.strip('"') for w in words[2:])
        for one in expand(path) if _MAYBE_RANGE.search(raw) else (path,):
            if _scalar_path(one[:-1]):
                value: Any = one[-1]
                items.append((one[:-1], int(value) if value.isdigit() else value))
            else:
                items.append((one, None))
    return items


# A line that may hold a range or list (a comma, or a digit before a dash): only those are expanded.
_MAYBE_RANGE = re.compile(r",|\d-")
# One element of an interface list: ``swp1``, ``swp1-3``, ``swp1s0-3``, ``swp1-swp3``, ``5-6``
# (digits only: the name before it in the list gives the prefix, ``swp1-2,5-6``).
_NAME_PART = re.compile(r"^(?P<prefix>[A-Za-z][A-Za-z0-9_.:/]*?)?(?P<lo>\d+)(?:-(?P=prefix)?(?P<hi>\d+))?$")
_NUMBER_PART = re.compile(r"^(?P<lo>\d+)(?:-(?P<hi>\d+))?$")


def _key_kind(path: Path, i: int) -> str | None:
    """Whether ``path[i]`` is an identifier that NVUE takes as a range or list: ``name``, ``number`` or None.

    Interface ids (``interface <id>``, ``bond member <id>``) and the VLANs of a bridge domain
    (``bridge domain <d> vlan <vid>``, ``interface <id> bridge domain <d> vlan <vid>``).
    """
    if i == 1 and path[0] == "interface":
        return "name"
    if i >= 2 and path[i - 1] == "member" and path[i - 2] == "bond":
        return "name"
    if i >= 3 and path[i - 1] == "vlan" and path[i - 3] == "domain":
        return "number"
    return None


def _expand_word(word: str, kind: str) -> list[str]:
    """``swp1-2,5-6`` -> swp1, swp2, swp5, swp6 (NVUE's ``nv set interface -h``); ``10,20-22`` -> 10, 20, 21, 22.

    A word that is not a range or list of that kind stays as it is (NVUE would name the error).
    """
    pattern = _NAME_PART if kind == "name" else _NUMBER_PART
    out: list[str] = []
    prefix = ""
    for part in word.split(","):
        m = pattern.match(part)
        if m is None:
            return [word]
        if kind == "name":
            if m.group("prefix"):
                prefix = m.group("prefix")
            elif not prefix:
                return [word]
        if m.group("hi") is None:
            out.append(prefix + part if kind == "name" and not m.group("prefix") else part)
            continue
        lo, hi = int(m.group("lo")), int(m.group("hi"))
        if hi < lo:
            return [word]
        out.extend("%s%d" % (prefix, n) for n in range(lo, hi + 1))
    return out


def expand(path: Path) -> list[Path]:
    """One ``nv set`` path to the paths it stands for: its ranges and lists expanded (a product)."""
    paths: list[Path] = [()]
    for i, word in enumerate(path):
        kind = _key_kind(path, i)
        words = _expand_word(word, kind) if kind and ("," in word or "-" in word) else [word]
        paths = [(*p, w) for p in paths for w in words]
    return paths


def global_items(switch: dict, underlay: dict) -> list[Item]:
    """Switch-wide settings every tenant needs; set, never unset (they are not a tenant's)."""
    return nv_items(_NV_GLOBAL % _nv_switch(switch, underlay))


def tenant_items(switch: dict, t: dict, underlay: dict, opts: dict) -> list[Item]:
    """One tenant's config as items, read back from the writer's ``nv set`` lines.

    A half tenant: the items of the parts it has (``stand_in``).
    """
    t, missing = stand_in(t)
    items = nv_items(_nv_tenant(_nv_switch(switch, underlay), t, opts, _nv_ports(t["ports"])))
    return without_stand_ins(items, missing)


# --- delta ---------------------------------------------------------------------------


def delta(switch: dict, before: list[dict], after: list[dict], underlay: dict, opts: dict,
          foreign: set[str] | frozenset[str] = frozenset()) -> dict:
    """What takes ``before`` to ``after``: ``{"unset": [paths], "set": [items]}``.

    ``foreign``: the ports whose bridge membership also holds a VLAN that is none of ours
    (``foreign_ports`` of the running config); such a port stays in the bridge when our last
    VLAN leaves it."""
    unset: list[Path] = []
    sets: list[Item] = []
    for old, new in pairs(before, after):
        if new is None:
            unset.extend(tenant_roots(old))
            continue
        new_items = tenant_items(switch, new, underlay, opts)
        if old is None:
            sets.extend(new_items)
            continue
        if old["vlan"] != new["vlan"] or old["vrf"] != new["vrf"] or old["vni"] != new["vni"]:
            unset.extend(tenant_roots(old))
            sets.extend(new_items)
            continue
        old_items = tenant_items(switch, old, underlay, opts)
        new_paths = {path for path, unused in new_items}
        old_set = set(old_items)
        unset.extend(path for path, unused in old_items if path not in new_paths)
        sets.extend(item for item in new_items if item not in old_set)
    if sets:
        sets = global_items(switch, underlay) + sets
    return {"unset": _leave_bridge(unset, before, after, foreign), "set": sets}


def commands(switch: dict, before: list[dict], after: list[dict], underlay: dict, opts: dict,
             running: Any = None) -> dict:
    """The native change in the module's result form: ``unset`` (REST paths, each part
    URL-encoded), ``set`` (the REST body) and ``nv`` (the same as ``nv unset``/``nv set`` lines).
    ``running``: the switch's config as gathered, whose ports with VLANs not ours stay bridged."""
    d = delta(switch, before, after, underlay, opts, foreign_ports(running) if running is not None else frozenset())
    return {
        "unset": ["/".join(quote(part, safe="") for part in path) for path in d["unset"]],
        "set": tree(d["set"]),
        "nv": nv_unset(d["unset"]) + nv_set(d["set"]),
    }


def _our_svi(name: Any, iface: Any) -> Any:
    """The name's match (group 1: its VLAN) when the interface is an SVI marked as ours, else None."""
    m = _SVI.match(str(name))
    return m if m and owner(at(iface, "interface %s" % name).get("description")) is not None else None


def _our_svis(interfaces: dict) -> list[tuple[str, dict]]:
    """``(VLAN, SVI)`` of every SVI marked as ours, the VLAN as text."""
    out = []
    for name, iface in interfaces.items():
        m = _our_svi(name, iface)
        if m:
            out.append((str(iface.get("vlan") or m.group(1)), iface))
    return out


def _vlan_keys(key: Any) -> set[int]:
    """A bridge VLAN key as NVUE takes it: ``10``, a range ``10-20`` or a list ``10,20-22``."""
    out: set[int] = set()
    for part in str(key).split(","):
        m = re.fullmatch(r"\s*(\d+)(?:-(\d+))?\s*", part)
        if m:
            out.update(range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1))
    return out


def foreign_vlans(config: Any) -> set[int]:
    """The bridge VLANs of an NVUE config that are none of ours (no SVI marked as ours): a tenant put on one would
    take the operator's VLAN over, and remove it with the tenant."""
    cfg = load(config)
    ours = {int(vlan) for vlan, unused in _our_svis(at(cfg, "", "interface")) if vlan.isdigit()}
    found: set[int] = set()
    for key in at(cfg, "", "bridge", "domain", BRIDGE, "vlan"):
        found |= _vlan_keys(key)
    return found - ours


def foreign_vrfs(config: Any) -> set[str]:
    """The VRFs of an NVUE config that no SVI marked as ours is in (``default`` and ``mgmt`` among them)."""
    cfg = load(config)
    used = {str(at(iface, "interface vlan%s" % vlan, "ip").get("vrf", ""))
            for vlan, iface in _our_svis(at(cfg, "", "interface"))}
    return {str(v) for v in at(cfg, "", "vrf")} - used


def vrf_users(config: Any) -> dict[str, list[str]]:
    """``{VRF: interfaces}``: the interfaces of an NVUE config that are not ours (an SVI not marked as ours, a routed
    port, a bond) by the VRF each is in (``interface X ip vrf V``): removing a VRF of ours that one of them is in
    would leave the operator's interface in a VRF that is gone."""
    cfg = load(config)
    out: dict[str, list[str]] = {}
    for name, iface in at(cfg, "", "interface").items():
        if _our_svi(name, iface):
            continue
        vrf = at(iface, "interface %s" % name, "ip").get("vrf")
        if vrf:
            out.setdefault(str(vrf), []).append(str(name))
    return {vrf: sorted(names, key=port_key) for vrf, names in out.items()}


def foreign_ports(config: Any) -> set[str]:
    """The ports whose bridge membership holds a VLAN (``vlan`` key, range or ``access``) that is
    none of ours (no SVI marked as ours): the operator's own VLAN on a port that also carries a
    tenant's."""
    cfg = load(config)
    interfaces = at(cfg, "", "interface")
    ours = {vlan for vlan, unused in _our_svis(interfaces)}
    out = set()
    for name, iface in interfaces.items():
        if _SVI.match(str(name)):
            continue
        where = "interface %s bridge domain %s" % (name, BRIDGE)
        dom = at(iface, "interface %s" % name, "bridge", "domain", BRIDGE)
        keys = [str(k) for k in at(dom, where, "vlan")] + ([str(dom["access"])] if "access" in dom else [])
        if any(k not in ours for k in keys):
            out.add(str(name))
    return out


def _leave_bridge(unset: list[Path], before: list[dict], after: list[dict], foreign: set[str] | frozenset[str]
                  ) -> list[Path]:  # fmt: skip
    """A port whose last tenant VLAN goes leaves the bridge instead of keeping an empty membership.

    A bridge member port with no VLAN of its own inherits every VLAN of the bridge domain
    (NVUE), so unsetting only ``access``/``vlan N`` would open the port to all tenants. A port
    that still holds a VLAN not ours (``foreign``) keeps its membership (and that VLAN, its STP
    settings): only our VLAN goes.
    """
    remaining = {p["port"] for t in after for p in t["ports"]}
    emptied = {p["port"] for t in before for p in t["ports"]} - remaining - set(foreign)
    if not emptied:
        return unset
    out: list[Path] = []
    left: set[str] = set()
    for path in unset:
        if path[0] == "interface" and path[1] in emptied and path[2:4] == ("bridge", "domain"):
            if path[1] not in left:
                left.add(path[1])
                out.append(("interface", path[1], "bridge", "domain", BRIDGE))
            continue
        out.append(path)
    return out


# --- parse ---------------------------------------------------------------------------


def from_nv(text: str) -> dict:
    """``nv set`` lines (as rendered or as ``nv config show -o commands``) to the tree."""
    return tree(nv_items(text))


def _scalar_path(path: Path) -> bool:
    # A top-level word is always an object: ``nv set vrf RED`` creates VRF RED (NVIDIA's
    # examples), it does not set a value ``vrf: RED``.
    if len(path) < 2:
        return False
    if path[-1] in _SCALAR_LEAVES:
        return True
    if path[-2:] == ("source", "address"):
        return True
    return len(path) == 3 and path[0] == "interface" and path[2] == "vlan"


def load(config: Any) -> dict:
    """Any of the three forms (tree, ``[{set: tree}]``, ``nv set`` text) to the tree.

    ``NativeConfigError`` for text that is neither ``nv set`` lines nor YAML/JSON of a tree.
    """
    if isinstance(config, str):
        if re.search(r"^\s*nv set ", config, re.M):
            return from_nv(config)
        if not config.strip():
            return {}
        try:
            loaded = yaml_load(config)
        except YAMLError as exc:
            raise NativeConfigError(["running_config: neither nv set lines nor NVUE YAML/JSON (%s)" % exc]) from None
        if isinstance(loaded, str):
            raise NativeConfigError(["running_config: neither nv set lines nor an NVUE tree: %r" % config[:60]])
        return load(loaded or {})
    if isinstance(config, list):
        merged: list[Item] = []
        for n, entry in enumerate(config):
            if not (isinstance(entry, dict) and isinstance(entry.get("set"), dict)):
                # junk read as no config would plan every tenant anew and see none of ours to remove
                raise NativeConfigError(["running_config[%d]: is not {set: <NVUE tree>} (nv config show -o yaml)" % n])
            merged.extend(_flatten(entry["set"]))
        return tree(merged)
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise NativeConfigError(["running_config: is %s, not an NVUE config (a tree, [{set: tree}] or nv set lines)"
                                 % type(config).__name__])
    return config


def _flatten(node: dict, prefix: Path = ()) -> list[Item]:
    out: list[Item] = []
    for key, val in node.items():
        path = (*prefix, str(key))
        if isinstance(val, dict):
            out.extend(_flatten(val, path) if val else [(path, None)])
        else:
            out.append((path, val))
    return out


def _memberships(interfaces: dict) -> dict[int, list[dict]]:
    """The bridge ports of each VLAN: access (``access N``) or trunk (``vlan N``)."""
    ports: dict[int, list[dict]] = {}
    for name, iface in interfaces.items():
        where = "interface %s" % name
        dom = at(iface, where, "bridge", "domain", BRIDGE)
        if "access" in dom:
            vlan = number(dom["access"], "%s bridge domain %s access" % (where, BRIDGE))
            ports.setdefault(vlan, []).append({"port": str(name), "mode": "access"})
        for v in at(dom, "%s bridge domain %s" % (where, BRIDGE), "vlan"):
            if str(v).isdigit():
                ports.setdefault(int(v), []).append({"port": str(name), "mode": "trunk"})
    return ports


def parse(config: Any) -> list[dict]:
    """Tenants we own in an NVUE config (any form), in the neutral shape.

    ``IncompleteTenantError`` when an SVI marked as ours is not a whole tenant (no L2 VNI, VRF,
    L3 VNI or VRR gateway: the error holds the tenants, half ones included) or holds more than
    one VRR/SVI address, VNI or L3 VNI; ``NativeConfigError`` when the config is not NVUE's.
    """
    cfg = load(config)
    interfaces = at(cfg, "", "interface")
    vlans = at(cfg, "", "bridge", "domain", BRIDGE, "vlan")
    vrfs = at(cfg, "", "vrf")
    ports = _memberships(interfaces)
    found = Found()
    for name, iface in interfaces.items():
        m = _SVI.match(str(name))
        where = "interface %s" % name
        tenant = owner(at(iface, where).get("description")) if m else None
        if tenant is None:
            continue
        vlan = number(iface.get("vlan") or m.group(1), where + " vlan")
        ip = at(iface, where, "ip")
        vrf = str(ip.get("vrf", ""))
        paths = {
            "vni": "bridge domain %s vlan %d vni" % (BRIDGE, vlan),
            "vrf": "%s ip vrf" % where,
            "l3vni": "vrf %s evpn vni" % (vrf or "<vrf>"),
            "gateway": "%s ip vrr address" % where,
            "address": "%s ip address" % where,
        }
        bridge_vlan = vlans.get(str(vlan)) or vlans.get(vlan)
        values = {
            "gateway": [str(a) for a in at(ip, where + " ip", "vrr", "address")],
            "address": [str(a) for a in at(ip, where + " ip", "address")],
            "vni": [str(v) for v in at(bridge_vlan, "bridge domain %s vlan %d" % (BRIDGE, vlan), "vni")],
            "l3vni": [str(v) for v in at(vrfs.get(vrf), "vrf " + vrf, "evpn", "vni")] if vrf else [],
        }
        found.add(
            where,
            paths,
            name=tenant,
            vlan=vlan,
            vni=number(values["vni"][0], paths["vni"]) if values["vni"] else 0,
            vrf=vrf,
            l3vni=number(values["l3vni"][0], paths["l3vni"]) if values["l3vni"] else 0,
            gateway=values["gateway"][0] if values["gateway"] else "",
            address=values["address"][0] if values["address"] else "",
            ports=ports.get(vlan, []),
        )
        found.second_values(where, tenant, values, paths)
    return found.result()


# --- what results may show -------------------------------------------------------------------

# Where NVUE keeps a BGP session's password (``vrf V router bgp neighbor N password``, ``... peer-group P
# password``): never part of what we own, even in a VRF of ours.
_BGP_SESSIONS = ("neighbor", "peer-group")


def _put(out: dict, path: Path, value: Any) -> None:
    node = out
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value


def _vrf_owned(vrf: dict, where: str) -> dict:
    """A tenant VRF as we own it: without BGP sessions (theirs, with their passwords)."""
    out = dict(vrf)
    bgp = at(vrf, where, "router", "bgp")
    if any(key in bgp for key in _BGP_SESSIONS):
        out["router"] = dict(at(vrf, where, "router"), bgp={k: v for k, v in bgp.items() if k not in _BGP_SESSIONS})
    return out


def owned(config: Any) -> dict:
    """The part of an NVUE config (any form) the collection owns, as a tree: each tenant marked as ours
    (its SVI, bridge VLAN, L2 VNI's EVPN entry and VRF) and the bridge memberships of the ports that carry
    it. ``parse`` reads the same tenants from it as from the whole config; nothing else of the switch
    (users, SNMP, other VLANs, BGP sessions and their passwords) is in it: what a result may show."""
    cfg = load(config)
    interfaces = at(cfg, "", "interface")
    vlans = at(cfg, "", "bridge", "domain", BRIDGE, "vlan")
    out: dict = {}
    ours: set[int] = set()
    for name, iface in interfaces.items():
        m = _SVI.match(str(name))
        where = "interface %s" % name
        if not m or owner(at(iface, where).get("description")) is None:
            continue
        _put(out, ("interface", str(name)), iface)
        vlan = number(iface.get("vlan") or m.group(1), where + " vlan")
        ours.add(vlan)
        key = str(vlan) if str(vlan) in vlans else vlan
        if key in vlans:
            _put(out, ("bridge", "domain", BRIDGE, "vlan", str(key)), vlans[key])
            for vni in at(vlans[key], "bridge domain %s vlan %s" % (BRIDGE, key), "vni"):
                evpn = at(cfg, "", "evpn", "vni")
                if str(vni) in evpn:
                    _put(out, ("evpn", "vni", str(vni)), evpn[str(vni)])
        vrf = str(at(iface, where, "ip").get("vrf", ""))
        vrfs = at(cfg, "", "vrf")
        if vrf and vrf in vrfs:
            _put(out, ("vrf", vrf), _vrf_owned(at(vrfs, "vrf", vrf), "vrf " + vrf))
    for vlan, ports in _memberships(interfaces).items():
        if vlan in ours:
            for p in ports:
                membership = at(interfaces, "interface", p["port"], "bridge", "domain", BRIDGE)
                _put(out, ("interface", p["port"], "bridge", "domain", BRIDGE), membership)
    return out


def _project(tree: Any, shape: Any) -> Any:
    """The part of ``tree`` at the paths of ``shape`` (a tree whose leaves, or empty mappings, end a path)."""
    if not isinstance(shape, dict) or not shape or not isinstance(tree, dict):
        return tree
    return {k: _project(tree[k], v) for k, v in shape.items() if k in tree}


def _merge(into: dict, tree: dict) -> dict:
    for key, value in tree.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
    return into


def shown(config: Any, set_tree: dict, unset: list[str]) -> dict:
    """What a change's diff may show of a whole NVUE config: what we own, and the paths the change sets
    (``set_tree``) or unsets (``unset``: REST paths, each part URL-encoded); nothing else of the switch."""
    cfg = load(config)
    shape: dict = copy.deepcopy(set_tree) if isinstance(set_tree, dict) else {}
    for path in unset:
        _put(shape, tuple(unquote(part) for part in path.split("/") if part), {})
    out = _merge(_merge({}, copy.deepcopy(owned(cfg))), copy.deepcopy(_project(cfg, shape)) or {})
    vrfs = at(out, "", "vrf")
    for name in vrfs:
        vrfs[name] = _vrf_owned(at(vrfs, "vrf", name), "vrf %s" % name)
    return out
