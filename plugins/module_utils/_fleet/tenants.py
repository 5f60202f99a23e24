# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``tenants`` section: networks, GPU quota, vCluster and WireGuard settings per tenant, and the
names derived from a tenant (namespace, queue, vCluster release, group, WireGuard interface)."""

from __future__ import annotations

import re
from typing import Any

from .checker import Checker, Unique, ip_str, type_name
from .schema import (
    DNS_LABEL,
    ISOLATIONS,
    NODE_PORT_BASE,
    NODE_PORT_RANGE,
    PORT_RANGE,
    RESERVED_VRFS,
    TENANT_DERIVED_NAMES,
    TENANT_GPU_KEYS,
    TENANT_KEYS,
    TENANT_NAME_MAX,
    TENANT_RESOURCE_DEFAULTS,
    TENANT_RESOURCE_KEYS,
    UNLIMITED,
    VCLUSTER_KEYS,
    VLAN_RANGE,
    VNI_RANGE,
    VRF_KEYS,
    VRF_NAME,
    WIREGUARD_KEYS,
)
from .units import CPU_WHAT, MEMORY_WHAT, cpu_cores, memory_bytes
from .wireguard import interface_name


def tenants(c: Checker, raw: Any) -> list[dict]:
    out = []
    names = Unique(c, "tenant name")
    vlans = Unique(c, "VLAN")
    vnis = Unique(c, "L2 VNI")
    l3vnis = Unique(c, "L3 VNI")
    vrfs = Unique(c, "VRF name")
    node_ports = Unique(c, "vCluster NodePort")
    # Each private tenant has an interface of its own on the one gateway: two on one port, the second cannot bind.
    wg_ports = Unique(c, "WireGuard port")
    for i, t in enumerate(c.sequence(raw, "tenants")):
        path = "tenants[%d]" % i
        m = c.mapping(t, path, TENANT_KEYS)
        if m is None:
            continue
        entry: dict[str, Any] = {"_path": path}
        if "name" in m:
            entry["name"] = tenant_name(c, m["name"], path + ".name")
            names.claim(entry["name"], path + ".name")
        if "isolation" in m:
            entry["isolation"] = c.choice(m["isolation"], path + ".isolation", ISOLATIONS)
        if "vlan" in m:
            entry["vlan"] = c.integer(m["vlan"], path + ".vlan", VLAN_RANGE)
            vlans.claim(entry["vlan"], path + ".vlan")
        if "vni" in m:
            entry["vni"] = c.integer(m["vni"], path + ".vni", VNI_RANGE)
            vnis.claim(entry["vni"], path + ".vni")
        if "vrf" in m:
            vrf = c.mapping(m["vrf"], path + ".vrf", VRF_KEYS) or {}
            if "name" in vrf:
                vname = c.string(
                    vrf["name"],
                    path + ".vrf.name",
                    VRF_NAME,
                    "a VRF name (a letter, then letters, digits, '_' or '-', 15 characters at most)",
                )
                if vname and vname.lower() in RESERVED_VRFS:
                    c.add(path + ".vrf.name", "%r is reserved by the switch OS; pick another name" % vname)
                    vname = None
                entry["vrf"] = vname
                vrfs.claim(vname, path + ".vrf.name")
            if "l3vni" in vrf:
                entry["l3vni"] = c.integer(vrf["l3vni"], path + ".vrf.l3vni", VNI_RANGE)
                l3vnis.claim(entry["l3vni"], path + ".vrf.l3vni")
        if "subnet" in m:
            net = c.network(m["subnet"], path + ".subnet")
            if net is not None:
                entry["_net"] = net
                entry["subnet"] = net.cidr
                entry["gateway"] = ip_str(net.first + 1)
                entry["gateway_cidr"] = "%s/%d" % (entry["gateway"], net.prefixlen)
                c.claim_subnet(net, path + ".subnet")
        if "gpu" in m:
            entry["gpu"] = tenant_gpu(c, m["gpu"], path + ".gpu")
        weight = (entry.get("gpu") or {}).get("over_quota_weight", 1)
        entry["cpu"] = tenant_resource(c, m.get("cpu"), path + ".cpu", cpu_cores, CPU_WHAT, weight)
        entry["memory"] = tenant_resource(c, m.get("memory"), path + ".memory", memory_bytes, MEMORY_WHAT, weight)
        entry["vcluster"] = vcluster(c, m.get("vcluster"), path + ".vcluster", entry.get("vlan"))
        node_ports.claim(entry["vcluster"].get("node_port"), path + ".vcluster.node_port")
        entry["wireguard"] = wireguard(c, m, entry, path)
        wg_ports.claim(entry["wireguard"].get("port"), path + ".wireguard.port")
        out.append(entry)
    # An L2 VNI may not equal any L3 VNI (one VNI namespace on the VTEP).
    for t in out:
        l2 = t.get("vni")
        if l2 is not None and l2 in l3vnis.seen:
            c.add(
                "%s.vni" % t["_path"],
                "L2 VNI %d equals the L3 VNI of %s; L2 and L3 VNIs must differ"
                % (l2, l3vnis.seen[l2].rsplit(".vrf", 1)[0]),
            )
    return out


def tenant_name(c: Checker, value: Any, path: str) -> str | None:
    name = c.string(
        value, path, DNS_LABEL, "a DNS-1123 label starting with a letter (lowercase letters, digits and '-')"
    )
    if name is not None and len(name) > TENANT_NAME_MAX:
        c.add(
            path,
            "%r is %d characters; at most %d are allowed so that the derived names (%s) fit"
            % (
                name,
                len(name),
                TENANT_NAME_MAX,
                ", ".join("%s %s" % (k, fmt.format(name)) for k, (fmt, _l) in TENANT_DERIVED_NAMES.items()),
            ),
        )
        return None
    return name


def tenant_gpu(c: Checker, raw: Any, path: str) -> dict:
    g = c.mapping(raw, path, TENANT_GPU_KEYS) or {}
    out: dict[str, Any] = {}
    if "quota" in g:
        out["quota"] = c.integer(g["quota"], path + ".quota", (0, 1000000))
    if "limit" in g:
        out["limit"] = c.integer(g["limit"], path + ".limit", (0, 1000000), extra=(UNLIMITED,))
    if "over_quota_weight" in g:
        out["over_quota_weight"] = c.integer(g["over_quota_weight"], path + ".over_quota_weight", (0, 1000000))
    quota, limit = out.get("quota"), out.get("limit")
    if quota is not None and limit is not None and limit != UNLIMITED and quota > limit:
        c.add(
            path + ".quota",
            "quota %d is above the limit %d; the limit must be at least the quota (or -1 for none)" % (quota, limit),
        )
    return out


def tenant_resource(c: Checker, raw: Any, path: str, amount, what: str, weight: int) -> dict:
    """A tenant's CPU or memory in its queue, defaults filled in (quota 0, limit -1, the GPU's weight)."""
    r = c.mapping(raw, path, TENANT_RESOURCE_KEYS) or {} if raw is not None else {}
    out: dict[str, Any] = dict(TENANT_RESOURCE_DEFAULTS, over_quota_weight=weight)
    for key in ("quota", "limit"):
        if key in r:
            if amount(r[key]) is None:
                c.add("%s.%s" % (path, key), "%r is not %s" % (r[key], what))
            else:
                out[key] = r[key]
    if "over_quota_weight" in r:
        out["over_quota_weight"] = c.integer(r["over_quota_weight"], path + ".over_quota_weight", (0, 1000000))
    quota, limit = amount(out["quota"]), amount(out["limit"])
    if None not in (quota, limit) and UNLIMITED not in (quota, limit) and quota > limit:
        c.add(path + ".quota", "quota %s is above the limit %s; the limit must be at least the quota (or -1 for none)"
              % (out["quota"], out["limit"]))
    return out


def vcluster(c: Checker, raw: Any, path: str, vlan: int | None = None) -> dict:
    v = c.mapping(raw, path, VCLUSTER_KEYS) or {} if raw is not None else {}
    out: dict[str, Any] = {}
    if "node_port" in v:
        out["node_port"] = c.integer(v["node_port"], path + ".node_port", NODE_PORT_RANGE)
    elif vlan is not None:
        port = NODE_PORT_BASE + vlan
        if port <= NODE_PORT_RANGE[1]:
            out["node_port"] = port
        else:
            c.add(path + ".node_port", "is required: the default NodePort %d + VLAN %d = %d is outside %d..%d"
                  % (NODE_PORT_BASE, vlan, port, *NODE_PORT_RANGE))
    if "chart_version" in v:
        out["chart_version"] = c.string(v["chart_version"], path + ".chart_version")
    if "values" in v:
        if isinstance(v["values"], dict):
            out["values"] = v["values"]
        else:
            c.add(path + ".values", "must be a mapping of vCluster chart values, got %s" % type_name(v["values"]))
    return out


def wireguard(c: Checker, raw_tenant: dict, entry: dict, path: str) -> dict:
    raw = raw_tenant.get("wireguard")
    isolation = entry.get("isolation")
    if raw is None:
        if isolation == "private":
            c.add(path + ".wireguard", "is required for a private tenant ({subnet, port})")
        return {}
    if isolation == "shared":
        c.add(path + ".wireguard", "is only allowed for private tenants (shared tenants have no private nodes)")
        return {}
    w = c.mapping(raw, path + ".wireguard", WIREGUARD_KEYS) or {}
    out: dict[str, Any] = {}
    if "subnet" in w:
        net = c.network(w["subnet"], path + ".wireguard.subnet")
        if net is not None:
            out["_net"] = net
            out["subnet"] = net.cidr
            out["hub_ip"] = ip_str(net.first + 1)
            c.claim_subnet(net, path + ".wireguard.subnet")
    if "port" in w:
        out["port"] = c.integer(w["port"], path + ".wireguard.port", PORT_RANGE)
    return out


def group_name(prefix: str, name: str) -> str:
    """Ansible group names may not contain '-'."""
    return prefix + re.sub(r"[^A-Za-z0-9_]", "_", name)


def derive_tenant(tenant: dict, nodes: list[str]) -> None:
    """Add the derived names and the tenant's private nodes to a validated tenant.

    The schema's TENANT_DERIVED_NAMES holds the formats and their length limits, so a tenant name
    that validates always yields valid derived names.
    """
    for key, (fmt, _limit) in TENANT_DERIVED_NAMES.items():
        tenant[key] = fmt.format(tenant["name"])
    tenant["group"] = group_name("tenant_", tenant["name"])
    tenant["prefixlen"] = tenant["_net"].prefixlen
    tenant["nodes"] = nodes
    if tenant.get("wireguard"):
        tenant["wireguard"]["interface"] = interface_name(tenant["name"])
