# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU acceptance gate: what the test tools print, what it means, and the node's report.

Works on text only (the module runs the tools): the kernel log (``NVRM: Xid`` and NVSwitch
``SXid`` lines), ``dcgmi diag -j`` (DCGM 3 and 4 JSON), ``nvbandwidth`` (its matrix printout)
and nccl-tests ``all_reduce_perf`` (its table). Every parser takes the real tool's output format
(samples with their sources: ``tests/unit/plugins/module_utils/data/gate/``) and raises
``GateError`` naming the tool when the text is not what that tool prints: an unreadable result
never passes the gate.

A check is a dict ``{name, passed, message, measured, threshold}``; the gate passes when every
check passes. The report (``report()``) is versioned by ``REPORT_SCHEMA``.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from .errors import GateError

REPORT_SCHEMA = "gpucloud.baremetal/gpu-gate/v1"
PROFILES = ("quick", "full")
# The largest report read or kept (characters of JSON). A gate report of an 8-GPU node with every check's detail
# is a few KB; what a node returns is untrusted, and a larger "report" is refused before it is parsed or kept in
# the node's record on the boot server.
MAX_REPORT_CHARS = 1024 * 1024

# DCGM diagnostic level per profile (NVIDIA, DCGM user guide "Run Levels": r1 seconds, r2 about 2 minutes,
# r3 about 15 minutes, r4 hours). quick stays within 20 minutes per node; full is what a burn-in asks.
PROFILE_DCGM_LEVEL = {"quick": 2, "full": 3}

# Per GPU model (the fleet's gpu.model, searched case-insensitively) and for the node's full set of GPUs:
# the least bandwidth in GB/s. The first matching row applies; the fleet's gpu_gate_thresholds come first.
#   nccl_busbw: nccl-tests all_reduce_perf bus bandwidth at nccl_bytes (the largest size run)
#   h2d, d2h: nvbandwidth host_to_device_memcpy_ce / device_to_host_memcpy_ce, the slowest GPU
#   d2d: nvbandwidth device_to_device_memcpy_read_ce, the slowest GPU pair
# Sources: Azure's HPC health checks for ND H100 v5 (8 x H100 SXM, NVSwitch): all-reduce at 16 GB at least
# 460 GB/s, host<->device at least 48 GB/s... (docs/gpu_health.md names the files); H200 SXM shares H100 SXM's
# NVLink 4 switch fabric and PCIe Gen5, so the same floors. Models without a row must get one from the fleet.
DEFAULT_THRESHOLDS: list[tuple[str, dict]] = [
    (r"H100.*SXM|H200.*SXM", {"nccl_busbw": 460.0, "nccl_bytes": "16G", "h2d": 48.0, "d2h": 48.0, "d2d": 335.0}),
]
THRESHOLD_KEYS = {"nccl_busbw": float, "nccl_bytes": str, "h2d": float, "d2h": float, "d2d": float}
NCCL_BYTES = re.compile(r"^[1-9][0-9]{0,5}[KMG]?$")

# Xid codes after which a GPU must not be handed to a tenant: NVIDIA's Xid catalog gives them an immediate
# action other than RESTART_APP or IGNORE (reset the GPU, restart the machine, contact support, NVLink
# workflows), and Xid 79 (fallen off the bus) is one DCGM cannot report. Other Xids (application faults) are
# reported as warnings.
FATAL_XIDS = frozenset([46, 48, 54, 62, 64, 74, 78, 79, 95, 109, 110, 119, 120, 136, 140, 143, 144, 145, 146, 147,
                        148, 149, 150, 151, 155, 156, 158, 159])

XID_LINE = re.compile(r"NVRM: Xid \((?P<pci>(?:PCI:)?[0-9A-Fa-f:.]+)\): (?P<code>\d+),? ?(?P<text>.*)$")
SXID_LINE = re.compile(r"(?P<dev>nvidia-nvswitch\d+): SXid \((?P<pci>PCI:[0-9A-Fa-f:.]+)\): (?P<code>\d+), ?"
                       r"(?P<text>.*)$")


