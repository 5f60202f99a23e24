# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU gate's parsers and checks on the real tools' outputs (data/gate/, sources in its README.md),
the thresholds table, the report and what a node's report is read as."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu import gate
from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu.errors import GateError

DATA = Path(__file__).resolve().parents[1] / "data" / "gate"


def excerpts(name: str) -> dict[str, str]:
    """The excerpts of a sample file: each run of '### ' lines is the header of the text below it."""
    out: dict[str, str] = {}
    header, body = None, []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            if body or header is None:
                if header is not None:
                    out[header] = "\n".join(body) + "\n"
                header, body = line[4:], []
            else:
                header += " " + line[4:]
            continue
        body.append(line)
    if header is not None:
        out[header] = "\n".join(body) + "\n"
    return out


def excerpt(name: str, tag: str) -> str:
    found = [text for header, text in excerpts(name).items() if tag in header]
    assert len(found) == 1, (tag, list(excerpts(name)))
    return found[0]


def nvb(tag: str) -> str:
    return excerpt("nvbandwidth_stdout_sample.txt", tag)


def nccl(tag: str) -> str:
    return excerpt("nccl_tests_stdout_sample.txt", tag)


def test_the_sample_files_split_into_their_excerpts() -> None:
    assert len(excerpts("nvbandwidth_stdout_sample.txt")) == 5
    assert len(excerpts("nccl_tests_stdout_sample.txt")) == 5  # A, B, C, D, the synthesized block
    for name in ("nvbandwidth_stdout_sample.txt", "nccl_tests_stdout_sample.txt", "xid_sxid_kernel_log_samples.txt"):
        assert all("### " not in text for text in excerpts(name).values())


# ---------------------------------------------------------------- nvbandwidth (verbatim samples)

def test_nvbandwidth_v08_single_gpu_matrix_with_leading_space() -> None:
    cases = gate.parse_nvbandwidth(nvb("excerpt 1:"))
    assert cases == {"host_to_device_memcpy_sm": {"cells": [(0, 0, 25.13)], "sum": 25.13, "waived": False}}
    check = gate.bandwidth_check("h2d", cases, "host_to_device_memcpy_sm", 25.0)
    assert check["passed"] is True and check["measured"] == 25.13 and check["threshold"] == 25.0
    assert gate.bandwidth_check("h2d", cases, "host_to_device_memcpy_sm", 25.14)["passed"] is False


def test_nvbandwidth_older_layout_without_leading_space_h2d_and_d2h() -> None:
    cases = gate.parse_nvbandwidth(nvb("excerpt 3:"))
    assert set(cases) == {"host_to_device_memcpy_ce", "device_to_host_memcpy_ce"}
    h2d, d2h = cases["host_to_device_memcpy_ce"], cases["device_to_host_memcpy_ce"]
    assert [v for _r, _c, v in h2d["cells"]] == [25.50, 24.26, 23.90, 26.30, 26.28, 26.38, 26.09, 26.31]
    assert [(r, c) for r, c, _v in h2d["cells"]] == [(0, c) for c in range(8)]
    assert h2d["sum"] == 205.04 and d2h["sum"] == 214.28 and len(d2h["cells"]) == 8
    check = gate.bandwidth_check("h2d", cases, "host_to_device_memcpy_ce", 24.0)
    assert check["passed"] is False and check["measured"] == 23.90  # GPU 2 is below 24
    assert "(GPU 2)" in check["message"]
    assert gate.bandwidth_check("d2h", cases, "device_to_host_memcpy_ce", 26.0)["passed"] is True
    assert gate.bandwidth_check("d2h", cases, "device_to_host_memcpy_ce", 26.3)["measured"] == 26.25


def test_nvbandwidth_d2h_names_the_slowest_gpu_by_its_column() -> None:
    cases = gate.parse_nvbandwidth(nvb("excerpt 3:"))
    check = gate.bandwidth_check("d2h", cases, "device_to_host_memcpy_ce", 26.3)
    # CPU(row) <- GPU(column): the slowest cell 26.25 is column 2, i.e. GPU 2.
    assert "(GPU 2)" in check["message"]


