#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: gpu_gate
short_description: The GPU acceptance gate of one node - inventory, DCGM diagnostics, bandwidth, NCCL, kernel log
version_added: 0.4.0
description:
  - Runs on a GPU node, before it is handed to a tenant and after a repair, and decides whether its
    GPUs may go into service. Every check runs, one after the other (they share the GPUs); the gate
    passes only when every check passes.
  - C(inventory) - NVML (C(nvidia-ml-py)) against the fleet - the GPU count, O(model_pattern) when
    given, every NVLink link up when O(nvlink) (NVSwitch systems), every PCIe link at its full width,
    no uncorrected ECC error, no row-remapping failure, no GPU lost; NVMe controllers
    (C(/sys/class/nvme)) and InfiniBand ports (C(/sys/class/infiniband/*/ports/*) whose C(link_layer) is
    InfiniBand, not the RoCE ports of the same adapters; each must be ACTIVE) when O(nvme_count) and
    O(ib_ports) are given.
  - C(kernel_log) - every C(NVRM Xid) and NVSwitch C(SXid) line since boot; an Xid whose immediate
    action in NVIDIA's Xid catalog is not RESTART_APP or IGNORE (48, 79, 95, 119 and others) and a
    fatal SXid fail the gate. DCGM cannot report Xid 79 (the GPU is gone from the bus).
  - C(dcgm_diag) - C(dcgmi diag -r LEVEL -j) (DCGM 3 or 4); any result other than Pass, Skip or Warn fails.
  - C(h2d), C(d2h), C(d2d) - nvbandwidth's copy-engine bandwidth host to device, device to host (the
    slowest GPU) and device to device (the slowest pair, when the node has more than one GPU).
  - C(nccl_all_reduce) - nccl-tests C(all_reduce_perf) on all GPUs at the threshold's size - bus
    bandwidth, wrong results and out-of-bounds values.
  - Bandwidth floors come from a table per GPU model (the fleet's C(gpu.model)); O(thresholds) puts the
    fleet's rows first. A model without a row fails before any test runs, naming O(thresholds).
  - Writes a versioned report (C(gpucloud.baremetal/gpu-gate/v1)) to O(report_dir) as
    C(reports/<start>.json) and C(latest.json), readable by all (no secret in it), and fails when the
    gate fails, with the failed checks in O(ignore:msg) and the report kept.
  - A tool's output is untrusted - it is parsed strictly; what a tool never prints fails its check.
author:
  - gpucloud.baremetal contributors (@gpucloud)
requirements:
  - The NVIDIA driver and C(nvidia-ml-py) on the node.
  - C(dcgmi) (NVIDIA C(datacenter-gpu-manager) with its host engine running), C(nvbandwidth) and
    nccl-tests' C(all_reduce_perf) on the node, or their paths in O(tools).
options:
  node:
    description: The node's name, written into the report.
    type: str
    required: true
  profile:
    description:
      - V(quick) runs DCGM level 2 (about 2 minutes) and stays within 20 minutes per node; V(full)
        runs DCGM level 3 (about 15 minutes).
    type: str
    choices: [quick, full]
    default: quick
  dcgm_level:
    description: The DCGM diagnostic level instead of the profile's.
    type: int
    choices: [1, 2, 3, 4]
  gpu_count:
    description: How many GPUs the fleet gives the node.
    type: int
    required: true
  model:
    description: The fleet's GPU model (C(gpu.model)); picks the bandwidth floors.
    type: str
    required: true
  model_pattern:
    description: A regular expression every GPU's NVML name must match (searched, case-insensitive).
    type: str
  nvlink:
    description: Every GPU must have every NVLink link up (NVSwitch systems).
    type: bool
    default: false
  nvme_count:
    description: How many NVMe controllers the node must have.
    type: int
  ib_ports:
    description:
      - How many InfiniBand ports the node must have, all ACTIVE (link layer InfiniBand; RoCE ports are not
        counted).
    type: int
  thresholds:
    description:
      - The fleet's rows of the floor table, first match wins, before the built-in rows. Keys are
        regular expressions on O(model); each value needs C(nccl_busbw), C(h2d), C(d2h), C(d2d) (GB/s)
        and C(nccl_bytes) (a size as nccl-tests takes it, e.g. V(16G)).
    type: dict
    default: {}
  tools:
    description: Paths or names of C(dcgmi), C(nvbandwidth), C(all_reduce_perf), and the kernel log command.
    type: dict
    default: {}
    suboptions:
      dcgmi:
        description: DCGM's command line.
        type: str
        default: dcgmi
      nvbandwidth:
        description: nvbandwidth.
        type: str
        default: nvbandwidth
      all_reduce_perf:
        description: nccl-tests' all-reduce test.
        type: str
        default: all_reduce_perf
      kernel_log:
        description: The command that prints the kernel log since boot.
        type: list
        elements: str
        default: [dmesg]
  tool_timeout:
    description: Seconds each tool may run.
    type: int
    default: 3600
  report_dir:
    description: Where the reports are kept on the node.
    type: path
    default: /var/lib/gpucloud/gate
attributes:
  check_mode:
    support: full
    description: Check mode runs no test and writes no report; it says that the gate would run.
  diff_mode:
    support: none
    description: The report is new each run; there is nothing to compare.
  platform:
    support: full
    platforms: posix
    description: Runs on the GPU node.
seealso:
  - name: DCGM diagnostics
    description: Run levels and what each runs.
    link: https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html
  - name: nvbandwidth
    description: NVIDIA's bandwidth test, whose printout the gate reads.
    link: https://github.com/NVIDIA/nvbandwidth
  - name: nccl-tests
    description: NCCL's tests; the gate runs all_reduce_perf.
    link: https://github.com/NVIDIA/nccl-tests
  - name: Xid catalog
    description: What each Xid means and the action it calls for.
    link: https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
"""

EXAMPLES = r"""
- name: Gate the node before it joins
  gpucloud.baremetal.gpu_gate:
    node: "{{ inventory_hostname }}"
    gpu_count: 8
    model: H100-SXM5-80GB
    model_pattern: H100
    nvlink: true
    profile: quick
  become: true
  register: gate
"""

RETURN = r"""
msg:
  description: One line; on failure every failed check.
  returned: always
  type: str
passed:
  description: Whether every check passed.
  returned: unless check mode
  type: bool
report:
  description: The report as written (C(schema), C(node), C(profile), C(started), C(duration_s), C(passed),
    C(failed_checks), C(gpus), C(checks) with C(name) C(passed) C(message) C(measured) C(threshold),
    C(warnings), C(tools)).
  returned: unless check mode
  type: dict
path:
  description: The report's file.
  returned: unless check mode
  type: str
"""

import glob
import json
import os
import re
import subprocess
import tempfile
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu import gate, health, nvml
from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu.errors import GateError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._runner import run_module

TOOL_SPEC = {
    "dcgmi": {"type": "str", "default": "dcgmi"},
    "nvbandwidth": {"type": "str", "default": "nvbandwidth"},
    "all_reduce_perf": {"type": "str", "default": "all_reduce_perf"},
    "kernel_log": {"type": "list", "elements": "str", "default": ["dmesg"]},
}
ARGUMENT_SPEC = {
    "node": {"type": "str", "required": True},
    "profile": {"type": "str", "choices": list(gate.PROFILES), "default": "quick"},
    "dcgm_level": {"type": "int", "choices": [1, 2, 3, 4]},
    "gpu_count": {"type": "int", "required": True},
    "model": {"type": "str", "required": True},
    "model_pattern": {"type": "str"},
    "nvlink": {"type": "bool", "default": False},
    "nvme_count": {"type": "int"},
    "ib_ports": {"type": "int"},
    "thresholds": {"type": "dict", "default": {}},
    "tools": {"type": "dict", "default": {}, "options": TOOL_SPEC},
    "tool_timeout": {"type": "int", "default": 3600},
    "report_dir": {"type": "path", "default": "/var/lib/gpucloud/gate"},
}
HINTS = {"dcgmi": "install NVIDIA's datacenter-gpu-manager and start nvidia-dcgm",
         "nvbandwidth": "build or install NVIDIA's nvbandwidth", "all_reduce_perf": "install NVIDIA's nccl-tests"}


def _validate(p: dict) -> dict:
    problems = []
    if p["gpu_count"] < 1:
        problems.append("gpu_count: must be 1 or more (a node without GPUs has nothing to gate), not %d"
                        % p["gpu_count"])
    if p["model_pattern"]:
        try:
            re.compile(p["model_pattern"])
        except re.error as err:
            problems.append("model_pattern: %r is not a regular expression (%s)" % (p["model_pattern"], err))
    for name in ("nvme_count", "ib_ports"):
        if p[name] is not None and p[name] < 0:
            problems.append("%s: must be 0 or more, not %d" % (name, p[name]))
    if not 1 <= p["tool_timeout"] <= 86400:
        problems.append("tool_timeout: must be 1 to 86400 seconds, not %d" % p["tool_timeout"])
    problems += gate.validate_thresholds(p["thresholds"])
    if problems:
        raise ProblemsError(problems)
    floors, _pattern = gate.thresholds_for(p["model"], p["thresholds"])
    if floors is None:
        raise ProblemsError(["thresholds: no bandwidth floors for GPU model %r: the built-in table knows %s; give "
                             "the fleet's row (gpu_gate_thresholds: {'<model pattern>': {nccl_busbw: ..., nccl_bytes: "
                             "16G, h2d: ..., d2h: ..., d2d: ...}})" % (
                                 p["model"], ", ".join(pattern for pattern, _v in gate.DEFAULT_THRESHOLDS))])
    return floors


def _run(argv: list[str], timeout: int) -> tuple[int, str, str]:
    """Run one tool; a tool that is missing or hangs is an answer too (rc 127 / 124)."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        return 127, "", "%s: not found" % argv[0]
    except subprocess.TimeoutExpired:
        return 124, "", "%s: still running after %d s, stopped" % (argv[0], timeout)
    except OSError as err:  # not executable, a directory...: the tool cannot run
        return 126, "", "%s: cannot run (%s)" % (argv[0], err.strerror or err)
    return proc.returncode, proc.stdout, proc.stderr


def _tool_failed(name: str, tool: str, rc: int, err: str, out: str) -> dict:
    hint = (": " + HINTS[tool]) if rc == 127 and tool in HINTS else ""
    return gate.check(name, False, "%s exited %d: %s%s" % (tool, rc, (err.strip() or out.strip())[-300:], hint))


def _inventory(p: dict) -> tuple[list[dict], list[dict], list[str]]:
    try:
        snapshot = nvml.read_all(nvml.load())
    except ProblemsError as exc:  # no NVML, no driver: the gate fails, and says why in its report
        return [gate.check("inventory", False, str(exc), measured=None, threshold=p["gpu_count"])], [], []
    expect = health.Expectations(gpu_count=p["gpu_count"], model=p["model_pattern"], require_nvlink=p["nvlink"])
    findings = health.assess(snapshot, expect)
    # A GPU on a narrower PCIe link than it has is a warning for nvml_health; no tenant gets it here.
    bad = [f for f in findings if f["severity"] == health.CRITICAL or f["check"] == "pcie_width"]
    checks = [gate.check("inventory", not bad, "; ".join("%s %s" % (health.where(f), f["message"]) for f in bad)
                         or "%d GPUs as the fleet says" % len(snapshot["gpus"]),
                         measured=len(snapshot["gpus"]), threshold=p["gpu_count"])]
    if p["nvme_count"] is not None:
        have = len(glob.glob("/sys/class/nvme/nvme*"))
        checks.append(gate.check("nvme", have == p["nvme_count"], "%d NVMe controllers found, the fleet says %d" % (
            have, p["nvme_count"]), measured=have, threshold=p["nvme_count"]))
    if p["ib_ports"] is not None:
        checks.append(gate.infiniband_check(gate.infiniband_ports(), p["ib_ports"]))
    warnings = ["%s %s" % (health.where(f), f["message"]) for f in findings if f["severity"] == health.WARNING]
    return checks, snapshot["gpus"], warnings


def _dcgm(p: dict, level: int) -> dict:
    tool = p["tools"]["dcgmi"]
    rc, out, err = _run([tool, "diag", "-r", str(level), "-j"], p["tool_timeout"])
    if rc in (124, 127) or not out.strip():
        return _tool_failed("dcgm_diag", "dcgmi", rc, err, out)
    try:
        check = gate.dcgm_check(gate.parse_dcgm(out), level)
    except GateError as exc:
        return gate.check("dcgm_diag", False, str(exc))
    if rc != 0 and check["passed"]:  # dcgmi says it failed but no result does: not a pass
        return gate.check("dcgm_diag", False, "dcgmi diag exited %d with no failed result: %s" % (
            rc, (err.strip() or "no message")[-300:]))
    return check


def _bandwidth(p: dict, floors: dict) -> list[dict]:
    cases = [("h2d", "host_to_device_memcpy_ce"), ("d2h", "device_to_host_memcpy_ce")]
    if p["gpu_count"] > 1:
        cases.append(("d2d", "device_to_device_memcpy_read_ce"))
    argv = [p["tools"]["nvbandwidth"]]
    for _name, case in cases:
        argv += ["-t", case]
    rc, out, err = _run(argv, p["tool_timeout"])
    if rc != 0:
        return [_tool_failed(name, "nvbandwidth", rc, err, out) for name, _case in cases]
    try:
        parsed = gate.parse_nvbandwidth(out)
    except GateError as exc:
        return [gate.check(name, False, str(exc)) for name, _case in cases]
    return [gate.bandwidth_check(name, parsed, case, float(floors[name]), p["gpu_count"]) for name, case in cases]


def _nccl(p: dict, floors: dict) -> dict:
    if p["gpu_count"] < 2:
        return gate.check("nccl_all_reduce", True, "one GPU: no all-reduce to run")
    size = floors["nccl_bytes"]
    rc, out, err = _run([p["tools"]["all_reduce_perf"], "-b", size, "-e", size, "-f", "2", "-g",
                         str(p["gpu_count"])], p["tool_timeout"])
    if rc in (124, 127):
        return _tool_failed("nccl_all_reduce", "all_reduce_perf", rc, err, out)
    try:
        check = gate.nccl_check(gate.parse_nccl(out), float(floors["nccl_busbw"]), p["gpu_count"])
    except GateError as exc:
        return gate.check("nccl_all_reduce", False, "%s (exit %d: %s)" % (exc, rc, err.strip()[-200:]))
    if rc != 0 and check["passed"]:
        return gate.check("nccl_all_reduce", False, "all_reduce_perf exited %d: %s" % (rc, err.strip()[-300:]))
    return check


def _kernel_log(p: dict) -> tuple[dict, list[str]]:
    argv = p["tools"]["kernel_log"]
    rc, out, err = _run(argv, 300)
    if rc != 0:
        return gate.check("kernel_log", False, "%s exited %d: %s" % (" ".join(argv), rc, err.strip()[-300:])), []
    return gate.kernel_log_check(gate.parse_kernel_log(out), out)


def _write(report_dir: str, rep: dict) -> str:
    os.makedirs(os.path.join(report_dir, "reports"), mode=0o755, exist_ok=True)
    text = json.dumps(rep, indent=2, sort_keys=True) + "\n"
    name = os.path.join(report_dir, "reports", rep["started"].replace(":", "") + ".json")
    for path in (name, os.path.join(report_dir, "latest.json")):
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".gate-")
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    return name


def run(module: AnsibleModule) -> dict:
    p = module.params
    floors = _validate(p)
    level = p["dcgm_level"] or gate.PROFILE_DCGM_LEVEL[p["profile"]]
    if module.check_mode:
        return {"changed": True, "msg": "GPU gate (%s, DCGM level %d) would run on %s; check mode runs no test" % (
            p["profile"], level, p["node"])}
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    clock = time.monotonic()
    checks, gpus, warnings = _inventory(p)
    log_check, log_warnings = _kernel_log(p)
    checks.append(log_check)
    checks.append(_dcgm(p, level))
    checks += _bandwidth(p, floors)
    checks.append(_nccl(p, floors))
    tools = {"dcgm_level": level, "floors": floors}
    rep = gate.report(p["node"], p["profile"], started, time.monotonic() - clock, checks, gpus,
                      warnings + log_warnings, tools)
    path = _write(p["report_dir"], rep)
    return {"changed": True, "failed": not rep["passed"], "passed": rep["passed"], "msg": gate.summary(rep),
            "report": rep, "path": path}


def main() -> None:
    run_module(ARGUMENT_SPEC, run)


if __name__ == "__main__":
    main()
