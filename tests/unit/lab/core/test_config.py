# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's topology comes from its fleet file (inventories/lab/fleet.yml), and only from there."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from gpucloud_lab.core import config

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet

LAB = Path(__file__).resolve().parents[4] / "lab"
FLEET = config.fleet()


def test_the_lab_fleet_is_a_valid_fleet():
    load_fleet(config.fleet())


def test_every_lab_machine_is_the_fleets():
    boot_targets = list(yaml.safe_load(config.LAB_GROUPS.read_text())["all"]["children"]["boot_targets"]["hosts"])
    assert [config.BOOT_TARGET.name] == boot_targets
    for node in FLEET["nodes"]:
        lab = config.host(node["name"])
        assert (lab.ip, lab.mac, lab.bmc) == (node["ip"], node["mac"], node["bmc"]["address"]), node["name"]
        assert lab.role == ("boot_target" if node["name"] in boot_targets else "gpu_node")
        assert config.bmc_address(node["name"]) == f"{config.CONTROLLER_IP}:{config.bmc_port(lab)}"
    assert [h.name for h in config.GPU_NODES] == [n["name"] for n in FLEET["nodes"] if n["name"] not in boot_targets]
    mgmt = FLEET["site"]["management"]
    assert (config.PXE_SERVER.name, config.PXE_SERVER.ip) == (mgmt["pxe_server_name"], mgmt["pxe_server"])
    gateway = FLEET["site"]["host_cluster"]["wireguard_gateway"]
    assert (config.CONTROL_PLANE.name, config.CONTROL_PLANE.ip) == (gateway["name"], gateway["ip"])
    assert [h.name for h in config.HOSTS] == [config.PXE_SERVER.name, config.CONTROL_PLANE.name,
                                              *(h.name for h in config.GPU_NODES)]
    assert [(s.name, s.ip, s.platform, s.os_version) for s in config.SWITCHES] == [
        (s["name"], s["mgmt_ip"], s["platform"], s["os_version"]) for s in FLEET["fabric"]["switches"]]


def test_the_lab_keeps_its_addresses():
    """The derived topology is the one the lab had before it was derived (the integration tests' addresses)."""
    assert [(h.name, h.ip, h.mac, h.role) for h in config.HOSTS] == [
        ("pxe", "198.51.100.10", "02:c6:33:64:00:0a", "pxe_server"),
        ("cp", "198.51.100.11", "02:c6:33:64:00:0b", "control_plane"),
        ("gpu1", "198.51.100.21", "02:c6:33:64:00:15", "gpu_node"),
        ("gpu2", "198.51.100.22", "02:c6:33:64:00:16", "gpu_node"),
        ("gpu3", "198.51.100.23", "02:c6:33:64:00:17", "gpu_node")]
    assert (config.BOOT_TARGET.ip, config.BOOT_TARGET.mac) == ("198.51.100.24", "52:54:00:c6:33:63")
    assert [config.bmc_address(f"gpu{i}") for i in (1, 2, 3, 4)] == [f"198.51.100.1:800{i}" for i in (1, 2, 3, 4)]
    assert (config.CONTROLLER_IP, config.GATEWAY_IP, str(config.SUBNET)) == (
        "198.51.100.1", "198.51.100.254", "198.51.100.0/24")
    assert (config.CHART_REPO_URL, config.API_SERVER, config.PXE_HTTP_URL) == (
        "http://198.51.100.1:8880", "https://198.51.100.11:6443", "http://198.51.100.10:8080")
    assert (config.switch("leaf1").nvue_url, config.switch("leaf1").host.mac) == (
        "https://198.51.100.31:8765", "02:c6:33:64:00:1f")
    assert config.DHCP_RANGE == ("198.51.100.100", "198.51.100.199")
    with pytest.raises(KeyError, match="no lab host 'gpu9'"):
        config.host("gpu9")
    with pytest.raises(KeyError, match="pxe has no BMC"):
        config.bmc_address("pxe")


def derive(tmp_path: Path, fleet: dict, boot_targets: dict | None = None) -> subprocess.CompletedProcess:
    """The lab's config as it derives from another fleet file (it derives at import, so in a new process)."""
    config.write_fleet(tmp_path / "fleet.yml", fleet)
    groups = {"all": {"children": {"boot_targets": {"hosts": boot_targets if boot_targets is not None
                                                    else {"gpu4": None}}}}}
    (tmp_path / "lab_hosts.yml").write_text(yaml.safe_dump(groups))
    script = ("import json; from gpucloud_lab.core import config as c; print(json.dumps({"
              "'hosts': [[h.name, h.ip, h.mac, h.role, h.bmc] for h in c.HOSTS], 'target': c.BOOT_TARGET.name,"
              "'switches': [[s.name, s.os_version] for s in c.SWITCHES], 'controller': c.CONTROLLER_IP}))")
    env = {**os.environ, "GPUCLOUD_LAB_FLEET": str(tmp_path / "fleet.yml"), "PYTHONPATH": str(LAB)}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False)


def test_a_changed_fleet_changes_the_lab(tmp_path):
    fleet = copy.deepcopy(FLEET)
    gpu2 = next(n for n in fleet["nodes"] if n["name"] == "gpu2")
    gpu2.update(ip="198.51.100.42", mac="02:c6:33:64:00:2a", bmc={**gpu2["bmc"], "address": "198.51.100.1:8042"})
    fleet["fabric"]["switches"][0]["os_version"] = "5.8"
    run = derive(tmp_path, fleet)
    assert run.returncode == 0, run.stderr
    lab = json.loads(run.stdout)
    assert ["gpu2", "198.51.100.42", "02:c6:33:64:00:2a", "gpu_node", "198.51.100.1:8042"] in lab["hosts"]
    assert lab["switches"][0] == ["leaf1", "5.8"] and lab["target"] == "gpu4"


@pytest.mark.parametrize("change, message", [
    (lambda f: f["nodes"][0]["bmc"].update(address="198.51.100.9:8001"), "BMC 198.51.100.9:8001 is not on the controller"),
    (lambda f: f.pop("nodes"), "is not the lab's fleet"),
])
def test_a_fleet_the_lab_cannot_play_is_refused(tmp_path, change, message):
    fleet = copy.deepcopy(FLEET)
    change(fleet)
    run = derive(tmp_path, fleet)
    assert run.returncode != 0 and message in run.stderr, run.stderr


def test_the_boot_target_must_be_one_fleet_node(tmp_path):
    run = derive(tmp_path, FLEET, boot_targets={"gpu9": None})
    assert run.returncode != 0 and "boot target gpu9 is not a node of" in run.stderr, run.stderr
    run = derive(tmp_path, FLEET, boot_targets={})
    assert run.returncode != 0 and "must name one fleet node in boot_targets" in run.stderr, run.stderr
