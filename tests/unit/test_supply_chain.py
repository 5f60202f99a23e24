# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the project downloads is pinned: the Python locks cover their human-edited inputs, exactly and with
hashes, and agree with each other (tools/lock.sh writes them; tools/setup.sh and the execution environment
install them in hash-checking mode)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
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
    assert [name for name, (_, hashes) in locked.items() if not hashes] == []
    requirement_lines = [line for line in text.splitlines() if line and not line.startswith((" ", "#"))]
    assert all(_ENTRY.match(line) for line in requirement_lines), requirement_lines
    # Locked from PyPI alone: no index or local folder of the machine that wrote it.
    assert not re.search(r"^--(index-url|extra-index-url|find-links)", text, re.M)
    assert "tools/lock.sh" in "".join(text.splitlines(keepends=True)[:6]), "the header says how to regenerate it"


def test_the_tests_lock_pins_the_controller_at_the_controller_locks_versions() -> None:
    controller = lock_entries(ROOT / "requirements.lock")
    tests = lock_entries(ROOT / "tests/requirements.lock")
    assert {name: version for name, (version, _) in controller.items()} == {
        name: tests[name][0] for name in controller if name in tests}
    assert set(controller) <= set(tests)

