# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""FRR: the BGP EVPN part of tenant networks, for platforms that route with FRR.

Private to the collection. NVUE (Cumulus) and SONiC route with FRR: ``vrf V`` / ``vni L3VNI``
(zebra), ``router bgp ASN`` with ``address-family l2vpn evpn`` / ``advertise-all-vni`` and
one ``vni`` block per L2 VNI (route targets ``RT_ASN:VNI``, the same on every leaf whatever
its own ASN), and ``router bgp ASN vrf V`` redistributing the tenant subnet into EVPN type-5
routes. Underlay neighbours are not ours and are not rendered.
"""

from __future__ import annotations

import re
from typing import Any

from ._fabric import pairs
from ._render_sonic import vrf_name as sonic_vrf_name


def frr_vrf(switch: dict, vrf: str) -> str:
    """The kernel/FRR VRF name on the switch's platform."""
    return sonic_vrf_name(vrf) if switch["platform"] == "sonic" else vrf


def _rt(opts: dict, vni: int) -> str:
    return "%d:%d" % (opts["route_target_asn"], vni)


_VRF_T = "vrf %(vrf)s\n vni %(l3vni)d\nexit-vrf\n!\n"
_VNI_T = "  vni %(vni)d\n   route-target import %(rt)s\n   route-target export %(rt)s\n  exit-vni\n"
_BGP_VRF_T = (
    "router bgp %(asn)d vrf %(vrf)s\n bgp router-id %(loopback)s\n !\n address-family ipv4 unicast\n"
    "  redistribute connected\n exit-address-family\n !\n address-family l2vpn evpn\n  advertise ipv4 unicast\n"
    "  route-target import %(rt3)s\n  route-target export %(rt3)s\n exit-address-family\nexit\n!\n"
)


def render(switch: dict, tenants: list[dict], underlay: dict, opts: dict) -> str:
    """The FRR config: zebra VRFs with their L3 VNI, the EVPN instance with its L2 VNIs, the BGP VRFs."""
    head = "! gpucloud.baremetal: tenant routing of %s (FRR, %s); generated, do not edit\n!\n" % (
        switch["name"],
        switch["platform"],
    )
    if not tenants:
        return head
    vrfs, vnis, bgp_vrfs = [], [], []
    sw = {"asn": switch["asn"], "loopback": switch["loopback"]}
    for t in tenants:
        v = dict(
            sw,
            vrf=frr_vrf(switch, t["vrf"]),
            l3vni=t["l3vni"],
            vni=t["vni"],
            rt=_rt(opts, t["vni"]),
            rt3=_rt(opts, t["l3vni"]),
        )
        vrfs.append(_VRF_T % v)
        vnis.append(_VNI_T % v)
        bgp_vrfs.append(_BGP_VRF_T % v)
    return "".join(
        [
            head,
            *vrfs,
            "router bgp %(asn)d\n bgp router-id %(loopback)s\n !\n address-family l2vpn evpn\n  advertise-all-vni\n"
            % sw,
            *vnis,
            " exit-address-family\nexit\n!\n",
            *bgp_vrfs,
        ]
    )


def render_text(switch: dict, tenants: list[dict], underlay: dict, opts: dict) -> dict[str, str]:
    return {"frr.conf": render(switch, tenants, underlay, opts)}


def delta(switch: dict, before: list[dict], after: list[dict], underlay: dict, opts: dict) -> dict:
    """FRR commands (``vtysh -f`` input) taking ``before`` to ``after``; empty when equal."""
    remove: list[dict] = []
    add: list[dict] = []
    for old, new in pairs(before, after):
        if old is not None and (new is None or _routing(old) != _routing(new)):
            remove.append(old)
        if new is not None and (old is None or _routing(old) != _routing(new)):
            add.append(new)
    lines: list[str] = []
    asn = switch["asn"]
    # A half tenant (parsed, state=deleted) lacks a VNI, VRF or L3 VNI: only what it names goes.
    vnis = ["  no vni %d" % t["vni"] for t in remove if t["vni"]]
    if vnis:
        lines += ["router bgp %d" % asn, " address-family l2vpn evpn", *vnis, " exit-address-family", "exit"]
    for t in remove:
        if t["vrf"]:
            lines += ["no router bgp %d vrf %s" % (asn, frr_vrf(switch, t["vrf"]))]
        if t["vrf"] and t["l3vni"]:
            lines += ["vrf %s" % frr_vrf(switch, t["vrf"]), " no vni %d" % t["l3vni"], "exit-vrf"]
    if add:
        lines += render(switch, add, underlay, opts).splitlines()[2:]
    return {"frr": lines}


def _routing(t: dict) -> tuple:
    return (t["vrf"], t["l3vni"], t["vni"])


def parse(config: Any) -> dict:
    """VRF to L3 VNI, L2 VNIs and BGP VRFs found in an FRR config."""
    text = "\n".join(config) if isinstance(config, list) else str(config or "")
    vrfs: dict[str, int] = {}
    l2vnis: list[int] = []
    bgp_vrfs: list[str] = []
    context: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("!"):
            continue
        m = re.match(r"^vrf (\S+)$", line)
        if m and not raw.startswith(" "):
            context = ["vrf", m.group(1)]
            continue
        m = re.match(r"^router bgp (\d+)(?: vrf (\S+))?$", line)
        if m:
            context = ["bgp", m.group(2) or ""]
            if m.group(2):
                bgp_vrfs.append(m.group(2))
            continue
        if line in ("exit", "exit-vrf"):
            context = []
            continue
        m = re.match(r"^vni (\d+)$", line)
        if m and context[:1] == ["vrf"]:
            vrfs[context[1]] = int(m.group(1))
        elif m and context == ["bgp", ""]:
            l2vnis.append(int(m.group(1)))
    return {"vrfs": vrfs, "l2vnis": sorted(l2vnis), "bgp_vrfs": sorted(bgp_vrfs)}


def expected(switch: dict, tenants: list[dict]) -> dict:
    """What ``parse`` must find in the FRR config of ``tenants``."""
    return {
        "vrfs": {frr_vrf(switch, t["vrf"]): t["l3vni"] for t in tenants},
        "l2vnis": sorted(t["vni"] for t in tenants),
        "bgp_vrfs": sorted(frr_vrf(switch, t["vrf"]) for t in tenants),
    }
