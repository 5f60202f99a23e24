# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``nodes`` section: one GPU server each, with its BMC and switch ports."""

from __future__ import annotations

import re
from typing import Any

from .checker import Checker, Unique, ip_str, normalise_mac
from .disks import root_device
from .schema import (
    BMC_BOOT_MODES,
    BMC_BOOT_TARGETS,
    BMC_KEYS,
    DEFAULT_GPU_DRIVER,
    GPU_COUNT_RANGE,
    GPU_DRIVER_MODES,
    HOSTNAME,
    MAC,
    NODE_GPU_KEYS,
    NODE_KEYS,
    NVL_SYSTEM_MODELS,
    NVLINK5_MODELS,
    NVSWITCH_MIN_SXM_GPUS,
    NVSWITCH_SXM,
    PORT_KEYS,
    PORT_NAME,
)

# A BMC's system id, appended to /redfish/v1/Systems/ (as role os_install's module checks it again).
SYSTEM_ID = re.compile(r"^[A-Za-z0-9._~-]+$")


def nodes(c: Checker, raw: Any, mgmt: dict, profiles: dict, switches: dict, tenants: dict) -> list[dict]:
    out = []
    names = Unique(c, "node name")
    macs = Unique(c, "MAC")
    ips = Unique(c, "IP")
    ports = Unique(c, "switch port")
    bmcs: dict[tuple[str, str], str] = {}
    net, dhcp = mgmt.get("_net"), mgmt.get("_dhcp")
    for key in ("gateway", "pxe_server"):
        if mgmt.get("_" + key) is not None:
            ips.claim(mgmt["_" + key], "site.management." + key, mgmt[key])
    for i, n in enumerate(c.sequence(raw, "nodes")):
        path = "nodes[%d]" % i
        m = c.mapping(n, path, NODE_KEYS)
        if m is None:
            continue
        entry: dict[str, Any] = {"_path": path}
        if "name" in m:
            entry["name"] = c.string(m["name"], path + ".name", HOSTNAME, "a host name")
            names.claim(entry["name"], path + ".name")
        if "mac" in m:
            mac = c.string(m["mac"], path + ".mac", MAC, "a MAC address (aa:bb:cc:dd:ee:ff)")
            if mac:
                mac = normalise_mac(mac)
                if int(mac[:2], 16) & 1:
                    c.add(path + ".mac", "%s is a multicast MAC; a NIC has a unicast MAC" % mac)
                elif mac == "00:00:00:00:00:00":  # what BMCs show for a port without a MAC: it identifies nothing
                    c.add(path + ".mac", "%s is no NIC's MAC; give the node's boot NIC's MAC" % mac)
                elif macs.claim(mac, path + ".mac"):
                    entry["mac"] = mac
        if "ip" in m:
            value = c.ip(m["ip"], path + ".ip")
            if value is not None:
                entry["_ip"] = value
                entry["ip"] = ip_str(value)
                in_subnet = c.in_subnet(value, net, path + ".ip", "the management subnet")
                if in_subnet and dhcp and dhcp[0] <= value <= dhcp[1]:
                    c.add(
                        path + ".ip",
                        "%s is inside the DHCP range %s-%s; node addresses are static "
                        "reservations outside it" % (entry["ip"], *mgmt["dhcp_range"]),
                    )
                ips.claim(value, path + ".ip", entry["ip"])
        if "bmc" in m:
            entry["bmc"] = bmc(c, m["bmc"], path + ".bmc")
            key = bmc_identity(entry["bmc"])
            if key is not None and key in bmcs:
                c.add(path + ".bmc.address",
                      "BMC %s%s is already %s's: a power cycle or boot override of one node would act on the "
                      "other; give each node its own BMC, or each system of a multi-node chassis its system_id"
                      % (key[0], " system %s" % key[1] if key[1] else "", bmcs[key]))
            elif key is not None:
                bmcs[key] = "%s (%s)" % (path, entry.get("name", "?"))
        if "os" in m:
            os_name = c.string(m["os"], path + ".os")
            if os_name is not None and profiles and os_name not in profiles:
                c.add(
                    path + ".os",
                    "unknown OS profile %r; known profiles: %s" % (os_name, ", ".join(sorted(profiles))),
                )
            entry["os"] = os_name
        if "gpu" in m:
            entry["gpu"] = node_gpu(c, m["gpu"], path + ".gpu")
        if "root_device" in m:
            entry["root_device"] = root_device(c, m["root_device"], path + ".root_device")
        entry["switch_ports"] = node_ports(c, m, path, switches, ports)
        entry["tenant"] = None
        if m.get("tenant") is not None:
            tname = c.string(m["tenant"], path + ".tenant")
            tenant = tenants.get(tname) if tname else None
            if tname and tenant is None:
                c.add(
                    path + ".tenant",
                    "unknown tenant %r; known tenants: %s" % (tname, ", ".join(sorted(tenants)) or "none"),
                )
            elif tenant is not None and tenant.get("isolation") == "shared":
                c.add(
                    path + ".tenant",
                    "tenant %r is shared; only private tenants have dedicated nodes "
                    "(remove 'tenant' to make this a shared node)" % tname,
                )
            elif tenant is not None:
                entry["tenant"] = tname
        entry["isolation"] = "private" if m.get("tenant") is not None else "shared"
        if m.get("wireguard_ip") is not None:
            value = c.ip(m["wireguard_ip"], path + ".wireguard_ip")
            if m.get("tenant") is None:
                c.add(path + ".wireguard_ip", "is only allowed on a private node (one with 'tenant')")
            elif value is not None:
                entry["_wg_explicit"] = value
        out.append(entry)
    return out


