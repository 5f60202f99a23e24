# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch_tenants module end to end: main() with its arguments, through the collection's
one runner, the JSON it prints. What each state computes is tested in _fabric/test_plan.py."""

from __future__ import annotations

import json

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import registry
from ansible_collections.gpucloud.baremetal.plugins.modules import switch_tenants
from tests.support.fabric import STALE, leaves, native, underlay
from tests.support.module_args import patch_module_args


def run_main(capsys: pytest.CaptureFixture, **args) -> tuple[int, dict]:
    with patch_module_args(args), pytest.raises(SystemExit) as exited:
        switch_tenants.main()
    return exited.value.code, json.loads(capsys.readouterr().out)


LEAF = leaves()["sonic"]


def test_documentation_matches_the_argument_spec_and_the_registry():
    doc = yaml.safe_load(switch_tenants.DOCUMENTATION)
    spec = switch_tenants.argument_spec()
    assert set(doc["options"]) == set(spec)
    assert doc["options"]["platform"]["choices"] == spec["platform"]["choices"] == registry.names()
    assert doc["options"]["state"]["choices"] == spec["state"]["choices"]
    switch_platforms = [n for n in registry.names() if n != "frr"]
    assert doc["attributes"]["platform"]["platforms"] == switch_platforms


def test_a_plan_with_its_diff_only_in_diff_mode(capsys):
    running = native(LEAF, [*LEAF["tenants"], STALE])
    args = {"switch": LEAF, "underlay": underlay(), "state": "overridden", "running_config": running}
    rc, out = run_main(capsys, **args)
    assert rc == 0 and out["changed"] is True and out["changes"]["removed"] == ["stale"]
    assert "diff" not in out
    rc, out = run_main(capsys, _ansible_diff=True, **args)
    assert "gpucloud:stale" in out["diff"]["before"] and "gpucloud:stale" not in out["diff"]["after"]


def test_invalid_tenants_fail_with_every_problem(capsys):
    leaf = leaves()["nvue"]
    bad = dict(leaf, tenants=[dict(t, vlan=5000 + i) for i, t in enumerate(leaf["tenants"])])
    rc, out = run_main(capsys, switch=bad, underlay=underlay(), state="rendered")
    assert rc == 1 and out["failed"] is True
    assert out["problems"] == [
        "leaf-r1a.tenants[%d] (%s).vlan: %d is outside 1..4094" % (i, t["name"], 5000 + i)
        for i, t in enumerate(bad["tenants"])
    ]


@pytest.mark.parametrize(("running", "problem"), [
    ("{not json", "running_config: not config_db JSON"),
    ({"VLAN": {"Vlan5": {"description": "gpucloud:x", "vlanid": "five"}}}, "VLAN|Vlan5 vlanid: 'five' is not a number"),
    ({"VLAN": ["Vlan5"]}, "VLAN: is ['Vlan5'], not a mapping"),
])  # fmt: skip
def test_a_running_config_that_cannot_be_read_fails_naming_where(capsys, running, problem):
    """Not a blanket catch: the parser says what is wrong, and where; never a traceback."""
    rc, out = run_main(capsys, switch=LEAF, underlay=underlay(), state="merged", running_config=running)
    assert rc == 1 and out["msg"].startswith("running_config cannot be read as the platform's config")
    assert [p for p in out["problems"] if p.startswith(problem)], out["problems"]


def test_running_config_and_kept_dir_exclude_each_other(capsys, tmp_path):
    rc, out = run_main(capsys, switch=LEAF, state="merged", running_config="{}", kept_dir=str(tmp_path))
    assert rc == 1 and "mutually exclusive" in out["msg"]


def test_an_unknown_platform_is_refused_by_its_choices(capsys):
    rc, out = run_main(capsys, platform="junos", state="parsed", running_config="")
    assert rc == 1 and "platform" in out["msg"] and "junos" in out["msg"]


def test_a_plan_that_removes_more_tenants_than_max_removals_is_refused(capsys):
    """deleted with no tenant list (every tenant of ours) or overridden against the wrong fleet would take
    every tenant's network down: beyond max_removals the plan fails, naming them, and no command is returned."""
    running = native(LEAF, [*LEAF["tenants"], STALE])
    everyone = sorted(t["name"] for t in [*LEAF["tenants"], STALE])
    args = {"switch": LEAF, "underlay": underlay(), "state": "deleted", "running_config": running}
    rc, out = run_main(capsys, max_removals=1, **args)
    assert rc == 1 and "commands" not in out
    assert "would remove %d tenants (%s), more than max_removals 1" % (len(everyone), ", ".join(everyone)) in out["msg"]
    rc, out = run_main(capsys, max_removals=len(everyone), **args)
    assert rc == 0 and out["changes"]["removed"] == everyone
    rc, out = run_main(capsys, max_removals=1, **{**args, "state": "overridden"})
    assert rc == 0 and out["changes"]["removed"] == ["stale"]


def test_removing_a_vrf_an_interface_not_ours_is_in_is_refused_with_no_command(capsys):
    """The operator's VLAN_INTERFACE|Vlan999 in a tenant's VRF (vrf_users, as the role reads it with the filter
    gpucloud.baremetal.vrf_users): deleting that tenant fails naming the VRF, the tenant and the interface, and no
    command comes back; in a VRF of the operator's, the tenant is removed."""
    tenant = LEAF["tenants"][0]
    vrf = registry.tenant_vrf("sonic", tenant)
    db = json.loads(native(LEAF, LEAF["tenants"]))
    db["VLAN"]["Vlan999"] = {"vlanid": "999"}
    db["VLAN_INTERFACE"]["Vlan999"] = {"vrf_name": vrf}
    args = {"switch": LEAF, "underlay": underlay(), "state": "deleted", "running_config": db,
            "tenants": [tenant["name"]], "vrf_users": registry.vrf_users("sonic", db)}
    rc, out = run_main(capsys, **args)
    assert rc == 1 and "commands" not in out
    assert out["problems"] == [
        "%s: tenant %s: its VRF %s is in use by interface Vlan999, not ours (no gpucloud: marker); removing the tenant"
        " would remove the VRF, moving that interface out of it or breaking it. Move or remove interface Vlan999 from"
        " VRF %s by hand, then run again; nothing was changed" % (LEAF["name"], tenant["name"], vrf, vrf)]
    db["VLAN_INTERFACE"]["Vlan999"] = {"vrf_name": "Vrf-ops"}
    args.update(running_config=db, vrf_users=registry.vrf_users("sonic", db))
    rc, out = run_main(capsys, **args)
    assert rc == 0 and out["changes"]["removed"] == [tenant["name"]] and "VRF|%s" % vrf in out["commands"]["delete"]
