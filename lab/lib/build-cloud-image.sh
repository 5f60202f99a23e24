#!/usr/bin/env bash
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
#
# The lab's cloud image: a Debian 12 disk image shaped as Debian's genericcloud one, built offline from Debian's
# packages (the image mirror a site would have; the lab serves it). Debian's cloud kernel, cloud-init,
# openssh-server, ifupdown; GPT with an EFI system partition (15, first) holding a standalone GRUB as the removable
# path EFI/BOOT/BOOTX64.EFI, and the ext4 root (1, last, label cloudroot). No SSH host keys, no machine-id: each
# node makes its own at first boot. Nothing is mounted: the file systems are made from folders (mke2fs -d, mtools).
# Usage: build-cloud-image.sh DEST.raw.zst
set -euo pipefail
dest=$1
mirror=${GPUCLOUD_LAB_MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d "${dest}.build.XXXXXX")
root=$work/root
cleanup() {
    umount "$root/proc" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
log=$dest.log
packages="linux-image-cloud-amd64 cloud-init openssh-server ifupdown isc-dhcp-client sudo curl grub-efi-amd64-bin"
packages="$packages mtools dosfstools cloud-guest-utils iproute2"
echo "cloud image: debootstrap bookworm, then apt-get install $packages (a few minutes)"
debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus,udev bookworm "$root" "$mirror" >"$log" 2>&1 ||
    { tail -n 30 "$log"; exit 1; }
mount -t proc proc "$root/proc"
# shellcheck disable=SC2086 # one word per package
DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get install -y -q --no-install-recommends $packages >>"$log" 2>&1 ||
    { tail -n 30 "$log"; exit 1; }
umount "$root/proc"

# Each node's identity is its own: made at first boot.
: >"$root/etc/machine-id"
rm -f "$root"/etc/ssh/ssh_host_* "$root/etc/hostname"
printf 'LABEL=cloudroot / ext4 rw,discard,errors=remount-ro 0 1\n' >"$root/etc/fstab"
# Debian's genericcloud image sets these too (cloud.cfg.d): the serial console, no apt sources reached.
printf '# gpucloud-lab cloud image: no Debian mirror on the lab network\n' >"$root/etc/apt/sources.list"
chroot "$root" apt-get clean

# The boot loader: GRUB standalone (its configuration inside), the removable media path of the ESP.
cat >"$work/grub.cfg" <<'CFG'
set timeout=0
search --no-floppy --label --set=root cloudroot
linux /vmlinuz root=LABEL=cloudroot ro console=tty0 console=ttyS0,115200n8
initrd /initrd.img
boot
CFG
cp "$work/grub.cfg" "$root/tmp/grub.cfg"
chroot "$root" grub-mkstandalone -O x86_64-efi -o /tmp/BOOTX64.EFI --modules="part_gpt ext2 search_label" \
    "boot/grub/grub.cfg=/tmp/grub.cfg" >>"$log" 2>&1
esp=$work/esp.img
# The ESP is made inside the image's root with its own dosfstools and mtools, then moved out.
truncate -s 64M "$root/tmp/esp.img"
chroot "$root" mkfs.vfat -n ESP /tmp/esp.img >>"$log"
chroot "$root" mmd -i /tmp/esp.img ::/EFI ::/EFI/BOOT
chroot "$root" mcopy -i /tmp/esp.img /tmp/BOOTX64.EFI ::/EFI/BOOT/BOOTX64.EFI
mv "$root/tmp/esp.img" "$esp"
rm -f "$root/tmp/grub.cfg" "$root/tmp/BOOTX64.EFI"

# Root file system from the folder; the disk: 1 MiB, ESP (64 MiB), root (the rest).
used=$(du -sm "$root" | cut -f 1)
root_mib=$((used + used / 3 + 128))
disk=$work/disk.raw
truncate -s $((1 + 64 + root_mib + 1))M "$disk"
sfdisk -q "$disk" <<TABLE
label: gpt
unit: sectors
disk.raw1 : start=$(((1 + 64) * 2048)), size=$((root_mib * 2048)), type=0FC63DAF-8483-4772-8E79-3D69D8477DE4
disk.raw15 : start=2048, size=$((64 * 2048)), type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B
TABLE
dd if="$esp" of="$disk" bs=1M seek=1 conv=notrunc status=none
mke2fs -q -F -t ext4 -L cloudroot -d "$root" -E offset=$(((1 + 64) * 1048576)) "$disk" "${root_mib}M"
zstd -q -T0 -9 --rm -o "$work/image.raw.zst" "$disk"
mv "$work/image.raw.zst" "$dest"
echo "cloud image: ready at $dest ($(du -m "$dest" | cut -f 1) MiB compressed, root $root_mib MiB)"
