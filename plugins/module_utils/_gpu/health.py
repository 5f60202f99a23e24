# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the GPUs read by ``nvml`` mean: findings with a severity, and a table a person reads.

Works on the plain dicts of ``nvml.read_all`` only. A finding is ``critical`` when the GPU is
broken or an expectation (count, model, driver, thresholds, required modes) is not met, and
the module fails on any critical finding; ``warning`` and ``info`` never fail it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .._errors import ProblemsError

CRITICAL = "critical"
WARNING = "warning"
INFO = "info"
SEVERITIES = (CRITICAL, WARNING, INFO)

# Clock event reasons that mean the GPU is slowed by a fault or by heat, not by its own choice.
SLOWDOWN_REASONS = ("hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown")

# XIDs (NVIDIA's "XID Errors" catalogue) that mean the GPU needs a reset or service.
CRITICAL_XIDS = {48: "double-bit ECC error", 79: "GPU has fallen off the bus", 95: "uncontained ECC error"}
XID_NAMES = {
    **CRITICAL_XIDS, 13: "graphics engine exception", 31: "GPU memory page fault", 43: "GPU stopped processing",
    45: "preemptive cleanup", 63: "ECC page retirement or row remapping",
    64: "ECC page retirement or row remapper failure",
    74: "NVLink error", 92: "high single-bit ECC error rate", 94: "contained ECC error", 119: "GSP RPC timeout",
    120: "GSP error",
}

# NVIDIA's field guidance: service a GPU that has retired this many pages (of at most 64).
RETIRED_PAGES_LIMIT = 60


@dataclass
class Expectations:
    gpu_count: int | None = None
    model: str | None = None
    driver_version: str | None = None
    temp_margin_c: int = 5
    max_temp_c: int | None = None
    max_power_ratio: float = 1.1
    ecc_uncorrected_max: int = 0
    require_persistence_mode: bool = False
    require_nvlink: bool = False
    mig_mode: str | None = None
    pcie_check_gen: bool = False

    def __post_init__(self) -> None:
        problems = []
        if self.model:
            try:
                re.compile(self.model)
            except re.error as err:
                problems.append("model: %r is not a regular expression (%s)" % (self.model, err))
        if self.gpu_count is not None and self.gpu_count < 0:
            problems.append("gpu_count: must be 0 or more, not %d" % self.gpu_count)
        if self.max_power_ratio <= 0:
            problems.append("max_power_ratio: must be above 0, not %s" % self.max_power_ratio)
        if self.temp_margin_c < 0:
            problems.append("temp_margin_c: must be 0 or more, not %d" % self.temp_margin_c)
        if problems:
            raise ProblemsError(problems)


class Findings(list):
    def add(self, severity: str, gpu: dict | None, check: str, message: str) -> None:
        self.append({
            "severity": severity,
            "gpu": None if gpu is None else gpu["index"],
            "uuid": None if gpu is None else gpu.get("uuid"),
            "check": check,
            "message": message,
        })


def driver_matches(want: str, have: str | None) -> bool:
    """``550`` matches ``550.54.15``; ``550.54.15`` only itself."""
    return have is not None and (have == want or have.startswith(want + "."))


def assess(snapshot: dict, expect: Expectations) -> list[dict]:
    findings = Findings()
    gpus = snapshot["gpus"]
    if expect.gpu_count is not None and len(gpus) != expect.gpu_count:
        findings.add(CRITICAL, None, "gpu_count", "NVML sees %d GPUs, expected %d" % (len(gpus), expect.gpu_count))
    elif expect.gpu_count is None and not gpus:
        findings.add(CRITICAL, None, "gpu_count", "NVML sees no GPU")
    driver = snapshot.get("driver_version")
    if expect.driver_version and not driver_matches(expect.driver_version, driver):
        findings.add(CRITICAL, None, "driver_version",
                     "driver %s, expected %s" % (driver or "unknown", expect.driver_version))
    if snapshot.get("xid_note"):
        findings.add(INFO, None, "xid", snapshot["xid_note"])
    for gpu in gpus:
        _assess_gpu(findings, gpu, expect)
    order = {severity: n for n, severity in enumerate(SEVERITIES)}
    return sorted(findings, key=lambda f: (order[f["severity"]], -1 if f["gpu"] is None else f["gpu"]))


