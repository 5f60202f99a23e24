#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: nvml_health
short_description: Health of every NVIDIA GPU of a host through NVML, with findings and a table
version_added: 0.1.0
description:
  - Runs on a GPU node and reads every GPU through NVML (C(nvidia-ml-py)), as C(nvidia-smi -q)
    does. Per GPU it reports name, UUID, serial, PCI bus id, ECC mode (current and pending) and
    volatile and aggregate corrected/uncorrected counts, remapped rows (or retired pages on GPUs
    older than Ampere), the state of each NVLink link, PCIe generation and width (current and
    maximum), temperature and its slowdown threshold, power draw and enforced limit, persistence
    mode, MIG mode (current and pending) with the MIG devices, clock event (throttle) reasons by
    name, and XID events where NVML delivers them. The host's driver and CUDA driver versions
    are reported once.
  - A field a GPU does not support (C(NVMLError_NotSupported)) is V(null) and named in the GPU's
    C(unsupported) list, never a failure. A GPU that has fallen off the bus (C(NVMLError_GpuIsLost),
    or no handle for its index) is a critical finding.
  - Each problem is a finding with a severity. C(critical) means the GPU is broken or an
    expectation set by the options is not met; the module then fails, with every critical finding
    in O(ignore:msg) and the whole result (C(gpus), C(findings), C(table)) kept. C(warning) and
    C(info) findings never fail it.
  - "PCIe: a link narrower than its maximum width is a warning. An idle GPU lowers its PCIe
    generation to save power, so the generation is only checked with O(pcie_check_gen)."
  - Read-only; C(changed) is always V(false).
author:
  - gpucloud.baremetal contributors (@gpucloud)
requirements:
  - The NVIDIA driver (C(libnvidia-ml.so.1)) on the host.
  - The Python library C(nvidia-ml-py) (C(import pynvml)) for the Python that runs the module.
options:
  gpu_count:
    description:
      - How many GPUs NVML must see. Without it, a host where NVML sees no GPU fails.
    type: int
  model:
    description:
      - Regular expression every GPU's name must match (searched, case-insensitive), for example
        V(H100) or V(^NVIDIA H100 80GB HBM3$).
    type: str
  driver_version:
    description:
      - The driver version the host must run. V(550) matches C(550.54.15); V(550.54.15) matches
        only itself.
    type: str
  temp_margin_c:
    description:
      - A GPU must stay more than this many degrees Celsius below its slowdown threshold
        (C(NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)). At or above the threshold is always critical.
    type: int
    default: 5
  max_temp_c:
    description:
      - An absolute ceiling in degrees Celsius, also for GPUs that do not report a slowdown threshold.
    type: int
  max_power_ratio:
    description:
      - Power draw may be at most this multiple of the enforced power limit (NVML averages draw
        over about a second, so short peaks above the limit are normal).
    type: float
    default: 1.1
  ecc_uncorrected_max:
    description:
      - Most uncorrected ECC errors a GPU may have since the driver loaded (volatile counter).
        Aggregate (lifetime) counts are reported as C(info).
    type: int
    default: 0
  require_persistence_mode:
    description:
      - Persistence mode off is critical instead of a warning.
    type: bool
    default: false
  require_nvlink:
    description:
      - Every NVLink link of every GPU must be up, and every GPU must have NVLink. Without it, some
        links down is a warning and all links down is C(info) (a GPU without a bridge or NVSwitch).
    type: bool
    default: false
  mig_mode:
    description:
      - The MIG mode every GPU must be in. Omitted, any mode is fine; a mode that changes at the
        next GPU reset is always a warning.
    type: str
    choices: [enabled, disabled]
  pcie_check_gen:
    description:
      - Also check the PCIe generation. A generation below the maximum is a warning on a busy GPU
        and C(info) on an idle one (clock event reason C(gpu_idle)).
    type: bool
    default: false
  xid_wait_ms:
    description:
      - How long to wait for XID events, in milliseconds. NVML only delivers events raised after the
        module registers for them, so V(0) reports what is already queued; earlier XIDs are in the
        kernel log (C(NVRM Xid)).
    type: int
    default: 0
attributes:
  check_mode:
    support: full
    description: The module only reads; check mode reads and reports the same.
  diff_mode:
    support: none
    description: Nothing changes, so there is nothing to compare.
  platform:
    support: full
    platforms: posix
    description: Runs on the GPU node (Linux with the NVIDIA driver).
notes:
  - Run it with C(become) where the NVIDIA device files are not readable by the user.
  - A missing library or driver fails with one line that says what to install, never a traceback.
seealso:
  - name: NVML API reference
    description: The NVIDIA Management Library the module reads.
    link: https://docs.nvidia.com/deploy/nvml-api/index.html
  - name: XID errors
    description: What each XID means and what to do.
    link: https://docs.nvidia.com/deploy/xid-errors/index.html
"""

EXAMPLES = r"""
- name: Check every GPU of the node against the fleet
  gpucloud.baremetal.nvml_health:
    gpu_count: "{{ gpucloud_gpu.count }}"
    model: "{{ gpucloud_gpu.model }}"
    driver_version: "550.54.15"
    require_persistence_mode: true
    require_nvlink: true
  become: true
  register: gpu_health

- name: Show the table
  ansible.builtin.debug:
    msg: "{{ gpu_health.table }}"

- name: Read only, never fail (report what is wrong)
  gpucloud.baremetal.nvml_health:
  register: gpu_health
  ignore_errors: true
