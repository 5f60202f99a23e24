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

import functools
import ipaddress
import re
from typing import Any

from ._errors import ProblemsError
from ._fleet.views.switch import expand_switch

STATES = ("rendered", "merged", "replaced", "overridden", "deleted", "gathered", "parsed")
PLATFORMS = ("nvue", "sonic", "eos")
FRR_PLATFORMS = ("nvue", "sonic")
MARKER = "gpucloud:"
DEFAULT_RT_ASN = 64512
DEFAULT_L3VNI_VLAN_OFFSET = 2000
DEFAULT_OPTIONS = {"route_target_asn": DEFAULT_RT_ASN, "l3vni_vlan_offset": DEFAULT_L3VNI_VLAN_OFFSET}
TENANT_KEYS = ("name", "vlan", "vni", "vrf", "l3vni", "gateway", "subnet", "address", "ports")
# Platforms whose SVIs carry the leaf's own address besides the anycast gateway (NVUE's VRR).
SVI_ADDRESS_PLATFORMS = ("nvue",)
_PORT = re.compile(r"^[A-Za-z][A-Za-z0-9/._:-]*$")
_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_VRF = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,14}$")
_NO_PORTS: tuple = ()
# A tenant is on many switches: its neutral fields (without ports) by its fleet fields.
_NEUTRAL: dict[tuple, dict] = {}
_NEUTRAL_MAX = 65536


class FabricError(ProblemsError):
    """The switch data cannot be rendered."""

    HEAD = "switch tenants are invalid"


class IncompleteTenantError(FabricError):
    """A switch config holds objects marked as ours that do not make a whole tenant.

    ``tenants``: every tenant found, half ones included (the fields they lack empty), and
    ``half``: the names of the half ones, when the only problems are missing parts. ``tenants``
    is None when a tenant holds more than the one value the collection writes (which of them is
    ours cannot be told, so nothing may be removed).
    """

    HEAD = (
        "the switch config holds incomplete tenants of this collection; nothing was changed"
        " (remove them with state=deleted, or complete or remove these objects by hand, then run again)"
    )

    def __init__(self, problems: list[str], tenants: list[dict] | None = None, half: list[str] | None = None) -> None:
        super().__init__(problems)
        self.tenants = tenants
        self.half = sorted(set(half or ()))


# What a parsed tenant must have, and how the problem reads (the native path follows it).
PARSED_FIELDS = (
    ("vni", "no L2 VNI"),
    ("vrf", "no VRF"),
    ("l3vni", "no L3 VNI"),
    ("gateway", "no anycast gateway"),
)


def incomplete(where: str, tenant: dict, paths: dict[str, str]) -> list[str]:
    """What a parsed tenant (ours by its marker) lacks: one problem per missing field.

    ``where``: the native object that carries the marker; ``paths``: per field, where the
    platform keeps it (the problem names it, so the user knows what to add or remove). Without
    a VRF its L3 VNI cannot be looked up: only the VRF is reported.
    """
    return [
        "%s (%s): %s (%s)" % (where, marker(tenant["name"]), text, paths[key])
        for key, text in PARSED_FIELDS
        if not tenant.get(key) and not (key == "l3vni" and not tenant.get("vrf"))
    ]


def check_parsed(
    tenants: list[dict], gaps: list[str], conflicts: list[str] | None = None, half: list[str] | None = None
) -> list[dict]:
    """The parsed tenants (canonical order), or ``IncompleteTenantError`` naming every problem.

    A half tenant is never returned: planning on it would re-create it on top of what is there
    or unset what it cannot name. ``gaps`` (missing parts) leave the tenants on the error for
    ``state=deleted``, which removes the parts a half tenant has (``stand_in``); ``conflicts``
    (a second value where the collection writes one) leave none: nothing may be removed then.
    ``half``: the names of the tenants with gaps.
    """
    if gaps or conflicts:
        raise IncompleteTenantError([*gaps, *(conflicts or ())], None if conflicts else normalise(tenants), half)
    return normalise(tenants)


