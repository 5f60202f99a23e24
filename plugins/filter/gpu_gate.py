# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a node's GPU gate report says: filter gpu_gate_report (roles gpu_gate and node_join)."""

from __future__ import annotations

from typing import Any

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu.gate import read_report


def _gpu_gate_report(text: Any, node: Any = None) -> dict:
    return read_report(text, None if node is None else str(node))


def _gpu_gate_check_line(check: Any) -> str:
    if not isinstance(check, dict):
        return str(check)
    return "%s %s: %s" % ("PASS" if check.get("passed") is True else "FAIL", check.get("name"), check.get("message"))


class FilterModule:
    def filters(self) -> dict:
        return {"gpu_gate_report": _gpu_gate_report, "gpu_gate_check_line": _gpu_gate_check_line}
