# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Golden files, round trips and per-tenant line changes of the fabric renderers.

Regenerate the golden files after a reviewed change:
    GPUCLOUD_UPDATE_GOLDEN=1 pytest tests/unit/plugins/module_utils/test_fabric_render.py
then review `git diff tests/support/golden/fabric`.
"""

from __future__ import annotations

import copy
import difflib
import os

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils import _fabric
from ansible_collections.gpucloud.baremetal.plugins.module_utils import _fabric_platforms as platforms
from tests.support.fabric import GOLDEN, example_model, file_name

UPDATE = os.environ.get("GPUCLOUD_UPDATE_GOLDEN") == "1"
MODEL = example_model()
UNDERLAY = MODEL["fabric"]["underlay"]
SWITCHES = {s["name"]: s for s in MODEL["fabric"]["switches"]}
# The example has no EOS leaf: leaf-r1a is also rendered as each other platform.
CROSS = [("leaf-r1a", "eos"), ("leaf-r1a", "sonic"), ("leaf-r2a", "nvue")]


def _cases():
    for name, switch in SWITCHES.items():
        yield name, switch
    for name, platform in CROSS:
        yield "%s-as-%s" % (name, platform), dict(SWITCHES[name], platform=platform)


CASES = dict(_cases())
FILES = [(case, ext) for case, sw in CASES.items() for ext in platforms.render_files(sw, UNDERLAY)]


@pytest.mark.parametrize(("case", "ext"), FILES, ids=["%s:%s" % f for f in FILES])
def test_golden(case, ext):
    text = platforms.render_files(CASES[case], UNDERLAY)[ext]
    path = os.path.join(GOLDEN, file_name(case, ext))
    if UPDATE:
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    assert os.path.exists(path), "no golden file %s; run with GPUCLOUD_UPDATE_GOLDEN=1 and review it" % path
    with open(path, encoding="utf-8") as fh:
        golden = fh.read()
    if text != golden:
        diff = "".join(difflib.unified_diff(golden.splitlines(True), text.splitlines(True), path, "rendered"))
        pytest.fail("rendered %s differs from its golden file:\n%s" % (ext, diff))


def test_no_stray_golden_files():
    expected = {file_name(case, ext) for case, ext in FILES}
    assert set(os.listdir(GOLDEN)) == expected


@pytest.mark.parametrize("case", list(CASES))
def test_parse_of_rendered_is_the_model(case):
    switch = CASES[case]
    files = platforms.render_files(switch, UNDERLAY)
    platform = switch["platform"]
    for ext, text in files.items():
        if ext == "frr.conf":
            from ansible_collections.gpucloud.baremetal.plugins.module_utils import _render_frr

            assert _render_frr.parse(text) == _render_frr.expected(switch, _fabric.desired(switch))
        else:
            assert ext.startswith(platform)
            assert platforms.parse_native(platform, text) == _fabric.desired(switch)


def test_model_tenants_in_neutral_shape():
    leaf = SWITCHES["leaf-r2a"]
    want = _fabric.desired(leaf)
    assert [t["name"] for t in want] == ["beta", "cobalt"]
    assert want[1] == {
        "name": "cobalt", "vlan": 103, "vni": 10103, "vrf": "cobalt", "l3vni": 50103,
        "gateway": "10.103.0.1/24", "subnet": "10.103.0.0/24", "address": "",
        "ports": [{"port": "Ethernet0", "mode": "access"}],
    }
    # NVUE leaves carry their own SVI address (from the top of the subnet, one per leaf in fleet order)
    nvue = {t["name"]: t for t in _fabric.desired(SWITCHES["leaf-r1a"])}
    other = {t["name"]: t for t in _fabric.desired(SWITCHES["leaf-r1b"])}
    assert nvue["beta"]["address"] != other["beta"]["address"]
    assert nvue["beta"]["address"].endswith("/24") and nvue["beta"]["address"] != nvue["beta"]["gateway"]
    assert _fabric.desired(SWITCHES["spine1"]) == []


def _with_tenant(switch, extra):
    s = copy.deepcopy(switch)
    s["tenants"] = sorted([*s["tenants"], extra], key=lambda t: t["vlan"])
    return s


EXTRA = {
    "name": "delta", "isolation": "private", "vlan": 150, "vni": 10150, "vrf": "delta", "l3vni": 50150,
    "subnet": "10.150.0.0/24", "gateway": "10.150.0.1/24", "ports": [],
}


@pytest.mark.parametrize(("case", "port"), [
    ("leaf-r1a", "swp9"), ("leaf-r2a", "Ethernet40"), ("leaf-r1a-as-eos", "Ethernet9"),
])
def test_a_tenant_added_changes_exactly_its_lines(case, port):
    base = CASES[case]
    extra = dict(EXTRA, ports=[{"port": port, "node": "gpu-x", "mode": "access"}])
    grown = _with_tenant(base, extra)
    for ext, before in platforms.render_files(base, UNDERLAY).items():
        after = platforms.render_files(grown, UNDERLAY)[ext]
        sm = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
        removed = [line for tag, i1, i2, unused, unused in sm.get_opcodes() if tag in ("replace", "delete")
                   for line in before.splitlines()[i1:i2]]
        added = [line for tag, unused, unused, j1, j2 in sm.get_opcodes() if tag in ("replace", "insert")
                 for line in after.splitlines()[j1:j2]]
        assert removed == [], (ext, removed)
        assert added, ext
        if ext in ("nvue.nv", "eos.cfg", "frr.conf"):
            # Line formats: every added line is a line of the new tenant's own config.
            alone = dict(copy.deepcopy(base), tenants=[extra])
            own = platforms.render_files(alone, UNDERLAY)[ext].splitlines()
            assert [line for line in added if line not in own] == [], ext
        # Structured formats (and all): parsed, the file holds exactly one more tenant.
        platform = "frr" if ext == "frr.conf" else base["platform"]
        if platform != "frr":
            have = platforms.parse_native(platform, after)
            assert have == _fabric.desired(grown)
            assert [t for t in have if t["name"] != "delta"] == _fabric.desired(base)
        # Removing it again gives back exactly the original file.
        assert platforms.render_files(base, UNDERLAY)[ext] == before


@pytest.mark.parametrize("case", ["leaf-r1a", "leaf-r2a", "leaf-r1a-as-eos"])
def test_a_tenant_removed_removes_only_its_lines(case):
    base = CASES[case]
    shrunk = copy.deepcopy(base)
    gone = shrunk["tenants"].pop(0)
    before = platforms.render_files(base, UNDERLAY)
    after = platforms.render_files(shrunk, UNDERLAY)
    for ext in before:
        b, a = before[ext].splitlines(), after[ext].splitlines()
        sm = difflib.SequenceMatcher(a=b, b=a, autojunk=False)
        assert all(tag == "delete" or tag == "equal" for tag, *unused in sm.get_opcodes()), ext
        removed = [line for tag, i1, i2, unused, unused in sm.get_opcodes() if tag == "delete" for line in b[i1:i2]]
        assert any(str(gone["vlan"]) in line or gone["vrf"] in line for line in removed), ext


def test_eos_trunk_vlans_are_one_ranged_line_and_parse_back():
    from ansible_collections.gpucloud.baremetal.plugins.module_utils import _render_eos

    assert _render_eos.vlan_ranges([110, 102, 103, 104, 120, 121]) == "102-104,110,120-121"
    switch = copy.deepcopy(dict(SWITCHES["leaf-r1a"], platform="eos"))
    beta = next(t for t in switch["tenants"] if t["name"] == "beta")
    extra = []
    for i, vlan in enumerate((103, 104, 110)):
        t = copy.deepcopy(beta)
        t.update(name="extra%d" % i, vlan=vlan, vni=20000 + vlan, vrf="extra%d" % i, l3vni=60000 + vlan,
                 subnet="10.%d.0.0/24" % (200 + i), gateway="10.%d.0.1/24" % (200 + i))
        extra.append(t)
    switch["tenants"] = sorted(switch["tenants"] + extra, key=lambda t: t["vlan"])
    text = platforms.render_files(switch, UNDERLAY)["eos.cfg"]
    trunk_lines = [line.strip() for line in text.splitlines() if "trunk allowed vlan" in line]
    assert trunk_lines and set(trunk_lines) == {"switchport trunk allowed vlan 102-104,110"}
    assert platforms.parse_native("eos", text) == _fabric.desired(switch)


def test_eos_render_read_back_by_arista_eos_l2_interfaces():
    """arista.eos's own l2_interfaces fact parser (an independent reader of EOS text) sees each
    port's exact list: an `allowed vlan add N` line reads as the list 'add', and a trunk with no
    list allows every VLAN of the switch."""
    from ansible_collections.arista.eos.plugins.module_utils.network.eos.facts.l2_interfaces.l2_interfaces import (
        L2_interfacesFacts,
    )

    facts = L2_interfacesFacts(module=None)
    for name, switch in SWITCHES.items():
        if switch["role"] != "leaf":
            continue
        sw = dict(switch, platform="eos")
        text = platforms.render_files(sw, UNDERLAY)["eos.cfg"]
        blocks = ("\n" + text).split("\ninterface ")[1:]
        parsed = {b.split()[0]: facts.render_config(facts.generated_spec, b) for b in blocks}
        for t in _fabric.desired(sw):
            for p in t["ports"]:
                got = parsed[p["port"]]
                if p["mode"] == "access":
                    assert got["access"] == {"vlan": t["vlan"]}, (name, p)
                else:
                    want = {x["vlan"] for x in _fabric.desired(sw) if p in x["ports"]}
                    assert got["mode"] == "trunk", (name, p)
                    allowed = got["trunk"]["trunk_allowed_vlans"]
                    assert _render_eos_vlans(allowed) == want, (name, p, allowed)


def _render_eos_vlans(text):
    from ansible_collections.gpucloud.baremetal.plugins.module_utils import _render_eos

    assert text not in ("add", "all"), "the trunk's allowed list is %r" % text
    return _render_eos._vlan_list(text)


def test_eos_parser_reads_running_config_text():
    """Running-config as EOS prints it (vendor documentation form), not our own output."""
    running = """\
