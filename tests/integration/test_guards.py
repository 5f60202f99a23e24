# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The destructive playbooks (node_decommission.yml, tenant_offboard.yml, a reinstall by provision.yml or
node_add.yml) refuse bad input in the
play that would act, with or without --limit, before any task of that play runs.

Lab-free: the example inventory names hosts nobody can reach, so a task that got past the guard would
show as an event of another task (or an unreachable host); the only events allowed are the guard's own.
The lab tests run the confirmed paths (test_tenants, test_private_nodes, test_awx)."""
from __future__ import annotations

from pathlib import Path

import ansible_runner
import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "inventories" / "example" / "fleet.yml"
NAMES = "Check that every target is an exact name of the fleet, never a pattern or a group"
CONFIRM = "Check that the confirmation repeats what will be acted on"


def run(tmp_path: Path, playbook: str, extravars: dict, limit: str | None) -> ansible_runner.Runner:
    private = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
    private.mkdir()
    return ansible_runner.run(private_data_dir=str(private), project_dir=str(REPO),
                              playbook=str(REPO / "playbooks" / playbook), inventory=str(EXAMPLE),
                              extravars=extravars, limit=limit, quiet=True,
                              envvars={"ANSIBLE_CONFIG": str(REPO / "ansible.cfg")})


def refused(result: ansible_runner.Runner) -> tuple[str | None, str]:
    """(the task that refused, its message); fails when anything but the guard ran. (None, "") when --limit
    left no play a host (a node list such as a,b is no host pattern of ours: Ansible splits it at the comma)."""
    events = [e for e in result.events if str(e.get("event", "")).startswith("runner_on_")]
    if not events:
        plays = [e for e in result.events if e.get("event") == "playbook_on_play_start"]
        assert plays and len([e for e in result.events if e.get("event") == "playbook_on_no_hosts_matched"]) == len(
            plays), "a play ran no task although it had hosts"
        return None, ""
    # The guard role's own argument check counts as the guard.
    guard = {e["event_data"].get("task") for e in events if e["event_data"].get("role") == "guard"}
    tasks = {e["event_data"].get("task") for e in events} - guard
    assert not tasks, f"tasks past the guard ran: {sorted(tasks)}"
    assert not [e for e in events if e["event"] == "runner_on_unreachable"], "a host was contacted"
    failed = [e["event_data"] for e in events if e["event"] == "runner_on_failed"]
    assert result.rc != 0 and len({f["task"] for f in failed}) == 1, [f["task"] for f in failed]
    return failed[0]["task"], str(failed[0]["res"].get("msg"))


NODE_CASES = [
    ({"node": "gpu-*", "confirm": "gpu-*"}, NAMES, "never a pattern"),
    ({"node": "gpu_nodes", "confirm": "gpu_nodes"}, NAMES, "gpu_nodes"),
    ({"node": "gpu-r1-01,gpu-r1-02", "confirm": "gpu-r1-01,gpu-r1-02"}, NAMES, "one"),
    ({"node": "gpu-r1-01", "confirm": "gpu-r1-02"}, CONFIRM, "confirm=gpu-r1-01"),
    ({"node": "gpu-r1-01", "confirm": ""}, CONFIRM, "confirm=gpu-r1-01"),
    ({"node": "gpu-r1-01"}, CONFIRM, "confirm=gpu-r1-01"),
    ({}, NAMES, "got (none)"),
]


@pytest.mark.parametrize("limit", [None, "gpu-r1-01"])
@pytest.mark.parametrize(("extravars", "task", "words"), NODE_CASES, ids=lambda v: str(v) if isinstance(v, dict) else "")
def test_node_decommission_refuses_before_it_acts(tmp_path: Path, limit: str | None, extravars: dict, task: str,
                                                  words: str) -> None:
    got_task, message = refused(run(tmp_path, "node_decommission.yml", extravars, limit))
    if got_task is None:  # no play had a host: nothing acted
        assert limit is not None
        return
    assert got_task == task and words in message, (got_task, message)


TENANT_CASES = [
    ({"tenant": "*", "confirm": "*"}, NAMES, "never a pattern"),
    ({"tenant": "ac*", "confirm": "ac*"}, NAMES, "never a pattern"),
    ({"tenant": "nosuch", "confirm": "nosuch"}, NAMES, "nosuch"),
    ({"tenant": "acme", "confirm": "beta"}, CONFIRM, "confirm=acme"),
    ({"tenant": "acme", "confirm": ""}, CONFIRM, "confirm=acme"),
    ({"tenant": "acme"}, CONFIRM, "confirm=acme"),
]


@pytest.mark.parametrize("limit", [None, "localhost", "leaf-r1a"])
@pytest.mark.parametrize(("extravars", "task", "words"), TENANT_CASES, ids=lambda v: str(v) if isinstance(v, dict) else "")
def test_tenant_offboard_refuses_before_it_acts(tmp_path: Path, limit: str | None, extravars: dict, task: str,
                                                words: str) -> None:
    got_task, message = refused(run(tmp_path, "tenant_offboard.yml", extravars, limit))
    assert got_task == task and words in message, (got_task, message)


REINSTALL_CASES = [
    ({"reinstall": "gpu-*", "confirm": "gpu-*"}, NAMES, "never a pattern"),
    ({"reinstall": "gpu_nodes", "confirm": "gpu_nodes"}, NAMES, "gpu_nodes"),
    ({"reinstall": "nosuch", "confirm": "nosuch"}, NAMES, "nosuch"),
    ({"reinstall": "gpu-r1-01,gpu-r1-02", "confirm": "gpu-r1-01,gpu-r1-02"}, NAMES, "at most"),
    ({"reinstall": "gpu-r1-01", "confirm": "gpu-r1-02"}, CONFIRM, "confirm=gpu-r1-01"),
    ({"reinstall": "gpu-r1-01", "confirm": ""}, CONFIRM, "confirm=gpu-r1-01"),
    ({"reinstall": "gpu-r1-01"}, CONFIRM, "confirm=gpu-r1-01"),
    ({"reinstall": "gpu-r1-01,gpu-r1-02", "reinstall_max": 2, "confirm": "gpu-r1-01"}, CONFIRM,
     "confirm=gpu-r1-01,gpu-r1-02"),
]


@pytest.mark.parametrize("limit", [None, "gpu-r1-01", "pxe01"])
@pytest.mark.parametrize(("extravars", "task", "words"), REINSTALL_CASES,
                         ids=lambda v: str(v) if isinstance(v, dict) else "")
def test_a_reinstall_refuses_before_anything_changes(tmp_path: Path, limit: str | None, extravars: dict, task: str,
                                                     words: str) -> None:
    """A reinstall wipes a node: provision.yml checks its names and confirm in every play, before the boot
    server or any node is touched, whatever --limit leaves."""
    got_task, message = refused(run(tmp_path, "provision.yml", extravars, limit))
    assert got_task == task and words in message, (got_task, message)


@pytest.mark.parametrize("limit", [None, "gpu-r1-01", "pxe01"])
@pytest.mark.parametrize(("extravars", "task", "words"), [
    ({"node": "gpu-r1-01", "reinstall": "gpu-r1-02", "confirm": "gpu-r1-02"}, NAMES, "gpu-r1-02"),
    ({"node": "gpu-r1-01", "reinstall": "gpu-r1-01"}, CONFIRM, "confirm=gpu-r1-01"),
    # node is a host pattern in the plays: a pattern or a group would widen them
    ({"node": "gpu-*"}, NAMES, "never a pattern"),
    ({"node": "gpu_nodes"}, NAMES, "gpu_nodes"),
    ({"node": "gpu-r1-01,gpu-r1-02"}, NAMES, "at most 1"),
    ({"node": "gpu-r9-99"}, NAMES, "Not in the fleet: gpu-r9-99"),
    ({}, NAMES, "got (none)"),
], ids=lambda v: str(v) if isinstance(v, dict) else "")
def test_node_add_reinstalls_only_the_node_it_adds_and_only_confirmed(
        tmp_path: Path, limit: str | None, extravars: dict, task: str, words: str) -> None:
    got_task, message = refused(run(tmp_path, "node_add.yml", extravars, limit))
    assert got_task == task and words in message, (got_task, message)
