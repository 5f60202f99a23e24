# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading GPUs through a fake pynvml that fails the way the real one does."""
from __future__ import annotations

import sys

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu import nvml
from tests.support.fake_nvml import (
    NVML_ERROR_DRIVER_NOT_LOADED,
    NVML_ERROR_LIBRARY_NOT_FOUND,
    FakeNvml,
    NVMLError,
    NVMLError_GpuIsLost,
    NVMLError_NotSupported,
    NVMLError_Uninitialized,
    a100_mig,
    geforce,
    h100,
    v100,
)


def read(*gpus, **kwargs) -> dict:
    return nvml.read_all(FakeNvml(list(gpus), **kwargs))


def test_the_fake_raises_like_the_real_library() -> None:
    err = NVMLError(3)
    assert isinstance(err, NVMLError_NotSupported) and err.value == 3 and str(err) == "Not Supported"
    assert NVMLError_GpuIsLost().value == 15
    with pytest.raises(NVMLError_Uninitialized):
        FakeNvml([h100()]).nvmlDeviceGetCount()


def test_a_healthy_h100_is_read_whole_and_nvml_is_shut_down() -> None:
    fake = FakeNvml([h100()])
    snap = nvml.read_all(fake)
    assert fake.inits == 1 and fake.refcount == 0
    assert (snap["driver_version"], snap["cuda_driver_version"]) == ("550.54.15", "12.4")
    gpu = snap["gpus"][0]
    assert gpu["name"] == "NVIDIA H100 80GB HBM3" and gpu["uuid"].startswith("GPU-")
    assert gpu["pci_bus_id"] == "00000000:18:00.0" and gpu["serial"] == "1650123000000"
    assert gpu["ecc"] == {"mode_current": True, "mode_pending": True, "volatile": {"corrected": 0, "uncorrected": 0},
                          "aggregate": {"corrected": 3, "uncorrected": 0}}
    assert gpu["remapped_rows"] == {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False}
    assert gpu["retired_pages"] is None
    assert (gpu["nvlink"]["up"], gpu["nvlink"]["total"]) == (18, 18)
    assert gpu["pcie"] == {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16}
    assert (gpu["temperature_c"], gpu["temperature_slowdown_c"]) == (34, 87)
    assert (gpu["power_w"], gpu["power_limit_w"]) == (71.0, 700.0)
    assert gpu["persistence_mode"] is True
    assert gpu["mig"] == {"current": False, "pending": False, "devices": []}
    assert gpu["clocks_event_reasons"] == ["gpu_idle"] and gpu["xid_events"] == []
    assert gpu["unsupported"] == [] and gpu["errors"] == {} and gpu["lost"] is False


def test_an_older_gpu_reports_retired_pages_and_only_its_own_nvlinks() -> None:
    gpu = read(v100())["gpus"][0]
    assert gpu["remapped_rows"] is None and "remapped_rows" in gpu["unsupported"]
    assert gpu["retired_pages"] == {"single_bit": 2, "double_bit": 0, "pending": False}
    assert gpu["nvlink"]["total"] == 6


def test_fields_a_gpu_lacks_are_none_and_named_not_failed() -> None:
    gpu = read(geforce())["gpus"][0]
    assert gpu["ecc"] is None and gpu["nvlink"] is None and gpu["mig"] is None and gpu["serial"] is None
    assert {"ecc", "nvlink", "mig", "serial", "remapped_rows", "retired_pages", "temperature_slowdown_c"} <= set(
        gpu["unsupported"])
    assert gpu["errors"] == {} and not gpu["lost"]


def test_mig_devices_are_listed_with_their_instances() -> None:
    mig = read(a100_mig(devices=2))["gpus"][0]["mig"]
    assert mig["current"] is True and len(mig["devices"]) == 2
    first = mig["devices"][0]
    assert first["uuid"].startswith("MIG-") and first["name"] == "NVIDIA A100-SXM4-80GB MIG 3g.40gb"
    assert (first["gpu_instance_id"], first["compute_instance_id"], first["memory_total_mib"]) == (1, 0, 40192)


