# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nodes' GPU fields the GPU stage reads: driver mode (host or operator) and NVSwitch."""

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, validate_fleet
from tests.support.fleet_data import fleet


def _shared(data):
    return [n for n in data["nodes"] if not n.get("tenant") and n["gpu"]["count"]]


def test_defaults_are_the_operators_driver_and_no_nvswitch():
    model = load_fleet(fleet())
    assert {(n["gpu"]["driver"], n["gpu"]["nvswitch"]) for n in model["nodes"]} == {("operator", False)}


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
