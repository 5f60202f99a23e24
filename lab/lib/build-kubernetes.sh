#!/usr/bin/env bash
# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
#
# Build kube-apiserver, kube-controller-manager, kubeadm and kubectl from Debian's
# `kubernetes` source package, once, and the pause container's binary (build/pause,
# C, static) that the lab's site registry serves as registry.k8s.io/pause.
# Usage: build-kubernetes.sh DEST_DIR
# A private apt configuration (deb-src for the same mirror) keeps the
# machine's own apt sources untouched.
set -euo pipefail

dest=$1
work=${GPUCLOUD_LAB_BUILD_DIR:-$dest/build}
mirror=${GPUCLOUD_LAB_MIRROR:-http://deb.debian.org/debian}
suite=${GPUCLOUD_LAB_SUITE:-bookworm}
components=(kube-apiserver kube-controller-manager kube-scheduler kubeadm kubectl kubelet)

fetch_source() {
    mkdir -p "$work/apt/lists/partial" "$work/apt/archives/partial" "$work/src"
    printf 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
        "$mirror" "$suite" >"$work/apt/sources.list"
    local apt_opts=(
        -o "Dir::Etc::SourceList=$work/apt/sources.list"
        -o "Dir::Etc::SourceParts=/nonexistent"
        -o "Dir::State::Lists=$work/apt/lists"
        -o "Dir::Cache::Archives=$work/apt/archives"
        -o "APT::Sandbox::User=root"
        -o "Debug::NoLocking=1"
    )
    cd "$work/src"
    if ls -d kubernetes-*/ >/dev/null 2>&1; then
        return
    fi
    echo "kubernetes: fetching Debian source package 'kubernetes'"
    apt-get "${apt_opts[@]}" -q update >/dev/null
    apt-get "${apt_opts[@]}" -q source --download-only kubernetes >/dev/null
    dpkg-source -x ./*.dsc >/dev/null
}

# The pause binary as build/pause/Makefile builds it (gcc -Os -static, VERSION from its TAG), and that TAG
# beside it (pause.tag): the registry serves the image under it.
build_pause() {
    local tree=$1 dir source tag
    [[ -x "$dest/pause" && -s "$dest/pause.tag" ]] && return
    dir="$tree/build/pause"
    source=$(find "$dir" -name pause.c -path '*linux*' | head -n1)
    [[ -n "$source" ]] || source="$dir/pause.c"
    tag=$(sed -n 's/^TAG[[:space:]]*[?:]*=[[:space:]]*\([0-9][0-9.]*\)[[:space:]]*$/\1/p' "$dir/Makefile" | head -n1)
    [[ -n "$tag" ]] || { echo "kubernetes: no TAG in $dir/Makefile" >&2; exit 1; }
    echo "kubernetes: compiling pause $tag ($source)"
    gcc -Os -Wall -Werror -static -DVERSION="v$tag-gpucloud-lab" -o "$dest/pause.tmp" "$source"
    strip "$dest/pause.tmp"
    mv "$dest/pause.tmp" "$dest/pause"
    echo "$tag" >"$dest/pause.tag"
}

build() {
    local tree
    tree=$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-*' | sort | head -n1)
    build_pause "$tree"
    cd "$tree"
    # reflect2 1.0.1 crashes (SIGSEGV in map iteration) under Go 1.19; use Debian's 1.0.2.
    rsync -a --delete /usr/share/gocode/src/github.com/modern-go/reflect2/ \
        vendor/github.com/modern-go/reflect2/
    mkdir -p .go/src/k8s.io
    ln -sfn ../../.. .go/src/k8s.io/kubernetes
    export GOPATH=$PWD/.go GO111MODULE=off
    export GOCACHE=${GOCACHE:-$work/gocache}
    cd .go/src/k8s.io/kubernetes
    local c
    for c in "${components[@]}"; do
        [[ -x "$dest/$c" ]] && continue
        echo "kubernetes: compiling $c (a few minutes on 2 cores, once)"
        make WHAT="cmd/$c" >"$work/make-$c.log" 2>&1 || { tail -n 40 "$work/make-$c.log"; exit 1; }
        install -m 0755 "$(find _output -type f -name "$c" -perm -u+x | head -n1)" "$dest/$c.tmp"
        mv "$dest/$c.tmp" "$dest/$c"
    done
}

mkdir -p "$dest"
fetch_source
build
# The binaries are all that is kept: the source tree and Go cache are ~3 GB.
[[ -n "${GPUCLOUD_LAB_KEEP_BUILD:-}" ]] || rm -rf "$work"
echo "kubernetes: binaries ready in $dest"
