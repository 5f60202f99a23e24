# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Image deploy (an OS profile of ``kind: image``): what the deploy ramdisk runs on a node, and the
cloud-init NoCloud seed it leaves on the node's root file system.

The deploy ramdisk (the profile's ``kernel`` and ``initrd``) boots with ``gpucloud.deploy=<URL of the node's
deploy.sh>`` on its command line, fetches that script and runs it with its busybox ``sh``. ``deploy.sh``:

1. chooses the root disk from the root device hints (``rootdisk.script``, the installers' rule);
2. fetches the image from the boot server into RAM and checks its SHA-256 against the fleet's (for an image
   the boot server converted, a qcow2: against the digest of the ``raw.zst`` it wrote, served next to it) and
   that it holds a GPT: a mismatch fails before anything is written (the boot server checked it too before
   serving it; this catches the transfer, and a qcow2 named raw);
3. fetches the node's seed (``meta-data``, ``user-data``, ``network-config``) and checks that the boot server
   put this install's phone-home token in it;
4. writes the image to the disk (``raw``, ``raw.gz``, ``raw.zst``), moves the GPT's backup header to the
   disk's end and grows the partition that ends last (the root partition of Debian, Ubuntu and Rocky cloud
   images) to the end of the disk; cloud-init's ``resize_rootfs`` grows its file system on first boot;