def _assess_gpu(findings: Findings, gpu: dict, expect: Expectations) -> None:
    if gpu["lost"]:
        findings.add(CRITICAL, gpu, "lost", "%s; fallen off the bus or not answering (see dmesg for Xid 79): "
                     "reset the GPU or reboot" % gpu["lost_reason"])
        return
    name = gpu.get("name")
    if expect.model and not (name and re.search(expect.model, name, re.IGNORECASE)):
        findings.add(CRITICAL, gpu, "model", "model %s does not match %r" % (name or "unknown", expect.model))
    for check in (_ecc, _memory_repair, _nvlink, _pcie, _temperature, _power, _persistence, _mig, _clocks, _xid):
        check(findings, gpu, expect)
    if gpu["errors"]:
        findings.add(WARNING, gpu, "read_error", "could not read %s" % ", ".join(
            "%s: %s" % item for item in sorted(gpu["errors"].items())))
    if gpu["unsupported"]:
        findings.add(INFO, gpu, "not_supported", "not supported by this GPU: %s" % ", ".join(gpu["unsupported"]))


def _ecc(findings: Findings, gpu: dict, expect: Expectations) -> None:
    ecc = gpu.get("ecc")
    if ecc is None:
        return
    if not ecc["mode_current"]:
        findings.add(WARNING, gpu, "ecc_mode", "ECC is disabled")
    if ecc["mode_pending"] != ecc["mode_current"]:
        findings.add(WARNING, gpu, "ecc_mode", "ECC turns %s at the next GPU reset" % _on(ecc["mode_pending"]))
    volatile = ecc["volatile"]["uncorrected"]
    if volatile is not None and volatile > expect.ecc_uncorrected_max:
        findings.add(CRITICAL, gpu, "ecc_uncorrected", "%d uncorrected ECC errors since the driver loaded (max %d)"
                     % (volatile, expect.ecc_uncorrected_max))
    aggregate = ecc["aggregate"]["uncorrected"]
    if aggregate:
        findings.add(INFO, gpu, "ecc_aggregate", "%d uncorrected ECC errors over the GPU's life" % aggregate)


def _memory_repair(findings: Findings, gpu: dict, expect: Expectations) -> None:
    rows = gpu.get("remapped_rows")
    if rows is not None:
        if rows["failure"]:
            findings.add(CRITICAL, gpu, "remapped_rows", "row remapping failed: the GPU needs service")
        if rows["pending"]:
            findings.add(WARNING, gpu, "remapped_rows", "a row remapping is pending: reset the GPU to apply it")
        if rows["uncorrectable"]:
            findings.add(INFO, gpu, "remapped_rows",
                         "%d rows remapped after uncorrectable errors" % rows["uncorrectable"])
    pages = gpu.get("retired_pages")
    if pages is not None:
        total = pages["single_bit"] + (pages["double_bit"] or 0)
        if pages["pending"]:
            findings.add(WARNING, gpu, "retired_pages", "a page retirement is pending: reset the GPU to apply it")
        if total >= RETIRED_PAGES_LIMIT:
            findings.add(WARNING, gpu, "retired_pages",
                         "%d pages retired (service at %d)" % (total, RETIRED_PAGES_LIMIT))
        elif pages["double_bit"]:
            findings.add(INFO, gpu, "retired_pages", "%d pages retired after double-bit errors" % pages["double_bit"])


def _nvlink(findings: Findings, gpu: dict, expect: Expectations) -> None:
    nvlink = gpu.get("nvlink")
    if nvlink is None:
        if expect.require_nvlink and "nvlink" in gpu["unsupported"]:
            findings.add(CRITICAL, gpu, "nvlink", "NVLink is required but the GPU reports none")
        return
    down = [link["link"] for link in nvlink["links"] if not link["up"]]
    if not down:
        return
    message = "%d of %d NVLink links down (%s)" % (len(down), nvlink["total"], ", ".join(map(str, down)))
    if expect.require_nvlink:
        findings.add(CRITICAL, gpu, "nvlink", message)
    elif nvlink["up"]:
        findings.add(WARNING, gpu, "nvlink", message)
    else:
        findings.add(INFO, gpu, "nvlink", message + ": no link is up (no NVLink bridge or NVSwitch?)")


def _pcie(findings: Findings, gpu: dict, expect: Expectations) -> None:
    pcie = gpu.get("pcie") or {}
    width, width_max = pcie.get("width_current"), pcie.get("width_max")
    if width is not None and width_max is not None and width < width_max:
        findings.add(WARNING, gpu, "pcie_width", "PCIe link x%d of x%d (reseat the GPU or check the riser)" % (
            width, width_max))
    gen, gen_max = pcie.get("gen_current"), pcie.get("gen_max")
    if expect.pcie_check_gen and gen is not None and gen_max is not None and gen < gen_max:
        message = "PCIe Gen%d of Gen%d" % (gen, gen_max)
        if "gpu_idle" in (gpu.get("clocks_event_reasons") or []):
            findings.add(INFO, gpu, "pcie_gen", message + " while idle (an idle GPU lowers its link speed)")
        else:
            findings.add(WARNING, gpu, "pcie_gen", message + " under load")


