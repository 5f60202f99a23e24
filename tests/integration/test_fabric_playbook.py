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


SITE = generate(nodes=4, tenants=3, switches=1)["site"]["name"]


def fleet(tmp_path: Path, drop: tuple[str, ...] = ()) -> Path:
    data = generate(nodes=4, tenants=3, switches=1)
    leaf = data["fabric"]["switches"][0]
    assert (leaf["name"], leaf["platform"], leaf["role"]) == ("leaf000", "nvue", "leaf")
    if drop:
        data["tenants"] = [t for t in data["tenants"] if t["name"] not in drop]
    path = tmp_path / "fleet.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def play(tmp_path: Path, sim: NvueSimulation, inventory: Path, state: str, check: bool = False,
         expect: str = "successful", limit: str | None = None, **extra):
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
            **({"confirm": SITE} if state == "overridden" else {}),
            **extra,
        },
        cmdline="--check --diff" if check else None,
        limit=limit,
        quiet=True,
    )
    assert result.status == expect, (result.status, result.stdout.read()[-4000:])
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
    play(tmp_path, sim, fleet(tmp_path, drop=("t0002",)), "overridden")
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


def _refused(result, task: str) -> str:
    failed = [e["event_data"] for e in result.events if e["event"] == "runner_on_failed"]
    assert [f["task"] for f in failed] == [task], failed
    return str(failed[0]["res"]["msg"])


GUARD_NAMES = "Check that every target is an exact name of the fleet, never a pattern or a group"
GUARD_CONFIRM = "Check that the confirmation repeats what will be acted on"


@pytest.mark.parametrize("limit", [None, "leaf000"])
def test_removing_tenant_networks_needs_exact_names_and_a_confirmation_that_limit_cannot_skip(tmp_path, sim, limit):
    """deleted with no tenant list, a pattern, a confirmation of another tenant or none, and overridden confirmed
    with anything but the site's name: each refused in the play that would act (with or without --limit), before
    the switch is read."""
    inventory = fleet(tmp_path)
    play(tmp_path, sim, inventory, "merged")
    before, revisions = copy.deepcopy(sim.applied), copy.deepcopy(sim.revisions)
    cases = [
        ({"fabric_state": "deleted"}, GUARD_NAMES, "got (none)"),
        ({"fabric_state": "deleted", "fabric_tenants": ["t*"], "confirm": "t*"}, GUARD_NAMES, "never a pattern"),
        ({"fabric_state": "deleted", "fabric_tenants": ["t0001"], "confirm": "t0002"}, GUARD_CONFIRM, "confirm=t0001"),
        ({"fabric_state": "deleted", "fabric_tenants": ["t0001"]}, GUARD_CONFIRM, "no confirm"),
        ({"fabric_state": "overridden", "confirm": "t0001"}, GUARD_CONFIRM, f"confirm={SITE}"),
    ]
    for extra, task, words in cases:
        state = extra.pop("fabric_state")
        runner_extra = dict(extra)
        if state == "overridden":
            runner_extra["confirm"] = extra["confirm"]
        result = play(tmp_path, sim, inventory, state, expect="failed", limit=limit, **runner_extra)
        assert words in _refused(result, task), (extra, words)
        assert sim.applied == before and sim.revisions == revisions  # the switch was not even asked
    deleted = play(tmp_path, sim, inventory, "deleted", limit=limit, fabric_tenants=["t0001"], confirm="t0001")
    assert deleted.rc == 0 and "101" not in vlans(sim.applied) and "100" in vlans(sim.applied)


def test_one_run_removes_at_most_max_removals_tenants(tmp_path, sim):
    """Two tenants gone from the fleet: overridden (confirmed) stops on the switch before any change, naming both;
    with -e fabric_max_removals=2 the same run removes them."""
    play(tmp_path, sim, fleet(tmp_path), "merged")
    before = copy.deepcopy(sim.applied)
    smaller = fleet(tmp_path, drop=("t0001", "t0002"))
    refused = play(tmp_path, sim, smaller, "overridden", expect="failed")
    assert "would remove 2 tenants (t0001, t0002), more than max_removals 1" in _refused(refused, "Plan the change")
    assert sim.applied == before
    play(tmp_path, sim, smaller, "overridden", fabric_max_removals=2)
    assert sorted(vlans(sim.applied)) == ["100", "3999"]
