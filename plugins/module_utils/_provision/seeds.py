# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unattended-install seeds per OS family, from the fleet model.

- ubuntu: autoinstall as cloud-init NoCloud ``user-data`` + ``meta-data`` (YAML, written as JSON):
  disk layout, the admin user with its SSH keys, static network from the model, a phone-home with the host keys);
- rocky / rhel: a kickstart ``ks.cfg`` (the same choices in kickstart commands);
- debian: a preseed ``preseed.cfg`` for debian-installer.

``options``: ``admin_user``, ``ssh_keys`` (list), ``phone_home_url`` (``{name}`` is replaced
by the node name; empty for none), ``timezone``.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit


def _dump(data: Any) -> str:
    """YAML as its JSON subset: what cloud-init and the installer read, a hundred times faster to
    write than PyYAML's dumper (5,000 seeds), and no value can change type on the way."""
    return json.dumps(data, indent=2) + "\n"


def _prefixlen(site: dict[str, Any]) -> int:
    return int(site["management"]["subnet"].split("/")[1])


def _phone_home(options: dict[str, Any], node: dict[str, Any]) -> str:
    url = options.get("phone_home_url") or ""
    return url.replace("{name}", node["name"])


def _phone_home_curl(node: dict[str, Any], site: dict[str, Any], url: str) -> str:
    """The shell command that posts what cloud-init's phone_home posts (form fields pub_key_rsa,
    pub_key_ecdsa, pub_key_ed25519, instance_id, hostname, fqdn); a key file that is missing posts
    an empty field, which the receiver skips."""
    keys = " ".join('--data-urlencode "pub_key_%s=$(cat /etc/ssh/ssh_host_%s_key.pub 2>/dev/null)"' % (t, t)
                    for t in ("rsa", "ecdsa", "ed25519"))
    return ("curl -fsS -X POST %s --data-urlencode instance_id=%s --data-urlencode hostname=%s "
            "--data-urlencode fqdn=%s.%s %s" % (keys, node["name"], node["name"], node["name"], site["domain"], url))


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
        "storage": {"layout": {"name": "lvm"}},
        "network": {"version": 2, "ethernets": {"pxe": {
            "match": {"macaddress": node["mac"]}, "set-name": "pxe0",
            "addresses": ["%s/%d" % (node["ip"], _prefixlen(site))],
            "routes": [{"to": "default", "via": mgmt["gateway"]}],
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
        "network --device=%s --bootproto=static --ip=%s --netmask=%s --gateway=%s --hostname=%s.%s --activate"
        % (node["mac"], node["ip"], mgmt["netmask"], mgmt["gateway"], node["name"], site["domain"]),
        "rootpw --lock",
        "user --name=%s --groups=wheel --lock" % user,
    ]
    lines += ['sshkey --username=%s "%s"' % (user, key) for key in options.get("ssh_keys") or []]
    lines += [
        "zerombr",
        "clearpart --all --initlabel",
        "autopart --type=lvm",
        "bootloader --location=mbr",
        "firstboot --disabled",
        "services --enabled=sshd",
        "reboot",
        "",
        "%packages",
        "@^minimal-environment",
        "curl",
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


def preseed(node: Node, site: Node, boot: Node, options: Node) -> dict[str, str]:
    mirror = urlsplit(boot["image"])
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
    answers = [
        ("d-i", "debian-installer/locale", "string", "en_US.UTF-8"),
        ("d-i", "keyboard-configuration/xkb-keymap", "select", "us"),
        ("d-i", "netcfg/choose_interface", "select", "auto"),
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
        ("d-i", "partman-auto/method", "string", "lvm"),
        ("d-i", "partman-auto/choose_recipe", "select", "atomic"),
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
        ("d-i", "preseed/late_command", "string", "; ".join(late)),
        ("d-i", "finish-install/reboot_in_progress", "note", ""),
    ]
    head = "# Managed by gpucloud.baremetal (role pxe_server): %s" % node["name"]
    body = ["%s %s %s %s" % a if a[3] else "%s %s %s" % a[:3] for a in answers]
    return {"preseed.cfg": "\n".join([head, *body]) + "\n"}


RENDERERS = {"ubuntu": ubuntu, "rocky": kickstart, "rhel": kickstart, "debian": preseed}


def render(node: dict[str, Any], family: str, site: dict[str, Any], boot: dict[str, Any],
           options: dict[str, Any]) -> dict[str, str]:
    """File name -> content of the node's seed."""
    return RENDERERS[family](node, site, boot, options)
