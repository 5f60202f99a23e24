# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""WireGuard addresses of private nodes (explicit, or derived by one stable rule) and the tenants'
interface names: part of the model, checked with it. What hosts do with them is ``views.wireguard``.

The rule (docs/fleet.md): a node's WireGuard address has the host offset of its management
address, folded into the usable part of its tenant's WireGuard subnet. In a subnet of size S
the hub is the first host (offset 1), so nodes use offsets 2 .. S-2, and a management offset
o becomes 2 + (o - 2) mod (S - 3). Offsets that fit (2 .. S-2) stay as they are
(192.0.2.21 -> 10.99.0.21 in 10.99.0.0/24). The address depends on the node alone, so adding
or removing a node never moves another one; two nodes of one tenant that fold onto the same
address are a problem naming both, solved by an explicit ``wireguard_ip`` on either.
"""

from __future__ import annotations

import hashlib

from .checker import Checker, Subnet, ip_str

FIRST_NODE_OFFSET = 2  # offset 0 is the network, 1 the tenant's hub
IFNAMSIZ = 15  # Linux interface names: at most 15 bytes


def interface_name(tenant: str) -> str:
    """The tenant's WireGuard interface on its nodes and on the gateway: wg-<tenant>, or, where that is
    longer than Linux allows, a prefix of the name and a hash that keeps long names apart."""
    name = "wg-" + tenant
    if len(name) <= IFNAMSIZ:
        return name
    digest = hashlib.sha256(tenant.encode()).hexdigest()[:4]
    return "wg-%s-%s" % (tenant[: IFNAMSIZ - 8], digest)


def derived_address(net_first: int, net_size: int, mgmt_offset: int) -> int:
    """The derived WireGuard address (as an integer) of a node with this management host offset."""
    usable = max(1, net_size - FIRST_NODE_OFFSET - 1)  # without network, hub and broadcast
    return net_first + FIRST_NODE_OFFSET + (mgmt_offset - FIRST_NODE_OFFSET) % usable


def assign_wireguard(c: Checker, nodes: list[dict], tenants: dict, mgmt: dict) -> None:
    """Give each private node its WireGuard address (explicit ones are claimed first)."""
    mnet = mgmt.get("_net")
    used: dict[tuple[str, int], str] = {}
    pending: list[tuple[dict, dict, Subnet]] = []
    for n in nodes:
        tenant = tenants.get(n.get("tenant") or "")
        net = ((tenant or {}).get("wireguard") or {}).get("_net")
        explicit = n.pop("_wg_explicit", None)
        if net is None:
            continue
        if explicit is None:
            pending.append((n, tenant, net))
            continue
        path = n["_path"] + ".wireguard_ip"
        if c.in_subnet(explicit, net, path, "the WireGuard subnet of tenant %r" % tenant["name"]):
            if explicit == net.first + 1:
                c.add(path, "%s is the tenant's WireGuard hub address" % ip_str(explicit))
            else:
                _claim(c, used, tenant["name"], explicit, path, n, "")
    for n, tenant, net in pending:
        if mnet is None or n.get("_ip") is None:
            continue
        offset = n["_ip"] - mnet.first
        value = derived_address(net.first, net.size, offset)
        how = " (derived from host offset %d of %s in %s)" % (offset, n["ip"], net.cidr)
        _claim(c, used, tenant["name"], value, n["_path"] + ".wireguard_ip", n, how)


def _who(path: str, node: dict) -> str:
    name = node.get("name")
    return "%s (%s)" % (path.rsplit(".", 1)[0], name) if name else path


def _claim(c: Checker, used: dict, tenant: str, value: int, path: str, node: dict, how: str) -> None:
    key = (tenant, value)
    if key in used:
        c.add(
            path,
            "WireGuard address %s%s of %s is already used by %s; set wireguard_ip on one of them"
            % (ip_str(value), how, _who(path, node), used[key]),
        )
        return
    used[key] = _who(path, node)
    node["wireguard_ip"] = ip_str(value)
