# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The registry's calls: golden files, round trips and per-tenant line changes of every platform,
and the direction of the fabric's imports.

Regenerate the golden files after a reviewed change:
    GPUCLOUD_UPDATE_GOLDEN=1 pytest tests/unit/plugins/module_utils/_fabric/test_registry.py
then review `git diff tests/support/golden/fabric`.
"""

from __future__ import annotations

import ast
import copy
import difflib
import os

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import registry
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.catalog import PLATFORMS
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.model import desired, options_with_defaults
from tests.support.fabric import GOLDEN, ROOT, file_name, switches, underlay

UPDATE = os.environ.get("GPUCLOUD_UPDATE_GOLDEN") == "1"
UNDERLAY = underlay()
SWITCHES = switches()
# The example has no EOS leaf: leaf-r1a is also rendered as each other platform.
CROSS = [("leaf-r1a", "eos"), ("leaf-r1a", "sonic"), ("leaf-r2a", "nvue")]


def _cases():
    yield from SWITCHES.items()
    for name, platform in CROSS:
        yield "%s-as-%s" % (name, platform), dict(SWITCHES[name], platform=platform)


CASES = dict(_cases())
FILES = [(case, ext) for case, sw in CASES.items() for ext in registry.render_files(sw, UNDERLAY)]


@pytest.mark.parametrize(("case", "ext"), FILES, ids=["%s:%s" % f for f in FILES])
def test_golden(case, ext):
    text = registry.render_files(CASES[case], UNDERLAY)[ext]
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
    files = registry.render_files(switch, UNDERLAY)
    platform = switch["platform"]
    for ext, text in files.items():
        if ext == "frr.conf":
            frr = registry.renderer("frr")
            assert frr.parse(text) == frr.expected(switch, desired(switch))
        else:
            assert ext.startswith(platform)
            assert registry.parse_native(platform, text) == desired(switch)


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
    for ext, before in registry.render_files(base, UNDERLAY).items():
        after = registry.render_files(grown, UNDERLAY)[ext]
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
            own = registry.render_files(alone, UNDERLAY)[ext].splitlines()
            assert [line for line in added if line not in own] == [], ext
        # Structured formats (and all): parsed, the file holds exactly one more tenant.
        platform = "frr" if ext == "frr.conf" else base["platform"]
        if platform != "frr":
            have = registry.parse_native(platform, after)
            assert have == desired(grown)
            assert [t for t in have if t["name"] != "delta"] == desired(base)
        # Removing it again gives back exactly the original file.
        assert registry.render_files(base, UNDERLAY)[ext] == before


@pytest.mark.parametrize("case", ["leaf-r1a", "leaf-r2a", "leaf-r1a-as-eos"])
def test_a_tenant_removed_removes_only_its_lines(case):
    base = CASES[case]
    shrunk = copy.deepcopy(base)
    gone = shrunk["tenants"].pop(0)
    before = registry.render_files(base, UNDERLAY)
    after = registry.render_files(shrunk, UNDERLAY)
    for ext in before:
        b, a = before[ext].splitlines(), after[ext].splitlines()
        sm = difflib.SequenceMatcher(a=b, b=a, autojunk=False)
        assert all(tag == "delete" or tag == "equal" for tag, *unused in sm.get_opcodes()), ext
        removed = [line for tag, i1, i2, unused, unused in sm.get_opcodes() if tag == "delete" for line in b[i1:i2]]
        assert any(str(gone["vlan"]) in line or gone["vrf"] in line for line in removed), ext


@pytest.mark.parametrize("case", ["leaf-r1a", "leaf-r2a", "leaf-r1a-as-eos"])
def test_copied_port_lists_render_the_same(case):
    """Tenants whose ports are equal copies (hostvars that went through JSON, a caller that copies)
    render byte for byte as tenants that share one list: port groups are found by value."""
    base = CASES[case]
    tenants = desired(base)
    copied = [dict(t, ports=[dict(p) for p in t["ports"]]) for t in tenants]
    assert len({id(t["ports"]) for t in copied}) == len(copied)
    opts = options_with_defaults(None)
    assert registry.render_tenants(base, copied, UNDERLAY, opts) == registry.render_tenants(base, tenants, UNDERLAY, opts)


def test_every_platform_of_the_catalog_has_its_module_and_no_other():
    assert set(registry.MODULES) == set(PLATFORMS)
    assert registry.names() == list(PLATFORMS)
    for name, module in registry.MODULES.items():
        for call in ("render_text", "parse") + (("delta", "commands") if PLATFORMS[name]["switch_os"] else ("delta",)):
            assert callable(getattr(module, call, None)), (name, call)
    modules = {f[:-3] for f in os.listdir(os.path.join(_PACKAGE, "platforms")) if f.endswith(".py") and f != "__init__.py"}
    assert modules == set(PLATFORMS)


_PACKAGE = os.path.join(ROOT, "plugins", "module_utils", "_fabric")
# Who may import whom inside the package: the core never imports a platform, a platform never
# imports another, only plan imports the registry, and catalog imports nothing.
_CORE = {"errors", "catalog", "model", "validate", "ownership", "cli"}


def _imports(path: str) -> set[str]:
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = (node.module or "").split(".")[-1]
            out |= {a.name for a in node.names} if node.level and not node.module else {base}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


def test_imports_point_one_way():
    """module -> plan -> registry -> platforms/ -> neutral core -> errors; catalog imports nothing."""
    platforms = set(PLATFORMS)
    for name in sorted(_CORE | {"registry", "plan", "nvue_api"}):
        imported = _imports(os.path.join(_PACKAGE, name + ".py"))
        if name in _CORE:
            assert not imported & (platforms | {"registry", "plan", "platforms"}), name
        if name == "catalog":
            assert imported == {"__future__"}, imported
        if name == "nvue_api":
            assert not imported & (_CORE - {"errors"}), imported
        if name == "registry":
            assert "plan" not in imported
    for platform in platforms:
        imported = _imports(os.path.join(_PACKAGE, "platforms", platform + ".py"))
        assert not imported & (platforms | {"registry", "plan", "platforms"}), platform
