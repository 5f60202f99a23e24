# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pods on a node that hold work (not a DaemonSet's, not static, not finished): filter node_workloads (role
os_install, before a reinstall or a decommission)."""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.workloads import workloads


def _node_workloads(pods: Any) -> list[str]:
    try:
        return workloads(pods)
    except TypeError as exc:
        raise AnsibleFilterError("node_workloads: %s" % exc) from None


class FilterModule:
    def filters(self) -> dict:
        return {"node_workloads": _node_workloads}
