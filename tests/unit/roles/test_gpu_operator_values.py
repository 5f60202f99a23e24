# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Helm values role gpu_operator gives NVIDIA's gpu-operator chart, held against the chart's own values.yaml
of the pinned release (../shared/upstream/gpu-operator/<tag>/values.yaml; the chart publishes no values schema).

Helm ignores a key the chart does not read: a misspelt or moved key (``dcgmExporter.servicemonitor``,
``toolkit.envs``) would install without error and without its setting. So every key path the role sets must be
a key of the pinned release's values, with a value of the same kind (a list where upstream has a list, a mapping
where it has one), or, for the one key upstream documents only as a commented example in its values.yaml
(``dcgmExporter.config``: name, create, data), that example must be there.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import upstream

REPO = Path(__file__).resolve().parents[3]
ROLE = REPO / "roles" / "gpu_operator"
PINNED = str(yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())["gpu_operator_chart_version"])
# Keys upstream's values.yaml documents only in a comment of its block: (path, the lines of that example).
COMMENTED = {("dcgmExporter", "config"): ("# config:", "name:", "create: true", "data:")}


def role_values() -> dict:
    """The role's own values (``gpu_operator__values`` of the helm task), before the user's are combined in."""
    tasks = yaml.safe_load((ROLE / "tasks" / "main.yml").read_text())
    helm = [t for t in tasks if "kubernetes.core.helm" in t and "release_values" in t["kubernetes.core.helm"]]
    assert len(helm) == 1, [t.get("name") for t in helm]
    assert "gpu_operator__values" in helm[0]["kubernetes.core.helm"]["release_values"]
    return helm[0]["vars"]["gpu_operator__values"]


def key_paths(values: dict, prefix: tuple = ()) -> list[tuple[tuple, Any]]:
    out = []
    for key, value in values.items():
        if isinstance(value, dict) and value:
            out.extend(key_paths(value, (*prefix, key)))
        else:
            out.append(((*prefix, key), value))
    return out


def upstream_values() -> tuple[dict, str]:
    path = upstream.release("gpu-operator", PINNED) / "values.yaml"
    if not path.exists():
        pytest.skip(f"UPSTREAM VALUES MISSING: {path} (../shared/upstream)")
    text = path.read_text()
    return yaml.safe_load(text), text


def lookup(values: dict, path: tuple) -> tuple[bool, Any]:
    node: Any = values
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False, None
        node = node[key]
    return True, node


def block(text: str, key: str) -> str:
    """The lines of top-level ``key:`` in values.yaml, up to the next top-level key."""
    lines = text.splitlines()
    start = lines.index(key + ":")
    end = next((i for i in range(start + 1, len(lines)) if lines[i][:1].isalpha()), len(lines))
    return "\n".join(lines[start:end])


def test_the_role_sets_values_that_the_pinned_chart_reads() -> None:
    ours = key_paths(role_values())
    assert len(ours) >= 10, ours  # the walk found the role's values
    values, text = upstream_values()
    for path, value in ours:
        if path in COMMENTED:
            example = block(text, path[0])
            for line in COMMENTED[path]:
                assert line in example, (path, line, "gpu-operator %s values.yaml" % PINNED)
            continue
        found, theirs = lookup(values, path)
        assert found, "%s is not a value of gpu-operator %s" % (".".join(path), PINNED)
        for kind in (list, dict):
            if isinstance(value, kind):
                assert isinstance(theirs, kind), (".".join(path), type(theirs).__name__)


@pytest.mark.parametrize("path", [("toolkit", "envs"), ("dcgmExporter", "servicemonitor", "enabled"),
                                  ("nodeFeatureDiscovery", "worker", "tolerations")])
def test_a_key_the_chart_does_not_read_is_found(path: tuple) -> None:
    """The check above can fail: near misses of keys the role sets are not in upstream's values."""
    values, _text = upstream_values()
    assert lookup(values, path) == (False, None)


def test_the_lab_stand_in_chart_claims_only_the_pinned_release() -> None:
    """The lab's gpu-operator stand-in is published at the pinned version only: it is written to that release's
    API (its ClusterPolicy CRD is held against it in tests/unit/lab/test_lab_crds.py), not to older ones."""
    chart = REPO / "lab" / "charts" / "gpu-operator"
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    assert meta["version"] == meta["appVersion"] == PINNED
    assert (chart / "lab-versions").read_text().split() == [PINNED]
