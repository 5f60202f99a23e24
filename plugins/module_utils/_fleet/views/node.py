# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node view: a node's own variables, its BMC apart, and how every node is reached over SSH."""

from __future__ import annotations

from typing import Any


def node_vars(node: dict) -> dict[str, Any]:
    """A node's host variables: ``gpucloud_node`` (everything but its BMC, so that passing a node entry
    around never passes a BMC password) and ``gpucloud_bmc`` (where the fleet gives a BMC)."""
    out: dict[str, Any] = {"gpucloud_node": {k: v for k, v in node.items() if k != "bmc"}}
    if node.get("bmc"):
        out["gpucloud_bmc"] = node["bmc"]
    return out


def node_ssh_vars(site: dict) -> dict[str, object]:
    """Group variables of the nodes: SSH checks every node's host key against the known_hosts file its
    phone-home record fills (``site.ssh_known_hosts``, kept by the role os_install), and no other file.

    ``ansible_ssh_host_key_checking`` is set as a variable because a variable outranks the environment:
    ansible-runner (and so AWX, which runs jobs through it) exports ``ANSIBLE_HOST_KEY_CHECKING=False``
    unless told otherwise, and the ssh plugin then puts ``-o StrictHostKeyChecking=no`` before these
    arguments, where OpenSSH takes the first value given for an option."""
    path = site["ssh_known_hosts"]
    return {
        "ansible_ssh_host_key_checking": True,
        "ansible_ssh_common_args": "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s"
        " -o GlobalKnownHostsFile=/dev/null" % path,
        "os_install_known_hosts": path,
    }
