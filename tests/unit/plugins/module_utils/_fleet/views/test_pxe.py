# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PXE view (``pxe_nodes``): one reservation per node in fleet order (name, MAC, management IP, OS profile),
a node's own root device hints where it has them, and its boot target only where it boots by UEFI HTTP; nothing
of a node's BMC; a thousand nodes give a thousand reservations."""

from __future__ import annotations

from pathlib import Path

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, pxe_nodes
from tests.support import inventory_yaml
from tests.support.fleetgen import generate

LAB = Path(__file__).resolve().parents[6] / "inventories" / "lab" / "fleet.yml"


def test_the_labs_nodes_are_reserved_in_fleet_order() -> None:
    assert pxe_nodes(load_fleet(inventory_yaml.load(LAB))) == [
        {"name": "gpu1", "mac": "02:c6:33:64:00:15", "ip": "198.51.100.21", "os": "ubuntu2404"},
        {"name": "gpu2", "mac": "02:c6:33:64:00:16", "ip": "198.51.100.22", "os": "ubuntu2404"},
        {"name": "gpu3", "mac": "02:c6:33:64:00:17", "ip": "198.51.100.23", "os": "ubuntu2404"},
        {"name": "gpu4", "mac": "52:54:00:c6:33:63", "ip": "198.51.100.24", "os": "debian12"},
    ]


def test_a_nodes_root_device_and_uefi_http_boot_are_passed_on_only_where_given() -> None:
    data = inventory_yaml.load(LAB)
    data["nodes"][1]["root_device"] = {"serial": "S5GXNG0R123456"}
    data["nodes"][2]["bmc"]["boot_target"] = "UefiHttp"
    data["nodes"][3]["bmc"]["boot_target"] = "Pxe"
    data["nodes"][3]["mac"] = "52-54-00-C6-33-63"
    out = pxe_nodes(load_fleet(data))
    assert out[0] == {"name": "gpu1", "mac": "02:c6:33:64:00:15", "ip": "198.51.100.21", "os": "ubuntu2404"}
    assert out[1]["root_device"] == {"serial": "S5GXNG0R123456"} and "boot_target" not in out[1]
    assert out[2]["boot_target"] == "UefiHttp" and "root_device" not in out[2]
    assert out[3] == {"name": "gpu4", "mac": "52:54:00:c6:33:63", "ip": "198.51.100.24", "os": "debian12"}


def test_a_thousand_nodes_give_a_thousand_reservations_without_their_bmc() -> None:
    model = load_fleet(generate(nodes=1000, tenants=20, switches=10))
    out = pxe_nodes(model)
    assert [e["name"] for e in out] == [n["name"] for n in model["nodes"]]
    assert {frozenset(e) for e in out} == {frozenset({"name", "mac", "ip", "os"})}
    assert len({e["mac"] for e in out}) == len({e["ip"] for e in out}) == 1000
    assert out[999] == {"name": "gpu00999", "mac": "02:00:00:00:03:e7", "ip": "100.64.3.241", "os": "ubuntu"}
