#!/usr/bin/env bash
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# gpucloud.baremetal (role pxe_server): a node's virtual media deploy ISO, built on the boot server.
#
#   build-iso.sh OUT KERNEL INITRD CMDLINE
#
# For a node whose BMC boots it from virtual media (the fleet's bmc.boot_target Cd: a site without PXE), the BMC
# inserts this ISO (Redfish VirtualMedia.InsertMedia) and the firmware boots it once. It holds the deploy ramdisk
# (KERNEL, INITRD) and the node's kernel command line (CMDLINE: what its iPXE script would pass, with the node's
# static address, as no DHCP answers it) as one UEFI program, a unified kernel image: systemd's EFI stub
# (Debian's systemd-boot-efi) with the kernel, the initrd and the command line as its .linux, .initrd and .cmdline
# sections (objcopy, binutils), the layout of the UAPI Group's UKI specification. That program is the removable-
# media boot loader (\EFI\BOOT\BOOTX64.EFI) of a FAT image (dosfstools, mtools), which is the ISO's El Torito
# boot image for UEFI (xorriso). UEFI only: GPU servers boot UEFI, and the fleet refuses Cd with boot_mode Legacy.
# OUT is replaced whole, only once it is complete.
set -euo pipefail

out=$1 kernel=$2 initrd=$3 cmdline=$4
stub=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
for file in "$kernel" "$initrd" "$stub"; do
    [ -s "$file" ] || { echo "gpucloud: $file is missing or empty; the ISO needs it" >&2; exit 1; }
done
work=$(mktemp -d /tmp/gpucloud-deploy-iso.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Each section starts after the one before, aligned to the stub's SectionAlignment (objdump shows addresses
# with the image base, which objcopy's --change-section-vma takes).
hex() { printf '%d' "0x$1"; }
align=$(hex "$(objdump -p "$stub" | awk '$1 == "SectionAlignment" { print $2 }')")
end=0
while read -r size vma; do
    last=$(($(hex "$vma") + $(hex "$size")))
    [ "$last" -gt "$end" ] && end=$last
done < <(objdump -h "$stub" | awk 'NF == 7 && $1 ~ /^[0-9]+$/ { print $3, $4 }')
next() { echo $((($1 + align - 1) / align * align)); }
printf '%s' "$cmdline" >"$work/cmdline"
args=()
for section in cmdline:"$work/cmdline" linux:"$kernel" initrd:"$initrd"; do
    name=${section%%:*} file=${section#*:}
    end=$(next "$end")
    args+=(--add-section ".$name=$file" --change-section-vma ".$name=$(printf '0x%x' "$end")")
    end=$((end + $(stat -Lc %s "$file")))
done
objcopy "${args[@]}" "$stub" "$work/BOOTX64.EFI"

# The FAT image: the program and 1 MiB to spare, in KiB (mkfs.fat's unit).
mkdir "$work/iso"
kib=$(($(stat -c %s "$work/BOOTX64.EFI") / 1024 + 1024))
mkfs.fat -C -n GCLDEPLOY "$work/iso/efiboot.img" "$kib" >/dev/null
mmd -i "$work/iso/efiboot.img" ::/EFI ::/EFI/BOOT
mcopy -i "$work/iso/efiboot.img" "$work/BOOTX64.EFI" ::/EFI/BOOT/BOOTX64.EFI
xorriso -as mkisofs -V GPUCLOUD_DEPLOY -o "$work/deploy.iso" -e efiboot.img -no-emul-boot "$work/iso" \
    >"$work/xorriso.log" 2>&1 || { echo "gpucloud: xorriso failed: $(tail -n 5 "$work/xorriso.log")" >&2; exit 1; }
install -m 0644 "$work/deploy.iso" "$out.tmp"
mv -f "$out.tmp" "$out"
