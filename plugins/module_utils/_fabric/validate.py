# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a switch's tenants can be rendered: every problem at once, each with its path.

Private to the collection. One path for valid and invalid input alike: each rule is checked
once per switch, in bulk where it can be (a set per unique field, a ports list once per port
group), and only a rule that fails walks the tenants again to name where. The field rules are
the fleet's (``_fleet.schema``); a tenant's own fields are checked once per process (cached by
value: a tenant is on many switches). What differs per platform is data (``catalog``).
"""

from __future__ import annotations

import functools
import ipaddress
import re
from typing import Any

from .._fleet.schema import DNS_LABEL, PORT_NAME, RESERVED_VRFS, VLAN_RANGE, VNI_RANGE, VRF_NAME
from .catalog import PLATFORMS, switch_platforms
from .errors import FabricError
from .model import group_ids, options_with_defaults, port_conflicts

UNIQUE = ("name", "vlan", "vni", "vrf", "l3vni")
REQUIRED = ("name", "vlan", "vni", "vrf", "l3vni", "gateway")
_REQUIRED = frozenset(REQUIRED)
_MAC = re.compile(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$")
VRF_NAME_MAX = 15  # Linux interface names, which VRFs are


def validate(switch: Any, underlay: Any, options: dict | None = None) -> None:
    problems = check_switch(switch, underlay, options)
    if problems:
        raise FabricError(problems)


def check_switch(switch: Any, underlay: Any, options: dict | None = None) -> list[str]:
    """Every problem that would stop rendering ``switch``; empty when it can be rendered."""
    if not isinstance(switch, dict):
        return ["switch: must be a mapping (the gpucloud_switch host variable), got %s" % type(switch).__name__]
    problems = ["switch.%s: is required" % key for key in ("name", "platform", "asn", "loopback", "role")
                if key not in switch]  # fmt: skip
    if problems:
        return problems
    name = switch["name"]
    platforms = switch_platforms()
    if switch["platform"] not in platforms:
        problems.append("%s.platform: %r is not one of %s" % (name, switch["platform"], ", ".join(platforms)))
    try:
        ipaddress.IPv4Address(str(switch["loopback"]))
    except ValueError:
        problems.append("%s.loopback: %r is not an IPv4 address" % (name, switch["loopback"]))
    if not isinstance(underlay, dict):
        problems.append("underlay: must be a mapping with anycast_mac and mtu")
    elif not _MAC.fullmatch(str(underlay.get("anycast_mac", ""))):
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
    if not isinstance(tenants, list):
        return [*problems, "%s.tenants: must be a list, got %s" % (name, type(tenants).__name__)]
    return problems + check_tenants(name, switch["platform"], tenants, opts)


def check_tenants(switch: str, platform: Any, tenants: list, opts: dict) -> list[str]:
    """Every problem of a switch's tenants: their own fields, what must be unique on a switch,
    their ports, and the platform's own rules (``catalog``)."""
    problems: list[str] = []
    whole: list[int] = []  # the tenants with every required field, by index
    for i, t in enumerate(tenants):
        try:
            own = _own_problems(t["name"], t["vlan"], t["vni"], t["vrf"], t["l3vni"], t["gateway"], platform)
        except (TypeError, KeyError):
            if not isinstance(t, dict) or not t.keys() >= _REQUIRED:  # not a mapping, or a field missing
                problems.append(_shape_problem(switch, i, t))
                continue
            own = _own_problems.__wrapped__(t["name"], t["vlan"], t["vni"], t["vrf"], t["l3vni"], t["gateway"],
                                            platform)  # unhashable values: checked without the cache  # fmt: skip
        whole.append(i)
        if own:
            path = _where(switch, i, t)
            problems.extend(path + problem for problem in own)
    rows = [tenants[i] for i in whole]
    columns = {key: [t[key] for t in rows] for key in REQUIRED}
    problems += _duplicates(switch, tenants, whole, columns)
    problems += _port_problems(switch, tenants, whole)
    problems += _vni_clashes(switch, tenants, whole, columns)
    if isinstance(platform, str) and PLATFORMS.get(platform, {}).get("l3vni_vlan"):
        problems += _l3vni_vlans(switch, tenants, whole, columns["vlan"], opts["l3vni_vlan_offset"])
    return problems


def _shape_problem(switch: str, i: int, t: Any) -> str:
    if not isinstance(t, dict):
        return "%s.tenants[%d]: must be a mapping" % (switch, i)
    return "%s.tenants[%d]: missing %s" % (switch, i, ", ".join(k for k in REQUIRED if k not in t))


def _where(switch: str, i: int, t: dict) -> str:
    return "%s.tenants[%d] (%s)" % (switch, i, t["name"])


def _hashable_set(values: list) -> set | None:
    try:
        return set(values)
    except TypeError:  # an unhashable value (reported as invalid)
        return None


def _duplicates(switch: str, tenants: list, whole: list[int], columns: dict[str, list]) -> list[str]:
    problems = []
    for key in UNIQUE:
        distinct = _hashable_set(columns[key])
        if distinct is not None and len(distinct) == len(whole):
            continue
        first: dict[Any, int] = {}
        for i in whole:
            t = tenants[i]
            try:
                seen = first.setdefault(t[key], i)
            except TypeError:
                continue
            if seen != i:
                problems.append(
                    "%s.%s: %s is already used by %s on this switch"
                    % (_where(switch, i, t), key, t[key], _where(switch, seen, tenants[seen]))
                )
    return problems


