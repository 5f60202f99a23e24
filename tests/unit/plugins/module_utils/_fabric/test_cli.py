# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Line-CLI entries (EOS, FRR): a line's writer and reader agree, and blocks read by indentation."""

from __future__ import annotations

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.cli import Line, block, blocks, first, items
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.platforms import eos, frr

SAMPLE = {
    "vlan": 101, "vni": 10101, "l3vni": 50101, "asn": 65101, "vrf": "acme", "marker": "gpucloud:acme",
    "gateway": "10.101.0.1/24", "loopback": "10.255.1.11", "mac": "00:00:5e:00:01:01", "port": "Ethernet1/2",
    "rt": "64512:10101", "rt3": "64512:50101", "vlans": "101-103,110",
}  # fmt: skip
# What a value reads back as, where reading is broader than writing (EOS's list forms).
READ_AS = {("vlan", "vlans"): "101", ("vxlan_vlan", "vlans"): "101", ("vxlan_vlan", "vnis"): "10101"}


def _entries(module):
    return [v for v in vars(module).values() if isinstance(v, Line)]


ENTRIES = [(m.__name__.rsplit(".", 1)[-1], e) for m in (eos, frr) for e in _entries(m)]


@pytest.mark.parametrize(("platform", "entry"), ENTRIES, ids=["%s:%s" % (p, e.name) for p, e in ENTRIES])
def test_what_a_line_writes_it_reads_back(platform, entry):
    line = entry.set(SAMPLE)
    values = entry.get(line)
    assert values is not None, (line, entry.getval.pattern)
    for key, value in values.items():
        assert value == str(READ_AS.get((entry.name, key), SAMPLE.get(key))), (line, key)


def test_eos_reads_its_list_forms_and_our_single_form():
    assert eos.VLAN.get("vlan 10-12,20") == {"vlans": "10-12,20"}
    assert eos.PORT_ALLOWED.get("switchport trunk allowed vlan add 110") == {"vlans": "110"}
    assert eos.SVI_VRF.get("vrf forwarding RED") == {"vrf": "RED"}
    assert eos.PORT_ALLOWED.get("switchport trunk allowed vlan none") is None


def test_a_derived_reader_reads_numbers_and_words_only():
    line = Line("x", "vxlan vrf %(vrf)s vni %(l3vni)d")
    assert line.get("vxlan vrf red vni 4001") == {"vrf": "red", "l3vni": "4001"}
    assert line.get("vxlan vrf red vni 4001 extra") is None
    assert line.get("vxlan vrf red vni four") is None


def test_blocks_and_items_by_indentation():
    text = "router bgp 1\n   vlan 10\n      rd auto\n   !\n   router-id 1.1.1.1\n!\nvlan 10\n   name x\n"
    assert blocks(text) == [
        ("router bgp 1", [("vlan 10", [("rd auto", [])]), ("router-id 1.1.1.1", [])]),
        ("vlan 10", [("name x", [])]),
    ]
    assert items(text) == [
        ("router bgp 1", "vlan 10", "rd auto"), ("router bgp 1", "router-id 1.1.1.1"), ("vlan 10", "name x"),
    ]  # fmt: skip
    assert block(eos.SVI, (eos.SVI_DESCRIPTION,)) == "interface Vlan%(vlan)d\n   description %(marker)s\n!\n"
    assert first("interface Vlan10", eos.READ) == (eos.SVI, {"vlan": "10"})
    assert first("interface Ethernet1", eos.READ) == (eos.PORT, {"port": "Ethernet1"})
    assert first("hostname x", eos.READ) == (None, {})
