# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU fault alerts (roles/gpu_operator/files/prometheus-rules-gpucloud-v1.yml), held by Prometheus' own
promtool: the file loads as Prometheus loads it (``promtool check rules``) and every alert fires, and only fires,
where the test series of data/gpu-alerts.test.yml say (``promtool test rules``)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu import gate, health
from tests.support.tools import require

REPO = Path(__file__).resolve().parents[3]
RULES = REPO / "roles" / "gpu_operator" / "files" / "prometheus-rules-gpucloud-v1.yml"
TESTS = Path(__file__).parent / "data" / "gpu-alerts.test.yml"


def _alerts() -> list[str]:
    return [rule["alert"] for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]]


def test_the_rules_load_as_prometheus_loads_them() -> None:
    run = subprocess.run([require("promtool"), "check", "rules", str(RULES)], capture_output=True, text=True, check=False)
    assert run.returncode == 0 and f"SUCCESS: {len(_alerts())} rules found" in run.stdout, run.stdout + run.stderr


def test_every_alert_fires_where_it_should_and_nowhere_else() -> None:
    run = subprocess.run([require("promtool"), "test", "rules", TESTS.name], cwd=TESTS.parent, capture_output=True,
                         text=True, check=False)
    assert run.returncode == 0 and "SUCCESS" in run.stdout, run.stdout + run.stderr
    tests = yaml.safe_load(TESTS.read_text())
    assert [(REPO / "tests" / "unit" / "roles" / "data" / f).resolve() for f in tests["rule_files"]] == [RULES]
    fired = {check["alertname"] for case in tests["tests"] for check in case["alert_rule_test"] if check["exp_alerts"]}
    quiet = {check["alertname"] for case in tests["tests"] for check in case["alert_rule_test"]
             if not check["exp_alerts"]}
    assert fired == set(_alerts()), "an alert no test shows firing"
    assert quiet >= {"GpuFatalXid", "GpuFellOffTheBus", "GpuLost", "GpuThermalSlowdown", "GpuRowRemapPending"}


def test_a_wrong_expectation_fails_promtool(tmp_path: Path) -> None:
    """The harness itself: a test file that expects Xid 13 (restart the application) to be fatal fails."""
    tests = yaml.safe_load(TESTS.read_text())
    tests["rule_files"] = [str(RULES)]
    case = tests["tests"][0]
    case["input_series"] = [{"series": 'DCGM_EXP_XID_ERRORS_COUNT{gpu="0",UUID="GPU-x",xid="13"}', "values": "1 1"}]
    case["alert_rule_test"] = [{"eval_time": "1m", "alertname": "GpuFatalXid", "exp_alerts": [
        {"exp_labels": {"gpu": "0", "UUID": "GPU-x", "xid": "13", "severity": "critical",
                        "gpucloud_action": "drain_reset_gpu"}}]}]
    tests["tests"] = [case]
    (tmp_path / "wrong.test.yml").write_text(yaml.safe_dump(tests))
    run = subprocess.run([require("promtool"), "test", "rules", "wrong.test.yml"], cwd=tmp_path, capture_output=True,
                         text=True, check=False)
    output = run.stdout + run.stderr
    assert run.returncode != 0 and "FAILED" in output and "alertname: GpuFatalXid" in output, output


def test_the_rules_are_a_prometheusrule_spec_the_operators_crd_accepts() -> None:
    """The role applies the file's content as a PrometheusRule's spec: held against the Prometheus Operator's CRD
    (upstream v0.93.0, tests/upstream/), whose patterns check durations and names; a bad duration fails it."""
    import jsonschema

    crd = yaml.safe_load((REPO / "tests" / "upstream" / "prometheus-operator" / "v0.93.0" /
                          "monitoring.coreos.com_prometheusrules.yaml").read_text())
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    schema = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    # Draft 4 (OpenAPI v3's base); the CRD's schema itself is not checked against the metaschema: one of its
    # patterns uses Go's (?i) flag mid-expression, which Python's re refuses (a property our rules do not set).
    validator = jsonschema.Draft4Validator(schema)
    spec = yaml.safe_load(RULES.read_text())
    validator.validate(spec)
    spec["groups"][0]["rules"][0]["for"] = "10 minutes"
    with pytest.raises(jsonschema.ValidationError, match="10 minutes"):
        validator.validate(spec)


def test_an_xid_that_takes_a_node_out_in_production_also_fails_the_acceptance_gate() -> None:
    """The three Xid lists (the alerts that drain a node, the gate's fatal Xids, nvml_health's critical ones) differ
    by intent (the gate is stricter at commissioning: NVLink Xids 144-151 fail it, where the alert only warns), but
    a GPU that an alert would drain must never pass the gate, and nvml_health's critical Xids are fatal there too.
    Prometheus' label matchers are anchored (RE2): re.fullmatch reads them as Prometheus does."""
    draining = set()
    for group in yaml.safe_load(RULES.read_text())["groups"]:
        for rule in group["rules"]:
            matcher = re.search(r'xid(=~|=)"([^"]+)"', rule["expr"])
            if not matcher or not rule["labels"]["gpucloud_action"].startswith("drain_"):
                continue
            pattern = matcher.group(2) if matcher.group(1) == "=~" else re.escape(matcher.group(2))
            draining |= {code for code in range(256) if re.fullmatch(pattern, str(code))}
    assert {46, 48, 74, 79, 95, 119}.issubset(draining), sorted(draining)  # the matchers were read
    assert draining - gate.FATAL_XIDS == set(), "drained in production, passed at commissioning"
    assert set(health.CRITICAL_XIDS) - gate.FATAL_XIDS == set()
