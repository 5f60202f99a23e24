# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The registry's data: every platform the fabric renders, and what others need to know of it.

Private to the collection. Data only, and it imports nothing, so that the fleet model (which
validates ``fabric.switches[].platform`` and ``os_version``) reads the platform list without
importing any platform's code. ``registry`` maps each name here to its module in
``platforms/``; the module ``switch_tenants`` takes its ``platform`` choices from here.

Per platform:

- ``title``: its name in messages;
- ``switch_os``: a switch runs it (the fleet's ``platform`` choices); FRR is only the routing
  part of other platforms' configs (``routing``) and can only be parsed;
- ``native``: the file that holds the switch's config (parsed back; kept for a render-only
  switch); ``diff``: the file a module diff shows;
- ``push_diff``: the push shows the change of the owned part as a diff (NVUE's API); where it cannot (EOS:
  eos_config's diff is the whole running-config; SONiC: commands), the plan reports the change
  (``diff_from_plan`` in ``switch_tenants``' result), its diff rendered from our tenants only;
- ``routing``: the platform whose file carries the BGP EVPN part, when not the switch's own;
- ``svi_address``: the leaf's own SVI address is written (NVUE's VRR needs one per leaf);
- ``vrf_prefix``: what the platform puts before a VRF name (VRF names have at most 15 characters);
- ``l3vni_vlan``: an L3 VNI needs a VLAN of its own (``vlan + l3vni_vlan_offset``);
- ``versions``: the releases the fabric renders for (``docs/fabric.md``): ``pattern`` with the
  release's key parts as groups (``major`` fixes the first), ``aliases`` (names with a key),
  ``oldest`` and ``newest`` (key; None: no bound), ``tested`` = ``default``, ``form`` (the text
  of the error).
"""

from __future__ import annotations

_RELEASE = r"^(\d+)\.(\d+)(?:\.\d+[A-Za-z0-9.-]*)?$"

PLATFORMS: dict[str, dict] = {
    "nvue": {
        "title": "NVUE",
        "switch_os": True,
        "native": "nvue.yaml",
        "diff": "nvue.nv",
        "push_diff": True,
        "routing": "frr",
        "svi_address": True,
        "versions": {
            # `evpn vni <vni> route-target` exists from 5.4 (5.3 and older: `evpn evi`); NVUE's model
            # of 5.15 renamed `enable on` to `state enabled` and moved an SVI's `ip` to `ipv4`.
            "pattern": _RELEASE, "major": 5, "oldest": (5, 4), "newest": (5, 14),
            "newest_why": "from 5.15 NVUE's model has `state enabled` for `enable on` and `ipv4` for an SVI's `ip`",
            "tested": "5.12", "default": "5.12", "form": "5.N or 5.N.M (Cumulus Linux)",
        },
    },
    "sonic": {
        "title": "SONiC",
        "switch_os": True,
        "native": "sonic.json",
        "diff": "sonic.json",
        "push_diff": False,
        "routing": "frr",
        "vrf_prefix": "Vrf-",
        "l3vni_vlan": True,
        "versions": {
            # community releases YYYYMM, or `master`; the SAG table exists from master (2026-06) only
            "pattern": r"^(20\d{4})$", "aliases": {"master": (999999,)}, "oldest": (202305,),
            "tested": "202605", "default": "202605", "form": "a release YYYYMM or master",
        },
    },
    "eos": {
        "title": "EOS",
        "switch_os": True,
        "native": "eos.cfg",
        "diff": "eos.cfg",
        "push_diff": False,
        "versions": {
            # VXLAN symmetric IRB with `vxlan vrf`, `ip address virtual`
            "pattern": _RELEASE, "major": 4, "oldest": (4, 28),
            "tested": "4.34", "default": "4.34", "form": "4.N or 4.N.MF (Arista EOS)",
        },
    },
    "frr": {"title": "FRR", "switch_os": False, "native": "frr.conf", "diff": "frr.conf"},
}


def switch_platforms() -> tuple[str, ...]:
    """The platforms a switch may run (the fleet's ``platform`` choices), in catalog order."""
    return tuple(name for name, spec in PLATFORMS.items() if spec["switch_os"])


def spec(platform: str) -> dict:
    return PLATFORMS[platform]
