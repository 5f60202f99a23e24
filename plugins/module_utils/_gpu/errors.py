# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU package's errors, all ``ProblemsError`` (the collection's one error root)."""

from __future__ import annotations

from .._errors import ProblemsError


class NvmlUnavailable(ProblemsError):
    """NVML cannot be used at all on this host: one line that says why and what to do."""

    HEAD = "NVML is unavailable"

    def __str__(self) -> str:
        return "%s: %s" % (self.HEAD, "; ".join(self.problems))


class GpuLost(ProblemsError):
    """The GPU stopped answering (NVMLError_GpuIsLost) while it was being read."""

    HEAD = ""


class GateError(ProblemsError):
    """A gate tool could not be run or printed what it never prints: the gate cannot pass on it."""

    HEAD = ""


class MonitoringError(ProblemsError):
    """What role gpu_monitoring was given cannot make a Prometheus configuration (fields named)."""

    HEAD = "gpu_monitoring"
