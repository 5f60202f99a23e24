# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Image deploy on the lab's gpu4, stage by stage, over several runs (default 3) in one go.

Each run is the lab test ``test_boot_target_deploys_a_cloud_image_and_registers_with_the_keys_it_posted``
(tests/integration/test_provision.py): provision.yml -e reinstall=gpu4 on an image profile, Redfish power cycle,
UEFI PXE, iPXE, the deploy ramdisk writing the lab's Debian 12 cloud image, the reboot handed to the disk by the
boot server, cloud-init's phone-home and registration with StrictHostKeyChecking=yes. The test writes each stage's
time (seconds after provision.yml started; nginx, dnsmasq, the deploy's step reports and the phone-home record
give them) to the lab's log folder; this collects them and prints, per stage, every run, the median and the
stage's share of the median total, so that the run-to-run spread and where the time goes read side by side.
The first run also builds the deploy ramdisk on the boot server (the later ones find it built).

Needs a running lab (lab/gpucloud-lab up). The machine is QEMU TCG (no KVM here): a real server's firmware,
kernel and disk are each faster, the network steps comparable.
Run: .venv/bin/python bench/bench_image_deploy.py [RUNS]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "lab"))

from gpucloud_lab.core import config  # noqa: E402

TIMINGS = config.LOG_DIR / "image-deploy-timings.json"
TEST = ("tests/integration/test_provision.py::"
        "test_boot_target_deploys_a_cloud_image_and_registers_with_the_keys_it_posted")


def one_run() -> dict[str, float]:
    TIMINGS.unlink(missing_ok=True)
    run = subprocess.run([sys.executable, "-m", "pytest", TEST, "-q", "-p", "no:cacheprovider", "-m", "lab"],
                         cwd=REPO, capture_output=True, text=True, check=False,
                         env={**os.environ, "GPUCLOUD_LAB_KEEP": "1"})
    if run.returncode != 0 or not TIMINGS.exists():
        sys.exit("the run failed:\n" + run.stdout[-4000:] + run.stderr[-2000:])
    return json.loads(TIMINGS.read_text())


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    results = []
    for i in range(runs):
        results.append(one_run())
        print(f"run {i + 1}/{runs}: {json.dumps(results[-1])}", flush=True)
    stages = list(results[0])
    total = statistics.median(r[stages[-1]] for r in results)
    header = " ".join(f"{'run ' + str(i + 1):>7}" for i in range(runs))
    print(f"\n{'stage (s after provision.yml started)':40} {header} {'median':>7} {'step':>7} {'share':>6}")
    previous = 0.0
    for stage in stages:
        median = statistics.median(r[stage] for r in results)
        print(f"{stage:40} " + " ".join(f"{r[stage]:7.1f}" for r in results)
              + f" {median:7.1f} {median - previous:7.1f} {(median - previous) / total:6.0%}")
        previous = median


if __name__ == "__main__":
    main()
