# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Findings, expectations and the table, on GPUs read from the fake NVML."""
from __future__ import annotations

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu import health, nvml
from tests.support.fake_nvml import FakeNvml, a100_mig, geforce, h100, v100


def snap(*gpus, **kwargs) -> dict:
    return nvml.read_all(FakeNvml(list(gpus), **kwargs))


def check(snapshot: dict, **expect) -> list[tuple[str, int | None, str]]:
    """(severity, gpu, check) of every finding that is not info."""
    return [(f["severity"], f["gpu"], f["check"]) for f in health.assess(snapshot, health.Expectations(**expect))
            if f["severity"] != health.INFO]


def test_healthy_gpus_have_no_problem_and_pass() -> None:
    s = snap(h100(0), h100(1), v100(2), a100_mig(3))
    findings = health.assess(s, health.Expectations(gpu_count=4))
    assert [f for f in findings if f["severity"] != "info"] == []
    assert not health.failed(findings) and health.summary(s, findings) == "NVML health: 4 GPUs OK"


def test_count_model_and_driver_are_expectations() -> None:
    s = snap(h100(0), h100(1))
    assert check(s, gpu_count=8) == [("critical", None, "gpu_count")]
    assert check(s, model="a100") == [("critical", 0, "model"), ("critical", 1, "model")]
    assert check(s, model="h100 80gb") == []  # searched, case-insensitive
    assert check(s, driver_version="550") == [] and check(s, driver_version="550.54.15") == []
    assert check(s, driver_version="55") == [("critical", None, "driver_version")]
    assert check(snap()) == [("critical", None, "gpu_count")]  # no GPU at all
    assert check(snap(), gpu_count=0) == []


def test_bad_expectations_are_refused_with_every_problem() -> None:
    with pytest.raises(ProblemsError) as caught:
        health.Expectations(model="H100(", max_power_ratio=0)
    assert len(caught.value.problems) == 2 and "model" in caught.value.problems[0]


def test_uncorrected_ecc_fails_above_the_maximum_and_lifetime_counts_inform() -> None:
    counts = {(0, 0): 10, (1, 0): 2, (0, 1): 10, (1, 1): 7}
    s = snap(h100(0, ecc_counts=counts))
    assert check(s) == [("critical", 0, "ecc_uncorrected")]
    assert check(s, ecc_uncorrected_max=2) == []
    infos = [f for f in health.assess(s, health.Expectations()) if f["check"] == "ecc_aggregate"]
    assert infos and infos[0]["severity"] == "info" and "7 uncorrected" in infos[0]["message"]


def test_ecc_off_or_changing_is_a_warning() -> None:
    assert check(snap(h100(0, ecc_mode=(0, 0)))) == [("warning", 0, "ecc_mode")]
    assert check(snap(h100(0, ecc_mode=(1, 0)))) == [("warning", 0, "ecc_mode")]


def test_row_remapping_failure_is_critical_and_pending_is_a_warning() -> None:
    assert check(snap(h100(0, remapped_rows=(0, 3, 0, 1)))) == [("critical", 0, "remapped_rows")]
    assert check(snap(h100(0, remapped_rows=(0, 1, 1, 0)))) == [("warning", 0, "remapped_rows")]


def test_retired_pages_near_the_limit_or_pending_warn() -> None:
    assert check(snap(v100(0, retired_pending=1))) == [("warning", 0, "retired_pages")]
    many = {0: list(range(40)), 1: list(range(20))}
    assert check(snap(v100(0, retired_pages=many))) == [("warning", 0, "retired_pages")]


def test_nvlink_down_warns_fails_when_required_and_all_down_only_informs() -> None:
    degraded = snap(h100(0, nvlink=[1] * 16 + [0, 0]))
    assert check(degraded) == [("warning", 0, "nvlink")]
    assert check(degraded, require_nvlink=True) == [("critical", 0, "nvlink")]
    message = [f["message"] for f in health.assess(degraded, health.Expectations()) if f["check"] == "nvlink"]
    assert message == ["2 of 18 NVLink links down (16, 17)"]
    assert check(snap(h100(0, nvlink=[0] * 18))) == []
    assert check(snap(geforce(0)), require_nvlink=True) == [("critical", 0, "nvlink")]


def test_pcie_width_warns_and_generation_only_when_asked_and_busy() -> None:
    assert check(snap(h100(0, pcie=(5, 5, 8, 16)))) == [("warning", 0, "pcie_width")]
    idle_low_gen = snap(h100(0, pcie=(1, 5, 16, 16)))  # the fake's GPUs are idle (gpu_idle)
    assert check(idle_low_gen) == [] and check(idle_low_gen, pcie_check_gen=True) == []
    gen = [f for f in health.assess(idle_low_gen, health.Expectations(pcie_check_gen=True)) if f["check"] == "pcie_gen"]
    assert gen[0]["severity"] == "info" and "idle" in gen[0]["message"]
    busy_low_gen = snap(h100(0, pcie=(3, 5, 16, 16), clocks=0x4))
    assert check(busy_low_gen) == [] and check(busy_low_gen, pcie_check_gen=True) == [("warning", 0, "pcie_gen")]


