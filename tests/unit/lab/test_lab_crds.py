# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's stand-in CRDs (lab/charts/*/crds/) held field by field against the real upstream CRDs of the
releases the roles pin.

The upstream copies are test data in ../shared/upstream/<project>/<tag>/ (beside the checkout, never
inside it). KAI's Queue CRD is upstream's, verbatim. The ClusterPolicy CRD is written to the same API:
every property we define exists upstream at the same path with the same type, enum, item type and
validation keywords, and every upstream `required` list at a path we define is ours too. Where ours
stops descending, it keeps unknown fields.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import upstream

REPO = Path(__file__).resolve().parents[3]
UPSTREAM = REPO.parent / "shared" / "upstream"
CHARTS = REPO / "lab" / "charts"


def _pinned(role: str, variable: str) -> str:
    return str(yaml.safe_load((REPO / "roles" / role / "defaults" / "main.yml").read_text())[variable])


KAI = _pinned("kai_scheduler", "kai_scheduler_chart_version")
GPU_OPERATOR = _pinned("gpu_operator", "gpu_operator_chart_version")
# (ours, upstream copy of the pinned tag, whether ours must define every upstream property)
CRDS = {
    "queue": (CHARTS / "kai-scheduler" / "crds" / "scheduling.run.ai_queues.yaml",
              f"kai-scheduler/{KAI}/scheduling.run.ai_queues.crd.yaml", True),
    "clusterpolicy": (CHARTS / "gpu-operator" / "crds" / "nvidia.com_clusterpolicies.yaml",
                      f"gpu-operator/{GPU_OPERATOR}/nvidia.com_clusterpolicies.crd.yaml", False),
}

# Validation keywords that, where ours sets them, must be upstream's.
KEYWORDS = ("type", "enum", "default", "format", "pattern", "minimum", "maximum", "minLength", "maxLength",
            "minItems", "maxItems", "nullable", "anyOf", "x-kubernetes-int-or-string", "x-kubernetes-list-type",
            "x-kubernetes-list-map-keys")
PRESERVE = "x-kubernetes-preserve-unknown-fields"

Schema = dict[str, Any]


def load(path: Path) -> Schema:
    """The document, with YAML aliases made separate copies (so that a test can change one place)."""
    return json.loads(json.dumps(yaml.safe_load(path.read_text())))


def upstream_dir() -> Path:
    if not UPSTREAM.is_dir():
        pytest.skip(f"../shared/upstream is missing ({UPSTREAM}): no upstream CRDs to compare with")
    return UPSTREAM


def upstream_file(relative: str) -> Path:
    """<project>/<tag>/<file> from ../shared/upstream, or tests/upstream for a release not there yet."""
    upstream_dir()
    project, tag, name = relative.split("/", 2)
    return upstream.release(project, tag) / name


def strip_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: strip_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [strip_descriptions(v) for v in node]
    return node


def compare_schema(ours: Schema, theirs: Schema, path: str = "", complete: bool = False) -> list[str]:
    """What differs between our schema node and upstream's at `path` (empty when ours is true to it).

    complete: ours must also define every property upstream defines (else: where ours leaves out
    properties, it must keep unknown fields).
    """
    where = path or "<root>"
    problems = []
    for key in KEYWORDS:
        if key in ours and strip_descriptions(ours[key]) != strip_descriptions(theirs.get(key)):
            problems.append(f"{where}: {key} is {ours[key]!r}, upstream {theirs.get(key)!r}")
    if "type" not in ours and "type" in theirs:
        problems.append(f"{where}: no type, upstream {theirs['type']!r}")
    if "enum" in theirs and "enum" not in ours:
        problems.append(f"{where}: no enum, upstream {theirs['enum']!r}")
    if sorted(ours.get("required", [])) != sorted(theirs.get("required", [])):
        problems.append(f"{where}: required {ours.get('required', [])!r}, upstream {theirs.get('required', [])!r}")

    our_props, their_props = ours.get("properties", {}), theirs.get("properties", {})
    for name, prop in our_props.items():
        if name not in their_props:
            problems.append(f"{path}.{name}: not an upstream field (upstream has {sorted(their_props)})")
        else:
            problems += compare_schema(prop, their_props[name], f"{path}.{name}", complete)
    missing = sorted(set(their_props) - set(our_props))
    if missing and (complete or not ours.get(PRESERVE)):
        problems.append(f"{where}: upstream fields missing here: {missing}"
                        + ("" if complete else f" (or mark it {PRESERVE})"))

    if "items" in theirs or "items" in ours:
        if "items" not in ours or "items" not in theirs:
            problems.append(f"{where}: items {'missing' if 'items' not in ours else 'not upstream'}")
        else:
            problems += compare_schema(ours["items"], theirs["items"], f"{path}[]", complete)

    if "additionalProperties" in ours:
        if not isinstance(theirs.get("additionalProperties"), dict):
            problems.append(f"{where}: additionalProperties, upstream has none")
        else:
            problems += compare_schema(ours["additionalProperties"], theirs["additionalProperties"],
                                       f"{path}{{*}}", complete)
    elif isinstance(theirs.get("additionalProperties"), dict) and not ours.get(PRESERVE):
        problems.append(f"{where}: upstream is a map (additionalProperties), ours is not")
    return problems


