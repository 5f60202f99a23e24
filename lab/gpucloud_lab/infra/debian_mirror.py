# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site's Debian mirror, as much of it as the boot server needs: a signed apt repository laid out as
deb.debian.org's (``dists/bookworm/{InRelease,Release}``, ``dists/bookworm/main/binary-amd64/Packages(.gz)``,
``pool/main/``), holding Debian's own packages, unchanged:

* the kernel (``linux-image-amd64`` and the kernel package it depends on) and ``busybox-static``: role
  pxe_server fetches them with ``apt-get download`` to build the deploy ramdisk of image profiles;
* ``containernetworking-plugins``, whose plugins the Kubernetes mirror's ``kubernetes-cni`` package carries;
* ``fdisk``, ``zstd``, ``xz-utils`` and ``qemu-utils`` (qemu-img: qcow2 images are converted on the boot server),
  and ``xorriso``, ``mtools``, ``dosfstools``, ``binutils`` and ``systemd-boot-efi`` (the deploy ISOs of nodes
  booted by virtual media) with everything they need: the role installs them on the boot server.

An air-gapped site's boot server lists its Debian mirror; the lab's boot server (pxe) lists this one
(``SOURCES`` and the lab's key in ``/etc/apt/``), written when the mirror comes up, so that the role installs and
fetches from it exactly as on a site. The packages are fetched once by ``lab prepare`` from the Debian
repositories this machine's apt uses (``apt-get download``), cached by name and version in
``~/.cache/gpucloud-lab``, and served by the lab's package mirror (infra/pkg_mirror.py) under ``debian/``.
"""
from __future__ import annotations

import email.utils
import gzip
import hashlib
import re
import shutil
from pathlib import Path

from gpucloud_lab.core import config
from gpucloud_lab.core.util import run, say, write_file

SUITE = "bookworm"
# What role pxe_server asks of the boot server's package sources (its defaults: pxe_server_deploy_kernel_package,
# pxe_server_deploy_ramdisk_packages; the deploy ramdisk's build takes busybox-static).
KERNEL = "linux-image-amd64"
# containernetworking-plugins: the Kubernetes mirror's kubernetes-cni package is made of it (infra/pkg_mirror.py).
DOWNLOADED = ("busybox-static", "containernetworking-plugins")
INSTALLED = ("fdisk", "zstd", "xz-utils", "qemu-utils",
             "xorriso", "mtools", "dosfstools", "binutils", "systemd-boot-efi")
KEYRING = Path("etc/apt/keyrings/gpucloud-lab-mirror.asc")
SOURCES = Path("etc/apt/sources.list.d/gpucloud-lab-debian.sources")


def _candidate(name: str) -> str:
    out = run(["apt-cache", "policy", name]).stdout
    match = re.search(r"^\s*Candidate: (\S+)$", out, re.M)
    if not match or match.group(1) == "(none)":
        raise RuntimeError(f"the Debian mirror: no candidate for {name} in this machine's apt sources (apt update?)")
    return match.group(1)


def _closure() -> list[str]:
    """Package names: the kernel metapackage and its kernel, busybox-static, and the install closure of the
    tools (Depends and Pre-Depends, recursively; virtual packages left out: apt resolves them to real ones)."""
    kernel = re.findall(r"^\s*Depends: (linux-image-\d\S*)$", run(["apt-cache", "depends", KERNEL]).stdout, re.M)
    if not kernel:
        raise RuntimeError(f"the Debian mirror: {KERNEL} depends on no kernel package in this machine's apt sources")
    out = run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
               "--no-breaks", "--no-replaces", "--no-enhances", *INSTALLED]).stdout
    names = {line.strip() for line in out.splitlines() if line and not line[0].isspace() and not line.startswith("<")}
    return sorted(names | {KERNEL, kernel[0], *DOWNLOADED})


def build(fingerprint: str, gpg) -> Path:
    """The signed repository (cached by the packages' names and versions and the key): the folder to serve."""
    wanted = {name: _candidate(name) for name in _closure()}
    key = hashlib.sha256(repr(sorted(wanted.items())).encode()).hexdigest()[:12]
    top = config.CACHE_DIR / f"debian-mirror-{key}-{fingerprint[-8:]}"
    if (top / "dists" / SUITE / "InRelease").exists():
        return top
    say(f"Debian mirror: fetching {len(wanted)} packages of {SUITE} (once; cached in {top})")
    shutil.rmtree(top, ignore_errors=True)
    pool = top / "pool" / "main"
    pool.mkdir(parents=True)
    run(["apt-get", "download", "-q=2", *(f"{name}={version}" for name, version in wanted.items())], cwd=pool)
    dists = top / "dists" / SUITE
    indexes = write_index(top, "pool/main", dists / "main" / "binary-amd64")
    sign_release(dists, ["Origin: Debian", "Label: gpucloud-lab mirror of Debian (the boot server's packages)",
                         f"Suite: {SUITE}", f"Codename: {SUITE}", "Architectures: amd64", "Components: main"],
                 indexes, fingerprint, gpg)
    return top


def write_index(top: Path, pool: str, index: Path) -> list[Path]:
    """``Packages`` and ``Packages.gz`` in index for the .deb files under top/pool (paths relative to top, as
    apt fetches them): the index of an apt repository, shared with the Kubernetes mirror (pkg_mirror.py)."""
    packages = run(["dpkg-scanpackages", "--multiversion", pool, "/dev/null"], cwd=top).stdout
    index.mkdir(parents=True, exist_ok=True)
    (index / "Packages").write_text(packages)
    with gzip.GzipFile(index / "Packages.gz", "wb", mtime=0) as handle:
        handle.write(packages.encode())
    return [index / "Packages", index / "Packages.gz"]


def sign_release(folder: Path, header: list[str], indexes: list[Path], fingerprint: str, gpg) -> None:
    """folder/Release (header, date, MD5Sum and SHA256 of the indexes by their path under folder), InRelease and
    Release.gpg signed with the key of fingerprint: what apt verifies."""
    release = [*header, f"Date: {email.utils.formatdate(usegmt=True)}"]
    for field, algorithm in (("MD5Sum", hashlib.md5), ("SHA256", hashlib.sha256)):
        release.append(f"{field}:")
        for path in indexes:
            data = path.read_bytes()
            release.append(f" {algorithm(data).hexdigest()} {len(data)} {path.relative_to(folder)}")
    (folder / "Release").write_text("\n".join(release) + "\n")
    gpg("--local-user", fingerprint, "--clearsign", "--output", str(folder / "InRelease"), str(folder / "Release"))
    gpg("--local-user", fingerprint, "--armor", "--detach-sign", "--output", str(folder / "Release.gpg"),
        str(folder / "Release"))


def write_sources(root: Path, url: str, armored_key: str) -> None:
    """The boot server's apt sources: this mirror, signed by the lab's key (a site's boot server lists its own)."""
    write_file(root / KEYRING, armored_key, mode=0o644)
    write_file(root / SOURCES, f"# gpucloud-lab: the site's Debian mirror (lab/gpucloud_lab/infra/debian_mirror.py)\n"
               f"Types: deb\nURIs: {url}\nSuites: {SUITE}\nComponents: main\nSigned-By: /{KEYRING}\n", mode=0o644)
