# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NVUE REST API client's revision flow, against the NVUE API simulation (the lab's, in a
thread on 127.0.0.1), as a switch answers (``../shared/FACTS.md``, NVIDIA's NVUE API page)."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import plan
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.errors import NvueError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.model import desired, normalise
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.nvue_api import (
    NvueClient,
    change,
    is_failure,
    revision_state,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.platforms import nvue
from tests.support.fabric import STALE, leaves, native, params
from tests.support.nvue_api_sim import NvueSimulation

LEAVES = leaves()


def _client(sim):
    return NvueClient("http://127.0.0.1:%d/nvue_v1" % sim.port, "cumulus", "sim", validate_certs=False)


def _push(sim, state, check_mode=False):
    sw = LEAVES["nvue"]
    client = _client(sim)
    planned = plan.run(params(sw, state, client.applied()))
    cmds = planned["commands"]
    return planned, change(client, cmds.get("set") or {}, cmds.get("unset") or [], check_mode, wait=5)


def test_nvue_push_apply_idempotent_and_check_mode():
    sw = LEAVES["nvue"]
    with NvueSimulation(applied={"system": {"hostname": "leaf-r1a"}}, apply_polls=2) as sim:
        planned, result = _push(sim, "merged", check_mode=True)
        assert planned["changed"] and result["changed"] and result["revision"] is None
        assert sim.applied == {"system": {"hostname": "leaf-r1a"}}, "check mode applied something"
        assert sim.revisions == {}, "check mode left a revision behind"

        planned, result = _push(sim, "merged")
        assert result["changed"] and result["revision"]
        assert nvue.parse(sim.applied) == desired(sw)
        assert sim.applied["system"] == {"hostname": "leaf-r1a"}, "a setting we do not own was lost"

        planned, result = _push(sim, "merged")
        assert planned["changed"] is False and result["changed"] is False
        assert ("PATCH", "/nvue_v1/revision/%s" % sim.next_rev) not in sim.log


def test_nvue_push_overridden_removes_only_the_stale_tenant():
    sw = LEAVES["nvue"]
    start = nvue.load(native(sw, normalise([*sw["tenants"], STALE])))
    start["interface"]["vlan300"] = {"type": "svi", "vlan": 300, "description": "ops vlan"}
    with NvueSimulation(applied=copy.deepcopy(start)) as sim:
        planned, result = _push(sim, "overridden")
        assert planned["changes"]["removed"] == ["stale"] and result["changed"]
        assert nvue.parse(sim.applied) == desired(sw)
        assert "vlan300" in sim.applied["interface"] and "stale" not in sim.applied["vrf"]
        assert "199" not in sim.applied["interface"]["swp3"]["bridge"]["domain"]["br_default"]["vlan"]


def test_nvue_errors_are_one_line():
    with NvueSimulation() as sim:
        bad = NvueClient("http://127.0.0.1:%d/nvue_v1" % sim.port, "cumulus", "wrong", validate_certs=False)
        with pytest.raises(NvueError, match="authentication failed"):
            bad.applied()
    with pytest.raises(NvueError, match="unreachable"):
        NvueClient("http://127.0.0.1:9/nvue_v1", "u", "p", timeout=2).applied()


def test_the_simulation_refuses_a_path_no_switch_has():
    bad = {"vrf": {"acme": {"router": {"bgp": {"address-family": {"ipv4-unicast": {"route-export": {
        "to-evpn": {"route-target": {"64512:50101": {}}}}}}}}}}}
    with NvueSimulation() as sim:
        client = _client(sim)
        rev = client.create_revision()
        with pytest.raises(NvueError, match=r"answered 400.*route-target: no such path"):
            client.patch(rev, bad)
        with pytest.raises(NvueError, match="answered 400"):
            client.unset(rev, "vrf/acme/router/bgp/address-family/ipv4-unicast/route-export/to-evpn/route-target")


@pytest.mark.parametrize("version,state,save_calls", [("5.8", "applied", 1), ("5.12", "applied_and_saved", 0)])
def test_nvue_apply_is_saved_on_every_release(version, state, save_calls):
    with NvueSimulation(version=version) as sim:
        _planned, result = _push(sim, "merged")
        assert result["changed"] and result["saved"] is True
        assert sim.saved == sim.applied, "the applied config would be lost at reboot"
        assert sim.log.count(("PATCH", "/nvue_v1/revision/applied")) == save_calls
        assert sim.revisions[result["revision"]]["state"] == state


@pytest.mark.parametrize("failure", ["verify_error", "apply_fail", "frobnicate_error"])
def test_nvue_failure_state_is_named_at_once(failure):
    with NvueSimulation(fail_state=failure) as sim:
        with pytest.raises(NvueError, match="apply ended in state %s" % failure):
            _push(sim, "merged")
        # The state that names the failure is read once: the client stops there instead of polling on
        # until its timeout.
        [revision] = sim.revisions.values()
        assert revision["reads"] == sim.apply_polls, revision["reads"]
        assert sim.applied == {}, "a failed revision changed the switch"


def test_nvue_default_password_gets_a_clear_error():
    with NvueSimulation(password_changed=False) as sim, pytest.raises(NvueError, match=r"403.*default password"):
        _client(sim).applied()


def test_nvue_removing_the_last_vlan_of_a_port_takes_it_out_of_the_bridge():
    """A bridge port with no VLAN of its own carries every VLAN of the bridge: a tenant leak."""
    sw = LEAVES["nvue"]
    private = next(t for t in sw["tenants"] if not t.get("trunk"))
    port = private["ports"][0]["port"]
    with NvueSimulation(version="5.12") as sim:
        _push(sim, "merged")
        assert "access" in sim.applied["interface"][port]["bridge"]["domain"]["br_default"]
        client = _client(sim)
        planned = plan.run(params(sw, "deleted", client.applied(), tenants=[private["name"]]))
        cmds = planned["commands"]
        change(client, cmds.get("set") or {}, cmds.get("unset") or [], False, wait=5)
        assert "bridge" not in sim.applied["interface"].get(port, {}), sim.applied["interface"].get(port)
        shared = next(t for t in sw["tenants"] if t.get("trunk"))
        trunk = shared["ports"][0]["port"]
        assert sim.applied["interface"][trunk]["bridge"]["domain"]["br_default"]["vlan"], "other tenants lost"


def test_an_api_failure_is_one_problem_of_the_collection_s_error_root():
    err = NvueError("NVUE API x answered 500: boom")
    assert isinstance(err, ProblemsError)
    assert str(err) == "NVUE API x answered 500: boom" and err.problems == ["NVUE API x answered 500: boom"]


def test_revision_answers_flat_or_nested_and_failure_states():
    assert revision_state({"state": "applied"}, "6") == {"state": "applied"}
    assert revision_state({"6": {"state": "apply_error"}}, "6") == {"state": "apply_error"}
    assert revision_state({"7": {"state": "ays_fail"}}, "6") == {"state": "ays_fail"}
    assert revision_state([], "6") == {}
    assert [s for s in ("invalid", "frobnicate_error", "x_fail", "applied", "pending") if is_failure(s)] == [
        "invalid", "frobnicate_error", "x_fail"]


def test_the_client_is_built_from_the_connection_options():
    client = NvueClient.from_params({"host": "leaf1", "port": 8765, "use_ssl": True, "username": "u",
                                     "password": "p", "validate_certs": False, "timeout": 5, "ca_path": None})  # fmt: skip
    assert client.base == "https://leaf1:8765/nvue_v1" and client.username == "u" and client.timeout == 5
