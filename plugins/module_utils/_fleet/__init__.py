# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet model: parse, validate and derive, in one place (private to the collection).

Used by the inventory plugin, the modules and the tests, so that there is exactly one
definition of a valid fleet. One file per concern:

- ``schema``: keys, ranges, formats, defaults (data only);
- ``checker``: the problem collector every section uses;
- ``site``, ``fabric``, ``tenants``, ``nodes``: one loader per section of the file;
- ``rules``: rules across sections (disjoint subnets, GPU capacity);
- ``wireguard``: private nodes' WireGuard addresses and the tenants' interface names;
- ``model``: ``load_model`` / ``validate_fleet``, which run all of the above;
- ``views/``: what each consumer derives from the model (node, switch, pxe, tenant, wireguard).
  Views import the model, never the reverse; a new stage adds its view here instead of
  growing the model. ``load_fleet`` (here) is the model with the switch view every
  consumer of a loaded fleet reads (each leaf's tenants and ports).

Errors: ``FleetError`` (a ``ProblemsError``, the collection's one domain error type).
"""

from __future__ import annotations

from typing import Any

from .._errors import ProblemsError
from .checker import is_vault_value
from .errors import FleetError
from .model import load_model, validate_fleet
from .schema import CONSTRUCTED_KEYS, PARENT_QUEUE, TENANT_NAME_MAX
from .tenants import group_name
from .views.node import node_ssh_vars, node_vars
from .views.pxe import pxe_nodes
from .views.switch import compact_switch, derive_switch_tenants, expand_switch
from .views.tenant import tenant_by_name
from .views.wireguard import wireguard_tenants, wireguard_tunnels


def load_fleet(data: Any) -> dict:
    """The validated model (``load_model``) with each switch's tenants and ports."""
    model = load_model(data)
    derive_switch_tenants(model)
    return model


__all__ = [
    "CONSTRUCTED_KEYS",
    "PARENT_QUEUE",
    "TENANT_NAME_MAX",
    "FleetError",
    "ProblemsError",
    "compact_switch",
    "derive_switch_tenants",
    "expand_switch",
    "group_name",
    "is_vault_value",
    "load_fleet",
    "load_model",
    "node_ssh_vars",
    "node_vars",
    "pxe_nodes",
    "tenant_by_name",
    "validate_fleet",
    "wireguard_tenants",
    "wireguard_tunnels",
]
