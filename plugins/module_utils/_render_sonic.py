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

from ._fabric import distinct, marker, normalise, owner, pairs, port_groups, port_key

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
VRF_PREFIX = "Vrf-"
Item = tuple[str, str, tuple[tuple[str, str], ...]]


def vrf_name(vrf: str) -> str:
    return VRF_PREFIX + vrf


def _item(table: str, key: str, **fields: str) -> Item:
    return (table, key, tuple(sorted(fields.items())))


def uses_sag(switch: dict) -> bool:
    """The SAG table exists on master and on releases after 202605, not before."""
    version = str(switch.get("os_version") or "202605")
    return version == "master" or (version.isdigit() and int(version) > 202605)


def global_items(switch: dict, underlay: dict) -> list[Item]:
    items = [
        _item("DEVICE_METADATA", "localhost", docker_routing_config_mode="split"),
        _item("VXLAN_TUNNEL", VTEP, src_ip=switch["loopback"]),
        _item("VXLAN_EVPN_NVO", NVO, source_vtep=VTEP),
    ]
    if uses_sag(switch):
        items.append(_item("SAG", "GLOBAL", gateway_mac=underlay["anycast_mac"]))
    return items


def _gateway_fields(switch: dict, underlay: dict) -> dict:
    if uses_sag(switch):
        return {"static_anycast_gateway": "true"}
    return {"mac_addr": underlay["anycast_mac"]}


def tenant_items(t: dict, opts: dict, gateway: dict) -> list[Item]:
    """``gateway``: the SVI's anycast-gateway fields for the switch's release (``_gateway_fields``)."""
    vlan = "Vlan%d" % t["vlan"]
    l3 = t["vlan"] + opts["l3vni_vlan_offset"]
    l3vlan = "Vlan%d" % l3
    vrf = vrf_name(t["vrf"])
    items = [
        _item("VLAN", vlan, vlanid=str(t["vlan"]), description=marker(t["name"])),
        _item("VLAN", l3vlan, vlanid=str(l3), description=marker(t["name"]) + ":l3vni"),
    ]
    for p in t["ports"]:
        items.append(
            _item(
                "VLAN_MEMBER",
                "%s|%s" % (vlan, p["port"]),
                tagging_mode="untagged" if p["mode"] == "access" else "tagged",
            )
        )
    items += [
        _item("VXLAN_TUNNEL_MAP", "%s|map_%d_%s" % (VTEP, t["vni"], vlan), vlan=vlan, vni=str(t["vni"])),
        _item("VXLAN_TUNNEL_MAP", "%s|map_%d_%s" % (VTEP, t["l3vni"], l3vlan), vlan=l3vlan, vni=str(t["l3vni"])),
        _item("VRF", vrf, vni=str(t["l3vni"])),
        _item("VLAN_INTERFACE", vlan, vrf_name=vrf, **gateway),
        _item("VLAN_INTERFACE", "%s|%s" % (vlan, t["gateway"])),
        _item("VLAN_INTERFACE", l3vlan, vrf_name=vrf),
    ]
    return items


def to_config_db(items: list[Item]) -> dict:
    """Items to config_db JSON, tables in apply order, entries in item order."""
    by_table: dict[str, dict[str, dict[str, str]]] = {}
    for table, key, fields in items:
        by_table.setdefault(table, {})[key] = dict(fields)
    return {table: by_table[table] for table in TABLE_ORDER if table in by_table}


def all_items(switch: dict, tenants: list[dict], underlay: dict, opts: dict) -> list[Item]:
    items = global_items(switch, underlay) if tenants else []
    gateway = _gateway_fields(switch, underlay)
    for t in tenants:
        items.extend(tenant_items(t, opts, gateway))
    return items


def render(switch: dict, tenants: list[dict], underlay: dict, opts: dict) -> dict:
    return to_config_db(all_items(switch, tenants, underlay, opts))


def render_text(switch: dict, tenants: list[dict], underlay: dict, opts: dict) -> dict[str, str]:
    """``sonic.json``: ``json.dumps(render(...), indent=2)``, written directly.

    VLAN_MEMBER is one entry per (VLAN, port); the entries of a port list shared by many tenants
    (a leaf's trunk ports) are formatted once and only the VLAN is filled in per tenant.
    """
    if not tenants:
        return {"sonic.json": "{}\n"}
    groups, unique = port_groups(tenants)
    vlans = {t["vlan"] for t in tenants} | {t["vlan"] + opts["l3vni_vlan_offset"] for t in tenants}
    if not unique or len(vlans) != 2 * len(tenants) or not distinct(tenants, "vrf"):
        # keys that coincide: let a dict merge them as config_db would
        return {"sonic.json": json.dumps(render(switch, tenants, underlay, opts), indent=2) + "\n"}
    return {"sonic.json": _json_text(switch, tenants, groups, underlay, opts)}


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