def test_nvbandwidth_d2d_matrix_skips_the_na_diagonal() -> None:
    text = nvb("excerpt 2:")
    # The reporter elided the header lines, "Running ..." included: without it nothing can be attributed.
    with pytest.raises(GateError, match="nvbandwidth: no 'Running"):
        gate.parse_nvbandwidth(text)
    cases = gate.parse_nvbandwidth("Running device_to_device_memcpy_read_ce.\n" + text)
    d2d = cases["device_to_device_memcpy_read_ce"]
    assert len(d2d["cells"]) == 30 and all(r != c for r, c, _v in d2d["cells"])  # 6x6 less the diagonal
    assert d2d["sum"] == 715.53 and abs(sum(v for _r, _c, v in d2d["cells"]) - 715.53) < 0.05
    check = gate.bandwidth_check("d2d", cases, "device_to_device_memcpy_read_ce", 21.81)
    assert check["passed"] is False and check["measured"] == 21.80 and "GPU 0 -> GPU 5" in check["message"]
    assert gate.bandwidth_check("d2d", cases, "device_to_device_memcpy_read_ce", 21.80)["passed"] is True


def test_nvbandwidth_assert_failure_fails_its_check() -> None:
    cases = gate.parse_nvbandwidth(nvb("excerpt 4:"))
    assert cases["device_to_device_memcpy_read_ce"]["cells"] == []
    assert cases["device_to_device_memcpy_read_ce"]["sum"] is None
    check = gate.bandwidth_check("d2d", cases, "device_to_device_memcpy_read_ce", 1.0)
    assert check["passed"] is False and check["message"].endswith("no matrix")


def test_nvbandwidth_waived_lines_never_pass() -> None:
    with pytest.raises(GateError):  # "Waived:" has no test name and no Running line
        gate.parse_nvbandwidth(nvb("excerpt 5:"))
    # h2d ran, d2d was waived (printed as a bare "Waived:" after the earlier test's SUM)
    cases = gate.parse_nvbandwidth(nvb("excerpt 1:") + nvb("excerpt 5:"))
    assert gate.bandwidth_check("d2d", cases, "device_to_device_memcpy_read_ce", 1.0) == gate.check(
        "d2d", False, "nvbandwidth device_to_device_memcpy_read_ce: not run", threshold=1.0)
    # constructed: a waived test case after its Running line
    cases = gate.parse_nvbandwidth("Running device_to_device_memcpy_read_ce.\nWaived: \n")
    check = gate.bandwidth_check("d2d", cases, "device_to_device_memcpy_read_ce", 1.0)
    assert check["passed"] is False and check["message"].endswith("waived")


def test_nvbandwidth_error_line_and_missing_sum_fail() -> None:
    text = nvb("excerpt 1:")
    cases = gate.parse_nvbandwidth(text.replace("SUM host_to_device_memcpy_sm 25.13", "Error: out of memory"))
    check = gate.bandwidth_check("h2d", cases, "host_to_device_memcpy_sm", 1.0)
    assert check["passed"] is False and check["message"].endswith("error: out of memory")
    cases = gate.parse_nvbandwidth(text.replace("SUM host_to_device_memcpy_sm 25.13", ""))
    assert gate.bandwidth_check("h2d", cases, "host_to_device_memcpy_sm", 1.0)["message"].endswith("no SUM line")


# ---------------------------------------------------------------- nccl-tests

def test_nccl_current_header_two_rows_largest_size_min_of_both_halves() -> None:
    result = gate.parse_nccl(nccl("VERBATIM excerpt A"))
    assert result["gpus"] == 1 and result["out_of_bounds"] is None
    assert result["rows"] == [{"size": 8192, "busbw": 0.23, "wrong": 0}, {"size": 16384, "busbw": 0.52, "wrong": 0}]
    # The excerpt ends before the footer: a run that did not print "# Out of bounds values" is not a pass.
    assert "did not finish" in gate.nccl_check(result, 0.5, 1)["message"]
    result = {**result, "out_of_bounds": 0}
    check = gate.nccl_check(result, 0.5, 1)
    assert check["passed"] is True and check["measured"] == 0.52  # the largest size, out-of-place 0.52 < in-place 0.53
    assert gate.nccl_check(result, 0.525, 1)["passed"] is False
    assert "ran on 1 GPUs, not 2" in gate.nccl_check(result, 0.1, 2)["message"]


def test_nccl_headers_without_rows_raise() -> None:
    for tag in ("VERBATIM excerpt B", "VERBATIM excerpt C"):
        with pytest.raises(GateError, match="all_reduce_perf: no result row"):
            gate.parse_nccl(nccl(tag))


