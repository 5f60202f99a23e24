# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The platform registry: which renderer serves which switch OS, and the calls that need one.

Private to the collection. Imports point one way: modules -> this registry -> the platform
renderers (``_render_*``) -> the neutral core (``_fabric``) -> the one error type. The core
never imports a platform; a new platform is one renderer module and one line here.
"""

from __future__ import annotations

from typing import Any

from . import _render_eos, _render_frr, _render_nvue, _render_sonic
from ._fabric import FRR_PLATFORMS, desired, options_with_defaults, validate

RENDERERS = {"nvue": _render_nvue, "sonic": _render_sonic, "eos": _render_eos, "frr": _render_frr}


def renderer(platform: str) -> Any:
    """The renderer module of a platform (``"frr"`` included)."""
    return RENDERERS[platform]


def render_files(switch: dict, underlay: dict, options: dict | None = None) -> dict[str, str]:
    """Every native file of one switch, ``{extension: text}``, after validating it.

    ``nvue.yaml`` + ``nvue.nv`` (NVUE), ``sonic.json`` (SONiC) or ``eos.cfg`` (EOS), and
    ``frr.conf`` where routing is FRR (NVUE, SONiC). Spines get no tenant config.
    """
    validate(switch, underlay, options)
    return render_tenants(switch, desired(switch), underlay, options)


def render_tenants(switch: dict, tenants: list[dict], underlay: dict, options: dict | None = None) -> dict[str, str]:
    """Every native file of one switch for the given tenants (neutral shape, e.g. a plan's result)."""
    opts = options_with_defaults(options)
    platform = switch["platform"]
    files = dict(renderer(platform).render_text(switch, tenants, underlay, opts))
    if platform in FRR_PLATFORMS:
        files.update(renderer("frr").render_text(switch, tenants, underlay, opts))
    return files


def parse_native(platform: str, config: Any) -> list[dict]:
    """Native config (platform form) to the neutral shape: the tenants we own."""
    return renderer(platform).parse(config)
