# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A sha256 per platform of everything the fabric writes, to prove a refactoring changed no byte.

- ``render``: every native file of a generated 128 switch x 1,000 tenant fleet, each switch
  rendered as each platform (what ``bench_fabric.py`` times, three times over);
- ``module``: the ``switch_tenants`` result (commands, before/after, changes, diff, files after)
  of every state on the leaves of a 10-switch fleet, against running configs that hold the
  fleet's tenants less some, plus a stale tenant and a drifted port; and ``parsed`` of them.

Run it on the tree before and after a change and compare the lines:
    .venv/bin/python bench/fabric_digest.py
It reads the tree before issue 23 (flat ``_fabric_platforms``, ``run(params)``) as well, so
the same script runs on both sides.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import os
import sys
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), ".collections"))
sys.path.insert(0, os.path.dirname(HERE))  # the repo root: tests.support

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet  # noqa: E402
from ansible_collections.gpucloud.baremetal.plugins.modules import switch_tenants  # noqa: E402
from tests.support.fleetgen import generate  # noqa: E402

try:
    from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.registry import render_files
except ImportError:  # the tree before issue 23
    from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric_platforms import render_files

PLATFORMS = ("nvue", "sonic", "eos")
NATIVE = {"nvue": "nvue.yaml", "sonic": "sonic.json", "eos": "eos.cfg"}
# The result keys of switch_tenants before issue 23 (it added ``files``, the rendered files by file name).
RESULT_KEYS = (
    "changed", "rendered", "parsed", "gathered", "before", "after", "changes", "commands", "incomplete", "diff",
)  # fmt: skip
STALE = {"name": "stale", "vlan": 1999, "vni": 13999, "vrf": "stale", "l3vni": 53999,
         "gateway": "10.250.0.1/24", "subnet": "10.250.0.0/24"}  # fmt: skip


def render_digests() -> dict[str, str]:
    model = load_fleet(generate(nodes=4000, tenants=1000, switches=128))
    underlay = model["fabric"]["underlay"]
    out = {}
    for platform in PLATFORMS:
        h = hashlib.sha256()
        for switch in model["fabric"]["switches"]:
            for ext, text in sorted(render_files(dict(switch, platform=platform), underlay).items()):
                h.update(("%s\0%s\0" % (switch["name"], ext)).encode())
                h.update(text.encode())
        out["render " + platform] = h.hexdigest()
    return out


def module_result(params: dict) -> dict:
    """``switch_tenants.run`` before (``run(params)``) and after (``run(module)``) issue 23."""
    first = next(iter(inspect.signature(switch_tenants.run).parameters))
    arg = SimpleNamespace(params=params, check_mode=False, _diff=True) if first == "module" else params
    return switch_tenants.run(arg)


def params(switch: dict, underlay: dict, state: str, running: object, **extra: object) -> dict:
    p = {"switch": switch, "underlay": underlay, "platform": None, "state": state, "running_config": running,
         "tenants": None, "fleet_tenants": None, "route_target_asn": 64512, "l3vni_vlan_offset": 2000,
         "render_after": True}  # fmt: skip
    p.update(extra)
    return p


def running_configs(switch: dict, underlay: dict) -> dict[str, str]:
    """Native configs to plan on: empty, as rendered, and drifted (some tenants gone, one stale,
    a port moved onto the first tenant)."""
    tenants = copy.deepcopy(switch["tenants"])
    drifted = [t for i, t in enumerate(tenants) if i % 7 != 3]
    drifted[0]["ports"] = [*drifted[0]["ports"], {"port": "Ethernet250", "mode": "access"}]
    stale_ports = [{"port": p["port"], "mode": "trunk"} for p in (switch.get("trunk_ports") or [])[:2]]
    drifted.append(dict(STALE, isolation="shared", ports=stale_ports))
    native = NATIVE[switch["platform"]]
    return {
        "empty": {"nvue": "", "sonic": "{}", "eos": ""}[switch["platform"]],
        "same": render_files(switch, underlay)[native],
        "drifted": render_files(dict(switch, tenants=sorted(drifted, key=lambda t: t["vlan"])), underlay)[native],
    }


def module_digests() -> dict[str, str]:
    model = load_fleet(generate(nodes=300, tenants=120, switches=10))
    underlay = model["fabric"]["underlay"]
    leaves = [s for s in model["fabric"]["switches"] if s["role"] == "leaf"]
    out = {}
    for platform in PLATFORMS:
        h = hashlib.sha256()
        for leaf in leaves:
            switch = dict(leaf, platform=platform)
            some = [t["name"] for t in switch["tenants"][:2]]
            for name, running in running_configs(switch, underlay).items():
                runs = [(state, {}) for state in ("merged", "replaced", "overridden", "deleted", "parsed")]
                runs += [("deleted", {"tenants": some}), ("overridden", {"tenants": some})]
                for state, extra in runs:
                    result = module_result(params(switch, underlay, state, running, **extra))
                    result = {key: result[key] for key in RESULT_KEYS if key in result}
                    h.update(("%s\0%s\0%s\0%s\0" % (switch["name"], name, state, extra)).encode())
                    h.update(json.dumps(result, sort_keys=True).encode())
        out["module " + platform] = h.hexdigest()
    return out


def main() -> int:
    for key, digest in {**render_digests(), **module_digests()}.items():
        print("%-14s %s" % (key, digest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
