# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch view: which tenants each leaf carries, on which ports; compact hostvars form."""

from __future__ import annotations

import functools
import ipaddress
import re


def svi_address(subnet: str, leaf_index: int) -> str:
    """A leaf's own address on a tenant's SVI: from the top of the tenant subnet down, one per
    leaf in fleet order (the broadcast address excluded), with the subnet's prefix length.

    NVUE's VRR needs each leaf's SVI to have a unique address besides the anycast gateway
    (NVIDIA's VRR page); the gateway is the subnet's first host, so the two never meet while
    the subnet has room (the model checks it for the leaves that carry the tenant).
    """
    net = ipaddress.IPv4Network(subnet)
    return "%s/%d" % (net.broadcast_address - 1 - leaf_index, net.prefixlen)


def derive_switch_tenants(model: dict) -> None:
    """Per leaf switch: which tenants it carries, on which ports, tagged or not.

    A private tenant's VLAN is the untagged (access) VLAN of its own nodes' ports. Shared
    nodes carry every shared tenant's VLAN tagged. A leaf carries a tenant's VLAN, SVI
    (anycast gateway), VRF and VNIs exactly when one of its ports does.

    Cost stays linear in nodes + tenants x switches: all shared tenants of a switch refer to
    one list of that switch's trunk ports (``trunk_ports``) instead of a copy each.
    """
    tenants = {t["name"]: t for t in model["tenants"]}
    shared = [t["name"] for t in sorted(model["tenants"], key=lambda t: t["vlan"]) if t["isolation"] == "shared"]
    access: dict[str, dict[str, list[dict]]] = {s["name"]: {} for s in model["fabric"]["switches"]}
    trunks: dict[str, list[dict]] = {s["name"]: [] for s in model["fabric"]["switches"]}
    for n in model["nodes"]:
        for sp in n["switch_ports"]:
            if n["tenant"]:
                access[sp["switch"]].setdefault(n["tenant"], []).append(
                    {"port": sp["port"], "node": n["name"], "mode": "access"}
                )
            else:
                trunks[sp["switch"]].append({"port": sp["port"], "node": n["name"], "mode": "trunk"})
    leaf_index = 0
    for s in model["fabric"]["switches"]:
        if s["role"] == "leaf":
            s["leaf_index"] = leaf_index
            leaf_index += 1
        trunk_ports = sorted(trunks[s["name"]], key=lambda p: port_key(p["port"]))
        carried = {name: sorted(ports, key=lambda p: port_key(p["port"])) for name, ports in access[s["name"]].items()}
        if trunk_ports:
            carried.update((name, trunk_ports) for name in shared)
        s["trunk_ports"] = trunk_ports
        s["tenants"] = [_switch_tenant(tenants[name], ports, s.get("leaf_index")) for name, ports in carried.items()]
        s["tenants"].sort(key=lambda t: t["vlan"])


def _switch_tenant(tenant: dict, ports: list[dict], leaf_index: int | None = None) -> dict:
    out = {
        "name": tenant["name"],
        "isolation": tenant["isolation"],
        "vlan": tenant["vlan"],
        "vni": tenant["vni"],
        "vrf": tenant["vrf"],
        "l3vni": tenant["l3vni"],
        "subnet": tenant["subnet"],
        "gateway": tenant["gateway_cidr"],
        "trunk": tenant["isolation"] == "shared",
        "ports": ports,
    }
    if leaf_index is not None:
        out["address"] = svi_address(tenant["subnet"], leaf_index)
    return out


def compact_switch(switch: dict) -> dict:
    """The switch as hostvars carry it: tenant details are not repeated per switch.

    A leaf carries every shared tenant on the same trunk ports, so per-switch copies of
    the tenants would make hostvars grow with tenants x switches. The compact form keeps
    ``access_ports`` (private tenant -> its ports), ``trunk_ports`` and ``shared_tenants``
    (whether the leaf carries the shared tenants); ``expand_switch`` rebuilds ``tenants``
    from it and the fleet's tenant list.
    """
    out = {k: v for k, v in switch.items() if k != "tenants"}
    out["access_ports"] = {t["name"]: t["ports"] for t in switch.get("tenants", []) if not t.get("trunk")}
    out["shared_tenants"] = bool(switch.get("trunk_ports"))
    return out


def expand_switch(switch: dict, tenants: list[dict]) -> dict:
    """Rebuild a compact switch's ``tenants`` (see ``compact_switch``); a full one is returned as is."""
    if "tenants" in switch:
        return switch
    out = {k: v for k, v in switch.items() if k not in ("access_ports", "shared_tenants")}
    access = switch.get("access_ports") or {}
    trunk_ports = switch.get("trunk_ports") or []
    carried = [
        _switch_tenant(t, access.get(t["name"], trunk_ports), switch.get("leaf_index"))
        for t in tenants
        if t["name"] in access or (t["isolation"] == "shared" and switch.get("shared_tenants"))
    ]
    out["tenants"] = sorted(carried, key=lambda t: t["vlan"])
    return out


@functools.lru_cache(maxsize=65536)
def port_key(port: str) -> tuple:
    """Natural sort key of a port (or a config line): ``swp2`` before ``swp10``.

    The one sort order of ports, in the inventory and in every switch config the fabric writes.
    """
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", port))