def node_gpu(c: Checker, raw: Any, path: str) -> dict:
    g = c.mapping(raw, path, NODE_GPU_KEYS) or {}
    out = {
        "model": c.string(g.get("model"), path + ".model") if "model" in g else None,
        "count": c.integer(g.get("count"), path + ".count", GPU_COUNT_RANGE) if "count" in g else None,
        "driver": DEFAULT_GPU_DRIVER,
        "nvswitch": False,
    }
    if g.get("driver") is not None:
        driver = c.string(g["driver"], path + ".driver")
        if driver is not None and driver not in GPU_DRIVER_MODES:
            c.add(path + ".driver", "%r is not a driver mode; use one of %s" % (driver, ", ".join(GPU_DRIVER_MODES)))
        elif driver is not None:
            out["driver"] = driver
    if "nvswitch" in g:
        if not isinstance(g["nvswitch"], bool):
            c.add(path + ".nvswitch", "must be true or false (true: an NVSwitch system such as HGX)")
        elif g["nvswitch"] and not out["count"]:
            c.add(path + ".nvswitch", "is only allowed on a node with GPUs (gpu.count above 0)")
        else:
            out["nvswitch"] = bool(g["nvswitch"])
    else:
        out["nvswitch"] = nvswitch_of(out["model"], out["count"])
    out["nvlink5"] = bool(out["nvswitch"] and out["model"] and NVLINK5_MODELS.match(out["model"]))
    return out


def nvswitch_of(model: str | None, count: int | None) -> bool:
    """Whether a node of ``count`` GPUs of ``model`` is an NVSwitch system (schema: NVSWITCH_*)."""
    if not model or not count:
        return False
    if NVL_SYSTEM_MODELS.match(model):
        return True
    return bool(NVSWITCH_SXM.search(model) or NVLINK5_MODELS.match(model)) and count >= NVSWITCH_MIN_SXM_GPUS


