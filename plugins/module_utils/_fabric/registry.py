# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The platform registry: which module serves which platform, and the calls that need one.

Private to the collection. Imports point one way: modules -> ``plan`` -> this registry ->
``platforms/`` -> the neutral core (``model``, ``validate``, ``ownership``, ``cli``) -> ``errors``.
The core never imports a platform.

A new platform is its module in ``platforms/`` (``render_text``, ``parse``, ``owned``, ``delta``,
``commands``, which is also given the gathered config), its entry in ``catalog.PLATFORMS`` (data
the fleet and the modules read without importing code) and its name in the import below: Ansible
ships a module only the module_utils it imports by name, so the registry cannot find platform
modules by listing a folder.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from .catalog import PLATFORMS
from .errors import FabricError
from .model import desired, options_with_defaults
from .platforms import eos, frr, nvue, sonic  # one name per platform of catalog.PLATFORMS
from .validate import validate

MODULES: dict[str, ModuleType] = {"eos": eos, "frr": frr, "nvue": nvue, "sonic": sonic}


def renderer(platform: str) -> Any:
    """The module of a platform (``"frr"`` included)."""
    return MODULES[platform]


def names() -> list[str]:
    """Every platform the registry serves, in catalog order (the module's ``platform`` choices)."""
    return [name for name in PLATFORMS if name in MODULES]


def files(platform: str) -> dict[str, str]:
    """What a platform's files are for: ``native`` (the switch's config) and ``diff`` (what a diff shows)."""
    spec = PLATFORMS[platform]
    return {"native": spec["native"], "diff": spec["diff"]}


def routing(platform: str) -> str | None:
    """The platform whose file carries the switch's BGP EVPN part, when not its own."""
    return PLATFORMS[platform].get("routing")


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
    out = dict(renderer(platform).render_text(switch, tenants, underlay, opts))
    if routing(platform):
        out.update(renderer(routing(platform)).render_text(switch, tenants, underlay, opts))
    return out


def owned_native(platform: str, config: Any) -> Any:
    """The part of a native config (platform form) the collection owns or reads, in the same form: what
    results may show of a switch's config (``show running-config``, config_db, the NVUE applied tree hold
    its users, SNMP communities and BGP passwords too). A platform without a switch of its own (FRR) has none."""
    module = renderer(platform)
    if not hasattr(module, "owned"):
        raise FabricError(["platform: %s has no config of its own to read" % platform])
    return module.owned(config)


def shown(platform: str, config: Any, set_tree: Any, unset: list[str]) -> Any:
    """What a change's diff may show of a whole native config: what we own, and what the change sets or
    unsets (NVUE's tree: ``set_tree`` and REST paths ``unset``)."""
    module = renderer(platform)
    if not hasattr(module, "shown"):
        raise FabricError(["platform: %s has no diff of a whole config" % platform])
    return module.shown(config, set_tree, unset)


def foreign_vlans(platform: str, config: Any) -> list[int]:
    """The VLANs of a switch's whole config (platform form) that are none of ours, sorted; [] for a platform
    without a switch of its own (FRR)."""
    module = renderer(platform)
    return sorted(module.foreign_vlans(config)) if hasattr(module, "foreign_vlans") else []


def foreign_vrfs(platform: str, config: Any) -> list[str]:
    """The VRFs of a switch's whole config that no tenant of ours is in, sorted; [] for FRR."""
    module = renderer(platform)
    return sorted(module.foreign_vrfs(config)) if hasattr(module, "foreign_vrfs") else []


def vrf_users(platform: str, config: Any) -> dict[str, list[str]]:
    """The interfaces of a switch's whole config that are not ours, by the VRF each is in (as the switch names it),
    VRFs sorted; {} for FRR (the switch's own config binds an interface to a VRF, not its FRR part)."""
    module = renderer(platform)
    return dict(sorted(module.vrf_users(config).items())) if hasattr(module, "vrf_users") else {}


def vrf_remade_by(platform: str) -> tuple[str, ...]:
    """The keys of a tenant whose change removes its VRF from a switch of ``platform``: its VRF's name, and on EOS
    its VLAN too (``delta`` removes the tenant, ``no vrf instance`` among its lines, and makes it again). NVUE unsets
    and sets a tenant made again in one revision, which keeps its VRF; SONiC deletes a VRF entry only by its name."""
    module = renderer(platform)
    return module.VRF_REMADE_BY if hasattr(module, "VRF_REMADE_BY") else ("vrf",)


def tenant_vrf(platform: str, tenant: dict) -> str:
    """A tenant's VRF as a switch of ``platform`` names it (SONiC: ``Vrf-<vrf>``)."""
    module = renderer(platform)
    return module.tenant_vrf(tenant) if hasattr(module, "tenant_vrf") else tenant["vrf"]


def tenant_vlans(platform: str, tenant: dict, opts: dict) -> list[int]:
    """The VLANs a tenant takes on a switch of ``platform`` (SONiC: its L3 VNI's too)."""
    module = renderer(platform)
    return module.tenant_vlans(tenant, opts) if hasattr(module, "tenant_vlans") else [tenant["vlan"]]


def parse_native(platform: str, config: Any) -> list[dict]:
    """Native config (platform form) to the neutral shape: the tenants we own."""
    return renderer(platform).parse(config)


def commands(switch: dict, before: list[dict], after: list[dict], underlay: dict, opts: dict,
             running: Any = None) -> dict:
    """The native change that takes ``before`` to ``after``, routing part included (module result form).
    ``running``: the switch's config as gathered, for what the change must keep that is not ours."""
    platform = switch["platform"]
    out = dict(renderer(platform).commands(switch, before, after, underlay, opts, running))
    if routing(platform):
        out.update(renderer(routing(platform)).delta(switch, before, after, underlay, opts))
    return out
