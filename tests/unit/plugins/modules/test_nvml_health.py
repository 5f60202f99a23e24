# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvml_health module end to end: main() with its arguments, the fake pynvml, the JSON it prints."""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu import nvml
from ansible_collections.gpucloud.baremetal.plugins.modules import nvml_health
from tests.support.fake_nvml import NVML_ERROR_LIBRARY_NOT_FOUND, FakeNvml, a100_mig, h100, install, v100
from tests.support.module_args import patch_module_args


def run_main(capsys: pytest.CaptureFixture, **args) -> tuple[int, dict]:
    with patch_module_args(args), pytest.raises(SystemExit) as exited:
        nvml_health.main()
    return exited.value.code, json.loads(capsys.readouterr().out)


@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch):
    """Install a fake pynvml with the given GPUs."""
    return lambda *gpus, **kwargs: install(monkeypatch, FakeNvml(list(gpus), **kwargs))


def test_healthy_node_passes_with_table_and_nothing_changed(host, capsys) -> None:
    fake = host(h100(0), h100(1), v100(2), a100_mig(3))
    rc, out = run_main(capsys, gpu_count=4, driver_version="550")
    assert rc == 0 and out["changed"] is False and not out.get("failed")
    assert out["gpu_count"] == 4 and out["driver_version"] == "550.54.15" and out["cuda_driver_version"] == "12.4"
    assert [g["uuid"] for g in out["gpus"]] == [h100(i).uuid for i in range(4)]
    assert out["msg"] == "NVML health: 4 GPUs OK"
    assert out["table"][0] == "driver 550.54.15, CUDA 12.4, 4 GPUs" and len(out["table"]) >= 6
    assert {f["severity"] for f in out["findings"]} == {"info"}  # V100: no row remapping
    assert fake.refcount == 0  # nvmlShutdown after reading


def test_an_unmet_expectation_fails_and_keeps_the_whole_result(host, capsys) -> None:
    host(h100(0), h100(1, ecc_counts={(0, 0): 0, (1, 0): 3, (0, 1): 0, (1, 1): 3}))
    rc, out = run_main(capsys, gpu_count=2)
    assert rc == 1 and out["failed"] is True and out["changed"] is False
    assert out["msg"].startswith("NVML health: 1 critical finding on 2 GPUs: GPU 1 ecc_uncorrected: 3 uncorrected")
    assert out["gpu_count"] == 2 and len(out["gpus"]) == 2 and any("CRITICAL ecc_uncorrected" in row for row in out["table"])


def test_the_wrong_count_model_or_driver_fails(host, capsys) -> None:
    host(h100(0))
    rc, out = run_main(capsys, gpu_count=8, model="B200", driver_version="560")
    assert rc == 1
    assert [(f["check"], f["gpu"]) for f in out["findings"] if f["severity"] == "critical"] == [
        ("gpu_count", None), ("driver_version", None), ("model", 0)]


def test_warnings_do_not_fail(host, capsys) -> None:
    host(h100(0, nvlink=[1] * 17 + [0], persistence=0, pcie=(5, 5, 8, 16)))
    rc, out = run_main(capsys)
    assert rc == 0 and out["msg"] == "NVML health: 1 GPU OK (3 warnings)"
    assert sorted(f["check"] for f in out["findings"] if f["severity"] == "warning") == [
        "nvlink", "pcie_width", "persistence_mode"]


def test_options_turn_warnings_into_failures(host, capsys) -> None:
    host(h100(0, nvlink=[1] * 17 + [0], persistence=0))
    rc, out = run_main(capsys, require_nvlink=True, require_persistence_mode=True)
    assert rc == 1 and {f["check"] for f in out["findings"] if f["severity"] == "critical"} == {
        "nvlink", "persistence_mode"}


def test_a_gpu_fallen_off_the_bus_fails_the_node(host, capsys) -> None:
    host(h100(0), h100(1, lost="handle"))
    rc, out = run_main(capsys, gpu_count=2)
    assert rc == 1 and "GPU 1 lost: no handle: NVMLError_GpuIsLost (GPU is lost)" in out["msg"]
    assert out["gpus"][1]["lost"] is True and out["gpus"][0]["lost"] is False