def test_nccl_footer_sample() -> None:
    result = gate.parse_nccl(textwrap.dedent(nccl("VERBATIM excerpt D")))
    assert result == {"rows": [{"size": 134217728, "busbw": 122.57, "wrong": 0}], "gpus": None, "out_of_bounds": 0}
    assert gate.nccl_check(result, 120.0, 4)["passed"] is True  # no nThread line: the count is not known


def test_nccl_8xh100_16g_against_the_h100_floor() -> None:
    text = nccl("SYNTHESIZED")
    result = gate.parse_nccl(text)
    assert result["gpus"] == 8 and result["out_of_bounds"] == 0
    assert result["rows"] == [{"size": 16 << 30, "busbw": 480.27, "wrong": 0}]
    floors, _pattern = gate.thresholds_for("H100-SXM5-80GB", None)
    check = gate.nccl_check(result, floors["nccl_busbw"], 8)
    assert check["passed"] is True and check["measured"] == 480.27 and check["threshold"] == 460.0
    assert gate.nccl_check(result, 481.0, 8)["passed"] is False


def test_nccl_wrong_results_and_out_of_bounds_fail() -> None:
    text = nccl("SYNTHESIZED")
    row = " 17179869184    4294967296     float     sum      -1    62600  274.44  480.27       0    62550  274.66  480.65       0"
    assert row in text
    wrong = text.replace(row, row[:-1] + "7")
    result = gate.parse_nccl(wrong)
    assert result["rows"][0]["wrong"] == 7
    check = gate.nccl_check(result, 460.0, 8)
    assert check["passed"] is False and "7 wrong results" in check["message"]
    # the footer nccl-tests prints then ("# %-20s : %d %s", nccl-tests issue #131)
    bounds = text.replace("# Out of bounds values : 0 OK", "# Out of bounds values : 7 FAILED")
    result = gate.parse_nccl(bounds)
    assert result["out_of_bounds"] == 7 and gate.nccl_check(result, 460.0, 8)["passed"] is False
    # validation off prints N/A in #wrong: no wrong result counted
    off = gate.parse_nccl(text.replace(row, row[:-1] + "N/A"))
    assert off["rows"][0]["wrong"] == 0


# ---------------------------------------------------------------- DCGM

def test_dcgm4_sample_fail_results_with_their_gpu_and_test_summary() -> None:
    results = gate.parse_dcgm((DATA / "dcgm4_diag_json_CONSTRUCTED.json").read_text())
    assert [(r["test"], r["category"], r["entity"], r["status"]) for r in results] == [
        ("software", "Deployment", 0, "Pass"), ("software", "Deployment", 1, "Fail"),
        ("software", "Deployment", None, "Fail"),
        ("targeted_stress", "Stress", 0, "Pass"), ("targeted_stress", "Stress", 1, "Skip"),
        ("targeted_stress", "Stress", None, "Pass")]
    assert results[1]["info"].startswith("Persistence mode for GPU 1 is disabled.")
    check = gate.dcgm_check(results, 2)
    assert check["passed"] is False and check["measured"] == {"failed": 2, "passed": 3}
    assert check["message"].startswith("DCGM diag level 2: 2 of 6 results failed: software GPU 1 Fail: Persistence")


def test_dcgm3_sample_gpu_id_strings_and_warnings_key() -> None:
    results = gate.parse_dcgm((DATA / "dcgm3_diag_json_CONSTRUCTED.json").read_text())
    assert [(r["test"], r["entity"], r["status"]) for r in results] == [
        ("Denylist", None, "Pass"), ("NVML Library", None, "Pass"), ("Persistence Mode", 1, "Fail"),
        ("PCIe", "0", "Pass"), ("PCIe", "1", "Fail")]
    assert results[2]["info"] == "Persistence mode for GPU 1 is disabled. ..."  # DCGM 3's "warnings" key
    assert results[3]["info"].startswith("GPU 0 GPU to Host bandwidth")  # info: one string in DCGM 3
    check = gate.dcgm_check(results, 3)
    assert check["passed"] is False and "Persistence Mode GPU 1 Fail" in check["message"]
    assert "PCIe GPU 1 Fail" in check["message"]