def is_partial(t: dict) -> bool:
    """Whether a parsed tenant lacks a part (``PARSED_FIELDS``): a half tenant."""
    return not (t["vni"] and t["vrf"] and t["l3vni"] and t["gateway"])


def split_partial(tenants: list[dict]) -> tuple[list[dict], list[dict]]:
    """``(whole, half)`` tenants, in their order; ``(tenants, [])`` when none is half."""
    half = [t for t in tenants if is_partial(t)]
    if not half:
        return tenants, half
    return [t for t in tenants if not is_partial(t)], half


# What the writers get for a half tenant's missing fields; none is a value validation lets
# through (VNI 16777215/16777216 are outside 1..16777214, the VRF name is longer than 15
# characters, a gateway is at most a /30), so a native item holding one is exactly a part the
# tenant does not have.
_STAND_INS = {"vni": 16777215, "vrf": "gpucloud-no-vrf-found", "l3vni": 16777216, "gateway": "255.255.255.255/32"}


def stand_in(t: dict) -> tuple[dict, re.Pattern | None]:
    """A half tenant with stand-ins for what it lacks, and the pattern that finds them in text.

    The writers write a half tenant whole, with the stand-ins; what holds one (``pattern.search``
    on the item's ``repr``) is left out. For a whole tenant: ``(t, None)``.
    """
    missing = [key for key, unused in PARSED_FIELDS if not t[key]]
    if not missing:
        return t, None
    filled = dict(t, **{key: _STAND_INS[key] for key in missing})
    words = [re.escape(str(_STAND_INS[key])) for key in missing]
    return filled, re.compile(r"(?<![\d.])(?:%s)(?![\d])" % "|".join(words))


def without_stand_ins(items: list, missing: re.Pattern | None) -> list:
    """``items`` less those that hold a stand-in (``stand_in``'s pattern on their ``repr``);
    all of them for a whole tenant (``missing`` is None)."""
    return items if missing is None else [i for i in items if not missing.search(repr(i))]


def marker(tenant: str) -> str:
    """The ownership marker written on the objects this collection creates."""
    return MARKER + tenant


def owner(text: str | None) -> str | None:
    """The tenant named by an ownership marker, or None when the object is not ours."""
    if not text or not text.startswith(MARKER):
        return None
    name = text[len(MARKER) :].split(":", 1)[0]
    return name if _NAME.match(name) else None


