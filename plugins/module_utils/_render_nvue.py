# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA Cumulus Linux (NVUE): tenant networks as NVUE config, and back.

Private to the collection. Three forms of the same config:

- the tree (what the NVUE REST API takes in ``PATCH /nvue_v1/?rev=ID`` and returns from
  ``GET /nvue_v1/?rev=applied``), built from ``items``: ``(path, value)`` pairs where value
  ``None`` means "a key with no attributes" (``vni: {10101: {}}``);
- the patch file of ``nv config patch`` (YAML: ``- set: TREE``);
- ``nv set`` / ``nv unset`` commands.

Ownership: an SVI ``interface vlanN`` whose ``description`` is ``gpucloud:<tenant>`` marks the
tenant's VLAN, VNI, VRF and port memberships as ours. Nothing else is ever unset.
Anycast gateway: VRR on the SVI (``ip vrr address``/``mac-address``), the VRF's L3 VNI with
``vrf V evpn vni``; NVUE generates the FRR config from the ``vrf V router bgp`` part.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ansible.module_utils.common.yaml import yaml_load

from ._fabric import distinct, marker, normalise, owner, pairs, port_groups, port_key

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


def global_items(switch: dict, opts: dict) -> list[Item]:
    """Switch-wide settings every tenant needs; set, never unset (they are not a tenant's)."""
    return [
        (("nve", "vxlan", "enable"), "on"),
        (("nve", "vxlan", "source", "address"), switch["loopback"]),
        (("evpn", "enable"), "on"),
        (("router", "bgp", "enable"), "on"),
        (("router", "bgp", "autonomous-system"), switch["asn"]),
        (("router", "bgp", "router-id"), switch["loopback"]),
    ]


def tenant_items(switch: dict, t: dict, underlay: dict, opts: dict) -> list[Item]:
    vlan, vrf, svi = str(t["vlan"]), t["vrf"], "vlan%d" % t["vlan"]
    bgp = ("vrf", vrf, "router", "bgp")
    af = (*bgp, "address-family", "ipv4-unicast")
    items: list[Item] = [
        (("bridge", "domain", BRIDGE, "vlan", vlan, "vni", str(t["vni"])), None),
        (("evpn", "vni", str(t["vni"]), "route-target", "both", rt(opts, t["vni"])), None),
        (("interface", svi, "type"), "svi"),
        (("interface", svi, "vlan"), t["vlan"]),
        (("interface", svi, "description"), marker(t["name"])),
        (("interface", svi, "ip", "vrf"), vrf),
        *([(("interface", svi, "ip", "address", t["address"]), None)] if t.get("address") else []),
        (("interface", svi, "ip", "vrr", "enable"), "on"),
        (("interface", svi, "ip", "vrr", "address", t["gateway"]), None),
        (("interface", svi, "ip", "vrr", "mac-address"), underlay["anycast_mac"]),
        (("interface", svi, "ip", "vrr", "state", "up"), None),  # VRR is down until set up
        (("vrf", vrf, "evpn", "enable"), "on"),
        (("vrf", vrf, "evpn", "vni", str(t["l3vni"])), None),
        ((*bgp, "enable"), "on"),
        ((*bgp, "autonomous-system"), switch["asn"]),
        ((*bgp, "router-id"), switch["loopback"]),
        ((*af, "enable"), "on"),
        ((*af, "redistribute", "connected", "enable"), "on"),
        ((*af, "route-export", "to-evpn", "enable"), "on"),
        # The L3 VNI's route-targets sit on the VRF's BGP instance, not under the address family
        # (NVUE reference: vrf <vrf-id> router bgp route-export to-evpn route-target <rt>).
        ((*bgp, "route-export", "to-evpn", "route-target", rt(opts, t["l3vni"])), None),
        ((*bgp, "route-import", "from-evpn", "route-target", rt(opts, t["l3vni"])), None),
    ]
    for p in t["ports"]:
        if p["mode"] == "access":
            items.append((("interface", p["port"], "bridge", "domain", BRIDGE, "access"), t["vlan"]))
        else:
            items.append((("interface", p["port"], "bridge", "domain", BRIDGE, "vlan", vlan), None))
    return items


