# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tenant view: names derived from a tenant (namespace, queue, vCluster release, group).

Used by the queue and vCluster stages; the schema's TENANT_DERIVED_NAMES holds the formats and
their length limits, so a tenant name that validates always yields valid derived names.
"""

from __future__ import annotations

import re

from ..errors import FleetError
from ..schema import TENANT_DERIVED_NAMES
from .wireguard import interface_name


def group_name(prefix: str, name: str) -> str:
    """Ansible group names may not contain '-'."""
    return prefix + re.sub(r"[^A-Za-z0-9_]", "_", name)


def derive_tenant(tenant: dict, nodes: list[str]) -> None:
    """Add the derived names and the tenant's private nodes to a validated tenant."""
    for key, (fmt, _limit) in TENANT_DERIVED_NAMES.items():
        tenant[key] = fmt.format(tenant["name"])
    tenant["group"] = group_name("tenant_", tenant["name"])
    tenant["prefixlen"] = tenant["_net"].prefixlen
    tenant["nodes"] = nodes
    if tenant.get("wireguard"):
        tenant["wireguard"]["interface"] = interface_name(tenant["name"])


def tenant_by_name(model: dict, name: str) -> dict:
    for t in model["tenants"]:
        if t["name"] == name:
            return t
    raise FleetError(
        [
            "tenant: unknown tenant %r; known tenants: %s"
            % (name, ", ".join(t["name"] for t in model["tenants"]) or "none")
        ]
    )
