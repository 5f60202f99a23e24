# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unattended-install seeds per OS family, from the fleet model.

- ubuntu: autoinstall as cloud-init NoCloud ``user-data`` + ``meta-data`` (YAML, written as JSON):
  disk layout, the admin user with its SSH keys, static network from the model, a phone-home with the host keys);
- rocky / rhel: a kickstart ``ks.cfg`` (the same choices in kickstart commands);
- debian: a preseed ``preseed.cfg`` for debian-installer, and ``root-disk.sh`` that it fetches.

Every seed: the node's static address, gateway and the site's nameservers; the root disk chosen on the
node from the root device hints (``rootdisk``) before partitioning, and only that disk partitioned
(kickstart ``ignoredisk --only-use`` + ``clearpart --drives``, autoinstall ``match``, d-i
``partman-auto/disk``); no swap (kubeadm's preflight check; FACTS.md: every installer makes swap unless
told not to); a GPT layout with an EFI system partition and a BIOS boot partition, so UEFI and BIOS both
boot.

``options``: ``admin_user``, ``ssh_keys`` (list), ``phone_home_url`` (``{name}`` is replaced
by the node name; empty for none), ``timezone``.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from . import rootdisk

ROOT_DISK_SCRIPT = "root-disk.sh"
_DISK_PLACEHOLDER = "__GPUCLOUD_ROOT_DISK__"


def _dump(data: Any) -> str:
    """YAML as its JSON subset: what cloud-init and the installer read, a hundred times faster to
    write than PyYAML's dumper (5,000 seeds), and no value can change type on the way."""
    return json.dumps(data, indent=2) + "\n"


def prefixlen(site: dict[str, Any]) -> int:
    """The management subnet's prefix length (the fleet model validated the subnet)."""
    return int(site["management"]["subnet"].split("/")[1])


def _nameservers(site: dict[str, Any]) -> list[str]:
    mgmt = site["management"]
    return list(mgmt.get("nameservers") or [mgmt["gateway"]])


def _disk_script(node: dict[str, Any]) -> str:
    return rootdisk.script(node["name"], node.get("root_device") or {})


# Where each install's one-time phone-home token goes: the boot server's nginx puts the token that role os_install
# made when it marked the node in its place as it serves the seed (sub_filter); the seed itself stays the same
# from install to install, so rendering stays idempotent and the token never sits in a rendered file.
TOKEN_SLOT = "__GPUCLOUD_PHONE_HOME_TOKEN__"


def _phone_home(options: dict[str, Any], node: dict[str, Any]) -> str:
    url = options.get("phone_home_url") or ""
    if not url:
        return ""
    url = url.replace("{name}", node["name"])
    return "%s%stoken=%s" % (url, "&" if "?" in url else "?", TOKEN_SLOT)


def _phone_home_curl(node: dict[str, Any], site: dict[str, Any], url: str) -> str:
    """The shell command that posts what cloud-init's phone_home posts (form fields pub_key_rsa,
    pub_key_ecdsa, pub_key_ed25519, instance_id, hostname, fqdn); a key file that is missing posts
    an empty field, which the receiver skips."""
    keys = " ".join('--data-urlencode "pub_key_%s=$(cat /etc/ssh/ssh_host_%s_key.pub 2>/dev/null)"' % (t, t)
                    for t in ("rsa", "ecdsa", "ed25519"))
    return ("curl -fsS -X POST %s --data-urlencode instance_id=%s --data-urlencode hostname=%s "
            "--data-urlencode fqdn=%s.%s \"%s\"" % (keys, node["name"], node["name"], node["name"], site["domain"],
                                                    url))


Node = dict[str, Any]


def ubuntu(node: Node, site: Node, boot: Node, options: Node) -> dict[str, str]:
    mgmt, keys, user = site["management"], list(options.get("ssh_keys") or []), options["admin_user"]
    user_data: dict[str, Any] = {
        "hostname": node["name"],
        "fqdn": "%s.%s" % (node["name"], site["domain"]),
        "users": [{
            "name": user, "groups": ["sudo"], "shell": "/bin/bash", "lock_passwd": True,
            "sudo": "ALL=(ALL) NOPASSWD:ALL", "ssh_authorized_keys": keys,
        }],
        "ssh_pwauth": False,
        "timezone": options.get("timezone", "UTC"),
    }
    phone_home = _phone_home(options, node)
    if phone_home:
        user_data["phone_home"] = {"url": phone_home, "tries": 10,
                                   "post": ["pub_key_ecdsa", "pub_key_ed25519", "pub_key_rsa", "instance_id",
                                            "hostname", "fqdn"]}
    autoinstall = {
        "version": 1,
        "locale": "en_US.UTF-8",
        "keyboard": {"layout": "us"},
        "refresh-installer": {"update": False},
        # The root disk is chosen on the node before storage is probed; subiquity reads /autoinstall.yaml
        # again after the early commands, so the chosen path replaces the placeholder of ``match``.
        "early-commands": [
            _disk_script(node),
            'sed -i "s|%s|$(cat %s)|g" /autoinstall.yaml' % (_DISK_PLACEHOLDER, rootdisk.OUTPUT),
        ],
        "storage": {"layout": {"name": "lvm", "match": {"path": _DISK_PLACEHOLDER}}, "swap": {"size": 0}},
        "network": {"version": 2, "ethernets": {"pxe": {
            "match": {"macaddress": node["mac"]}, "set-name": "pxe0",
            "addresses": ["%s/%d" % (node["ip"], prefixlen(site))],
            "routes": [{"to": "default", "via": mgmt["gateway"]}],
            "nameservers": {"addresses": _nameservers(site), "search": [site["domain"]]},
        }}},
        "ssh": {"install-server": True, "allow-pw": False, "authorized-keys": keys},
        "user-data": user_data,
        "shutdown": "reboot",
    }
    meta = {"instance-id": "%s-%s" % (node["name"], node["mac"].replace(":", "")), "local-hostname": node["name"]}
    return {"user-data": "#cloud-config\n" + _dump({"autoinstall": autoinstall}), "meta-data": _dump(meta)}


