# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dnsmasq configuration of the boot server: DHCP reservations, TFTP and iPXE chainloading.

The boot chain: a node's firmware DHCPs (no option 175) and gets iPXE over TFTP (``undionly.kpxe``
for BIOS, ``snponly.efi`` for x86-64 UEFI); iPXE DHCPs again, now with option 175, and gets the
URL of the node's own iPXE script on the HTTP server. UEFI HTTP boot (the firmware's HTTP client, vendor class
``HTTPClient``, client architecture 16) gets the same iPXE by URL from the HTTP server instead of TFTP, and the
offer says ``HTTPClient`` in option 60, without which edk2's HTTP boot does not take it as an HTTP offer
(NetworkPkg/HttpBootDxe/HttpBootDhcp4.c, HttpBootParseDhcp4Packet). Only fleet nodes (tag ``fleet``, set by
their reservation) get a boot file: a MAC in no fleet gets, at most, an address from the
dynamic range and nothing to boot.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from .._errors import ProblemsError

DHCP_MODES = ("range", "static", "proxy")
BIOS_FILE = "undionly.kpxe"
# iPXE that drives the NIC through the firmware's own driver (SNP): GPU servers' NICs (ConnectX, Broadcom) are ones
# iPXE's own drivers may not know, and the firmware's driver is the one that PXE-booted already.
UEFI_FILE = "snponly.efi"
# Where the HTTP server serves that iPXE to UEFI HTTP boot clients (role pxe_server copies it there).
HTTP_BOOT_PATH = "ipxe/" + UEFI_FILE
# One option per line, no newline inside: anything else would let a value inject options.
_OPTION_LINE = re.compile(r"^[a-z][a-z0-9-]*(=[^\n\r]*)?$")


def _is_ipv4(value: Any) -> bool:
    try:
        return str(ipaddress.IPv4Address(str(value))) == str(value)
    except ValueError:
        return False


def host_tag(name: str) -> str:
    return "n-" + name


def script_url(http_base: str, name: str) -> str:
    return "%s/hosts/%s.ipxe" % (http_base, name)


