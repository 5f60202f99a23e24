# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nvue_config module end to end against the NVUE API simulation: main() with its arguments,
through the collection's one runner, the JSON it prints. The revision flow itself:
_fabric/test_nvue_api.py."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.doc_fragments.nvue import ModuleDocFragment
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.nvue_api import CONNECTION_SPEC
from ansible_collections.gpucloud.baremetal.plugins.modules import nvue_config
from tests.support.module_args import patch_module_args
from tests.support.nvue_api_sim import NvueSimulation

PASSWORD = "s3cret-nvue"
TREE = {"interface": {"vlan300": {"type": "svi", "vlan": 300, "description": "ops vlan"}}}


def run_main(capsys: pytest.CaptureFixture, sim: NvueSimulation | None, **args) -> tuple[int, dict, str]:
    base = {"host": "127.0.0.1", "port": sim.port if sim else 9, "use_ssl": False, "password": PASSWORD,
            "validate_certs": False, "timeout": 3}  # fmt: skip
    with patch_module_args({**base, **args}), pytest.raises(SystemExit) as exited:
        nvue_config.main()
    printed = capsys.readouterr().out
    return exited.value.code, json.loads(printed), printed


def test_the_connection_options_are_the_doc_fragment_s():
    fragment = yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"]
    assert set(fragment) == set(CONNECTION_SPEC)
    for name, spec in CONNECTION_SPEC.items():
        assert fragment[name]["type"] == spec["type"] and fragment[name].get("default") == spec.get("default"), name
    doc = yaml.safe_load(nvue_config.DOCUMENTATION)
    assert set(doc["options"]) | set(fragment) == set(nvue_config.SPEC)


def test_apply_then_nothing_to_do_with_the_diff_only_in_diff_mode(capsys):
    with NvueSimulation(version="5.12", password=PASSWORD) as sim:
        rc, out, printed = run_main(capsys, sim, set=TREE, _ansible_diff=True)
        assert rc == 0 and out["changed"] is True and out["revision"] and out["saved"] is True
        assert out["diff"]["after"]["interface"]["vlan300"]["description"] == "ops vlan"
        assert PASSWORD not in printed
        rc, out, printed = run_main(capsys, sim, set=TREE, _ansible_diff=True)
        assert rc == 0 and out["changed"] is False and out["revision"] is None and "diff" not in out
        rc, out, printed = run_main(capsys, sim, state="gathered")
        assert out["config"] == {}  # vlan300 is the operator's, not ours
        assert "config" not in run_main(capsys, sim, set=TREE)[1]


COMMUNITY, BGP_PASSWORD = "snmp-c0mmunity-unit", "bgp-s3cret-unit"
SWITCH_OWN = {
    "system": {"snmp-server": {"readonly-community": {COMMUNITY: {"access": {"any": {}}}}}},
    "vrf": {"default": {"router": {"bgp": {"neighbor": {"10.0.0.1": {"password": BGP_PASSWORD}}}}}},
}
OURS = {"interface": {"vlan101": {"type": "svi", "vlan": 101, "description": "gpucloud:acme",
                                  "ip": {"vrf": "acme", "vrr": {"address": {"10.101.0.1/24": {}}}}},
                      "swp1": {"bridge": {"domain": {"br_default": {"access": 101}}}}},
        "bridge": {"domain": {"br_default": {"vlan": {"101": {"vni": {"10101": {}}}}}}},
        "vrf": {"acme": {"evpn": {"vni": {"50101": {}}}}}}


def test_what_it_returns_of_the_switch_is_ours_and_what_it_changes(capsys):
    applied = copy.deepcopy({**SWITCH_OWN, **OURS, "vrf": {**SWITCH_OWN["vrf"], **OURS["vrf"]}})
    with NvueSimulation(version="5.12", password=PASSWORD, applied=applied) as sim:
        rc, out, printed = run_main(capsys, sim, state="gathered")
        assert rc == 0 and out["config"] == OURS
        assert out["foreign_vlans"] == []  # 101 is ours (its SVI is marked); the switch has no other
        assert out["foreign_vrfs"] == ["default"]  # the switch's own; acme has our SVI in it
        assert out["vrf_users"] == {}  # vlan101 is ours
        rc, out, printed = run_main(capsys, sim, set={"interface": {"vlan101": {"description": "gpucloud:acme2"}}},
                                    unset=["interface/swp1/bridge/domain/br_default"], _ansible_diff=True)
        assert rc == 0 and out["changed"] and out["diff"]["before"] == OURS
        assert out["diff"]["after"]["interface"]["vlan101"]["description"] == "gpucloud:acme2"
        assert "swp1" not in out["diff"]["after"]["interface"]
    assert COMMUNITY not in printed and BGP_PASSWORD not in printed
    assert sim.applied["system"] == SWITCH_OWN["system"]  # the switch's own config is kept, only not shown


def test_check_mode_applies_nothing(capsys):
    with NvueSimulation(version="5.12", password=PASSWORD) as sim:
        rc, out, _printed = run_main(capsys, sim, set=TREE, _ansible_check_mode=True)
        assert rc == 0 and out["changed"] is True and out["revision"] is None
        assert sim.applied == {} and sim.revisions == {}


def test_a_refused_call_fails_with_one_line_and_no_secret(capsys):
    with NvueSimulation(password_changed=False, password=PASSWORD) as sim:
        rc, out, printed = run_main(capsys, sim, state="gathered")
    assert rc == 1 and "403" in out["msg"] and "default password" in out["msg"]
    assert out["problems"] == [out["msg"]] and PASSWORD not in printed
    rc, out, printed = run_main(capsys, None, state="gathered")
    assert rc == 1 and "unreachable" in out["msg"]


def test_gathered_names_the_bridge_vlans_that_are_not_ours(capsys):
    """The operator's VLANs (a bridge VLAN without an SVI of ours, a range), numbers only: switch_tenants refuses a
    tenant on one of them."""
    applied = copy.deepcopy({**OURS, "bridge": {"domain": {"br_default": {"vlan": {
        **OURS["bridge"]["domain"]["br_default"]["vlan"], "10": {}, "20-22": {}}}}}})
    with NvueSimulation(version="5.12", password=PASSWORD, applied=applied) as sim:
        rc, out = run_main(capsys, sim, state="gathered")[:2]
    assert rc == 0 and out["foreign_vlans"] == [10, 20, 21, 22], out
    assert out["foreign_vrfs"] == []  # acme has our SVI in it
    assert "10" not in out["config"]["bridge"]["domain"]["br_default"]["vlan"]


def test_gathered_names_the_interfaces_not_ours_by_the_vrf_each_is_in(capsys):
    """The operator's SVI vlan999 in our VRF acme, and their management port in mgmt: names only, for switch_tenants'
    vrf_users (removing acme would leave vlan999 in a VRF that is gone); none of it is in the config returned."""
    applied = copy.deepcopy(OURS)
    applied["interface"]["vlan999"] = {"type": "svi", "vlan": 999, "ip": {"vrf": "acme"}}
    applied["interface"]["eth0"] = {"type": "eth", "ip": {"vrf": "mgmt"}}
    with NvueSimulation(version="5.12", password=PASSWORD, applied=applied) as sim:
        rc, out = run_main(capsys, sim, state="gathered")[:2]
    assert rc == 0 and out["vrf_users"] == {"acme": ["vlan999"], "mgmt": ["eth0"]}, out
    assert set(out["config"]["interface"]) == {"vlan101", "swp1"}
