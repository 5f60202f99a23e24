# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The registry's data: a new platform is its module plus its catalog entry (and its name in
the registry's import), and everything that lists platforms picks it up from there: the fleet
schema, validation, the module's ``platform`` choices, the diff and the kept files."""

from __future__ import annotations

import copy
import types

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import catalog, plan, registry
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.model import pairs
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.ownership import Found, marker, owner
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.validate import check_switch
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import FleetError, load_fleet
from ansible_collections.gpucloud.baremetal.plugins.modules import switch_tenants
from tests.support.fabric import params, switches, underlay
from tests.support.fleetgen import generate


def test_every_switch_platform_says_what_the_fleet_and_the_modules_need():
    assert catalog.switch_platforms() == ("nvue", "sonic", "eos")
    for name, spec in catalog.PLATFORMS.items():
        assert {"title", "switch_os", "native", "diff"} <= set(spec), name
        if spec["switch_os"]:
            versions = spec["versions"]
            assert {"pattern", "oldest", "tested", "default", "form"} <= set(versions), name
            assert spec.get("routing") in (None, *catalog.PLATFORMS), name


# --- a platform that exists only in this test -----------------------------------------


def _line(t: dict) -> str:
    ports = ",".join("%s:%s" % (p["port"], p["mode"]) for p in t["ports"])
    return "tenant %s vlan %d vni %d vrf %s l3vni %d gateway %s ports %s" % (
        marker(t["name"]), t["vlan"], t["vni"], t["vrf"], t["l3vni"], t["gateway"], ports or "-")


def _render_text(switch: dict, tenants: list[dict], underlay: dict, opts: dict) -> dict[str, str]:
    return {"junos.conf": "".join(_line(t) + "\n" for t in tenants)}


def _parse(config: object) -> list[dict]:
    found = Found()
    for line in str(config or "").splitlines():
        w = line.split()
        if len(w) == 14 and owner(w[1]):
            ports = [dict(zip(("port", "mode"), p.split(":"), strict=True)) for p in w[13].split(",") if p != "-"]
            found.add("tenant %s" % w[1], dict.fromkeys(("vni", "vrf", "l3vni", "gateway"), line), name=owner(w[1]),
                      vlan=int(w[3]), vni=int(w[5]), vrf=w[7], l3vni=int(w[9]), gateway=w[11], ports=ports)  # fmt: skip
    return found.result()


def _delta(switch: dict, before: list[dict], after: list[dict], underlay: dict, opts: dict) -> dict:
    lines = []
    for old, new in pairs(before, after):
        lines += (["delete " + _line(old)] if old else []) + (["set " + _line(new)] if new else [])
    return {"lines": lines}


def _commands(switch: dict, before: list[dict], after: list[dict], underlay: dict, opts: dict,
              running: object = None) -> dict:
    """The platform's change as the module runs it: also given the switch's config as gathered (``running``), for
    what the change must keep that is not ours; this one has nothing to keep."""
    return _delta(switch, before, after, underlay, opts)


@pytest.fixture
def junos(monkeypatch):
    """A new platform as a real one is added: its module (here built in the test) registered
    under its name, and its entry in the catalog."""
    module = types.ModuleType("junos")
    module.render_text, module.parse, module.delta, module.commands = _render_text, _parse, _delta, _commands
    monkeypatch.setitem(registry.MODULES, "junos", module)
    monkeypatch.setitem(catalog.PLATFORMS, "junos", {
        "title": "Junos", "switch_os": True, "native": "junos.conf", "diff": "junos.conf", "vrf_prefix": "J-",
        "versions": {"pattern": r"^(\d+)\.(\d+)R\d+$", "oldest": (23, 4), "tested": "24.2R1", "default": "24.2R1",
                     "form": "YY.QRN (Junos OS)"},
    })  # fmt: skip
    return module


def test_the_module_s_platform_choices_come_from_the_registry(junos):
    assert switch_tenants.argument_spec()["platform"]["choices"] == ["nvue", "sonic", "eos", "frr", "junos"]


