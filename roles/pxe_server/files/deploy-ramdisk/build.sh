#!/usr/bin/env bash
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# gpucloud.baremetal (role pxe_server): build the deploy ramdisk from the distribution's packages, on the boot server.
#
#   build.sh OUT KERNEL_PACKAGE "MODULE ..."
#
# The kernel is the distribution's (KERNEL_PACKAGE, a metapackage such as linux-image-amd64 is followed to the
# kernel it depends on), fetched with apt-get download from the boot server's own package sources (a site's
# mirror), never installed. The initramfs holds busybox-static's applets (shell, wget, udhcpc, dd, mount,
# modprobe, cpio), util-linux's sfdisk and zstd with their libraries (this host's; same distribution), the
# kernel modules named (and what they need; the ramdisk loads the drivers of the machine's devices by their
# modalias, as udev would) and this folder's init and udhcpc script. OUT gets vmlinuz, initrd.gz and
# version ("<kernel package> <kernel release> <build inputs digest>"), replaced together.
#   build.sh --resolve KERNEL_PACKAGE
#
# prints "<kernel package> <version>": what a build would take now (the role rebuilds when it changes).
set -euo pipefail

resolve() {
    local kernel version
    kernel=$(apt-cache depends "$1" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1) || true
    kernel=${kernel:-$1}
    version=$(apt-cache policy "$kernel" 2>/dev/null | sed -n 's/^ *Candidate: //p') || true
    if [ -z "$version" ] || [ "$version" = "(none)" ]; then
        echo "gpucloud: no package $kernel in this host's package sources (apt-get update? a site mirror?)" >&2
        exit 1
    fi
    echo "$kernel $version"
}
if [ "${1:-}" = --resolve ]; then
    resolve "$2"
    exit 0
fi

out=$1 package=$2 modules=$3
here=$(cd "$(dirname "$0")" && pwd)
kernel=$(resolve "$package" | cut -d ' ' -f 1)
work=$(mktemp -d /tmp/gpucloud-deploy-ramdisk.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

apt-get download -q=2 "$kernel" busybox-static >/dev/null 2>apt.log || {
    echo "gpucloud: apt-get download $kernel busybox-static failed: $(tail -n 3 apt.log)" >&2
    exit 1
}
dpkg-deb -x "$(ls "$kernel"_*.deb)" kernel
dpkg-deb -x "$(ls busybox-static_*.deb)" busybox
release=$(ls kernel/lib/modules)
bb=$work/busybox/bin/busybox
kdir=kernel/lib/modules/$release
# Compressed modules (newer distributions) are unpacked: busybox's modprobe loads plain .ko files.
find "$kdir" -name '*.ko.xz' -exec xz -d {} +
find "$kdir" -name '*.ko.zst' -exec zstd -q -d --rm {} +
"$bb" depmod -b kernel "$release"

root=$work/root
mkdir -p "$root"/bin "$root"/dev "$root"/proc "$root"/sys "$root"/tmp "$root"/run "$root"/etc "$root/lib/modules/$release"
cp "$bb" "$root/bin/busybox"
for applet in $("$bb" --list); do
    [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
ln -s bin "$root/sbin"

# A program with the shared libraries it loads (what initramfs-tools' copy_exec does).
copy_exec() {
    local exe lib
    exe=$(command -v "$1") || { echo "gpucloud: $1 is not installed on the boot server" >&2; exit 1; }
    rm -f "$root/bin/$1"
    cp -L "$exe" "$root/bin/$1"
    for lib in $(ldd "$exe" | awk '/=> \// { print $3 } /^[[:space:]]*\// { print $1 }'); do
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}
copy_exec sfdisk
copy_exec zstd

# The modules asked for and every module they need (busybox's modules.dep lists them all).
for name in $modules; do
    line=$(awk -v n="$name" '{ m = $1; sub(/:$/, "", m); sub(/.*\//, "", m); sub(/\.ko$/, "", m); gsub(/-/, "_", m);
                                 w = n; gsub(/-/, "_", w); if (m == w) { print; exit } }' "$kdir/modules.dep")
    if [ -z "$line" ]; then
        if grep -q "/${name}.ko\$" "$kdir/modules.builtin" 2>/dev/null; then continue; fi
        echo "gpucloud: kernel $release has no module $name" >&2
        exit 1
    fi
    for module in $(echo "$line" | tr -d ':'); do
        mkdir -p "$root/lib/modules/$release/$(dirname "$module")"
        cp "$kdir/$module" "$root/lib/modules/$release/$module"
    done
done
cp "$kdir/modules.builtin" "$kdir/modules.order" "$root/lib/modules/$release/"
"$bb" depmod -b "$root" "$release"

install -m 0755 "$here/init" "$root/init"
install -m 0755 "$here/udhcpc.script" "$root/etc/udhcpc.script"
(cd "$root" && find . | LC_ALL=C sort | "$bb" cpio -o -H newc 2>/dev/null) | gzip -9n > initrd.gz

digest=$(cat "$here/build.sh" "$here/init" "$here/udhcpc.script" | sha256sum | cut -c 1-16)
mkdir -p "$out"
install -m 0644 "kernel/boot/vmlinuz-$release" "$out/vmlinuz.new"
install -m 0644 initrd.gz "$out/initrd.gz.new"
mv "$out/vmlinuz.new" "$out/vmlinuz"
mv "$out/initrd.gz.new" "$out/initrd.gz"
echo "$kernel $release $digest $(echo "$modules" | tr ' ' '\n' | LC_ALL=C sort -u | tr '\n' ' ')" > "$out/version"
echo "gpucloud: deploy ramdisk built: $kernel ($release), $(du -k "$out/initrd.gz" | cut -f 1) KiB initrd"
