# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/fabric.yml end to end, through ansible-runner, against the NVUE REST API simulation.

A generated fleet whose only leaf is NVUE; the leaf's address and the API port, scheme and
credentials point at ``tests/support/nvue_api_sim.py`` on 127.0.0.1 (extra vars the role takes).
The simulation proves the revision flow and idempotence, not Cumulus's schema.
Needs no lab: only ansible-runner and a free local port.
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import pytest
import yaml

ansible_runner = pytest.importorskip("ansible_runner")

REPO = Path(__file__).resolve().parents[2]

from tests.support.fleetgen import generate  # noqa: E402
from tests.support.nvue_api_sim import NvueSimulation  # noqa: E402

PASSWORD = "sim-secret"
HAND_MADE = {
    "bridge": {"domain": {"br_default": {"vlan": {"3999": {}}}}},
    "interface": {"vlan3999": {"type": "svi", "vlan": 3999, "description": "made by hand"}},
}


@pytest.fixture
def sim():
    with NvueSimulation(password=PASSWORD, applied=copy.deepcopy(HAND_MADE), apply_polls=1) as simulation:
        yield simulation


def fleet(tmp_path: Path, drop: str | None = None) -> Path:
    data = generate(nodes=4, tenants=3, switches=1)
    leaf = data["fabric"]["switches"][0]
    assert (leaf["name"], leaf["platform"], leaf["role"]) == ("leaf000", "nvue", "leaf")
    if drop:
        data["tenants"] = [t for t in data["tenants"] if t["name"] != drop]
    path = tmp_path / "fleet.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def play(tmp_path: Path, sim: NvueSimulation, inventory: Path, state: str, check: bool = False):
    # A fresh private data dir per run: ansible-runner keeps a run's cmdline (--check) in it.
    runner_dir = tempfile.mkdtemp(prefix="runner-", dir=tmp_path)
    result = ansible_runner.run(
        private_data_dir=runner_dir,
        playbook=str(REPO / "playbooks" / "fabric.yml"),
        inventory=str(inventory),
        envvars={"ANSIBLE_CONFIG": str(REPO / "ansible.cfg")},
        extravars={
            "fabric_state": state,
            "ansible_host": "127.0.0.1",
            "switch_fabric_nvue_port": sim.port,
            "switch_fabric_nvue_use_ssl": False,
            "switch_fabric_nvue_validate_certs": False,
            "switch_fabric_nvue_password": PASSWORD,
        },
        cmdline="--check --diff" if check else None,
        quiet=True,
    )
    assert result.status == "successful", (result.status, result.stdout.read()[-4000:])
    return result


def vlans(config: dict) -> dict:
    return ((config.get("bridge") or {}).get("domain") or {}).get("br_default", {}).get("vlan") or {}


def test_fabric_playbook_against_the_nvue_simulation(tmp_path, sim):
    inventory = fleet(tmp_path)

    # Check mode: a plan, nothing applied, no revision left behind.
    play(tmp_path, sim, inventory, "overridden", check=True)
    assert sim.applied == HAND_MADE
    assert sim.revisions == {}

    # Converge: every tenant's VLAN -> L2 VNI, SVI and VRF -> L3 VNI; the hand-made VLAN stays.
    play(tmp_path, sim, inventory, "overridden")
    applied = sim.applied
    for n in range(3):
        assert vlans(applied)[str(100 + n)] == {"vni": {str(10000 + n): {}}}
        assert applied["interface"]["vlan%d" % (100 + n)]["description"] == "gpucloud:t%04d" % n
        assert applied["vrf"]["t%04d" % n]["evpn"]["vni"] == {str(500000 + n): {}}
    assert applied["interface"]["swp1"]["bridge"]["domain"]["br_default"]["vlan"] == {"100": {}, "101": {}, "102": {}}
    assert "3999" in vlans(applied) and applied["interface"]["vlan3999"] == HAND_MADE["interface"]["vlan3999"]

    # Idempotent: a second run changes nothing on any host.
    result = play(tmp_path, sim, inventory, "overridden")
    assert not any(result.stats.get("changed", {}).values()), result.stats
    assert sim.applied == applied

    # A tenant leaves the fleet: overridden removes exactly that tenant, nothing made by hand.
    play(tmp_path, sim, fleet(tmp_path, drop="t0002"), "overridden")
    after = sim.applied
    assert sorted(vlans(after)) == ["100", "101", "3999"]
    assert "vlan102" not in after["interface"] and "t0002" not in after["vrf"]
    assert str(10002) not in after["evpn"].get("vni", {})
    assert after["interface"]["swp1"]["bridge"]["domain"]["br_default"]["vlan"] == {"100": {}, "101": {}}
    assert after["interface"]["vlan3999"] == HAND_MADE["interface"]["vlan3999"]
    expected = copy.deepcopy(applied)
    for path in (
        ("interface", "vlan102"),
        ("vrf", "t0002"),
        ("evpn", "vni", "10002"),
        ("bridge", "domain", "br_default", "vlan", "102"),
    ):
        node = expected
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    for port in ("swp1", "swp2", "swp3", "swp4"):
        del expected["interface"][port]["bridge"]["domain"]["br_default"]["vlan"]["102"]
    assert after == expected