def check(name: str, passed: bool, message: str, measured: Any = None, threshold: Any = None) -> dict:
    return {"name": name, "passed": bool(passed), "message": message, "measured": measured, "threshold": threshold}


# ---------------------------------------------------------------- thresholds

def thresholds_for(model: str, overrides: dict | None) -> tuple[dict | None, str | None]:
    """The thresholds of ``model``: the fleet's rows first (keys are regular expressions), then the defaults.

    Returns (thresholds, the pattern that matched), or (None, None) when no row matches.
    """
    rows = list((overrides or {}).items()) + DEFAULT_THRESHOLDS
    for pattern, values in rows:
        if re.search(pattern, model or "", re.IGNORECASE):
            return dict(values), pattern
    return None, None


def validate_thresholds(overrides: Any) -> list[str]:
    """Problems of the fleet's threshold table, each naming its field."""
    if overrides is None:
        return []
    if not isinstance(overrides, dict):
        return ["thresholds: must be a mapping of GPU model pattern to thresholds, not %s" % type(overrides).__name__]
    problems = []
    for pattern, values in overrides.items():
        where = "thresholds[%r]" % pattern
        try:
            re.compile(str(pattern))
        except re.error as err:
            problems.append("%s: the key is not a regular expression (%s)" % (where, err))
        if not isinstance(values, dict):
            problems.append("%s: must be a mapping with %s" % (where, ", ".join(sorted(THRESHOLD_KEYS))))
            continue
        for key, value in values.items():
            if key not in THRESHOLD_KEYS:
                problems.append("%s.%s: unknown; allowed: %s" % (where, key, ", ".join(sorted(THRESHOLD_KEYS))))
            elif key == "nccl_bytes":
                if not isinstance(value, str) or not NCCL_BYTES.fullmatch(value):
                    problems.append("%s.nccl_bytes: %r is not a size as nccl-tests takes it (e.g. 16G, 512M)"
                                    % (where, value))
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                problems.append("%s.%s: must be a number of GB/s above 0, not %r" % (where, key, value))
        missing = sorted(set(THRESHOLD_KEYS) - set(values))
        if missing:
            problems.append("%s: missing %s (every bandwidth floor is needed)" % (where, ", ".join(missing)))
    return problems


# ---------------------------------------------------------------- InfiniBand ports

IB_SYSFS = "/sys/class/infiniband"


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def infiniband_ports(root: str = IB_SYSFS) -> list[dict]:
    """Every RDMA port under ``root`` (``<device>/ports/<n>``, the kernel's sysfs-class-infiniband ABI): its name,
    ``link_layer`` (``InfiniBand``, or ``Ethernet`` for a RoCE port of the same adapter) and ``state`` (``4:
    ACTIVE``, ``1: DOWN``, ...)."""
    ports = []
    for device in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        folder = os.path.join(root, device, "ports")
        for port in sorted(os.listdir(folder), key=lambda n: (len(n), n)) if os.path.isdir(folder) else []:
            where = os.path.join(folder, port)
            ports.append({"port": "%s/%s" % (device, port), "link_layer": _read(os.path.join(where, "link_layer")),
                          "state": _read(os.path.join(where, "state"))})
    return ports


def infiniband_check(ports: list[dict], want: int) -> dict:
    """The fleet's count of InfiniBand ports against the ports whose link layer is InfiniBand (a RoCE port of the
    same adapters is Ethernet, and not counted), each of them ACTIVE: a port down (a cable, a switch port) fails
    the gate as a missing one does."""
    ib = [p for p in ports if p["link_layer"] == "InfiniBand"]
    down = ["%s (%s)" % (p["port"], p["state"] or "no state") for p in ib if p["state"].split(":")[-1].strip()
            != "ACTIVE"]
    roce = len(ports) - len(ib)
    message = "%d InfiniBand ports found, the fleet says %d" % (len(ib), want)
    if roce:
        message += " (%d RDMA port(s) of another link layer, RoCE, not counted)" % roce
    if down:
        message += "; not active: %s" % ", ".join(down)
    return check("infiniband", len(ib) == want and not down, message, measured=len(ib) - len(down), threshold=want)


