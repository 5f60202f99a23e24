# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's fleet file and the lab's own host table describe the same machines."""

import os
import sys

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "lab"))
from gpucloud_lab.core import config


def test_lab_fleet_is_valid_and_matches_the_lab_hosts():
    model = load_fleet(config.fleet())
    hosts = {h.name: h for h in config.HOSTS}
    nodes = {n["name"]: n for n in model["nodes"]}
    target = nodes.pop(config.BOOT_TARGET_NAME)  # the QEMU boot target, powered by its Redfish BMC
    assert (target["ip"], target["mac"]) == (config.BOOT_TARGET_IP, config.BOOT_TARGET_MAC)
    assert target["bmc"]["address"] == f"{config.CONTROLLER_IP}:{config.BOOT_TARGET_BMC_PORT}"
    assert set(nodes) == {h.name for h in config.HOSTS if h.role == "gpu_node"}
    for name, node in nodes.items():
        assert (node["ip"], node["mac"]) == (hosts[name].ip, hosts[name].mac), name
    pxe = next(h for h in config.HOSTS if h.role == "pxe_server")
    assert model["site"]["management"]["pxe_server"] == pxe.ip
    assert model["site"]["management"]["pxe_server_name"] == pxe.name
