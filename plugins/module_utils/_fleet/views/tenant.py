# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tenant view: one tenant of a loaded model, by name (its derived names are the model's)."""

from __future__ import annotations

from ..errors import FleetError


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
