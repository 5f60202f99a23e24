# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""LAB SIMULATION of NVIDIA's GPU test tools and of the GPU driver's kernel log, on a lab host without a GPU.

Installed by the lab controller (nvml_sim.py) on each lab GPU host as /usr/local/lib/gpucloud-lab/gpu_tools_sim.py,
called through /usr/local/bin/{dcgmi,nvbandwidth,all_reduce_perf,dmesg} (each runs it with the tool's name first).
Standard library only (it runs on the host's python3). It answers in the real tools' output formats
(tests/unit/plugins/module_utils/data/gate/ holds the samples they are taken from, with their sources):
  dcgmi diag -r N -j   DCGM 4's JSON ("DCGM Diagnostic", test_categories, per-entity results, test_summary)
  nvbandwidth -t ...   the matrix printout ("Running <case>.", the matrix, "SUM <case> <GB/s>")
  all_reduce_perf ...  nccl-tests' table and footer ("# Out of bounds values", "# Avg bus bandwidth")
  dmesg                a kernel log with the driver's "NVRM: Xid (PCI:...): N, ..." lines
The host's GPUs (count) come from /etc/gpucloud-lab/gpus.json, written by the controller from the fleet;
faults come from /etc/gpucloud-lab/gpu-faults.json, written by `gpucloud-lab fault NODE ...`:
  {"missing": N (GPUs gone), "xid": [codes], "nccl_busbw": GB/s, "h2d": GB/s, "d2h": GB/s, "d2d": GB/s,
   "dcgm_fail": test name}
Like the real tools, the bandwidth tools refuse options they do not know, and dcgmi exits non-zero when a test fails.
"""
from __future__ import annotations

import json
import os
import sys

CONF = "/etc/gpucloud-lab/gpus.json"
FAULTS = "/etc/gpucloud-lab/gpu-faults.json"
NAME = "NVIDIA H100 80GB HBM3"
DRIVER = "580.95.05"
# H100 SXM (HGX, NVSwitch) figures of the size nvbandwidth and nccl-tests report on such systems.
NORMAL = {"h2d": 55.2, "d2h": 55.6, "d2d": 388.4, "nccl_busbw": 481.3}
# DCGM 4 test names per run level (DCGM user guide, "Run Levels").
LEVEL_TESTS = {1: [("Deployment", "software")],
               2: [("Deployment", "software"), ("Integration", "pcie"), ("Hardware", "memory")],
               3: [("Deployment", "software"), ("Integration", "pcie"), ("Hardware", "memory"),
                   ("Hardware", "diagnostic"), ("Stress", "targeted_stress"), ("Stress", "targeted_power"),
                   ("Stress", "memory_bandwidth")]}


def _load(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _gpus() -> tuple[int, dict]:
    faults = _load(FAULTS)
    count = int(_load(CONF).get("count") or 0)
    return max(0, count - int(faults.get("missing") or 0)), faults


def _bus(index: int) -> str:
    return "0000:%02x:00" % (0x18 + index * 0x10)


def dcgmi(argv: list[str]) -> int:
    if len(argv) < 1 or argv[0] != "diag" or "-r" not in argv:
        print("Usage: dcgmi diag -r <level> [-j] (gpucloud-lab simulation: only 'diag -r N -j')", file=sys.stderr)
        return 2
    try:  # DCGM's run levels are 1-4 (DCGM user guide, "Run Levels"); dcgmi refuses any other
        level = int(argv[argv.index("-r") + 1])
    except (IndexError, ValueError):
        level = 0
    if not 1 <= level <= 4:
        print("Error: the run level (-r) must be 1, 2, 3 or 4 (gpucloud-lab simulation of dcgmi)", file=sys.stderr)
        return 255
    count, faults = _gpus()
    if count == 0:
        print("Error: No GPUs found on this system (gpucloud-lab simulation)", file=sys.stderr)
        return 255
    categories: dict[str, list] = {}
    failed = False
    for category, test in LEVEL_TESTS.get(min(level, 3), LEVEL_TESTS[3]):
        results = []
        for gpu in range(count):
            result = {"entity_group": "GPU", "entity_group_id": 1, "entity_id": gpu, "status": "Pass"}
            if faults.get("dcgm_fail") == test and gpu == 0:
                result["status"] = "Fail"
                result["warnings"] = [{"error_category": 4, "error_id": 47, "error_severity": 2,
                                       "warning": "Error in %s for GPU %d (gpucloud-lab injected fault)" % (test, gpu)}]
                failed = True
            results.append(result)
        summary = {"status": "Fail" if any(r["status"] == "Fail" for r in results) else "Pass"}
        categories.setdefault(category, []).append({"name": test, "results": results, "test_summary": summary})
    out = {"DCGM Diagnostic": {"test_categories": [{"category": c, "tests": t} for c, t in categories.items()]},
           "entity_groups": [{"entity_group": "GPU", "entity_group_id": 1, "entities": [
               {"device_id": "2330", "entity_id": g, "serial_num": "16501230%05d" % g} for g in range(count)]}],
           "metadata": {"Driver Version Detected": DRIVER, "version": "4.2.3"}}
    print(json.dumps(out, indent=3))
    return 226 if failed else 0


NVB_CASES = {"host_to_device_memcpy_ce": ("memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)", "h2d"),
             "device_to_host_memcpy_ce": ("memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)", "d2h"),
             "device_to_device_memcpy_read_ce": ("memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)", "d2d")}


def nvbandwidth(argv: list[str]) -> int:
    cases = []
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in ("-t", "--testcase") and args:
            case = args.pop(0)
            if case not in NVB_CASES:
                print("ERROR: Testcase %s not found! (gpucloud-lab simulation)" % case, file=sys.stderr)
                return 1
            cases.append(case)
        else:
            print("ERROR: unrecognised option '%s' (gpucloud-lab simulation)" % arg, file=sys.stderr)
            return 1
    count, faults = _gpus()
    lines = ["nvbandwidth Version: v0.8", "Built from Git version: v0.8", "",
             "CUDA Runtime Version: 13000", "CUDA Driver Version: 13000", "Driver Version: %s" % DRIVER, ""]
    lines += ["Device %d: %s (0000%s)" % (g, NAME, _bus(g)) for g in range(count)] + [""]
    for case in cases:
        title, key = NVB_CASES[case]
        value = float(faults.get(key) or NORMAL[key])
        lines += ["Running %s." % case, title, "".join("%10d" % c for c in range(count))]
        total = 0.0
        if key == "d2d":
            for row in range(count):
                cells = ["N/A" if col == row else "%.2f" % (value if row == 0 else NORMAL[key]) for col in range(count)]
                total += sum(float(c) for c in cells if c != "N/A")
                lines.append("%2d%s" % (row, "".join("%10s" % c for c in cells)))
        else:
            cells = ["%.2f" % (value if col == 0 else NORMAL[key]) for col in range(count)]
            total = sum(float(c) for c in cells)
            lines.append("%2d%s" % (0, "".join("%10s" % c for c in cells)))
        lines += ["", "SUM %s %.2f" % (case, total), ""]
    lines += ["NOTE: The reported results may not reflect the full capabilities of the platform.",
              "Performance can vary with software drivers, hardware clocks, and system topology."]
    print("\n".join(lines))
    return 0


def _size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1:] in units else int(text)


def all_reduce_perf(argv: list[str]) -> int:
    opts = {"-b": "8", "-e": "8", "-f": "2", "-g": "1"}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg not in opts or not args:
            print("invalid option -- '%s' (gpucloud-lab simulation)" % arg, file=sys.stderr)
            return 1
        opts[arg] = args.pop(0)
    count, faults = _gpus()
    want = int(opts["-g"])
    if want > count:
        print("Error: requested %d GPUs but only %d are visible (gpucloud-lab simulation)" % (want, count),
              file=sys.stderr)
        print("Test NCCL failure common.cu:1017 'invalid usage (run with NCCL_DEBUG=WARN for details)'")
        return 1
    size = _size(opts["-e"])
    busbw = float(faults.get("nccl_busbw") or NORMAL["nccl_busbw"])
    algbw = busbw * want / (2 * (want - 1)) if want > 1 else busbw
    time_us = size / (algbw * 1e3)
    print("# nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703")
    print("# Collective test starting: all_reduce_perf")
    print("# nThread 1 nGpus %d minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
          "validation: 1 graph: 0" % (want, _size(opts["-b"]), size))
    print("#\n# Using devices")
    host = os.uname().nodename
    for g in range(want):
        print("#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] %s" % (g, os.getpid(), host, g, _bus(g), NAME))
    print("#\n#                                                              out-of-place                       "
          "in-place          ")
    print("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
          "busbw #wrong")
    print("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
          "(GB/s)       ")
    print("%12d  %12d  %8s  %6s  %6d  %7.0f  %6.2f  %6.2f  %6d  %7.0f  %6.2f  %6.2f  %6d" % (
        size, size // 4, "float", "sum", -1, time_us, algbw, busbw, 0, time_us, algbw, busbw, 0))
    print("# Out of bounds values : 0 OK")
    print("# Avg bus bandwidth    : %.4f " % busbw)
    print("#\n# Collective test concluded: all_reduce_perf\n#")
    return 0


XID_TEXT = {79: "GPU has fallen off the bus.", 48: "An uncorrectable double bit error (DBE) has been detected on GPU "
            "in the framebuffer at partition 0, subpartition 0.", 13: "Graphics SM Warp Exception on (GPC 0, TPC 0)",
            94: "Contained: SM (0x1). RST: No, D-RST: No", 95: "Uncontained: FBHUB. RST: Yes, D-RST: No"}


def dmesg(argv: list[str]) -> int:
    _count, faults = _gpus()
    lines = ["[    0.000000] Linux version 6.1.0-28-amd64 (gpucloud-lab simulation of the kernel log)",
             "[    5.104311] nvidia: loading out-of-tree module taints kernel.",
             "[    5.291730] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  %s  Release Build" % DRIVER]
    for n, code in enumerate(faults.get("xid") or []):
        code = int(code)
        lines.append("[%5d.%06d] NVRM: Xid (PCI:%s): %d, pid=%d, name=python3, %s" % (
            812 + n, 120000 + n, _bus(0), code, 4242 + n, XID_TEXT.get(code, "Xid %d (gpucloud-lab injected)" % code)))
    print("\n".join(lines))
    return 0


TOOLS = {"dcgmi": dcgmi, "nvbandwidth": nvbandwidth, "all_reduce_perf": all_reduce_perf, "dmesg": dmesg}

if __name__ == "__main__":
    # Called through a link named after the tool, or (the lab's wrappers) with the tool's name first.
    TOOL, ARGS = os.path.basename(sys.argv[0]), sys.argv[1:]
    if TOOL not in TOOLS:
        if not ARGS or ARGS[0] not in TOOLS:
            sys.exit("gpucloud-lab GPU tool simulation: call it as one of %s" % ", ".join(TOOLS))
        TOOL, ARGS = ARGS[0], ARGS[1:]
    sys.exit(TOOLS[TOOL](ARGS))