@pytest.mark.parametrize("temp, expect, found", [
    (82, {}, []),  # exactly the margin (87 - 5) is fine
    (83, {}, [("critical", 0, "temperature")]),
    (87, {"temp_margin_c": 0}, [("critical", 0, "temperature")]),  # at slowdown
    (70, {"max_temp_c": 65}, [("critical", 0, "temperature")]),
])
def test_temperature_against_slowdown_and_ceiling(temp: int, expect: dict, found: list) -> None:
    assert check(snap(h100(0, temperature=temp)), **expect) == found


def test_a_gpu_without_a_slowdown_threshold_is_held_to_the_ceiling_only() -> None:
    hot = snap(geforce(0, temperature=95))
    assert check(hot) == [] and check(hot, max_temp_c=90) == [("critical", 0, "temperature")]


def test_power_above_the_ratio_of_the_limit_fails() -> None:
    assert check(snap(h100(0, power_mw=760000))) == []  # 760 W <= 1.1 * 700 W
    assert check(snap(h100(0, power_mw=780000))) == [("critical", 0, "power")]
    assert check(snap(h100(0, power_mw=720000)), max_power_ratio=1.0) == [("critical", 0, "power")]


def test_persistence_off_warns_unless_required() -> None:
    off = snap(h100(0, persistence=0))
    assert check(off) == [("warning", 0, "persistence_mode")]
    assert check(off, require_persistence_mode=True) == [("critical", 0, "persistence_mode")]


def test_mig_mode_expectation_pending_change_and_missing_devices() -> None:
    assert check(snap(h100(0)), mig_mode="enabled") == [("critical", 0, "mig_mode")]
    assert check(snap(a100_mig(0)), mig_mode="enabled") == []
    assert check(snap(h100(0, mig_mode=(0, 1)))) == [("warning", 0, "mig_mode")]
    assert check(snap(a100_mig(0, devices=0))) == [("warning", 0, "mig_mode")]
    assert check(snap(geforce(0)), mig_mode="enabled") == [("critical", 0, "mig_mode")]


def test_clock_slowdowns_warn_but_power_capping_does_not() -> None:
    assert check(snap(h100(0, clocks=0x40 | 0x4))) == [("warning", 0, "clocks_event")]
    assert check(snap(h100(0, clocks=0x4))) == []


def test_xid_79_is_critical_and_an_application_xid_a_warning() -> None:
    assert check(snap(h100(0, xids=[79]))) == [("critical", 0, "xid")]
    findings = health.assess(snap(h100(0, xids=[13])), health.Expectations())
    assert [(f["severity"], f["message"]) for f in findings if f["check"] == "xid"] == [
        ("warning", "XID events: 13 (graphics engine exception)")]


def test_a_lost_gpu_is_critical_and_nothing_else_is_claimed_about_it() -> None:
    s = snap(h100(0), h100(1, lost="handle"))
    findings = health.assess(s, health.Expectations(gpu_count=2))
    assert [(f["severity"], f["gpu"], f["check"]) for f in findings] == [("critical", 1, "lost")]
    assert health.failed(findings)
    assert health.summary(s, findings).startswith("NVML health: 1 critical finding on 2 GPUs: GPU 1 lost: no handle")


def test_read_errors_warn_and_do_not_fail() -> None:
    findings = health.assess(snap(h100(0), denied=("nvmlDeviceGetPowerUsage",)), health.Expectations())
    assert [(f["severity"], f["check"]) for f in findings if f["severity"] != "info"] == [("warning", "read_error")]
    assert not health.failed(findings)


def test_findings_carry_gpu_index_and_uuid_most_severe_first() -> None:
    findings = health.assess(snap(h100(0, persistence=0), h100(1, temperature=90)), health.Expectations())
    assert [f["severity"] for f in findings][:2] == ["critical", "warning"]
    assert findings[0]["gpu"] == 1 and findings[0]["uuid"] == h100(1).uuid


def test_the_table_has_a_row_per_gpu_and_a_line_per_finding() -> None:
    s = snap(h100(0), geforce(1), h100(2, lost="handle"), h100(3, nvlink=[1] * 17 + [0]))
    findings = health.assess(s, health.Expectations())
    lines = health.table(s, findings)
    assert lines[0] == "driver 550.54.15, CUDA 12.4, 4 GPUs"
    header, rows = lines[1], lines[2:6]
    assert header.split()[:3] == ["GPU", "NAME", "BUS"] and header.endswith("STATUS")
    assert rows[0].startswith("0 ") and "34C/87C" in rows[0] and "71/700W" in rows[0] and rows[0].endswith("OK")
    assert " Gen5x16 " in rows[0] and "max" not in rows[0] and "18/18 up" in rows[0]
    assert rows[1].count("n/s") >= 4 and "Gen1x16 (max Gen4x16)" in rows[1]
    assert "(lost)" in rows[2] and rows[2].endswith("CRITICAL lost")
    assert rows[3].endswith("WARNING nvlink") and "17/18 up" in rows[3]
    assert lines[6].startswith("GPU 2    CRITICAL lost: ")
    assert len(lines) == 6 + len(findings)
    # the STATUS column starts at the same place on every row
    column = header.index("STATUS")
    assert all(row[column - 2:column] == "  " and row[column] != " " for row in rows)
