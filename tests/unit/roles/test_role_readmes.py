# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every role's README carries its variable reference as generated from meta/argument_specs.yml."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
import role_readme  # noqa: E402

ROLES = role_readme.roles()


def test_every_role_has_a_spec_and_a_readme() -> None:
    assert {p.name for p in ROLES} == {p.name for p in (ROOT / "roles").iterdir() if p.is_dir()}
    for role in ROLES:
        assert (role / "README.md").exists(), f"{role.name}: no README (python tools/role_readme.py writes one)"


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_readme_matches_the_argument_spec(role: Path) -> None:
    assert (role / "README.md").read_text() == role_readme.render(role), (
        f"roles/{role.name}/README.md differs from its meta/argument_specs.yml: run python tools/role_readme.py")


def test_a_changed_spec_makes_its_readme_stale(tmp_path: Path) -> None:
    role = tmp_path / "roles" / ROLES[0].name
    shutil.copytree(ROLES[0], role)
    spec_path = role / "meta" / "argument_specs.yml"
    spec = yaml.safe_load(spec_path.read_text())
    options = spec["argument_specs"]["main"].setdefault("options", {})
    options["zz_new_variable"] = {"type": "int", "default": 3, "description": "Added after the README was made."}
    spec_path.write_text(yaml.safe_dump(spec))
    rendered = role_readme.render(role)
    assert rendered != (role / "README.md").read_text()
    assert "| `zz_new_variable` | int | `3` | Added after the README was made. |" in rendered
    # Prose outside the generated section is kept as it was.
    assert rendered.split(role_readme.BEGIN)[0] == (role / "README.md").read_text().split(role_readme.BEGIN)[0]
