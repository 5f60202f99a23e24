# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Load a fleet: every section checked, the rules across sections, then the derived values.

``load_model(data)`` returns the normalised model (plain dicts and lists) or raises
``FleetError`` listing every problem found, each prefixed with its path, e.g.
``tenants[2].vlan: 4095 is outside 1..4094``. The model imports no view: views read the
model (``views/``), and the package (``load_fleet``) composes the two.
"""

from __future__ import annotations

from typing import Any

from . import fabric as fabric_section
from . import nodes as nodes_section
from . import rules
from . import site as site_section
from . import tenants as tenants_section
from .checker import Checker, plain, type_name
from .errors import FleetError
from .schema import CONSTRUCTED_KEYS, PLUGIN_NAME, TOP_KEYS
from .wireguard import assign_wireguard


def load_model(data: Any) -> dict:
    """Validate ``data`` (the parsed fleet file) and return the normalised model."""
    c = Checker()
    if not isinstance(data, dict):
        c.add(
            "(top level)",
            "a fleet file is a mapping with keys %s, got %s" % (", ".join(TOP_KEYS), type_name(data)),
        )
        raise FleetError(c.problems)
    data = c.mapping(data, "", dict(TOP_KEYS, **dict.fromkeys(CONSTRUCTED_KEYS, False)))
    if data.get("plugin") not in (PLUGIN_NAME, None):
        c.add("plugin", "must be %s, got %r" % (PLUGIN_NAME, plain(data.get("plugin"))))
    site = site_section.site(c, data.get("site")) if "site" in data else {"management": {}, "os_profiles": {}}
    fabric = fabric_section.fabric(c, data.get("fabric")) if "fabric" in data else {"switches": [], "underlay": {}}
    tenants = tenants_section.tenants(c, data.get("tenants")) if "tenants" in data else []
    switch_by_name = {s["name"]: s for s in fabric["switches"] if s.get("name")}
    tenant_by_name = {t["name"]: t for t in tenants if t.get("name")}
    nodes = (
        nodes_section.nodes(
            c, data.get("nodes"), site["management"], site["os_profiles"], switch_by_name, tenant_by_name
        )
        if "nodes" in data
        else []
    )
    rules.check_overlaps(c)
    rules.check_capacity(c, nodes, tenants)
    rules.check_gpu_driver(c, nodes)
    rules.check_svi_room(c, fabric["switches"], nodes, tenants)
    assign_wireguard(c, nodes, tenant_by_name, site["management"])
    rules.check_gateway_name(c, site, nodes, fabric["switches"])
    rules.check_host_addresses(c, site, nodes, fabric["switches"])
    if c.problems:
        raise FleetError(c.problems)
    return _finish(site, fabric, nodes, tenants)


def validate_fleet(data: Any) -> list[str]:
    """Every problem of ``data``; an empty list when it is valid."""
    try:
        load_model(data)
    except FleetError as exc:
        return exc.problems
    return []


def _strip_private(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_private(v) for k, v in value.items() if not str(k).startswith("_")}
    if isinstance(value, list):
        return [_strip_private(v) for v in value]
    return value


def _finish(site: dict, fabric: dict, nodes: list[dict], tenants: list[dict]) -> dict:
    """Add derived values and drop the loaders' private keys."""
    site["management"].setdefault("pxe_server_name", "%s-pxe" % site["name"])
    by_tenant: dict[str, list[str]] = {}
    for n in nodes:
        n["os_profile"] = site["os_profiles"][n["os"]]
        if n.get("tenant"):
            by_tenant.setdefault(n["tenant"], []).append(n["name"])
    for t in tenants:
        tenants_section.derive_tenant(t, by_tenant.get(t["name"], []))
    return _strip_private({"site": site, "fabric": fabric, "nodes": nodes, "tenants": tenants})
