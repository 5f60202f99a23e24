# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric's errors, all ``ProblemsError`` (the collection's one error root)."""

from __future__ import annotations

from .._errors import ProblemsError


class FabricError(ProblemsError):
    """The switch data cannot be rendered, or a native config cannot be read."""

    HEAD = "switch tenants are invalid"


class IncompleteTenantError(FabricError):
    """A switch config holds objects marked as ours that do not make a whole tenant.

    ``tenants``: every tenant found, half ones included (the fields they lack empty), and
    ``half``: the names of the half ones, when the only problems are missing parts. ``tenants``
    is None when a tenant holds more than the one value the collection writes (which of them is
    ours cannot be told, so nothing may be removed).
    """

    HEAD = (
        "the switch config holds incomplete tenants of this collection; nothing was changed"
        " (remove them with state=deleted, or complete or remove these objects by hand, then run again)"
    )

    def __init__(self, problems: list[str], tenants: list[dict] | None = None, half: list[str] | None = None) -> None:
        super().__init__(problems)
        self.tenants = tenants
        self.half = sorted(set(half or ()))


class NativeConfigError(FabricError):
    """A switch config (``running_config``) is not in the platform's form; the problem names where."""

    HEAD = "running_config cannot be read as the platform's config"


class NvueError(ProblemsError):
    """The NVUE API refused or could not be reached; the message says what to do."""

    HEAD = ""
