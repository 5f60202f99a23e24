# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``fabric`` section: switches and underlay settings.

The platforms a switch may run, and the releases of each, are the fabric's data
(``_fabric/catalog.py``, which imports nothing): read when a fleet is loaded, not copied here.
"""

from __future__ import annotations

import re
from typing import Any

from .._fabric.catalog import PLATFORMS, switch_platforms
from .checker import Checker, Unique, ip_str, normalise_mac, plain
from .schema import (
    ASN_RANGE,
    DEFAULT_ANYCAST_MAC,
    DEFAULT_MTU,
    FABRIC_KEYS,
    HOSTNAME,
    MAC,
    SWITCH_KEYS,
    SWITCH_ROLES,
    UNDERLAY_KEYS,
)


def fabric(c: Checker, raw: Any) -> dict:
    fab = c.mapping(raw, "fabric", FABRIC_KEYS) or {}
    underlay = fab.get("underlay")
    if underlay is None:  # absent, or `underlay:` with nothing: the defaults; [] or "" is a mistake, named below
        underlay = {}
    u = c.mapping(underlay, "fabric.underlay", UNDERLAY_KEYS) or {}
    out_underlay = {"anycast_mac": DEFAULT_ANYCAST_MAC, "mtu": DEFAULT_MTU}
    if "anycast_mac" in u:
        mac = c.string(u["anycast_mac"], "fabric.underlay.anycast_mac", MAC, "a MAC address (aa:bb:cc:dd:ee:ff)")
        if mac:
            out_underlay["anycast_mac"] = normalise_mac(mac)
    if "mtu" in u:
        out_underlay["mtu"] = c.integer(u["mtu"], "fabric.underlay.mtu", (1280, 9216))
    switches = []
    names = Unique(c, "switch name")
    mgmt_ips = Unique(c, "management address")
    loopbacks = Unique(c, "loopback")
    for i, sw in enumerate(c.sequence(fab.get("switches"), "fabric.switches") if "switches" in fab else []):
        path = "fabric.switches[%d]" % i
        s = c.mapping(sw, path, SWITCH_KEYS)
        if s is None:
            continue
        entry: dict[str, Any] = {"_path": path}
        if "name" in s:
            entry["name"] = c.string(s["name"], path + ".name", HOSTNAME, "a host name")
            names.claim(entry["name"], path + ".name")
        if "platform" in s:
            entry["platform"] = c.choice(s["platform"], path + ".platform", switch_platforms())
        if "role" in s:
            entry["role"] = c.choice(s["role"], path + ".role", SWITCH_ROLES)
        if "asn" in s:
            entry["asn"] = c.integer(s["asn"], path + ".asn", ASN_RANGE)
        if entry.get("platform"):
            entry["os_version"] = os_version(c, entry["platform"], s.get("os_version"), path + ".os_version")
        for key, uniq in (("mgmt_ip", mgmt_ips), ("loopback", loopbacks)):
            if key in s:
                value = c.ip(s[key], "%s.%s" % (path, key))
                if value is not None:
                    entry[key] = ip_str(value)
                    uniq.claim(value, "%s.%s" % (path, key), entry[key])
        switches.append(entry)
    return {"switches": switches, "underlay": out_underlay}


def version_key(platform: str, text: str) -> tuple | None:
    """``"5.12"`` -> (5, 12); ``"202605"`` -> (202605,); ``"master"`` -> (999999,); None if malformed.

    The form is the platform's (``catalog``: ``pattern``, its groups the key; ``major``; ``aliases``).
    """
    spec = PLATFORMS[platform]["versions"]
    if text in spec.get("aliases", {}):
        return tuple(spec["aliases"][text])
    m = re.fullmatch(spec["pattern"], text)
    if not m:
        return None
    key = tuple(int(part) for part in m.groups() if part is not None)
    return key if spec.get("major") in (None, key[0]) else None


def os_version(c: Checker, platform: str, value: Any, path: str) -> str | None:
    """The switch's OS release, validated for its platform (default: the newest tested)."""
    spec = PLATFORMS[platform]["versions"]
    if value is None:
        return spec["default"]
    if isinstance(value, float):
        c.add(path, "%r is a number; quote the release (e.g. '5.10'): YAML reads 5.10 as 5.1" % value)
        return None
    text = str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    key = version_key(platform, text) if text else None
    if key is None:
        c.add(path, "%r is not a %s release; give %s" % (plain(value), platform, spec["form"]))
        return None
    if key < spec["oldest"]:
        c.add(
            path,
            "%s %s is older than the oldest release the fabric supports (%s); see docs/fabric.md"
            % (platform, text, ".".join(str(p) for p in spec["oldest"])),
        )
        return None
    if spec.get("newest") and key > spec["newest"]:
        c.add(
            path,
            "%s %s is newer than the newest release the fabric renders for (%s: %s); see docs/fabric.md"
            % (platform, text, ".".join(str(p) for p in spec["newest"]), spec["newest_why"]),
        )
        return None
    return text
