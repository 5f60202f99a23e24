# Managed by gpucloud.baremetal (role pxe_server; run with /usr/bin/python3). GNU General Public License v3.0+
# (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Convert an OS profile's qcow2 image (already checked against the fleet's SHA-256 by the role) to the raw.zst
the deploy ramdisk writes, next to it: DEST, DEST.sha256 (the digest of DEST, which the ramdisk checks what it
fetched against) and DEST.source (the qcow2's digest: a DEST made from another image is made again).

Before qemu-img reads the image for conversion, it must be a qcow2 that stands alone: no backing file and no
external data file (either would make qemu-img read another file of this host into the served image: the class
of OpenStack's CVE-2022-47951, VMDK extents, and CVE-2024-32498, qcow2 data files), not encrypted, and clean
under ``qemu-img check``. The format is always named (``-f qcow2``), never probed, and ``qemu-img info`` runs
with the address-space and CPU limits OpenStack gives it. Prints one JSON line: {"changed", "sha256",
"virtual_size", "msg"}; exits 1 with "msg" on a failure, leaving what was served before.
"""
import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile

# nova/oslo's limits for qemu-img info on an image: 1 GiB of address space, 30 s of CPU.
INFO_LIMITS = ((resource.RLIMIT_AS, 1 << 30), (resource.RLIMIT_CPU, 30))


class Failed(Exception):
    pass


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read(path):
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read().split(" ", 1)[0].strip()
    except (OSError, UnicodeDecodeError):
        return ""


def limited():
    for limit, value in INFO_LIMITS:
        resource.setrlimit(limit, (value, value))


def run(argv, what, limits=False):
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, preexec_fn=limited if limits else None)
    if proc.returncode not in (0,) and not (argv[1] == "check" and proc.returncode == 3):  # 3: leaked clusters only
        raise Failed("%s failed (exit %d): %s" % (what, proc.returncode, (proc.stderr or proc.stdout).strip()[-400:]))
    return proc.stdout


def inspect(source):
    """The image's qemu-img info, after refusing what must not be converted."""
    try:
        info = json.loads(run(["qemu-img", "info", "-f", "qcow2", "--output=json", source], "qemu-img info", True))
    except ValueError as exc:
        raise Failed("qemu-img info printed no JSON (%s)" % exc) from exc
    if info.get("format") != "qcow2":
        raise Failed("it is %s, not qcow2" % info.get("format"))
    if info.get("backing-filename") or info.get("full-backing-filename"):
        raise Failed("it names a backing file (%s): only a qcow2 that stands alone is converted"
                     % (info.get("backing-filename") or info.get("full-backing-filename")))
    data = (info.get("format-specific") or {}).get("data") or {}
    if data.get("data-file"):
        raise Failed("it names an external data file (%s): only a qcow2 that stands alone is converted"
                     % data["data-file"])
    if info.get("encrypted") or data.get("encrypt"):
        raise Failed("it is encrypted")
    run(["qemu-img", "check", "-f", "qcow2", source], "qemu-img check")
    return info


def convert(source, dest):
    """qcow2 -> raw (sparse) -> zstd, in DEST's folder, then renamed over DEST: DEST is whole or as it was."""
    folder = os.path.dirname(dest) or "."
    handle, raw = tempfile.mkstemp(dir=folder, prefix=".convert-", suffix=".raw")
    os.close(handle)
    packed = raw + ".zst"
    try:
        run(["qemu-img", "convert", "-f", "qcow2", "-O", "raw", source, raw], "qemu-img convert")
        run(["zstd", "-q", "-f", "-T0", "--rm", raw, "-o", packed], "zstd")
        os.chmod(packed, 0o644)
        digest = sha256(packed)
        os.replace(packed, dest)
    finally:
        for path in (raw, packed):
            if os.path.exists(path):
                os.unlink(path)
    return digest


def write(path, text):
    handle, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".convert-")
    with os.fdopen(handle, "w") as out:
        out.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--source", required=True, help="the qcow2 the role fetched and checked")
    parser.add_argument("--sha256", required=True, help="the fleet's digest of the qcow2")
    parser.add_argument("--dest", required=True, help="the raw.zst to serve")
    parser.add_argument("--check", action="store_true", help="say whether it would convert; change nothing")
    args = parser.parse_args()
    result = {"changed": False, "sha256": read(args.dest + ".sha256"), "virtual_size": None, "msg": ""}
    try:
        current = (read(args.dest + ".source") == args.sha256.lower() and os.path.isfile(args.dest)
                   and result["sha256"] == sha256(args.dest))
        if current:
            result["msg"] = "%s is the conversion of the qcow2 of SHA-256 %s" % (args.dest, args.sha256)
        elif args.check:
            result.update(changed=True, msg="%s would be converted to %s" % (args.source, args.dest))
        else:
            got = sha256(args.source)
            if got != args.sha256.lower():
                raise Failed("it has SHA-256 %s, not %s (the fleet's)" % (got, args.sha256))
            result["virtual_size"] = inspect(args.source).get("virtual-size")
            result["sha256"] = convert(args.source, args.dest)
            write(args.dest + ".sha256", "%s  %s\n" % (result["sha256"], os.path.basename(args.dest)))
            write(args.dest + ".source", "%s  %s\n" % (got, os.path.basename(args.source)))
            result.update(changed=True, msg="%s converted to %s" % (args.source, args.dest))
    except (Failed, OSError) as exc:
        result["msg"] = "%s: %s; what was served before stays" % (args.source, exc)
        print(json.dumps(result))
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
