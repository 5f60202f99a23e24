# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NVUE config schema the NVUE API SIMULATION enforces: which paths exist, which values they take.

Written from NVIDIA's NVUE command reference for Cumulus Linux 5.12 (CumulusNetworks/docs
``content/nvue-reference/``: Set-and-Unset-Commands for bridge, interface, evpn, nve, router bgp,
vrf; the VRR and EVPN Inter-subnet-Routing pages for the anycast gateway), for the parts of the
tree a tenant network touches. A path that is not in this table is refused, as the real API
refuses an unknown path (HTTP 400 on the PATCH or DELETE), so a renderer that writes a path
no switch has fails the tests instead of a production change. Notably, under
``vrf <vrf-id> router bgp address-family ipv4-unicast`` ``route-export to-evpn`` has only
``enable``, ``route-map`` and ``default-route-origination``; the L3 VNI route-targets are
``vrf <vrf-id> router bgp route-export to-evpn route-target <rt>`` and ``... route-import
from-evpn route-target <rt>``. L2 VNI route-targets are ``evpn vni <vni> route-target`` (5.4 and
later; 5.3 and earlier called it ``evpn evi``, which this table, like 5.4+, does not have).

Standard library only (the lab runs the simulation under the machine's python3).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any

EMPTY = "{}"  # a key with no attributes: its value is {}


def _on_off(v: Any) -> str | None:
    return None if v in ("on", "off") else "must be on or off"


def _int(lo: int, hi: int) -> Callable[[Any], str | None]:
    def check(v: Any) -> str | None:
        if isinstance(v, bool) or (not isinstance(v, int) and not (isinstance(v, str) and v.isdigit())):
            return "must be an integer %d-%d" % (lo, hi)
        return None if lo <= int(v) <= hi else "must be an integer %d-%d" % (lo, hi)

    return check


def _enum(*words: str) -> Callable[[Any], str | None]:
    return lambda v: None if v in words else "must be one of %s" % ", ".join(words)


def _ipv4(v: Any) -> str | None:
    try:
        ipaddress.IPv4Address(str(v))
    except ValueError:
        return "must be an IPv4 address"
    return None


def _prefix(v: Any) -> str | None:
    try:
        ipaddress.IPv4Interface(str(v))
    except ValueError:
        return "must be an IPv4 address with prefix length"
    return None if "/" in str(v) else "must be an IPv4 address with prefix length"


def _mac(v: Any) -> str | None:
    return None if re.match(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$", str(v)) else "must be a MAC address"


def _text(v: Any) -> str | None:
    return None if isinstance(v, str) and len(v) <= 256 else "must be a string"


def _asn(v: Any) -> str | None:
    return None if v in ("none", "auto") else _int(1, 4294967295)(v)


def _rt(v: Any) -> str | None:
    return None if v == "auto" or re.match(r"^(\d+|\d+\.\d+\.\d+\.\d+):\d+$", str(v)) else "must be ASN:NN or auto"


def _name(v: Any) -> str | None:
    return None if re.match(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,14}$", str(v)) else "must be a name of 1-15 characters"


def _vlan_key(v: Any) -> str | None:
    text = str(v)
    if re.match(r"^\d+(-\d+)?$", text) and all(1 <= int(p) <= 4094 for p in text.split("-")):
        return None
    return "must be a VLAN ID 1-4094 or a range"


# Placeholders: a key of the form "<...>" matches any key its checker accepts.
VNI = ("<vni>", _int(1, 16777214))
VLAN = ("<vlan-id>", _vlan_key)
IFACE = ("<interface-name>", _name)
VRF = ("<vrf-id>", _name)
DOMAIN = ("<domain-id>", _name)
PREFIX = ("<ipv4-prefix>", _prefix)
RT = ("<route-target>", _rt)

RT_SET = {RT: EMPTY}
BGP_INSTANCE = {
    "enable": _on_off,
    "autonomous-system": _asn,
    "router-id": _ipv4,
    "rd": _text,
    "address-family": {
        "ipv4-unicast": {
            "enable": _on_off,
            "redistribute": {
                "connected": {"enable": _on_off, "metric": _int(0, 4294967295), "route-map": _text},
                "static": {"enable": _on_off, "metric": _int(0, 4294967295), "route-map": _text},
            },
            "route-export": {"to-evpn": {"enable": _on_off, "route-map": _text, "default-route-origination": _on_off}},
            "route-import": {"from-vrf": {"enable": _on_off, "list": {VRF: EMPTY}, "route-map": _text}},
        },
    },
    "route-export": {"to-evpn": {"route-target": RT_SET}},
    "route-import": {"from-evpn": {"route-target": RT_SET}},
}

SCHEMA: dict = {
    "nve": {
        "vxlan": {
            "enable": _on_off,
            "source": {"address": _ipv4},
            "mac-learning": _on_off,
            "arp-nd-suppress": _on_off,
            "mtu": _int(552, 9216),
        }
    },
    "evpn": {
        "enable": _on_off,
        "vni": {VNI: {"route-target": {"both": RT_SET, "import": RT_SET, "export": RT_SET}, "rd": _text}},
    },
    "router": {"bgp": {"enable": _on_off, "autonomous-system": _asn, "router-id": _ipv4}},
    "bridge": {
        "domain": {
            DOMAIN: {
                "vlan": {VLAN: {"vni": {VNI: EMPTY}}},
                "untagged": _int(1, 4094),
                "vlan-vni-offset": _int(1, 16773120),
                "stp": {"state": {"up": EMPTY, "down": EMPTY}},
            }
        }
    },
    "interface": {
        IFACE: {
            "type": _enum("swp", "bond", "svi", "loopback", "eth", "sub", "peerlink", "tunnel"),
            "vlan": _int(1, 4094),
            "description": _text,
            "link": {"state": {"up": EMPTY, "down": EMPTY}, "mtu": _int(552, 9216)},
            "ip": {
                "vrf": _name,
                "address": {PREFIX: EMPTY},
                "vrr": {
                    "enable": _on_off,
                    "address": {PREFIX: EMPTY},
                    "mac-address": _mac,
                    "state": {"up": EMPTY, "down": EMPTY},
                },
            },
            "bridge": {
                "domain": {
                    DOMAIN: {
                        "access": lambda v: None if v == "auto" else _int(1, 4094)(v),
                        "untagged": lambda v: None if v in ("auto", "none") else _int(1, 4094)(v),
                        "vlan": {VLAN: EMPTY},
                    }
                }
            },
        }
    },
    "vrf": {
        VRF: {
            "evpn": {"enable": _on_off, "vni": {VNI: EMPTY}},
            "router": {"bgp": BGP_INSTANCE},
        }
    },
}


def _child(node: dict, key: str) -> Any:
    """The schema entry for ``key`` under ``node``: a literal key first, then a placeholder."""
    if key in node and isinstance(key, str):
        return node[key]
    for k, v in node.items():
        if isinstance(k, tuple) and k[1](key) is None:
            return v
    return None


def _allowed(node: dict) -> str:
    return ", ".join(k[0] if isinstance(k, tuple) else k for k in node)


def check_tree(tree: Any, path: tuple = ()) -> list[str]:
    """Every problem of a PATCH body (an NVUE config tree), each with its path."""
    return _check(tree, SCHEMA, path)


def _check(value: Any, node: Any, path: tuple) -> list[str]:
    where = " ".join(path) or "(root)"
    if node == EMPTY:
        return [] if value == {} or value is None else ["%s: takes no value (set it as a key: {})" % where]
    if callable(node):
        problem = node(value)
        return ["%s %s: %s" % (where, value, problem)] if problem else []
    if value is None:  # PATCH with null unsets
        return []
    if not isinstance(value, dict):
        return ["%s: is an object, not %r" % (where, value)]
    problems = []
    for key, sub in value.items():
        child = _child(node, str(key))
        if child is None:
            problems.append("%s %s: no such path in NVUE; valid here: %s" % (where, key, _allowed(node)))
            continue
        problems.extend(_check(sub, child, (*path, str(key))))
    return problems


def check_path(parts: list[str]) -> str | None:
    """Why a path (``DELETE /nvue_v1/<parts>``) does not exist in NVUE, or None when it does."""
    node: Any = SCHEMA
    for i, key in enumerate(parts):
        if not isinstance(node, dict):
            return "%s: no such path in NVUE" % " ".join(parts[: i + 1])
        child = _child(node, key)
        if child is None:
            return "%s: no such path in NVUE; valid here: %s" % (" ".join(parts[: i + 1]), _allowed(node))
        node = child
    return None