def test_the_fleet_takes_a_switch_of_the_new_platform_with_its_releases(junos):
    fleet = generate(nodes=20, tenants=4, switches=3)
    fleet["fabric"]["switches"][0].update(platform="junos", os_version="24.4R2")
    leaf = next(s for s in load_fleet(copy.deepcopy(fleet))["fabric"]["switches"] if s["platform"] == "junos")
    assert leaf["os_version"] == "24.4R2" and leaf["tenants"]
    fleet["fabric"]["switches"][0]["os_version"] = "22.1R1"
    with pytest.raises(FleetError, match=r"junos 22\.1R1 is older than the oldest release the fabric supports \(23\.4\)"):
        load_fleet(copy.deepcopy(fleet))
    fleet["fabric"]["switches"][0]["os_version"] = "5.12"
    with pytest.raises(FleetError, match=r"'5\.12' is not a junos release; give YY\.QRN \(Junos OS\)"):
        load_fleet(copy.deepcopy(fleet))


def test_validation_applies_the_new_platform_s_rules(junos):
    sw = dict(switches()["leaf-r1a"], platform="junos")
    assert check_switch(sw, underlay()) == []
    sw["tenants"] = [dict(sw["tenants"][0], vrf="abcdefghijklmn")]
    assert check_switch(sw, underlay()) == [
        "leaf-r1a.tenants[0] (acme).vrf: Junos names VRFs 'J-<name>' with at most 15 characters;"
        " 'abcdefghijklmn' is too long (at most 13)"
    ]


def test_render_plan_diff_and_kept_files_follow_the_catalog(junos, tmp_path):
    sw = dict(switches()["leaf-r1a"], platform="junos")
    rendered = plan.run(params(sw, "rendered"))
    assert set(rendered["rendered"]) == {"junos.conf"}
    assert rendered["files"] == {"leaf-r1a.junos.conf": rendered["rendered"]["junos.conf"]}
    first = plan.run(params(sw, "merged", kept_dir=str(tmp_path), render_after=True))
    assert first["changed"] and first["commands"]["lines"][0].startswith("set tenant gpucloud:")
    assert first["diff"]["before"] == "" and first["diff"]["after"] == rendered["rendered"]["junos.conf"]
    assert first["diff_from_plan"] is False  # no push_diff in its entry: its push shows its own diff
    (tmp_path / "leaf-r1a.junos.conf").write_text(first["files"]["leaf-r1a.junos.conf"])
    again = plan.run(params(sw, "overridden", kept_dir=str(tmp_path)))
    assert again["changed"] is False
    assert plan.run(params(None, "parsed", rendered["rendered"]["junos.conf"], platform="junos"))["parsed"] == \
        again["after"]


@pytest.mark.parametrize("platform", ["nvue", "sonic", "eos"])
def test_whether_the_plan_reports_the_change_comes_from_the_catalog(platform, tmp_path):
    """Role switch_fabric marks its plan task changed (so --diff shows the change once) where the platform's push
    cannot show it: the plan says so from the catalog's push_diff (EOS and SONiC), not from a list in the role."""
    sw = dict(switches()["leaf-r1a"], platform=platform)
    result = plan.run(params(sw, "merged", kept_dir=str(tmp_path)))
    assert result["changed"] and result["diff_from_plan"] is (platform in ("eos", "sonic"))
    assert result["diff_from_plan"] is not catalog.PLATFORMS[platform]["push_diff"]


@pytest.mark.parametrize(("release", "problem"), [
    ("5.3", "nvue 5.3 is older than the oldest release the fabric supports (5.4)"),
    ("5.15", "nvue 5.15 is newer than the newest release the fabric renders for (5.14: from 5.15 NVUE's model"
             " has `state enabled` for `enable on` and `ipv4` for an SVI's `ip`)"),
])  # fmt: skip
def test_the_fleet_refuses_nvue_releases_the_render_does_not_fit(release, problem):
    """NVIDIA's NVUE model of each release holds our render from 5.4 to 5.14 only
    (platforms/test_nvue.py); a switch declared outside is refused before anything renders."""
    fleet = generate(nodes=20, tenants=4, switches=3)
    fleet["fabric"]["switches"][0]["os_version"] = release
    with pytest.raises(FleetError) as err:
        load_fleet(fleet)
    assert "fabric.switches[0].os_version: %s; see docs/fabric.md" % problem in err.value.problems
    fleet["fabric"]["switches"][0]["os_version"] = "5.14.1"
    assert load_fleet(fleet)["fabric"]["switches"][0]["os_version"] == "5.14.1"
