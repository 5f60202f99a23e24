# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-host iPXE script: the installer kernel and initrd of the node's OS profile, with the
kernel command line that makes the installer fetch the node's seed from the HTTP server."""

from __future__ import annotations

from typing import Any


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
