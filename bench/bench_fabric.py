# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Switch config rendering at scale: every platform's native files for every switch.

Sizes are measured side by side in one run; the last is 128 switches x 1,000 tenants (target
< 5 s for rendering all of them). The report gives each size's ratio to the first next to the
ratio of work (tenant-switch pairs), so linear growth shows as matching ratios.
Run: .venv/bin/python bench/bench_fabric.py

Against another checkout (e.g. ``git worktree add /tmp/before main``), side by side:
    .venv/bin/python bench/bench_fabric.py --against /tmp/before [--rounds 5]
renders the largest size in both, alternately, each in a process of its own, and reports the
CPU seconds of each (process time: other load on the machine does not count) and their ratio.
It reads a checkout from before issue 23 (flat ``_fabric_platforms``) too.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# nodes, tenants, switches (126 leaves + 2 spines at the largest size); nodes in proportion
SIZES = [(250, 100, 16), (4000, 1000, 128)]
TARGET_S = 5.0
PLATFORMS = ("nvue", "sonic", "eos")
PACKAGE = "ansible_collections.gpucloud.baremetal.plugins.module_utils"


def load(tree: str) -> tuple:
    """``render_files``, ``load_fleet`` and ``generate`` of the checkout ``tree``."""
    sys.path[:0] = [os.path.join(tree, ".collections"), tree]  # tree: tests.support
    try:
        registry = importlib.import_module(PACKAGE + "._fabric.registry")
    except ImportError:  # a checkout from before issue 23
        registry = importlib.import_module(PACKAGE + "._fabric_platforms")
    fleet = importlib.import_module(PACKAGE + "._fleet")
    fleetgen = importlib.import_module("tests.support.fleetgen")
    return registry.render_files, fleet.load_fleet, fleetgen.generate


def render_all(render_files, model: dict, clock=time.perf_counter) -> tuple[int, int, dict[str, float]]:
    """Every native file of every switch; seconds per platform (FRR counted with its platform)."""
    underlay = model["fabric"]["underlay"]
    files = size = 0
    seconds = dict.fromkeys(PLATFORMS, 0.0)
    for switch in model["fabric"]["switches"]:
        start = clock()
        rendered = render_files(switch, underlay)
        seconds[switch["platform"]] += clock() - start
        for text in rendered.values():
            files += 1
            size += len(text)
    return files, size, seconds


def report() -> int:
    render_files, load_fleet, generate = load(ROOT)
    rows = []
    for nodes, tenants, switches in SIZES:
        model = load_fleet(generate(nodes=nodes, tenants=tenants, switches=switches))
        pairs = sum(len(s["tenants"]) for s in model["fabric"]["switches"])
        gc.collect()
        start = time.perf_counter()
        files, size, seconds = render_all(render_files, model)
        elapsed = time.perf_counter() - start
        rows.append((nodes, tenants, switches, pairs, files, size, elapsed, seconds))
    base = rows[0]
    print(
        "%6s %8s %8s %14s %6s %8s %8s %8s %8s %8s %8s %8s"
        % ("nodes", "tenants", "switches", "tenant-switch", "files", "MB", "nvue s", "sonic s", "eos s",
           "total s", "time x", "work x")
    )  # fmt: skip
    for nodes, tenants, switches, pairs, files, size, elapsed, seconds in rows:
        print(
            "%6d %8d %8d %14d %6d %8.1f %8.2f %8.2f %8.2f %8.2f %8.1f %8.1f"
            % (nodes, tenants, switches, pairs, files, size / 1e6, seconds["nvue"], seconds["sonic"],
               seconds["eos"], elapsed, elapsed / base[6], pairs / base[3])
        )  # fmt: skip
    print("per platform at the largest size (NVUE and SONiC include their FRR file):")
    for platform in PLATFORMS:
        print(
            "  %-5s %.2f s, x%.1f the smaller size's %.3f s"
            % (platform, rows[-1][7][platform], rows[-1][7][platform] / max(base[7][platform], 1e-9),
               base[7][platform])
        )  # fmt: skip
    largest = rows[-1][6]
    verdict = "OK" if largest < TARGET_S else "OVER TARGET"
    print(
        "render all platforms, %d switches x %d tenants: %.2f s (target < %.1f s): %s"
        % (rows[-1][2], rows[-1][1], largest, TARGET_S, verdict)
    )
    return 0 if largest < TARGET_S else 1


def measure(tree: str) -> int:
    """Print the CPU seconds of rendering the largest size with the checkout ``tree`` (a child run)."""
    render_files, load_fleet, generate = load(tree)
    nodes, tenants, switches = SIZES[-1]
    model = load_fleet(generate(nodes=nodes, tenants=tenants, switches=switches))
    gc.collect()
    start = time.process_time()
    render_all(render_files, model, time.process_time)
    print("%.4f" % (time.process_time() - start))
    return 0


def against(other: str, rounds: int) -> int:
    """This checkout and ``other``, alternately, ``rounds`` times each; CPU seconds and ratio."""
    trees = {"before": os.path.abspath(other), "after": ROOT}
    runs: dict[str, list[float]] = {name: [] for name in trees}
    for _round in range(rounds):
        for name, tree in trees.items():
            out = subprocess.run([sys.executable, __file__, "--measure", tree], capture_output=True, text=True,
                                 check=True)  # fmt: skip
            runs[name].append(float(out.stdout.split()[-1]))
    for name, tree in trees.items():
        print("%-6s %s: CPU s per run %s; min %.2f, median %.2f"
              % (name, tree, " ".join("%.2f" % s for s in runs[name]), min(runs[name]),
                 statistics.median(runs[name])))  # fmt: skip
    ratio = min(runs["after"]) / min(runs["before"])
    print("after / before (min CPU s, %d switches x %d tenants): %.3f" % (SIZES[-1][2], SIZES[-1][1], ratio))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="CHECKOUT", help="compare with this checkout, side by side")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--measure", metavar="CHECKOUT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        return measure(args.measure)
    if args.against:
        return against(args.against, args.rounds)
    return report()


if __name__ == "__main__":
    sys.exit(main())
