# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fake ``pynvml`` (PyPI ``nvidia-ml-py``) that behaves like the real one, for tests without a GPU.

What it keeps of the real library (nvidia-ml-py 13.x ``pynvml.py``, read side by side):
- the function names and signatures the collection calls, returning what the real ones return:
  ``str`` for strings (``bytes`` with ``bytes_strings=True``, as releases before 11.515 did),
  lists/tuples as the real wrappers build them, objects with the real attribute names for
  ``nvmlPciInfo_t``, ``c_nvmlMemory_t`` and ``c_nvmlEventData_t``;
- errors as ``NVMLError`` subclasses named and numbered as the real ones are
  (``NVMLError(3)`` is an ``NVMLError_NotSupported``, ``str()`` is NVML's text);
- ``nvmlInit`` first: any other call before it raises ``NVMLError_Uninitialized``, and
  ``nvmlInit`` itself fails as the real one does without a driver (``LibraryNotFound``,
  ``DriverNotLoaded``);
- a field a GPU lacks raises ``NVMLError_NotSupported``; a GPU fallen off the bus raises
  ``NVMLError_GpuIsLost`` (for its handle, or for every call on it);
- XID events are delivered only to an event set they were registered with, then
  ``NVMLError_Timeout``.

``FakeNvml`` is a module object: ``monkeypatch.setitem(sys.modules, "pynvml", FakeNvml([...]))``.
"""

from __future__ import annotations

import string
import sys
import types
from dataclasses import dataclass, field

NVML_SUCCESS = 0
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_ALREADY_INITIALIZED = 5
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_INSUFFICIENT_SIZE = 7
NVML_ERROR_INSUFFICIENT_POWER = 8
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_TIMEOUT = 10
NVML_ERROR_IRQ_ISSUE = 11
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_ERROR_CORRUPTED_INFOROM = 14
NVML_ERROR_GPU_IS_LOST = 15
NVML_ERROR_RESET_REQUIRED = 16
NVML_ERROR_OPERATING_SYSTEM = 17
NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18
NVML_ERROR_IN_USE = 19
NVML_ERROR_MEMORY = 20
NVML_ERROR_NO_DATA = 21
NVML_ERROR_UNKNOWN = 999

NVML_FEATURE_DISABLED = 0
NVML_FEATURE_ENABLED = 1
NVML_TEMPERATURE_GPU = 0
NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0
NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1
NVML_MEMORY_ERROR_TYPE_CORRECTED = 0
NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
NVML_VOLATILE_ECC = 0
NVML_AGGREGATE_ECC = 1
NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0
NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1
NVML_NVLINK_MAX_LINKS = 36
NVML_DEVICE_MIG_DISABLE = 0
NVML_DEVICE_MIG_ENABLE = 1
nvmlEventTypeSingleBitEccError = 0x1
nvmlEventTypeDoubleBitEccError = 0x2
nvmlEventTypePState = 0x4
nvmlEventTypeXidCriticalError = 0x8
nvmlEventTypeClock = 0x10
nvmlClocksEventReasonGpuIdle = 0x1
nvmlClocksEventReasonApplicationsClocksSetting = 0x2
nvmlClocksEventReasonSwPowerCap = 0x4
nvmlClocksEventReasonHwSlowdown = 0x8
nvmlClocksEventReasonSyncBoost = 0x10
nvmlClocksEventReasonSwThermalSlowdown = 0x20
nvmlClocksEventReasonHwThermalSlowdown = 0x40
nvmlClocksEventReasonHwPowerBrakeSlowdown = 0x80


class NVMLError(Exception):
    """As the real one: ``NVMLError(value)`` builds the subclass for that value."""

    _valClassMapping: dict = {}
    _errcode_to_string = {
        NVML_ERROR_UNINITIALIZED: "Uninitialized",
        NVML_ERROR_INVALID_ARGUMENT: "Invalid Argument",
        NVML_ERROR_NOT_SUPPORTED: "Not Supported",
        NVML_ERROR_NO_PERMISSION: "Insufficient Permissions",
        NVML_ERROR_ALREADY_INITIALIZED: "Already Initialized",
        NVML_ERROR_NOT_FOUND: "Not Found",
        NVML_ERROR_INSUFFICIENT_SIZE: "Insufficient Size",
        NVML_ERROR_INSUFFICIENT_POWER: "Insufficient External Power",
        NVML_ERROR_DRIVER_NOT_LOADED: "Driver Not Loaded",
        NVML_ERROR_TIMEOUT: "Timeout",
        NVML_ERROR_IRQ_ISSUE: "Interrupt Request Issue",
        NVML_ERROR_LIBRARY_NOT_FOUND: "NVML Shared Library Not Found",
        NVML_ERROR_FUNCTION_NOT_FOUND: "Function Not Found",
        NVML_ERROR_CORRUPTED_INFOROM: "Corrupted infoROM",
        NVML_ERROR_GPU_IS_LOST: "GPU is lost",
        NVML_ERROR_RESET_REQUIRED: "GPU requires restart",
        NVML_ERROR_OPERATING_SYSTEM: "The operating system has blocked the request.",
        NVML_ERROR_LIB_RM_VERSION_MISMATCH: "RM has detected an NVML/RM version mismatch.",
        NVML_ERROR_MEMORY: "Insufficient Memory",
        NVML_ERROR_UNKNOWN: "Unknown Error",
    }

    def __new__(cls, value):
        kind = NVMLError._valClassMapping.get(value, cls) if cls is NVMLError else cls
        obj = Exception.__new__(kind)
        obj.value = value
        return obj

    def __str__(self) -> str:
        return self._errcode_to_string.get(self.value, "NVML Error with code %d" % self.value)

    def __eq__(self, other) -> bool:
        return self.value == other.value


def _error_classes() -> dict[str, type]:
    """NVML_ERROR_GPU_IS_LOST -> NVMLError_GpuIsLost, as the real _extractNVMLErrorsAsClasses names them."""
    classes = {}
    for name, value in sorted(globals().items()):
        if not name.startswith("NVML_ERROR_"):
            continue
        class_name = "NVMLError_" + string.capwords(name.replace("NVML_ERROR_", ""), "_").replace("_", "")

        def new(cls, *args, _value=value):
            return NVMLError.__new__(cls, _value)

        cls = type(class_name, (NVMLError,), {"__new__": new, "__module__": __name__})
        NVMLError._valClassMapping[value] = cls
        classes[class_name] = cls
    return classes


globals().update(_error_classes())
_ERRORS = {name: value for name, value in globals().items() if name.startswith("NVMLError")}
_CONSTANTS = {name: value for name, value in globals().items()
              if name.startswith(("NVML_", "nvmlEventType", "nvmlClocksEventReason"))}


@dataclass
class MigDevice:
    profile: str  # e.g. "1g.10gb"
    uuid: str
    gpu_instance_id: int
    compute_instance_id: int
    memory_mib: int


@dataclass
class FakeGpu:
    """One GPU. A field set to None is not supported by this GPU (NVMLError_NotSupported)."""

    name: str = "NVIDIA H100 80GB HBM3"
    uuid: str = "GPU-00000000-0000-4000-8000-000000000000"
    serial: str | None = "1650123000001"
    bus_id: str = "00000000:18:00.0"
    ecc_mode: tuple[int, int] | None = (1, 1)
    # (error type, counter type) -> count; NVML_MEMORY_ERROR_TYPE_* x NVML_VOLATILE/AGGREGATE_ECC
    ecc_counts: dict = field(default_factory=lambda: {(0, 0): 0, (1, 0): 0, (0, 1): 3, (1, 1): 0})
    remapped_rows: tuple[int, int, int, int] | None = (0, 0, 0, 0)  # corr, unc, pending, failure
    retired_pages: dict | None = None  # cause -> [addresses]; pre-Ampere GPUs only
    retired_pending: int = 0
    nvlink: list[int] | None = field(default_factory=lambda: [1] * 18)  # state per link
    pcie: tuple[int, int, int, int] = (5, 5, 16, 16)  # gen, max gen, width, max width
    temperature: int = 34
    slowdown: int | None = 87
    power_mw: int | None = 71000
    limit_mw: int | None = 700000
    persistence: int | None = 1
    mig_mode: tuple[int, int] | None = (0, 0)
    mig_devices: list[MigDevice] = field(default_factory=list)
    mig_slots: int = 7
    clocks: int = nvmlClocksEventReasonGpuIdle
    supported_events: int = 0x1 | 0x2 | 0x4 | 0x8 | 0x10
    xids: list[int] = field(default_factory=list)  # raised after a set registers for them
    lost: str | None = None  # "handle": no handle at all; "calls": every call on it fails


def h100(index: int = 0, **changes) -> FakeGpu:
    base = {"uuid": "GPU-%08x-1111-4222-8333-444455556666" % index, "serial": "16501230%05d" % index,
            "bus_id": "00000000:%02X:00.0" % (0x18 + index * 0x10)}
    return FakeGpu(**{**base, **changes})


def v100(index: int = 0, **changes) -> FakeGpu:
    """Volta: no row remapping (retired pages instead), 6 NVLink links, PCIe Gen3."""
    return h100(index, **{"name": "Tesla V100-SXM2-32GB", "remapped_rows": None, "retired_pages": {0: [0x1000, 0x2000], 1: []},
                          "nvlink": [1] * 6, "pcie": (3, 3, 16, 16), "slowdown": 83, "limit_mw": 300000,
                          "power_mw": 45000, **changes})


def a100_mig(index: int = 0, devices: int = 2, **changes) -> FakeGpu:
    """MIG enabled with ``devices`` 3g.40gb instances."""
    migs = [MigDevice("3g.40gb", "MIG-%08x-aaaa-4bbb-8ccc-%012d" % (index, n), gpu_instance_id=1 + n,
                      compute_instance_id=0, memory_mib=40192) for n in range(devices)]
    return h100(index, **{"name": "NVIDIA A100-SXM4-80GB", "nvlink": [1] * 12, "pcie": (4, 4, 16, 16), "slowdown": 92,
                          "limit_mw": 400000, "mig_mode": (1, 1), "mig_devices": migs, "supported_events": 0x8, **changes})


def geforce(index: int = 0, **changes) -> FakeGpu:
    """A consumer GPU: no ECC, no row remapping or page retirement, no NVLink, no MIG, no serial."""
    return h100(index, **{"name": "NVIDIA GeForce RTX 4090", "serial": None, "ecc_mode": None, "remapped_rows": None,
                          "nvlink": None, "mig_mode": None, "pcie": (1, 4, 16, 16), "slowdown": None, "limit_mw": 450000,
                          **changes})


class _Handle:
    """Stands for the opaque c_nvmlDevice_t pointer."""

    def __init__(self, gpu: FakeGpu, mig: MigDevice | None = None):
        self.gpu = gpu
        self.mig = mig


class _PciInfo:
    def __init__(self, bus_id, domain: int, bus: int):
        self.busId = bus_id
        self.busIdLegacy = bus_id
        self.domain = domain
        self.bus = bus
        self.device = 0
        self.pciDeviceId = 0x233010DE


class _Memory:
    def __init__(self, total: int):
        self.total = total
        self.free = total
        self.used = 0


class _EventSet:
    def __init__(self):
        self.handles: list[_Handle] = []
        self.freed = False


class _EventData:
    def __init__(self, device: _Handle, event_type: int, data: int):
        self.device = device
        self.eventType = event_type
        self.eventData = data
        self.gpuInstanceId = 0xFFFFFFFF
        self.computeInstanceId = 0xFFFFFFFF


class FakeNvml(types.ModuleType):
    """The fake ``pynvml`` module for one host."""

    def __init__(self, gpus: list[FakeGpu], driver: str = "550.54.15", cuda: int = 12040,
                 init_error: int | None = None, bytes_strings: bool = False, denied: tuple[str, ...] = ()):
        super().__init__("pynvml")
        self.__dict__.update(_ERRORS)
        self.__dict__.update(_CONSTANTS)
        self.gpus = gpus
        self.driver = driver
        self.cuda = cuda
        self.init_error = init_error  # what nvmlInit raises (LibraryNotFound, DriverNotLoaded, ...)
        # As pynvml's CDLL("libnvidia-ml.so.1") does: LibraryNotFound only while no library of that name is
        # loaded in this process (the dynamic loader reuses a loaded one; here: mapped, per /proc/self/maps).
        self.library_if_loaded = False
        self.bytes_strings = bytes_strings
        self.denied = denied  # function names that raise NVMLError_NoPermission
        self.refcount = 0
        self.inits = 0
        self.event_sets: list[_EventSet] = []

    # helpers ----------------------------------------------------------------------------------
    def _ready(self, name: str) -> None:
        if self.refcount == 0:
            raise NVMLError(NVML_ERROR_UNINITIALIZED)
        if name in self.denied:
            raise NVMLError(NVML_ERROR_NO_PERMISSION)

    def _gpu(self, name: str, handle: _Handle, value=None):
        """Check a call on a device; ``value`` None means the GPU does not support it."""
        self._ready(name)
        if not isinstance(handle, _Handle):
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        if handle.gpu.lost:
            raise NVMLError(NVML_ERROR_GPU_IS_LOST)
        return value

    def _value(self, name: str, handle: _Handle, value):
        self._gpu(name, handle)
        if value is None:
            raise NVMLError(NVML_ERROR_NOT_SUPPORTED)
        return value

    def _str(self, value: str):
        return value.encode() if self.bytes_strings else value

    # library ----------------------------------------------------------------------------------
    def nvmlInit(self):
        return self.nvmlInitWithFlags(0)

    def nvmlInitWithFlags(self, flags):
        if self.init_error is not None and not (self.library_if_loaded and self._library_loaded()):
            raise NVMLError(self.init_error)
        self.refcount += 1
        self.inits += 1

    @staticmethod
    def _library_loaded() -> bool:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            return any(line.rstrip().endswith("/libnvidia-ml.so.1") for line in maps)

    def nvmlShutdown(self):
        self._ready("nvmlShutdown")
        self.refcount -= 1

    def nvmlErrorString(self, result):
        return NVMLError._errcode_to_string.get(result, "Unknown Error")

    def nvmlSystemGetDriverVersion(self):
        self._ready("nvmlSystemGetDriverVersion")
        return self._str(self.driver)

    def nvmlSystemGetCudaDriverVersion(self):
        self._ready("nvmlSystemGetCudaDriverVersion")
        return self.cuda

    def nvmlSystemGetCudaDriverVersion_v2(self):
        return self.nvmlSystemGetCudaDriverVersion()

    # devices ----------------------------------------------------------------------------------
    def nvmlDeviceGetCount(self):
        self._ready("nvmlDeviceGetCount")
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index):
        self._ready("nvmlDeviceGetHandleByIndex")
        if not 0 <= index < len(self.gpus):
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        gpu = self.gpus[index]
        if gpu.lost == "handle":
            raise NVMLError(NVML_ERROR_GPU_IS_LOST)
        return _Handle(gpu)

    def nvmlDeviceGetIndex(self, handle):
        self._gpu("nvmlDeviceGetIndex", handle)
        return self.gpus.index(handle.gpu)

    def nvmlDeviceGetName(self, handle):
        self._gpu("nvmlDeviceGetName", handle)
        name = handle.gpu.name if handle.mig is None else "%s MIG %s" % (handle.gpu.name, handle.mig.profile)
        return self._str(name)

    def nvmlDeviceGetUUID(self, handle):
        self._gpu("nvmlDeviceGetUUID", handle)
        return self._str(handle.gpu.uuid if handle.mig is None else handle.mig.uuid)

    def nvmlDeviceGetSerial(self, handle):
        return self._str(self._value("nvmlDeviceGetSerial", handle, handle.gpu.serial))

    def nvmlDeviceGetPciInfo(self, handle):
        self._gpu("nvmlDeviceGetPciInfo", handle)
        bus_id = handle.gpu.bus_id
        return _PciInfo(self._str(bus_id), int(bus_id[:8], 16), int(bus_id[9:11], 16))

    def nvmlDeviceGetPciInfo_v3(self, handle):
        return self.nvmlDeviceGetPciInfo(handle)

    def nvmlDeviceGetEccMode(self, handle):
        mode = self._value("nvmlDeviceGetEccMode", handle, handle.gpu.ecc_mode)
        return [mode[0], mode[1]]

    def nvmlDeviceGetTotalEccErrors(self, handle, errorType, counterType):
        self._value("nvmlDeviceGetTotalEccErrors", handle, handle.gpu.ecc_mode)
        if errorType not in (0, 1) or counterType not in (0, 1):
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return handle.gpu.ecc_counts[(errorType, counterType)]

    def nvmlDeviceGetRemappedRows(self, device):
        return tuple(self._value("nvmlDeviceGetRemappedRows", device, device.gpu.remapped_rows))

    def nvmlDeviceGetRetiredPages(self, device, sourceFilter):
        pages = self._value("nvmlDeviceGetRetiredPages", device, device.gpu.retired_pages)
        if sourceFilter not in (0, 1):
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return list(pages.get(sourceFilter, []))

    def nvmlDeviceGetRetiredPagesPendingStatus(self, device):
        self._value("nvmlDeviceGetRetiredPagesPendingStatus", device, device.gpu.retired_pages)
        return int(device.gpu.retired_pending)

    def nvmlDeviceGetNvLinkState(self, device, link):
        links = self._value("nvmlDeviceGetNvLinkState", device, device.gpu.nvlink)
        if not 0 <= link < len(links):
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return links[link]

    def nvmlDeviceGetCurrPcieLinkGeneration(self, handle):
        return self._gpu("nvmlDeviceGetCurrPcieLinkGeneration", handle, handle.gpu.pcie[0])

    def nvmlDeviceGetMaxPcieLinkGeneration(self, handle):
        return self._gpu("nvmlDeviceGetMaxPcieLinkGeneration", handle, handle.gpu.pcie[1])

    def nvmlDeviceGetGpuMaxPcieLinkGeneration(self, handle):
        return self._gpu("nvmlDeviceGetGpuMaxPcieLinkGeneration", handle, handle.gpu.pcie[1])

    def nvmlDeviceGetCurrPcieLinkWidth(self, handle):
        return self._gpu("nvmlDeviceGetCurrPcieLinkWidth", handle, handle.gpu.pcie[2])

    def nvmlDeviceGetMaxPcieLinkWidth(self, handle):
        return self._gpu("nvmlDeviceGetMaxPcieLinkWidth", handle, handle.gpu.pcie[3])

    def nvmlDeviceGetTemperature(self, handle, sensor):
        self._gpu("nvmlDeviceGetTemperature", handle)
        if sensor != NVML_TEMPERATURE_GPU:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return handle.gpu.temperature

    def nvmlDeviceGetTemperatureThreshold(self, handle, threshold):
        slowdown = self._value("nvmlDeviceGetTemperatureThreshold", handle, handle.gpu.slowdown)
        if threshold == NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
            return slowdown
        if threshold == NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
            return slowdown + 5
        raise NVMLError(NVML_ERROR_NOT_SUPPORTED)

    def nvmlDeviceGetPowerUsage(self, handle):
        return self._value("nvmlDeviceGetPowerUsage", handle, handle.gpu.power_mw)

    def nvmlDeviceGetEnforcedPowerLimit(self, handle):
        return self._value("nvmlDeviceGetEnforcedPowerLimit", handle, handle.gpu.limit_mw)

    def nvmlDeviceGetPersistenceMode(self, handle):
        return self._value("nvmlDeviceGetPersistenceMode", handle, handle.gpu.persistence)

    def nvmlDeviceGetMigMode(self, device):
        mode = self._value("nvmlDeviceGetMigMode", device, device.gpu.mig_mode)
        return [mode[0], mode[1]]

    def nvmlDeviceGetMaxMigDeviceCount(self, device):
        self._value("nvmlDeviceGetMaxMigDeviceCount", device, device.gpu.mig_mode)
        return device.gpu.mig_slots if device.gpu.mig_mode[0] else 0

    def nvmlDeviceGetMigDeviceHandleByIndex(self, device, index):
        self._value("nvmlDeviceGetMigDeviceHandleByIndex", device, device.gpu.mig_mode)
        if not device.gpu.mig_mode[0] or index >= device.gpu.mig_slots:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        if index >= len(device.gpu.mig_devices):
            raise NVMLError(NVML_ERROR_NOT_FOUND)
        return _Handle(device.gpu, device.gpu.mig_devices[index])

    def nvmlDeviceGetGpuInstanceId(self, device):
        self._gpu("nvmlDeviceGetGpuInstanceId", device)
        if device.mig is None:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return device.mig.gpu_instance_id

    def nvmlDeviceGetComputeInstanceId(self, device):
        self._gpu("nvmlDeviceGetComputeInstanceId", device)
        if device.mig is None:
            raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
        return device.mig.compute_instance_id

    def nvmlDeviceGetMemoryInfo(self, handle, version=None):
        self._gpu("nvmlDeviceGetMemoryInfo", handle)
        mib = 81559 if handle.mig is None else handle.mig.memory_mib
        return _Memory(mib * 1024 * 1024)

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle):
        return self._gpu("nvmlDeviceGetCurrentClocksEventReasons", handle, handle.gpu.clocks)

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle):
        return self._gpu("nvmlDeviceGetCurrentClocksThrottleReasons", handle, handle.gpu.clocks)

    # events -----------------------------------------------------------------------------------
    def nvmlDeviceGetSupportedEventTypes(self, handle):
        return self._gpu("nvmlDeviceGetSupportedEventTypes", handle, handle.gpu.supported_events)

    def nvmlEventSetCreate(self):
        self._ready("nvmlEventSetCreate")
        event_set = _EventSet()
        self.event_sets.append(event_set)
        return event_set

    def nvmlDeviceRegisterEvents(self, handle, eventTypes, eventSet):
        self._gpu("nvmlDeviceRegisterEvents", handle)
        if eventTypes & ~handle.gpu.supported_events:
            raise NVMLError(NVML_ERROR_NOT_SUPPORTED)
        eventSet.handles.append(handle)

    def nvmlEventSetWait_v2(self, eventSet, timeoutms):
        self._ready("nvmlEventSetWait_v2")
        for handle in eventSet.handles:
            if handle.gpu.xids:
                return _EventData(_Handle(handle.gpu), nvmlEventTypeXidCriticalError, handle.gpu.xids.pop(0))
        raise NVMLError(NVML_ERROR_TIMEOUT)

    def nvmlEventSetWait(self, eventSet, timeoutms):
        return self.nvmlEventSetWait_v2(eventSet, timeoutms)

    def nvmlEventSetFree(self, eventSet):
        self._ready("nvmlEventSetFree")
        eventSet.freed = True


def install(monkeypatch, nvml: FakeNvml) -> FakeNvml:
    """Make ``import pynvml`` give the fake for the rest of the test."""
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    return nvml
