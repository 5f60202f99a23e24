# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Switch config rendering at scale: every platform's native files for every switch.

Sizes are measured side by side in one run; the last is 128 switches x 1,000 tenants (target
< 5 s for rendering all of them). The report gives each size's ratio to the first next to the
ratio of work (tenant-switch pairs), so linear growth shows as matching ratios.
Run: .venv/bin/python bench/bench_fabric.py
"""

from __future__ import annotations

import gc
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), ".collections"))
sys.path.insert(0, os.path.dirname(HERE))  # the repo root: tests.support


from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import registry as platforms  # noqa: E402
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet  # noqa: E402
from tests.support.fleetgen import generate  # noqa: E402

# nodes, tenants, switches (126 leaves + 2 spines at the largest size); nodes in proportion
SIZES = [(250, 100, 16), (4000, 1000, 128)]
TARGET_S = 5.0


PLATFORMS = ("nvue", "sonic", "eos")


def render_all(model: dict) -> tuple[int, int, dict[str, float]]:
    """Every native file of every switch; seconds per platform (FRR counted with its platform)."""
    underlay = model["fabric"]["underlay"]
    files = size = 0
    seconds = dict.fromkeys(PLATFORMS, 0.0)
    clock = time.perf_counter
    for switch in model["fabric"]["switches"]:
        start = clock()
        rendered = platforms.render_files(switch, underlay)
        seconds[switch["platform"]] += clock() - start
        for text in rendered.values():
            files += 1
            size += len(text)
    return files, size, seconds


def main() -> int:
    rows = []
    for nodes, tenants, switches in SIZES:
        model = load_fleet(generate(nodes=nodes, tenants=tenants, switches=switches))
        pairs = sum(len(s["tenants"]) for s in model["fabric"]["switches"])
        gc.collect()
        start = time.perf_counter()
        files, size, seconds = render_all(model)
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


if __name__ == "__main__":
    sys.exit(main())