def _temperature(findings: Findings, gpu: dict, expect: Expectations) -> None:
    temp, slowdown = gpu.get("temperature_c"), gpu.get("temperature_slowdown_c")
    if temp is None:
        return
    if slowdown is not None:
        if temp >= slowdown:
            findings.add(CRITICAL, gpu, "temperature",
                         "%d C, at or above the slowdown threshold %d C" % (temp, slowdown))
        elif temp > slowdown - expect.temp_margin_c:
            findings.add(CRITICAL, gpu, "temperature", "%d C, within %d C of the slowdown threshold %d C" % (
                temp, expect.temp_margin_c, slowdown))
    if expect.max_temp_c is not None and temp > expect.max_temp_c:
        findings.add(CRITICAL, gpu, "temperature", "%d C, above the maximum %d C" % (temp, expect.max_temp_c))


def _power(findings: Findings, gpu: dict, expect: Expectations) -> None:
    power, limit = gpu.get("power_w"), gpu.get("power_limit_w")
    if power is not None and limit and power > limit * expect.max_power_ratio:
        findings.add(CRITICAL, gpu, "power", "%.0f W, above %.2f x the enforced limit %.0f W" % (
            power, expect.max_power_ratio, limit))


def _persistence(findings: Findings, gpu: dict, expect: Expectations) -> None:
    if gpu.get("persistence_mode") is False:
        severity = CRITICAL if expect.require_persistence_mode else WARNING
        findings.add(severity, gpu, "persistence_mode", "persistence mode is off (run nvidia-persistenced)")


def _mig(findings: Findings, gpu: dict, expect: Expectations) -> None:
    mig = gpu.get("mig")
    if mig is None:
        if expect.mig_mode == "enabled":
            findings.add(CRITICAL, gpu, "mig_mode", "MIG is required but the GPU does not support it")
        return
    if mig["pending"] != mig["current"]:
        findings.add(WARNING, gpu, "mig_mode", "MIG turns %s at the next GPU reset" % _on(mig["pending"]))
    if expect.mig_mode and mig["current"] != (expect.mig_mode == "enabled"):
        findings.add(CRITICAL, gpu, "mig_mode", "MIG is %s, expected %s" % (
            "enabled" if mig["current"] else "disabled", expect.mig_mode))
    if mig["current"] and not mig["devices"]:
        findings.add(WARNING, gpu, "mig_mode", "MIG is enabled but the GPU has no MIG devices")


def _clocks(findings: Findings, gpu: dict, expect: Expectations) -> None:
    slowed = [r for r in gpu.get("clocks_event_reasons") or [] if r in SLOWDOWN_REASONS]
    if slowed:
        findings.add(WARNING, gpu, "clocks_event", "clocks slowed: %s" % ", ".join(slowed))


def _xid(findings: Findings, gpu: dict, expect: Expectations) -> None:
    xids = gpu.get("xid_events") or []
    if not xids:
        return
    severity = CRITICAL if any(x in CRITICAL_XIDS for x in xids) else WARNING
    findings.add(severity, gpu, "xid", "XID events: %s" % ", ".join(
        "%d (%s)" % (x, XID_NAMES[x]) if x in XID_NAMES else str(x) for x in xids))


def _on(value: bool) -> str:
    return "on" if value else "off"


def failed(findings: list[dict]) -> bool:
    return any(f["severity"] == CRITICAL for f in findings)


def where(finding: dict) -> str:
    return "host" if finding["gpu"] is None else "GPU %d" % finding["gpu"]


def summary(snapshot: dict, findings: list[dict]) -> str:
    """One line: what failed, or that every GPU is fine."""
    count = len(snapshot["gpus"])
    critical = [f for f in findings if f["severity"] == CRITICAL]
    warnings = sum(1 for f in findings if f["severity"] == WARNING)
    if critical:
        return "NVML health: %d critical finding%s on %d GPU%s: %s" % (
            len(critical), _plural(len(critical)), count, _plural(count),
            "; ".join("%s %s: %s" % (where(f), f["check"], f["message"]) for f in critical))
    return "NVML health: %d GPU%s OK%s" % (
        count, _plural(count), " (%d warning%s)" % (warnings, _plural(warnings)) if warnings else "")