def test_dcgm_all_pass_or_skip_passes_and_warn_is_not_a_failure() -> None:
    data = json.loads((DATA / "dcgm4_diag_json_CONSTRUCTED.json").read_text())
    software = data["DCGM Diagnostic"]["test_categories"][0]["tests"][0]
    software["results"][1] = {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 1, "status": "Warn"}
    software["test_summary"] = {"status": "Pass"}
    check = gate.dcgm_check(gate.parse_dcgm(json.dumps(data)), 1)
    assert check["passed"] is True and check["measured"] == {"failed": 0, "passed": 4}


def test_dcgm_runtime_error_and_non_json_raise() -> None:
    # HelperDisplayFailureMessage: the runtime error sits under the root key
    for root in ("DCGM Diagnostic", "DCGM GPU Diagnostic"):
        with pytest.raises(GateError):
            gate.parse_dcgm(json.dumps({root: {"version": "4.2.3", "runtime_error": "Unable to connect to host engine"}}))
    with pytest.raises(GateError, match="runtime error: boom"):
        gate.parse_dcgm(json.dumps({"runtime_error": "boom"}))
    with pytest.raises(GateError, match="dcgmi diag: the output is not JSON"):
        gate.parse_dcgm("Error: unable to establish a connection to the specified host: localhost\n")
    with pytest.raises(GateError, match="not an object"):
        gate.parse_dcgm("[]")


def test_dcgm_runtime_error_under_the_root_key_is_named() -> None:
    with pytest.raises(GateError, match="Unable to connect to host engine"):
        gate.parse_dcgm(json.dumps({"DCGM Diagnostic": {"version": "4.2.3",
                                                        "runtime_error": "Unable to connect to host engine"}}))


def test_dcgm_wrong_shape_raises_gate_error() -> None:
    with pytest.raises(GateError):
        gate.parse_dcgm(json.dumps({"DCGM Diagnostic": {"test_categories": ["Deployment"]}}))


# ---------------------------------------------------------------- kernel log

def test_kernel_log_samples_xid_and_sxid() -> None:
    events = gate.parse_kernel_log((DATA / "xid_sxid_kernel_log_samples.txt").read_text())
    assert [(e["kind"], e["code"], e["fatal"]) for e in events] == [
        ("xid", 13, False), ("xid", 79, True), ("sxid", 20009, False), ("sxid", 28006, False),
        ("sxid", 24007, True), ("sxid", 12028, False)]
    assert events[0]["pci"] == "PCI:0000:cb:00" and events[4]["pci"] == "PCI:0000:c3:00.0"
    assert events[4]["device"] == "nvidia-nvswitch0" and events[5]["device"] == "nvidia-nvswitch2"
    check, warnings = gate.kernel_log_check(events)
    assert check["passed"] is False and check["measured"] == ["sxid 24007", "xid 79"]
    assert check["message"].startswith("2 fatal Xid/SXid since boot, first XID 79 on PCI:0000:3b:00")
    assert len(warnings) == 4 and warnings[0].startswith("XID 13 on PCI:0000:cb:00: pid='<unknown>'")


def test_kernel_log_only_non_fatal_passes_with_warnings() -> None:
    text = (DATA / "xid_sxid_kernel_log_samples.txt").read_text()
    kept = "\n".join(line for line in text.splitlines() if ": 79," not in line and "24007" not in line)
    check, warnings = gate.kernel_log_check(gate.parse_kernel_log(kept))
    assert check["passed"] is True and check["message"] == "no fatal Xid/SXid since boot (4 other)"
    assert len(warnings) == 4


# ---------------------------------------------------------------- never a pass on what a tool never prints

GARBAGE = ["", "   \n", "Segmentation fault (core dumped)\n", "\x00\x01\x02", "<html>502 Bad Gateway</html>"]


@pytest.mark.parametrize("text", [*GARBAGE, (DATA / "nvbandwidth_json_sample.json").read_text()])
def test_nvbandwidth_garbage_raises(text: str) -> None:
    with pytest.raises(GateError):
        gate.parse_nvbandwidth(text)


@pytest.mark.parametrize("text", [*GARBAGE, (DATA / "nvbandwidth_json_sample.json").read_text(), "{}"])
def test_nccl_garbage_raises(text: str) -> None:
    with pytest.raises(GateError):
        gate.parse_nccl(text)


@pytest.mark.parametrize("text", [*GARBAGE, "{}", '{"DCGM Diagnostic": {"test_categories": []}}', (DATA / "nvbandwidth_json_sample.json").read_text()])
def test_dcgm_garbage_raises(text: str) -> None:
    with pytest.raises(GateError):
        gate.parse_dcgm(text)