vlan 101
   name gpucloud:acme
!
vlan 102
   name gpucloud:beta
!
interface Ethernet1
   description server01
   switchport access vlan 101
!
interface Ethernet2
   description server02
   switchport trunk allowed vlan 101-102
   switchport mode trunk
!
interface Vlan101
   description gpucloud:acme
   vrf acme
   ip address virtual 10.101.0.1/24
!
interface Vlan102
   description gpucloud:beta
   vrf beta
   ip address virtual 10.102.0.1/24
!
interface Vxlan1
   vxlan source-interface Loopback0
   vxlan udp-port 4789
   vxlan vlan 101 vni 10101
   vxlan vlan 102 vni 10102
   vxlan vrf acme vni 50101
   vxlan vrf beta vni 50102
!
"""
    from ansible_collections.gpucloud.baremetal.plugins.module_utils import _render_eos

    tenants = {t["name"]: t for t in _render_eos.parse(running)}
    assert tenants["acme"]["ports"] == [{"port": "Ethernet1", "mode": "access"}, {"port": "Ethernet2", "mode": "trunk"}]
    assert tenants["beta"]["ports"] == [{"port": "Ethernet2", "mode": "trunk"}]
    beta = tenants["beta"]
    assert (beta["vni"], beta["l3vni"], beta["gateway"]) == (10102, 50102, "10.102.0.1/24")


def test_the_fabric_core_imports_no_platform():
    """Imports point one way: registry -> renderers -> core; the core never imports a renderer."""
    import ast

    from tests.support.fabric import ROOT

    for name in ("_fabric.py", "_render_nvue.py", "_render_sonic.py", "_render_eos.py", "_render_frr.py"):
        with open(os.path.join(ROOT, "plugins", "module_utils", name)) as fh:
            tree = ast.parse(fh.read())
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        forbidden = ("_render_", "_fabric_platforms") if name == "_fabric.py" else ("_fabric_platforms",)
        assert not {i for i in imported if any(f in i for f in forbidden)}, name
