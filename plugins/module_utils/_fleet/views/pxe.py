# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PXE view: what the PXE server needs of every node (reservation and boot profile)."""

from __future__ import annotations


def pxe_nodes(model: dict) -> list[dict]:
    """One entry per node: name, MAC, management IP and OS profile name, in fleet order; and the node's own
    root device hints where it has them (else its profile's apply); ``boot_target`` for a node that boots by
    UEFI HTTP (the boot server must answer HTTP boot clients)."""
    out = []
    for n in model["nodes"]:
        entry = {"name": n["name"], "mac": n["mac"], "ip": n["ip"], "os": n["os"]}
        if n.get("root_device"):
            entry["root_device"] = n["root_device"]
        if n["bmc"].get("boot_target", "Pxe") != "Pxe":
            entry["boot_target"] = n["bmc"]["boot_target"]
        out.append(entry)
    return out
