# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The resource-module states of a switch's tenants: what each does, end to end.

Private to the collection. ``plan`` combines a desired and a gathered list of tenants (neutral
shape) as a state says; ``run`` is what ``switch_tenants`` does with its options: read the
switch's native config, plan, and return the native commands, the diff and the files after.
"""

from __future__ import annotations

import os
from typing import Any

from .catalog import PLATFORMS
from .errors import FabricError, IncompleteTenantError
from .model import desired, full_switch, normalise, options_with_defaults, port_key
from .registry import (
    commands,
    files,
    parse_native,
    render_files,
    render_tenants,
    renderer,
    routing,
    tenant_vlans,
    tenant_vrf,
    vrf_remade_by,
)
from .validate import validate

STATES = ("rendered", "merged", "replaced", "overridden", "deleted", "gathered", "parsed")
DEFAULT_UNDERLAY = {"anycast_mac": "00:00:5e:00:01:01", "mtu": 9216}


def select(tenants: list[dict], names: list[str] | None) -> list[dict]:
    if not names:
        return list(tenants)
    wanted = set(names)
    return [t for t in tenants if t["name"] in wanted]


def _merge_tenant(old: dict, new: dict) -> dict:
    merged = dict(new)
    ports = {p["port"]: p for p in old["ports"]}
    ports.update({p["port"]: p for p in new["ports"]})
    merged["ports"] = sorted(ports.values(), key=lambda p: port_key(p["port"]))
    return merged


def plan(state: str, want: list[dict], have: list[dict], names: list[str] | None = None) -> list[dict]:
    """The tenants a switch should have after ``state``; ``have`` holds only objects we own.

    ``names`` limits the change to those tenants (day-2 onboarding / offboarding of one tenant).
    """
    want = normalise(select(want, names))
    have = normalise(have)
    by_name = {t["name"]: t for t in have}
    if state == "merged":
        for t in want:
            by_name[t["name"]] = _merge_tenant(by_name[t["name"]], t) if t["name"] in by_name else t
    elif state == "replaced":
        for t in want:
            by_name[t["name"]] = t
    elif state == "overridden":
        if names:
            for name in names:
                by_name.pop(name, None)
            for t in want:
                by_name[t["name"]] = t
        else:
            by_name = {t["name"]: t for t in want}
    elif state == "deleted":
        for name in set(names) if names else set(by_name):
            by_name.pop(name, None)
    else:
        raise ValueError("plan() does not handle state %r" % state)
    return normalise(list(by_name.values()))


def changes(before: list[dict], after: list[dict]) -> dict:
    """Which tenants a plan adds, removes and modifies (by name)."""
    b = {t["name"]: t for t in before}
    a = {t["name"]: t for t in after}
    return {
        "added": sorted(n for n in a if n not in b),
        "removed": sorted(n for n in b if n not in a),
        "modified": sorted(n for n in a if n in b and a[n] != b[n]),
    }


def gathered(platform: str, running: Any, state: str, names: list | None) -> tuple[list[dict], list[str]]:
    """The tenants we own on the switch, and the problems of half tenants that ``deleted`` removes.

    A half tenant (ours by its marker, without its L2 VNI, VRF, L3 VNI or gateway) stops every
    state before any change, except ``deleted`` when it is one of the tenants to remove: then the
    parts it has are removed (the error says which tenants are half).
    """
    try:
        return parse_native(platform, running), []
    except IncompleteTenantError as exc:
        if state != "deleted" or exc.tenants is None:
            raise
        if names and not set(exc.half) <= set(names):
            raise
        return exc.tenants, exc.problems


def kept_name(switch: dict, platform: str) -> str:
    """The file name of a platform's file of a switch: ``leaf1.nvue.yaml``; its routing part
    (another platform's file) ``leaf1-frr.conf``."""
    native = files(platform)["native"]
    return "%s%s%s" % (switch["name"], "." if platform == switch["platform"] else "-", native)


def kept_files(switch: dict, rendered: dict[str, str]) -> dict[str, str]:
    """The files kept for a switch, by file name (``kept_name``): its native config and its
    routing part, if any (not NVUE's ``nv set`` listing, which says the same as its YAML)."""
    platforms = [switch["platform"], *filter(None, [routing(switch["platform"])])]
    return {kept_name(switch, p): rendered[files(p)["native"]] for p in platforms}


def read_kept(switch: dict, folder: str) -> str:
    """The native config kept for a render-only switch in ``folder`` ('' while there is none)."""
    path = os.path.join(folder, kept_name(switch, switch["platform"]))
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise FabricError(["kept_dir: cannot read %s (%s)" % (path, exc.strerror)]) from None


def _parse_only(platform: str) -> None:
    """``FabricError`` for a platform no switch runs (FRR: only the routing part of others)."""
    if platform in PLATFORMS and not PLATFORMS[platform]["switch_os"]:
        users = [name for name, spec in PLATFORMS.items() if spec.get("routing") == platform]
        raise FabricError(
            ["platform: %s is only for parsed/gathered; %s is rendered with %s"
             % (platform, PLATFORMS[platform]["title"], " and ".join(users))]
        )  # fmt: skip


def run(params: dict) -> dict:
    """What ``switch_tenants`` returns for its options (``params``); ``FabricError`` when it cannot."""
    state = params["state"]
    switch = params["switch"]
    platform = params["platform"] or (switch or {}).get("platform")
    underlay = dict(DEFAULT_UNDERLAY, **(params["underlay"] or {}))
    opts = options_with_defaults(
        {"route_target_asn": params["route_target_asn"], "l3vni_vlan_offset": params["l3vni_vlan_offset"]}
    )
    if state in ("parsed", "gathered"):
        if not platform:
            raise FabricError(["platform: needed to parse a config (or give switch)"])
        if params["running_config"] is None:
            raise FabricError(["running_config: required with state=%s" % state])
        return {"changed": False, state: parse_native(platform, params["running_config"])}
    if not switch:
        raise FabricError(["switch: required with state=%s (the gpucloud_switch host variable)" % state])
    switch = full_switch(switch, params["fleet_tenants"])
    _parse_only(platform)
    switch = dict(switch, platform=platform)
    validate(switch, underlay, opts)
    if state == "rendered":
        rendered = render_files(switch, underlay, opts)
        return {"changed": False, "rendered": rendered, "files": kept_files(switch, rendered)}
    running = params["running_config"]
    if params.get("kept_dir"):
        running = read_kept(switch, params["kept_dir"])
    if running is None:
        raise FabricError(["running_config: required with state=%s; gather the switch's config first" % state])
    result = _push_state(switch, state, running, params.get("tenants"), underlay, opts, params.get("render_after"))
    before = {t["name"]: t for t in result["before"]}
    after = {t["name"]: t for t in result["after"]}
    # A tenant kept by name whose VLAN, VNI or VRF changes is taken down and made again: a fleet of another site
    # with the same tenant names would otherwise pass max_removals while it tears every network down.
    rebuilt = [n for n in result["changes"]["modified"]
               if any(before[n].get(key) != after[n].get(key) for key in REBUILT_BY)]
    check_removals(switch["name"], result["changes"]["removed"], params.get("max_removals"), rebuilt)
    check_takeover(switch, result["after"], params.get("foreign_vlans"), opts, params.get("foreign_vrfs"))
    check_vrf_users(switch, result["before"], result["after"], params.get("vrf_users"))
    return result


def check_takeover(switch: dict, after: list[dict], foreign: list[int] | None, opts: dict,
                   foreign_vrfs: list[str] | None = None) -> None:  # fmt: skip
    """``FabricError`` when a tenant would be put on a VLAN the switch has that is not ours (``foreign``, read from
    its whole config; None: not checked): it would rename the operator's VLAN, carry the tenant on it, and remove
    it when the tenant goes. A tenant of ours is never on one (its VLANs carry our marker). The same for a VRF that
    no tenant of ours is in (``foreign_vrfs``): the tenant would share it, and its removal remove it."""
    taken = set(foreign or ())
    vrfs = set(foreign_vrfs or ())
    problems = []
    for t in after:
        vrf = tenant_vrf(switch["platform"], t)
        if vrf in vrfs:
            problems.append("%s: tenant %s: its VRF %s is on the switch already and no tenant of ours is in it; the"
                            " tenant would share it and remove it when it goes. Give the tenant another VRF name in"
                            " the fleet, or remove VRF %s from the switch by hand; nothing was changed"
                            % (switch["name"], t["name"], vrf, vrf))
        for n, vlan in enumerate(tenant_vlans(switch["platform"], t, opts)):
            if vlan in taken:
                what = "VLAN %d" % vlan if n == 0 else "L3 VNI VLAN %d (vlan %d + l3vni_vlan_offset %d)" % (
                    vlan, t["vlan"], opts["l3vni_vlan_offset"])
                problems.append("%s: tenant %s: its %s is on the switch already and is not ours (no gpucloud: marker);"
                                " the tenant would take it over and remove it when it goes. Give the tenant another"
                                " VLAN in the fleet, or remove VLAN %d from the switch by hand; nothing was changed"
                                % (switch["name"], t["name"], what, vlan))
    if problems:
        raise FabricError(problems)


# The keys of a tenant that a switch cannot change in place: the delta removes the tenant's objects and adds them.
REBUILT_BY = ("vlan", "vni", "vrf", "l3vni")
_KEY_NAMES = {"vlan": "VLAN", "vni": "VNI", "l3vni": "L3 VNI"}


def check_vrf_users(switch: dict, before: list[dict], after: list[dict],
                    users: dict[str, list[str]] | None) -> None:
    """``FabricError`` when the plan would remove a VRF of ours that an interface not ours is in (``users``: VRF ->
    those interfaces, read from the switch's whole config; None: not checked): the tenant removed, its VRF renamed,
    or (EOS) the tenant taken down and made again with its VRF (``vrf_remade_by``). Removing the VRF would move the
    operator's interface out of it or break it; nothing is changed, the other tenants' changes neither."""
    users = {str(vrf): [str(i) for i in (names if isinstance(names, list) else [names])]
             for vrf, names in (users or {}).items() if names}
    platform = switch["platform"]
    now = {t["name"]: t for t in after}
    problems = []
    for old in before:
        vrf = tenant_vrf(platform, old) if old["vrf"] else ""
        if vrf not in users:
            continue
        new = now.get(old["name"])
        remade = [key for key in vrf_remade_by(platform) if new is not None and new[key] != old[key]]
        if new is None:
            how = "removing the tenant would remove the VRF"
        elif new["vrf"] != old["vrf"]:
            how = "renaming its VRF to %s in the fleet would remove VRF %s" % (tenant_vrf(platform, new), vrf)
        elif remade:
            how = ("taking the tenant down and making it again (its %s changes) would remove the VRF before making it"
                   " again" % " and ".join(_KEY_NAMES.get(key, key) for key in remade))
        else:
            continue
        names = users[vrf]
        one = len(names) == 1
        what = "interface%s %s" % ("" if one else "s", ", ".join(names))
        problems.append("%s: tenant %s: its VRF %s is in use by %s, not ours (no gpucloud: marker); %s, moving %s out"
                        " of it or breaking %s. Move or remove %s from VRF %s by hand, then run again; nothing was"
                        " changed" % (switch["name"], old["name"], vrf, what, how,
                                      "that interface" if one else "those interfaces", "it" if one else "them", what,
                                      vrf))
    if problems:
        raise FabricError(problems)


def check_removals(switch: str, removed: list[str], most: int | None, rebuilt: list[str] | None = None) -> None:
    """``FabricError`` when one run would remove (or take down and make again) more tenants from a switch than
    ``most`` (None: no limit).

    A fleet mistake (a tenant list left empty, a fleet file from the wrong site) must not take
    every tenant's network down in one run: the plan is refused before anything is pushed."""
    gone = list(removed) + list(rebuilt or [])
    if most is not None and len(gone) > most:
        rebuilt_text = " (taken down and made again with another VLAN, VNI or VRF: %s)" % ", ".join(rebuilt) \
            if rebuilt else ""
        raise FabricError(["%s: this run would remove %d tenants (%s)%s, more than max_removals %d; nothing was"
                           " changed (check the fleet and the tenant list, or raise the limit for this run)"
                           % (switch, len(gone), ", ".join(gone), rebuilt_text, most)])


def _push_state(switch: dict, state: str, running: Any, names: list | None, underlay: dict, opts: dict,
                render_after: bool | None) -> dict:  # fmt: skip
    have, incomplete = gathered(switch["platform"], running, state, names)
    after = plan(state, desired(switch), have, names)
    native = commands(switch, have, after, underlay, opts, running)
    result: dict[str, Any] = {
        "changed": any(native.values()),
        "before": have,
        "after": after,
        "changes": changes(have, after),
        "commands": native,
        "diff_from_plan": not PLATFORMS[switch["platform"]].get("push_diff", True),
    }
    if incomplete:
        result["incomplete"] = incomplete
    if render_after:
        result["rendered"] = render_tenants(switch, after, underlay, opts)
        result["files"] = kept_files(switch, result["rendered"])
    if result["changed"]:
        key = files(switch["platform"])["diff"]
        write = renderer(switch["platform"]).render_text
        result["diff"] = {
            "before": write(switch, have, underlay, opts)[key],
            "after": write(switch, after, underlay, opts)[key],
            "before_header": "%s (gathered)" % switch["name"],
            "after_header": "%s (%s)" % (switch["name"], state),
        }
    return result