def tenant_roots(t: dict) -> list[Path]:
    """What to unset to remove a tenant: whole objects, plus its memberships on shared ports."""
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
    return roots


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


def all_items(switch: dict, tenants: list[dict], underlay: dict, opts: dict) -> list[Item]:
    items = list(global_items(switch, opts)) if tenants else []
    for t in tenants:
        items.extend(tenant_items(switch, t, underlay, opts))
    return items


def render(switch: dict, tenants: list[dict], underlay: dict, opts: dict) -> dict:
    """The REST API body (``PATCH /nvue_v1/?rev=ID``) for the switch's tenants."""
    return tree(all_items(switch, tenants, underlay, opts))


def _word(value: Any) -> str:
    text = str(value)
    return '"%s"' % text if not text or re.search(r"\s", text) else text


def nv_set(items: list[Item]) -> list[str]:
    return ["nv set " + " ".join(path) + ("" if v is None else " " + _word(v)) for path, v in items]


def nv_unset(paths: list[Path]) -> list[str]:
    return ["nv unset " + " ".join(path) for path in paths]


def to_yaml(value: Any, indent: int = 0) -> str:
    """A small, deterministic YAML emitter for NVUE trees (mappings of str/int)."""
    pad = "  " * indent
    lines = []
    for key, val in value.items():
        k = _yaml_scalar(key)
        if isinstance(val, dict):
            if val:
                lines.append("%s%s:\n%s" % (pad, k, to_yaml(val, indent + 1)))
            else:
                lines.append("%s%s: {}\n" % (pad, k))
        else:
            lines.append("%s%s: %s\n" % (pad, k, _yaml_scalar(val)))
    return "".join(lines)


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    text = str(value)
    if re.match(r"^[A-Za-z_][A-Za-z0-9_./-]*$", text) and text not in ("on", "off", "yes", "no", "true", "false"):
        return text
    return "'%s'" % text.replace("'", "''")


_yaml_scalar_cached = functools.lru_cache(maxsize=65536, typed=True)(_yaml_scalar)


def render_text(switch: dict, tenants: list[dict], underlay: dict, opts: dict, nv: bool = True) -> dict[str, str]:
    """Files: ``nvue.yaml`` (``nv config patch`` file) and, with ``nv``, ``nvue.nv`` (``nv set``).

    The text is written directly (the same as ``to_yaml(tree(all_items(...)))`` and
    ``nv_set(all_items(...))``, which stay the reference): a port list shared by many tenants
    (a leaf's trunk ports) is written once per file, not once per tenant.
    """
    head = "# gpucloud.baremetal: tenant networks of %s (NVUE); generated, do not edit\n" % switch["name"]
    if not tenants:
        return {"nvue.yaml": head + "[]\n", **({"nvue.nv": head} if nv else {})}
    groups, unique = port_groups(tenants)
    svis = {"vlan%d" % t["vlan"] for t in tenants}
    if (
        not unique
        or not distinct(tenants, "vlan", "vni", "vrf")
        or any(p["port"] in svis for g in groups.values() for p in g.ports)
    ):
        return _render_text_items(head, switch, tenants, underlay, opts, nv)  # overlapping trees: merge them
    out = {"nvue.yaml": head + _yaml_text(switch, tenants, groups, underlay, opts)}
    if nv:
        out["nvue.nv"] = head + _nv_text(switch, tenants, groups, underlay, opts)
    return out


def _render_text_items(head: str, switch: dict, tenants: list[dict], underlay: dict, opts: dict, nv: bool) -> dict:
    items = all_items(switch, tenants, underlay, opts)
    out = {"nvue.yaml": head + "- set:\n" + to_yaml(tree(items), 2)}
    if nv:
        out["nvue.nv"] = head + "".join(line + "\n" for line in nv_set(items))
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


