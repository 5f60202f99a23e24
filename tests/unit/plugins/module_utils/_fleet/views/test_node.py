# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node view (``node_vars``, ``node_ssh_vars``): a node's host variables hold its whole entry but its BMC,
which is a variable of its own (so that passing a node entry around never passes a BMC password), over the lab
and a thousand generated nodes; and the SSH options every node is reached with, checked against the site's
known_hosts file and no other."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, node_ssh_vars, node_vars
from tests.support import inventory_yaml
from tests.support.fleetgen import generate

LAB = Path(__file__).resolve().parents[6] / "inventories" / "lab" / "fleet.yml"


def test_a_labs_node_has_its_entry_and_its_bmc_apart() -> None:
    model = load_fleet(inventory_yaml.load(LAB))
    gpu1 = model["nodes"][0]
    before = copy.deepcopy(gpu1)
    out = node_vars(gpu1)
    assert set(out) == {"gpucloud_node", "gpucloud_bmc"}
    assert out["gpucloud_node"] == {k: v for k, v in before.items() if k != "bmc"}
    assert out["gpucloud_bmc"] == {"address": "198.51.100.1:8001", "url": "https://198.51.100.1:8001",
                                   "username": "admin", "password": "vaulted"}
    assert gpu1 == before  # the model's entry is left as it was


@pytest.mark.parametrize("entry", [{"name": "gpu01"}, {"name": "gpu01", "bmc": {}}, {"name": "gpu01", "bmc": None}])
def test_a_node_without_a_bmc_has_no_bmc_variable(entry: dict) -> None:
    assert node_vars(entry) == {"gpucloud_node": {"name": "gpu01"}}


def test_no_node_entry_of_a_thousand_carries_a_bmc_password() -> None:
    data = generate(nodes=1000, tenants=20, switches=10)
    for i, n in enumerate(data["nodes"]):
        n["bmc"]["password"] = "bmc-secret-%05d" % i
    model = load_fleet(data)

    def leaves(value):
        if isinstance(value, dict):
            for v in value.values():
                yield from leaves(v)
        elif isinstance(value, list):
            for v in value:
                yield from leaves(v)
        else:
            yield value

    out = [node_vars(n) for n in model["nodes"]]
    assert [o["gpucloud_node"]["name"] for o in out] == ["gpu%05d" % i for i in range(1000)]
    assert all("bmc" not in o["gpucloud_node"] for o in out)
    assert [o["gpucloud_bmc"]["password"] for o in out] == ["bmc-secret-%05d" % i for i in range(1000)]
    assert not [leaf for o in out for leaf in leaves(o["gpucloud_node"]) if "bmc-secret" in str(leaf)]


@pytest.mark.parametrize("path", ["~/.ansible/gpucloud/known_hosts", "/var/lib/gpucloud-lab/ssh/known_hosts"])
def test_every_node_is_reached_checking_its_key_against_the_sites_file_only(path: str) -> None:
    assert node_ssh_vars({"name": "fra1", "ssh_known_hosts": path}) == {
        "ansible_ssh_host_key_checking": True,
        "ansible_ssh_common_args": "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s "
                                   "-o GlobalKnownHostsFile=/dev/null" % path,
        "os_install_known_hosts": path,
    }


def test_the_labs_site_names_its_own_known_hosts_file() -> None:
    site = load_fleet(inventory_yaml.load(LAB))["site"]
    assert node_ssh_vars(site)["os_install_known_hosts"] == "/var/lib/gpucloud-lab/ssh/known_hosts"
