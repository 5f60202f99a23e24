# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""FRR: the BGP EVPN part of tenant networks, for platforms that route with FRR.

Private to the collection. NVUE (Cumulus) and SONiC route with FRR: ``vrf V`` / ``vni L3VNI``
(zebra), ``router bgp ASN`` with ``address-family l2vpn evpn`` / ``advertise-all-vni`` and
one ``vni`` block per L2 VNI (route targets ``RT_ASN:VNI``, the same on every leaf whatever
its own ASN), and ``router bgp ASN vrf V`` redistributing the tenant subnet into EVPN type-5
routes. Underlay neighbours are not ours and are not rendered.

Every line is one entry (``cli.Line``): the templates are joined from the entries, and
``parse`` reads with the same entries.
"""

from __future__ import annotations

from typing import Any

from ..catalog import PLATFORMS
from ..cli import Line, first
from ..model import pairs
from ..ownership import text_of

VRF = Line("vrf", "vrf %(vrf)s")
VRF_VNI = Line("vrf_vni", "vni %(l3vni)d")
EXIT_VRF = Line("exit_vrf", "exit-vrf")
BGP = Line("bgp", "router bgp %(asn)d")
BGP_VRF = Line("bgp_vrf", "router bgp %(asn)d vrf %(vrf)s")
ROUTER_ID = Line("router_id", "bgp router-id %(loopback)s")
IPV4 = Line("ipv4", "address-family ipv4 unicast")
REDISTRIBUTE = Line("redistribute", "redistribute connected")
EVPN = Line("evpn", "address-family l2vpn evpn")
ADVERTISE_ALL_VNI = Line("advertise_all_vni", "advertise-all-vni")
ADVERTISE_IPV4 = Line("advertise_ipv4", "advertise ipv4 unicast")
VNI = Line("vni", "vni %(vni)d")
VNI_RT_IMPORT = Line("vni_rt_import", "route-target import %(rt)s")
VNI_RT_EXPORT = Line("vni_rt_export", "route-target export %(rt)s")
EXIT_VNI = Line("exit_vni", "exit-vni")
VRF_RT_IMPORT = Line("vrf_rt_import", "route-target import %(rt3)s")
VRF_RT_EXPORT = Line("vrf_rt_export", "route-target export %(rt3)s")
EXIT_AF = Line("exit_af", "exit-address-family")
EXIT = Line("exit", "exit")


def _text(*lines: tuple[int, Line | str]) -> str:
    """A template: each line at its depth (FRR indents by one space), ``"!"`` as it is."""
    return "".join(" " * depth + (line.setval if isinstance(line, Line) else line) + "\n" for depth, line in lines)


_VRF_T = _text((0, VRF), (1, VRF_VNI), (0, EXIT_VRF), (0, "!"))
_VNI_T = _text((2, VNI), (3, VNI_RT_IMPORT), (3, VNI_RT_EXPORT), (2, EXIT_VNI))
_BGP_VRF_T = _text(
    (0, BGP_VRF), (1, ROUTER_ID), (1, "!"), (1, IPV4), (2, REDISTRIBUTE), (1, EXIT_AF), (1, "!"),
    (1, EVPN), (2, ADVERTISE_IPV4), (2, VRF_RT_IMPORT), (2, VRF_RT_EXPORT), (1, EXIT_AF), (0, EXIT), (0, "!"),
)  # fmt: skip
_BGP_HEAD = _text((0, BGP), (1, ROUTER_ID), (1, "!"), (1, EVPN), (2, ADVERTISE_ALL_VNI))
_BGP_TAIL = _text((1, EXIT_AF), (0, EXIT), (0, "!"))


def _vrf_prefix(switch: dict) -> str:
    """What the switch's platform puts before a VRF name (``vrf_prefix``: SONiC's ``Vrf-``)."""
    spec = PLATFORMS.get(switch["platform"])
    return spec.get("vrf_prefix", "") if spec else ""


def frr_vrf(switch: dict, vrf: str) -> str:
    """The kernel/FRR VRF name on the switch's platform."""
    return _vrf_prefix(switch) + vrf


def _rt(opts: dict, vni: int) -> str:
    return "%d:%d" % (opts["route_target_asn"], vni)


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
    prefix = _vrf_prefix(switch)
    for t in tenants:
        v = dict(
            sw,
            vrf=prefix + t["vrf"],
            l3vni=t["l3vni"],
            vni=t["vni"],
            rt=_rt(opts, t["vni"]),
            rt3=_rt(opts, t["l3vni"]),
        )
        vrfs.append(_VRF_T % v)
        vnis.append(_VNI_T % v)
        bgp_vrfs.append(_BGP_VRF_T % v)
    return "".join([head, *vrfs, _BGP_HEAD % sw, *vnis, _BGP_TAIL, *bgp_vrfs])


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
    sw = {"asn": switch["asn"]}
    # A half tenant (parsed, state=deleted) lacks a VNI, VRF or L3 VNI: only what it names goes.
    vnis = ["  no " + VNI.set(t) for t in remove if t["vni"]]
    if vnis:
        lines += [BGP.set(sw), " " + EVPN.setval, *vnis, " " + EXIT_AF.setval, EXIT.setval]
    for t in remove:
        v = dict(sw, vrf=frr_vrf(switch, t["vrf"]), l3vni=t["l3vni"])
        if t["vrf"]:
            lines += ["no " + BGP_VRF.set(v)]
        if t["vrf"] and t["l3vni"]:
            lines += [VRF.set(v), " no " + VRF_VNI.set(v), EXIT_VRF.setval]
    if add:
        lines += render(switch, add, underlay, opts).splitlines()[2:]
    return {"frr": lines}


def _routing(t: dict) -> tuple:
    return (t["vrf"], t["l3vni"], t["vni"])


def parse(config: Any) -> dict:
    """VRF to L3 VNI, L2 VNIs and BGP VRFs found in an FRR config."""
    vrfs: dict[str, int] = {}
    l2vnis: list[int] = []
    bgp_vrfs: list[str] = []
    context: list[str] = []
    for raw in text_of(config, "FRR").splitlines():
        line = raw.strip()
        if not line or line.startswith("!"):
            continue
        values = VRF.get(line)
        if values and not raw.startswith(" "):
            context = ["vrf", values["vrf"]]
            continue
        entry, values = first(line, (BGP_VRF, BGP))
        if entry is not None:
            context = ["bgp", values.get("vrf") or ""]
            if entry is BGP_VRF:
                bgp_vrfs.append(values["vrf"])
            continue
        if line in (EXIT.setval, EXIT_VRF.setval):
            context = []
            continue
        if context[:1] == ["vrf"] and VRF_VNI.get(line):
            vrfs[context[1]] = int(VRF_VNI.get(line)["l3vni"])
        elif context == ["bgp", ""] and VNI.get(line):
            l2vnis.append(int(VNI.get(line)["vni"]))
    return {"vrfs": vrfs, "l2vnis": sorted(l2vnis), "bgp_vrfs": sorted(bgp_vrfs)}


def expected(switch: dict, tenants: list[dict]) -> dict:
    """What ``parse`` must find in the FRR config of ``tenants``."""
    return {
        "vrfs": {frr_vrf(switch, t["vrf"]): t["l3vni"] for t in tenants},
        "l2vnis": sorted(t["vni"] for t in tenants),
        "bgp_vrfs": sorted(frr_vrf(switch, t["vrf"]) for t in tenants),
    }
