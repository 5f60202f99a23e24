#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: pxe_render
short_description: Render and validate everything a PXE boot server serves for a fleet
version_added: 0.1.0
description:
  - Renders, from the fleet model, the dnsmasq configuration (a DHCP reservation per node, TFTP,
    iPXE chainloading with option 175), a per-host iPXE script and the unattended-install seed of
    every node (Ubuntu autoinstall, kickstart for Rocky/RHEL, Debian preseed), and writes them
    under O(dest).
  - Every seed is validated before anything is written; invalid seeds fail the module with every
    problem listed. Ubuntu user-data is checked with cloud-init's own schema, kickstart with
    pykickstart (what C(ksvalidator) runs), preseed with debconf syntax rules and the answers an
    unattended install needs.
  - Runs on the controller (delegated to C(localhost)); the role M(gpucloud.baremetal.pxe_server)
    copies the result to the boot server and checks the dnsmasq file with C(dnsmasq --test) there.
  - A profile's kernel or initrd on the controller with C(kernel_sha256)/C(initrd_sha256) is checked against
    that digest before the module returns (a mismatch fails naming the profile key, the file and both digests);
    one given by URL with a digest is returned in RV(copies) with its C(url), for the boot server to fetch and
    check, and the iPXE script names the boot server's copy.
  - A node of an OS profile of C(kind=image) boots the deploy ramdisk (the profile's C(kernel) and C(initrd), or
    the one the boot server builds, under C(deploy/)) with C(gpucloud.deploy=) the URL of its C(deploy.sh) and
    C(gpucloud.mac=) its MAC, rendered with its cloud-init NoCloud seed
    (C(meta-data), C(user-data), C(network-config)); the image is always served by the boot server, after the
    check against C(image_sha256).
author:
  - gpucloud.baremetal contributors (@gpucloud)
