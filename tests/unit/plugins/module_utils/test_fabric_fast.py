# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The direct text writers (``render_text``) say exactly what the item-based reference says.

The renderers write text directly for speed (bench/bench_fabric.py); the reference is the
item form every delta is computed on: NVUE ``to_yaml(tree(items))`` / ``nv_set(items)``,
SONiC ``json.dumps(to_config_db(items))``, EOS ``to_text(items)``, FRR its blocks.
"""

from __future__ import annotations

import copy
import json

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils import _fabric, _render_frr
from ansible_collections.gpucloud.baremetal.plugins.module_utils import _fabric_platforms as platforms
from ansible_collections.gpucloud.baremetal.plugins.module_utils import _render_eos as eos
from ansible_collections.gpucloud.baremetal.plugins.module_utils import _render_nvue as nvue
from ansible_collections.gpucloud.baremetal.plugins.module_utils import _render_sonic as sonic
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet
from tests.support.fabric import example_model
from tests.support.fleetgen import generate

OPTS = _fabric.options_with_defaults(None)


def reference(switch: dict, tenants: list[dict], underlay: dict) -> dict[str, str]:
    platform = switch["platform"]
    if platform == "nvue":
        head = "# gpucloud.baremetal: tenant networks of %s (NVUE); generated, do not edit\n" % switch["name"]
        items = nvue.all_items(switch, tenants, underlay, OPTS)
        return {
            "nvue.yaml": head + ("- set:\n" + nvue.to_yaml(nvue.tree(items), 2) if items else "[]\n"),
            "nvue.nv": head + "".join(line + "\n" for line in nvue.nv_set(items)),
        }
    if platform == "sonic":
        return {"sonic.json": json.dumps(sonic.render(switch, tenants, underlay, OPTS), indent=2) + "\n"}
    head = "! gpucloud.baremetal: tenant networks of %s (EOS); generated, do not edit\n" % switch["name"]
    if switch.get("role") != "leaf":
        head += "! %s is a %s: spines carry no tenant networks\n" % (switch["name"], switch.get("role"))
    return {"eos.cfg": head + "".join(line + "\n" for line in eos.render(switch, tenants, underlay, OPTS))}


def frr_reference(switch: dict, tenants: list[dict]) -> str:
    head = "! gpucloud.baremetal: tenant routing of %s (FRR, %s); generated, do not edit\n!\n" % (
        switch["name"],
        switch["platform"],
    )
    if not tenants:
        return head
    lines = [line for t in tenants for line in _render_frr._vrf_block(switch, t)]
    lines += ["router bgp %d" % switch["asn"], " bgp router-id %s" % switch["loopback"], " !"]
    lines += [" address-family l2vpn evpn", "  advertise-all-vni"]
    lines += [line for t in tenants for line in _render_frr._vni_block(t, OPTS)]
    lines += [" exit-address-family", "exit", "!"]
    lines += [line for t in tenants for line in _render_frr._bgp_vrf_block(switch, t, OPTS)]
    return head + "\n".join(lines) + "\n"


def _switches():
    example = example_model()
    generated = load_fleet(generate(nodes=120, tenants=40, switches=8))
    for model in (example, generated):
        for s in model["fabric"]["switches"]:
            for platform in _fabric.PLATFORMS:
                yield "%s-%s" % (s["name"], platform), dict(s, platform=platform), model["fabric"]["underlay"]


SWITCHES = list(_switches())


@pytest.mark.parametrize(("name", "switch", "underlay"), SWITCHES, ids=[s[0] for s in SWITCHES])
def test_direct_text_is_the_reference(name, switch, underlay):
    tenants = _fabric.desired(switch)
    r = platforms.renderer(switch["platform"])
    assert r.render_text(switch, tenants, underlay, OPTS) == reference(switch, tenants, underlay)
    assert _render_frr.render(switch, tenants, underlay, OPTS) == frr_reference(switch, tenants)


def _odd(switch: dict) -> list[list[dict]]:
    """Tenant lists the direct writers leave to the reference (trees that merge), unvalidated."""
    tenants = copy.deepcopy(_fabric.desired(switch))
    shared = tenants[1]["ports"]
    return [
        # a port in two different lists (not one shared list)
        [dict(tenants[0], ports=[*tenants[0]["ports"], shared[0]]), *tenants[1:]],
        # a port named like an SVI, and like the EOS VXLAN interface
        [dict(tenants[0], ports=[{"port": "vlan102", "mode": "trunk"}, {"port": "Vxlan1", "mode": "access"}]),
         *tenants[1:]],
        # a VLAN twice, tenants out of order
        [*tenants[1:], dict(tenants[0], vlan=tenants[1]["vlan"], name="zz")],
        # the same port twice in one list
        [dict(tenants[0], ports=[shared[0], shared[0]]), *tenants[1:]],
    ]  # fmt: skip


@pytest.mark.parametrize("platform", _fabric.PLATFORMS)
def test_odd_tenant_lists_fall_back_to_the_reference(platform):
    model = example_model()
    switch = dict(next(s for s in model["fabric"]["switches"] if s["name"] == "leaf-r1a"), platform=platform)
    for tenants in _odd(switch):
        got = platforms.renderer(platform).render_text(switch, tenants, model["fabric"]["underlay"], OPTS)
        assert got == reference(switch, tenants, model["fabric"]["underlay"])


def test_shared_trunk_ports_are_one_list():
    model = load_fleet(generate(nodes=60, tenants=20, switches=5))
    leaf = model["fabric"]["switches"][0]
    trunk = [t for t in _fabric.desired(leaf) if t["ports"] and t["ports"][0]["mode"] == "trunk"]
    assert len(trunk) > 1 and len({id(t["ports"]) for t in trunk}) == 1
    # also from separate but equal lists (hostvars that went through JSON)
    copied = dict(leaf, tenants=copy.deepcopy(leaf["tenants"]))
    trunk = [t for t in _fabric.desired(copied) if t["ports"] and t["ports"][0]["mode"] == "trunk"]
    assert len({id(t["ports"]) for t in trunk}) == 1