5. mounts that partition and writes the seed to ``/var/lib/cloud/seed/nocloud/`` (NoCloud's seed directory),
   with NoCloud as the only data source: a provisioning network has no metadata service, and probing for one
   costs minutes at first boot.

Every step says what it does on the console (``gpucloud: deploy of NAME: ...``) and reports it to the boot
server (a form post of ``step`` and ``detail`` to the node's phone-home URL with the install's token; ``STEPS``);
a failed step exits non-zero naming what failed, reports ``failed`` with that reason, and the ramdisk does not
reboot into a half-written disk. The deploy goes on only when the boot server took its ``started`` (it refuses
one after this install's ``done``), and the node reboots only when it took ``done`` (from then on its network
boots are answered with local-boot).

``GPUCLOUD_WORK`` (where the working folder is made, in RAM: ``/tmp``), ``GPUCLOUD_SYSFS`` and
``GPUCLOUD_DEVDIR`` (where the disks are looked up, as in ``rootdisk``) let the tests run the script against a
disk image here.
"""

from __future__ import annotations

import json
from typing import Any

from . import rootdisk, seeds

SCRIPT = "deploy.sh"
SEED_FILES = ("meta-data", "user-data", "network-config")
# The image formats the deploy ramdisk writes (the fleet's OS_IMAGE_FORMATS), and the command that turns each
# into the raw disk. The fleet model fills in a profile's image_format from the image's name.
FORMATS = {"raw": "cat", "raw.gz": "gzip -dc", "raw.zst": "zstd -dc"}
DATASOURCE_CFG = "99_gpucloud_datasource.cfg"
# The steps deploy.sh reports to the boot server's phone-home receiver (roles/pxe_server/files/phone_home.py
# STEPS: a unit test holds them equal). The receiver refuses a start after done: a network boot of a node whose
# image is written (it is still marked installing until it is registered) deploys nothing.
STEPS = ("started", "disk", "image", "written", "done", "failed")

_BODY = r"""
dev=${GPUCLOUD_DEVDIR:-/dev}
say() { echo "gpucloud: deploy of $node: $*" >&2; }
# Every byte percent-encoded: a form field's value, whatever the text.
urlencode() { printf %%s "$1" | od -An -v -tx1 | tr -d ' \n' | sed 's/\(..\)/%%\1/g'; }
# report STEP [DETAIL]: the step to the boot server's receiver (role pxe_server), with this install's token.
report() {
    [ -n "$step_url" ] || return 0
    data="step=$1"
    if [ $# -gt 1 ]; then
        detail=$(printf %%s "$2" | tr -c ' -~' ' ' | cut -c 1-500)
        [ -z "$detail" ] || data="$data&detail=$(urlencode "$detail")"
    fi
    wget -q -O /dev/null --post-data "$data" "$step_url"
}
fail() { say "FAILED: $*; nothing more is done"; report failed "$*" 2>/dev/null; exit 1; }
# A fresh folder each run (never rm -r of a folder a file system may still be mounted in).
work=$(mktemp -d "${GPUCLOUD_WORK:-/tmp}/gpucloud-deploy.XXXXXX") || fail "cannot make a working folder"
mkdir "$work/seed" "$work/root" || fail "cannot make the working folder $work"

# The boot server takes the start only while this install has not written its image: a network boot after
# that (the node is still marked installing until it is registered) deploys nothing.
report started "$image_name" 2>"$work/report.log" ||
    fail "the boot server did not take this deploy's start ($(tail -n 1 "$work/report.log")); the disk was not touched"

say "1/5 choosing the root disk"
root_disk "$work/root-disk" || fail "no root disk ($(cat "$work/root-disk.error" 2>/dev/null))"
disk=$dev/$(sed 's|^/dev/||' "$work/root-disk")
[ -b "$disk" ] || fail "the chosen root disk $disk is not a block device"
report disk "$disk" 2>/dev/null

say "2/5 fetching $image_url ($format)"
case $format in
    raw.zst) command -v zstd >/dev/null 2>&1 || fail "the deploy ramdisk has no zstd for a raw.zst image" ;;
esac
if [ -n "$image_sha256_url" ]; then
    # An image the boot server converted (a qcow2 checked against the fleet's digest): the digest of what it wrote.
    image_sha256=$(wget -q -O - "$image_sha256_url" | head -c 64) || image_sha256=
    case $image_sha256 in
        *[!0-9a-f]*|"") fail "the boot server serves no digest of the converted image at $image_sha256_url" ;;
    esac
    [ ${#image_sha256} -eq 64 ] || fail "the boot server serves no digest of the converted image at $image_sha256_url"
fi
wget -q -O "$work/image" "$image_url" || fail "cannot fetch $image_url"
got=$(sha256sum "$work/image" | cut -d ' ' -f 1)
[ "$got" = "$image_sha256" ] ||
    fail "the image fetched has SHA-256 $got, not $image_sha256 ($digest_of); $disk was not written"
# What the image holds, before the disk is touched: a GPT's signature in its second sector (the images' 512-byte
# sectors). A qcow2 (or any other container) named raw would otherwise be written over the disk.
magic=$({ %(decompress)s < "$work/image" 2>/dev/null; } | dd bs=512 skip=1 count=1 2>/dev/null | head -c 8)
if [ "$magic" != "EFI PART" ]; then
    head=$({ %(decompress)s < "$work/image" 2>/dev/null; } | head -c 4 | od -An -c | tr -s ' ' | sed 's/^ //')
    case $head in
        "Q F I 373") fail "the image is a qcow2 (it begins with QFI\\373), not %(format)s: set the profile's" \
                          "image_format: qcow2 (the boot server converts it); $disk was not written" ;;
        *) fail "the %(format)s image has no GPT (no 'EFI PART' in its second sector; it begins with: $head);" \
                "$disk was not written" ;;
    esac
fi
report image "SHA-256 checked: $got" 2>/dev/null

say "3/5 fetching the node's seed from $seed_url"
for f in meta-data user-data network-config; do
    wget -q -O "$work/seed/$f" "$seed_url$f" || fail "cannot fetch $seed_url$f"
done
# The placeholder in two pieces: the boot server replaces it wherever it is whole, in this script too.
if grep -q "%(token_head)s""%(token_tail)s" "$work/seed/user-data"; then
    fail "the boot server served the seed without this install's phone-home token (is the node marked installing?)"
fi

say "4/5 writing the image to $disk"
{ %(decompress)s < "$work/image" || echo failed > "$work/unpack.failed"; } |
    dd of="$disk" bs=4M conv=fsync 2>"$work/dd.log" || fail "writing $disk: $(tail -n 1 "$work/dd.log")"
[ ! -e "$work/unpack.failed" ] || fail "the %(format)s image does not unpack (%(decompress)s); $disk is half written"
rm -f "$work/image"
sync
sfdisk -d "$disk" > "$work/table" 2>"$work/sfdisk.log" ||
    fail "cannot read the partition table the image wrote ($(cat "$work/sfdisk.log"))"