options:
  site:
    description: The fleet's site (C(gpucloud_site) of the C(gpucloud.baremetal.fleet) inventory).
    type: dict
    required: true
  nodes:
    description:
      - The nodes to serve (C(gpucloud_pxe_nodes) of the PXE server), each with C(name), C(mac),
        C(ip) and C(os) (an OS profile of O(site)), and optionally C(root_device), the node's root device
        hints (else its OS profile's apply; without any, the smallest non-removable disk of at least 32 GiB),
        and C(boot_target) (the fleet's C(bmc.boot_target); V(Cd), virtual media, needs an image profile whose
        kernel and initrd this boot server serves, see RV(vmedia)).
      - Each seed chooses the root disk on the node before partitioning and stops the install, listing the
        disks found, when no disk or more than one matches.
    type: list
    elements: dict
    required: true
  dest:
    description:
      - Folder to write into; C(dnsmasq.conf) and C(http/) (the HTTP root's C(hosts/) files), or
        with O(archive) C(boot-files.tar.gz), are written there. Files are rewritten only when their
        content changes.
    type: path
    required: true
  tftp_root:
    description: Folder on the boot server that dnsmasq serves over TFTP (iPXE binaries).
    type: str
    default: /srv/gpucloud/tftp
  http_base:
    description: Base URL of the HTTP boot server; default C(http://<pxe_server>:<http_port>) from O(site).
    type: str
  dhcp_mode:
    description:
      - V(range) serves the site's C(dhcp_range) to unknown machines (no boot file) and a reservation
        to each node; V(static) serves reservations only; V(proxy) leaves addresses to the site's
        own DHCP server and answers PXE only.
    type: str
    default: range
    choices: [range, static, proxy]
  interfaces:
    description: Interfaces dnsmasq serves DHCP and TFTP on, besides O(listen_address)'s; empty for none named.
    type: list
    elements: str
    default: []
  listen_address:
    description:
      - The boot server's IPv4 address; dnsmasq serves DHCP and TFTP only on the interface that holds it
        (C(listen-address) and C(bind-dynamic)), not on the host's other networks.
      - Empty, with no O(interfaces) - every interface.
    type: str
    default: ""
  dns_servers:
    description:
      - DNS servers the DHCP answers name (option 6). Installers ask for one when DHCP gives none,
        which would stop an unattended install.
    type: list
    elements: str
    default: []
  dnsmasq_options:
    description: Extra dnsmasq options, one C(name[=value]) per item, appended to the configuration.
    type: list
    elements: str
    default: []
  lease_time:
    description: DHCP lease time (dnsmasq syntax, e.g. C(12h)).
    type: str
    default: 12h
  console:
    description: Console arguments for the installer kernel (e.g. C(console=ttyS0,115200n8)).
    type: str
    default: ""
  admin_user:
    description: The administrator account the seeds create (SSH keys, passwordless sudo, no password).
    type: str
    default: gpucloud
  ssh_authorized_keys:
    description: Public keys of O(admin_user).
    type: list
    elements: str
    default: []
  phone_home_url:
    description:
      - URL the installed machine posts its host keys and name to when the install is done;
        C({name}) is replaced by the node name. Empty for none.
    type: str
    default: ""
  absent_nodes:
    description: Nodes to leave out (being decommissioned), by name.
    type: list
    elements: str
    default: []
  archive:
    description:
      - Write the HTTP root's C(hosts/) files as one archive, C(boot-files.tar.gz) under O(dest)
        (deterministic, the same files give the same bytes) instead of one file each under C(http/);
        M(gpucloud.baremetal.pxe_boot_files) serves it on the boot server.
    type: bool
    default: false
  validate:
    description: Validate the seeds (turn off only to measure rendering alone).
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Renders and validates every file, writes nothing; C(changed) says whether O(dest) would change.
  diff_mode:
    support: none
    description: M(gpucloud.baremetal.pxe_boot_files) on the boot server names each file that differs.
  platform:
    support: full
    platforms: posix
    description: Runs on the controller, which has the validators (cloud-init, pykickstart).
requirements:
  - cloud-init (Debian package) on the controller when a node has an Ubuntu profile
  - pykickstart (Python) on the controller when a node has a Rocky or RHEL profile
"""

EXAMPLES = r"""
- name: Render the boot server's files into a staging folder on the controller
  gpucloud.baremetal.pxe_render:
    site: "{{ gpucloud_site }}"
    nodes: "{{ gpucloud_pxe_nodes }}"
    dest: /tmp/pxe-stage
    ssh_authorized_keys: ["ssh-ed25519 AAAAC3Nza... ops@example"]
  delegate_to: localhost
"""

RETURN = r"""
nodes:
  description: Names of the nodes served.
  returned: always
  type: list
  elements: str
files:
  description: Paths written or to be written, relative to O(dest)
  returned: always
  type: list
  elements: str
copies:
  description:
    - Kernels and initrds the boot server serves itself, each with C(path) (under the HTTP root), C(sha256) (the
      fleet's digest, or empty) and C(key) (the profile key that names it), and either C(src) (a file on the
      controller, checked against C(sha256) before the module returns) or C(url) (to fetch on the boot server and
      check against C(sha256) there).
    - A qcow2 image of an image profile also has C(convert) (C(format) V(qcow2) and C(path), where the boot server
      writes its conversion to C(raw.zst), with C(<path>.sha256), the digest the deploy ramdisk checks against).
  returned: always
  type: list
  elements: dict
deploy_ramdisk:
  description:
    - Whether a node served deploys an image (OS profile C(kind=image)) with the deploy ramdisk that the boot
      server builds (a profile without a C(kernel) and C(initrd) of its own); the role builds it then.
  returned: always
  type: bool
vmedia:
  description:
    - One entry per node booted by virtual media (C(boot_target=Cd)), with C(name), C(kernel) and C(initrd) (paths
      under the HTTP root) and C(cmdline), the kernel command line (the iPXE script's, with the node's static address
      C(gpucloud.ip=) and gateway C(gpucloud.gw=)). The role builds C(vmedia/<name>.iso) from it, which the node's
      BMC inserts (Redfish C(VirtualMedia.InsertMedia)). It holds no secret (the install's token is in the seed).
  returned: always
  type: list
  elements: dict
manifest:
  description: Every C(hosts/) file, relative to C(hosts/), -> the SHA-256 of its content.
  returned: always
  type: dict
seeds:
  description: Number of seeds rendered and validated.
  returned: always
  type: int
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import bootfiles, tree, validate
from ansible_collections.gpucloud.baremetal.plugins.module_utils._runner import run_module

ARCHIVE = "boot-files.tar.gz"


def _write(path: str, content: str, dry: bool) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.read() == content:
                return False
    except OSError:
        pass
    if dry:
        return True
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(content)
    os.replace(tmp, path)
    return True


SPEC = {
    "site": {"type": "dict", "required": True},
    "nodes": {"type": "list", "elements": "dict", "required": True},
    "dest": {"type": "path", "required": True},
    "tftp_root": {"type": "str", "default": "/srv/gpucloud/tftp"},
    "http_base": {"type": "str"},
    "dhcp_mode": {"type": "str", "default": "range", "choices": ["range", "static", "proxy"]},
    "interfaces": {"type": "list", "elements": "str", "default": []},
    "listen_address": {"type": "str", "default": ""},
    "dns_servers": {"type": "list", "elements": "str", "default": []},
    "dnsmasq_options": {"type": "list", "elements": "str", "default": []},
    "lease_time": {"type": "str", "default": "12h"},
    "console": {"type": "str", "default": ""},
    "admin_user": {"type": "str", "default": "gpucloud"},
    "ssh_authorized_keys": {"type": "list", "elements": "str", "default": [], "no_log": False},
    "phone_home_url": {"type": "str", "default": ""},
    "absent_nodes": {"type": "list", "elements": "str", "default": []},
    "archive": {"type": "bool", "default": False},
    "validate": {"type": "bool", "default": True},
}


def run(module: AnsibleModule) -> dict:
    p = module.params
    options = {
        "tftp_root": p["tftp_root"], "http_base": p["http_base"], "mode": p["dhcp_mode"],
        "interfaces": p["interfaces"], "listen_address": p["listen_address"], "dns_servers": p["dns_servers"],
        "extra": p["dnsmasq_options"],
        "lease_time": p["lease_time"],
        "console": p["console"], "admin_user": p["admin_user"], "ssh_keys": p["ssh_authorized_keys"],
        "phone_home_url": p["phone_home_url"], "absent": p["absent_nodes"],
    }
    rendered = tree.render(p["site"], p["nodes"], options)
    if p["validate"]:
        problems = validate.seeds(rendered["files"], rendered["seeds"], rendered["seed_values"])
        if problems:
            summary = "; ".join(validate.summary(problems))
            return {"failed": True, "msg": "seeds are invalid (%d problems): %s" % (len(problems), summary),
                    "problems": problems}
    paths = {"dnsmasq.conf": rendered["dnsmasq"]}
    hosts = {path[len("hosts/"):]: text for path, text in rendered["files"].items() if path.startswith("hosts/")}
    if not p["archive"]:
        paths.update({"http/" + path: text for path, text in rendered["files"].items()})
    changed = False
    for path, text in paths.items():
        changed = _write(os.path.join(p["dest"], path), text, module.check_mode) or changed
    if p["archive"]:
        archive = os.path.join(p["dest"], ARCHIVE)
        if module.check_mode:
            changed = changed or not os.path.exists(archive)
        else:
            changed = bootfiles.archive(hosts, archive) or changed
        paths[ARCHIVE] = ""
    return {"changed": changed, "nodes": rendered["nodes"], "files": sorted(paths), "copies": rendered["copies"],
            "seeds": len(rendered["seeds"]), "manifest": bootfiles.manifest(hosts),
            "deploy_ramdisk": rendered["deploy_ramdisk"], "vmedia": rendered["vmedia"]}


def main() -> None:
    run_module(SPEC, run)


if __name__ == "__main__":
    main()
