# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SONiC: tenant networks as config_db JSON, and back.

Private to the collection. Tables written, in the order they must be applied:
``DEVICE_METADATA`` (``docker_routing_config_mode: split``), ``VLAN``, ``VLAN_MEMBER``,
``VXLAN_TUNNEL``, ``VXLAN_EVPN_NVO``, ``VXLAN_TUNNEL_MAP`` (L2 VNI and L3 VNI maps), ``VRF``
(with its ``vni``: after the L3 VNI's tunnel map), ``SAG`` (master only) and
``VLAN_INTERFACE`` (VRF binding, anycast gateway, gateway address). Removal runs in the
reverse order.

The anycast gateway follows the switch's release (``os_version``): the ``SAG`` table and
``VLAN_INTERFACE.static_anycast_gateway`` exist on master only (SONiC YANG, 2026-06), so a
release up to 202605 gets the gateway address on every leaf's SVI with the same
``VLAN_INTERFACE.mac_addr`` (the fabric's anycast MAC), which those releases' YANG has.
The routing config mode is ``split``: in the default mode, FRR config written with
``write memory`` is rebuilt from config_db when the bgp container restarts.

The L3 VNI of a VRF needs a VLAN of its own on SONiC (mapped to the L3 VNI and bound to the
VRF, no members); it is ``vlan + l3vni_vlan_offset``. VRF names must start with ``Vrf``:
a tenant VRF ``acme`` is ``Vrf-acme``. Ownership: ``VLAN|VlanN`` carries
``description: gpucloud:<tenant>`` (its L3 VNI VLAN ``gpucloud:<tenant>:l3vni``).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from ..catalog import PLATFORMS
from ..errors import FabricError, NativeConfigError
from ..model import check_distinct, group_ids, pairs, port_key
from ..ownership import Found, at, is_partial, marker, number, owner, split_partial, stand_in

VTEP = "vtep"
NVO = "nvo"
TABLE_ORDER = (
    "DEVICE_METADATA",
    "VLAN",
    "VLAN_MEMBER",
    "VXLAN_TUNNEL",
    "VXLAN_EVPN_NVO",
    "VXLAN_TUNNEL_MAP",
    "VRF",
    "SAG",
    "VLAN_INTERFACE",
)
VRF_PREFIX = PLATFORMS["sonic"]["vrf_prefix"]
Item = tuple[str, str, tuple[tuple[str, str], ...]]


def vrf_name(vrf: str) -> str:
    return VRF_PREFIX + vrf


def uses_sag(switch: dict) -> bool:
    """The SAG table exists on master and on releases after 202605, not before."""
    version = str(switch.get("os_version") or "202605")
    return version == "master" or (version.isdigit() and int(version) > 202605)


def to_config_db(items: list[Item]) -> dict:
    """Items to config_db JSON, tables in apply order, entries in item order."""
    by_table: dict[str, dict[str, dict[str, str]]] = {}
    for table, key, fields in items:
        by_table.setdefault(table, {})[key] = dict(fields)
    return {table: by_table[table] for table in TABLE_ORDER if table in by_table}


def render_text(switch: dict, tenants: list[dict], underlay: dict, opts: dict) -> dict[str, str]:
    """``sonic.json``: the config_db JSON of the switch's tenants (``json.dumps(..., indent=2)`` form).

    The one writer of SONiC config: ``delta`` reads its tenants' entries back from it
    (``tenant_items``). VLAN_MEMBER is one entry per (VLAN, port); the entries of a port list
    shared by many tenants (a leaf's trunk ports) are formatted once and only the VLAN is
    filled in per tenant.
    """
    whole, half = split_partial(tenants)
    if half:
        # Half tenants (as parsed, for state=deleted's diff): the entries each has, merged in.
        items = db_items(json.loads(render_text(switch, whole, underlay, opts)["sonic.json"]))
        items += [item for t in half for item in tenant_items(switch, t, underlay, opts)]
        return {"sonic.json": json.dumps(to_config_db(items), indent=2) + "\n"}
    if not tenants:
        return {"sonic.json": "{}\n"}
    check_distinct(tenants, "vrf")
    vlans = {t["vlan"] for t in tenants} | {t["vlan"] + opts["l3vni_vlan_offset"] for t in tenants}
    if len(vlans) != 2 * len(tenants):
        raise FabricError(
            ["two tenants' VLANs or L3 VNI VLANs (vlan + l3vni_vlan_offset %d) coincide" % opts["l3vni_vlan_offset"]]
        )
    return {"sonic.json": _json_text(switch, tenants, underlay, opts)}


_J = functools.lru_cache(maxsize=65536)(json.dumps)
_J_VLAN = (
    '    "Vlan%(vlan)d": {\n      "description": %(marker)s,\n      "vlanid": "%(vlan)d"\n    },\n'
    '    "Vlan%(l3)d": {\n      "description": %(l3marker)s,\n      "vlanid": "%(l3)d"\n    }'
)
_J_MAP = (
    '    "vtep|map_%(vni)d_Vlan%(vlan)d": {\n      "vlan": "Vlan%(vlan)d",\n      "vni": "%(vni)d"\n    },\n'
    '    "vtep|map_%(l3vni)d_Vlan%(l3)d": {\n      "vlan": "Vlan%(l3)d",\n      "vni": "%(l3vni)d"\n    }'
)
_J_VRF = '    %(vrf)s: {\n      "vni": "%(l3vni)d"\n    }'
_J_IFACE = (
    '    "Vlan%(vlan)d": {\n      %(anycast)s,\n      "vrf_name": %(vrf)s\n    },\n'
    "    %(gateway)s: {},\n"
    '    "Vlan%(l3)d": {\n      "vrf_name": %(vrf)s\n    }'
)


def _json_text(switch: dict, tenants: list[dict], underlay: dict, opts: dict) -> str:
    offset = opts["l3vni_vlan_offset"]
    sag = uses_sag(switch)
    anycast = '"static_anycast_gateway": "true"' if sag else '"mac_addr": %s' % _J(underlay["anycast_mac"])
    vlan_t, member_t, map_t, vrf_t, iface_t = [], [], [], [], []
    members: dict[int, str] = {}  # port group -> its VLAN_MEMBER entries, VLAN as NUL
    for t, gid in zip(tenants, group_ids(tenants), strict=True):
        m = marker(t["name"])
        v = {
            "vlan": t["vlan"],
            "l3": t["vlan"] + offset,
            "vni": t["vni"],
            "l3vni": t["l3vni"],
            "marker": _J(m),
            "l3marker": _J(m + ":l3vni"),
            "vrf": _J(vrf_name(t["vrf"])),
            "gateway": _J("Vlan%d|%s" % (t["vlan"], t["gateway"])),
            "anycast": anycast,
        }
        vlan_t.append(_J_VLAN % v)
        map_t.append(_J_MAP % v)
        vrf_t.append(_J_VRF % v)
        iface_t.append(_J_IFACE % v)
        if t["ports"]:
            text = members.get(gid)
            if text is None:
                text = members[gid] = ",\n".join(
                    '    %s: {\n      "tagging_mode": "%s"\n    }'
                    % (
                        _J("Vlan\0|%s" % p["port"]).replace("\\u0000", "\0"),
                        "untagged" if p["mode"] == "access" else "tagged",
                    )
                    for p in {p["port"]: p for p in t["ports"]}.values()  # a port listed twice: one entry
                )
            member_t.append(text.replace("\0", str(t["vlan"])))
    tables = [
        ("DEVICE_METADATA", ['    "localhost": {\n      "docker_routing_config_mode": "split"\n    }']),
        ("VLAN", vlan_t),
        ("VLAN_MEMBER", member_t),
    ]
    tables += [
        ("VXLAN_TUNNEL", ['    "%s": {\n      "src_ip": %s\n    }' % (VTEP, _J(switch["loopback"]))]),
        ("VXLAN_EVPN_NVO", ['    "%s": {\n      "source_vtep": "%s"\n    }' % (NVO, VTEP)]),
        ("VXLAN_TUNNEL_MAP", map_t),
        ("VRF", vrf_t),
        ("SAG", ['    "GLOBAL": {\n      "gateway_mac": %s\n    }' % _J(underlay["anycast_mac"])] if sag else []),
        ("VLAN_INTERFACE", iface_t),
    ]
    return (
        "{\n"
        + ",\n".join('  "%s": {\n%s\n  }' % (table, ",\n".join(entries)) for table, entries in tables if entries)
        + "\n}\n"
    )


GLOBAL_TABLES = frozenset(("DEVICE_METADATA", "VXLAN_TUNNEL", "VXLAN_EVPN_NVO", "SAG"))


def db_items(db: dict) -> list[Item]:
    """config_db JSON to ``(table, key, fields)`` items, in its order."""
    return [
        (table, key, tuple(sorted(fields.items()))) for table, entries in db.items() for key, fields in entries.items()
    ]


def global_items(switch: dict, underlay: dict, opts: dict) -> list[Item]:
    """The switch-wide entries every tenant needs (never deleted), as the writer writes them."""
    return db_items(json.loads(_json_text(switch, [], underlay, opts)))


def tenant_items(switch: dict, t: dict, underlay: dict, opts: dict) -> list[Item]:
    """One tenant's entries, read back from the writer's config_db JSON.

    A half tenant: the entries of the parts it has (``stand_in``): an entry whose key holds a
    part it lacks is left out, as is a field that holds one (``VRF|Vrf-x`` without its ``vni``).
    """
    t, missing = stand_in(t)
    items = [i for i in db_items(json.loads(_json_text(switch, [t], underlay, opts))) if i[0] not in GLOBAL_TABLES]
    if missing is None:
        return items
    return [
        (table, key, tuple(f for f in fields if not missing.search(repr(f))))
        for table, key, fields in items
        if not missing.search(key)
    ]


def delta(switch: dict, before: list[dict], after: list[dict], underlay: dict, opts: dict) -> dict:
    """``{"delete": ["TABLE|key", ...] (apply order), "set": config_db JSON}``."""
    delete: list[Item] = []
    sets: list[Item] = []
    for old, new in pairs(before, after):
        old_items = tenant_items(switch, old, underlay, opts) if old else []
        new_items = tenant_items(switch, new, underlay, opts) if new else []
        new_keys = {(table, key) for table, key, unused in new_items}
        old_set = set(old_items)
        delete.extend(i for i in old_items if (i[0], i[1]) not in new_keys)
        sets.extend(i for i in new_items if i not in old_set)
    rank = {table: n for n, table in enumerate(TABLE_ORDER)}
    # Reverse dependency order; within VLAN_INTERFACE the address before the interface.
    delete.sort(key=lambda i: (-rank[i[0]], -i[1].count("|")))
    if sets:
        sets = global_items(switch, underlay, opts) + sets
    return {"delete": ["%s|%s" % (table, key) for table, key, unused in delete], "set": to_config_db(sets)}


def commands(switch: dict, before: list[dict], after: list[dict], underlay: dict, opts: dict,
             running: Any = None) -> dict:  # pylint: disable=unused-argument
    """The native change in the module's result form (``delta``'s)."""
    return delta(switch, before, after, underlay, opts)


def load(config: Any) -> dict:
    """config_db JSON (text or parsed) to a dict; ``NativeConfigError`` for anything else."""
    if isinstance(config, str):
        if not config.strip():
            return {}
        try:
            config = json.loads(config)
        except ValueError as exc:
            raise NativeConfigError(["running_config: not config_db JSON (%s)" % exc]) from None
    return at(config, "running_config")


def _vrf(name: Any, path: str) -> str:
    if not isinstance(name, str):
        raise NativeConfigError(["%s: %r is not a VRF name" % (path, name)])
    return name[len(VRF_PREFIX) :] if name.startswith(VRF_PREFIX) else name


def _vlan_name(value: Any, where: str) -> str | None:
    """A tunnel map's VLAN, as config_db holds it (a name such as Vlan101); anything else is not config_db's."""
    if value is None or isinstance(value, str):
        return value
    raise NativeConfigError(["%s: %r is not a VLAN name (config_db holds e.g. Vlan101)" % (where, value)])


def foreign_vlans(config: Any) -> set[int]:
    """The VLANs of a config_db that are none of ours (``VLAN|VlanN`` without a ``gpucloud:`` description): a
    tenant (or its L3 VNI VLAN) put on one would take the operator's VLAN over, and remove it with the tenant."""
    out: set[int] = set()
    for name, fields in at(load(config), "", "VLAN").items():
        if owner(at(fields, "VLAN|%s" % name).get("description")) is None and str(name)[4:].isdigit() \
                and str(name).startswith("Vlan"):
            out.add(int(str(name)[4:]))
    return out


def _our_vlans(db: dict) -> set[str]:
    """The VLANs of a config_db marked as ours (``VLAN|VlanN`` with a ``gpucloud:`` description), L3 VNI VLANs too."""
    return {str(name) for name, fields in at(db, "", "VLAN").items()
            if owner(at(fields, "VLAN|%s" % name).get("description")) is not None}


def foreign_vrfs(config: Any) -> set[str]:
    """The VRFs of a config_db (``VRF|Vrf-...``) that no VLAN of ours is bound to (``VLAN_INTERFACE|VlanN
    vrf_name``, the tenant's VLAN or its L3 VNI VLAN)."""
    db = load(config)
    ours = _our_vlans(db)
    used = {str(at(fields, "VLAN_INTERFACE|%s" % key).get("vrf_name", "")) for key, fields
            in at(db, "", "VLAN_INTERFACE").items() if "|" not in str(key) and str(key) in ours}
    return {str(v) for v in at(db, "", "VRF")} - used


# The config_db tables whose interfaces are bound to a VRF (``vrf_name`` on the entry whose key is the interface).
INTERFACE_TABLES = ("VLAN_INTERFACE", "INTERFACE", "PORTCHANNEL_INTERFACE", "LOOPBACK_INTERFACE", "VLAN_SUB_INTERFACE")


def vrf_users(config: Any) -> dict[str, list[str]]:
    """``{VRF: interfaces}``: the interfaces of a config_db that are not ours (a ``VLAN_INTERFACE`` of a VLAN not
    marked as ours, a routed port, port channel, loopback or subinterface) by the VRF each is bound to
    (``vrf_name``, as the switch names it): removing a VRF of ours that one of them is bound to would leave the
    operator's interface bound to a VRF that is gone."""
    db = load(config)
    ours = _our_vlans(db)
    out: dict[str, list[str]] = {}
    for table in INTERFACE_TABLES:
        for key, fields in at(db, "", table).items():
            name = str(key)
            if "|" in name or (table == "VLAN_INTERFACE" and name in ours):
                continue
            vrf = at(fields, "%s|%s" % (table, name)).get("vrf_name")
            if vrf:
                out.setdefault(str(vrf), []).append(name)
    return {vrf: sorted(names, key=port_key) for vrf, names in out.items()}


def tenant_vrf(t: dict) -> str:
    """The tenant's VRF as the switch names it."""
    return vrf_name(t["vrf"])


def tenant_vlans(t: dict, opts: dict) -> list[int]:
    """The VLANs a tenant takes on the switch: its own and its L3 VNI's (``vlan + l3vni_vlan_offset``)."""
    return [t["vlan"], t["vlan"] + opts["l3vni_vlan_offset"]]


def parse(config: Any) -> list[dict]:
    """Tenants we own in a config_db (``sonic-cfggen -d --print-data``), in the neutral shape.

    ``IncompleteTenantError`` when a VLAN marked as ours is not a whole tenant (no tunnel map,
    VRF binding, VRF ``vni`` or gateway prefix) or has more than one ``VLAN_INTERFACE`` prefix;
    ``NativeConfigError`` when the config is not config_db's.
    """
    db = load(config)
    vlans = at(db, "", "VLAN")
    members: dict[str, list[dict]] = {}
    for key, fields in at(db, "", "VLAN_MEMBER").items():
        vlan, port = [*key.split("|", 1), ""][:2]
        mode = "access" if at(fields, "VLAN_MEMBER|" + key).get("tagging_mode") == "untagged" else "trunk"
        members.setdefault(vlan, []).append({"port": port, "mode": mode})
    vni_of: dict[Any, int] = {}  # VLAN -> the VNI mapped to it
    for key, fields in at(db, "", "VXLAN_TUNNEL_MAP").items():
        tunnel_map = at(fields, "VXLAN_TUNNEL_MAP|" + key)
        if tunnel_map:
            vni_of[_vlan_name(tunnel_map.get("vlan"), "VXLAN_TUNNEL_MAP|%s vlan" % key)] = number(
                tunnel_map.get("vni", 0), "VXLAN_TUNNEL_MAP|%s vni" % key)
    ifaces = at(db, "", "VLAN_INTERFACE")
    addresses: dict[str, list[str]] = {}
    for key in ifaces:
        if "|" in key:
            vlan, addr = key.split("|", 1)
            addresses.setdefault(vlan, []).append(addr)
    vrfs = at(db, "", "VRF")
    l3vlans = {
        owner(f.get("description")): name
        for name, f in vlans.items()
        if isinstance(f, dict) and str(f.get("description", "")).endswith(":l3vni")
    }
    found = Found()
    for name, fields in vlans.items():
        where = "VLAN|%s" % name
        description = at(fields, where).get("description")
        tenant = owner(description)
        if tenant is None or description.endswith(":l3vni"):
            continue
        vrf = at(ifaces.get(name), "VLAN_INTERFACE|" + name).get("vrf_name", "")
        gateways = addresses.get(name, [])
        paths = {
            "vni": "VXLAN_TUNNEL_MAP with vlan %s" % name,
            "vrf": "VLAN_INTERFACE|%s vrf_name" % name,
            "l3vni": "VRF|%s vni" % (vrf or "<vrf>"),
            "gateway": "VLAN_INTERFACE|%s|<prefix>" % name,
        }
        t = found.add(
            where,
            paths,
            name=tenant,
            vlan=number(fields.get("vlanid") or name[4:], where + " vlanid"),
            vni=vni_of.get(name, 0),
            vrf=_vrf(vrf, paths["vrf"]),
            l3vni=number(at(vrfs.get(vrf), "VRF|%s" % vrf).get("vni", 0), "VRF|%s vni" % vrf),
            gateway=gateways[0] if gateways else "",
            ports=members.get(name, []),
        )
        if is_partial(t):
            # For state=deleted: the tenant's L3 VNI VLAN (ours by its marker) still names its VRF
            # and L3 VNI when the SVI's binding or the VRF's vni is gone.
            l3 = l3vlans.get(tenant)
            bound = str(at(ifaces.get(l3), "VLAN_INTERFACE|%s" % l3).get("vrf_name", "")) if l3 else ""
            if not t["vrf"] and bound:
                t["vrf"] = _vrf(bound, "VLAN_INTERFACE|%s vrf_name" % l3)
            if not t["l3vni"] and l3:
                t["l3vni"] = vni_of.get(l3, 0)
        if len(gateways) > 1:
            # The collection writes one prefix, the anycast gateway; which of these is it? Taking
            # one would let a plan delete the others as if they were ours.
            found.conflicts.append(
                "%s (%s): VLAN_INTERFACE has %d prefixes on %s (%s); the collection writes one, the anycast gateway"
                % (where, marker(tenant), len(gateways), name, ", ".join(gateways))
            )
    return found.result()


# --- what results may show -------------------------------------------------------------------


def owned(config: Any) -> dict:
    """The part of a config_db (text or parsed) the collection reads: the VLANs marked as ours, their
    members, tunnel maps, interfaces and VRFs. ``parse`` reads the same tenants from it as from the whole
    config_db; nothing else of the switch (users, TACACS/RADIUS keys, SNMP, BGP sessions) is in it."""
    db = load(config)
    vlans = {name: fields for name, fields in at(db, "", "VLAN").items()
             if owner(at(fields, "VLAN|%s" % name).get("description")) is not None}
    out: dict[str, dict] = {"VLAN": vlans} if vlans else {}

    def keep(table: str, rows: dict) -> None:
        if rows:
            out[table] = rows

    keep("VLAN_MEMBER", {k: v for k, v in at(db, "", "VLAN_MEMBER").items() if k.split("|", 1)[0] in vlans})
    keep("VXLAN_TUNNEL_MAP", {k: v for k, v in at(db, "", "VXLAN_TUNNEL_MAP").items()
                              if _vlan_name(at(v, "VXLAN_TUNNEL_MAP|" + k).get("vlan"),
                                            "VXLAN_TUNNEL_MAP|%s vlan" % k) in vlans})
    ifaces = {k: v for k, v in at(db, "", "VLAN_INTERFACE").items() if k.split("|", 1)[0] in vlans}
    keep("VLAN_INTERFACE", ifaces)
    bound = {str(at(v, "VLAN_INTERFACE|" + k).get("vrf_name", "")) for k, v in ifaces.items() if "|" not in k}
    keep("VRF", {k: v for k, v in at(db, "", "VRF").items() if k in bound})
    return out