def render(site: dict[str, Any], nodes: list[dict[str, Any]], options: dict[str, Any]) -> str:
    """The whole configuration file. ``options``: mode, interfaces, listen_address, tftp_root, http_base,
    lease_time, log_dhcp, dns_servers, extra (raw option lines appended last)."""
    mode = options.get("mode", "range")
    problems = []
    if mode not in DHCP_MODES:
        problems.append("dhcp_mode: %r is not one of %s" % (mode, ", ".join(DHCP_MODES)))
    for i, line in enumerate(options.get("extra") or []):
        if not isinstance(line, str) or not _OPTION_LINE.fullmatch(line):
            problems.append("dnsmasq_options[%d]: %r is not one dnsmasq option (name[=value] on one line)" % (i, line))
    listen = options.get("listen_address") or ""
    if listen and not _is_ipv4(listen):
        problems.append("listen_address: %r is not an IPv4 address (empty: every address)" % (listen,))
    for i, server in enumerate(options.get("dns_servers") or []):
        if not re.fullmatch(r"[0-9.]+|[0-9a-fA-F:]+", str(server)):
            problems.append("dns_servers[%d]: %r is not an IP address" % (i, server))
    http_nodes = [n["name"] for n in nodes if n.get("boot_target") == "UefiHttp"]
    if mode == "proxy" and http_nodes:
        problems.append("dhcp_mode: proxy answers PXE clients only, but %s boot(s) by UEFI HTTP (bmc.boot_target "
                        "UefiHttp in the fleet): use dhcp_mode range or static, or boot_target Pxe"
                        % ", ".join(http_nodes[:5] + (["..."] if len(http_nodes) > 5 else [])))
    if problems:
        raise ProblemsError(problems)
    mgmt = site["management"]
    network, _prefix = mgmt["subnet"].split("/")
    lease = options.get("lease_time", "12h")
    http_base = options["http_base"]
    out = [
        "# Managed by gpucloud.baremetal (role pxe_server) from the fleet of site %s; do not edit." % site["name"],
        "port=0",  # no DNS: DHCP and TFTP only
    ]
    # Only the boot server's address (and any interfaces named) answer DHCP and TFTP: dnsmasq serves DHCP on the
    # interfaces its interface/listen-address lines allow. bind-dynamic: its sockets follow addresses that
    # appear after it started (an interface still coming up at boot), which bind-interfaces would fail on.
    for iface in options.get("interfaces") or []:
        out.append("interface=%s" % iface)
    if listen:
        out.append("listen-address=%s" % listen)
    if options.get("interfaces") or listen:
        out.append("bind-dynamic")
    if mode == "proxy":
        out.append("dhcp-range=%s,proxy,%s" % (network, mgmt["netmask"]))
    else:
        out.append("domain=%s" % site["domain"])
        if mode == "range":
            first, last = mgmt["dhcp_range"]
            out.append("dhcp-range=%s,%s,%s,%s" % (first, last, mgmt["netmask"], lease))
        else:
            out.append("dhcp-range=%s,static,%s,%s" % (network, mgmt["netmask"], lease))
        out.append("dhcp-option=option:router,%s" % mgmt["gateway"])
        if options.get("dns_servers"):
            out.append("dhcp-option=option:dns-server,%s" % ",".join(options["dns_servers"]))
    if options.get("log_dhcp", True):
        out.append("log-dhcp")
    nohttp = "" if mode == "proxy" else "tag:!httpboot,"  # proxy: no HTTP boot (its firmware gets no answer)
    out += [
        "enable-tftp",
        "tftp-root=%s" % options["tftp_root"],
        "dhcp-match=set:ipxe,175",
        "dhcp-match=set:efi64,option:client-arch,7",
        "dhcp-match=set:efi64,option:client-arch,9",
        "# firmware (no option 175): iPXE over TFTP, for fleet nodes only",
        "dhcp-boot=tag:fleet,tag:!ipxe,tag:!efi64,%s%s,,%s" % (nohttp, BIOS_FILE, mgmt["pxe_server"]),
        "dhcp-boot=tag:fleet,tag:!ipxe,tag:efi64,%s%s,,%s" % (nohttp, UEFI_FILE, mgmt["pxe_server"]),
    ]
    if mode != "proxy":
        out += [
            "# UEFI HTTP boot firmware: the same iPXE by URL; the offer must say HTTPClient (option 60)",
            "dhcp-vendorclass=set:httpboot,HTTPClient",
            "dhcp-option-force=tag:fleet,tag:httpboot,tag:!ipxe,option:vendor-class,HTTPClient",
            "dhcp-boot=tag:fleet,tag:httpboot,tag:!ipxe,%s/%s" % (http_base, HTTP_BOOT_PATH),
        ]
    if mode == "proxy":
        # A proxy-DHCP server answers only PXE clients that a pxe-service matches (dnsmasq ignores
        # dhcp-boot alone there); the offer then carries the dhcp-boot file (iPXE, or the node's
        # script for iPXE itself) and no address. Only fleet nodes match, and a MAC in no fleet gets no
        # answer at all: without dhcp-ignore dnsmasq still sends it an empty PXE menu (tried, dnsmasq 2.89).
        out.append("dhcp-ignore=tag:!fleet")
        out += ["pxe-service=tag:fleet,%s,\"gpucloud\",%s" % (csa, boot_file)
                for csa, boot_file in (("x86PC", BIOS_FILE), ("BC_EFI", UEFI_FILE), ("x86-64_EFI", UEFI_FILE))]
    out.append("# one reservation per node; iPXE (option 175) gets the node's own script over HTTP")
    for node in nodes:
        tag = host_tag(node["name"])
        if mode == "proxy":
            out.append("dhcp-host=%s,set:fleet,set:%s" % (node["mac"], tag))
        else:
            out.append("dhcp-host=%s,set:fleet,set:%s,%s,%s" % (node["mac"], tag, node["ip"], node["name"]))
        out.append("dhcp-boot=tag:%s,tag:ipxe,%s" % (tag, script_url(http_base, node["name"])))
    extra = list(options.get("extra") or [])
    if extra:
        out.append("# pxe_server_dnsmasq_options")
        out += extra
    return "\n".join(out) + "\n"