@pytest.mark.parametrize("how", ["handle", "calls"])
def test_a_gpu_fallen_off_the_bus_is_lost_and_the_others_are_still_read(how: str) -> None:
    snap = read(h100(0), h100(1, lost=how), h100(2))
    lost = snap["gpus"][1]
    assert lost["lost"] is True and "NVMLError_GpuIsLost" in lost["lost_reason"]
    assert [g["lost"] for g in snap["gpus"]] == [False, True, False]
    assert snap["gpus"][2]["uuid"] == h100(2).uuid


def test_old_library_bytes_become_str() -> None:
    snap = read(a100_mig(), bytes_strings=True)
    gpu = snap["gpus"][0]
    assert snap["driver_version"] == "550.54.15"
    assert all(isinstance(gpu[key], str) for key in ("name", "uuid", "serial", "pci_bus_id"))
    assert isinstance(gpu["mig"]["devices"][0]["uuid"], str)


def test_an_error_other_than_not_supported_is_recorded_not_hidden() -> None:
    gpu = read(h100(), denied=("nvmlDeviceGetPowerUsage",))["gpus"][0]
    assert gpu["power_w"] is None and "power_w" not in gpu["unsupported"]
    assert gpu["errors"] == {"power_w": "NVMLError_NoPermission (Insufficient Permissions)"}


def test_a_function_the_installed_library_lacks_is_not_supported() -> None:
    class OldNvml(FakeNvml):
        nvmlDeviceGetRemappedRows = None
        nvmlDeviceGetCurrentClocksEventReasons = None  # before 12.535: ...ThrottleReasons only

    gpu = nvml.read_all(OldNvml([h100()]))["gpus"][0]
    assert "remapped_rows" in gpu["unsupported"] and gpu["clocks_event_reasons"] == ["gpu_idle"]


@pytest.mark.parametrize("error, hint", [
    (NVML_ERROR_LIBRARY_NOT_FOUND, "libnvidia-ml.so.1 was not found: install the NVIDIA driver"),
    (NVML_ERROR_DRIVER_NOT_LOADED, "the NVIDIA kernel driver is not loaded"),
])
def test_nvml_that_cannot_start_says_why_in_one_line(error: int, hint: str) -> None:
    with pytest.raises(nvml.NvmlUnavailable) as caught:
        read(h100(), init_error=error)
    assert str(caught.value).startswith("NVML is unavailable: " + hint)
    assert "\n" not in str(caught.value)


def test_load_without_the_library_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # `import pynvml` raises ImportError
    with pytest.raises(nvml.NvmlUnavailable) as caught:
        nvml.load()
    message = str(caught.value)
    assert "pip install nvidia-ml-py" in message and sys.executable in message and "\n" not in message


def test_xid_events_go_to_their_gpu_and_unsupported_gpus_say_so() -> None:
    noisy = h100(1, xids=[79, 13])
    fake = FakeNvml([h100(0), noisy, h100(2, supported_events=0x1)])
    snap = nvml.read_all(fake, xid_wait_ms=10)
    assert [g["xid_events"] for g in snap["gpus"]] == [[], [79, 13], None]
    assert "xid_events" in snap["gpus"][2]["unsupported"]
    assert fake.event_sets and all(s.freed for s in fake.event_sets) and snap["xid_note"] is None


def test_clock_event_reasons_are_decoded_and_unknown_bits_kept() -> None:
    assert nvml.decode_clocks_event_reasons(0x1 | 0x8 | 0x40 | 0x1000) == [
        "gpu_idle", "hw_slowdown", "hw_thermal_slowdown", "0x1000"]
    assert nvml.decode_clocks_event_reasons(0) == []


def test_cuda_version_is_major_dot_minor() -> None:
    assert nvml.cuda_version(12040) == "12.4" and nvml.cuda_version(11080) == "11.8" and nvml.cuda_version(None) is None
