# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tenant networks on leaf switches, on a platform-neutral shape.

Private to the collection. The platform renderers (``_render_nvue``, ``_render_sonic``,
``_render_eos``, ``_render_frr``) turn this shape into native config and back; this module
knows what the shape is, what is valid, and how the resource-module states combine a
desired and a gathered list of tenants.

The neutral shape of one switch's tenants (what ``parse`` of every renderer returns)::

    [{"name": "acme", "vlan": 101, "vni": 10101, "vrf": "acme", "l3vni": 50101,
      "gateway": "10.101.0.1/24", "subnet": "10.101.0.0/24",
      "ports": [{"port": "swp1", "mode": "access"}]}]

It is the switch part of the fleet model (``gpucloud_switch.tenants``) without what a switch
cannot store: the node behind a port and the tenant's isolation.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from ._fleet import expand_switch

STATES = ("rendered", "merged", "replaced", "overridden", "deleted", "gathered", "parsed")
PLATFORMS = ("nvue", "sonic", "eos")
FRR_PLATFORMS = ("nvue", "sonic")
MARKER = "gpucloud:"
DEFAULT_RT_ASN = 64512
DEFAULT_L3VNI_VLAN_OFFSET = 2000
DEFAULT_OPTIONS = {"route_target_asn": DEFAULT_RT_ASN, "l3vni_vlan_offset": DEFAULT_L3VNI_VLAN_OFFSET}
TENANT_KEYS = ("name", "vlan", "vni", "vrf", "l3vni", "gateway", "subnet", "ports")
_PORT = re.compile(r"^[A-Za-z][A-Za-z0-9/._:-]*$")
_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_VRF = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,14}$")


