# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read every GPU through NVML into plain dicts.

``pynvml`` (PyPI ``nvidia-ml-py``) is imported by ``load()`` only, so this file imports without
it (ansible-test's import sanity, the controller). Enum values below are the NVML C header's
(``nvml.h``); they are part of NVML's ABI and the same in every ``nvidia-ml-py`` release, so only
functions and error classes are taken from the library.

A field a GPU does not support (``NVMLError_NotSupported``, or a function the installed driver
or library lacks) is ``None`` and named in the GPU's ``unsupported`` list; any other error of one
field goes to ``errors``. ``NVMLError_GpuIsLost`` (or no handle for an index) marks the whole GPU
``lost``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Callable
from typing import Any

from .errors import GpuLost, NvmlUnavailable

# nvmlReturn_t
SUCCESS = 0
ERROR_UNINITIALIZED = 1
ERROR_INVALID_ARGUMENT = 2
ERROR_NOT_SUPPORTED = 3
ERROR_NO_PERMISSION = 4
ERROR_NOT_FOUND = 6
ERROR_DRIVER_NOT_LOADED = 9
ERROR_TIMEOUT = 10
ERROR_LIBRARY_NOT_FOUND = 12
ERROR_FUNCTION_NOT_FOUND = 13
ERROR_GPU_IS_LOST = 15
ERROR_LIB_RM_VERSION_MISMATCH = 18

# Other enums of nvml.h used here.
TEMPERATURE_GPU = 0
TEMPERATURE_THRESHOLD_SLOWDOWN = 1
MEMORY_ERROR_TYPE_CORRECTED = 0
MEMORY_ERROR_TYPE_UNCORRECTED = 1
VOLATILE_ECC = 0
AGGREGATE_ECC = 1
PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0
PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1
EVENT_TYPE_XID_CRITICAL_ERROR = 0x8
NVLINK_MAX_LINKS_FALLBACK = 18  # nvidia-ml-py before 12.550 knew 18 links; newer ones say 36

# nvmlClocksEventReason* bits, named as nvidia-smi -q names them (lower case).
CLOCKS_EVENT_REASONS = {
    0x001: "gpu_idle",
    0x002: "applications_clocks_setting",
    0x004: "sw_power_cap",
    0x008: "hw_slowdown",
    0x010: "sync_boost",
    0x020: "sw_thermal_slowdown",
    0x040: "hw_thermal_slowdown",
    0x080: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}

# What to tell the user when NVML itself cannot start (nvmlInit's errors).
INIT_HINTS = {
    ERROR_LIBRARY_NOT_FOUND:
        "libnvidia-ml.so.1 was not found: install the NVIDIA driver (or its NVML library) on this host",
    ERROR_DRIVER_NOT_LOADED: "the NVIDIA kernel driver is not loaded: load it (modprobe nvidia) or install the driver",
    ERROR_NO_PERMISSION: "no permission to open the NVIDIA device files (/dev/nvidia*): run as root (become: true)",
    ERROR_LIB_RM_VERSION_MISMATCH:
        "libnvidia-ml and the loaded kernel driver differ in version: reboot or reload the nvidia modules",
}

MISSING_LIBRARY = ("the Python library nvidia-ml-py (import pynvml) is missing for %s: "
                   "pip install nvidia-ml-py on this host, or set ansible_python_interpreter to a Python that has it")


def load() -> Any:
    """Import pynvml, or raise NvmlUnavailable naming what to install."""
    try:
        import pynvml
    except ImportError:
        raise NvmlUnavailable([MISSING_LIBRARY % sys.executable]) from None
    return pynvml


def text(value: Any) -> str:
    """Old nvidia-ml-py releases return bytes where current ones return str."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def code(err: Exception) -> int | None:
    return getattr(err, "value", None)


def describe(nv: Any, err: Exception) -> str:
    """The error's name and text, e.g. ``NVMLError_NoPermission (Insufficient Permissions)``."""
    try:
        message = str(err)
    except Exception:  # the real __str__ calls into NVML; never let a message hide the error
        message = "code %s" % code(err)
    return "%s (%s)" % (type(err).__name__, message)


class Reader:
    """One GPU's reads: each field is a value, None + ``unsupported``, or None + ``errors``."""

    def __init__(self, nv: Any, gpu: dict):
        self.nv = nv
        self.gpu = gpu

    def call(self, field: str, name: str, *args: Any) -> Any:
        fn: Callable | None = getattr(self.nv, name, None)
        if fn is None:  # the installed nvidia-ml-py predates this call
            self.unsupported(field)
            return None
        try:
            return fn(*args)
        except self.nv.NVMLError as err:
            if code(err) == ERROR_GPU_IS_LOST:
                raise GpuLost(describe(self.nv, err)) from None
            if code(err) in (ERROR_NOT_SUPPORTED, ERROR_FUNCTION_NOT_FOUND):
                self.unsupported(field)
            else:
                self.gpu["errors"][field] = describe(self.nv, err)
            return None

    def unsupported(self, field: str) -> None:
        if field not in self.gpu["unsupported"]:
            self.gpu["unsupported"].append(field)


def cuda_version(value: int | None) -> str | None:
    """NVML gives the CUDA driver version as 1000*major + 10*minor (12040 -> 12.4)."""
    if value is None:
        return None
    return "%d.%d" % (value // 1000, (value % 1000) // 10)


def read_system(nv: Any) -> dict:
    system: dict = {"unsupported": [], "errors": {}}
    reader = Reader(nv, system)
    system["driver_version"] = _text_or_none(reader.call("driver_version", "nvmlSystemGetDriverVersion"))
    cuda = reader.call("cuda_driver_version", "nvmlSystemGetCudaDriverVersion")
    system["cuda_driver_version"] = cuda_version(cuda)
    return system


def _text_or_none(value: Any) -> str | None:
    return None if value is None else text(value)


def new_gpu(index: int) -> dict:
    return {"index": index, "lost": False, "lost_reason": None, "unsupported": [], "errors": {}}


def read_gpu(nv: Any, index: int) -> tuple[dict, Any]:
    """One GPU as a dict, and its handle (None when it has none)."""
    gpu = new_gpu(index)
    try:
        handle = nv.nvmlDeviceGetHandleByIndex(index)
    except nv.NVMLError as err:
        gpu.update(lost=True, lost_reason="no handle: %s" % describe(nv, err))
        return gpu, None
    try:
        _read_fields(Reader(nv, gpu), handle)
    except GpuLost as err:
        gpu.update(lost=True, lost_reason=str(err))
    return gpu, handle


def _read_fields(r: Reader, h: Any) -> None:
    gpu = r.gpu
    gpu["name"] = _text_or_none(r.call("name", "nvmlDeviceGetName", h))
    gpu["uuid"] = _text_or_none(r.call("uuid", "nvmlDeviceGetUUID", h))
    gpu["serial"] = _text_or_none(r.call("serial", "nvmlDeviceGetSerial", h))
    pci = r.call("pci_bus_id", "nvmlDeviceGetPciInfo", h)
    gpu["pci_bus_id"] = None if pci is None else text(pci.busId)
    gpu["ecc"] = _ecc(r, h)
    gpu["remapped_rows"] = _remapped_rows(r, h)
    # Row remapping replaced page retirement with Ampere; older GPUs retire pages instead.
    gpu["retired_pages"] = _retired_pages(r, h) if gpu["remapped_rows"] is None else None
    gpu["nvlink"] = _nvlink(r, h)
    gpu["pcie"] = _pcie(r, h)
    gpu["temperature_c"] = r.call("temperature_c", "nvmlDeviceGetTemperature", h, TEMPERATURE_GPU)
    gpu["temperature_slowdown_c"] = r.call(
        "temperature_slowdown_c", "nvmlDeviceGetTemperatureThreshold", h, TEMPERATURE_THRESHOLD_SLOWDOWN)
    gpu["power_w"] = _watts(r.call("power_w", "nvmlDeviceGetPowerUsage", h))
    gpu["power_limit_w"] = _watts(r.call("power_limit_w", "nvmlDeviceGetEnforcedPowerLimit", h))
    persistence = r.call("persistence_mode", "nvmlDeviceGetPersistenceMode", h)
    gpu["persistence_mode"] = None if persistence is None else bool(persistence)
    gpu["mig"] = _mig(r, h)
    gpu["clocks_event_reasons"] = _clocks_event_reasons(r, h)
    gpu["xid_events"] = None  # filled by read_xid_events


def _watts(milliwatts: int | None) -> float | None:
    return None if milliwatts is None else round(milliwatts / 1000.0, 1)


def _ecc(r: Reader, h: Any) -> dict | None:
    mode = r.call("ecc", "nvmlDeviceGetEccMode", h)
    if mode is None:
        return None
    ecc: dict = {"mode_current": bool(mode[0]), "mode_pending": bool(mode[1])}
    for counter, counter_type in (("volatile", VOLATILE_ECC), ("aggregate", AGGREGATE_ECC)):
        ecc[counter] = {
            kind: r.call("ecc.%s.%s" % (counter, kind), "nvmlDeviceGetTotalEccErrors", h, error_type, counter_type)
            for kind, error_type in (("corrected", MEMORY_ERROR_TYPE_CORRECTED),
                                     ("uncorrected", MEMORY_ERROR_TYPE_UNCORRECTED))
        }
    return ecc


def _remapped_rows(r: Reader, h: Any) -> dict | None:
    rows = r.call("remapped_rows", "nvmlDeviceGetRemappedRows", h)
    if rows is None:
        return None
    correctable, uncorrectable, pending, failure = rows
    return {"correctable": correctable, "uncorrectable": uncorrectable,
            "pending": bool(pending), "failure": bool(failure)}


def _retired_pages(r: Reader, h: Any) -> dict | None:
    single = r.call("retired_pages", "nvmlDeviceGetRetiredPages", h,
                    PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS)
    if single is None:
        return None
    double = r.call("retired_pages", "nvmlDeviceGetRetiredPages", h, PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
    pending = r.call("retired_pages.pending", "nvmlDeviceGetRetiredPagesPendingStatus", h)
    return {"single_bit": len(single), "double_bit": None if double is None else len(double),
            "pending": None if pending is None else bool(pending)}


def _nvlink(r: Reader, h: Any) -> dict | None:
    """Every link the GPU has; links past its last answer NotSupported or InvalidArgument."""
    links = []
    for link in range(getattr(r.nv, "NVML_NVLINK_MAX_LINKS", NVLINK_MAX_LINKS_FALLBACK)):
        try:
            state = r.nv.nvmlDeviceGetNvLinkState(h, link)
        except r.nv.NVMLError as err:
            if code(err) == ERROR_GPU_IS_LOST:
                raise GpuLost(describe(r.nv, err)) from None
            if code(err) in (ERROR_NOT_SUPPORTED, ERROR_INVALID_ARGUMENT, ERROR_FUNCTION_NOT_FOUND):
                continue
            r.gpu["errors"]["nvlink.%d" % link] = describe(r.nv, err)
            continue
        links.append({"link": link, "up": bool(state)})
    if not links:
        r.unsupported("nvlink")
        return None
    up = sum(1 for link in links if link["up"])
    return {"links": links, "up": up, "total": len(links)}


def _pcie(r: Reader, h: Any) -> dict:
    return {
        "gen_current": r.call("pcie.gen_current", "nvmlDeviceGetCurrPcieLinkGeneration", h),
        # The most the GPU and the slot allow together (nvmlDeviceGetGpuMaxPcieLinkGeneration is the GPU's alone).
        "gen_max": r.call("pcie.gen_max", "nvmlDeviceGetMaxPcieLinkGeneration", h),
        "width_current": r.call("pcie.width_current", "nvmlDeviceGetCurrPcieLinkWidth", h),
        "width_max": r.call("pcie.width_max", "nvmlDeviceGetMaxPcieLinkWidth", h),
    }


def _mig(r: Reader, h: Any) -> dict | None:
    mode = r.call("mig", "nvmlDeviceGetMigMode", h)
    if mode is None:
        return None
    mig: dict = {"current": bool(mode[0]), "pending": bool(mode[1]), "devices": []}
    if not mig["current"]:
        return mig
    slots = r.call("mig.devices", "nvmlDeviceGetMaxMigDeviceCount", h) or 0
    for slot in range(slots):
        try:
            device = r.nv.nvmlDeviceGetMigDeviceHandleByIndex(h, slot)
        except r.nv.NVMLError as err:
            if code(err) == ERROR_GPU_IS_LOST:
                raise GpuLost(describe(r.nv, err)) from None
            continue  # NotFound: no MIG device in this slot
        memory = r.call("mig.devices.memory", "nvmlDeviceGetMemoryInfo", device)
        mig["devices"].append({
            "index": slot,
            "uuid": _text_or_none(r.call("mig.devices.uuid", "nvmlDeviceGetUUID", device)),
            "name": _text_or_none(r.call("mig.devices.name", "nvmlDeviceGetName", device)),
            "gpu_instance_id": r.call("mig.devices.gpu_instance_id", "nvmlDeviceGetGpuInstanceId", device),
            "compute_instance_id": r.call("mig.devices.compute_instance_id", "nvmlDeviceGetComputeInstanceId", device),
            "memory_total_mib": None if memory is None else memory.total // (1024 * 1024),
        })
    return mig


def decode_clocks_event_reasons(mask: int) -> list[str]:
    names = [name for bit, name in CLOCKS_EVENT_REASONS.items() if mask & bit]
    unknown = mask & ~sum(CLOCKS_EVENT_REASONS)
    if unknown:
        names.append("0x%x" % unknown)
    return names


def _clocks_event_reasons(r: Reader, h: Any) -> list[str] | None:
    # nvidia-ml-py 12.535 renamed ...ClocksThrottleReasons to ...ClocksEventReasons.
    name = ("nvmlDeviceGetCurrentClocksEventReasons"
            if getattr(r.nv, "nvmlDeviceGetCurrentClocksEventReasons", None) is not None
            else "nvmlDeviceGetCurrentClocksThrottleReasons")
    mask = r.call("clocks_event_reasons", name, h)
    return None if mask is None else decode_clocks_event_reasons(mask)


def read_xid_events(nv: Any, read: list[tuple[dict, Any]], wait_ms: int) -> str | None:
    """Collect XID events into each GPU's ``xid_events``; None, or why none could be read.

    NVML only reports events that happen after they are registered: this sees XIDs during
    ``wait_ms`` (0: only those already queued), not earlier ones (those are in the kernel log,
    ``NVRM: Xid``). A GPU that cannot report them keeps ``xid_events: None`` and names them in
    ``unsupported``.
    """
    try:
        event_set = nv.nvmlEventSetCreate()
    except nv.NVMLError as err:
        return "XID events are not readable: %s" % describe(nv, err)
    try:
        by_uuid = {}
        for gpu, handle in read:
            if handle is None or gpu["lost"]:
                continue
            if _register_xid(nv, gpu, handle, event_set):
                gpu["xid_events"] = []
                by_uuid[gpu.get("uuid")] = gpu
        if by_uuid:
            _wait_events(nv, event_set, by_uuid, wait_ms)
    finally:
        with contextlib.suppress(nv.NVMLError):
            nv.nvmlEventSetFree(event_set)
    return None


def _register_xid(nv: Any, gpu: dict, handle: Any, event_set: Any) -> bool:
    try:
        supported = nv.nvmlDeviceGetSupportedEventTypes(handle)
        if not supported & EVENT_TYPE_XID_CRITICAL_ERROR:
            raise nv.NVMLError(ERROR_NOT_SUPPORTED)
        nv.nvmlDeviceRegisterEvents(handle, EVENT_TYPE_XID_CRITICAL_ERROR, event_set)
    except nv.NVMLError as err:
        if code(err) in (ERROR_NOT_SUPPORTED, ERROR_FUNCTION_NOT_FOUND):
            gpu["unsupported"].append("xid_events")
        else:
            gpu["errors"]["xid_events"] = describe(nv, err)
        return False
    return True


def _wait_events(nv: Any, event_set: Any, by_uuid: dict, wait_ms: int, limit: int = 1000) -> None:
    timeout = wait_ms
    for _count in range(limit):
        try:
            data = nv.nvmlEventSetWait(event_set, timeout)
        except nv.NVMLError as err:
            if code(err) != ERROR_TIMEOUT:
                for gpu in by_uuid.values():
                    gpu["errors"]["xid_events"] = describe(nv, err)
            return
        timeout = 0  # drain what is queued, without waiting again
        if not data.eventType & EVENT_TYPE_XID_CRITICAL_ERROR:
            continue
        try:
            uuid = text(nv.nvmlDeviceGetUUID(data.device))
        except nv.NVMLError:
            continue
        if uuid in by_uuid:
            by_uuid[uuid]["xid_events"].append(int(data.eventData))


# Where the GPU Operator's driver container puts the driver's root on the host (driver.enabled=true): NVML's
# library is there, not on the host's library path. Library folders of Ubuntu, RHEL and other driver images.
DRIVER_ROOTS = ("/run/nvidia/driver",)
LIBRARY_DIRS = ("usr/lib/x86_64-linux-gnu", "usr/lib64", "usr/lib/aarch64-linux-gnu", "usr/lib", "lib64", "lib")
LIBRARY = "libnvidia-ml.so.1"


def preload_driver_library(roots: tuple[str, ...]) -> str | None:
    """Load libnvidia-ml.so.1 from a driver container's root, so that pynvml's ``CDLL("libnvidia-ml.so.1")`` finds
    it loaded (the dynamic loader matches an already loaded library by its soname). The path, or None."""
    for root in roots:
        for folder in LIBRARY_DIRS:
            path = os.path.join(root, folder, LIBRARY)
            if os.path.isfile(path):
                try:
                    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                except OSError:
                    continue
                return path
    return None


def init(nv: Any, roots: tuple[str, ...] | None = None) -> str | None:
    """nvmlInit; when the host has no NVML library, the one of the GPU Operator's driver root. Returns the library
    path loaded from a driver root, or None (the host's own)."""
    roots = DRIVER_ROOTS if roots is None else roots
    try:
        nv.nvmlInit()
        return None
    except nv.NVMLError as err:
        failure = err
    loaded = preload_driver_library(roots) if code(failure) == ERROR_LIBRARY_NOT_FOUND else None
    if loaded:
        try:
            nv.nvmlInit()
            return loaded
        except nv.NVMLError as err:
            failure = err
    hint = INIT_HINTS.get(code(failure), "nvmlInit failed")
    where = ""
    if code(failure) == ERROR_LIBRARY_NOT_FOUND:
        where = " (nor in the GPU Operator's driver root %s)" % ", ".join(roots)
    raise NvmlUnavailable(["%s%s (%s)" % (hint, where, describe(nv, failure))]) from None


def read_all(nv: Any, xid_wait_ms: int = 0) -> dict:
    """Everything the module reports: ``driver_version``, ``cuda_driver_version``, ``gpus``."""
    init(nv)
    try:
        system = read_system(nv)
        try:
            count = nv.nvmlDeviceGetCount()
        except nv.NVMLError as err:
            raise NvmlUnavailable(["cannot count the GPUs: %s" % describe(nv, err)]) from None
        read = [read_gpu(nv, index) for index in range(count)]
        system["xid_note"] = read_xid_events(nv, read, xid_wait_ms)
        system["gpus"] = [gpu for gpu, handle in read]
        return system
    finally:
        with contextlib.suppress(nv.NVMLError):
            nv.nvmlShutdown()
