# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``site`` section: name, domain, management network, OS profiles, host cluster."""

from __future__ import annotations

from typing import Any

from .checker import Checker, ip_str, is_int
from .disks import root_device
from .schema import (
    DEFAULT_HTTP_PORT,
    DEFAULT_SSH_KNOWN_HOSTS,
    DNS_LABEL,
    DOMAIN,
    HOST_CLUSTER_KEYS,
    HOSTNAME,
    KNOWN_HOSTS_PATH,
    MGMT_KEYS,
    NAMESERVERS_MAX,
    OS_FAMILIES,
    OS_IMAGE_FORMATS,
    OS_IMAGE_SUFFIXES,
    OS_PROFILE_KEYS,
    OS_PROFILE_KINDS,
    PORT_RANGE,
    SHA256,
    SITE_KEYS,
    WG_GATEWAY_KEYS,
)


def site(c: Checker, raw: Any) -> dict:
    site = c.mapping(raw, "site", SITE_KEYS) or {}
    out: dict[str, Any] = {
        "name": c.string(site.get("name"), "site.name", DNS_LABEL, "a DNS label (lowercase letters, digits, '-')")
        if "name" in site
        else None,
        "domain": c.string(site.get("domain"), "site.domain", DOMAIN, "a DNS domain (lowercase)")
        if "domain" in site
        else None,
    }
    out["ssh_known_hosts"] = (
        c.string(site["ssh_known_hosts"], "site.ssh_known_hosts", KNOWN_HOSTS_PATH,
                 "a file on the controller: an absolute path or ~/PATH, without spaces or commas")
        if "ssh_known_hosts" in site
        else DEFAULT_SSH_KNOWN_HOSTS
    )
    out["management"] = management(c, site.get("management")) if "management" in site else {}
    out["os_profiles"] = os_profiles(c, site.get("os_profiles")) if "os_profiles" in site else {}
    host_cluster = site.get("host_cluster")
    out["host_cluster"] = {}
    if host_cluster is not None:
        hc = c.mapping(host_cluster, "site.host_cluster", HOST_CLUSTER_KEYS) or {}
        for key in ("kubeconfig", "context"):
            if key in hc:
                out["host_cluster"][key] = c.string(hc[key], "site.host_cluster." + key)
        if "wireguard_gateway" in hc:
            out["host_cluster"]["wireguard_gateway"] = wireguard_gateway(c, hc["wireguard_gateway"])
    return out


def wireguard_gateway(c: Checker, raw: Any) -> dict:
    """The host in front of the tenant control planes where private tenants' tunnels end."""
    path = "site.host_cluster.wireguard_gateway"
    gw = c.mapping(raw, path, WG_GATEWAY_KEYS) or {}
    out: dict[str, Any] = {}
    if "name" in gw:
        out["name"] = c.string(gw["name"], path + ".name", DNS_LABEL, "a DNS label (lowercase letters, digits, '-')")
    if "ip" in gw:
        value = c.ip(gw["ip"], path + ".ip")
        if value is not None:
            out["ip"] = ip_str(value)
    return out


def management(c: Checker, raw: Any) -> dict:
    path = "site.management"
    mgmt = c.mapping(raw, path, MGMT_KEYS) or {}
    out: dict[str, Any] = {}
    net = c.network(mgmt.get("subnet"), path + ".subnet") if "subnet" in mgmt else None
    out["_net"] = net
    if net is not None:
        out["subnet"] = net.cidr
        out["netmask"] = net.netmask
        out["prefixlen"] = net.prefixlen
        c.claim_subnet(net, path + ".subnet")
    for key in ("gateway", "pxe_server"):
        if key in mgmt:
            value = c.ip(mgmt[key], "%s.%s" % (path, key))
            out["_" + key] = value
            if value is not None:
                out[key] = ip_str(value)
                c.in_subnet(value, net, "%s.%s" % (path, key), "the management subnet")
    rng = mgmt.get("dhcp_range")
    out["_dhcp"] = None
    if "dhcp_range" in mgmt:
        if not isinstance(rng, list) or len(rng) != 2:
            c.add(path + ".dhcp_range", "must be a list of two addresses [first, last]")
        else:
            first = c.ip(rng[0], path + ".dhcp_range[0]")
            last = c.ip(rng[1], path + ".dhcp_range[1]")
            if first is not None and last is not None:
                if first > last:
                    c.add(path + ".dhcp_range", "first address %s is after last %s" % (ip_str(first), ip_str(last)))
                else:
                    c.in_subnet(first, net, path + ".dhcp_range[0]", "the management subnet")
                    c.in_subnet(last, net, path + ".dhcp_range[1]", "the management subnet")
                    out["_dhcp"] = (first, last)
                    out["dhcp_range"] = [ip_str(first), ip_str(last)]
    for key in ("gateway", "pxe_server"):
        value = out.get("_" + key)
        if value is not None and out["_dhcp"] and out["_dhcp"][0] <= value <= out["_dhcp"][1]:
            c.add("%s.%s" % (path, key), "%s is inside the DHCP range %s-%s" % (ip_str(value), *out["dhcp_range"]))
    if "pxe_server_name" in mgmt:
        out["pxe_server_name"] = c.string(mgmt["pxe_server_name"], path + ".pxe_server_name", HOSTNAME, "a host name")
    out["http_port"] = (
        c.integer(mgmt["http_port"], path + ".http_port", PORT_RANGE) if "http_port" in mgmt else DEFAULT_HTTP_PORT
    )
    if "nameservers" in mgmt:
        servers = mgmt["nameservers"]
        if not isinstance(servers, list) or not 1 <= len(servers) <= NAMESERVERS_MAX:
            c.add(path + ".nameservers", "must be a list of 1 to %d IPv4 addresses" % NAMESERVERS_MAX)
        else:
            values = [c.ip(s, "%s.nameservers[%d]" % (path, i)) for i, s in enumerate(servers)]
            out["nameservers"] = [ip_str(v) for v in values if v is not None]
    elif "gateway" in out:
        out["nameservers"] = [out["gateway"]]
    return out


