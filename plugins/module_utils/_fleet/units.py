# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet's CPU and memory amounts and KAI Scheduler's queue units.

The fleet says CPU in cores (``64``, ``0.5``) and memory as a Kubernetes quantity (``512Gi``,
``1T``); ``-1`` is unlimited. KAI's Queue takes CPU in millicores and memory in MB of 10^6 bytes
(KAI-Scheduler ``docs/queues/README.md`` "Resource Units"; the proportion plugin multiplies the
memory quota and limit by 10^6, ``pkg/scheduler/plugins/proportion/proportion.go``).
"""

from __future__ import annotations

import math
import re

UNLIMITED = -1
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$")
_FACTORS = {
    None: 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}
MEMORY_WHAT = "a Kubernetes memory quantity such as 512Gi or 1T, 0, or -1 for unlimited"
CPU_WHAT = "a number of CPU cores such as 64 or 0.5, or -1 for unlimited"


def memory_bytes(value: object) -> float | None:
    """Bytes of a memory amount (``-1`` and ``0`` as they are), None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value in (UNLIMITED, 0):
        return value
    match = _QUANTITY.fullmatch(value) if isinstance(value, str) else None
    if not match:
        return None
    amount = float(match.group(1)) * _FACTORS[match.group(2)]
    return amount if math.isfinite(amount) else None  # hundreds of digits read as infinity


def cpu_cores(value: object) -> float | None:
    """Cores of a CPU amount (``-1`` unlimited), None when it is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None  # YAML's .inf is a float, and no queue can take it
    return value if value == UNLIMITED or value >= 0 else None


def kai_memory(value: object) -> int | None:
    """KAI's memory unit (MB, 10^6 bytes), rounded; -1 stays -1."""
    amount = memory_bytes(value)
    if amount is None:
        return None
    return UNLIMITED if amount == UNLIMITED else round(amount / 10**6)


def kai_cpu(value: object) -> int | None:
    """KAI's CPU unit (millicores), rounded; -1 stays -1."""
    cores = cpu_cores(value)
    if cores is None:
        return None
    return UNLIMITED if cores == UNLIMITED else round(cores * 1000)
