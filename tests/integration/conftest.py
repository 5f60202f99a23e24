# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Integration tests: start the lab once per session, drive playbooks through ansible-runner, stop it.

Skipped, with the reason, only where the lab cannot run (not root, no systemd-nspawn);
with CI set, that is an error instead: nothing is skipped in CI.
Set GPUCLOUD_LAB_KEEP=1 to leave the lab up afterwards; a lab that was already up
when the session started is left up (in CI it is taken down and started fresh instead).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.lab import Lab, leftovers

REPO = Path(__file__).resolve().parents[2]
LAB_CMD = REPO / "lab" / "gpucloud-lab"


def lab_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "the lab needs root (network namespaces, mounts, cgroups): run as root"
    for tool in ("systemd-nspawn", "debootstrap", "ip", "qemu-system-x86_64"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (see bindep.txt)"
    if not Path("/sys/fs/cgroup/unified").is_dir() and not Path("/sys/fs/cgroup/cgroup.procs").exists():
        return "no cgroup hierarchy to launch lab hosts from"
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "lab: needs the embedded lab (root, namespaces); started once per session")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [item for item in items if "lab" in getattr(item, "fixturenames", ())]
    for item in ours:
        item.add_marker(pytest.mark.lab)
    reason = lab_unavailable()
    if reason is None or not ours:
        return
    if os.environ.get("CI"):
        raise pytest.UsageError(f"integration tests must run in CI, but: {reason}")
    for item in ours:
        item.add_marker(pytest.mark.skip(reason=reason))


def _lab(command: str, check: bool = True) -> int:
    return subprocess.run([str(LAB_CMD), command], cwd=REPO, check=check, stdout=sys.stderr).returncode


@pytest.fixture(scope="session")
def lab() -> Iterator[Lab]:
    """The running lab (started here unless it already was)."""
    was_up = _lab("status", check=False) == 0
    if was_up and os.environ.get("CI"):
        # CI starts from a fresh lab: state left by an earlier run must not decide any result.
        _lab("down")
        was_up = False
    _lab("up")
    yield Lab(REPO)
    if was_up or os.environ.get("GPUCLOUD_LAB_KEEP"):
        return
    _lab("down")
    left = leftovers()
    assert not left, f"`gpucloud-lab down` left things behind: {left}"
