# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's DCGM exporter simulation answers as dcgm-exporter does: the fields of the counter file the ClusterPolicy
names (read as dcgm-exporter reads it: `field, type, help`), its labels, the pods holding GPUs, the injected faults;
and Prometheus' own parser (`promtool check metrics`) reads what it serves."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from gpucloud_lab.sim import dcgm_exporter_sim as sim

from tests.support.tools import require

PROFILE = Path(__file__).parents[4] / "roles" / "gpu_operator" / "files" / "dcgm-metrics-gpucloud-v1.csv"


def host(tmp_path: Path, count: int, faults: dict) -> Path:
    (tmp_path / "etc/gpucloud-lab").mkdir(parents=True)
    (tmp_path / "etc/gpucloud-lab/gpus.json").write_text(json.dumps({"count": count}))
    (tmp_path / "etc/gpucloud-lab/gpu-faults.json").write_text(json.dumps(faults))
    return tmp_path


def series(text: str, name: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(name + "{")]


def test_the_profile_fields_labels_pods_and_faults(tmp_path: Path) -> None:
    root = host(tmp_path, 4, {"missing": 1, "xid": [79, 48, 79]})
    state = {"root": str(root), "fields": sim.read_counters(PROFILE.read_text()),
             "pods": {"1": {"pod": "train-0", "namespace": "tenant-beta", "container": "train"}}}
    text = sim.render("gpu2", state, started=0)
    util = series(text, "DCGM_FI_DEV_GPU_UTIL")
    assert len(util) == 3  # four GPUs, one missing
    assert 'namespace="tenant-beta",pod="train-0"' in util[1] and 'Hostname="gpu2"' in util[1]
    assert util[1].endswith(" 97") and util[0].endswith(" 0") and "namespace" not in util[0]
    assert 'DCGM_FI_DEV_SERIAL="1650123000001"' in util[1] and 'DCGM_FI_DRIVER_VERSION="580.95.05"' in util[1]
    xids = series(text, "DCGM_EXP_XID_ERRORS_COUNT")
    assert [(line.split('xid="')[1].split('"')[0], line.rsplit(" ", 1)[1]) for line in xids] == [("48", "1"), ("79", "2")]
    assert all('gpu="0"' in line and 'window_size_in_ms="300000"' in line for line in xids)
    # Only the profile's fields: a field the file lacks is not served, label fields are no series.
    names = {line.split("{")[0] for line in text.splitlines() if not line.startswith("#")}
    assert names <= {field for field, kind, _help in state["fields"] if kind != "label"}
    assert "DCGM_FI_DEV_SERIAL" not in names and "DCGM_FI_PROF_SM_ACTIVE" in names
    assert "# HELP DCGM_FI_DEV_ROW_REMAP_FAILURE Whether remapping of rows has failed" in text


def test_without_a_counter_file_it_serves_the_exporter_defaults(tmp_path: Path) -> None:
    text = sim.render("gpu3", {"root": str(host(tmp_path, 1, {}))}, started=0)
    assert series(text, "DCGM_FI_DEV_GPU_UTIL") and not series(text, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL")


def test_prometheus_parses_what_it_serves(tmp_path: Path) -> None:
    promtool = require("promtool")
    root = host(tmp_path, 8, {"xid": [79]})
    text = sim.render("gpu2", {"root": str(root), "fields": sim.read_counters(PROFILE.read_text()),
                               "pods": {"0": {"pod": "p", "namespace": "n", "container": "c"}}}, started=0)
    run = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, check=False)
    # Exit 3: lint remarks only (dcgm-exporter's own names: camelCase labels, counters without _total); 1: unparsable.
    assert run.returncode in (0, 3) and "parsing error" not in run.stderr + run.stdout, run.stderr
    broken = subprocess.run([promtool, "check", "metrics"], input=text.replace("} ", " ", 1), capture_output=True,
                            text=True, check=False)
    assert broken.returncode == 1
