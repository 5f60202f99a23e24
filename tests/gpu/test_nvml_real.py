# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvml_health on this machine's real NVIDIA GPUs, run through ansible-playbook, checked against nvidia-smi.

Runs only where there is an NVIDIA GPU (the driver's libnvidia-ml.so.1 and /dev/nvidiactl) and
nvidia-ml-py for this Python; everywhere else, CI included (CI has no GPU), every test is skipped
and says why. ``tests/gpu/run.sh`` sets up a fresh GPU machine and runs this file.
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import ansible_collections.gpucloud.baremetal as collection

HOW = "run tests/gpu/run.sh on a machine with an NVIDIA GPU"


def why_not_here() -> str | None:
    """None on a machine where nvml_health can read a real GPU, else the reason."""
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return "no libnvidia-ml.so.1 (no NVIDIA driver) on this machine"
    if not os.path.exists("/dev/nvidiactl"):
        return "no NVIDIA GPU here (/dev/nvidiactl is missing)"
    try:
        import pynvml  # noqa: F401
    except ImportError:
        return "nvidia-ml-py (import pynvml) is not installed for %s" % sys.executable
    return None


REASON = why_not_here()
if REASON is not None and os.environ.get("GPUCLOUD_GPU_REQUIRED"):  # set by run.sh: a skip there would hide the answer
    pytest.fail("GPUCLOUD_GPU_REQUIRED is set but %s" % REASON, pytrace=False)
needs_gpu = pytest.mark.skipif(REASON is not None, reason="NO NVIDIA GPU TEST: %s; %s" % (REASON, HOW))

COLLECTIONS = str(Path(collection.__path__[0]).parents[2])  # .../ansible_collections/gpucloud/baremetal -> root
BIN = Path(sys.executable).parent


def nvml_health(tmp_path: Path, check: bool = False, **args) -> dict:
    """Run the module on localhost in a playbook; its registered result, as JSON."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    out = tmp_path / "result.json"
    play = [{
        "name": "nvml_health on this machine",
        "hosts": "localhost",
        "gather_facts": False,
        "tasks": [
            {"name": "Read every GPU", "gpucloud.baremetal.nvml_health": args, "register": "health",
             "ignore_errors": True},
            {"name": "Keep the result", "ansible.builtin.copy": {"content": "{{ health | to_json }}", "dest": str(out),
                                                                 "mode": "0600"},
             "check_mode": False},
        ],
    }]
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump(play))
    (tmp_path / "ansible.cfg").write_text("[defaults]\n")
    env = dict(os.environ, ANSIBLE_CONFIG=str(tmp_path / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=COLLECTIONS,
               ANSIBLE_INVENTORY_ENABLED="host_list", ANSIBLE_PYTHON_INTERPRETER=sys.executable,
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_REMOTE_TMP=str(tmp_path / "tmp"))
    playbook_bin = shutil.which("ansible-playbook", path=str(BIN)) or "ansible-playbook"
    command = [playbook_bin, "-i", "localhost,", "-c", "local", str(playbook)] + (["--check"] if check else [])
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(out.read_text())


def smi(*fields: str) -> list[list[str]] | None:
    """nvidia-smi --query-gpu rows, or None where there is no nvidia-smi."""
    if shutil.which("nvidia-smi") is None:
        return None
    done = subprocess.run(["nvidia-smi", "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"],
                          capture_output=True, text=True, timeout=60, check=True)
    return [[cell.strip() for cell in line.split(",")] for line in done.stdout.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def health(tmp_path_factory: pytest.TempPathFactory) -> dict:
    result = nvml_health(tmp_path_factory.mktemp("nvml"))
    print("\n" + "\n".join(result.get("table") or [result.get("msg", "")]))
    return result


@needs_gpu
def test_the_module_reads_every_gpu(health: dict) -> None:
    assert "gpus" in health and "exception" not in health, health.get("msg")
    assert health["changed"] is False
    assert health["gpu_count"] >= 1 and len(health["gpus"]) == health["gpu_count"]
    listed = smi("index")
    if listed is not None:
        assert health["gpu_count"] == len(listed)
        names = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=True).stdout
        assert health["gpu_count"] == sum(1 for line in names.splitlines() if line.startswith("GPU "))


@needs_gpu
def test_identities_and_versions_match_nvidia_smi(health: dict) -> None:
    assert re.fullmatch(r"\d+\.\d+(\.\d+)*", health["driver_version"]), health["driver_version"]
    assert re.fullmatch(r"\d+\.\d+", health["cuda_driver_version"]), health["cuda_driver_version"]
    for gpu in health["gpus"]:
        assert not gpu["lost"], gpu["lost_reason"]
        assert gpu["uuid"].startswith("GPU-") and gpu["name"] and gpu["pci_bus_id"]
    rows = smi("uuid", "driver_version", "pci.bus_id", "name")
    if rows is None:
        pytest.skip("no nvidia-smi to compare with")
    assert [g["uuid"] for g in health["gpus"]] == [r[0] for r in rows]
    assert {r[1] for r in rows} == {health["driver_version"]}
    assert [g["pci_bus_id"].lower() for g in health["gpus"]] == [r[2].lower() for r in rows]
    assert [g["name"] for g in health["gpus"]] == [r[3] for r in rows]


@needs_gpu
def test_temperature_and_power_are_plausible(health: dict) -> None:
    for gpu in health["gpus"]:
        assert 0 <= gpu["temperature_c"] <= 110, gpu
        if gpu["temperature_slowdown_c"] is not None:
            assert 50 <= gpu["temperature_slowdown_c"] <= 120, gpu
        if gpu["power_w"] is None:  # a few boards do not report power
            assert "power_w" in gpu["unsupported"]
            continue
        assert 0 < gpu["power_w"] <= gpu["power_limit_w"] * 1.1, gpu
        pcie = gpu["pcie"]
        assert 1 <= pcie["gen_current"] <= pcie["gen_max"] <= 6 and 1 <= pcie["width_current"] <= pcie["width_max"] <= 32


@needs_gpu
def test_the_gpus_are_healthy(health: dict) -> None:
    """A separate verdict: the module works (above) even where a GPU of this machine is not healthy."""
    assert not health.get("failed"), health["msg"]


@needs_gpu
def test_expectations_hold_on_the_truth_and_fail_on_a_lie(tmp_path: Path, health: dict) -> None:
    right = nvml_health(tmp_path / "right", gpu_count=health["gpu_count"], driver_version=health["driver_version"],
                        model=re.escape(health["gpus"][0]["name"]))
    assert not [f for f in right["findings"] if f["check"] in ("gpu_count", "driver_version", "model")]
    wrong = nvml_health(tmp_path / "wrong", check=True, gpu_count=health["gpu_count"] + 1)
    assert wrong["failed"] is True and wrong["changed"] is False
    assert ("critical", "gpu_count") in [(f["severity"], f["check"]) for f in wrong["findings"]]