def bmc(c: Checker, raw: Any, path: str) -> dict:
    b = c.mapping(raw, path, BMC_KEYS) or {}
    out: dict[str, Any] = {}
    if "address" in b:
        addr = c.string(b["address"], path + ".address")
        if addr:
            out["address"] = addr
            out["url"] = addr.rstrip("/") if "://" in addr else "https://" + addr
            if "@" in out["url"].partition("://")[2].split("/", 1)[0]:
                # not echoed: the part before '@' is a user name and, likely, a password
                c.add(path + ".address", "holds a user name or password (user@host); give the BMC's address only"
                      " and the credentials as bmc.username and bmc.password")
            elif not re.fullmatch(r"^https?://[A-Za-z0-9.\-\[\]:]+(/.*)?$", out["url"]):
                c.add(path + ".address", "%r is not a BMC address (host, host:port or http(s)://host[:port])" % addr)
    if "username" in b:
        out["username"] = c.string(b["username"], path + ".username")
    if "password" in b:
        out["password"] = c.secret(b["password"], path + ".password")
    for key, other in (("username", "password"), ("password", "username")):
        if key in b and other not in b:
            c.add("%s.%s" % (path, other), "is required with bmc.%s (or leave both out and give every node's"
                  " account with os_install_bmc_username/os_install_bmc_password, e.g. from an AWX credential)" % key)
    if "system_id" in b:
        out["system_id"] = c.string(b["system_id"], path + ".system_id", SYSTEM_ID,
                                    "a Redfish system id (letters, digits, . _ ~ -, as in /redfish/v1/Systems/<id>)")
    if "validate_certs" in b:
        if not isinstance(b["validate_certs"], bool):
            c.add(path + ".validate_certs", "must be true or false")
        else:
            out["validate_certs"] = bool(b["validate_certs"])
    if "boot_mode" in b:
        if b["boot_mode"] not in BMC_BOOT_MODES:
            c.add(path + ".boot_mode", "%r is not a boot mode; use one of %s (Redfish BootSourceOverrideMode)"
                  % (b["boot_mode"], ", ".join(BMC_BOOT_MODES)))
        else:
            out["boot_mode"] = b["boot_mode"]
    if "boot_target" in b:
        if b["boot_target"] not in BMC_BOOT_TARGETS:
            c.add(path + ".boot_target", "%r is not a boot target for an install; use one of %s (Redfish "
                  "BootSourceOverrideTarget)" % (b["boot_target"], ", ".join(BMC_BOOT_TARGETS)))
        elif b["boot_target"] == "UefiHttp" and b.get("boot_mode") == "Legacy":
            c.add(path + ".boot_target", "UefiHttp (UEFI HTTP boot) needs UEFI firmware, but bmc.boot_mode is Legacy")
        elif b["boot_target"] == "Cd" and b.get("boot_mode") == "Legacy":
            c.add(path + ".boot_target", "Cd (virtual media) boots the deploy ISO, which is UEFI only, but "
                  "bmc.boot_mode is Legacy")
        else:
            out["boot_target"] = b["boot_target"]
    return out


def bmc_identity(b: dict) -> tuple[str, str] | None:
    """The BMC (its URL with the scheme's port made explicit, host in lowercase) and the system that a node's
    power and boot actions go to; two nodes with the same one would power-cycle each other."""
    url = b.get("url")
    if not url or "://" not in url:
        return None
    scheme, rest = url.split("://", 1)
    hostport, _slash, path = rest.partition("/")
    if not re.search(r":\d+$", hostport):
        hostport += ":443" if scheme == "https" else ":80"
    return ("%s://%s%s" % (scheme, hostport.lower(), "/" + path if path else ""), b.get("system_id") or "")


def node_ports(c: Checker, m: dict, path: str, switches: dict, ports: Unique) -> list[dict]:
    out = []
    if "switch_ports" not in m:
        return out
    for j, p in enumerate(c.sequence(m["switch_ports"], path + ".switch_ports")):
        ppath = "%s.switch_ports[%d]" % (path, j)
        pm = c.mapping(p, ppath, PORT_KEYS)
        if pm is None:
            continue
        sname = c.string(pm.get("switch"), ppath + ".switch") if "switch" in pm else None
        port = (
            c.string(pm.get("port"), ppath + ".port", PORT_NAME, "a port name (e.g. swp1, Ethernet0)")
            if "port" in pm
            else None
        )
        if sname is not None and sname not in switches:
            c.add(
                ppath + ".switch",
                "unknown switch %r; known switches: %s" % (sname, ", ".join(sorted(switches)) or "none"),
            )
            continue
        if sname is not None and switches[sname].get("role") == "spine":
            c.add(ppath + ".switch", "%r is a spine; nodes attach to leaf switches" % sname)
            continue
        if sname is None or port is None:
            continue
        if ports.claim((sname, port), ppath, "%s %s" % (sname, port)):
            out.append({"switch": sname, "port": port})
    return out


# --- cross-object rules --------------------------------------------------------
