# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A BMC address copied to a second node would power-cycle and reinstall the wrong server: refused."""
from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.errors import FleetError
from tests.support import inventory_yaml

FLEET = Path(__file__).resolve().parents[5] / "inventories" / "lab" / "fleet.yml"


@pytest.mark.parametrize("copy", ["198.51.100.1:8001", "https://198.51.100.1:8001/"])
def test_a_copied_bmc_address_is_refused_naming_both_nodes(copy: str) -> None:
    data = inventory_yaml.load(FLEET)
    data["nodes"][2]["bmc"]["address"] = copy
    with pytest.raises(FleetError) as err:
        load_fleet(data)
    assert ("nodes[2].bmc.address: BMC https://198.51.100.1:8001 is already nodes[0] (gpu1)'s: a power cycle or "
            "boot override of one node would act on the other") in str(err.value)


def test_default_ports_are_made_explicit() -> None:
    data = inventory_yaml.load(FLEET)
    data["nodes"][0]["bmc"]["address"] = "bmc-a.example"
    data["nodes"][1]["bmc"]["address"] = "https://bmc-a.example:443"
    with pytest.raises(FleetError, match=r"nodes\[1\]\.bmc\.address: BMC https://bmc-a\.example:443 is already"):
        load_fleet(data)
    data["nodes"][1]["bmc"]["address"] = "http://bmc-a.example"  # another service: port 80
    load_fleet(data)


def test_systems_of_one_multi_node_chassis_are_told_apart_by_system_id() -> None:
    data = inventory_yaml.load(FLEET)
    for i, node in enumerate(data["nodes"][:2]):
        node["bmc"]["address"] = "198.51.100.1:8001"
        node["bmc"]["system_id"] = "Node%d" % i
    load_fleet(data)
    data["nodes"][1]["bmc"]["system_id"] = "Node0"
    with pytest.raises(FleetError, match=r"BMC https://198\.51\.100\.1:8001 system Node0 is already nodes\[0\]"):
        load_fleet(data)


def test_a_boot_mode_is_redfish_s_spelling_or_refused_naming_the_field() -> None:
    data = inventory_yaml.load(FLEET)
    data["nodes"][0]["bmc"]["boot_mode"] = "UEFI"
    assert load_fleet(data)["nodes"][0]["bmc"]["boot_mode"] == "UEFI"
    data["nodes"][1]["bmc"]["boot_mode"] = "uefi"
    with pytest.raises(FleetError, match=r"nodes\[1\]\.bmc\.boot_mode: 'uefi' is not a boot mode; use one of UEFI, "
                                         r"Legacy"):
        load_fleet(data)


def test_a_boot_target_is_pxe_uefi_http_or_virtual_media_and_the_last_two_need_uefi() -> None:
    data = inventory_yaml.load(FLEET)
    data["nodes"][0]["bmc"]["boot_target"] = "UefiHttp"
    model = load_fleet(data)
    assert model["nodes"][0]["bmc"]["boot_target"] == "UefiHttp"
    assert "boot_target" not in model["nodes"][1]["bmc"]
    data["nodes"][1]["bmc"]["boot_target"] = "Http"
    with pytest.raises(FleetError, match=r"nodes\[1\]\.bmc\.boot_target: 'Http' is not a boot target for an install; "
                                         r"use one of Pxe, UefiHttp, Cd \(Redfish"):
        load_fleet(data)
    data["nodes"][1]["bmc"].update(boot_target="UefiHttp", boot_mode="Legacy")
    with pytest.raises(FleetError, match=r"nodes\[1\]\.bmc\.boot_target: UefiHttp \(UEFI HTTP boot\) needs UEFI "
                                         r"firmware, but bmc\.boot_mode is Legacy"):
        load_fleet(data)
    data["nodes"][1]["bmc"].update(boot_target="Cd", boot_mode="Legacy")
    with pytest.raises(FleetError, match=r"nodes\[1\]\.bmc\.boot_target: Cd \(virtual media\) boots the deploy ISO, "
                                         r"which is UEFI only, but bmc\.boot_mode is Legacy"):
        load_fleet(data)
    data["nodes"][1]["bmc"].update(boot_target="Cd", boot_mode="UEFI")
    assert load_fleet(data)["nodes"][1]["bmc"]["boot_target"] == "Cd"