def _json_text(switch: dict, tenants: list[dict], groups: dict, underlay: dict, opts: dict) -> str:
    offset = opts["l3vni_vlan_offset"]
    sag = uses_sag(switch)
    anycast = '"static_anycast_gateway": "true"' if sag else '"mac_addr": %s' % _J(underlay["anycast_mac"])
    vlan_t, member_t, map_t, vrf_t, iface_t = [], [], [], [], []
    for t in tenants:
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
            g = groups[id(t["ports"])]
            text = g.text.get("json")
            if text is None:
                text = g.text["json"] = ",\n".join(
                    '    %s: {\n      "tagging_mode": "%s"\n    }'
                    % (
                        _J("Vlan\0|%s" % p["port"]).replace("\\u0000", "\0"),
                        "untagged" if p["mode"] == "access" else "tagged",
                    )
                    for p in g.ports
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


def delta(switch: dict, before: list[dict], after: list[dict], underlay: dict, opts: dict) -> dict:
    """``{"delete": ["TABLE|key", ...] (apply order), "set": config_db JSON}``."""
    delete: list[Item] = []
    sets: list[Item] = []
    gateway = _gateway_fields(switch, underlay)
    for old, new in pairs(before, after):
        old_items = tenant_items(old, opts, gateway) if old else []
        new_items = tenant_items(new, opts, gateway) if new else []
        new_keys = {(table, key) for table, key, unused in new_items}
        old_set = set(old_items)
        delete.extend(i for i in old_items if (i[0], i[1]) not in new_keys)
        sets.extend(i for i in new_items if i not in old_set)
    rank = {table: n for n, table in enumerate(TABLE_ORDER)}
    # Reverse dependency order; within VLAN_INTERFACE the address before the interface.
    delete.sort(key=lambda i: (-rank[i[0]], -i[1].count("|")))
    if sets:
        sets = global_items(switch, underlay) + sets
    return {"delete": ["%s|%s" % (table, key) for table, key, unused in delete], "set": to_config_db(sets)}


def load(config: Any) -> dict:
    if isinstance(config, str):
        return json.loads(config) if config.strip() else {}
    return config if isinstance(config, dict) else {}


def parse(config: Any) -> list[dict]:
    """Tenants we own in a config_db (``sonic-cfggen -d --print-data``), in the neutral shape."""
    db = load(config)
    vlans = db.get("VLAN") or {}
    members: dict[str, list[dict]] = {}
    for key, fields in (db.get("VLAN_MEMBER") or {}).items():
        vlan, port = [*key.split("|", 1), ""][:2]
        mode = "access" if (fields or {}).get("tagging_mode") == "untagged" else "trunk"
        members.setdefault(vlan, []).append({"port": port, "mode": mode})
    vni_of = {f.get("vlan"): int(f.get("vni", 0)) for f in (db.get("VXLAN_TUNNEL_MAP") or {}).values() if f}
    ifaces = db.get("VLAN_INTERFACE") or {}
    addresses: dict[str, list[str]] = {}
    for key in ifaces:
        if "|" in key:
            vlan, addr = key.split("|", 1)
            addresses.setdefault(vlan, []).append(addr)
    vrfs = db.get("VRF") or {}
    tenants = []
    for name, fields in vlans.items():
        description = (fields or {}).get("description")
        tenant = owner(description)
        if tenant is None or description.endswith(":l3vni"):
            continue
        vrf = (ifaces.get(name) or {}).get("vrf_name", "")
        gateways = addresses.get(name, [])
        tenants.append(
            {
                "name": tenant,
                "vlan": int(fields.get("vlanid") or name[4:]),
                "vni": vni_of.get(name, 0),
                "vrf": vrf[len(VRF_PREFIX) :] if vrf.startswith(VRF_PREFIX) else vrf,
                "l3vni": int((vrfs.get(vrf) or {}).get("vni", 0)),
                "gateway": gateways[0] if gateways else "",
                "subnet": "",
                "ports": sorted(members.get(name, []), key=lambda p: port_key(p["port"])),
            }
        )
    return normalise(tenants)
