# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Helm values role kai_scheduler gives KAI Scheduler's chart, held against the chart of the pinned release.

KAI's values.yaml does not list ``binder.cdiEnabled``: its template ``kai-config.yaml`` reads it only when it is
set (``hasKey .Values.binder "cdiEnabled"``), so the check is against that template, verbatim from the pinned tag
(tests/upstream/kai-scheduler/<tag>/kai-config.yaml.tpl, source in tests/upstream/README.md). Helm ignores a key
no template reads: a misspelt key would install KAI without its CDI setting, and its binder would then disagree
with the GPU Operator's.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.support import upstream

REPO = Path(__file__).resolve().parents[3]
ROLE = REPO / "roles" / "kai_scheduler"
PINNED = str(yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())["kai_scheduler_chart_version"])


def role_value_paths() -> list[tuple[str, ...]]:
    """The key paths of the role's own values (the dict literal of the helm task's release_values)."""
    tasks = yaml.safe_load((ROLE / "tasks" / "main.yml").read_text())
    helm = [t["kubernetes.core.helm"] for t in tasks if "kubernetes.core.helm" in t]
    assert len(helm) == 1
    expression = helm[0]["release_values"]
    paths = [tuple(m) for m in re.findall(r"\{'(\w+)': \{'(\w+)':", expression)]
    assert paths, expression
    return paths


def template() -> str:
    path = upstream.release("kai-scheduler", PINNED) / "kai-config.yaml.tpl"
    if not path.exists():
        pytest.skip(f"UPSTREAM TEMPLATE MISSING: {path} (tests/upstream)")
    return path.read_text()


def reads(text: str, path: tuple[str, ...]) -> bool:
    parent, key = ".Values." + ".".join(path[:-1]), path[-1]
    return bool(re.search(re.escape(parent + "." + key) + r"\b", text)) or ('hasKey %s "%s"' % (parent, key)) in text


def test_every_value_the_role_sets_is_read_by_the_pinned_chart() -> None:
    text = template()
    for path in role_value_paths():
        assert reads(text, path), "%s is not read by KAI Scheduler %s's chart" % (".".join(path), PINNED)


@pytest.mark.parametrize("path", [("binder", "cdi"), ("admission", "cdiEnabled"), ("binder", "cdienabled")])
def test_a_key_the_chart_does_not_read_is_found(path: tuple[str, ...]) -> None:
    """The check above can fail: near misses are not read by the template."""
    assert not reads(template(), path)
