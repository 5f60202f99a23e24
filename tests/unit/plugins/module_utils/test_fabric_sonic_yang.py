# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every SONiC render, held against SONiC's own YANG models of the switch's release (yanglint).

Not our own golden files: the schema sonic-buildimage ships (../shared/upstream/sonic-yang/,
release branch 202605 and master), read by Debian's yanglint.
"""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils import _fabric
from ansible_collections.gpucloud.baremetal.plugins.module_utils import _fabric_platforms as platforms
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet
from tests.support.fabric import example_model
from tests.support.fleetgen import generate
from tests.support.sonic_yang import yanglint

MODEL = example_model()
UNDERLAY = MODEL["fabric"]["underlay"]


def sonic_leaves():
    for s in MODEL["fabric"]["switches"]:
        if s["role"] == "leaf":
            yield "example-%s" % s["name"], dict(s, platform="sonic", os_version="202605")
    big = load_fleet(generate(nodes=60, tenants=40, switches=5))
    for s in big["fabric"]["switches"]:
        if s["role"] == "leaf":
            yield "generated-%s" % s["name"], dict(s, platform="sonic", os_version="202605")


CASES = list(sonic_leaves())


@pytest.mark.parametrize("release", ["202605", "master"])
@pytest.mark.parametrize("name,switch", CASES, ids=[c[0] for c in CASES])
def test_sonic_render_is_valid_for_the_release(name, switch, release):
    switch = dict(switch, os_version=release)
    db = json.loads(platforms.render_files(switch, UNDERLAY)["sonic.json"])
    rc, message = yanglint(db, release)
    assert rc == 0, "%s (%s): %s" % (name, release, message)
    assert ("SAG" in db) == (release == "master"), "the anycast gateway form does not follow the release"
    assert db["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == "split"


def test_a_release_switch_refuses_the_master_only_anycast_gateway():
    """The check itself: a render with SAG (master's form) fails against 202605's YANG."""
    _name, switch = CASES[0]
    db = json.loads(platforms.render_files(dict(switch, os_version="master"), UNDERLAY)["sonic.json"])
    rc, message = yanglint(db, "202605")
    assert rc != 0 and ("SAG" in message or "static_anycast_gateway" in message), message


def test_sonic_delta_set_is_valid_for_the_release():
    _name, switch = CASES[0]
    want = _fabric.desired(switch)
    delta = platforms.renderer("sonic").delta(switch, [], want, UNDERLAY, _fabric.options_with_defaults(None))
    rc, message = yanglint(delta["set"], "202605")
    assert rc == 0, message
