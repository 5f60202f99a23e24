# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU health quarantine's circuit breaker: filter gpu_quarantine_breaker (role gpu_quarantine)."""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu.quarantine import breaker


def _gpu_quarantine_breaker(nodes: Any, window_s: Any, ratio: Any, fleet: Any) -> dict:
    try:
        window, share, size = int(window_s), float(ratio), int(fleet)
    except (TypeError, ValueError):
        raise AnsibleFilterError("gpu_quarantine_breaker: window, ratio and fleet size must be numbers") from None
    if not isinstance(nodes, list):
        raise AnsibleFilterError("gpu_quarantine_breaker: expects the list of Nodes (k8s_info resources)")
    return breaker(nodes, window, share, size)


class FilterModule:
    def filters(self) -> dict:
        return {"gpu_quarantine_breaker": _gpu_quarantine_breaker}