class FabricError(Exception):
    """The switch data cannot be rendered. ``problems`` lists every problem, each with its path."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__(self.__str__())

    def __str__(self) -> str:
        count = len(self.problems)
        head = "switch tenants are invalid (%d problem%s):" % (count, "" if count == 1 else "s")
        return "\n".join([head] + ["  - " + p for p in self.problems])


def marker(tenant: str) -> str:
    """The ownership marker written on the objects this collection creates."""
    return MARKER + tenant


def owner(text: str | None) -> str | None:
    """The tenant named by an ownership marker, or None when the object is not ours."""
    if not text or not text.startswith(MARKER):
        return None
    name = text[len(MARKER) :].split(":", 1)[0]
    return name if _NAME.match(name) else None


def port_key(port: str) -> tuple:
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", port))


def neutral_tenant(t: dict) -> dict:
    """One tenant of ``gpucloud_switch.tenants`` in the neutral shape."""
    gateway = str(t["gateway"])
    return {
        "name": str(t["name"]),
        "vlan": int(t["vlan"]),
        "vni": int(t["vni"]),
        "vrf": str(t["vrf"]),
        "l3vni": int(t["l3vni"]),
        "gateway": gateway,
        "subnet": t.get("subnet") or (subnet_of(gateway) if gateway else ""),
        "ports": sorted(
            ({"port": str(p["port"]), "mode": str(p.get("mode", "access"))} for p in t.get("ports") or []),
            key=lambda p: port_key(p["port"]),
        ),
    }


def subnet_of(gateway: str) -> str:
    return str(ipaddress.ip_interface(gateway).network)


def normalise(tenants: list[dict]) -> list[dict]:
    """Sorted by VLAN, ports sorted: the canonical order every renderer and diff uses."""
    return sorted((neutral_tenant(t) for t in tenants), key=lambda t: (t["vlan"], t["name"]))


def options_with_defaults(options: dict | None) -> dict:
    out = dict(DEFAULT_OPTIONS)
    out.update({k: v for k, v in (options or {}).items() if v is not None})
    return out


def check_switch(switch: Any, underlay: Any, options: dict | None = None) -> list[str]:
    """Every problem that would stop rendering ``switch``; empty when it can be rendered."""
    problems: list[str] = []
    if not isinstance(switch, dict):
        return ["switch: must be a mapping (the gpucloud_switch host variable), got %s" % type(switch).__name__]
    for key in ("name", "platform", "asn", "loopback", "role"):
        if key not in switch:
            problems.append("switch.%s: is required" % key)
    if problems:
        return problems
    name = switch["name"]
    if switch["platform"] not in PLATFORMS:
        problems.append("%s.platform: %r is not one of %s" % (name, switch["platform"], ", ".join(PLATFORMS)))
    try:
        ipaddress.IPv4Address(str(switch["loopback"]))
    except ValueError:
        problems.append("%s.loopback: %r is not an IPv4 address" % (name, switch["loopback"]))
    if not isinstance(underlay, dict):
        problems.append("underlay: must be a mapping with anycast_mac and mtu")
    elif not re.match(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$", str(underlay.get("anycast_mac", ""))):
        problems.append("underlay.anycast_mac: %r is not a lowercase MAC address" % underlay.get("anycast_mac"))
    opts = options_with_defaults(options)
    rt = opts["route_target_asn"]
    if not isinstance(rt, int) or not 1 <= rt <= 65535:
        problems.append("route_target_asn: %r must be a 2-byte ASN 1..65535 (RT format ASN:VNI)" % (rt,))
    tenants = switch.get("tenants") or []
    if switch["role"] != "leaf" and tenants:
        problems.append(
            "%s: a %s carries no tenant networks, but %d are assigned" % (name, switch["role"], len(tenants))
        )
    problems.extend(_check_tenants(name, switch["platform"], tenants, opts))
    return problems


def _check_tenants(switch: str, platform: str, tenants: list, opts: dict) -> list[str]:
    problems: list[str] = []
    seen: dict[tuple[str, Any], str] = {}
    l2vnis: dict[int, str] = {}
    vlans: dict[int, str] = {}
    for i, t in enumerate(tenants):
        path = "%s.tenants[%d]" % (switch, i)
        if not isinstance(t, dict):
            problems.append("%s: must be a mapping" % path)
            continue
        missing = [k for k in ("name", "vlan", "vni", "vrf", "l3vni", "gateway") if k not in t]
        if missing:
            problems.append("%s: missing %s" % (path, ", ".join(missing)))
            continue
        path = "%s.tenants[%d] (%s)" % (switch, i, t["name"])
        if not isinstance(t["name"], str) or not _NAME.match(t["name"]):
            problems.append("%s.name: %r is not a DNS-1123 label" % (path, t["name"]))
        for key, lo, hi in (("vlan", 1, 4094), ("vni", 1, 16777214), ("l3vni", 1, 16777214)):
            if not isinstance(t[key], int) or isinstance(t[key], bool) or not lo <= t[key] <= hi:
                problems.append("%s.%s: %r is outside %d..%d" % (path, key, t[key], lo, hi))
        if not isinstance(t["vrf"], str) or not _VRF.match(t["vrf"]):
            problems.append("%s.vrf: %r is not a VRF name (letter first, at most 15 characters)" % (path, t["vrf"]))
        elif platform == "sonic" and len("Vrf-" + t["vrf"]) > 15:
            problems.append(
                "%s.vrf: SONiC names VRFs 'Vrf-<name>' with at most 15 characters; %r is too long (at most 11)"
                % (path, t["vrf"])
            )
        try:
            iface = ipaddress.IPv4Interface(str(t["gateway"]))
            if iface.network.prefixlen > 30 or iface.ip in (
                iface.network.network_address,
                iface.network.broadcast_address,
            ):
                problems.append("%s.gateway: %s is not a usable host address of its subnet" % (path, t["gateway"]))
        except ValueError:
            problems.append("%s.gateway: %r is not an IPv4 address with prefix (a.b.c.d/len)" % (path, t["gateway"]))
        for key in ("name", "vlan", "vni", "vrf", "l3vni"):
            first = seen.get((key, t[key]))
            if first is not None:
                problems.append("%s.%s: %s is already used by %s on this switch" % (path, key, t[key], first))
            else:
                seen[(key, t[key])] = path
        if isinstance(t["vni"], int):
            l2vnis[t["vni"]] = path
        if isinstance(t["vlan"], int):
            vlans[t["vlan"]] = path
        for j, p in enumerate(t.get("ports") or []):
            ppath = "%s.ports[%d]" % (path, j)
            if not isinstance(p, dict) or not isinstance(p.get("port"), str) or not _PORT.match(p["port"]):
                problems.append("%s: needs a port name" % ppath)
            elif p.get("mode", "access") not in ("access", "trunk"):
                problems.append("%s.mode: %r is not access or trunk" % (ppath, p.get("mode")))
    problems.extend(_check_ports(switch, tenants))
    for i, t in enumerate(tenants):
        if not isinstance(t, dict) or not isinstance(t.get("l3vni"), int):
            continue
        if t["l3vni"] in l2vnis:
            problems.append(
                "%s.tenants[%d] (%s).l3vni: %d equals the L2 VNI of %s; an L3 VNI may not equal any L2 VNI"
                % (switch, i, t.get("name"), t["l3vni"], l2vnis[t["l3vni"]])
            )
        if platform == "sonic" and isinstance(t.get("vlan"), int):
            l3vlan = t["vlan"] + opts["l3vni_vlan_offset"]
            where = "%s.tenants[%d] (%s)" % (switch, i, t.get("name"))
            if not 1 <= l3vlan <= 4094:
                problems.append(
                    "%s: the L3 VNI VLAN %d (vlan + l3vni_vlan_offset %d) is outside 1..4094"
                    % (where, l3vlan, opts["l3vni_vlan_offset"])
                )
            elif l3vlan in vlans:
                problems.append(
                    "%s: the L3 VNI VLAN %d (vlan + l3vni_vlan_offset %d) is the VLAN of %s; choose another offset"
                    % (where, l3vlan, opts["l3vni_vlan_offset"], vlans[l3vlan])
                )
    return problems


def _check_ports(switch: str, tenants: list) -> list[str]:
    problems: list[str] = []
    access: dict[str, str] = {}
    modes: dict[str, str] = {}
    for t in tenants:
        if not isinstance(t, dict):
            continue
        for p in t.get("ports") or []:
            if not isinstance(p, dict) or not isinstance(p.get("port"), str):
                continue
            port, mode = p["port"], p.get("mode", "access")
            if modes.setdefault(port, mode) != mode:
                problems.append("%s: port %s is both access and trunk" % (switch, port))
            if mode == "access":
                if port in access:
                    problems.append(
                        "%s: port %s is the access port of both %s and %s" % (switch, port, access[port], t.get("name"))
                    )
                access[port] = t.get("name")
    return problems


def validate(switch: Any, underlay: Any, options: dict | None = None) -> None:
    problems = check_switch(switch, underlay, options)
    if problems:
        raise FabricError(problems)


def full_switch(switch: dict, fleet_tenants: list[dict] | None) -> dict:
    """The switch with its ``tenants`` list, also from the compact hostvars form.

    The inventory gives each switch ``gpucloud_switch`` in compact form (``access_ports``,
    ``trunk_ports``, ``shared_tenants``); ``fleet_tenants`` (``gpucloud_tenants``) fills it in.
    """
    if "tenants" in switch:
        return switch
    if fleet_tenants is None:
        raise FabricError(["fleet_tenants: required for a compact gpucloud_switch (pass gpucloud_tenants)"])
    return expand_switch(switch, fleet_tenants)


def desired(switch: dict) -> list[dict]:
    """The switch's tenants from the fleet model, in the neutral shape (spines: none)."""
    if switch.get("role") != "leaf":
        return []
    return normalise(switch.get("tenants") or [])