# ---------------------------------------------------------------- kernel log

def parse_kernel_log(text: str) -> list[dict]:
    """Every Xid and SXid line of the kernel log, in order: kind, code, pci, text, fatal."""
    events = []
    for line in text.splitlines():
        match = XID_LINE.search(line)
        if match:
            code = int(match.group("code"))
            events.append({"kind": "xid", "code": code, "pci": match.group("pci"), "text": match.group("text").strip(),
                           "fatal": code in FATAL_XIDS})
            continue
        match = SXID_LINE.search(line)
        if match:
            rest = match.group("text").strip()
            # The NVSwitch driver writes "Fatal" or "Non-fatal" after the code (Fabric Manager user guide, SXid).
            events.append({"kind": "sxid", "code": int(match.group("code")), "pci": match.group("pci"),
                           "device": match.group("dev"), "text": rest,
                           "fatal": not rest.lower().startswith("non-fatal")})
    return events


def kernel_log_check(events: list[dict], text: str | None = None) -> tuple[dict, list[str]]:
    """``text``: the log itself; an empty one (a booted host never prints none) fails: nothing was read."""
    if text is not None and not text.strip():
        return check("kernel_log", False, "the kernel log command printed nothing: nothing was read"), []
    fatal = [e for e in events if e["fatal"]]
    warnings = ["%s %d on %s: %s" % (e["kind"].upper(), e["code"], e["pci"], e["text"][:120])
                for e in events if not e["fatal"]]
    if fatal:
        first = fatal[0]
        message = "%d fatal Xid/SXid since boot, first %s %d on %s: %s" % (
            len(fatal), first["kind"].upper(), first["code"], first["pci"], first["text"][:120])
    else:
        message = "no fatal Xid/SXid since boot (%d other)" % len(events)
    return check("kernel_log", not fatal, message, measured=sorted({"%s %d" % (e["kind"], e["code"]) for e in fatal})
                 ), warnings


# ---------------------------------------------------------------- DCGM diagnostics

DCGM_PASS = {"pass"}
DCGM_NEUTRAL = {"skip", "skipped", "not run", "notrun", "warn", "warning"}


def parse_dcgm(text: str) -> list[dict]:
    """``dcgmi diag -j``: one dict per test result: test, category, entity (GPU id or None), status, info."""
    try:
        data = json.loads(text)
    except ValueError as err:
        raise GateError("dcgmi diag: the output is not JSON (%s): %s" % (err, text.strip()[:200])) from None
    if not isinstance(data, dict):
        raise GateError("dcgmi diag: the JSON output is not an object")
    if data.get("runtime_error"):
        raise GateError("dcgmi diag: runtime error: %s" % str(data["runtime_error"])[:300])
    body = data.get("DCGM GPU Diagnostic") or data.get("DCGM Diagnostic")
    if isinstance(body, dict) and body.get("runtime_error"):
        raise GateError("dcgmi diag: runtime error: %s" % str(body["runtime_error"])[:300])
    if not isinstance(body, dict) or not isinstance(body.get("test_categories"), list):
        raise GateError("dcgmi diag: no 'DCGM GPU Diagnostic'.test_categories in the JSON output (keys: %s)"
                        % ", ".join(sorted(data)))
    results = []
    for category in body["test_categories"]:
        if not isinstance(category, dict) or not isinstance(category.get("tests") or [], list):
            raise GateError("dcgmi diag: a test category is not as DCGM writes it: %s" % str(category)[:200])
        for test in category.get("tests") or []:
            if not isinstance(test, dict) or not isinstance(test.get("results") or [], list) or not all(
                    isinstance(r, dict) for r in test.get("results") or []):
                raise GateError("dcgmi diag: a test is not as DCGM writes it: %s" % str(test)[:200])
            for result in test.get("results") or []:
                status = str(result.get("status", "")).strip()
                entity = result.get("entity_id", result.get("gpu_id", result.get("gpu_ids")))
                results.append({"test": test.get("name"), "category": category.get("category"), "entity": entity,
                                "status": status, "info": _dcgm_text(result)})
            summary_ = test.get("test_summary")  # DCGM 4: the test's own verdict besides its entities'
            if isinstance(summary_, dict) and summary_.get("status"):
                results.append({"test": test.get("name"), "category": category.get("category"), "entity": None,
                                "status": str(summary_["status"]).strip(), "info": _dcgm_text(summary_)})
    if not results:
        raise GateError("dcgmi diag: the JSON output holds no test result")
    return results


