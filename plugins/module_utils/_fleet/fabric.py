# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``fabric`` section: switches and underlay settings."""

from __future__ import annotations

from typing import Any

from .checker import Checker, Unique, ip_str, normalise_mac
from .schema import (
    ASN_RANGE,
    DEFAULT_ANYCAST_MAC,
    DEFAULT_MTU,
    FABRIC_KEYS,
    HOSTNAME,
    MAC,
    PLATFORMS,
    SWITCH_KEYS,
    SWITCH_ROLES,
    UNDERLAY_KEYS,
)


def fabric(c: Checker, raw: Any) -> dict:
    fab = c.mapping(raw, "fabric", FABRIC_KEYS) or {}
    underlay = fab.get("underlay") or {}
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
            entry["platform"] = c.choice(s["platform"], path + ".platform", PLATFORMS)
        if "role" in s:
            entry["role"] = c.choice(s["role"], path + ".role", SWITCH_ROLES)
        if "asn" in s:
            entry["asn"] = c.integer(s["asn"], path + ".asn", ASN_RANGE)
        for key, uniq in (("mgmt_ip", mgmt_ips), ("loopback", loopbacks)):
            if key in s:
                value = c.ip(s[key], "%s.%s" % (path, key))
                if value is not None:
                    entry[key] = ip_str(value)
                    uniq.claim(value, "%s.%s" % (path, key), entry[key])
        switches.append(entry)
    return {"switches": switches, "underlay": out_underlay}