def _plural(n: int) -> str:
    return "" if n == 1 else "s"


# The table ------------------------------------------------------------------------------------

COLUMNS = ("GPU", "NAME", "BUS ID", "TEMP", "POWER", "ECC", "MEMORY", "NVLINK", "PCIE", "PERSIST", "MIG", "STATUS")
NS = "n/s"  # not supported by this GPU


def _cell(value, fmt: str = "%s") -> str:
    return NS if value is None else fmt % value


def _row(gpu: dict, findings: list[dict]) -> list[str]:
    mine = [f for f in findings if f["gpu"] == gpu["index"] and f["severity"] != INFO]
    status = "OK"
    if mine:
        status = "%s %s" % (mine[0]["severity"].upper(), ",".join(dict.fromkeys(f["check"] for f in mine)))
    if gpu["lost"]:
        return [str(gpu["index"]), "(lost)", "-", "-", "-", "-", "-", "-", "-", "-", "-", status]
    return [
        str(gpu["index"]), gpu.get("name") or "?", gpu.get("pci_bus_id") or "?",
        _temp_cell(gpu), _power_cell(gpu), _ecc_cell(gpu), _repair_cell(gpu),
        _nvlink_cell(gpu), _pcie_cell(gpu), _persistence_cell(gpu), _mig_cell(gpu), status,
    ]


def _temp_cell(gpu: dict) -> str:
    temp, slowdown = gpu.get("temperature_c"), gpu.get("temperature_slowdown_c")
    if temp is None:
        return NS
    return "%dC" % temp if slowdown is None else "%dC/%dC" % (temp, slowdown)


def _power_cell(gpu: dict) -> str:
    power, limit = gpu.get("power_w"), gpu.get("power_limit_w")
    if power is None:
        return NS
    return "%.0fW" % power if limit is None else "%.0f/%.0fW" % (power, limit)


def _ecc_cell(gpu: dict) -> str:
    ecc = gpu.get("ecc")
    if ecc is None:
        return NS
    if not ecc["mode_current"]:
        return "off"
    return "%s unc" % _cell(ecc["volatile"]["uncorrected"], "%d")


def _repair_cell(gpu: dict) -> str:
    rows, pages = gpu.get("remapped_rows"), gpu.get("retired_pages")
    if rows is not None:
        state = "FAILED" if rows["failure"] else "pending" if rows["pending"] else "ok"
        return "rows %s" % state
    if pages is not None:
        return "pages %d%s" % (pages["single_bit"] + (pages["double_bit"] or 0), " pending" if pages["pending"] else "")
    return NS


def _nvlink_cell(gpu: dict) -> str:
    nvlink = gpu.get("nvlink")
    return NS if nvlink is None else "%d/%d up" % (nvlink["up"], nvlink["total"])


def _pcie_cell(gpu: dict) -> str:
    pcie = gpu.get("pcie") or {}

    def link(gen, width) -> str:
        return "Gen%sx%s" % ("?" if gen is None else gen, "?" if width is None else width)

    current = link(pcie.get("gen_current"), pcie.get("width_current"))
    most = link(pcie.get("gen_max"), pcie.get("width_max"))
    return current if current == most else "%s (max %s)" % (current, most)


def _persistence_cell(gpu: dict) -> str:
    mode = gpu.get("persistence_mode")
    return NS if mode is None else _on(mode)


def _mig_cell(gpu: dict) -> str:
    mig = gpu.get("mig")
    if mig is None:
        return NS
    cell = "on %d dev" % len(mig["devices"]) if mig["current"] else "off"
    return cell + (" (%s next reset)" % _on(mig["pending"]) if mig["pending"] != mig["current"] else "")


def table(snapshot: dict, findings: list[dict]) -> list[str]:
    """The per-GPU table, then one line per finding (most severe first)."""
    rows = [list(COLUMNS)] + [_row(gpu, findings) for gpu in snapshot["gpus"]]
    widths = [max(len(row[n]) for row in rows) for n in range(len(COLUMNS))]
    lines = ["driver %s, CUDA %s, %d GPU%s" % (
        snapshot.get("driver_version") or "?", snapshot.get("cuda_driver_version") or "?",
        len(snapshot["gpus"]), _plural(len(snapshot["gpus"])))]
    lines += ["  ".join(cell.ljust(widths[n]) for n, cell in enumerate(row)).rstrip() for row in rows]
    lines += ["%-8s %-8s %s: %s" % (where(f), f["severity"].upper(), f["check"], f["message"]) for f in findings]
    return lines
