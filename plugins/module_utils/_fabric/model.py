# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tenant networks on a leaf switch, on a platform-neutral shape.

Private to the collection. The neutral shape of one switch's tenants (what ``parse`` of every
platform returns, and what every writer takes)::

    [{"name": "acme", "vlan": 101, "vni": 10101, "vrf": "acme", "l3vni": 50101,
      "gateway": "10.101.0.1/24", "subnet": "10.101.0.0/24", "address": "",
      "ports": [{"port": "swp1", "mode": "access"}]}]

It is the switch part of the fleet model (``gpucloud_switch.tenants``) without what a switch
cannot store: the node behind a port and the tenant's isolation.

Port groups: on a leaf every shared tenant has the same ports (the leaf's trunk ports), so a
writer formats a ports list once per switch, not once per tenant. Which tenants share a list is
decided by value (``group_ids``): a list copied by a caller or a renderer is still the same group.
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Any

from .._fleet.views.switch import expand_switch, port_key
from .catalog import PLATFORMS
from .errors import FabricError

DEFAULT_RT_ASN = 64512
DEFAULT_L3VNI_VLAN_OFFSET = 2000
DEFAULT_OPTIONS = {"route_target_asn": DEFAULT_RT_ASN, "l3vni_vlan_offset": DEFAULT_L3VNI_VLAN_OFFSET}
TENANT_KEYS = ("name", "vlan", "vni", "vrf", "l3vni", "gateway", "subnet", "address", "ports")

__all__ = ["port_key"]  # the one natural sort order of ports (the fleet's), re-exported for the platforms


def options_with_defaults(options: dict | None) -> dict:
    out = dict(DEFAULT_OPTIONS)
    out.update({k: v for k, v in (options or {}).items() if v is not None})
    return out


def subnet_of(gateway: str) -> str:
    return str(ipaddress.ip_interface(gateway).network)


def neutral_ports(ports: Any) -> list[dict]:
    return sorted(
        ({"port": str(p["port"]), "mode": str(p.get("mode", "access"))} for p in ports),
        key=lambda p: port_key(p["port"]),
    )


def neutral_tenant(t: dict, ports: list[dict] | None = None) -> dict:
    """One tenant of ``gpucloud_switch.tenants`` in the neutral shape.

    ``ports``: its ports already in the neutral shape (``normalise`` gives the tenants of one
    port group one list).
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


@functools.lru_cache(maxsize=65536)
def _scalars(name: Any, vlan: Any, vni: Any, vrf: Any, l3vni: Any, gateway: Any, subnet: Any) -> dict:
    """A tenant's neutral fields but its ports and the leaf's own ``address``, by value: the same
    on every switch that carries the tenant. Read-only: callers copy it."""
    t = {"name": name, "vlan": vlan, "vni": vni, "vrf": vrf, "l3vni": l3vni, "gateway": gateway, "subnet": subnet}
    return neutral_tenant(t, [])


def _ports_value(raw: Any) -> tuple:
    """What makes two ports lists the same group: their ports and modes, in their order."""
    return tuple((str(p["port"]), str(p.get("mode", "access"))) for p in raw)


def group_ids(tenants: list) -> list[int]:
    """Per tenant, the id of its port group: equal ports lists (the same ports and modes in the
    same order) get the same id, whether or not they are one list object.

    Computed once per list: a list object already seen in this call is not read again (one
    object is equal to itself). A list that is not one of ports (bad input) is a group of its own.
    """
    ids: list[int] = []
    append = ids.append
    seen: dict[int, int] = {}  # id() of a list held by ``tenants`` -> its group, during this call
    by_value: dict[tuple, int] = {}
    for t in tenants:
        try:
            raw = t.get("ports") or ()
        except AttributeError:  # not a tenant: no ports
            raw = ()
        gid = seen.get(id(raw))
        if gid is None:
            try:
                gid = by_value.setdefault(_ports_value(raw), len(seen))
            except (TypeError, KeyError, AttributeError):
                gid = len(seen)
            seen[id(raw)] = gid
        append(gid)
    return ids


def normalise(tenants: list[dict]) -> list[dict]:
    """Sorted by VLAN, ports sorted: the canonical order every renderer and diff uses.

    The tenants of one port group get one and the same ``ports`` list (sorted once); treat
    ``ports`` as read-only.
    """
    lists: dict[int, list[dict]] = {}
    out = []
    for t, gid in zip(tenants, group_ids(tenants), strict=True):
        ports = lists.get(gid)
        if ports is None:
            ports = lists[gid] = neutral_ports(t.get("ports") or ())
        try:
            scalars = _scalars(t["name"], t["vlan"], t["vni"], t["vrf"], t["l3vni"], t["gateway"], t.get("subnet"))
        except TypeError:  # an unhashable value
            scalars = neutral_tenant(t, [])
        out.append(dict(scalars, address=str(t.get("address") or ""), ports=ports))
    out.sort(key=lambda t: (t["vlan"], t["name"]))
    return out


class PortGroup:
    """Ports of a switch with one config: the ports, and the VLANs they carry (tenant order).

    ``first``: the index of the first tenant that has them (where a tree-ordered file puts them).
    """

    __slots__ = ("first", "ports", "vlans")

    def __init__(self, ports: list[dict], first: int) -> None:
        self.ports = ports
        self.vlans: list[int] = []
        self.first = first


def port_groups(tenants: list[dict], ids: list[int] | None = None) -> list[PortGroup]:
    """The ports of tenants (neutral shape, canonical order) grouped by config, in tenant order.

    While each port is in exactly one group, once (a leaf: its trunk ports, and each private
    tenant's access ports), a group is a ports list and its config is formatted once. Otherwise
    (a gathered config whose lists overlap) each port is a group of its own, its VLANs those of
    every tenant that has it. A port that is both access and trunk, or the access port of two
    tenants, cannot be written: ``FabricError``. ``ids``: ``group_ids(tenants)``, if known.
    """
    ids = group_ids(tenants) if ids is None else ids
    groups: dict[int, PortGroup] = {}
    for i, (t, gid) in enumerate(zip(tenants, ids, strict=True)):
        g = groups.get(gid)
        if g is None:
            g = groups[gid] = PortGroup(t["ports"], i)
        g.vlans.append(t["vlan"])
    names: set[str] = set()
    total = 0
    for g in groups.values():
        total += len(g.ports)
        names.update(p["port"] for p in g.ports)
    if total == len(names):
        return list(groups.values())
    problems = port_conflicts("", tenants, ids)
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


def port_conflicts(switch: str, tenants: list, ids: list[int]) -> list[str]:
    """Ports that cannot be written: both access and trunk, or the access port of two tenants.

    ``ids``: ``group_ids(tenants)``; a group of trunk ports already seen without a problem is not
    read again (a leaf's trunk ports are the ports of every shared tenant).
    """
    problems: list[str] = []
    access: dict[str, str] = {}
    modes: dict[str, str] = {}
    trunk_only: set[int] = set()
    for t, gid in zip(tenants, ids, strict=True):
        if not isinstance(t, dict) or gid in trunk_only:
            continue
        ports = t.get("ports") or ()
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
            trunk_only.add(gid)
    return problems


def check_distinct(tenants: list[dict], *keys: str) -> None:
    """``FabricError`` unless no two tenants share a value of any of ``keys`` (validated input holds)."""
    n = len(tenants)
    for key in keys:
        if len({t[key] for t in tenants}) != n:
            raise FabricError(["two tenants have the same %s; a switch holds each once" % key])


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

    The leaf's own SVI address is kept only where the platform writes it (``svi_address``).
    """
    if switch.get("role") != "leaf":
        return []
    tenants = normalise(switch.get("tenants") or [])
    if not PLATFORMS.get(switch.get("platform"), {}).get("svi_address"):
        tenants = [dict(t, address="") if t["address"] else t for t in tenants]
    return tenants


def pairs(before: list[dict], after: list[dict]) -> list[tuple[dict | None, dict | None]]:
    """(old, new) per tenant name that differs, in VLAN order; None where absent."""
    b = {t["name"]: t for t in before}
    a = {t["name"]: t for t in after}
    out = []
    for name in sorted(set(a) | set(b), key=lambda n: ((a.get(n) or b.get(n))["vlan"], n)):
        if a.get(name) != b.get(name):
            out.append((b.get(name), a.get(name)))
    return out