def test_truncated_outputs_never_pass() -> None:
    # nvbandwidth cut at every line: never a passed h2d
    full = nvb("excerpt 3:")
    lines = full.splitlines(keepends=True)
    for n in range(len(lines)):
        try:
            cases = gate.parse_nvbandwidth("".join(lines[:n]))
        except GateError:
            continue
        assert not (gate.bandwidth_check("x", cases, "host_to_device_memcpy_ce", 1.0)["passed"]
                    and gate.bandwidth_check("x", cases, "device_to_host_memcpy_ce", 1.0)["passed"]), n
    # cut inside a matrix row and before SUM
    cut = full[:full.index("26.31") + 2]
    assert gate.bandwidth_check("x", gate.parse_nvbandwidth(cut), "host_to_device_memcpy_ce", 1.0)["passed"] is False
    # nccl-tests cut inside its result row
    text = nccl("SYNTHESIZED")
    row_end = text.index("480.65") + len("480.65")
    for end in range(text.index(" 17179869184"), row_end + 1):
        with pytest.raises(GateError):
            gate.parse_nccl(text[:end])
    # DCGM JSON cut anywhere
    dcgm = (DATA / "dcgm4_diag_json_CONSTRUCTED.json").read_text()
    for end in range(0, len(dcgm) - 2, 97):
        with pytest.raises(GateError):
            gate.parse_dcgm(dcgm[:end])


def test_an_empty_kernel_log_is_not_a_pass() -> None:
    try:
        check, _w = gate.kernel_log_check(gate.parse_kernel_log(""), "")
    except GateError:
        return
    assert check["passed"] is False


# ---------------------------------------------------------------- thresholds

def test_builtin_h100_sxm_row_is_azure_nd_h100_v5() -> None:
    for model in ("H100-SXM5-80GB", "NVIDIA H100 80GB HBM3 SXM", "h200-sxm-141gb"):
        floors, pattern = gate.thresholds_for(model, None)
        assert floors == {"nccl_busbw": 460.0, "nccl_bytes": "16G", "h2d": 48.0, "d2h": 48.0, "d2d": 335.0}
        assert pattern == gate.DEFAULT_THRESHOLDS[0][0]
    floors["h2d"] = 1.0  # a copy: the table is not changed through it
    assert gate.DEFAULT_THRESHOLDS[0][1]["h2d"] == 48.0


def test_fleet_rows_come_first_and_unknown_models_have_none() -> None:
    mine = {"nccl_busbw": 400.0, "nccl_bytes": "8G", "h2d": 40.0, "d2h": 40.0, "d2d": 300.0}
    assert gate.thresholds_for("H100-SXM5-80GB", {"h100": mine}) == (mine, "h100")
    assert gate.thresholds_for("H100-SXM5-80GB", {"B200": mine})[1] == gate.DEFAULT_THRESHOLDS[0][0]
    assert gate.thresholds_for("H100-PCIE-80GB", None) == (None, None)
    assert gate.thresholds_for("A100-SXM4-80GB", {}) == (None, None)
    assert gate.thresholds_for("", None) == (None, None) and gate.thresholds_for(None, None) == (None, None)


GOOD_ROW = {"nccl_busbw": 400.0, "nccl_bytes": "16G", "h2d": 40, "d2h": 40.5, "d2d": 300}


def test_validate_thresholds_accepts_a_full_row() -> None:
    assert gate.validate_thresholds(None) == [] and gate.validate_thresholds({}) == []
    assert gate.validate_thresholds({"B200": GOOD_ROW, "A100.*SXM": dict(GOOD_ROW, nccl_bytes="512M")}) == []