def kickstart(node: Node, site: Node, boot: Node, options: Node) -> dict[str, str]:
    mgmt, user = site["management"], options["admin_user"]
    lines = [
        "# Managed by gpucloud.baremetal (role pxe_server): %s" % node["name"],
        "text",
        "url --url=%s" % boot["image"],
        "lang en_US.UTF-8",
        "keyboard us",
        "timezone %s --utc" % options.get("timezone", "UTC"),
        "network --device=%s --bootproto=static --ip=%s --netmask=%s --gateway=%s --nameserver=%s "
        "--hostname=%s.%s --activate"
        % (node["mac"], node["ip"], mgmt["netmask"], mgmt["gateway"], ",".join(_nameservers(site)), node["name"],
           site["domain"]),
        "rootpw --lock",
        "user --name=%s --groups=wheel --lock" % user,
    ]
    lines += ['sshkey --username=%s "%s"' % (user, key) for key in options.get("ssh_keys") or []]
    lines += [
        "zerombr",
        # ignoredisk/clearpart/bootloader name the disk %pre chose: no other disk is seen or touched.
        "%include /tmp/gpucloud-disk.ks",
        "autopart --type=lvm --noswap",
        "firstboot --disabled",
        "services --enabled=sshd",
        "reboot",
        "",
        "%packages",
        "@^minimal-environment",
        "curl",
        "%end",
        "",
        "%pre --erroronfail --log=/tmp/gpucloud-root-disk.log",
        *_disk_script(node).splitlines(),
        "disk=$(cat %s)" % rootdisk.OUTPUT,
        "disk=${disk#/dev/}",
        "printf 'ignoredisk --only-use=%s\\nclearpart --all --initlabel --drives=%s\\nbootloader --boot-drive=%s\\n' "
        '"$disk" "$disk" "$disk" > /tmp/gpucloud-disk.ks',
        "%end",
        "",
        "%post --erroronfail",
        "echo '%s ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/%s" % (user, user),
        "chmod 0440 /etc/sudoers.d/%s" % user,
    ]
    phone_home = _phone_home(options, node)
    if phone_home:
        # sshd-keygen makes the host keys on first boot; make them now, so that the post has them.
        lines += ["ssh-keygen -A", "%s || true" % _phone_home_curl(node, site, phone_home)]
    lines += ["%end", ""]
    return {"ks.cfg": "\n".join(lines)}


# One GPT layout for UEFI and BIOS (d-i's partman-auto-recipe.txt format): a BIOS boot partition, an EFI
# system partition, /boot, and the rest for LVM with / on it; no swap.
PARTMAN_RECIPE = (
    "gpucloud :: "
    "1 1 1 free $bios_boot{ } method{ biosgrub } . "
    "538 538 1075 free $iflabel{ gpt } $reusemethod{ } method{ efi } format{ } . "
    "1024 1024 1024 ext4 $primary{ } $bootable{ } method{ format } format{ } use_filesystem{ } filesystem{ ext4 } "
    "mountpoint{ /boot } . "
    "20480 20480 -1 ext4 $lvmok{ } lv_name{ root } method{ format } format{ } use_filesystem{ } filesystem{ ext4 } "
    "mountpoint{ / } ."
)


