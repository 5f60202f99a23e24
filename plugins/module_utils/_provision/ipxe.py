# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-host iPXE script: the installer kernel and initrd of the node's OS profile, with the
kernel command line that makes the installer fetch the node's seed from the HTTP server."""

from __future__ import annotations

from typing import Any

from .seeds import prefixlen


def seed_base(http_base: str, name: str) -> str:
    return "%s/hosts/%s/" % (http_base, name)


def kernel_args(node: dict[str, Any], family: str, boot: dict[str, Any], site: dict[str, Any], http_base: str,
                console: str) -> str:
    seeds = seed_base(http_base, node["name"])
    if boot.get("image_kind"):  # kind image: the deploy ramdisk fetches and runs the node's deploy.sh
        args = ["gpucloud.deploy=%sdeploy.sh" % seeds, "gpucloud.mac=%s" % node["mac"]]
    elif family == "debian":
        args = [
            "auto=true",
            "priority=critical",
            "url=%spreseed.cfg" % seeds,
            "interface=auto",
            "hostname=%s" % node["name"],
            "domain=%s" % site["domain"],
        ]
    elif family == "ubuntu":
        args = ["ip=dhcp", "url=%s" % boot["image"], "autoinstall", "ds=nocloud-net;s=%s" % seeds,
                "cloud-config-url=/dev/null"]
    else:  # rocky, rhel
        args = ["ip=dhcp", "inst.repo=%s" % boot["image"], "inst.ks=%sks.cfg" % seeds]
    return " ".join(["initrd=initrd"] + args + ([console] if console else []))


def vmedia(node: dict[str, Any], boot: dict[str, Any], site: dict[str, Any], http_base: str,
           console: str) -> dict[str, str]:
    """What the boot server builds a node's virtual media deploy ISO from (bmc.boot_target Cd, an image profile):
    ``kernel`` and ``initrd`` (paths under its HTTP root: the ISO holds the files this server serves) and the
    kernel command line. That line is the iPXE script's, less ``initrd=`` (the ISO's boot program hands the
    kernel its initrd) and with the node's static address and gateway from the fleet (``gpucloud.ip=``,
    ``gpucloud.gw=``): a site that boots by virtual media may have no DHCP on its provisioning network.
    Raises ValueError naming the profile key when the kernel or initrd is not served by this boot server."""
    prefix = http_base.rstrip("/") + "/"
    paths = {}
    for key in ("kernel", "initrd"):
        if not boot[key].startswith(prefix):
            raise ValueError("site.os_profiles.%s.%s: %s is not served by the boot server (%s), so it cannot go onto "
                             "the node's virtual media ISO; give its %s_sha256 (the boot server fetches and checks "
                             "it) or leave it out (the deploy ramdisk the boot server builds)"
                             % (node["os"], key, boot[key], prefix, key))
        paths[key] = boot[key][len(prefix):]
    mgmt = site["management"]
    static = ["gpucloud.ip=%s/%d" % (node["ip"], prefixlen(site)), "gpucloud.gw=%s" % mgmt["gateway"]]
    args = kernel_args(node, "", boot, site, http_base, console).split()
    return dict(paths, cmdline=" ".join([a for a in args if a != "initrd=initrd"] + static))


def render(node: dict[str, Any], family: str, boot: dict[str, Any], site: dict[str, Any], http_base: str,
           console: str = "") -> str:
    return "\n".join([
        "#!ipxe",
        "# Managed by gpucloud.baremetal (role pxe_server): %s, OS profile %s" % (node["name"], node["os"]),
        "echo gpucloud: %s %s (%s)" % ("deploying" if boot.get("image_kind") else "installing", node["name"],
                                       node["os"]),
        "kernel --name linux %s %s || goto failed"
        % (boot["kernel"], kernel_args(node, family, boot, site, http_base, console)),
        "initrd --name initrd %s || goto failed" % boot["initrd"],
        "boot || goto failed",
        ":failed",
        "echo gpucloud: boot of %s failed; retrying in 10 s" % node["name"],
        "sleep 10",
        "reboot",
        "",
    ])