@pytest.mark.parametrize("overrides, needle", [
    ({"H100(": GOOD_ROW}, "thresholds['H100(']: the key is not a regular expression"),
    ({"B200": dict(GOOD_ROW, busbw=1.0)}, "thresholds['B200'].busbw: unknown; allowed: d2d, d2h, h2d, nccl_busbw"),
    ({"B200": dict(GOOD_ROW, h2d="fast")}, "thresholds['B200'].h2d: must be a number of GB/s above 0, not 'fast'"),
    ({"B200": dict(GOOD_ROW, d2d=True)}, "thresholds['B200'].d2d: must be a number"),
    ({"B200": dict(GOOD_ROW, d2h=0)}, "thresholds['B200'].d2h: must be a number of GB/s above 0, not 0"),
    ({"B200": {"h2d": 1.0}}, "thresholds['B200']: missing d2d, d2h, nccl_busbw, nccl_bytes"),
    ({"B200": dict(GOOD_ROW, nccl_bytes="16GB")}, "thresholds['B200'].nccl_bytes: '16GB' is not a size"),
    ({"B200": dict(GOOD_ROW, nccl_bytes=16)}, "thresholds['B200'].nccl_bytes: 16 is not a size"),
    ({"B200": dict(GOOD_ROW, nccl_bytes="0G")}, "thresholds['B200'].nccl_bytes: '0G' is not a size"),
    ({"B200": 460}, "thresholds['B200']: must be a mapping"),
    (["B200"], "thresholds: must be a mapping of GPU model pattern to thresholds, not list"),
])
def test_validate_thresholds_names_the_field(overrides, needle: str) -> None:
    problems = gate.validate_thresholds(overrides)
    assert len(problems) == 1 and problems[0].startswith(needle), problems


# ---------------------------------------------------------------- report

def a_report(ok: bool = True, **changes) -> dict:
    checks = [gate.check("inventory", True, "8 GPUs as the fleet says", 8, 8),
              gate.check("nccl_all_reduce", ok, "all_reduce_perf ...", 480.0, 460.0)]
    rep = gate.report("gpu-node-1", "quick", "2026-03-01T10:20:30Z", 612.345, checks,
                      [{"index": 0, "uuid": "GPU-0", "serial": "1", "name": "NVIDIA H100 80GB HBM3",
                        "pci_bus_id": "00000000:18:00.0", "extra": "dropped"}], ["XID 13 on ..."], {"dcgm_level": 2})
    rep.update(changes)
    return rep


def test_report_and_summary() -> None:
    rep = a_report()
    assert rep["schema"] == "gpucloud.baremetal/gpu-gate/v1" and rep["passed"] is True and rep["failed_checks"] == []
    assert rep["duration_s"] == 612.3 and rep["gpus"][0] == {
        "index": 0, "uuid": "GPU-0", "serial": "1", "name": "NVIDIA H100 80GB HBM3", "pci_bus_id": "00000000:18:00.0"}
    assert gate.summary(rep) == "GPU gate (quick) passed on gpu-node-1: 2 checks in 612 s"
    bad = a_report(ok=False)
    assert bad["passed"] is False and bad["failed_checks"] == ["nccl_all_reduce"]
    assert gate.summary(bad) == "GPU gate (quick) FAILED on gpu-node-1: all_reduce_perf ..."


def test_read_report_valid_passing_and_failed() -> None:
    assert gate.read_report(json.dumps(a_report())) == {
        "valid": True, "passed": True, "profile": "quick", "started": "2026-03-01T10:20:30Z", "problem": None}
    out = gate.read_report(json.dumps(a_report(ok=False)))
    assert out["valid"] is True and out["passed"] is False and out["problem"] == "failed: nccl_all_reduce"
    out = gate.read_report(json.dumps(a_report(ok=False, failed_checks=None)))
    assert out["problem"] == "failed: checks unknown"


@pytest.mark.parametrize("text, problem", [
    (None, "no report"), ("", "no report"), (42, "no report"),
    ("{not json", "not JSON"), ("[]", "not a gpucloud.baremetal/gpu-gate/v1 report"),
    (json.dumps(a_report(schema="gpucloud.baremetal/gpu-gate/v2")), "not a gpucloud.baremetal/gpu-gate/v1"),
    (json.dumps(a_report(passed="true")), "passed, profile or started"),
    (json.dumps(a_report(passed=1)), "passed, profile or started"),
    (json.dumps(a_report(profile="burnin")), "passed, profile or started"),
    (json.dumps(a_report(started="2026-03-01 10:20:30")), "passed, profile or started"),
    (json.dumps(a_report(started="2026-03-01T10:20:30+00:00")), "passed, profile or started"),
    # the start names the kept report's file on the boot server: no line break in it
    (json.dumps(a_report(started="2026-03-01T10:20:30Z\n")), "passed, profile or started"),
    (json.dumps(a_report(started=None)), "passed, profile or started"),
    (json.dumps(a_report())[:-5], "not JSON"),
])
def test_read_report_invalid(text, problem: str) -> None:
    out = gate.read_report(text)
    assert out["valid"] is False and out["passed"] is False and out["problem"].startswith(problem), out


