# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The WireGuard view: what the gateway needs of the private tenants (their tunnels and nodes)."""

from __future__ import annotations


def wireguard_tenants(model: dict) -> list[dict]:
    """What the WireGuard gateway needs: one entry per private tenant with its tunnel and its nodes."""
    nodes = {n["name"]: n for n in model["nodes"]}
    out = []
    for tenant in model["tenants"]:
        wg = tenant.get("wireguard")
        if not wg:
            continue
        members = [
            {"name": name, "ip": nodes[name]["ip"], "wireguard_ip": nodes[name]["wireguard_ip"]}
            for name in tenant["nodes"]
        ]
        out.append({"name": tenant["name"], "group": tenant["group"],
                    "wireguard": dict(wg, prefixlen=prefixlen(wg)), "nodes": members})
    return out


def prefixlen(wg: dict) -> int:
    return int(wg["subnet"].rsplit("/", 1)[1])