def _dcgm_text(result: dict) -> str:
    """A result's warnings (DCGM 3 and 4: a list of {warning | warnings: text, error_id...}), else its info."""
    parts = []
    for key in ("warnings", "info"):
        value = result.get(key)
        for item in value if isinstance(value, list) else [value] if value else []:
            parts.append(str(item.get("warning", item.get("warnings", item)) if isinstance(item, dict) else item))
        if parts:
            break
    return "; ".join(parts)[:300]


def dcgm_check(results: list[dict], level: int) -> dict:
    failed = [r for r in results if r["status"].lower() not in DCGM_PASS | DCGM_NEUTRAL]
    passed = sum(1 for r in results if r["status"].lower() in DCGM_PASS)
    if not failed and not passed:
        return check("dcgm_diag", False, "DCGM diag level %d: no test passed (%d skipped or warned)" % (
            level, len(results)), measured={"failed": 0, "passed": 0})
    if failed:
        message = "DCGM diag level %d: %d of %d results failed: %s" % (level, len(failed), len(results), "; ".join(
            "%s%s %s%s" % (r["test"], "" if r["entity"] is None else " GPU %s" % r["entity"], r["status"],
                           ": " + r["info"] if r["info"] else "") for r in failed[:5]))
    else:
        message = "DCGM diag level %d: %d results passed, %d skipped or warned" % (level, passed,
                                                                                   len(results) - passed)
    return check("dcgm_diag", not failed, message, measured={"failed": len(failed), "passed": passed})


# ---------------------------------------------------------------- nvbandwidth

NVB_RUNNING = re.compile(r"^Running (?P<name>[a-z0-9_]+)\.\s*$")
NVB_SUM = re.compile(r"^SUM (?P<name>[a-z0-9_]+) (?P<value>[0-9.]+)\s*$")
# A matrix row: its index, then a value with two decimals or N/A per column (the column header has no decimals).
NVB_ROW = re.compile(r"^\s*(?P<row>\d+)\s+(?P<cells>(?:(?:[0-9]+\.[0-9]+|N/A)\s*)+)$")


def parse_nvbandwidth(text: str) -> dict[str, dict]:
    """The printout of ``nvbandwidth -t ...``: per test case its matrix cells and its SUM line."""
    cases: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        running = NVB_RUNNING.match(line)
        if running:
            current = cases.setdefault(running.group("name"), {"cells": [], "sum": None, "waived": False})
            continue
        if current is None:
            continue
        if line.strip().lower().startswith("waived"):
            current["waived"] = True
            continue
        if line.startswith("Error:"):  # a test case that threw (nvbandwidth still exits 0)
            current["error"] = line[6:].strip()[:200]
            continue
        total = NVB_SUM.match(line)
        if total:
            cases.setdefault(total.group("name"), current)["sum"] = float(total.group("value"))
            current = None
            continue
        row = NVB_ROW.match(line)
        if row:
            cells = row.group("cells").split()
            current["cells"].extend((int(row.group("row")), col, float(v)) for col, v in enumerate(cells) if v != "N/A")
    if not cases:
        raise GateError("nvbandwidth: no 'Running <testcase>.' in the output: %s" % text.strip()[:200])
    return cases


