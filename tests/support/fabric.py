# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared by the fabric tests: the example fleet's model, its leaves as each platform, the
options of a ``switch_tenants`` run, and file names per switch."""

from __future__ import annotations

import copy
import functools
import os

import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import registry
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE_FLEET = os.path.join(ROOT, "inventories", "example", "fleet.yml")
GOLDEN = os.path.join(ROOT, "tests", "support", "golden", "fabric")
# A tenant of ours that is not in the fleet: VLAN 199, trunk on swp3 (which the leaf's shared tenants share).
STALE = {"name": "stale", "vlan": 199, "vni": 10199, "vrf": "stale", "l3vni": 50199,
         "gateway": "10.199.0.1/24", "subnet": "10.199.0.0/24", "ports": [{"port": "swp3", "mode": "trunk"}]}  # fmt: skip


class _Loader(yaml.SafeLoader):
    pass


# The example's BMC passwords are vault-encrypted; the fabric does not need them.
_Loader.add_constructor("!vault", lambda loader, node: "vaulted")


@functools.cache
def _example() -> dict:
    with open(EXAMPLE_FLEET, encoding="utf-8") as fh:
        return load_fleet(yaml.load(fh, Loader=_Loader))


def example_model() -> dict:
    """The example fleet's model (parsed once; each call a copy of its own)."""
    return copy.deepcopy(_example())


def underlay() -> dict:
    return example_model()["fabric"]["underlay"]


def switches() -> dict[str, dict]:
    """The example's switches by name (a copy of their own)."""
    return {s["name"]: s for s in example_model()["fabric"]["switches"]}


def leaves() -> dict[str, dict]:
    """A leaf per platform: the example has no EOS leaf, so leaf-r1a is also rendered as EOS."""
    sw = switches()
    return {"nvue": sw["leaf-r1a"], "sonic": sw["leaf-r2a"], "eos": dict(sw["leaf-r1a"], platform="eos")}


def params(switch: dict | None, state: str, running: object = None, **extra: object) -> dict:
    """The options of a ``switch_tenants`` run (``plan.run``), the module's defaults but these."""
    p = {"switch": switch, "underlay": underlay(), "platform": None, "state": state, "running_config": running,
         "kept_dir": None, "tenants": None, "fleet_tenants": None, "route_target_asn": 64512,
         "l3vni_vlan_offset": 2000, "render_after": False}  # fmt: skip
    p.update(extra)
    return p


def native(switch: dict, tenants: list[dict]) -> str:
    """The switch's native config holding ``tenants`` (what gathering it would return)."""
    files = registry.render_files(dict(switch, tenants=tenants), underlay())
    return files[registry.files(switch["platform"])["native"]]


def file_name(switch: str, ext: str) -> str:
    """``leaf1.nvue.yaml``; FRR files are ``leaf1-frr.conf``."""
    return "%s-frr.conf" % switch if ext == "frr.conf" else "%s.%s" % (switch, ext)


@functools.cache
def _generated() -> dict:
    from tests.support.fleetgen import generate

    return load_fleet(generate(nodes=120, tenants=40, switches=8))


def every_switch(platform: str) -> list[tuple[str, dict, dict]]:
    """``(id, switch, underlay)``: every switch of the example fleet and of a generated one,
    rendered as ``platform``."""
    out = []
    for model in (example_model(), copy.deepcopy(_generated())):
        for s in model["fabric"]["switches"]:
            out.append(("%s-%s" % (s["name"], platform), dict(s, platform=platform), model["fabric"]["underlay"]))
    return out


def overlapping(switch: dict) -> list[list[dict]]:
    """Tenant lists a gathered config can give: a port in two lists, a port twice in one list."""
    from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.model import desired

    tenants = copy.deepcopy(desired(switch))
    shared = tenants[1]["ports"]
    return [
        [dict(tenants[0], ports=[*tenants[0]["ports"], shared[0]]), *tenants[1:]],
        [dict(tenants[0], ports=[shared[0], shared[0]]), *tenants[1:]],
    ]
