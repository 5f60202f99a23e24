# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters gpu_gate_report and gpu_gate_check_line, as roles gpu_gate and node_join call them.

Held at the filter layer (the report's parsing is held in module_utils/_gpu/test_gate.py): the ``node`` argument
(a report of another node never gates this one; without it any node's report reads), what comes back for
text a node returns that is no report (never an exception: valid=false with the reason), the start time the role
names a file after, and the person's line per check.
"""
from __future__ import annotations

import json

import pytest

from ansible_collections.gpucloud.baremetal.plugins.filter.gpu_gate import FilterModule
from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu import gate

FILTERS = FilterModule().filters()
READ = FILTERS["gpu_gate_report"]
LINE = FILTERS["gpu_gate_check_line"]
KEYS = {"valid", "passed", "profile", "started", "problem"}


def a_report(node: object = "gpu-node-1", ok: bool = True, **changes: object) -> str:
    checks = [gate.check("inventory", True, "8 GPUs as the fleet says", 8, 8),
              gate.check("nccl_all_reduce", ok, "all_reduce_perf: 480.00 GB/s", 480.0, 460.0)]
    rep = gate.report(str(node), "quick", "2026-03-01T10:20:30Z", 612.3, checks, [], [], {})
    rep.update(node=node, **changes)
    return json.dumps(rep)


def test_both_filters_are_there() -> None:
    assert set(FILTERS) == {"gpu_gate_report", "gpu_gate_check_line"}
    assert all(callable(f) for f in FILTERS.values())


def test_a_passing_report_of_this_node_reads_as_passed() -> None:
    expected = {"valid": True, "passed": True, "profile": "quick", "started": "2026-03-01T10:20:30Z", "problem": None}
    assert READ(a_report(), node="gpu-node-1") == expected


def test_a_failed_report_is_valid_and_names_the_failed_check() -> None:
    out = READ(a_report(ok=False), "gpu-node-1")
    assert out["valid"] is True and out["passed"] is False and out["problem"] == "failed: nccl_all_reduce"


def test_the_node_argument_refuses_a_report_copied_from_another_node() -> None:
    """roles/gpu_gate/tasks/verdict.yml: gpu_gate_report(node=inventory_hostname)."""
    out = READ(a_report("gpu-node-2"), node="gpu-node-1")
    assert out == {"valid": False, "passed": False, "profile": None, "started": None,
                   "problem": "a report of another node (gpu-node-2)"}


def test_without_a_node_any_nodes_report_reads() -> None:
    """roles/gpu_gate/tasks/main.yml names the kept file after ``(... | gpu_gate_report).started``, unchecked node."""
    assert READ(a_report("gpu-node-2"))["valid"] is True
    assert READ(a_report("gpu-node-2"), None)["valid"] is True


def test_the_node_is_compared_as_text() -> None:
    """A host name that templating made a number (``10``) still matches the report's ``"10"``."""
    assert READ(a_report("10"), node=10)["valid"] is True
    assert READ(a_report("10"), node=11)["problem"] == "a report of another node (10)"


@pytest.mark.parametrize("text", [
    None, "", "   \n", 42, 4.2, True, ["{}"], {"schema": gate.REPORT_SCHEMA}, b'{"schema": "x"}',
    "{not json", "null", "[]", '"a string"', "\x00\x01\x02", "<html>502 Bad Gateway</html>",
    json.dumps({"schema": gate.REPORT_SCHEMA}),
    json.dumps({"schema": gate.REPORT_SCHEMA, "passed": "true", "profile": "quick", "started": "2026-03-01T10:20:30Z"}),
    "x" * (gate.MAX_REPORT_CHARS + 1),
])
def test_what_a_node_returns_that_is_no_report_is_not_valid_and_says_why(text: object) -> None:
    out = READ(text, node="gpu-node-1")
    assert set(out) == KEYS
    assert out["valid"] is False and out["passed"] is False and out["started"] is None
    assert isinstance(out["problem"], str) and out["problem"]


@pytest.mark.parametrize("started", ["../../../etc/cron.d/x", "2026-03-01T10:20:30Z/../x", "2026-03-01T10:20:30Z\n",
                                     "2026-03-01T10:20:30+00:00", 20260301])
def test_a_start_time_that_could_name_another_file_is_not_valid(started: object) -> None:
    """The role writes the kept report to reports/<started without ':'>.json on the boot server."""
    out = READ(a_report(started=started), node="gpu-node-1")
    assert out["valid"] is False and out["started"] is None
    assert out["problem"] == "passed, profile or started is missing or not as the gate writes it"


def test_a_check_reads_as_one_line_pass_or_fail() -> None:
    assert LINE(gate.check("inventory", True, "8 GPUs as the fleet says")) == "PASS inventory: 8 GPUs as the fleet says"
    assert LINE(gate.check("kernel_log", False, "1 fatal Xid")) == "FAIL kernel_log: 1 fatal Xid"


def test_a_reports_checks_map_to_their_lines_in_order() -> None:
    """roles/gpu_gate/tasks/main.yml: ``report.checks | map('gpucloud.baremetal.gpu_gate_check_line')``."""
    checks = json.loads(a_report(ok=False))["checks"]
    assert [LINE(c) for c in checks] == ["PASS inventory: 8 GPUs as the fleet says",
                                         "FAIL nccl_all_reduce: all_reduce_perf: 480.00 GB/s"]


@pytest.mark.parametrize("passed", [False, None, 0, "", "false", "no", 1])
def test_a_check_that_did_not_pass_never_reads_as_pass(passed: object) -> None:
    assert LINE({"name": "dcgm", "passed": passed, "message": "m"}) == "FAIL dcgm: m"
    assert LINE({"name": "dcgm", "message": "m"}) == "FAIL dcgm: m"


@pytest.mark.parametrize("check", [None, "a line", 3, ["PASS", "x"]])
def test_a_check_that_is_no_mapping_is_shown_as_it_is(check: object) -> None:
    assert LINE(check) == str(check)