def _yaml_text(switch: dict, tenants: list[dict], groups: dict, underlay: dict, opts: dict) -> str:
    q = _yaml_scalar_cached
    sw = {"asn": q(switch["asn"]), "loopback": q(switch["loopback"]), "mac": q(underlay["anycast_mac"])}
    evpn, bridge, iface, vrfs = [], [], [], []
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
        g = groups[id(t["ports"])]
        if g.first == i:  # the group's ports appear with its first tenant (each port is in one group)
            iface.append(_yaml_ports(g))
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


def _yaml_ports(g: Any) -> str:
    """The ``interface`` entries of a group's ports: access VLAN (the last tenant's) or trunk VLANs."""
    trunk = "              vlan:\n" + "".join("                '%d': {}\n" % v for v in g.vlans)
    access = "              access: %d\n" % g.vlans[-1]
    return "".join((_Y_PORT % _yaml_scalar(p["port"])) + (access if p["mode"] == "access" else trunk) for p in g.ports)


def _nv_text(switch: dict, tenants: list[dict], groups: dict, underlay: dict, opts: dict) -> str:
    w = _word
    asn, loopback = w(switch["asn"]), w(switch["loopback"])
    lines = [
        "nv set nve vxlan enable on\nnv set nve vxlan source address %s\nnv set evpn enable on\n"
        "nv set router bgp enable on\nnv set router bgp autonomous-system %s\nnv set router bgp router-id %s\n"
        % (loopback, asn, loopback)
    ]
    mac = w(underlay["anycast_mac"])
    for t in tenants:
        vrf, svi = t["vrf"], "vlan%d" % t["vlan"]
        bgp = "nv set vrf %s router bgp " % vrf
        af = bgp + "address-family ipv4-unicast "
        rt3 = rt(opts, t["l3vni"])
        lines.append(
            "nv set bridge domain br_default vlan %d vni %d\n"
            "nv set evpn vni %d route-target both %s\n"
            "nv set interface %s type svi\n"
            "nv set interface %s vlan %d\n"
            "nv set interface %s description %s\n"
            "nv set interface %s ip vrf %s\n"
            "%s"
            "nv set interface %s ip vrr enable on\n"
            "nv set interface %s ip vrr address %s\n"
            "nv set interface %s ip vrr mac-address %s\n"
            "nv set interface %s ip vrr state up\n"
            "nv set vrf %s evpn enable on\n"
            "nv set vrf %s evpn vni %d\n"
            "%senable on\n%sautonomous-system %s\n%srouter-id %s\n"
            "%senable on\n%sredistribute connected enable on\n%sroute-export to-evpn enable on\n"
            "%sroute-export to-evpn route-target %s\n%sroute-import from-evpn route-target %s\n"
            % (
                t["vlan"], t["vni"],
                t["vni"], rt(opts, t["vni"]),
                svi,
                svi, t["vlan"],
                svi, w(marker(t["name"])),
                svi, w(vrf),
                "nv set interface %s ip address %s\n" % (svi, t["address"]) if t.get("address") else "",
                svi,
                svi, t["gateway"],
                svi, mac,
                svi,
                vrf,
                vrf, t["l3vni"],
                bgp, bgp, asn, bgp, loopback,
                af, af, af,
                bgp, rt3, bgp, rt3,
            )
        )  # fmt: skip
        g = groups[id(t["ports"])]
        text = g.text.get("nv")
        if text is None:
            text = g.text["nv"] = "".join(
                "nv set interface %s bridge domain br_default access \0\n" % p["port"]
                if p["mode"] == "access"
                else "nv set interface %s bridge domain br_default vlan \0\n" % p["port"]
                for p in g.ports
            )
        if text:
            lines.append(text.replace("\0", str(t["vlan"])))
    return "".join(lines)


# --- delta ---------------------------------------------------------------------------


def delta(switch: dict, before: list[dict], after: list[dict], underlay: dict, opts: dict) -> dict:
    """What takes ``before`` to ``after``: ``{"unset": [paths], "set": [items]}``."""
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
        sets = global_items(switch, opts) + sets
    return {"unset": _leave_bridge(unset, before, after), "set": sets}