def compare_crd(ours: Schema, theirs: Schema, complete: bool) -> list[str]:
    """Group, names, scope, versions (served/storage), subresources, printer columns, then the schema."""
    problems = []
    for key in ("group", "names", "scope"):
        if ours["spec"].get(key) != theirs["spec"].get(key):
            problems.append(f"spec.{key}: {ours['spec'].get(key)!r}, upstream {theirs['spec'].get(key)!r}")
    if ours["metadata"]["name"] != theirs["metadata"]["name"]:
        problems.append(f"metadata.name: {ours['metadata']['name']!r}, upstream {theirs['metadata']['name']!r}")
    our_versions = {v["name"]: v for v in ours["spec"]["versions"]}
    their_versions = {v["name"]: v for v in theirs["spec"]["versions"]}
    if sorted(our_versions) != sorted(their_versions):
        problems.append(f"versions: {sorted(our_versions)}, upstream {sorted(their_versions)}")
    for name in sorted(set(our_versions) & set(their_versions)):
        mine, real = our_versions[name], their_versions[name]
        for key in ("served", "storage", "subresources", "deprecated"):
            if mine.get(key) != real.get(key):
                problems.append(f"{name}.{key}: {mine.get(key)!r}, upstream {real.get(key)!r}")
        if "additionalPrinterColumns" in mine and (strip_descriptions(mine["additionalPrinterColumns"])
                                                   != strip_descriptions(real.get("additionalPrinterColumns"))):
            problems.append(f"{name}.additionalPrinterColumns differ from upstream")
        problems += compare_schema(mine["schema"]["openAPIV3Schema"], real["schema"]["openAPIV3Schema"],
                                   f"{name}:", complete)
    return problems


def schema_of(crd: Schema, version: str) -> Schema:
    return next(v for v in crd["spec"]["versions"] if v["name"] == version)["schema"]["openAPIV3Schema"]


def at(schema: Schema, *names: str) -> Schema:
    for name in names:
        schema = schema["items"] if name == "[]" else schema["properties"][name]
    return schema


