# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab fleet as the model gives it, plus a Rocky profile (the real tools the checks need: tests/support/tools.py)."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, pxe_nodes
from tests.support import inventory_yaml

FLEET = Path(__file__).resolve().parents[5] / "inventories" / "lab" / "fleet.yml"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGpucloudtestkey ops@example"


@pytest.fixture
def model() -> dict[str, Any]:
    data = inventory_yaml.load(FLEET)
    data["site"]["os_profiles"]["rocky9"] = {"family": "rocky", "version": "9.4"}
    data["nodes"][0]["os"] = "rocky9"
    return load_fleet(data)


@pytest.fixture
def site(model: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(model["site"])


@pytest.fixture
def nodes(model: dict[str, Any]) -> list[dict[str, Any]]:
    return pxe_nodes(model)


@pytest.fixture
def options() -> dict[str, Any]:
    return {"tftp_root": "/srv/gpucloud/tftp", "ssh_keys": [KEY], "admin_user": "ops",
            "phone_home_url": "http://198.51.100.10:8080/phone-home/{name}", "console": "console=ttyS0,115200n8"}
