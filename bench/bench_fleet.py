# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fleet model scaling: parse + validate time and memory at 100, 1,000 and 5,000 nodes.

Sizes are measured side by side in one run; the report gives each step's ratio to the
previous one next to the ratio of fleet sizes (linear growth: the two ratios match).
Run: .venv/bin/python bench/bench_fleet.py
"""

from __future__ import annotations

import gc
import os
import sys
import time
import tracemalloc

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), ".collections"))
sys.path.insert(0, os.path.dirname(HERE))  # the repo root: tests.support


from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet  # noqa: E402
from tests.support.fleetgen import generate  # noqa: E402

SIZES = [(100, 20, 8), (1000, 200, 32), (5000, 1000, 128)]  # nodes, tenants, switches
TARGET_S = 3.0
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _attempt in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(nodes: int, tenants: int, switches: int) -> dict:
    text = yaml.safe_dump(generate(nodes, tenants, switches), sort_keys=False)
    parse_s = best_of(lambda: yaml.load(text, Loader=Loader))
    data = yaml.load(text, Loader=Loader)
    validate_s = best_of(lambda: load_fleet(data))
    tracemalloc.start()
    load_fleet(yaml.load(text, Loader=Loader))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"nodes": nodes, "tenants": tenants, "switches": switches, "parse": parse_s,
            "validate": validate_s, "total": parse_s + validate_s, "peak_mib": peak / 2**20,
            "yaml_kib": len(text) / 1024}


def main() -> int:
    rows = [measure(*size) for size in SIZES]
    print("fleet model: parse (YAML, %s) + validate/derive (load_fleet), best of 3" % Loader.__name__)
    print("%6s %7s %8s %9s %9s %9s %9s %10s %10s" % (
        "nodes", "tenants", "switches", "yaml KiB", "parse s", "valid. s", "total s", "peak MiB", "x size/x t"))
    prev = None
    for r in rows:
        ratio = ""
        if prev:
            ratio = "%.1f/%.1f" % (r["nodes"] / prev["nodes"], r["total"] / prev["total"])
        print("%6d %7d %8d %9.0f %9.3f %9.3f %9.3f %10.1f %10s" % (
            r["nodes"], r["tenants"], r["switches"], r["yaml_kib"], r["parse"], r["validate"], r["total"],
            r["peak_mib"], ratio))
        prev = r
    largest = rows[-1]
    ok = largest["total"] < TARGET_S
    print("target: %d nodes validated in < %.1f s: %s (%.2f s)" % (
        largest["nodes"], TARGET_S, "met" if ok else "MISSED", largest["total"]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