def bandwidth_check(name: str, cases: dict, case: str, floor: float, gpus: int | None = None) -> dict:
    """The slowest cell of ``case`` against ``floor``; a case waived, in error or without its SUM line fails.

    nvbandwidth exits 0 for waived and failed test cases, so only a complete result counts.
    """
    got = cases.get(case)
    if got is None or got["waived"] or got.get("error") or not got["cells"] or got["sum"] is None:
        why = ("not run" if got is None else "waived" if got["waived"] else "error: " + got["error"]
               if got.get("error") else "no matrix" if not got["cells"] else "no SUM line")
        return check(name, False, "nvbandwidth %s: %s" % (case, why), threshold=floor)
    pairwise = case.startswith("device_to_device")
    want = None if gpus is None else gpus * (gpus - 1) if pairwise else gpus
    if want is not None and len(got["cells"]) != want:
        return check(name, False, "nvbandwidth %s: %d results, expected %d for %d GPUs" % (
            case, len(got["cells"]), want, gpus), threshold=floor)
    row, col, low = min(got["cells"], key=lambda cell: cell[2])
    # host_to_device: CPU(row) -> GPU(column); device_to_host: CPU(row) <- GPU(column); the GPU is the column.
    where = "GPU %d -> GPU %d" % (row, col) if pairwise else "GPU %d" % col
    return check(name, low >= floor, "%s: slowest %.2f GB/s (%s), at least %.2f" % (case, low, where, floor),
                 measured=low, threshold=floor)


# ---------------------------------------------------------------- NCCL

NCCL_ROW = re.compile(r"^\s*(?P<size>\d+)\s+(?P<count>\d+)\s+(?P<type>\w+)\s+(?P<redop>\w+)\s+(?P<root>-?\d+)\s+"
                      r"(?P<t1>[0-9.]+)\s+(?P<alg1>[0-9.]+)\s+(?P<bus1>[0-9.]+)\s+(?P<wrong1>\S+)\s+"
                      r"(?P<t2>[0-9.]+)\s+(?P<alg2>[0-9.]+)\s+(?P<bus2>[0-9.]+)\s+(?P<wrong2>\S+)\s*$")
NCCL_GPUS = re.compile(r"^# nThread (?P<threads>\d+) nGpus (?P<gpus>\d+)")
NCCL_BOUNDS = re.compile(r"^# Out of bounds values : (?P<n>\d+) (?P<word>OK|FAILED)")


def parse_nccl(text: str) -> dict:
    """nccl-tests ``all_reduce_perf``: the rows (size, busbw out-of-place and in-place, #wrong), the GPU count."""
    rows, gpus, bounds = [], None, None
    for line in text.splitlines():
        match = NCCL_GPUS.match(line)
        if match:
            gpus = int(match.group("gpus")) * int(match.group("threads"))
        match = NCCL_BOUNDS.match(line)
        if match:
            bounds = int(match.group("n"))
        match = NCCL_ROW.match(line)
        if match:
            wrong = [match.group("wrong1"), match.group("wrong2")]
            rows.append({"size": int(match.group("size")), "busbw": min(float(match.group("bus1")),
                                                                        float(match.group("bus2"))),
                         "wrong": sum(int(w) for w in wrong if w.isdigit())})
    if not rows:
        raise GateError("all_reduce_perf: no result row in the output: %s" % text.strip()[-300:])
    return {"rows": rows, "gpus": gpus, "out_of_bounds": bounds}


