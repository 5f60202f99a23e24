# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import registry
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.errors import FabricError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.registry import names, owned_native


def owned_config(config: Any, platform: str) -> Any:
    if platform not in names():
        raise AnsibleFilterError("owned_config: unknown platform %r; one of %s" % (platform, ", ".join(names())))
    try:
        return owned_native(platform, config)
    except FabricError as exc:
        raise AnsibleFilterError("owned_config: %s" % "; ".join(exc.problems)) from None


def _foreign(name: str, read: Any, config: Any, platform: str) -> Any:
    if platform not in names() or platform == "frr":
        raise AnsibleFilterError("%s: unknown platform %r; one of %s"
                                 % (name, platform, ", ".join(n for n in names() if n != "frr")))
    try:
        return read(platform, config)
    except FabricError as exc:
        raise AnsibleFilterError("%s: %s" % (name, "; ".join(exc.problems))) from None


def foreign_vlans(config: Any, platform: str) -> list[int]:
    return _foreign("foreign_vlans", registry.foreign_vlans, config, platform)


def foreign_vrfs(config: Any, platform: str) -> list[str]:
    return _foreign("foreign_vrfs", registry.foreign_vrfs, config, platform)


def vrf_users(config: Any, platform: str) -> dict[str, list[str]]:
    return _foreign("vrf_users", registry.vrf_users, config, platform)


class FilterModule:
    def filters(self) -> dict:
        return {"owned_config": owned_config, "foreign_vlans": foreign_vlans, "foreign_vrfs": foreign_vrfs,
                "vrf_users": vrf_users}
