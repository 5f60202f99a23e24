# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one CI rule of the test suite, as a pytest plugin (``tests/conftest.py`` loads it).

CI is detected one way: ``CI=true`` in the environment (``.ci/run`` exports it). A test that is
skipped elsewhere because a component is missing says why, loudly; in CI every component must be
there, so any skip (of a test, of a fixture, or of a whole file with ``importorskip``) is turned
into a failure, except under ``tests/gpu`` (CI has no GPU; ``tests/gpu/run.sh`` runs those where
one is lent).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() == "true"
MAY_SKIP_IN_CI = (ROOT / "tests" / "gpu",)


def _may_skip(path: Path) -> bool:
    return any(path == root or root in path.parents for root in MAY_SKIP_IN_CI)


def _fail_the_skip(report: pytest.TestReport | pytest.CollectReport, path: Path) -> None:
    if not (IN_CI and report.skipped and not _may_skip(path)):
        return
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    report.outcome = "failed"
    report.longrepr = f"skipped in CI, where every component must be present: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    outcome = yield
    _fail_the_skip(outcome.get_result(), Path(str(item.path)))


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> object:
    outcome = yield
    _fail_the_skip(outcome.get_result(), Path(str(collector.path)))
