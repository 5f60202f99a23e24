# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The operator-side Prometheus of role gpu_monitoring: filters gpu_monitoring_scrape_configs,
gpu_monitoring_tenant_federation and gpu_monitoring_bcrypt."""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu.errors import MonitoringError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu.monitoring import (
    bcrypt_hash,
    scrape_configs,
    tenant_federation,
)


def _scrape_configs(nodes: Any, tenants: Any, port: Any = 9400, interval: Any = "") -> list:
    try:
        if isinstance(nodes, dict) or isinstance(tenants, dict) or isinstance(port, (bool, float)):
            raise MonitoringError(["gpu_monitoring_scrape_configs: nodes and tenants are lists and the port a whole "
                                   "number (got %s, %s, %r)" % (type(nodes).__name__, type(tenants).__name__, port)])
        return scrape_configs(list(nodes or []), list(tenants or []), int(port), str(interval or ""))
    except (MonitoringError, TypeError, ValueError) as err:
        raise AnsibleFilterError(str(err)) from None


def _tenant_federation(tenant: Any, source: Any, interval: Any = "") -> dict:
    try:
        return tenant_federation(str(tenant), str(source), str(interval or ""))
    except MonitoringError as err:
        raise AnsibleFilterError(str(err)) from None


def _bcrypt(password: Any, existing: Any = "") -> str:
    try:
        return bcrypt_hash(password, str(existing or ""))
    except MonitoringError as err:
        raise AnsibleFilterError(str(err)) from None


class FilterModule:
    def filters(self) -> dict:
        return {"gpu_monitoring_scrape_configs": _scrape_configs,
                "gpu_monitoring_tenant_federation": _tenant_federation,
                "gpu_monitoring_bcrypt": _bcrypt}
