# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``fabric`` section on its own (``fabric``, ``os_version``, ``version_key``): the lab's switches read as
written, the underlay's defaults, each platform's default release, the platforms a switch may run read from the
fabric's catalog, every wrong field refused with its path and what is allowed, duplicates among hundreds of
switches named with the first that had them, and each platform's release forms and bounds."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.catalog import PLATFORMS
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.checker import Checker
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.fabric import fabric, os_version, version_key
from tests.support import inventory_yaml

LAB = Path(__file__).resolve().parents[5] / "inventories" / "lab" / "fleet.yml"
SWITCH_KEYS = "name, platform, mgmt_ip, asn, loopback, role, os_version"


def load(raw) -> tuple[dict, list[str]]:
    c = Checker()
    return fabric(c, raw), c.problems


def public(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if not k.startswith("_")}


def a_switch(i: int, **keys) -> dict:
    raw = {"name": "leaf%d" % i, "platform": "nvue", "mgmt_ip": "198.51.100.%d" % (10 + i), "asn": 65100 + i,
           "loopback": "203.0.113.%d" % (10 + i), "role": "leaf"}
    raw.update(keys)
    return raw


# --- the fabric as written ------------------------------------------------------------------------------------


def test_the_labs_fabric_is_read_as_written() -> None:
    out, problems = load(inventory_yaml.load(LAB)["fabric"])
    assert problems == []
    assert out["underlay"] == {"anycast_mac": "00:00:5e:00:01:01", "mtu": 9216}
    assert [public(s) for s in out["switches"]] == [
        {"name": "leaf1", "platform": "nvue", "role": "leaf", "asn": 65101, "os_version": "5.12",
         "mgmt_ip": "198.51.100.31", "loopback": "10.255.0.11"},
        {"name": "leaf2", "platform": "sonic", "role": "leaf", "asn": 65102, "os_version": "202605",
         "mgmt_ip": "198.51.100.32", "loopback": "10.255.0.12"},
    ]


def test_each_platform_gets_its_default_release_and_the_underlay_its_defaults() -> None:
    raw = {"switches": [a_switch(1), a_switch(2, platform="sonic"), a_switch(3, platform="eos", role="spine")]}
    out, problems = load(raw)
    assert problems == []
    assert [s["os_version"] for s in out["switches"]] == [PLATFORMS[p]["versions"]["default"]
                                                          for p in ("nvue", "sonic", "eos")]
    assert out["underlay"] == {"anycast_mac": "00:00:5e:00:01:01", "mtu": 9216}


def test_an_underlay_key_with_nothing_gets_the_defaults() -> None:
    out, problems = load({"switches": [], "underlay": None})
    assert (out["underlay"], problems) == ({"anycast_mac": "00:00:5e:00:01:01", "mtu": 9216}, [])


def test_the_underlay_is_kept_as_given_with_its_mac_normalised() -> None:
    out, problems = load({"switches": [], "underlay": {"anycast_mac": "44-38-39-FF-00-01", "mtu": 1500}})
    assert (out["underlay"], problems) == ({"anycast_mac": "44:38:39:ff:00:01", "mtu": 1500}, [])


# --- each wrong field, with its path and what is allowed ------------------------------------------------------


@pytest.mark.parametrize(("raw", "expected"), [
    ({"switches": [], "underlay": {"mtu": 9217}}, ["fabric.underlay.mtu: 9217 is outside 1280..9216"]),
    # a list or text where the mapping goes is a mistake (an indent lost), not the defaults
    ({"switches": [], "underlay": []},
     ["fabric.underlay: must be a mapping with keys anycast_mac, mtu, got a list"]),
    ({"switches": [], "underlay": ""},
     ["fabric.underlay: must be a mapping with keys anycast_mac, mtu, got a string"]),
    ({"switches": [], "underlay": {"mtu": 1279}}, ["fabric.underlay.mtu: 1279 is outside 1280..9216"]),
    ({"switches": [], "underlay": {"anycast_mac": "00:00:5e:00:01"}},
     ["fabric.underlay.anycast_mac: '00:00:5e:00:01' is not a MAC address (aa:bb:cc:dd:ee:ff)"]),
    ({"switches": [], "underlay": {"asn": 65000}},
     ["fabric.underlay.asn: unknown key; allowed keys here are anycast_mac, mtu"]),
    ({"switches": [], "underlay": "jumbo"},
     ["fabric.underlay: must be a mapping with keys anycast_mac, mtu, got a string"]),
    ({}, ["fabric.switches: is required"]),
    ({"switches": {"leaf1": {}}}, ["fabric.switches: must be a list, got a mapping"]),
    ({"switches": ["leaf1"]}, ["fabric.switches[0]: must be a mapping with keys %s, got a string" % SWITCH_KEYS]),
    ({"switches": [a_switch(1, platform="frr")]},  # in the catalog, but the routing suite, not a switch OS
     ["fabric.switches[0].platform: 'frr' is not one of nvue, sonic, eos"]),
    ({"switches": [a_switch(1, platform="Cumulus")]},
     ["fabric.switches[0].platform: 'Cumulus' is not one of nvue, sonic, eos"]),
    ({"switches": [a_switch(1, role="border")]}, ["fabric.switches[0].role: 'border' is not one of leaf, spine"]),
    ({"switches": [a_switch(1, asn=4294967296)]}, ["fabric.switches[0].asn: 4294967296 is outside 1..4294967295"]),
    ({"switches": [a_switch(1, asn="65101")]},
     ["fabric.switches[0].asn: must be an integer 1..4294967295, got a string"]),
    ({"switches": [a_switch(1, name="leaf 1")]}, ["fabric.switches[0].name: 'leaf 1' is not a host name"]),
    ({"switches": [a_switch(1, mgmt_ip="198.51.100.300")]},
     ["fabric.switches[0].mgmt_ip: '198.51.100.300' is not a valid IPv4 address"]),
    ({"switches": [a_switch(1, loopback="10.255.0.11/32")]},
     ["fabric.switches[0].loopback: '10.255.0.11/32' is not a valid IPv4 address"]),
    ({"switches": [a_switch(1, vendor="nvidia")]},
     ["fabric.switches[0].vendor: unknown key; allowed keys here are " + SWITCH_KEYS]),
    ({"switches": [{"name": "leaf1", "platform": "nvue"}]},
     ["fabric.switches[0].%s: is required" % k for k in ("mgmt_ip", "asn", "loopback", "role")]),
])
def test_a_wrong_field_is_refused_with_its_path_and_what_is_allowed(raw: dict, expected: list) -> None:
    assert load(raw)[1] == expected


