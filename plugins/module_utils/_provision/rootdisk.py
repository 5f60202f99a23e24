# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The root disk of an install, chosen on the node from the fleet's root device hints.

Only the node sees its disks, so every seed runs one POSIX shell script (``script``) in the installer
before partitioning: debian-installer's ``partman/early_command`` (busybox ash), anaconda's ``%pre``
and subiquity's ``early-commands`` (both bash). It looks at every block device as Ironic's agent
does (removable, read-only, loop, RAM, optical, device-mapper, MD and NBD devices are never
candidates), matches the hints (every hint given must match; the hint values are checked by the
fleet model, so none holds a quote or a shell character), and writes the one matching disk
(``/dev/NAME``) to its output file. Without identifying hints the rule is the smallest disk of at least
``min_size_gb`` GiB. No disk, or more than one, fails the install before anything is written, and the
message lists every disk found with its serial, WWN, model, size and by-path name.

Where each property comes from (udev first, as lsblk and Ironic read them; sysfs when udev has none):
serial ``ID_SERIAL_SHORT`` or ``device/serial``/``serial``; WWN ``ID_WWN_WITH_EXTENSION``, ``ID_WWN`` or
``wwid``/``device/wwid``; model ``device/model`` (spaces trimmed); size ``size`` (512-byte sectors),
in GiB rounded down; by-path the ``/dev/disk/by-path`` link that resolves to the disk.
"""

from __future__ import annotations

from typing import Any

DEFAULT_MIN_SIZE_GB = 32
IDENTIFYING = ("serial", "wwn", "model", "size_gb", "by_path")
OUTPUT = "/tmp/gpucloud-root-disk"

_BODY = r"""
sys=${GPUCLOUD_SYSFS:-/sys}
dev=${GPUCLOUD_DEVDIR:-/dev}
out=${1:-%(output)s}
prop() {
    command -v udevadm >/dev/null 2>&1 || return 0
    udevadm info --query=property --name="$dev/$1" 2>/dev/null | sed -n "s/^$2=//p" | head -n 1
}
readone() {
    for f in "$@"; do
        if [ -r "$f" ]; then
            v=$(tr -d '\000' < "$f" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
            if [ -n "$v" ]; then printf '%%s' "$v"; return 0; fi
        fi
    done
}
matches=''
count=0
found=''
best=''
best_gib=''
ties=0
for d in "$sys"/block/*; do
    [ -e "$d" ] || continue
    name=${d##*/}
    case $name in
        loop*|ram*|sr*|fd*|zram*|dm-*|md*|nbd*|mtdblock*) continue ;;
    esac
    [ "$(readone "$d/removable")" = 1 ] && continue
    [ "$(readone "$d/ro")" = 1 ] && continue
    sectors=$(readone "$d/size")
    case $sectors in ''|*[!0-9]*) sectors=0 ;; esac
    gib=$((sectors / 2097152))
    serial=$(prop "$name" ID_SERIAL_SHORT)
    [ -n "$serial" ] || serial=$(readone "$d/device/serial" "$d/serial")
    wwn=$(prop "$name" ID_WWN_WITH_EXTENSION)
    [ -n "$wwn" ] || wwn=$(prop "$name" ID_WWN)
    [ -n "$wwn" ] || wwn=$(readone "$d/wwid" "$d/device/wwid")
    model=$(readone "$d/device/model")
    bypath=''
    for link in "$dev"/disk/by-path/*; do
        [ -L "$link" ] || continue
        case $link in *-part[0-9]*) continue ;; esac
        target=$(readlink -f "$link")
        if [ "${target##*/}" = "$name" ]; then bypath=/dev/disk/by-path/${link##*/}; break; fi
    done
    found="$found; $name (serial ${serial:-none}, wwn ${wwn:-none}, model ${model:-none}, $gib GiB,"
    found="$found by-path ${bypath:-none})"
    ok=1
%(tests)s
    [ "$ok" = 1 ] || continue
    if [ "$rule" = hints ]; then
        count=$((count + 1)); matches="$matches $name"
    elif [ "$gib" -ge "$min_gib" ]; then
        if [ -z "$best" ] || [ "$gib" -lt "$best_gib" ]; then
            best=$name; best_gib=$gib; ties=1; matches=$name
        elif [ "$gib" -eq "$best_gib" ]; then
            ties=$((ties + 1)); matches="$matches $name"
        fi
    fi
done
[ "$rule" = hints ] || count=$ties
found=${found#; }
if [ "$count" -ne 1 ]; then
    if [ "$count" -eq 0 ]; then what="no disk matches"; else what="$count disks match (${matches# })"; fi
    msg="gpucloud: root disk of %(node)s: $what $want; refusing to partition anything. Disks found: ${found:-none}"
    echo "$msg" >&2
    echo "$msg" > "$out.error"
    exit 1
fi
chosen=${matches# }
echo "/dev/$chosen" > "$out"
echo "gpucloud: root disk of %(node)s: /dev/$chosen ($want)" >&2
"""


def hints(node: dict[str, Any], profile: dict[str, Any]) -> dict[str, Any]:
    """The hints that apply to ``node``: its own, else its OS profile's, else none (the default rule)."""
    return dict(node.get("root_device") or profile.get("root_device") or {})


def describe(h: dict[str, Any]) -> str:
    given = ["%s=%s" % (k, h[k]) for k in IDENTIFYING if k in h]
    if given:
        return "hints " + " ".join(given)
    return "rule: the smallest non-removable disk of at least %d GiB" % h.get("min_size_gb", DEFAULT_MIN_SIZE_GB)


def script(node_name: str, h: dict[str, Any], output: str = OUTPUT) -> str:
    """The selection script (POSIX sh) for one node; ``$1`` overrides the output file."""
    tests = []
    checks = {
        "serial": '[ "$serial" = %s ] || ok=0',
        "wwn": '[ "$wwn" = %s ] || ok=0',
        "model": '[ "$model" = %s ] || ok=0',
        "size_gb": '[ "$gib" -eq %s ] || ok=0',
        "by_path": '[ "$bypath" = %s ] || ok=0',
    }
    for key in IDENTIFYING:
        if key in h:
            # The fleet model allows no quote in a hint; single quotes keep spaces (a model) literal.
            value = str(h[key])
            if "'" in value:
                raise ValueError("root_device.%s: %r holds a quote" % (key, value))
            tests.append("    " + checks[key] % ("'%s'" % value))
    if tests and "min_size_gb" in h:
        tests.append('    [ "$gib" -ge %d ] || ok=0' % int(h["min_size_gb"]))
    rule = "hints" if tests else "smallest"
    head = ("#!/bin/sh\n# gpucloud.baremetal: choose the root disk of %s (%s)\nset -u\nrule=%s\nmin_gib=%d\nwant='%s'\n"
            % (node_name, describe(h), rule, int(h.get("min_size_gb", DEFAULT_MIN_SIZE_GB)), describe(h)))
    return head + _BODY % {"output": output, "tests": "\n".join(tests) or "    :", "node": node_name}
