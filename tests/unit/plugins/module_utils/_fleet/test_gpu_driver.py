# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nodes' GPU fields the GPU stage reads: driver mode (host or operator) and NVSwitch."""

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, validate_fleet
from tests.support.fleet_data import fleet


def _shared(data):
    return [n for n in data["nodes"] if not n.get("tenant") and n["gpu"]["count"]]


def test_defaults_are_the_operators_driver_and_the_nvswitch_the_model_has():
    data = fleet()
    for n in data["nodes"]:
        n["gpu"].update(model="H100-PCIe-80GB")
    model = load_fleet(data)
    assert {(n["gpu"]["driver"], n["gpu"]["nvswitch"]) for n in model["nodes"]} == {("operator", False)}


@pytest.mark.parametrize(("model", "count", "nvswitch", "nvlink5"), [
    ("H100-SXM5-80GB", 8, True, False),   # HGX H100 8-GPU: NVSwitch, fabric manager
    ("H200-SXM5-141GB", 8, True, False),
    ("A100-SXM4-80GB", 8, True, False),
    ("H100-SXM5-80GB", 4, False, False),  # HGX H100 4-GPU: GPUs linked directly, no NVSwitch
    ("H100-PCIe-80GB", 8, False, False),
    ("H100-NVL", 8, False, False),        # PCIe cards with NVLink bridges
    ("L40S", 8, False, False),
    ("B200-SXM6-180GB", 8, True, True),   # HGX B200: NVLink 5, fabric manager + nvlsm
    ("B200", 8, True, True),
    ("GB200", 4, True, True),             # GB200 NVL72 compute tray: 4 GPUs on NVLink switch trays
    ("GB300-NVL72", 4, True, True),
])
def test_the_nvswitch_fabric_is_derived_from_the_gpu_model(model, count, nvswitch, nvlink5):
    data = fleet()
    shared = _shared(data)[0]
    shared["gpu"] = {"model": model, "count": count}
    node = next(n for n in load_fleet(data)["nodes"] if n["name"] == shared["name"])
    assert (node["gpu"]["nvswitch"], node["gpu"]["nvlink5"]) == (nvswitch, nvlink5)


def test_an_explicit_nvswitch_overrides_the_model():
    data = fleet()
    data["nodes"][0]["gpu"] = {"model": "H100-SXM5-80GB", "count": 8, "nvswitch": False}
    node = load_fleet(data)["nodes"][0]
    assert (node["gpu"]["nvswitch"], node["gpu"]["nvlink5"]) == (False, False)


def test_host_driver_and_nvswitch_are_kept():
    data = fleet()
    for n in data["nodes"]:
        n["gpu"].update(driver="host", nvswitch=True)
    model = load_fleet(data)
    assert {(n["gpu"]["driver"], n["gpu"]["nvswitch"]) for n in model["nodes"]} == {("host", True)}


def test_unknown_driver_mode_names_the_field():
    data = fleet()
    data["nodes"][0]["gpu"]["driver"] = "dkms"
    assert "nodes[0].gpu.driver: 'dkms' is not a driver mode; use one of host, operator" in validate_fleet(data)


def test_nvswitch_must_be_a_boolean_on_a_node_with_gpus():
    data = fleet()
    data["nodes"][0]["gpu"]["nvswitch"] = "yes"
    assert any(p.startswith("nodes[0].gpu.nvswitch: must be true or false") for p in validate_fleet(data))
    data = fleet()
    data["nodes"][0]["gpu"].update(count=0, nvswitch=True)
    assert "nodes[0].gpu.nvswitch: is only allowed on a node with GPUs (gpu.count above 0)" in validate_fleet(data)


def test_one_driver_mode_per_cluster():
    data = fleet()
    shared = _shared(data)
    assert len(shared) >= 2
    shared[1]["gpu"]["driver"] = "host"
    index = data["nodes"].index(shared[1])
    problems = validate_fleet(data)
    assert any(p.startswith("nodes[%d].gpu.driver: 'host' differs from 'operator' of %s" % (index, shared[0]["name"]))
               and "the host cluster (shared nodes)" in p for p in problems), problems
