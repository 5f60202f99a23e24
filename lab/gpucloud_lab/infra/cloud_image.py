# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's Debian 12 cloud image (lib/build-cloud-image.sh: Debian's packages, offline from this machine's apt
sources; GPT, ESP with standalone GRUB, ext4 root, cloud-init, openssh-server), built once per builder into the
cache and served by the lab's package mirror under ``images/`` (``URL``), as a site's image mirror serves vendor
cloud images. Built when first asked for (``ensure``: the image-deploy tests), not by `prepare` or `up`: about
six minutes on two cores.
"""
from __future__ import annotations

import fcntl
import hashlib
import subprocess
from pathlib import Path

from gpucloud_lab.core import config

BUILDER = config.LAB_DIR / "lib" / "build-cloud-image.sh"
NAME = "debian-12-gpucloud-lab-amd64.raw.zst"
URL = f"http://{config.CONTROLLER_IP}:{config.PKG_MIRROR_PORT}/images/{NAME}"
QCOW2 = "debian-12-gpucloud-lab-amd64.qcow2"
QCOW2_URL = f"http://{config.CONTROLLER_IP}:{config.PKG_MIRROR_PORT}/images/{QCOW2}"
LOCK = config.CACHE_DIR / ".image-deploy.lock"


def folder() -> Path:
    """Where the image of this builder is (or will be) kept: what the mirror serves as ``images/``."""
    return config.CACHE_DIR / ("cloud-image-%s" % hashlib.sha256(BUILDER.read_bytes()).hexdigest()[:12])


def ensure(timeout: float = 1500) -> Path:
    """The image, built now unless cached (one build at a time, across processes)."""
    image = folder() / NAME
    config.CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not image.exists():
            image.parent.mkdir(parents=True, exist_ok=True)
            build = subprocess.run(["bash", str(BUILDER), str(image)], capture_output=True, text=True, check=False,
                                   timeout=timeout)
            if build.returncode != 0:
                raise RuntimeError("building the lab's cloud image failed:\n" + build.stdout + build.stderr)
    return image


def ensure_qcow2(timeout: float = 1500) -> Path:
    """The image as vendors publish theirs (Debian's genericcloud and Rocky's GenericCloud ``.qcow2``, Ubuntu's
    ``.img``): a compressed qcow2 made from the raw image with qemu-img, once, next to it (served as ``QCOW2_URL``);
    the boot server converts it back to raw.zst (role pxe_server)."""
    image = ensure(timeout)
    qcow2 = image.parent / QCOW2
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not qcow2.exists():
            raw, tmp = qcow2.with_suffix(".raw.tmp"), qcow2.with_suffix(".qcow2.tmp")
            try:
                subprocess.run(["zstd", "-q", "-d", "-f", str(image), "-o", str(raw)], check=True, timeout=timeout)
                subprocess.run(["qemu-img", "convert", "-q", "-c", "-f", "raw", "-O", "qcow2", str(raw), str(tmp)],
                               check=True, timeout=timeout)
                tmp.rename(qcow2)
            finally:
                raw.unlink(missing_ok=True)
                tmp.unlink(missing_ok=True)
    return qcow2


def sha256(image: Path) -> str:
    digest = hashlib.sha256()
    with image.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
