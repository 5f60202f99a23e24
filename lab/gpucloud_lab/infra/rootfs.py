# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The base root filesystem, built once with debootstrap and cached by content."""
from __future__ import annotations

import hashlib
from pathlib import Path

from gpucloud_lab.core import config
from gpucloud_lab.core.util import run, say

PACKAGES = config.LAB_DIR / "base-packages.txt"
BUILDER = config.LAB_DIR / "lib" / "build-rootfs.sh"


def base_key() -> str:
    """Changes whenever the package list or the build recipe changes."""
    digest = hashlib.sha256(PACKAGES.read_bytes() + BUILDER.read_bytes() + config.SUITE.encode())
    return digest.hexdigest()[:12]


def base_dir() -> Path:
    return config.CACHE_DIR / f"rootfs-{config.SUITE}-{base_key()}"


def ensure_base() -> Path:
    base = base_dir()
    if base.is_dir():
        return base
    say(f"building the base root filesystem (once; cached in {base})")
    config.CACHE_DIR.mkdir(parents=True, exist_ok=True)
    run([str(BUILDER), str(PACKAGES), str(base)], quiet=False)
    return base