def test_a_switch_with_an_unknown_platform_gets_no_release() -> None:
    out, problems = load({"switches": [a_switch(1, platform="junos", os_version="23.4")]})
    assert problems == ["fabric.switches[0].platform: 'junos' is not one of nvue, sonic, eos"]
    (switch,) = out["switches"]
    assert switch["platform"] is None and "os_version" not in switch


def test_among_hundreds_of_switches_each_duplicate_names_the_first_that_had_it() -> None:
    def switch(i: int) -> dict:
        return a_switch(i, name="leaf%03d" % i, mgmt_ip=str(ipaddress.ip_address("198.18.0.10") + i),
                        loopback=str(ipaddress.ip_address("198.19.0.10") + i))

    raw = {"switches": [switch(i) for i in range(500)]}
    out, problems = load(raw)
    assert problems == [] and len({s["loopback"] for s in out["switches"]}) == 500
    raw["switches"][499].update(name="leaf000", mgmt_ip="198.18.0.11", loopback="198.19.0.12")
    assert load(raw)[1] == [
        "fabric.switches[499].name: switch name leaf000 is already used by fabric.switches[0].name",
        "fabric.switches[499].mgmt_ip: management address 198.18.0.11 is already used by fabric.switches[1].mgmt_ip",
        "fabric.switches[499].loopback: loopback 198.19.0.12 is already used by fabric.switches[2].loopback",
    ]


# --- releases -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("platform", "text", "key"), [
    ("nvue", "5.12", (5, 12)),
    ("nvue", "5.9.2", (5, 9)),
    ("nvue", "5.12.1b", (5, 12)),
    ("nvue", "4.4", None),        # Cumulus Linux 4 had no NVUE
    ("nvue", "5", None),
    ("nvue", "5.x", None),
    ("sonic", "202605", (202605,)),
    ("sonic", "master", (999999,)),
    ("sonic", "2026.05", None),
    ("sonic", "199912", None),
    ("eos", "4.34.1F", (4, 34)),
    ("eos", "4.31", (4, 31)),
    ("eos", "5.0", None),
])
def test_a_release_has_its_platforms_form(platform: str, text: str, key) -> None:
    assert version_key(platform, text) == key


def check_release(platform: str, value) -> tuple[str | None, list[str]]:
    c = Checker()
    return os_version(c, platform, value, "fabric.switches[0].os_version"), c.problems


@pytest.mark.parametrize(("platform", "value", "kept"), [
    ("nvue", None, "5.12"),
    ("nvue", "5.4", "5.4"),
    ("nvue", "5.14.2", "5.14.2"),
    ("sonic", 202605, "202605"),
    ("sonic", "master", "master"),
    ("eos", "4.28.0F", "4.28.0F"),
])
def test_a_supported_release_is_kept_as_text(platform: str, value, kept: str) -> None:
    assert check_release(platform, value) == (kept, [])


def test_a_release_outside_the_supported_ones_is_refused_naming_the_bounds() -> None:
    spec = PLATFORMS["nvue"]["versions"]
    newest = "%d.%d" % spec["newest"]
    beyond = "%d.%d" % (spec["newest"][0], spec["newest"][1] + 1)
    assert check_release("nvue", beyond) == (None, [
        "fabric.switches[0].os_version: nvue %s is newer than the newest release the fabric renders for (%s: %s); "
        "see docs/fabric.md" % (beyond, newest, spec["newest_why"])])
    assert check_release("eos", "4.27.1F") == (None, [
        "fabric.switches[0].os_version: eos 4.27.1F is older than the oldest release the fabric supports (4.28); see "
        "docs/fabric.md"])


@pytest.mark.parametrize(("platform", "value", "problem"), [
    ("nvue", 5.10, "5.1 is a number; quote the release (e.g. '5.10'): YAML reads 5.10 as 5.1"),
    ("eos", 4.3, "4.3 is a number; quote the release (e.g. '5.10'): YAML reads 5.10 as 5.1"),
    ("nvue", True, "True is not a nvue release; give 5.N or 5.N.M (Cumulus Linux)"),
    ("nvue", "", "'' is not a nvue release; give 5.N or 5.N.M (Cumulus Linux)"),
    ("nvue", ["5.12"], "['5.12'] is not a nvue release; give 5.N or 5.N.M (Cumulus Linux)"),
    ("sonic", "latest", "'latest' is not a sonic release; give a release YYYYMM or master"),
    ("eos", "4.20.1F", "eos 4.20.1F is older than the oldest release the fabric supports (4.28)"),
])
def test_what_is_not_a_release_is_refused_naming_the_form(platform: str, value, problem: str) -> None:
    kept, problems = check_release(platform, value)
    assert kept is None
    assert len(problems) == 1 and problems[0].startswith("fabric.switches[0].os_version: " + problem)
