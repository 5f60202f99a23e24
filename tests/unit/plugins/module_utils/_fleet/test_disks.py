# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Root device hints checked on their own (``disks.root_device``): what a hint may hold, what is kept of a
mapping with bad hints, and the problems, each naming the hint and what is allowed."""

from __future__ import annotations

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.checker import Checker
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.disks import root_device

PATH = "site.os_profiles.ubuntu.root_device"
KEYS = "serial, wwn, model, size_gb, by_path, min_size_gb"


def check(raw) -> tuple[dict, list[str]]:
    c = Checker()
    return root_device(c, raw, PATH), c.problems


def test_every_hint_is_kept_as_given() -> None:
    hints = {"serial": "S5GXNG0R123456", "wwn": "0x5000c500a1b2c3d4", "model": "SAMSUNG MZ1L2960HCJR-00A07",
             "by_path": "/dev/disk/by-path/pci-0000:c1:00.0-nvme-1", "size_gb": 894, "min_size_gb": 400}
    assert check(hints) == (hints, [])


@pytest.mark.parametrize("hints", [
    {"serial": "BTYF1234+A:b-c_d.e"},
    {"wwn": "eui.0025388b91b3c0d4"},
    {"model": "Micron_7450_MTFDKCB960TFR"},
    {"by_path": "/dev/disk/by-path/pci-0000:00:1f.2-ata-1"},
    {"min_size_gb": 1},
    {"size_gb": 1048576},
    {"size_gb": 480, "min_size_gb": 480},
])
def test_single_hints_and_the_bounds_are_accepted(hints: dict) -> None:
    assert check(hints) == (hints, [])


def test_a_non_mapping_is_refused_listing_the_hints() -> None:
    assert check("nvme0n1") == ({}, [PATH + ": must be a mapping with keys %s, got a string" % KEYS])


def test_an_empty_mapping_is_refused_pointing_at_the_default_rule() -> None:
    out, problems = check({})
    assert out == {}
    assert problems == [PATH + ": is empty; give one of %s, or leave root_device out for the default rule "
                               "(the smallest non-removable disk of at least min_size_gb GiB)" % KEYS]


def test_an_unknown_hint_is_refused_and_the_known_ones_kept() -> None:
    out, problems = check({"hctl": "0:0:0:0", "serial": "S1"})
    assert out == {"serial": "S1"}
    assert problems == [PATH + ".hctl: unknown key; allowed keys here are " + KEYS]


@pytest.mark.parametrize(("hints", "problem"), [
    ({"serial": "A1'; reboot #"}, ".serial: \"A1'; reboot #\" is not a disk serial number (letters, digits, . _"),
    ({"serial": "-S1"}, ".serial: '-S1' is not a disk serial number"),
    ({"serial": "S" * 65}, ".serial: '%s' is not a disk serial number" % ("S" * 65)),
    ({"serial": 12345}, ".serial: must be a non-empty string, got an integer"),
    ({"wwn": "0x5"}, ".wwn: '0x5' is not a WWN as udev shows it (e.g. 0x5000c500a1b2c3d4)"),
    ({"model": "$(reboot)"}, ".model: '$(reboot)' is not a disk model as /sys/block/<disk>/device/model shows it"),
    ({"by_path": "/dev/sda"}, ".by_path: '/dev/sda' is not a /dev/disk/by-path/... name"),
    # a trailing newline ($ matches before it) would end the install script's comment line early: sh fails
    ({"serial": "S1\n"}, ".serial: 'S1\\n' is not a disk serial number"),
    ({"by_path": "/dev/disk/by-path/../sda"}, ".by_path: '/dev/disk/by-path/../sda' is not a /dev/disk/by-path/"),
    ({"size_gb": 0}, ".size_gb: 0 is outside 1..1048576"),
    ({"size_gb": 1048577}, ".size_gb: 1048577 is outside 1..1048576"),
    ({"size_gb": "480"}, ".size_gb: must be an integer 1..1048576, got a string"),
    ({"min_size_gb": True}, ".min_size_gb: must be an integer 1..1048576, got a boolean"),
    ({"min_size_gb": 0.5}, ".min_size_gb: must be an integer 1..1048576, got float"),
])
def test_a_bad_hint_is_dropped_and_refused_naming_it(hints: dict, problem: str) -> None:
    out, problems = check(hints)
    assert out == {}
    assert len(problems) == 1 and problems[0].startswith(PATH + problem), problems


def test_a_bad_hint_leaves_the_good_ones() -> None:
    out, problems = check({"serial": "S1", "model": "a;b", "size_gb": -1, "min_size_gb": 32})
    assert out == {"serial": "S1", "min_size_gb": 32}
    assert [p.split(":")[0] for p in problems] == [PATH + ".model", PATH + ".size_gb"]


def test_a_size_below_the_minimum_matches_no_disk() -> None:
    out, problems = check({"size_gb": 100, "min_size_gb": 200})
    assert out == {"size_gb": 100, "min_size_gb": 200}
    assert problems == [PATH + ".size_gb: 100 is below min_size_gb 200: no disk could match"]