def structural_problems(node: Schema, path: str = "") -> list[str]:
    """What the API server or pruning would trip on: an untyped node, an array without items, or an
    object that neither lists its fields, nor is a map, nor keeps unknown fields."""
    where = path or "<root>"
    problems = []
    if "type" not in node and not node.get("x-kubernetes-int-or-string"):
        problems.append(f"{where}: no type")
    if node.get("type") == "array" and "items" not in node:
        problems.append(f"{where}: array without items")
    if (node.get("type") == "object" and path not in ("", ".metadata") and not node.get("properties")
            and "additionalProperties" not in node and not node.get(PRESERVE)):
        problems.append(f"{where}: object without properties (would be pruned empty)")
    for name, prop in node.get("properties", {}).items():
        problems += structural_problems(prop, f"{path}.{name}")
    if isinstance(node.get("items"), dict):
        problems += structural_problems(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        problems += structural_problems(node["additionalProperties"], f"{path}{{*}}")
    return problems


@pytest.mark.parametrize("name", sorted(CRDS))
def test_our_crd_is_a_structural_v1_crd(name):
    ours = load(CRDS[name][0])
    assert ours["apiVersion"] == "apiextensions.k8s.io/v1" and ours["kind"] == "CustomResourceDefinition"
    assert ours["metadata"]["name"] == f"{ours['spec']['names']['plural']}.{ours['spec']['group']}"
    assert sum(1 for v in ours["spec"]["versions"] if v["storage"]) == 1
    for version in ours["spec"]["versions"]:
        assert structural_problems(version["schema"]["openAPIV3Schema"]) == []


def test_the_queue_crd_is_the_pinned_releases_verbatim():
    assert CRDS["queue"][0].read_bytes() == (upstream_file(CRDS["queue"][1])).read_bytes()


def test_the_stand_in_charts_are_published_at_the_pinned_versions():
    for chart, pinned in (("kai-scheduler", KAI), ("gpu-operator", GPU_OPERATOR)):
        assert pinned in (CHARTS / chart / "lab-versions").read_text().split(), chart


@pytest.mark.parametrize("name", sorted(CRDS))
def test_our_crd_matches_upstream(name):
    path, relative, complete = CRDS[name]
    theirs = load(upstream_file(relative))
    assert compare_crd(load(path), theirs, complete) == []


def test_queue_is_v2_served_and_stored_with_status():
    ours = load(CRDS["queue"][0])
    assert ours["spec"]["group"] == "scheduling.run.ai" and ours["spec"]["names"]["kind"] == "Queue"
    v2 = next(v for v in ours["spec"]["versions"] if v["name"] == "v2")
    assert v2["served"] and v2["storage"] and v2["subresources"] == {"status": {}}


def test_clusterpolicy_has_every_top_level_spec_field_and_the_parts_the_lab_uses():
    ours = load(CRDS["clusterpolicy"][0])
    theirs = load(upstream_file(CRDS["clusterpolicy"][1]))
    spec, their_spec = at(schema_of(ours, "v1"), "spec"), at(schema_of(theirs, "v1"), "spec")
    assert sorted(spec["properties"]) == sorted(their_spec["properties"])
    assert sorted(spec["required"]) == sorted(their_spec["required"])
    for part in ("driver", "toolkit", "devicePlugin", "dcgm", "dcgmExporter", "gfd", "migManager",
                 "nodeStatusExporter"):
        assert at(spec, part, "enabled")["type"] == "boolean"
    assert at(spec, "dcgmExporter", "serviceMonitor", "enabled")["type"] == "boolean"
    assert at(spec, "operator", "defaultRuntime")["type"] == "string"
    assert at(spec, "mig", "strategy")["enum"] == ["none", "single", "mixed"]
    assert {"enabled", "default"} <= set(at(spec, "cdi")["properties"])
    status = at(schema_of(ours, "v1"), "status")
    assert status["required"] == ["state"] and "ready" in at(status, "state")["enum"]
    assert {"namespace", "conditions"} <= set(status["properties"])


def test_the_comparison_reports_drift():
    """Renaming a field, changing a type, an enum or a required list, or dropping a field is reported."""
    upstream = load(upstream_file(CRDS["queue"][1]))
    ours = load(CRDS["queue"][0])
    assert compare_crd(ours, upstream, complete=True) == []

    renamed = copy.deepcopy(ours)
    gpu = at(schema_of(renamed, "v2"), "spec", "resources", "gpu")
    gpu["properties"]["quotta"] = gpu["properties"].pop("quota")
    problems = compare_crd(renamed, upstream, complete=True)
    assert any(".spec.resources.gpu.quotta: not an upstream field" in p for p in problems), problems
    assert any("v2:.spec.resources.gpu: upstream fields missing here: ['quota']" in p for p in problems), problems

    retyped = copy.deepcopy(ours)
    at(schema_of(retyped, "v2"), "spec", "resources", "gpu", "quota")["type"] = "string"
    assert compare_crd(retyped, upstream, complete=True) == [
        "v2:.spec.resources.gpu.quota: type is 'string', upstream 'number'"]

    unrequired = copy.deepcopy(ours)
    at(schema_of(unrequired, "v2"), "status", "conditions", "[]")["required"] = ["type"]
    assert len(compare_crd(unrequired, upstream, complete=True)) == 1

    moved = copy.deepcopy(upstream)
    moved["spec"]["versions"][0]["storage"] = False
    moved["spec"]["names"]["plural"] = "queue"
    assert len(compare_crd(ours, moved, complete=True)) == 2

    policy = load(CRDS["clusterpolicy"][0])
    policy_upstream = load(upstream_file(CRDS["clusterpolicy"][1]))
    at(schema_of(policy, "v1"), "spec", "mig", "strategy")["enum"] = ["none", "single", "mixed", "all"]
    del at(schema_of(policy, "v1"), "spec", "daemonsets")["properties"]["tolerations"]
    assert sorted(compare_crd(policy, policy_upstream, complete=False)) == [
        "v1:.spec.daemonsets: upstream fields missing here: ['tolerations'] "
        "(or mark it x-kubernetes-preserve-unknown-fields)",
        "v1:.spec.mig.strategy: enum is ['none', 'single', 'mixed', 'all'], upstream ['none', 'single', 'mixed']",
    ]


def test_the_comparison_itself_without_upstream():
    """The same checks on small schemas, so that a clone without ../shared still tests the comparison."""
    theirs = {"type": "object", "required": ["a"], "properties": {
        "a": {"type": "string", "enum": ["x", "y"]},
        "b": {"type": "array", "items": {"type": "integer"}},
        "c": {"type": "object", "additionalProperties": {"type": "string"}},
    }}
    assert compare_schema(copy.deepcopy(theirs), theirs, complete=True) == []
    partial = {"type": "object", "required": ["a"], PRESERVE: True, "properties": {"a": theirs["properties"]["a"]}}
    assert compare_schema(partial, theirs) == []
    assert compare_schema(partial, theirs, complete=True) == ["<root>: upstream fields missing here: ['b', 'c']"]
    assert compare_schema({**partial, "required": []}, theirs) == ["<root>: required [], upstream ['a']"]
    wrong_items = copy.deepcopy(theirs)
    wrong_items["properties"]["b"]["items"]["type"] = "string"
    assert compare_schema(wrong_items, theirs) == [".b[]: type is 'string', upstream 'integer'"]
    no_enum = copy.deepcopy(theirs)
    del no_enum["properties"]["a"]["enum"]
    assert compare_schema(no_enum, theirs) == [".a: no enum, upstream ['x', 'y']"]
    not_a_map = copy.deepcopy(theirs)
    not_a_map["properties"]["c"] = {"type": "object"}
    assert compare_schema(not_a_map, theirs) == [".c: upstream is a map (additionalProperties), ours is not"]
