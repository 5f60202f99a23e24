# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every file of the boot server for a fleet, rendered in one pass (pure, no I/O).

Layout under the HTTP root: ``hosts/<name>.ipxe`` (the node's iPXE script) and
``hosts/<name>/<seed files>`` (an image profile's: ``deploy.sh`` and the NoCloud seed it writes);
``os/<profile>/<file>`` for kernels, initrds and images copied from the controller or fetched and checked;
``vmedia/<name>.iso`` for a node booted by virtual media (built on the boot server from ``vmedia``'s entries).
The dnsmasq configuration is returned apart (it is installed and checked apart).
"""

from __future__ import annotations

from typing import Any

from .._errors import ProblemsError
from . import deploy, dnsmasq, ipxe, profiles, rootdisk, seeds

DEFAULTS: dict[str, Any] = {
    "mode": "range",
    "interfaces": [],
    "listen_address": "",
    "dns_servers": [],
    "extra": [],
    "lease_time": "12h",
    "log_dhcp": True,
    "console": "",
    "admin_user": "gpucloud",
    "ssh_keys": [],
    "phone_home_url": "",
    "timezone": "UTC",
    "absent": [],
}
# A node whose BMC boots it from virtual media (the fleet's bmc.boot_target): the boot server builds its ISO.
VMEDIA_TARGET = "Cd"


def http_base(site: dict[str, Any]) -> str:
    mgmt = site["management"]
    return "http://%s:%s" % (mgmt["pxe_server"], mgmt.get("http_port", 8080))


def render(site: dict[str, Any], nodes: list[dict[str, Any]], options: dict[str, Any]) -> dict[str, Any]:
    """``{"dnsmasq": text, "files": {path: text}, "copies": [...], "seeds": {path: (family, version)},
    "nodes": [names], "deploy_ramdisk": bool, "vmedia": [{name, kernel, initrd, cmdline}]}`` (deploy_ramdisk: a
    node served deploys an image with the deploy ramdisk the boot server builds; vmedia: what the boot server builds
    each virtual media node's ISO from, ipxe.vmedia). Raises ProblemsError listing every bad input, each with its
    path."""
    opts = dict(DEFAULTS, **{k: v for k, v in options.items() if v is not None})
    opts.setdefault("http_base", http_base(site))
    if not opts["dns_servers"]:  # installers stop and ask for a DNS server when DHCP gives none
        opts["dns_servers"] = list(site["management"].get("nameservers") or [])
    base = opts["http_base"]
    problems: list[str] = []
    if not opts["admin_user"] or not str(opts["admin_user"]).replace("-", "").replace("_", "").isalnum():
        problems.append("admin_user: %r is not a user name (letters, digits, - and _)" % opts["admin_user"])
    for i, key in enumerate(opts["ssh_keys"]):
        if not isinstance(key, str) or not key.isprintable() or len(key.split()) < 2:
            problems.append("ssh_keys[%d]: not one public key line ('type base64 [comment]')" % i)
    if not isinstance(opts["console"], str) or not opts["console"].isprintable():
        # it ends every node's kernel line: a line break (YAML's | and > add one) would split the iPXE script
        problems.append("console: %r is not kernel arguments on one line (e.g. console=ttyS0,115200n8)"
                        % (opts["console"],))
    profiles_by_name = site.get("os_profiles") or {}
    boots: dict[str, dict[str, Any]] = {}
    for name in sorted(profiles_by_name):
        profile = dict(profiles_by_name[name], name=name)
        try:
            boots[name] = profiles.boot_artifacts(profile, base)
        except ProblemsError as exc:
            if any(n["os"] == name for n in nodes):
                problems += exc.problems
    absent = set(opts["absent"])
    kept = []
    for i, node in enumerate(nodes):
        if node.get("os") not in profiles_by_name:
            problems.append("nodes[%d].os: unknown OS profile %r; known profiles: %s"
                            % (i, node.get("os"), ", ".join(sorted(profiles_by_name)) or "none"))
        elif node["name"] not in absent:
            kept.append(node)
    if problems:
        raise ProblemsError(problems)

    files: dict[str, str] = {}
    seed_families: dict[str, tuple[str, str]] = {}
    seed_values: dict[str, tuple[str, ...]] = {}
    copies: dict[str, dict[str, str]] = {}
    vmedia: list[dict[str, str]] = []
    for node in kept:
        profile = profiles_by_name[node["os"]]
        family, boot = profile["family"], boots[node["os"]]
        if node.get("boot_target") == VMEDIA_TARGET:
            try:
                if profile.get("kind") != "image":
                    raise ValueError("nodes.%s.bmc.boot_target: Cd (virtual media) boots the deploy ramdisk of an "
                                     "image profile, but OS profile %s is kind installer; give the node an image "
                                     "profile or boot it by Pxe or UefiHttp" % (node["name"], node["os"]))
                vmedia.append(dict(ipxe.vmedia(node, boot, site, base, opts["console"]), name=node["name"]))
            except ValueError as exc:
                problems.append(str(exc))
                continue
        for copy in boot["copies"]:
            copies[copy["path"]] = copy
        files["hosts/%s.ipxe" % node["name"]] = ipxe.render(node, family, boot, site, base, opts["console"])
        node = dict(node, root_device=rootdisk.hints(node, profile))
        if profile.get("kind") == "image":
            rendered = deploy.render(node, site, boot, opts, ipxe.seed_base(base, node["name"]))
            validated, kind = ("user-data",), "image"
        else:
            rendered = seeds.render(node, family, site, boot, opts)
            validated, kind = profiles.SEED_FILES[family], family
        for fname, text in rendered.items():
            path = "hosts/%s/%s" % (node["name"], fname)
            files[path] = text
            if fname in validated:  # what an installer's (or cloud-init's) own validator reads
                seed_families[path] = (kind, str(profile.get("version", "")))
                seed_values[path] = node_values(node, site)
    if problems:
        raise ProblemsError(problems)
    profiles.verify_copies(list(copies.values()))  # the controller's files against the fleet's digests
    keys = ("mode", "interfaces", "listen_address", "tftp_root", "lease_time", "dns_servers", "log_dhcp", "extra")
    config = dnsmasq.render(site, kept, dict({k: opts[k] for k in keys}, http_base=base))
    deploy_ramdisk = any(boots[n["os"]]["deploy_ramdisk"] for n in kept)
    return {"dnsmasq": config, "files": files, "copies": sorted(copies.values(), key=lambda c: c["path"]),
            "deploy_ramdisk": deploy_ramdisk, "vmedia": vmedia,
            "seeds": seed_families, "seed_values": seed_values, "nodes": [n["name"] for n in kept]}


def node_values(node: dict[str, Any], site: dict[str, Any]) -> tuple[str, ...]:
    """What differs between two nodes' seeds of one profile: values the fleet model has validated
    (name, FQDN, address, MAC), longest first so that a value inside another is replaced after it."""
    values = {"%s.%s" % (node["name"], site["domain"]), node["name"], node["ip"], node["mac"],
              node["mac"].replace(":", "")}
    return tuple(sorted(values, key=len, reverse=True))