def test_not_supported_fields_are_null_and_listed_not_failed(host, capsys) -> None:
    host(v100(0))
    rc, out = run_main(capsys)
    gpu = out["gpus"][0]
    assert rc == 0 and gpu["remapped_rows"] is None and gpu["unsupported"] == ["remapped_rows"]
    assert gpu["retired_pages"]["single_bit"] == 2


def test_without_the_library_one_line_says_what_to_install(monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # not installed: `import pynvml` raises ImportError
    rc, out = run_main(capsys)
    assert rc == 1 and out["failed"] is True
    assert out["msg"].startswith("NVML is unavailable: the Python library nvidia-ml-py (import pynvml) is missing")
    assert "pip install nvidia-ml-py" in out["msg"] and "\n" not in out["msg"]
    assert "exception" not in out and "Traceback" not in json.dumps(out)


def test_without_the_driver_one_line_says_what_to_install(host, capsys) -> None:
    host(h100(0), init_error=NVML_ERROR_LIBRARY_NOT_FOUND)
    rc, out = run_main(capsys)
    assert rc == 1 and "\n" not in out["msg"] and "exception" not in out
    assert out["msg"] == ("NVML is unavailable: libnvidia-ml.so.1 was not found: install the NVIDIA driver (or its NVML "
                          "library) on this host (nor in the GPU Operator's driver root /run/nvidia/driver) "
                          "(NVMLError_LibraryNotFound (NVML Shared Library Not Found))")


def _a_shared_library() -> Path:
    """A real ELF shared library this process has mapped (a stand-in for the driver's libnvidia-ml.so.1)."""
    import zlib  # noqa: F401  (maps libz.so.1 where Python links it dynamically)

    for line in Path("/proc/self/maps").read_text().splitlines():
        path = line.split()[-1] if len(line.split()) >= 6 else ""
        if re.search(r"^/(usr/)?lib[^ ]*/lib(z|ffi|ssl|crypto|m)\.so(\.[0-9]+)*$", path):
            return Path(path)
    raise AssertionError("no system shared library is mapped in this process")


def test_with_the_operators_driver_nvml_is_read_from_its_driver_root(host, capsys, tmp_path, monkeypatch) -> None:
    """The GPU Operator's driver container owns the driver: the host has no libnvidia-ml.so.1 on its library path,
    /run/nvidia/driver has it. The module loads it from there and reads the GPUs."""
    fake = host(h100(0), init_error=NVML_ERROR_LIBRARY_NOT_FOUND)
    fake.library_if_loaded = True
    root = tmp_path / "run-nvidia-driver"
    (root / "usr/lib/x86_64-linux-gnu").mkdir(parents=True)
    shutil.copyfile(_a_shared_library(), root / "usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1")
    monkeypatch.setattr(nvml, "DRIVER_ROOTS", (str(tmp_path / "elsewhere"), str(root)))
    rc, out = run_main(capsys, gpu_count=1)
    assert rc == 0 and out["msg"] == "NVML health: 1 GPU OK", out["msg"]
    assert fake.inits == 1


def test_check_mode_reads_and_reports_the_same(host, capsys) -> None:
    host(h100(0), h100(1, temperature=86))
    rc, normal = run_main(capsys)
    rc_check, checked = run_main(capsys, _ansible_check_mode=True)
    assert rc == rc_check == 1 and checked["changed"] is False
    assert checked["findings"] == normal["findings"] and checked["table"] == normal["table"]


def test_invalid_options_fail_before_reading(host, capsys) -> None:
    fake = host(h100(0))
    rc, out = run_main(capsys, model="H100(", xid_wait_ms=5)
    assert rc == 1 and out["msg"].startswith("input is invalid (1 problem):") and "model" in out["msg"]
    assert fake.inits == 0


def test_documentation_matches_the_argument_spec() -> None:
    import yaml

    doc = yaml.safe_load(nvml_health.DOCUMENTATION)
    assert set(doc["options"]) == set(nvml_health.ARGUMENT_SPEC)
    for name, spec in nvml_health.ARGUMENT_SPEC.items():
        assert doc["options"][name]["type"] == spec["type"]
        assert doc["options"][name].get("default") == spec.get("default"), name
    assert doc["attributes"]["check_mode"]["support"] == "full"
    assert doc["attributes"]["diff_mode"]["support"] == "none"
    returned = yaml.safe_load(nvml_health.RETURN)
    assert {"gpus", "findings", "table", "driver_version", "cuda_driver_version", "gpu_count"} <= set(returned)
