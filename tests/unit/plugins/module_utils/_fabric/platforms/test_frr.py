# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""FRR: FRR's own parsers on every FRR config we render (Debian's `frr` package), and ours.

`vtysh --dryrun -f FILE` checks the grammar of every daemon's part (exit code 2 on an error);
`bgpd -C -f FILE` checks the BGP part's meaning and exits 0 whatever it finds, so its output is
read: every "No such command" or error line outside the zebra `vrf ... exit-vrf` blocks fails.
Without the binaries the test fails in CI (CI=true) and is skipped, saying why, elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import registry
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.model import desired
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.platforms import frr
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet
from tests.support.fabric import example_model, switches

VTYSH = shutil.which("vtysh") or "/usr/bin/vtysh"
BGPD = "/usr/lib/frr/bgpd"
HAVE_FRR = os.access(VTYSH, os.X_OK) and os.access(BGPD, os.X_OK)


def _need_frr():
    if HAVE_FRR:
        return
    # A stated skip; in CI every skip fails the run (tests/support/ci.py).
    pytest.skip("FRR's parsers are missing (%s, %s): apt-get install frr (bindep.txt, profile test)" % (VTYSH, BGPD))


def _frr_configs():
    model = example_model()
    u = model["fabric"]["underlay"]
    for s in model["fabric"]["switches"]:
        for platform in ("nvue", "sonic"):
            sw = dict(s, platform=platform)
            yield "example-%s-%s" % (s["name"], platform), registry.render_files(sw, u)["frr.conf"]
    from tests.support.fleetgen import generate

    big = load_fleet(generate(nodes=120, tenants=300, switches=5))
    for s in big["fabric"]["switches"]:
        if s["platform"] in ("nvue", "sonic") and s["role"] == "leaf":
            yield "generated-%s" % s["name"], registry.render_files(s, big["fabric"]["underlay"])["frr.conf"]


CONFIGS = dict(_frr_configs())


def _zebra_lines(text: str) -> set[int]:
    """Line numbers (1-based) inside `vrf NAME ... exit-vrf`: zebra's, unknown to bgpd alone."""
    inside, lines = False, set()
    for n, line in enumerate(text.splitlines(), 1):
        if re.match(r"^vrf \S+$", line):
            inside = True
        if inside:
            lines.add(n)
        if line == "exit-vrf":
            inside = False
    return lines


@contextlib.contextmanager
def readable_file(name: str, text: str):
    """bgpd drops to the frr user: the file and its folder must be world-readable."""
    with tempfile.TemporaryDirectory(prefix="gpucloud-frr-") as folder:
        os.chmod(folder, 0o755)
        path = os.path.join(folder, name + "-frr.conf")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(path, 0o644)
        yield path


def bgpd_errors(path: str, text: str) -> list[str]:
    out = subprocess.run([BGPD, "-C", "-f", path], capture_output=True, text=True, timeout=120, check=False)
    zebra = _zebra_lines(text)
    errors = []
    for line in (out.stdout + out.stderr).splitlines():
        m = re.search(r"on config line (\d+):", line)
        if m and int(m.group(1)) in zebra:
            continue
        if re.search(r"No such command|Unknown command|error|Error|\[EC \d+\]|%", line):
            errors.append(line)
    return errors


def test_there_are_large_configs():
    assert sum(text.count("router bgp") for text in CONFIGS.values()) > 300


@pytest.mark.parametrize("name", list(CONFIGS))
def test_vtysh_dryrun_accepts(name, tmp_path):
    _need_frr()
    path = tmp_path / (name + "-frr.conf")
    path.write_text(CONFIGS[name])
    out = subprocess.run([VTYSH, "--dryrun", "-f", str(path)], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0 and not out.stdout.strip() and "Unknown" not in out.stderr, out.stdout + out.stderr


@pytest.mark.parametrize("name", list(CONFIGS))
def test_bgpd_check_accepts(name):
    _need_frr()
    with readable_file(name, CONFIGS[name]) as path:
        assert bgpd_errors(path, CONFIGS[name]) == []


def test_the_checks_catch_a_bad_config(tmp_path):
    _need_frr()
    text = CONFIGS["example-leaf-r1a-nvue"].replace("  advertise-all-vni", "  advertise-every-vni")
    with readable_file("bad", text) as path:
        out = subprocess.run([VTYSH, "--dryrun", "-f", path], capture_output=True, text=True, timeout=60, check=False)
        assert out.returncode != 0
        assert bgpd_errors(path, text)


def test_our_parser_reads_what_frr_shows():
    """``show running-config`` form (vtysh indents by one space): a zebra VRF's L3 VNI, the EVPN
    instance's L2 VNIs, the BGP VRFs; an indented ``vrf`` line is not a zebra VRF."""
    text = (
        "frr version 8.4.4\n!\nvrf RED\n vni 4001\nexit-vrf\n!\nrouter bgp 65101\n bgp router-id 10.0.0.1\n"
        " !\n address-family l2vpn evpn\n  advertise-all-vni\n  vni 10\n   route-target import 64512:10\n"
        "  exit-vni\n  vni 20\n  exit-vni\n exit-address-family\nexit\n!\nrouter bgp 65101 vrf RED\n"
        " vrf BLUE\n vni 99\nexit\n!\n"
    )
    assert frr.parse(text) == {"vrfs": {"RED": 4001}, "l2vnis": [10, 20], "bgp_vrfs": ["RED"]}
    assert frr.parse(text.splitlines()) == frr.parse(text)


def test_the_delta_removes_what_a_tenant_names_and_adds_the_rendered_lines():
    switch = switches()["leaf-r2a"]
    tenants = desired(switch)
    opts = {"route_target_asn": 64512}
    added = frr.delta(switch, [], tenants, {}, opts)["frr"]
    assert added == frr.render(switch, tenants, {}, opts).splitlines()[2:]
    removed = frr.delta(switch, tenants[:1], [], {}, opts)["frr"]
    t = tenants[0]
    assert removed == [
        "router bgp %d" % switch["asn"], " address-family l2vpn evpn", "  no vni %d" % t["vni"],
        " exit-address-family", "exit", "no router bgp %d vrf Vrf-%s" % (switch["asn"], t["vrf"]),
        "vrf Vrf-%s" % t["vrf"], " no vni %d" % t["l3vni"], "exit-vrf",
    ]  # fmt: skip
    assert frr.delta(switch, tenants, tenants, {}, opts) == {"frr": []}