grep -q '^label: gpt$' "$work/table" || fail "the image on $disk has no GPT ($(sed -n 's/^label: //p' "$work/table"))"
sfdisk -q --relocate gpt-bak-std "$disk" 2>"$work/sfdisk.log" ||
    fail "moving the GPT's backup header to the end of $disk: $(cat "$work/sfdisk.log")"
# The partition that ends last: sfdisk -d lines are "<device> : start= S, size= N, ...".
last=$(sed -n 's/^\([^ ]*\) : start= *\([0-9]*\), size= *\([0-9]*\),.*/\1 \2 \3/p' "$work/table" |
       awk 'BEGIN { e = -1 } { if ($2 + $3 > e) { e = $2 + $3; d = $1 } } END { print d }')
number=${last##*[!0-9]}
[ -n "$number" ] || fail "the image on $disk has no partition"
echo ', +' | sfdisk -q --no-reread --no-tell-kernel -N "$number" "$disk" 2>"$work/sfdisk.log" ||
    fail "growing partition $number of $disk: $(cat "$work/sfdisk.log")"
blockdev --rereadpt "$disk" 2>/dev/null || partprobe "$disk" 2>/dev/null || true
case ${disk##*/} in
    *[0-9]) part=${disk}p$number ;;
    *) part=$disk$number ;;
esac
i=0
while [ ! -b "$part" ] && [ "$i" -lt 20 ]; do sleep 0.5; i=$((i + 1)); done
[ -b "$part" ] || fail "the root partition $part did not appear"
report written "$disk, partition $number grown to the disk's end" 2>/dev/null

say "5/5 writing the seed to the root file system on $part"
mount "$part" "$work/root" || fail "cannot mount the root partition $part"
if ! { mkdir -p "$work/root/var/lib/cloud/seed/nocloud" "$work/root/etc/cloud/cloud.cfg.d" &&
       cp "$work/seed/meta-data" "$work/seed/user-data" "$work/seed/network-config" \
           "$work/root/var/lib/cloud/seed/nocloud/" &&
       chmod 0600 "$work/root/var/lib/cloud/seed/nocloud/user-data" &&
       printf '%%s\n' '# gpucloud.baremetal: the seed the deploy left here is the only data source' \
           'datasource_list: [NoCloud, None]' > "$work/root/etc/cloud/cloud.cfg.d/%(datasource_cfg)s"; }; then
    umount "$work/root"
    fail "cannot write the seed to $part"
fi
sync
umount "$work/root" || fail "cannot unmount $part"
# The boot server answers the node's network boots with local-boot from now on; unrecorded, a network boot
# would deploy again, so the node does not reboot.
# (quoted: shellcheck reads a bare done as the loop keyword)
report 'done' "$image_name on $disk" 2>"$work/report.log" ||
    fail "the image is on $disk, but the boot server did not record it ($(tail -n 1 "$work/report.log")): not rebooting"