"""

RETURN = r"""
msg:
  description: One line. On failure, every critical finding, each with its GPU.
  returned: always
  type: str
  sample: "NVML health: 1 critical finding on 8 GPUs: GPU 3 ecc_uncorrected: 2 uncorrected ECC errors since the driver
    loaded (max 0)"
gpu_count:
  description: GPUs NVML sees.
  returned: when NVML could be used
  type: int
  sample: 8
driver_version:
  description: NVIDIA driver version.
  returned: when NVML could be used
  type: str
  sample: 550.54.15
cuda_driver_version:
  description: Highest CUDA version the driver supports.
  returned: when NVML could be used
  type: str
  sample: "12.4"
gpus:
  description:
    - One dict per GPU in NVML's index order. A value the GPU does not support is V(null) and its
      field is named in C(unsupported); a field that failed to read is V(null) and in C(errors).
    - "Keys: C(index), C(lost) and C(lost_reason), C(name), C(uuid), C(serial), C(pci_bus_id),
      C(ecc) (C(mode_current), C(mode_pending), C(volatile) and C(aggregate) each with C(corrected)
      and C(uncorrected)), C(remapped_rows) (C(correctable), C(uncorrectable), C(pending),
      C(failure)), C(retired_pages) (C(single_bit), C(double_bit), C(pending)), C(nvlink) (C(links)
      as C(link)/C(up), C(up), C(total)), C(pcie) (C(gen_current), C(gen_max), C(width_current),
      C(width_max)), C(temperature_c), C(temperature_slowdown_c), C(power_w), C(power_limit_w),
      C(persistence_mode), C(mig) (C(current), C(pending), C(devices) with C(index), C(uuid),
      C(name), C(gpu_instance_id), C(compute_instance_id), C(memory_total_mib)),
      C(clocks_event_reasons), C(xid_events), C(unsupported), C(errors)."
  returned: when NVML could be used
  type: list
  elements: dict
findings:
  description: What is wrong or worth knowing, most severe first.
  returned: when NVML could be used
  type: list
  elements: dict
  contains:
    severity:
      description: V(critical) (fails the module), V(warning) or V(info).
      type: str
    gpu:
      description: The GPU's index; V(null) for the host (count, driver).
      type: int
    uuid:
      description: The GPU's UUID where known.
      type: str
    check:
      description: What was checked, e.g. V(ecc_uncorrected), V(nvlink), V(temperature), V(lost).
      type: str
    message:
      description: What was found.
      type: str
  sample:
    - severity: critical
      gpu: 3
      uuid: GPU-5d2b1a3e-0c4f-4e7a-9b61-2f0d3c8a7e10
      check: ecc_uncorrected
      message: 2 uncorrected ECC errors since the driver loaded (max 0)
table:
  description: The versions, a row per GPU, and a line per finding, for a person to read.
  returned: when NVML could be used
  type: list
  elements: str
  sample:
    - driver 550.54.15, CUDA 12.4, 1 GPU
    - "GPU  NAME                   BUS ID            TEMP     POWER    ECC    MEMORY   NVLINK    PCIE     PERSIST  \
      MIG  STATUS"
    - "0    NVIDIA H100 80GB HBM3  00000000:18:00.0  34C/87C  71/700W  0 unc  rows ok  18/18 up  Gen5x16  \
      on       off  OK"
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu import health, nvml
from ansible_collections.gpucloud.baremetal.plugins.module_utils._runner import run_module

EXPECTATIONS = ("gpu_count", "model", "driver_version", "temp_margin_c", "max_temp_c", "max_power_ratio",
                "ecc_uncorrected_max", "require_persistence_mode", "require_nvlink", "mig_mode", "pcie_check_gen")

ARGUMENT_SPEC = {
    "gpu_count": {"type": "int"},
    "model": {"type": "str"},
    "driver_version": {"type": "str"},
    "temp_margin_c": {"type": "int", "default": 5},
    "max_temp_c": {"type": "int"},
    "max_power_ratio": {"type": "float", "default": 1.1},
    "ecc_uncorrected_max": {"type": "int", "default": 0},
    "require_persistence_mode": {"type": "bool", "default": False},
    "require_nvlink": {"type": "bool", "default": False},
    "mig_mode": {"type": "str", "choices": ["enabled", "disabled"]},
    "pcie_check_gen": {"type": "bool", "default": False},
    "xid_wait_ms": {"type": "int", "default": 0},
}


def run(module: AnsibleModule) -> dict:
    p = module.params
    expect = health.Expectations(**{name: p[name] for name in EXPECTATIONS})
    if not 0 <= p["xid_wait_ms"] <= 60000:
        raise ProblemsError(["xid_wait_ms: must be 0 to 60000, not %d" % p["xid_wait_ms"]])
    # Reading is the same in check mode: the module changes nothing.
    snapshot = nvml.read_all(nvml.load(), p["xid_wait_ms"])
    findings = health.assess(snapshot, expect)
    return {
        "changed": False,
        "failed": health.failed(findings),
        "msg": health.summary(snapshot, findings),
        "gpu_count": len(snapshot["gpus"]),
        "driver_version": snapshot["driver_version"],
        "cuda_driver_version": snapshot["cuda_driver_version"],
        "gpus": snapshot["gpus"],
        "findings": findings,
        "table": health.table(snapshot, findings),
    }


def main() -> None:
    run_module(ARGUMENT_SPEC, run)


if __name__ == "__main__":
    main()