def _port_problems(switch: str, tenants: list, whole: list[int]) -> list[str]:
    """Ports without a name or with a mode that is neither access nor trunk (per tenant that has
    them; a port group is read once), and ports that cannot be written (``port_conflicts``)."""
    ids = group_ids(tenants)
    bad: dict[int, list[tuple[int, str]]] = {}  # port group -> its problems (index in the list, text)
    problems: list[str] = []
    for i in whole:
        gid = ids[i]
        found = bad.get(gid)
        if found is None:
            ports = tenants[i].get("ports") or ()
            found = bad[gid] = [(j, text) for j, text in enumerate(map(_port_problem, ports)) if text]
        for j, text in found:
            problems.append("%s.ports[%d]%s" % (_where(switch, i, tenants[i]), j, text))
    return problems + port_conflicts(switch, tenants, ids)


def _port_problem(p: Any) -> str:
    if not isinstance(p, dict) or not isinstance(p.get("port"), str) or not PORT_NAME.fullmatch(p["port"]):
        return ": needs a port name"
    if p.get("mode", "access") not in ("access", "trunk"):
        return ".mode: %r is not access or trunk" % (p.get("mode"),)
    return ""


def _vni_clashes(switch: str, tenants: list, whole: list[int], columns: dict[str, list]) -> list[str]:
    """An L3 VNI may not equal any L2 VNI (Cumulus rule; checked for every platform)."""
    l2 = {v for v in columns["vni"] if isinstance(v, int)}
    if not l2.intersection(v for v in columns["l3vni"] if isinstance(v, int)):
        return []
    l2vnis = {tenants[i]["vni"]: i for i in whole if isinstance(tenants[i]["vni"], int)}
    return [
        "%s.l3vni: %d equals the L2 VNI of %s; an L3 VNI may not equal any L2 VNI"
        % (_where(switch, i, t), t["l3vni"], _where(switch, l2vnis[t["l3vni"]], tenants[l2vnis[t["l3vni"]]]))
        for i, t in ((i, tenants[i]) for i in whole)
        if isinstance(t["l3vni"], int) and t["l3vni"] in l2vnis
    ]


def _l3vni_vlans(switch: str, tenants: list, whole: list[int], vlans: list, offset: int) -> list[str]:
    """Where an L3 VNI needs a VLAN of its own (``vlan + l3vni_vlan_offset``): in range, and not a tenant's."""
    lo, hi = VLAN_RANGE
    own = {v for v in vlans if isinstance(v, int)}
    l3 = {v + offset for v in own}
    if not l3 or (lo <= min(l3) and max(l3) <= hi and not l3 & own):
        return []
    by_vlan = {tenants[i]["vlan"]: i for i in whole if isinstance(tenants[i]["vlan"], int)}
    problems = []
    for i in whole:
        t = tenants[i]
        if not isinstance(t["vlan"], int):
            continue
        l3vlan = t["vlan"] + offset
        if not lo <= l3vlan <= hi:
            problems.append(
                "%s: the L3 VNI VLAN %d (vlan + l3vni_vlan_offset %d) is outside %d..%d"
                % (_where(switch, i, t), l3vlan, offset, lo, hi)
            )
        elif l3vlan in by_vlan:
            problems.append(
                "%s: the L3 VNI VLAN %d (vlan + l3vni_vlan_offset %d) is the VLAN of %s; choose another offset"
                % (_where(switch, i, t), l3vlan, offset, _where(switch, by_vlan[l3vlan], tenants[by_vlan[l3vlan]]))
            )
    return problems


@functools.lru_cache(maxsize=65536, typed=True)
def _own_problems(name: Any, vlan: Any, vni: Any, vrf: Any, l3vni: Any, gateway: Any, platform: Any) -> tuple:
    """What is wrong with one tenant's own fields (each problem after its path), cached by value
    and type: a tenant is on many switches."""
    problems = []
    if not isinstance(name, str) or not DNS_LABEL.fullmatch(name):
        problems.append(".name: %r is not a DNS-1123 label" % (name,))
    for key, value, (lo, hi) in (("vlan", vlan, VLAN_RANGE), ("vni", vni, VNI_RANGE), ("l3vni", l3vni, VNI_RANGE)):
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            problems.append(".%s: %r is outside %d..%d" % (key, value, lo, hi))
    spec = PLATFORMS.get(platform, {}) if isinstance(platform, str) else {}
    prefix = spec.get("vrf_prefix", "")
    if not isinstance(vrf, str) or not VRF_NAME.fullmatch(vrf):
        problems.append(".vrf: %r is not a VRF name (letter first, at most %d characters)" % (vrf, VRF_NAME_MAX))
    elif vrf.lower() in RESERVED_VRFS:
        # the switch's own (Cumulus and SONiC manage the switch in VRF mgmt): removing the tenant would remove it
        problems.append(".vrf: %r is reserved by the switch OS; pick another name" % (vrf,))
    elif len(prefix + vrf) > VRF_NAME_MAX:
        problems.append(
            ".vrf: %s names VRFs '%s<name>' with at most %d characters; %r is too long (at most %d)"
            % (spec["title"], prefix, VRF_NAME_MAX, vrf, VRF_NAME_MAX - len(prefix))
        )
    gateway_problem = _gateway_problem(str(gateway))
    if gateway_problem:
        problems.append(".gateway: " + gateway_problem % (gateway,))
    return tuple(problems)


@functools.lru_cache(maxsize=65536)
def _gateway_problem(gateway: str) -> str | None:
    """What is wrong with a tenant gateway (a format with one ``%s``/``%r``), or None."""
    try:
        iface = ipaddress.IPv4Interface(gateway)
    except ValueError:
        return "%r is not an IPv4 address with prefix (a.b.c.d/len)"
    if iface.network.prefixlen > 30 or iface.ip in (iface.network.network_address, iface.network.broadcast_address):
        return "%s is not a usable host address of its subnet"
    return None