def os_profiles(c: Checker, raw: Any) -> dict:
    out: dict[str, dict] = {}
    if not isinstance(raw, dict) or not raw:
        c.add("site.os_profiles", "must be a non-empty mapping of profile name to {family, version}")
        return out
    for name, prof in raw.items():
        path = "site.os_profiles.%s" % name
        p = c.mapping(prof, path, OS_PROFILE_KEYS)
        if p is None:
            continue
        entry: dict[str, Any] = {"name": str(name)}
        if "family" in p:
            entry["family"] = c.choice(p["family"], path + ".family", OS_FAMILIES)
        if "version" in p:
            version = p["version"]
            if isinstance(version, float):
                # YAML reads 24.10 as 24.1 and 9.10 as 9.1: the text the operator wrote is gone
                c.add(path + ".version", "%r is a number; write the release as a string (\"24.04\", \"9.4\"): YAML "
                      "reads an unquoted 24.10 as 24.1" % version)
            else:
                entry["version"] = c.string(str(version) if is_int(version) else version, path + ".version")
        for key in ("kernel", "initrd", "image"):
            if key in p:
                entry[key] = c.string(p[key], "%s.%s" % (path, key))
        for key in ("kernel_sha256", "initrd_sha256", "image_sha256"):
            if key in p:
                digest = c.string(p[key], "%s.%s" % (path, key), SHA256, "a SHA-256 digest (64 hex digits)")
                entry[key] = digest.lower() if digest else digest
        _image_profile(c, p, path, entry)
        if "root_device" in p:
            entry["root_device"] = root_device(c, p["root_device"], path + ".root_device")
        out[str(name)] = entry
    return out


def _image_profile(c: Checker, p: dict, path: str, entry: dict[str, Any]) -> None:
    """``kind`` (installer or image) and what an image profile needs: the image, its digest, a format the
    deploy ramdisk writes (given, or said by the image's name); a deploy ramdisk of its own (kernel and initrd)
    or none (the boot server builds one)."""
    kind = c.choice(p["kind"], path + ".kind", OS_PROFILE_KINDS) if "kind" in p else "installer"
    if kind is None:
        return
    if "image_format" in p:
        entry["image_format"] = c.choice(p["image_format"], path + ".image_format", OS_IMAGE_FORMATS)
    if kind == "installer":
        for key in ("image_sha256", "image_format"):
            if key in p:
                c.add("%s.%s" % (path, key), "applies to kind image only (an installer profile's image is its "
                      "installer's package source); set kind: image, or remove it")
        return
    entry["kind"] = "image"
    for key, what in (("image", "the image to write (a URL, or an absolute path on the controller)"),
                      ("image_sha256", "the image's SHA-256 (64 hex digits)")):
        if key not in p:
            c.add("%s.%s" % (path, key), "required for kind image: %s" % what)
    if ("kernel" in p) != ("initrd" in p):
        c.add("%s.%s" % (path, "initrd" if "kernel" in p else "kernel"),
              "a deploy ramdisk of your own needs both kernel and initrd; without both, the boot server builds one")
    if "image" in p and "image_format" not in p and isinstance(entry.get("image"), str):
        name = entry["image"].split("?", 1)[0].lower()
        fmt = next((f for suffix, f in OS_IMAGE_SUFFIXES if name.endswith(suffix)), None)
        if fmt is None:
            c.add(path + ".image_format", "required: the image's name %r does not say its format (a name ending in "
                  ".raw, .raw.gz, .raw.zst or .qcow2 does; an .img is raw or qcow2: Ubuntu's cloud images are qcow2, "
                  "`qemu-img info` tells); allowed: %s"
                  % (entry["image"].rsplit("/", 1)[-1], ", ".join(OS_IMAGE_FORMATS)))
        else:
            entry["image_format"] = fmt


# --- fabric --------------------------------------------------------------------
