# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rules across sections: disjoint subnets, GPU quotas within the GPUs that back them, room for
every leaf's SVI address in the tenant subnets it carries."""

from __future__ import annotations

from .checker import Checker, cidr


def check_overlaps(c: Checker) -> None:
    ordered = sorted(c.subnets)
    widest: tuple[int, int, str] | None = None
    for current in ordered:
        if widest is not None and current[0] <= widest[1]:
            c.add(
                current[2],
                "%s overlaps %s (%s); management, tenant and WireGuard subnets must be disjoint"
                % (cidr(current), widest[2], cidr(widest)),
            )
        if widest is None or current[1] > widest[1]:
            widest = current


def check_capacity(c: Checker, nodes: list[dict], tenants: list[dict]) -> None:
    per_tenant: dict[str, int] = {}
    shared_gpus = 0
    for n in nodes:
        count = (n.get("gpu") or {}).get("count") or 0
        if n.get("tenant"):
            per_tenant[n["tenant"]] = per_tenant.get(n["tenant"], 0) + count
        elif n.get("isolation") == "shared":
            shared_gpus += count
    shared_quota = 0
    shared_names = []
    for t in tenants:
        quota = (t.get("gpu") or {}).get("quota")
        if quota is None or t.get("name") is None:
            continue
        if t.get("isolation") == "private":
            own = per_tenant.get(t["name"], 0)
            if quota > own:
                c.add(
                    t["_path"] + ".gpu.quota",
                    "quota %d exceeds the %d GPUs of the own nodes of tenant %r" % (quota, own, t["name"]),
                )
        elif t.get("isolation") == "shared":
            shared_quota += quota
            shared_names.append(t["name"])
    if shared_quota > shared_gpus:
        c.add(
            "tenants",
            "the quotas of the shared tenants (%s) add up to %d GPUs, more than the %d GPUs of the "
            "shared nodes (nodes without a tenant)" % (", ".join(shared_names), shared_quota, shared_gpus),
        )


def check_svi_room(c: Checker, switches: list[dict], nodes: list[dict], tenants: list[dict]) -> None:
    """Each leaf carrying a tenant takes one address from the top of the tenant's subnet
    (``views.switch.svi_address``, leaves in fleet order); the subnet must have room for the
    highest such leaf above the gateway (its first host)."""
    leaves = [s.get("name") for s in switches if s.get("role") == "leaf"]
    index = {name: i for i, name in enumerate(leaves)}
    shared_top = -1
    private_top: dict[str, tuple[int, str]] = {}
    for n in nodes:
        for sp in n.get("switch_ports") or []:
            i = index.get(sp["switch"])
            if i is None:
                continue
            if n.get("tenant"):
                if i > private_top.get(n["tenant"], (-1, ""))[0]:
                    private_top[n["tenant"]] = (i, sp["switch"])
            elif i > shared_top:
                shared_top = i
    for t in tenants:
        net = t.get("_net")
        if net is None or t.get("name") is None:
            continue
        if t.get("isolation") == "shared":
            top = (shared_top, leaves[shared_top] if shared_top >= 0 else "")
        else:
            top = private_top.get(t["name"], (-1, ""))
        room = net.size - 3  # without network, gateway (first host) and broadcast
        if top[0] >= room:
            c.add(
                t["_path"] + ".subnet",
                "%s has room for %d leaf SVI addresses besides the gateway, but leaf %s is the %d. leaf "
                "(fleet order) carrying tenant %r; each leaf takes one address from the top of the subnet: "
                "use a larger subnet" % (net.cidr, room, top[1], top[0] + 1, t["name"]),
            )


def check_gateway_name(c: Checker, site: dict, nodes: list[dict], switches: list[dict]) -> None:
    """The WireGuard gateway becomes an inventory host: its name must not be another host's."""
    gateway = (site.get("host_cluster") or {}).get("wireguard_gateway") or {}
    name = gateway.get("name")
    if not name:
        return
    taken = {n.get("name"): "node" for n in nodes}
    taken.update({s.get("name"): "switch" for s in switches})
    # The boot server's host name: the fleet's, else the default the model gives it later (<site>-pxe).
    pxe = (site.get("management") or {}).get("pxe_server_name") or (
        "%s-pxe" % site["name"] if isinstance(site.get("name"), str) else None)
    if pxe:
        taken[pxe] = "PXE server (site.management.pxe_server_name, default <site>-pxe)"
    if name in taken:
        c.add("site.host_cluster.wireguard_gateway.name",
              "%r is already the name of a %s; the gateway needs a host name of its own" % (name, taken[name]))


def check_host_addresses(c: Checker, site: dict, nodes: list[dict], switches: list[dict]) -> None:
    """One address, one machine: a node's address may not be a switch's or the WireGuard gateway's, nor a switch's
    the boot server's (the inventory would send one host's plays to another machine). Duplicates among the nodes,
    the management gateway and the boot server are the nodes' check; among switches, the fabric's."""
    mgmt = site.get("management") or {}
    gateway = (site.get("host_cluster") or {}).get("wireguard_gateway") or {}
    # (path, what it is, kind): a duplicate is reported here only between kinds
    claims = [("site.management.gateway", "the management gateway", "nodes", mgmt.get("gateway")),
              ("site.management.pxe_server", "the boot server", "nodes", mgmt.get("pxe_server"))]
    if gateway.get("ip") != mgmt.get("pxe_server"):  # the WireGuard gateway may run on the boot server
        claims.append(("site.host_cluster.wireguard_gateway.ip", "the WireGuard gateway", "gateway", gateway.get("ip")))
    # each entry's own path: an entry that was no mapping is not in these lists, so an index would shift
    claims += [(n["_path"] + ".ip", "node %s" % n.get("name"), "nodes", n.get("ip")) for n in nodes]
    for sw in switches:
        claims += [(sw["_path"] + ".mgmt_ip", "switch %s (management)" % sw.get("name"), "switches",
                    sw.get("mgmt_ip")),
                   (sw["_path"] + ".loopback", "switch %s (loopback)" % sw.get("name"), "loopbacks",
                    sw.get("loopback"))]
    seen: dict[str, tuple[str, str, str]] = {}
    for path, what, kind, address in claims:
        if not isinstance(address, str) or not address:
            continue
        first = seen.setdefault(address, (path, what, kind))
        if first[2] != kind:
            c.add(path, "%s is already the address of %s (%s); one address, one machine"
                  % (address, first[1], first[0]))


def check_gpu_driver(c: Checker, nodes: list[dict]) -> None:
    """One driver mode per cluster: the shared nodes (host cluster), each private tenant's nodes."""
    clusters: dict[str, list[dict]] = {}
    for n in nodes:
        gpu = n.get("gpu") or {}
        if gpu.get("count") and n.get("name"):
            clusters.setdefault(n.get("tenant") or "", []).append(n)
    for tenant, members in clusters.items():
        modes = {n["gpu"]["driver"] for n in members}
        if len(modes) < 2:
            continue
        first = members[0]
        where = "tenant %r's cluster" % tenant if tenant else "the host cluster (shared nodes)"
        for n in members[1:]:
            if n["gpu"]["driver"] != first["gpu"]["driver"]:
                c.add(
                    n["_path"] + ".gpu.driver",
                    "%r differs from %r of %s: the GPU Operator of %s runs one driver mode"
                    % (n["gpu"]["driver"], first["gpu"]["driver"], first["name"], where),
                )
