# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CI rule (tests/support/ci.py): a skip fails in CI, except under tests/gpu; elsewhere it stays a skip."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ci

SUITE = {
    "test_skips.py": "import pytest\n\ndef test_skipped():\n    pytest.skip('no widget here')\n\n"
                     "def test_fine():\n    pass\n",
    "test_module_skip.py": "import pytest\npytest.importorskip('no_such_module_for_the_ci_rule')\n\n"
                           "def test_never():\n    pass\n",
}


def _run(where: Path, ci_value: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci_value is not None:
        env["CI"] = ci_value
    env["PYTHONPATH"] = os.pathsep.join([str(ci.ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.support.ci", "-p", "no:cacheprovider",
                           "-q", "-rs", "--continue-on-collection-errors", "--rootdir", str(where), str(where)],
                          capture_output=True, text=True, check=False, env=env, cwd=where)


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    for name, text in SUITE.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_a_skip_fails_in_ci_with_its_reason(suite: Path) -> None:
    run = _run(suite, "true")
    assert run.returncode != 0, run.stdout
    assert "skipped in CI, where every component must be present" in run.stdout
    assert "no widget here" in run.stdout and "no_such_module_for_the_ci_rule" in run.stdout


def test_outside_ci_a_skip_stays_a_skip_and_says_why(suite: Path) -> None:
    for value in (None, "", "false"):
        run = _run(suite, value)
        assert run.returncode == 0, run.stdout
        assert "no widget here" in run.stdout and "2 skipped" in run.stdout


def test_only_tests_gpu_may_skip_in_ci() -> None:
    assert ci.MAY_SKIP_IN_CI == (ci.ROOT / "tests" / "gpu",)
    gpu_test = ci.ROOT / "tests" / "gpu" / "test_nvml_real.py"
    assert ci._may_skip(gpu_test) and gpu_test.exists()
    assert not ci._may_skip(ci.ROOT / "tests" / "unit" / "support" / "test_ci.py")


def test_ci_is_detected_in_one_place() -> None:
    """Only tests/support/ci.py reads CI from the environment: a test of its own that fails instead of skipping in
    CI would be a second rule (and one that reads CI=1 differently from CI=true)."""
    probes = ('environ.get("CI"', "environ['CI']", 'environ["CI"]', 'getenv("CI"')
    readers = [str(path.relative_to(ci.ROOT)) for folder in ("tests", "lab", "tools")
               for path in (ci.ROOT / folder).rglob("*.py")
               if path not in (Path(ci.__file__), Path(__file__))
               and any(probe in path.read_text() for probe in probes)]
    assert readers == []
