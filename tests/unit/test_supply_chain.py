# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the project downloads is pinned: the Python locks cover their human-edited inputs, exactly and with
hashes, and agree with each other (tools/lock.sh writes them; tools/setup.sh and the execution environment
install them in hash-checking mode); the execution environment installs nothing by name alone (helm by
sha256, collections at exact versions); Helm charts are pinned to exact versions."""
from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path

import ansible
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
# Each lock and the input files it is compiled from.
LOCKS = {
    "requirements.lock": ["requirements.txt"],
    "tests/requirements.lock": ["requirements.txt", "tests/requirements.txt"],
}
_ENTRY = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>\S+)")


def requirements(path: Path) -> list[Requirement]:
    """The requirement lines of a human-edited input file (comments, blank lines and options left out)."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [Requirement(line) for line in lines if line and not line.startswith("-")]


def lock_entries(path: Path) -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) of a pip-compile --generate-hashes lock (continuation lines joined)."""
    text = path.read_text().replace("\\\n", " ")
    entries = {}
    for line in text.splitlines():
        match = _ENTRY.match(line)
        if match:
            hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})\b", line)
            entries[canonicalize_name(match["name"])] = (match["version"], hashes)
    return entries


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_every_input_requirement_is_locked_within_its_range(lock: str) -> None:
    locked = lock_entries(ROOT / lock)
    problems = []
    for source in LOCKS[lock]:
        for req in requirements(ROOT / source):
            name = canonicalize_name(req.name)
            if name not in locked:
                problems.append(f"{source}: {req} is not in {lock}")
            elif not req.specifier.contains(locked[name][0], prereleases=True):
                problems.append(f"{source}: {req} but {lock} pins {name}=={locked[name][0]}")
    assert not problems, "; ".join(problems) + ": run tools/lock.sh"


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_every_locked_package_is_pinned_with_a_hash(lock: str) -> None:
    text = (ROOT / lock).read_text()
    locked = lock_entries(ROOT / lock)
    assert len(locked) > len(requirements(ROOT / LOCKS[lock][-1]))
    assert [name for name, (_version, hashes) in locked.items() if not hashes] == []
    requirement_lines = [line for line in text.splitlines() if line and not line.startswith((" ", "#"))]
    assert all(_ENTRY.match(line) for line in requirement_lines), requirement_lines
    # Locked from PyPI alone: no index or local folder of the machine that wrote it.
    assert not re.search(r"^--(index-url|extra-index-url|find-links)", text, re.M)
    assert "tools/lock.sh" in "".join(text.splitlines(keepends=True)[:6]), "the header says how to regenerate it"


def test_the_tests_lock_pins_the_controller_at_the_controller_locks_versions() -> None:
    controller = lock_entries(ROOT / "requirements.lock")
    tests = lock_entries(ROOT / "tests/requirements.lock")
    assert {name: version for name, (version, _hashes) in controller.items()} == {
        name: tests[name][0] for name in controller if name in tests}
    assert set(controller) <= set(tests)


# --- the execution environment (meta/execution-environment.yml) ----------------------------------------------

def _ee() -> dict:
    return yaml.safe_load((ROOT / "meta/execution-environment.yml").read_text())


def test_execution_environment_installs_python_packages_from_the_lock_only() -> None:
    deps = _ee()["dependencies"]
    assert deps["python"] == "../requirements.lock"
    # ansible-builder would pip-install these by name, outside hash-checking mode.
    assert "ansible_core" not in deps and "ansible_runner" not in deps
    # The collections' own (unpinned) Python requirements would break hash-checking mode.
    assert deps["exclude"]["python"] == ["~.+"]
    locked = lock_entries(ROOT / "requirements.lock")
    assert {"ansible-core", "ansible-runner", "pip"} <= set(locked)
    base = " ".join(_ee()["additional_build_steps"]["append_base"])
    assert "--require-hashes --build-constraint /tmp/requirements.lock -r /tmp/requirements.lock" in base


def test_execution_environment_collections_are_the_tested_ones_exactly() -> None:
    wanted = yaml.safe_load((ROOT / "meta/ee-requirements.yml").read_text())["collections"][1:]
    ranges = yaml.safe_load((ROOT / "galaxy.yml").read_text())["dependencies"]
    pins = {c["name"]: c["version"] for c in wanted}
    assert all(pin.startswith("==") for pin in pins.values()), pins
    assert set(ranges) <= set(pins)
    assert all(SpecifierSet(ranges[name]).contains(pins[name][2:]) for name in ranges)
    # The collections the tests ran with: those of the `ansible` package tests/requirements.lock pins.
    locked_ansible = lock_entries(ROOT / "tests/requirements.lock")["ansible"][0]
    assert metadata.version("ansible") == locked_ansible, "this venv is not the lock's: run make setup"
    shipped = Path(ansible.__file__).parents[1] / "ansible_collections"
    tested = {name: json.loads((shipped / name.replace(".", "/") / "MANIFEST.json").read_text())[
        "collection_info"]["version"] for name in pins}
    assert {name: pin[2:] for name, pin in pins.items()} == tested
    # ansible.netcommon's own dependencies are pinned as well, so Galaxy resolves nothing newer.
    netcommon = json.loads((shipped / "ansible/netcommon/MANIFEST.json").read_text())["collection_info"]
    assert set(netcommon["dependencies"]) <= set(pins)


def test_execution_environment_helm_is_the_labs_checked_against_its_sha256() -> None:
    final = _ee()["additional_build_steps"]["append_final"]
    args = dict(step.split(" ", 1)[1].split("=", 1) for step in final if step.startswith("ARG "))
    assert re.fullmatch(r"[0-9a-f]{64}", args["HELM_SHA256"])
    lab_config = (ROOT / "lab/gpucloud_lab/core/config.py").read_text()
    lab_helm = re.search(r'^TOOLS_VERSION = ".*helm-([0-9.]+)"', lab_config, re.M)[1]
    assert args["HELM_VERSION"] == f"v{lab_helm}"
    (fetch,) = [step for step in final if "get.helm.sh" in step]
    # Downloaded to a file, checked, and only then unpacked.
    assert fetch.index('sha256sum --check --strict') < fetch.index("tar -x")
    assert '"${HELM_SHA256}  /tmp/helm.tar.gz"' in fetch and "| tar" not in fetch


# --- Helm charts ----------------------------------------------------------------------------------------------

CHART_VERSION = re.compile(r"^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$")


def chart_versions() -> dict[str, object]:
    found = {}
    for defaults in sorted(ROOT.glob("roles/*/defaults/main.yml")):
        for name, value in (yaml.safe_load(defaults.read_text()) or {}).items():
            if name.endswith("chart_version"):
                found[name] = value
    return found


def test_every_chart_version_is_exact() -> None:
    versions = chart_versions()
    assert {"gpu_operator_chart_version", "kai_scheduler_chart_version", "vcluster_tenant_chart_version"} <= set(versions)
    assert {name: v for name, v in versions.items() if not CHART_VERSION.match(str(v))} == {}