def preseed(node: Node, site: Node, boot: Node, options: Node) -> dict[str, str]:
    mirror = urlsplit(boot["image"])
    mgmt = site["management"]
    user = options["admin_user"]
    keys = "\\n".join(options.get("ssh_keys") or [])
    late = [
        "in-target install -d -m 0700 -o 1000 -g 1000 /home/%s/.ssh" % user,
        "printf '%s\\n' > /target/home/%s/.ssh/authorized_keys" % (keys, user),
        "in-target chown 1000:1000 /home/%s/.ssh/authorized_keys" % user,
        "printf '%s ALL=(ALL) NOPASSWD:ALL\\n' > /target/etc/sudoers.d/%s" % (user, user),
    ]
    phone_home = _phone_home(options, node)
    if phone_home:
        late.append("in-target sh -c '%s || true'" % _phone_home_curl(node, site, phone_home))
    # The seed's directory holds root-disk.sh (preseed_fetch resolves it against the preseed's URL); the chosen
    # disk becomes partman's disk and GRUB's (BIOS) boot device.
    disk = ("preseed_fetch %s /tmp/gpucloud-root-disk.sh && sh /tmp/gpucloud-root-disk.sh && "
            'debconf-set partman-auto/disk "$(cat %s)" && debconf-set grub-installer/bootdev "$(cat %s)"'
            % (ROOT_DISK_SCRIPT, rootdisk.OUTPUT, rootdisk.OUTPUT))
    answers = [
        ("d-i", "debian-installer/locale", "string", "en_US.UTF-8"),
        ("d-i", "keyboard-configuration/xkb-keymap", "select", "us"),
        # A preseed fetched over the network comes after DHCP; netcfg runs again with the static answers below
        # (debian-installer's guide, B.4.2: "kill-all-dhcp; netcfg").
        ("d-i", "preseed/early_command", "string", "kill-all-dhcp; netcfg"),
        ("d-i", "netcfg/choose_interface", "select", "auto"),
        ("d-i", "netcfg/disable_autoconfig", "boolean", "true"),
        ("d-i", "netcfg/get_ipaddress", "string", node["ip"]),
        ("d-i", "netcfg/get_netmask", "string", mgmt["netmask"]),
        ("d-i", "netcfg/get_gateway", "string", mgmt["gateway"]),
        ("d-i", "netcfg/get_nameservers", "string", " ".join(_nameservers(site))),
        ("d-i", "netcfg/confirm_static", "boolean", "true"),
        ("d-i", "netcfg/get_hostname", "string", node["name"]),
        ("d-i", "netcfg/get_domain", "string", site["domain"]),
        ("d-i", "netcfg/hostname", "string", node["name"]),
        ("d-i", "mirror/country", "string", "manual"),
        ("d-i", "mirror/protocol", "string", mirror.scheme or "http"),
        ("d-i", "mirror/http/hostname", "string", mirror.netloc),
        ("d-i", "mirror/http/directory", "string", mirror.path or "/debian"),
        ("d-i", "mirror/http/proxy", "string", ""),
        ("d-i", "passwd/root-login", "boolean", "false"),
        ("d-i", "passwd/user-fullname", "string", "gpucloud admin"),
        ("d-i", "passwd/username", "string", user),
        ("d-i", "passwd/user-password-crypted", "password", "!"),
        ("d-i", "clock-setup/utc", "boolean", "true"),
        ("d-i", "time/zone", "string", options.get("timezone", "UTC")),
        ("d-i", "partman/early_command", "string", disk),
        ("d-i", "partman-auto/method", "string", "lvm"),
        ("d-i", "partman-auto-lvm/guided_size", "string", "max"),
        ("d-i", "partman-auto/expert_recipe", "string", PARTMAN_RECIPE),
        ("d-i", "partman-auto/choose_recipe", "select", "gpucloud"),
        ("d-i", "partman-basicfilesystems/no_swap", "boolean", "false"),
        ("d-i", "partman-efi/non_efi_system", "boolean", "true"),
        ("d-i", "partman-partitioning/choose_label", "string", "gpt"),
        ("d-i", "partman-partitioning/default_label", "string", "gpt"),
        ("d-i", "partman-lvm/device_remove_lvm", "boolean", "true"),
        ("d-i", "partman-lvm/confirm", "boolean", "true"),
        ("d-i", "partman-lvm/confirm_nooverwrite", "boolean", "true"),
        ("d-i", "partman-partitioning/confirm_write_new_label", "boolean", "true"),
        ("d-i", "partman/choose_partition", "select", "finish"),
        ("d-i", "partman/confirm", "boolean", "true"),
        ("d-i", "partman/confirm_nooverwrite", "boolean", "true"),
        ("tasksel", "tasksel/first", "multiselect", "standard, ssh-server"),
        ("d-i", "pkgsel/include", "string", "openssh-server python3 curl sudo"),
        ("popularity-contest", "popularity-contest/participate", "boolean", "false"),
        ("d-i", "grub-installer/only_debian", "boolean", "true"),
        ("d-i", "grub-installer/bootdev", "string", "default"),
        ("d-i", "grub-installer/force-efi-extra-removable", "boolean", "true"),
        ("d-i", "preseed/late_command", "string", "; ".join(late)),
        ("d-i", "finish-install/reboot_in_progress", "note", ""),
    ]
    head = "# Managed by gpucloud.baremetal (role pxe_server): %s" % node["name"]
    body = ["%s %s %s %s" % a if a[3] else "%s %s %s" % a[:3] for a in answers]
    return {"preseed.cfg": "\n".join([head, *body]) + "\n", ROOT_DISK_SCRIPT: _disk_script(node)}


RENDERERS = {"ubuntu": ubuntu, "rocky": kickstart, "rhel": kickstart, "debian": preseed}


def render(node: dict[str, Any], family: str, site: dict[str, Any], boot: dict[str, Any],
           options: dict[str, Any]) -> dict[str, str]:
    """File name -> content of the node's seed."""
    return RENDERERS[family](node, site, boot, options)