def select(tenants: list[dict], names: list[str] | None) -> list[dict]:
    if not names:
        return list(tenants)
    wanted = set(names)
    return [t for t in tenants if t["name"] in wanted]


def _merge_tenant(old: dict, new: dict) -> dict:
    merged = dict(new)
    ports = {p["port"]: p for p in old["ports"]}
    ports.update({p["port"]: p for p in new["ports"]})
    merged["ports"] = sorted(ports.values(), key=lambda p: port_key(p["port"]))
    return merged


def plan(state: str, want: list[dict], have: list[dict], names: list[str] | None = None) -> list[dict]:
    """The tenants a switch should have after ``state``; ``have`` holds only objects we own.

    ``names`` limits the change to those tenants (day-2 onboarding / offboarding of one tenant).
    """
    want = normalise(select(want, names))
    have = normalise(have)
    by_name = {t["name"]: t for t in have}
    if state == "merged":
        for t in want:
            by_name[t["name"]] = _merge_tenant(by_name[t["name"]], t) if t["name"] in by_name else t
    elif state == "replaced":
        for t in want:
            by_name[t["name"]] = t
    elif state == "overridden":
        if names:
            for name in names:
                by_name.pop(name, None)
            for t in want:
                by_name[t["name"]] = t
        else:
            by_name = {t["name"]: t for t in want}
    elif state == "deleted":
        for name in set(names) if names else set(by_name):
            by_name.pop(name, None)
    else:
        raise ValueError("plan() does not handle state %r" % state)
    return normalise(list(by_name.values()))


def changes(before: list[dict], after: list[dict]) -> dict:
    """Which tenants a plan adds, removes and modifies (by name)."""
    b = {t["name"]: t for t in before}
    a = {t["name"]: t for t in after}
    return {
        "added": sorted(n for n in a if n not in b),
        "removed": sorted(n for n in b if n not in a),
        "modified": sorted(n for n in a if n in b and a[n] != b[n]),
    }


def pairs(before: list[dict], after: list[dict]) -> list[tuple[dict | None, dict | None]]:
    """(old, new) per tenant name that differs, in VLAN order; None where absent."""
    b = {t["name"]: t for t in before}
    a = {t["name"]: t for t in after}
    out = []
    for name in sorted(set(a) | set(b), key=lambda n: ((a.get(n) or b.get(n))["vlan"], n)):
        if a.get(name) != b.get(name):
            out.append((b.get(name), a.get(name)))
    return out


def renderer(platform: str) -> Any:
    """The renderer module of a platform (``"frr"`` included)."""
    from . import _render_eos, _render_frr, _render_nvue, _render_sonic  # the renderers import this module

    return {"nvue": _render_nvue, "sonic": _render_sonic, "eos": _render_eos, "frr": _render_frr}[platform]


def render_files(switch: dict, underlay: dict, options: dict | None = None) -> dict[str, str]:
    """Every native file of one switch, ``{extension: text}``, after validating it.

    ``nvue.yaml`` + ``nvue.nv`` (NVUE), ``sonic.json`` (SONiC) or ``eos.cfg`` (EOS), and
    ``frr.conf`` where routing is FRR (NVUE, SONiC). Spines get no tenant config.
    """
    validate(switch, underlay, options)
    opts = options_with_defaults(options)
    tenants = desired(switch)
    platform = switch["platform"]
    files = dict(renderer(platform).render_text(switch, tenants, underlay, opts))
    if platform in FRR_PLATFORMS:
        files.update(renderer("frr").render_text(switch, tenants, underlay, opts))
    return files


def parse_native(platform: str, config: Any) -> list[dict]:
    """Native config (platform form) to the neutral shape: the tenants we own."""
    return renderer(platform).parse(config)
