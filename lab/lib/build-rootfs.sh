#!/usr/bin/env bash
# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
#
# Build the lab hosts' base root filesystem once with debootstrap.
# Usage: build-rootfs.sh PACKAGE_LIST DEST_DIR
set -euo pipefail

pkglist=$1
dest=$2
mirror=${GPUCLOUD_LAB_MIRROR:-http://deb.debian.org/debian}
suite=${GPUCLOUD_LAB_SUITE:-bookworm}
tmp="$dest.tmp"

include=$(grep -Ev '^\s*(#|$)' "$pkglist" | paste -sd, -)
rm -rf "$tmp"
echo "base rootfs: debootstrap $suite (about 1-2 minutes)"
debootstrap --variant=minbase --include="$include" "$suite" "$tmp" "$mirror" \
    >"$dest.log" 2>&1 || { tail -n 30 "$dest.log"; exit 1; }

echo "base rootfs: preparing for per-host overlays"
# Each host gets its own identity at start: machine-id, hostname, SSH host keys.
: >"$tmp/etc/machine-id"
rm -f "$tmp/etc/hostname" "$tmp"/etc/ssh/ssh_host_*
# Services the roles enable themselves; off in the base so idle hosts stay small.
for unit in dnsmasq.service nginx.service containerd.service prometheus.service \
            prometheus-alertmanager.service; do
    chroot "$tmp" systemctl disable "$unit" >/dev/null 2>&1 || true
done
# Units that cannot work in a container and only add noise.
for unit in systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer \
            e2scrub_all.timer fstrim.timer; do
    chroot "$tmp" systemctl mask "$unit" >/dev/null 2>&1 || true
done
# Without this every host writes ~69 MB of apt cache on its first apt task.
chroot "$tmp" apt-cache gencaches >/dev/null
chroot "$tmp" apt-get clean
mv "$tmp" "$dest"
echo "base rootfs: ready at $dest"
