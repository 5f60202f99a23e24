# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The WireGuard view: each host's tunnels and peers, from the model's peer graph.

The gateway (``site.host_cluster.wireguard_gateway``) ends one tunnel per private tenant, with
that tenant's nodes as peers; each private node has its tenant's tunnel, with the gateway and
the tenant's other nodes (``mesh``) as peers. Only what the fleet knows is here; keys are made
on the hosts and added at run time by the role ``private_node_join``, which also applies its
options (tenant filter, mesh, keepalive seconds) to this data.
"""

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


def wireguard_tunnels(model: dict) -> dict[str, list[dict]]:
    """Host name -> its tunnels: ``tenant``, ``interface``, ``port``, ``address`` (with prefix
    length) and ``peers``, each ``host``, ``allowed`` (its /32), ``endpoint`` (None: the peer
    dials in), ``keepalive`` (this end keeps the tunnel open: a node towards its gateway) and
    ``mesh`` (another node of the tenant). A fleet without a gateway gives its private nodes
    tunnels without a gateway peer, which the role refuses."""
    gateway = model["site"].get("host_cluster", {}).get("wireguard_gateway")
    nodes = {n["name"]: n for n in model["nodes"]}
    out: dict[str, list[dict]] = {}
    for tenant in model["tenants"]:
        wg = tenant.get("wireguard")
        if not wg:
            continue
        members = [nodes[name] for name in tenant["nodes"]]
        if gateway:
            out.setdefault(gateway["name"], []).append(_gateway_tunnel(tenant, wg, members))
        hub = _hub_peer(gateway, wg) if gateway else None
        mesh = {n["name"]: _peer(n["name"], n["wireguard_ip"], "%s:%d" % (n["ip"], wg["port"]), mesh=True)
                for n in members}
        for n in members:
            peers = ([hub] if hub else []) + [mesh[m["name"]] for m in members if m is not n]
            out[n["name"]] = [_tunnel(tenant, wg, "%s/%d" % (n["wireguard_ip"], prefixlen(wg)), peers)]
    return out


def prefixlen(wg: dict) -> int:
    return int(wg["subnet"].rsplit("/", 1)[1])


def _gateway_tunnel(tenant: dict, wg: dict, members: list[dict]) -> dict:
    peers = [_peer(n["name"], n["wireguard_ip"], None) for n in members]
    return _tunnel(tenant, wg, "%s/%d" % (wg["hub_ip"], prefixlen(wg)), peers)


def _hub_peer(gateway: dict, wg: dict) -> dict:
    return _peer(gateway["name"], wg["hub_ip"], "%s:%d" % (gateway["ip"], wg["port"]), keepalive=True)


def _tunnel(tenant: dict, wg: dict, address: str, peers: list[dict]) -> dict:
    return {"tenant": tenant["name"], "interface": wg["interface"], "port": wg["port"], "address": address,
            "peers": peers}


def _peer(host: str, ip: str, endpoint: str | None, keepalive: bool = False, mesh: bool = False) -> dict:
    return {"host": host, "allowed": ip + "/32", "endpoint": endpoint, "keepalive": keepalive, "mesh": mesh}