def test_a_report_larger_than_the_cap_is_refused_before_it_is_parsed() -> None:
    """A node (a private node's tenant has root on it) cannot make the controller parse or the record keep an
    arbitrarily large file: a valid report padded past the cap is refused, one just under it reads."""
    report = a_report()
    padding = gate.MAX_REPORT_CHARS - len(json.dumps({**report, "pad": ""}))
    under = json.dumps({**report, "pad": "x" * padding})
    assert len(under) == gate.MAX_REPORT_CHARS and gate.read_report(under)["valid"] is True
    over = json.dumps({**report, "pad": "x" * (padding + 1)})
    out = gate.read_report(over)
    assert out["valid"] is False and out["problem"].startswith("larger than 1048576 characters (1048577)"), out


def test_read_report_of_another_node_is_not_valid() -> None:
    """A report copied from another node does not gate this one; without a node name any node's report reads."""
    text = json.dumps(a_report())
    assert gate.read_report(text, "gpu-node-1")["valid"] is True
    out = gate.read_report(text, "gpu-node-2")
    assert out == {"valid": False, "passed": False, "profile": None, "started": None,
                   "problem": "a report of another node (gpu-node-1)"}, out
    assert gate.read_report(json.dumps(a_report(node=None)), "gpu-node-1")["problem"] == "a report of another node (None)"


def test_profile_covers() -> None:
    assert gate.profile_covers("full", "quick") and gate.profile_covers("full", "full")
    assert gate.profile_covers("quick", "quick") and not gate.profile_covers("quick", "full")
    assert not gate.profile_covers(None, "quick") and not gate.profile_covers("burnin", "quick")


# --- InfiniBand ports ----------------------------------------------------------------------------------------

def _hca(root: Path, device: str, port: int, link_layer: str, state: str) -> None:
    """A port as the kernel's sysfs shows it (drivers/infiniband/core/sysfs.c: ``state`` is "%d: %s" of
    ib_port_state_str, ``link_layer`` "InfiniBand" or "Ethernet"; Documentation/ABI/stable/sysfs-class-infiniband)."""
    folder = root / device / "ports" / str(port)
    folder.mkdir(parents=True)
    (folder / "link_layer").write_text(link_layer + "\n")
    (folder / "state").write_text(state + "\n")


def test_infiniband_ports_count_the_infiniband_link_layer_only_and_each_must_be_active(tmp_path: Path) -> None:
    """An HGX node as its sysfs shows it: eight ConnectX-7 compute ports (mlx5_0..mlx5_7, InfiniBand) and a
    BlueField-3 in Ethernet mode (mlx5_8, mlx5_9: RoCE), which the count of InfiniBand ports must not take."""
    for i in range(8):
        _hca(tmp_path, "mlx5_%d" % i, 1, "InfiniBand", "4: ACTIVE")
    for i in (8, 9):
        _hca(tmp_path, "mlx5_%d" % i, 1, "Ethernet", "4: ACTIVE")
    ports = gate.infiniband_ports(str(tmp_path))
    assert len(ports) == 10 and ports[0] == {"port": "mlx5_0/1", "link_layer": "InfiniBand", "state": "4: ACTIVE"}
    passed = gate.infiniband_check(ports, 8)
    assert passed["passed"] and passed["measured"] == 8, passed
    assert "2 RDMA port(s) of another link layer, RoCE, not counted" in passed["message"]
    # Counting every port, as a glob of ports/* did, would have made 10 of the fleet's 8 (and 8 of 10 pass).
    assert not gate.infiniband_check(ports, 10)["passed"]
    # A cable out: the port is there but DOWN; the gate fails naming it.
    (tmp_path / "mlx5_3" / "ports" / "1" / "state").write_text("1: DOWN\n")
    down = gate.infiniband_check(gate.infiniband_ports(str(tmp_path)), 8)
    assert not down["passed"] and down["measured"] == 7
    assert "8 InfiniBand ports found, the fleet says 8" in down["message"]
    assert "not active: mlx5_3/1 (1: DOWN)" in down["message"]
    # No RDMA device at all (no driver, or no sysfs class): none found.
    none = gate.infiniband_check(gate.infiniband_ports(str(tmp_path / "absent")), 8)
    assert not none["passed"] and none["message"] == "0 InfiniBand ports found, the fleet says 8"