@functools.lru_cache(maxsize=65536)
def port_key(port: str) -> tuple:
    """Natural sort key of a port (or config line): ``swp2`` before ``swp10``."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", port))


def neutral_tenant(t: dict, ports: list[dict] | None = None) -> dict:
    """One tenant of ``gpucloud_switch.tenants`` in the neutral shape.

    ``ports``: its ports already in the neutral shape (``normalise`` shares one list between
    the tenants whose ports are the same, as the fleet shares a leaf's trunk ports).
    """
    gateway = str(t["gateway"])
    return {
        "name": str(t["name"]),
        "vlan": int(t["vlan"]),
        "vni": int(t["vni"]),
        "vrf": str(t["vrf"]),
        "l3vni": int(t["l3vni"]),
        "gateway": gateway,
        "subnet": t.get("subnet") or (subnet_of(gateway) if gateway else ""),
        "address": str(t.get("address") or ""),
        "ports": neutral_ports(t.get("ports") or ()) if ports is None else ports,
    }


def neutral_ports(ports: Any) -> list[dict]:
    return sorted(
        ({"port": str(p["port"]), "mode": str(p.get("mode", "access"))} for p in ports),
        key=lambda p: port_key(p["port"]),
    )


def subnet_of(gateway: str) -> str:
    return str(ipaddress.ip_interface(gateway).network)


def normalise(tenants: list[dict]) -> list[dict]:
    """Sorted by VLAN, ports sorted: the canonical order every renderer and diff uses.

    Tenants with the same ports (on a leaf, every shared tenant has the leaf's trunk ports)
    get one and the same ``ports`` list: it is sorted once, and the renderers build the text of
    a ports list once (see ``port_groups``). Treat ``ports`` as read-only.
    """
    by_id: dict[int, list[dict]] = {}
    by_content: dict[tuple, list[dict]] = {}
    out = []
    for t in tenants:
        raw = t.get("ports") or _NO_PORTS
        ports = by_id.get(id(raw))
        if ports is None:
            key = tuple((str(p["port"]), str(p.get("mode", "access"))) for p in raw)
            ports = by_content.get(key)
            if ports is None:
                ports = by_content[key] = neutral_ports(raw)
            by_id[id(raw)] = ports
        try:
            key = (
                t["name"], t["vlan"], t["vni"], t["vrf"], t["l3vni"], t["gateway"], t.get("subnet"), t.get("address")
            )  # fmt: skip
            scalars = _NEUTRAL.get(key)
        except TypeError:  # unhashable values: not cached
            key, scalars = None, None
        if scalars is None:
            scalars = neutral_tenant(t, _NO_PORTS)
            if key is not None:
                if len(_NEUTRAL) >= _NEUTRAL_MAX:
                    _NEUTRAL.clear()
                _NEUTRAL[key] = scalars
        out.append(dict(scalars, ports=ports))
    out.sort(key=lambda t: (t["vlan"], t["name"]))
    return out


class PortGroup:
    """Ports of a switch with one config: the ports, and the VLANs they carry (tenant order).

    ``first``: the index of the first tenant that has them (where a tree-ordered file puts them);
    ``text``: the writers' cache of what they format once per group.
    """

    __slots__ = ("first", "ports", "text", "vlans")

    def __init__(self, ports: list[dict], first: int) -> None:
        self.ports = ports
        self.vlans: list[int] = []
        self.first = first
        self.text: dict[str, Any] = {}


def port_groups(tenants: list[dict]) -> list[PortGroup]:
    """The ports of tenants (neutral shape, canonical order) grouped by config, in tenant order.

    On a leaf every shared tenant has the same ``ports`` list (the trunk ports, see
    ``normalise``): while each port is in exactly one list, once, a group is a list and its
    config is formatted once. Otherwise (a gathered config whose lists overlap) each port is a
    group of its own, its VLANs those of every tenant that has it. A port that is both access
    and trunk, or the access port of two tenants, cannot be written: ``FabricError``.
    """
    groups: dict[int, PortGroup] = {}
    for i, t in enumerate(tenants):
        g = groups.get(id(t["ports"]))
        if g is None:
            g = groups[id(t["ports"])] = PortGroup(t["ports"], i)
        g.vlans.append(t["vlan"])
    names: set[str] = set()
    total = 0
    for g in groups.values():
        total += len(g.ports)
        names.update(p["port"] for p in g.ports)
    if total == len(names):
        return list(groups.values())
    problems = _check_ports("", tenants)
    if problems:
        raise FabricError([p.lstrip(": ") for p in problems])
    per_port: dict[str, PortGroup] = {}
    for i, t in enumerate(tenants):
        for p in t["ports"]:
            g = per_port.get(p["port"])
            if g is None:
                g = per_port[p["port"]] = PortGroup([p], i)
            if t["vlan"] not in g.vlans:
                g.vlans.append(t["vlan"])
    return list(per_port.values())


def check_distinct(tenants: list[dict], *keys: str) -> None:
    """``FabricError`` unless no two tenants share a value of any of ``keys`` (validated input holds)."""
    n = len(tenants)
    for key in keys:
        if len({t[key] for t in tenants}) != n:
            raise FabricError(["two tenants have the same %s; a switch holds each once" % key])


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
    if _all_good(platform, tenants, opts):
        return []
    return _tenant_list_problems(switch, platform, tenants, opts)


def _all_good(platform: str, tenants: Any, opts: dict) -> bool:
    """A quick look that finds no problem in valid tenants (the fleet's); else the full check runs.

    A tenant is on many switches: its own fields are checked once (cached); uniqueness with
    sets; a port list shared by many tenants once.
    """
    try:
        if not isinstance(tenants, list) or not all(isinstance(t, dict) for t in tenants):
            return False
        for t in tenants:
            if _tenant_problems(t["name"], t["vlan"], t["vni"], t["vrf"], t["l3vni"], t["gateway"], platform):
                return False
        n = len(tenants)
        for key in ("name", "vlan", "vni", "vrf", "l3vni"):
            if len({t[key] for t in tenants}) != n:
                return False
        vlans = {t["vlan"] for t in tenants}
        if {t["vni"] for t in tenants} & {t["l3vni"] for t in tenants}:
            return False
        if platform == "sonic":
            l3vlans = {v + opts["l3vni_vlan_offset"] for v in vlans}
            if l3vlans & vlans or not all(1 <= v <= 4094 for v in l3vlans):
                return False
        lists = {id(t.get("ports") or _NO_PORTS): t.get("ports") or _NO_PORTS for t in tenants}
        for ports in lists.values():
            for p in ports:
                if not isinstance(p, dict) or not isinstance(p.get("port"), str) or not _PORT.match(p["port"]):
                    return False
                if p.get("mode", "access") not in ("access", "trunk"):
                    return False
    except (KeyError, TypeError, AttributeError):
        return False
    return not _check_ports("", tenants)


def _tenant_list_problems(switch: str, platform: str, tenants: list, opts: dict) -> list[str]:
    problems: list[str] = []
    seen: dict[str, dict[Any, int]] = {key: {} for key in ("name", "vlan", "vni", "vrf", "l3vni")}
    l2vnis: dict[int, int] = {}  # VNI -> index of its tenant
    vlans: dict[int, int] = {}
    good_ports: set[int] = set()  # ids of port lists without problems (tenants is alive meanwhile)

    def where(i: int) -> str:
        return "%s.tenants[%d] (%s)" % (switch, i, tenants[i]["name"])

    for i, t in enumerate(tenants):
        if not isinstance(t, dict):
            problems.append("%s.tenants[%d]: must be a mapping" % (switch, i))
            continue
        missing = [k for k in ("name", "vlan", "vni", "vrf", "l3vni", "gateway") if k not in t]
        if missing:
            problems.append("%s.tenants[%d]: missing %s" % (switch, i, ", ".join(missing)))
            continue
        fields = (t["name"], t["vlan"], t["vni"], t["vrf"], t["l3vni"], t["gateway"], platform)
        try:
            own = _tenant_problems(*fields)
        except TypeError:  # unhashable values: check without the cache
            own = _tenant_problems.__wrapped__(*fields)
        if own:
            path = where(i)
            problems.extend(path + problem for problem in own)
        for key, values in seen.items():
            try:
                first = values.setdefault(t[key], i)
            except TypeError:
                continue  # an unhashable value, already reported as invalid
            if first != i:
                problems.append(
                    "%s.%s: %s is already used by %s on this switch" % (where(i), key, t[key], where(first))
                )
        if isinstance(t["vni"], int):
            l2vnis[t["vni"]] = i
        if isinstance(t["vlan"], int):
            vlans[t["vlan"]] = i
        ports = t.get("ports") or _NO_PORTS
        if id(ports) in good_ports:
            continue  # the same list (a leaf's trunk ports) was checked for an earlier tenant
        count = len(problems)
        for j, p in enumerate(ports):
            if not isinstance(p, dict) or not isinstance(p.get("port"), str) or not _PORT.match(p["port"]):
                problems.append("%s.ports[%d]: needs a port name" % (where(i), j))
            elif p.get("mode", "access") not in ("access", "trunk"):
                problems.append("%s.ports[%d].mode: %r is not access or trunk" % (where(i), j, p.get("mode")))
        if len(problems) == count and isinstance(ports, (list, tuple)):
            good_ports.add(id(ports))
    problems.extend(_check_ports(switch, tenants))
    for i, t in enumerate(tenants):
        if not isinstance(t, dict) or not isinstance(t.get("l3vni"), int):
            continue
        if t["l3vni"] in l2vnis:
            problems.append(
                "%s.tenants[%d] (%s).l3vni: %d equals the L2 VNI of %s; an L3 VNI may not equal any L2 VNI"
                % (switch, i, t.get("name"), t["l3vni"], where(l2vnis[t["l3vni"]]))
            )
        if platform == "sonic" and isinstance(t.get("vlan"), int):
            l3vlan = t["vlan"] + opts["l3vni_vlan_offset"]
            bad = l3vlan in vlans or not 1 <= l3vlan <= 4094
            here = "%s.tenants[%d] (%s)" % (switch, i, t.get("name")) if bad else ""
            if not 1 <= l3vlan <= 4094:
                problems.append(
                    "%s: the L3 VNI VLAN %d (vlan + l3vni_vlan_offset %d) is outside 1..4094"
                    % (here, l3vlan, opts["l3vni_vlan_offset"])
                )
            elif l3vlan in vlans:
                problems.append(
                    "%s: the L3 VNI VLAN %d (vlan + l3vni_vlan_offset %d) is the VLAN of %s; choose another offset"
                    % (here, l3vlan, opts["l3vni_vlan_offset"], where(vlans[l3vlan]))
                )
    return problems


def _check_ports(switch: str, tenants: list) -> list[str]:
    problems: list[str] = []
    access: dict[str, str] = {}
    modes: dict[str, str] = {}
    trunk_only: set[int] = set()  # ids of all-trunk lists seen without a problem: seen again, none
    for t in tenants:
        if not isinstance(t, dict):
            continue
        ports = t.get("ports") or _NO_PORTS
        if id(ports) in trunk_only:
            continue
        count = len(problems)
        for p in ports:
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
        if (
            len(problems) == count
            and isinstance(ports, (list, tuple))
            and all(isinstance(p, dict) and p.get("mode", "access") == "trunk" for p in ports)
        ):
            trunk_only.add(id(ports))
    return problems


@functools.lru_cache(maxsize=65536, typed=True)
def _tenant_problems(name: Any, vlan: Any, vni: Any, vrf: Any, l3vni: Any, gateway: Any, platform: str) -> tuple:
    """What is wrong with one tenant's own fields (each problem after its path), cached: a
    tenant is on many switches."""
    problems = []
    if not isinstance(name, str) or not _NAME.match(name):
        problems.append(".name: %r is not a DNS-1123 label" % (name,))
    for key, value, lo, hi in (("vlan", vlan, 1, 4094), ("vni", vni, 1, 16777214), ("l3vni", l3vni, 1, 16777214)):
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            problems.append(".%s: %r is outside %d..%d" % (key, value, lo, hi))
    if not isinstance(vrf, str) or not _VRF.match(vrf):
        problems.append(".vrf: %r is not a VRF name (letter first, at most 15 characters)" % (vrf,))
    elif platform == "sonic" and len("Vrf-" + vrf) > 15:
        problems.append(
            ".vrf: SONiC names VRFs 'Vrf-<name>' with at most 15 characters; %r is too long (at most 11)" % (vrf,)
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
        raise FabricError(
            ["fleet_tenants: required for a compact gpucloud_switch (pass hostvars['localhost'].gpucloud_tenants)"]
        )
    return expand_switch(switch, fleet_tenants)


def desired(switch: dict) -> list[dict]:
    """The switch's tenants from the fleet model, in the neutral shape (spines: none).

    The leaf's own SVI address is kept only where the platform uses it (``SVI_ADDRESS_PLATFORMS``).
    """
    if switch.get("role") != "leaf":
        return []
    tenants = normalise(switch.get("tenants") or [])
    if switch.get("platform") not in SVI_ADDRESS_PLATFORMS:
        tenants = [dict(t, address="") if t["address"] else t for t in tenants]
    return tenants


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