def nccl_check(result: dict, floor: float, expected_gpus: int) -> dict:
    last = max(result["rows"], key=lambda r: r["size"])
    problems = []
    if result["gpus"] is not None and result["gpus"] != expected_gpus:
        problems.append("ran on %d GPUs, not %d" % (result["gpus"], expected_gpus))
    wrong = sum(r["wrong"] for r in result["rows"])
    if result["out_of_bounds"] is None:
        problems.append("no '# Out of bounds values' line (the run did not finish)")
    if wrong or result["out_of_bounds"]:
        problems.append("%d wrong results, %s out-of-bounds values" % (wrong, result["out_of_bounds"]))
    if last["busbw"] < floor:
        problems.append("bus bandwidth below the floor")
    return check("nccl_all_reduce", not problems, "all_reduce_perf at %d bytes: bus bandwidth %.2f GB/s, at least "
                 "%.2f%s" % (last["size"], last["busbw"], floor, (": " + "; ".join(problems)) if problems else ""),
                 measured=last["busbw"], threshold=floor)


# ---------------------------------------------------------------- the report

def report(node: str, profile: str, started: str, duration_s: float, checks: list[dict], gpus: list[dict],
           warnings: list[str], tools: dict) -> dict:
    failed = [c["name"] for c in checks if not c["passed"]]
    return {
        "schema": REPORT_SCHEMA,
        "node": node,
        "profile": profile,
        "started": started,
        "duration_s": round(duration_s, 1),
        "passed": not failed,
        "failed_checks": failed,
        "gpus": [{"index": g.get("index"), "uuid": g.get("uuid"), "serial": g.get("serial"), "name": g.get("name"),
                  "pci_bus_id": g.get("pci_bus_id")} for g in gpus],
        "checks": checks,
        "warnings": warnings,
        "tools": tools,
    }


def summary(rep: dict) -> str:
    if rep["passed"]:
        return "GPU gate (%s) passed on %s: %d checks in %.0f s" % (rep["profile"], rep["node"], len(rep["checks"]),
                                                                    rep["duration_s"])
    return "GPU gate (%s) FAILED on %s: %s" % (rep["profile"], rep["node"], "; ".join(
        c["message"] for c in rep["checks"] if not c["passed"]))


def read_report(text: Any, node: str | None = None) -> dict:
    """What a node's ``latest.json`` says, checked (it comes from the node): never raises.

    Returns ``{valid, passed, profile, started, problem}``; anything but a report of this schema with a
    boolean ``passed`` and a known profile is ``valid: false`` with the reason, and so is, when ``node`` is
    given, a report that names another node (a copied file).
    """
    out = {"valid": False, "passed": False, "profile": None, "started": None, "problem": None}
    if not isinstance(text, str) or not text.strip():
        out["problem"] = "no report"
        return out
    if len(text) > MAX_REPORT_CHARS:
        out["problem"] = "larger than %d characters (%d): not a gate report" % (MAX_REPORT_CHARS, len(text))
        return out
    try:
        data = json.loads(text)
    except ValueError as err:
        out["problem"] = "not JSON (%s)" % err
        return out
    if not isinstance(data, dict) or data.get("schema") != REPORT_SCHEMA:
        out["problem"] = "not a %s report" % REPORT_SCHEMA
        return out
    if not isinstance(data.get("passed"), bool) or data.get("profile") not in PROFILES or not isinstance(
            data.get("started"), str) or not re.fullmatch(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", data["started"]):
        out["problem"] = "passed, profile or started is missing or not as the gate writes it"
        return out
    if node is not None and data.get("node") != node:
        out["problem"] = "a report of another node (%s)" % str(data.get("node"))[:64]
        return out
    out.update(valid=True, passed=data["passed"], profile=data["profile"], started=data["started"])
    if not data["passed"]:
        failed = data.get("failed_checks")
        out["problem"] = "failed: %s" % (", ".join(str(f)[:40] for f in failed[:10]) if isinstance(failed, list)
                                         else "checks unknown")
    return out


def profile_covers(have: str | None, want: str) -> bool:
    """A full gate covers a quick one; a quick one does not cover full."""
    return have in PROFILES and PROFILES.index(have) >= PROFILES.index(want)
