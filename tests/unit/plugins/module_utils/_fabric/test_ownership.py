# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What is ours on a switch: the marker, what a parser keeps, and half tenants.

A half tenant (ours by its marker, without its L2 VNI, VRF, L3 VNI or gateway) on each platform.

``merged``/``replaced``/``overridden``/``parsed`` refuse it before any change; ``deleted`` of that
tenant (or of all ours) removes the parts it has, on the platform's native text: an NVUE tree
(REST ``GET`` form), a SONiC config_db, an EOS running-config. The native config is the one the
collection writes for the leaf's tenants plus the tenant ``stale`` (VLAN 199, trunk on swp3, which
the leaf's other tenants share), with one part taken away as it would be by hand or by a push
that stopped half-way.
"""

from __future__ import annotations

import copy
import json

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import plan, registry
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.errors import (
    IncompleteTenantError,
    NativeConfigError,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.model import (
    desired,
    normalise,
    options_with_defaults,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.ownership import (
    Found,
    at,
    marker,
    number,
    owner,
    split_partial,
    stand_in,
    without_stand_ins,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.platforms import nvue, sonic
from tests.support.fabric import STALE, leaves, native, params

LEAVES = leaves()

PARTS = ("vni", "vrf", "l3vni", "gateway")
STAND_INS = ("16777215", "16777216", "gpucloud-no-vrf-found", "255.255.255.255")


def _without(platform: str, part: str):
    """The leaf's native config with its tenants and ``stale``, ``stale``'s ``part`` taken away."""
    sw = LEAVES[platform]
    text = native(sw, normalise([*sw["tenants"], STALE]))
    if platform == "nvue":
        tree = nvue.load(text)
        {
            "vni": lambda: tree["bridge"]["domain"]["br_default"]["vlan"]["199"].pop("vni"),
            "vrf": lambda: tree["interface"]["vlan199"]["ip"].pop("vrf"),
            "l3vni": lambda: tree["vrf"]["stale"]["evpn"].pop("vni"),
            "gateway": lambda: tree["interface"]["vlan199"]["ip"]["vrr"].pop("address"),
        }[part]()
        return tree
    if platform == "sonic":
        db = json.loads(text)
        {
            "vni": lambda: db["VXLAN_TUNNEL_MAP"].pop("vtep|map_10199_Vlan199"),
            "vrf": lambda: db["VLAN_INTERFACE"]["Vlan199"].pop("vrf_name"),
            "l3vni": lambda: db["VRF"]["Vrf-stale"].pop("vni"),
            "gateway": lambda: db["VLAN_INTERFACE"].pop("Vlan199|10.199.0.1/24"),
        }[part]()
        return db
    line = {
        "vni": "   vxlan vlan 199 vni 10199\n",
        "vrf": "   description gpucloud:stale\n   vrf stale\n",
        "l3vni": "   vxlan vrf stale vni 50199\n",
        "gateway": "   ip address virtual 10.199.0.1/24\n",
    }[part]
    assert text.count(line) == 1
    return text.replace(line, "   description gpucloud:stale\n" if part == "vrf" else "")


def _unset(tree: dict, path: str) -> None:
    *parents, last = path.split("/")
    node = tree
    for key in parents:
        node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            return
    node.pop(last, None)


CASES = [(p, part) for p in LEAVES for part in PARTS]


@pytest.mark.parametrize(("platform", "part"), CASES, ids=["%s-%s" % c for c in CASES])
def test_other_states_refuse_a_half_tenant_before_any_change(platform, part):
    running = _without(platform, part)
    sw = LEAVES[platform]
    for state in ("merged", "replaced", "overridden", "parsed"):
        with pytest.raises(IncompleteTenantError, match=r"\(gpucloud:stale\): no "):
            plan.run(params(sw, state, copy.deepcopy(running), platform=platform))
    # deleting another tenant while the half one stays is refused too: nothing is planned on it
    other = sw["tenants"][0]["name"]
    with pytest.raises(IncompleteTenantError):
        plan.run(params(sw, "deleted", copy.deepcopy(running), tenants=[other]))


@pytest.mark.parametrize(("platform", "part"), CASES, ids=["%s-%s" % c for c in CASES])
def test_deleted_removes_the_parts_a_half_tenant_has(platform, part):
    """Before (issue 8), ``deleted`` failed like every other state, so a half tenant could only
    be removed by hand. Now its parts go, and nothing of the other tenants."""
    sw = LEAVES[platform]
    running = _without(platform, part)
    result = plan.run(params(sw, "deleted", copy.deepcopy(running), tenants=["stale"]))
    assert result["changed"] is True
    assert result["changes"] == {"added": [], "removed": ["stale"], "modified": []}
    assert result["after"] == desired(sw)
    assert len(result["incomplete"]) == 1 and "(gpucloud:stale): no " in result["incomplete"][0]
    commands = result["commands"]
    flat = json.dumps(commands)
    assert not [s for s in STAND_INS if s in flat], commands  # nothing it lacks is named
    diff = result["diff"]
    assert "gpucloud:stale" in diff["before"] and "gpucloud:stale" not in diff["after"]
    assert not [s for s in STAND_INS if s in diff["before"]]
    if platform == "nvue":
        tree = copy.deepcopy(running)
        for path in commands["unset"]:
            _unset(tree, path)
        assert commands["set"] == {}
        assert nvue.parse(tree) == desired(sw)
        assert "vlan199" not in tree["interface"]
        assert "199" not in tree["bridge"]["domain"]["br_default"]["vlan"]
        assert "199" not in tree["interface"]["swp3"]["bridge"]["domain"]["br_default"]["vlan"]
        assert ("10199" in tree["evpn"]["vni"]) == (part == "vni"), "the L2 VNI's EVPN config, where it is named"
        # without its binding the VRF is not named by anything of ours: left alone
        assert ("stale" in tree["vrf"]) == (part == "vrf")
    elif platform == "sonic":
        db = copy.deepcopy(running)
        assert commands["set"] == {}
        for key in commands["delete"]:
            table, entry = key.split("|", 1)
            assert entry in db[table], "deletes %s, which is not there" % key
            del db[table][entry]
        assert sonic.parse(db) == desired(sw)
        # every entry of the tenant goes, also the L3 VNI VLAN's map when the VRF lost its vni
        # (a VLAN with a tunnel map left on it cannot be deleted: YANG leafref)
        left = [
            "%s|%s" % (table, key)
            for table, entries in db.items()
            for key, fields in entries.items()
            if "199" in key or "stale" in key or "stale" in json.dumps(fields)
        ]
        assert left == [], left
    else:
        lines = commands["commands"]
        whole = [
            "router bgp 65101", "   no vlan 199", "   no vrf stale", "interface Vxlan1",
            "   no vxlan vlan 199 vni 10199", "   no vxlan vrf stale vni 50199", "no interface Vlan199",
            "no ip routing vrf stale", "no vrf instance stale", "no vlan 199",
        ]  # fmt: skip
        gone = {
            "vni": ["   no vxlan vlan 199 vni 10199"],
            "vrf": [
                "   no vrf stale", "   no vxlan vrf stale vni 50199", "no ip routing vrf stale",
                "no vrf instance stale",
            ],
            "l3vni": ["   no vxlan vrf stale vni 50199"],
            "gateway": [],
        }[part]  # fmt: skip
        assert lines[: len(whole) - len(gone)] == [line for line in whole if line not in gone]
        assert "   switchport trunk allowed vlan 102" in lines  # swp3 keeps its other tenants' list
    if platform in ("nvue", "sonic"):
        frr = commands["frr"]
        assert ("  no vni 10199" in frr) == (part != "vni")
        vrf = "Vrf-stale" if platform == "sonic" else "stale"
        # SONiC finds the VRF and L3 VNI through the tenant's L3 VNI VLAN (ours by its marker)
        named = platform == "sonic" or part != "vrf"
        assert ("no router bgp %d vrf %s" % (sw["asn"], vrf) in frr) == named
        assert (" no vni 50199" in frr) == (named and (platform == "sonic" or part != "l3vni"))


@pytest.mark.parametrize("platform", list(LEAVES))
def test_deleted_all_removes_half_and_whole_tenants(platform):
    sw = LEAVES[platform]
    result = plan.run(params(sw, "deleted", _without(platform, "gateway")))
    assert result["after"] == []
    assert result["changes"]["removed"] == sorted([t["name"] for t in sw["tenants"]] + ["stale"])


def test_a_second_value_still_stops_deleted():
    """A tenant with two gateways: which one is ours cannot be told, so nothing is removed."""
    sw = LEAVES["sonic"]
    db = _without("sonic", "vni")
    db["VLAN_INTERFACE"]["Vlan199|10.199.9.1/24"] = {}
    with pytest.raises(IncompleteTenantError) as err:
        plan.run(params(sw, "deleted", db, tenants=["stale"]))
    assert err.value.tenants is None


@pytest.mark.parametrize("platform", list(LEAVES))
def test_the_error_holds_the_tenants_and_names_the_half_ones(platform):
    with pytest.raises(IncompleteTenantError) as err:
        registry.parse_native(platform, _without(platform, "l3vni"))
    assert err.value.half == ["stale"]
    names = [t["name"] for t in err.value.tenants]
    assert names == [t["name"] for t in normalise([*LEAVES[platform]["tenants"], STALE])]


@pytest.mark.parametrize("platform", list(LEAVES))
def test_a_half_tenant_renders_as_the_parts_it_has(platform):
    """The diff's "before": whole tenants as always, the half one's parts after them (and they
    read back as what was gathered)."""
    sw = LEAVES[platform]
    with pytest.raises(IncompleteTenantError) as err:
        registry.parse_native(platform, _without(platform, "vni"))
    underlay = {"anycast_mac": "00:00:5e:00:01:01"}
    files = registry.renderer(platform).render_text(sw, err.value.tenants, underlay, options_with_defaults(None))
    key = {"nvue": "nvue.yaml", "sonic": "sonic.json", "eos": "eos.cfg"}[platform]
    with pytest.raises(IncompleteTenantError) as again:
        registry.parse_native(platform, files[key])
    assert again.value.tenants == err.value.tenants
    if platform == "nvue":
        assert nvue.load(files["nvue.yaml"]) == nvue.from_nv(files["nvue.nv"])


# --- the marker and what a parser keeps ------------------------------------------------


def test_the_marker_names_its_tenant_and_nothing_else_is_ours():
    assert marker("acme") == "gpucloud:acme"
    assert owner("gpucloud:acme") == "acme"
    assert owner("gpucloud:acme:l3vni") == "acme"
    for text in ("acme", "gpucloud:", "gpucloud:Not-A-Label", "GPUCLOUD:acme", None, 42, ""):
        assert owner(text) is None, text


def test_found_keeps_whole_tenants_and_names_what_a_half_one_lacks():
    paths = {"vni": "P-vni", "vrf": "P-vrf", "l3vni": "P-l3vni", "gateway": "P-gw"}
    found = Found()
    whole = found.add("obj a", paths, name="a", vlan=10, vni=10, vrf="A", l3vni=4001, gateway="10.0.0.1/24",
                      ports=[{"port": "swp10", "mode": "trunk"}, {"port": "swp2", "mode": "trunk"}])  # fmt: skip
    assert [p["port"] for p in whole["ports"]] == ["swp2", "swp10"]
    assert found.result() == normalise([whole])
    found.add("obj b", paths, name="b", vlan=20, vni=20, vrf="", l3vni=0, gateway="", ports=[])
    with pytest.raises(IncompleteTenantError) as err:
        found.result()
    # without a VRF, its L3 VNI cannot be looked up: only the VRF is named
    assert err.value.problems == ["obj b (gpucloud:b): no VRF (P-vrf)", "obj b (gpucloud:b): no anycast gateway (P-gw)"]
    assert err.value.half == ["b"] and [t["name"] for t in err.value.tenants] == ["a", "b"]
    found.second_values("obj a", "a", {"gateway": ["g1", "g2"], "vni": ["10"]}, dict(paths, gateway="P-gw"))
    with pytest.raises(IncompleteTenantError) as err:
        found.result()
    assert err.value.problems[-1] == "obj a (gpucloud:a): P-gw has g1, g2; the collection writes one"
    assert err.value.tenants is None


def test_stand_ins_fill_a_half_tenant_and_find_what_holds_one():
    half = {"name": "h", "vlan": 9, "vni": 0, "vrf": "red", "l3vni": 0, "gateway": "10.0.9.1/24", "ports": []}
    filled, missing = stand_in(half)
    assert filled["vni"] and filled["l3vni"] and filled["vrf"] == "red"
    lines = ["vlan 9", "vxlan vlan 9 vni %d" % filled["vni"], "vrf red vni %d" % filled["l3vni"], "vni 16777"]
    assert without_stand_ins(lines, missing) == ["vlan 9", "vni 16777"]
    whole = dict(half, vni=9, l3vni=4009)
    assert stand_in(whole) == (whole, None) and without_stand_ins(lines, None) == lines
    assert split_partial([whole, half]) == ([whole], [half])


def test_reading_a_native_config_names_where_it_is_not_the_platform_s():
    assert at({"a": {"b": {"c": 1}}}, "", "a", "b") == {"c": 1}
    assert at({"a": None}, "", "a", "b") == {}
    with pytest.raises(NativeConfigError) as err:
        at({"a": {"b": [1]}}, "root", "a", "b")
    assert err.value.problems == ["root a b: is [1], not a mapping"]
    assert number("12", "x") == 12
    with pytest.raises(NativeConfigError, match="vlan: 'ten' is not a number"):
        number("ten", "vlan")
