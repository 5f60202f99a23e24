# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Provisioning at scale: the dnsmasq configuration and every node's iPXE script and seed,
rendered and validated, for 1,000 and 5,000 nodes side by side (target < 2 s at 5,000).

Nodes are spread over three OS profiles (Ubuntu autoinstall, Rocky kickstart, Debian preseed),
so every validator runs: cloud-init's schema, pykickstart, the preseed rules, and `dnsmasq --test`
on the generated configuration. Seeds are grouped by shape first (validate.shapes: equal once the
node's own, model-checked values are masked) and each shape is validated once with the real tool;
"validated" counts those, "seeds" all seeds. The report gives each phase's seconds and the ratio of the
largest size to the first next to the ratio of nodes, so linear growth shows as matching ratios.
Run: .venv/bin/python bench/bench_provision.py
"""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), ".collections"))
sys.path.insert(0, os.path.dirname(HERE))  # the repo root: tests.support

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, pxe_nodes  # noqa: E402
from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import tree, validate  # noqa: E402
from tests.support.fleetgen import generate  # noqa: E402

SIZES = [(1000, 100, 16), (5000, 1000, 128)]  # nodes, tenants, switches
TARGET_S = 2.0
PROFILES = {
    "ubuntu": {"family": "ubuntu", "version": "24.04"},
    "rocky9": {"family": "rocky", "version": "9.4"},
    "debian12": {"family": "debian", "version": "12"},
}
OPTIONS = {"tftp_root": "/srv/gpucloud/tftp", "ssh_keys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIbench ops@example"],
           "phone_home_url": "http://10.0.0.10:8080/phone-home/{name}", "dns_servers": ["10.0.0.1"]}


def fleet(nodes: int, tenants: int, switches: int) -> tuple[dict, list[dict]]:
    data = generate(nodes=nodes, tenants=tenants, switches=switches)
    data["site"]["os_profiles"] = PROFILES
    names = list(PROFILES)
    for i, node in enumerate(data["nodes"]):
        node["os"] = names[i % len(names)]
    model = load_fleet(data)
    return model["site"], pxe_nodes(model)


def measure(site: dict, nodes: list[dict]) -> dict[str, float]:
    clock = time.perf_counter
    out: dict[str, float] = {}
    start = clock()
    rendered = tree.render(site, nodes, OPTIONS)
    out["render"] = clock() - start
    files, seeds = rendered["files"], rendered["seeds"]
    start = clock()
    groups = validate.shapes(files, seeds, rendered["seed_values"])
    out["shapes"] = clock() - start
    reps = {p: seeds[p] for p in groups}
    start = clock()
    problems = validate.cloud_config({p: files[p] for p, (f, _v) in reps.items() if f == "ubuntu"
                                      and p.endswith("/user-data")})
    out["cloud-init"] = clock() - start
    start = clock()
    problems += validate.kickstart({p: (files[p], v) for p, (f, v) in reps.items() if f == "rocky"})
    out["pykickstart"] = clock() - start
    start = clock()
    problems += validate.preseed({p: files[p] for p, (f, _v) in reps.items() if f == "debian"})
    out["preseed"] = clock() - start
    assert not problems, problems[:5]
    dnsmasq = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as conf:
        conf.write(rendered["dnsmasq"])
        conf.flush()
        start = clock()
        subprocess.run([dnsmasq, "--test", f"--conf-file={conf.name}"], check=True, capture_output=True)
        out["dnsmasq --test"] = clock() - start
    out["total"] = sum(out.values())
    out["files"] = float(len(files) + 1)
    out["seeds"] = float(len(seeds))
    out["validated"] = float(len(groups))
    return out


def main() -> int:
    rows = []
    for nodes, tenants, switches in SIZES:
        site, pxe = fleet(nodes, tenants, switches)
        gc.collect()
        rows.append((nodes, measure(site, pxe)))
    counts = ("files", "seeds", "validated")
    phases = [k for k in rows[0][1] if k not in counts]
    print("%-16s" % "phase" + "".join("%14s" % ("%d nodes" % n) for n, _r in rows) + "%10s" % "ratio")
    for phase in phases:
        values = [r[phase] for _n, r in rows]
        ratio = values[-1] / values[0] if values[0] else float("nan")
        print("%-16s" % phase + "".join("%13.3fs" % v for v in values) + "%10.2f" % ratio)
    for count in counts:
        print("%-16s" % count + "".join("%14d" % r[count] for _n, r in rows)
              + "%10.2f" % (rows[-1][1][count] / rows[0][1][count]))
    print("nodes ratio: %.2f" % (rows[-1][0] / rows[0][0]))
    largest = rows[-1][1]["total"]
    verdict = "OK" if largest < TARGET_S else "OVER TARGET"
    print("%d nodes: %.2f s (target < %.1f s): %s" % (rows[-1][0], largest, TARGET_S, verdict))
    return 0 if largest < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
