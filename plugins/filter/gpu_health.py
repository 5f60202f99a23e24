# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU health quarantine's circuit breakers (the fleet's and the node's group's): filter gpu_quarantine_breaker
(role gpu_quarantine)."""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu.quarantine import breaker


def _names(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AnsibleFilterError("gpu_quarantine_breaker: %s must be a list of node names" % what)
    return value


def _gpu_quarantine_breaker(records: Any, window_s: Any, ratio: Any, fleet: Any, group: Any = None,
                            group_name: Any = "") -> dict:
    try:
        window, share = int(window_s), float(ratio)
    except (TypeError, ValueError):
        raise AnsibleFilterError("gpu_quarantine_breaker: window and ratio must be numbers") from None
    # a ratio of 10 meant as 10 % would let the whole fleet go in one window; NaN compares false, so it is refused too
    if not 0 <= share <= 1:
        raise AnsibleFilterError("gpu_quarantine_breaker: ratio (gpu_quarantine_max_ratio) must be a share of the fleet"
                                 " between 0 and 1 (0.1 is 10 %%), not %s" % ratio)
    if window < 1:
        raise AnsibleFilterError("gpu_quarantine_breaker: window (gpu_quarantine_window) must be at least 1 second, not"
                                 " %d (no quarantine would count)" % window)
    if not isinstance(records, list):
        raise AnsibleFilterError("gpu_quarantine_breaker: expects the list of records (Nodes, ConfigMaps: "
                                 "k8s_info resources)")
    return breaker(records, window, share, _names(fleet, "fleet"),
                   None if group is None else _names(group, "group"), str(group_name))


class FilterModule:
    def filters(self) -> dict:
        return {"gpu_quarantine_breaker": _gpu_quarantine_breaker}
