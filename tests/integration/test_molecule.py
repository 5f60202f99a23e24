# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every Molecule scenario of every role, run against the lab's hosts (no Docker)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.lab import Lab

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = sorted([*REPO.glob("roles/*/molecule/*/molecule.yml"),
                    *REPO.glob("tests/integration/roles/*/molecule/*/molecule.yml")])


def _molecule() -> str | None:
    local = Path(sys.executable).parent / "molecule"
    return str(local) if local.exists() else shutil.which("molecule")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: f"{p.parents[2].name}-{p.parent.name}")
def test_molecule_scenario(lab: Lab, scenario: Path) -> None:
    molecule = _molecule()
    if molecule is None:
        if os.environ.get("CI"):
            pytest.fail("molecule is not installed (tests/requirements.txt)")
        pytest.skip("molecule is not installed (pip install molecule)")
    role_dir = scenario.parents[2]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    run = subprocess.run([molecule, "test", "--scenario-name", scenario.parent.name], cwd=role_dir, env=env,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