def _leave_bridge(unset: list[Path], before: list[dict], after: list[dict]) -> list[Path]:
    """A port whose last tenant VLAN goes leaves the bridge instead of keeping an empty membership.

    A bridge member port with no VLAN of its own inherits every VLAN of the bridge domain
    (NVUE), so unsetting only ``access``/``vlan N`` would open the port to all tenants.
    """
    remaining = {p["port"] for t in after for p in t["ports"]}
    emptied = {p["port"] for t in before for p in t["ports"]} - remaining
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
    items: list[Item] = []
    for raw in text.splitlines():
        words = raw.split()
        if len(words) < 3 or words[0] != "nv" or words[1] != "set":
            continue
        path = tuple(w.strip('"') for w in words[2:])
        if _scalar_path(path[:-1]):
            value: Any = path[-1]
            items.append((path[:-1], int(value) if value.isdigit() else value))
        else:
            items.append((path, None))
    return tree(items)


def _scalar_path(path: Path) -> bool:
    if not path:
        return False
    if path[-1] in _SCALAR_LEAVES:
        return True
    if path[-2:] == ("source", "address"):
        return True
    return len(path) == 3 and path[0] == "interface" and path[2] == "vlan"


def load(config: Any) -> dict:
    """Any of the three forms (tree, ``[{set: tree}]``, ``nv set`` text) to the tree."""
    if isinstance(config, str):
        if re.search(r"^\s*nv set ", config, re.M):
            return from_nv(config)
        return load(yaml_load(config) or {}) if config.strip() else {}
    if isinstance(config, list):
        merged: list[Item] = []
        for entry in config:
            if isinstance(entry, dict) and isinstance(entry.get("set"), dict):
                merged.extend(_flatten(entry["set"]))
        return tree(merged)
    return config if isinstance(config, dict) else {}


def _flatten(node: dict, prefix: Path = ()) -> list[Item]:
    out: list[Item] = []
    for key, val in node.items():
        path = (*prefix, str(key))
        if isinstance(val, dict):
            out.extend(_flatten(val, path) if val else [(path, None)])
        else:
            out.append((path, val))
    return out


def parse(config: Any) -> list[dict]:
    """Tenants we own in an NVUE config (any form), in the neutral shape."""
    cfg = load(config)
    interfaces = cfg.get("interface") or {}
    vlans = ((cfg.get("bridge") or {}).get("domain") or {}).get(BRIDGE, {}).get("vlan") or {}
    vrfs = cfg.get("vrf") or {}
    ports: dict[int, list[dict]] = {}
    for name, iface in interfaces.items():
        dom = ((iface or {}).get("bridge") or {}).get("domain", {}).get(BRIDGE) or {}
        if "access" in dom:
            ports.setdefault(int(dom["access"]), []).append({"port": str(name), "mode": "access"})
        for v in dom.get("vlan") or {}:
            if str(v).isdigit():
                ports.setdefault(int(v), []).append({"port": str(name), "mode": "trunk"})
    tenants = []
    for name, iface in interfaces.items():
        m = _SVI.match(str(name))
        tenant = owner((iface or {}).get("description")) if m else None
        if tenant is None:
            continue
        vlan = int(iface.get("vlan") or m.group(1))
        ip = iface.get("ip") or {}
        vrf = str(ip.get("vrf", ""))
        gateways = list(((ip.get("vrr") or {}).get("address") or {}).keys())
        own = list((ip.get("address") or {}).keys())
        vnis = list(((vlans.get(str(vlan)) or vlans.get(vlan) or {}).get("vni") or {}).keys())
        l3vnis = list((((vrfs.get(vrf) or {}).get("evpn") or {}).get("vni") or {}).keys())
        tenants.append(
            {
                "name": tenant,
                "vlan": vlan,
                "vni": int(vnis[0]) if vnis else 0,
                "vrf": vrf,
                "l3vni": int(l3vnis[0]) if l3vnis else 0,
                "gateway": str(gateways[0]) if gateways else "",
                "subnet": "",
                "address": str(own[0]) if own else "",
                "ports": sorted(ports.get(vlan, []), key=lambda p: port_key(p["port"])),
            }
        )
    return normalise(tenants)