say "done: $image_name on $disk; the node boots it next"
"""


def _quote(value: str) -> str:
    """One shell word; every value here is from the fleet model or rendered by us, never from a node."""
    return "'%s'" % value.replace("'", "'\"'\"'")


def script(node: dict[str, Any], boot: dict[str, Any], seed_url: str, step_url: str = "") -> str:
    """The node's ``deploy.sh`` (POSIX sh: busybox ash in the ramdisk). ``step_url``: where it reports its
    steps (the node's phone-home URL with the token placeholder, which the boot server fills in)."""
    fmt = boot["image_format"]
    disk = rootdisk.script(node["name"], node.get("root_device") or {})
    # The root-disk script as a function: its body runs as it does in every installer.
    body = disk.split("\n", 1)[1].replace("#!/bin/sh\n", "")
    head = "\n".join([
        "#!/bin/sh",
        "# gpucloud.baremetal: deploy an image to %s (role pxe_server; run by the deploy ramdisk)" % node["name"],
        "set -u",
        "node=%s" % _quote(node["name"]),
        "image_name=%s" % _quote(boot["image"].rsplit("/", 1)[-1]),
        "image_url=%s" % _quote(boot["image"]),
        "image_sha256=%s" % _quote(boot["image_sha256"]),
        "image_sha256_url=%s" % _quote(boot.get("image_sha256_url", "")),
        "digest_of=%s" % _quote("the boot server's, of the %s it converted from the fleet's image" % fmt
                                if boot.get("image_sha256_url") else "the fleet's"),
        "format=%s" % _quote(fmt),
        "seed_url=%s" % _quote(seed_url),
        "step_url=%s" % _quote(step_url),
        "root_disk() (",
        body.rstrip("\n"),
        ")",
    ])
    values = {"decompress": FORMATS[fmt], "format": fmt, "token_head": seeds.TOKEN_SLOT[:12],
              "token_tail": seeds.TOKEN_SLOT[12:], "datasource_cfg": DATASOURCE_CFG}
    return head + _BODY % values


def _dump(data: Any) -> str:
    return json.dumps(data, indent=2) + "\n"


def seed(node: dict[str, Any], site: dict[str, Any], options: dict[str, Any]) -> dict[str, str]:
    """The NoCloud seed the deployed OS boots with: ``meta-data``, ``user-data`` (cloud-config) and
    ``network-config`` (network config version 2: the fleet's static address, gateway, nameservers)."""
    mgmt, keys, user = site["management"], list(options.get("ssh_keys") or []), options["admin_user"]
    fqdn = "%s.%s" % (node["name"], site["domain"])
    user_data: dict[str, Any] = {
        "hostname": node["name"],
        "fqdn": fqdn,
        "prefer_fqdn_over_hostname": False,
        "manage_etc_hosts": True,
        "users": [{
            "name": user, "groups": ["sudo"], "shell": "/bin/bash", "lock_passwd": True,
            "sudo": "ALL=(ALL) NOPASSWD:ALL", "ssh_authorized_keys": keys,
        }],
        "disable_root": True,
        "ssh_pwauth": False,
        "timezone": options.get("timezone", "UTC"),
        # The root partition was grown by the deploy; its file system is grown here. No swap (kubeadm).
        "growpart": {"mode": "auto", "devices": ["/"]},
        "resize_rootfs": True,
        "swap": {"size": 0},
    }
    phone_home = seeds._phone_home(options, node)  # pylint: disable=protected-access
    if phone_home:
        user_data["phone_home"] = {"url": phone_home, "tries": 10,
                                   "post": ["pub_key_ecdsa", "pub_key_ed25519", "pub_key_rsa", "instance_id",
                                            "hostname", "fqdn"]}
        # The host keys cloud-init made at this boot are on the disk before they are posted (runcmd runs before
        # phone_home in the final stage): cloud-init writes them without a sync, and a power cycle soon after
        # registration left them empty on the lab's gpu4 (sshd then does not start, and the node is lost).
        user_data["runcmd"] = [["sync"]]
    # The NIC is found by its MAC and named as in the autoinstall seed (cloud-init renames it: a match without
    # set-name configures no device with the ifupdown and sysconfig renderers). The default route as
    # 0.0.0.0/0: cloud-init 22.4 (Debian 12) refuses "default" ("Address default is not a valid ip network").
    network = {"version": 2, "ethernets": {"pxe": {
        "match": {"macaddress": node["mac"]}, "set-name": "pxe0",
        "addresses": ["%s/%d" % (node["ip"], seeds.prefixlen(site))],
        "routes": [{"to": "0.0.0.0/0", "via": mgmt["gateway"]}],
        "nameservers": {"addresses": list(mgmt.get("nameservers") or [mgmt["gateway"]]), "search": [site["domain"]]},
    }}}
    meta = {"instance-id": "%s-%s" % (node["name"], node["mac"].replace(":", "")), "local-hostname": node["name"]}
    return {"meta-data": _dump(meta), "user-data": "#cloud-config\n" + _dump(user_data),
            "network-config": _dump(network)}


def render(node: dict[str, Any], site: dict[str, Any], boot: dict[str, Any], options: dict[str, Any],
           seed_url: str) -> dict[str, str]:
    """File name -> content under ``hosts/<name>/``: the seed and ``deploy.sh``."""
    step_url = seeds._phone_home(options, node)  # pylint: disable=protected-access
    return dict(seed(node, site, options), **{SCRIPT: script(node, boot, seed_url, step_url)})
