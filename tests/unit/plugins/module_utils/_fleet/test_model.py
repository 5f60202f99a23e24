# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet model: one test per validation rule, and the derived values roles rely on."""

import ast
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import (
    TENANT_NAME_MAX,
    FleetError,
    load_fleet,
    validate_fleet,
    wireguard_tenants,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import model as model_module
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.wireguard import interface_name
from tests.support.fleet_data import fleet, node, tenant


def problems_after(mutate):
    data = fleet()
    mutate(data)
    return validate_fleet(data)


def test_base_fleet_is_valid():
    assert validate_fleet(fleet()) == []


# Each case: (id, mutation, expected problem text). Every rule must produce its own problem,
# naming the path and what is allowed; the base fleet alone has none.
def _set(path, value):
    def mutate(data):
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def _append(key, item):
    return lambda data: data[key].append(item)


def _both(*mutations):
    def mutate(data):
        for m in mutations:
            m(data)

    return mutate


CASES = [
    # structure
    ("unknown-top-key", _set(["sitee"], {}), "sitee: unknown key; allowed keys here are plugin, site, fabric, nodes, tenants"),
    ("missing-tenants", lambda d: d.pop("tenants"), "tenants: is required"),
    ("wrong-plugin", _set(["plugin"], "other.fleet"), "plugin: must be gpucloud.baremetal.fleet"),
    ("tenant-typo-key", _set(["tenants", 1, "isolaton"], "shared"), "tenants[1].isolaton: unknown key"),
    ("nodes-not-list", _set(["nodes"], {"a": 1}), "nodes: must be a list, got a mapping"),
    # where the nodes' host keys are kept
    ("relative-known-hosts", _set(["site", "ssh_known_hosts"], "known_hosts"),
     "site.ssh_known_hosts: 'known_hosts' is not a file on the controller: an absolute path or ~/PATH"),
    ("known-hosts-with-space", _set(["site", "ssh_known_hosts"], "/etc/ssh/my hosts"),
     "site.ssh_known_hosts: '/etc/ssh/my hosts' is not a file on the controller"),
    ("known-hosts-a-folder", _set(["site", "ssh_known_hosts"], "~/.ssh/"), "site.ssh_known_hosts: '~/.ssh/' is not"),
    # MACs
    ("malformed-mac", _set(["nodes", 1, "mac"], "52:54:00:00:00"), "nodes[1].mac: '52:54:00:00:00' is not a MAC address"),
    ("multicast-mac", _set(["nodes", 1, "mac"], "01:00:5e:00:00:01"), "nodes[1].mac: 01:00:5e:00:00:01 is a multicast MAC"),
    ("duplicate-mac", _set(["nodes", 1, "mac"], "52-54-00-00-00-01"),
     "nodes[1].mac: MAC 52:54:00:00:00:01 is already used by nodes[0].mac"),
    # names, IPs
    ("duplicate-node-name", _set(["nodes", 1, "name"], "gpu01"), "nodes[1].name: node name gpu01 is already used by nodes[0].name"),
    ("duplicate-node-ip", _set(["nodes", 1, "ip"], "192.0.2.21"), "nodes[1].ip: IP 192.0.2.21 is already used by nodes[0].ip"),
    ("node-ip-is-gateway", _set(["nodes", 1, "ip"], "192.0.2.1"), "nodes[1].ip: IP 192.0.2.1 is already used by site.management.gateway"),
    ("node-ip-outside-mgmt", _set(["nodes", 1, "ip"], "198.51.100.77"),
     "nodes[1].ip: 198.51.100.77 is outside the management subnet 192.0.2.0/24"),
    ("node-ip-in-dhcp-range", _set(["nodes", 1, "ip"], "192.0.2.210"),
     "nodes[1].ip: 192.0.2.210 is inside the DHCP range 192.0.2.200-192.0.2.250"),
    ("node-ip-broadcast", _set(["nodes", 1, "ip"], "192.0.2.255"), "is the network or broadcast address of 192.0.2.0/24"),
    ("bad-ip", _set(["nodes", 1, "ip"], "192.0.2.300"), "nodes[1].ip: '192.0.2.300' is not a valid IPv4 address"),
    ("dhcp-range-reversed", _set(["site", "management", "dhcp_range"], ["192.0.2.250", "192.0.2.200"]),
     "site.management.dhcp_range: first address 192.0.2.250 is after last 192.0.2.200"),
    ("dhcp-range-outside", _set(["site", "management", "dhcp_range"], ["192.0.2.200", "192.0.3.10"]),
     "site.management.dhcp_range[1]: 192.0.3.10 is outside the management subnet"),
    ("gateway-outside", _set(["site", "management", "gateway"], "198.51.100.1"),
     "site.management.gateway: 198.51.100.1 is outside the management subnet"),
    ("pxe-in-dhcp", _set(["site", "management", "pxe_server"], "192.0.2.220"),
     "site.management.pxe_server: 192.0.2.220 is inside the DHCP range"),
    ("subnet-host-bits", _set(["site", "management", "subnet"], "192.0.2.1/24"), "has host bits set; did you mean 192.0.2.0/24?"),
    # the standard library's strict parsing: no leading zeros, no loose prefix lengths
    ("ip-leading-zero", _set(["nodes", 1, "ip"], "192.0.2.021"), "nodes[1].ip: '192.0.2.021' is not a valid IPv4 address"),
    ("subnet-loose-prefix", _set(["tenants", 1, "subnet"], "10.102.0.0/+24"),
     "tenants[1].subnet: '10.102.0.0/+24' is not a valid IPv4 subnet"),
    ("subnet-not-cidr", _set(["tenants", 1, "subnet"], "10.102.0.0"),
     "tenants[1].subnet: must be an IPv4 subnet in CIDR form (a.b.c.d/len), got '10.102.0.0'"),
    ("subnet-too-small", _set(["tenants", 1, "subnet"], "10.102.0.0/31"),
     "tenants[1].subnet: '10.102.0.0/31' is too small; the prefix length must be at most /30"),
    # switches
    ("duplicate-switch-name", _set(["fabric", "switches", 1, "name"], "leaf1"), "fabric.switches[1].name: switch name leaf1 is already used"),
    ("duplicate-loopback", _set(["fabric", "switches", 1, "loopback"], "203.0.113.11"),
     "fabric.switches[1].loopback: loopback 203.0.113.11 is already used by fabric.switches[0].loopback"),
    ("duplicate-switch-mgmt", _set(["fabric", "switches", 1, "mgmt_ip"], "198.51.100.11"),
     "fabric.switches[1].mgmt_ip: management address 198.51.100.11 is already used"),
    ("bad-platform", _set(["fabric", "switches", 0, "platform"], "junos"), "fabric.switches[0].platform: 'junos' is not one of nvue, sonic, eos"),
    ("bad-asn", _set(["fabric", "switches", 0, "asn"], 0), "fabric.switches[0].asn: 0 is outside 1..4294967295"),
    ("bad-role", _set(["fabric", "switches", 0, "role"], "border"), "fabric.switches[0].role: 'border' is not one of leaf, spine"),
    # references
    ("unknown-switch", _set(["nodes", 1, "switch_ports"], [{"switch": "leaf9", "port": "swp2"}]),
     "nodes[1].switch_ports[0].switch: unknown switch 'leaf9'; known switches: leaf1, leaf2, spine1"),
    ("node-on-spine", _set(["nodes", 1, "switch_ports"], [{"switch": "spine1", "port": "Ethernet1"}]),
     "nodes[1].switch_ports[0].switch: 'spine1' is a spine"),
    ("unknown-os", _set(["nodes", 1, "os"], "windows"), "nodes[1].os: unknown OS profile 'windows'; known profiles: ubuntu"),
    ("unknown-tenant", _set(["nodes", 1, "tenant"], "nobody"), "nodes[1].tenant: unknown tenant 'nobody'; known tenants: acme, beta"),
    ("bad-os-family", _set(["site", "os_profiles", "ubuntu", "family"], "gentoo"),
     "site.os_profiles.ubuntu.family: 'gentoo' is not one of ubuntu, rocky, rhel"),
    ("port-used-twice", _set(["nodes", 1, "switch_ports"], [{"switch": "leaf1", "port": "swp1"}]),
     "nodes[1].switch_ports[0]: switch port leaf1 swp1 is already used by nodes[0].switch_ports[0]"),
    ("private-node-of-shared-tenant", _set(["nodes", 1, "tenant"], "beta"),
     "nodes[1].tenant: tenant 'beta' is shared; only private tenants have dedicated nodes"),
    # tenants
    ("vlan-out-of-range", _set(["tenants", 1, "vlan"], 4095), "tenants[1].vlan: 4095 is outside 1..4094"),
    ("vlan-not-int", _set(["tenants", 1, "vlan"], "102"), "tenants[1].vlan: must be an integer 1..4094, got a string"),
    ("vlan-bool", _set(["tenants", 1, "vlan"], True), "tenants[1].vlan: must be an integer 1..4094, got a boolean"),
    ("duplicate-vlan", _set(["tenants", 1, "vlan"], 101), "tenants[1].vlan: VLAN 101 is already used by tenants[0].vlan"),
    ("duplicate-vni", _set(["tenants", 1, "vni"], 10101), "tenants[1].vni: L2 VNI 10101 is already used by tenants[0].vni"),
    ("duplicate-l3vni", _set(["tenants", 1, "vrf", "l3vni"], 50101), "tenants[1].vrf.l3vni: L3 VNI 50101 is already used"),
    ("vni-out-of-range", _set(["tenants", 1, "vni"], 16777215), "tenants[1].vni: 16777215 is outside 1..16777214"),
    ("duplicate-vrf", _set(["tenants", 1, "vrf", "name"], "acme"), "tenants[1].vrf.name: VRF name acme is already used by tenants[0].vrf.name"),
    ("reserved-vrf", _set(["tenants", 1, "vrf", "name"], "mgmt"), "tenants[1].vrf.name: 'mgmt' is reserved"),
    ("long-vrf", _set(["tenants", 1, "vrf", "name"], "a" * 16), "is not a VRF name"),
    ("l2-equals-l3", _set(["tenants", 1, "vni"], 50101), "tenants[1].vni: L2 VNI 50101 equals the L3 VNI of tenants[0]"),
    ("tenant-name-not-dns", _set(["tenants", 1, "name"], "Beta_1"), "tenants[1].name: 'Beta_1' is not a DNS-1123 label"),
    ("tenant-name-digit-first", _set(["tenants", 1, "name"], "1beta"), "tenants[1].name: '1beta' is not a DNS-1123 label starting with a letter"),
    ("tenant-name-too-long", _set(["tenants", 1, "name"], "b" * (TENANT_NAME_MAX + 1)),
     "characters; at most %d are allowed so that the derived names" % TENANT_NAME_MAX),
    ("duplicate-tenant", _set(["tenants", 1, "name"], "acme"), "tenants[1].name: tenant name acme is already used"),
    ("bad-isolation", _set(["tenants", 1, "isolation"], "dedicated"), "tenants[1].isolation: 'dedicated' is not one of shared, private"),
    ("quota-above-limit", _set(["tenants", 1, "gpu", "limit"], 4), "tenants[1].gpu.quota: quota 8 is above the limit 4"),
    ("negative-quota", _set(["tenants", 1, "gpu", "quota"], -1), "tenants[1].gpu.quota: -1 is outside 0..1000000"),
    ("private-without-wireguard", lambda d: d["tenants"][0].pop("wireguard"),
     "tenants[0].wireguard: is required for a private tenant"),
    ("shared-with-wireguard", _set(["tenants", 1, "wireguard"], {"subnet": "10.250.0.0/24", "port": 51820}),
     "tenants[1].wireguard: is only allowed for private tenants"),
    ("wireguard-port", _set(["tenants", 0, "wireguard", "port"], 70000), "tenants[0].wireguard.port: 70000 is outside 1..65535"),
    # overlaps
    ("tenant-overlaps-mgmt", _set(["tenants", 1, "subnet"], "192.0.2.128/25"),
     "tenants[1].subnet: 192.0.2.128/25 overlaps site.management.subnet (192.0.2.0/24)"),
    ("tenant-overlaps-tenant", _set(["tenants", 1, "subnet"], "10.101.0.0/16"), "tenants[1].subnet: 10.101.0.0/16 overlaps tenants[0].subnet (10.101.0.0/24)"),
    ("wireguard-overlaps-tenant", _set(["tenants", 0, "wireguard", "subnet"], "10.102.0.0/24"),
     "tenants[1].subnet: 10.102.0.0/24 overlaps tenants[0].wireguard.subnet (10.102.0.0/24); management, tenant and WireGuard subnets must be disjoint"),
    # capacity
    ("private-quota-above-own-gpus", _set(["tenants", 0, "gpu"], {"quota": 9, "limit": 9, "over_quota_weight": 1}),
     "tenants[0].gpu.quota: quota 9 exceeds the 8 GPUs of the own nodes of tenant 'acme'"),
    ("shared-quotas-above-shared-gpus",
     _append("tenants", tenant("gamma", 103, quota=9, limit=9)),
     "tenants: the quotas of the shared tenants (beta, gamma) add up to 17 GPUs, more than the 16 GPUs of the shared nodes"),
    # secrets and misc
    ("bmc-password-missing", lambda d: d["nodes"][1]["bmc"].pop("password"),
     "nodes[1].bmc.password: is required with bmc.username (or leave both out and give every node's account with"
     " os_install_bmc_username/os_install_bmc_password, e.g. from an AWX credential)"),
    ("bmc-password-int", _set(["nodes", 1, "bmc", "password"], 1234),
     "nodes[1].bmc.password: must be a non-empty string or a vault-encrypted value"),
    ("gpu-count", _set(["nodes", 1, "gpu", "count"], 65), "nodes[1].gpu.count: 65 is outside 0..64"),
    ("wireguard-ip-on-shared-node", _set(["nodes", 1, "wireguard_ip"], "10.201.0.5"),
     "nodes[1].wireguard_ip: is only allowed on a private node"),
    ("wireguard-ip-outside", _set(["nodes", 0, "wireguard_ip"], "10.99.0.5"),
     "nodes[0].wireguard_ip: 10.99.0.5 is outside the WireGuard subnet of tenant 'acme' 10.201.0.0/24"),
    ("wireguard-ip-is-hub", _set(["nodes", 0, "wireguard_ip"], "10.201.0.1"), "nodes[0].wireguard_ip: 10.201.0.1 is the tenant's WireGuard hub"),
    ("os-version-malformed", _set(["fabric", "switches", 0, "os_version"], "cumulus-5"),
     "fabric.switches[0].os_version: 'cumulus-5' is not a nvue release; give 5.N or 5.N.M (Cumulus Linux)"),
    ("os-version-too-old", _set(["fabric", "switches", 0, "os_version"], "5.3"),
     "fabric.switches[0].os_version: nvue 5.3 is older than the oldest release the fabric supports (5.4)"),
    ("os-version-float", _set(["fabric", "switches", 0, "os_version"], 5.10),
     "fabric.switches[0].os_version: 5.1 is a number; quote the release"),
    ("sonic-version-too-old", _set(["fabric", "switches", 1, "os_version"], "202211"),
     "fabric.switches[1].os_version: sonic 202211 is older than the oldest release"),
    ("svi-room", _set(["tenants", 1, "subnet"], "10.102.0.0/30"),
     "tenants[1].subnet: 10.102.0.0/30 has room for 1 leaf SVI addresses besides the gateway, but leaf leaf2 is "
     "the 2. leaf (fleet order) carrying tenant 'beta'"),
    ("wireguard-derived-collision",
     _both(_set(["tenants", 0, "wireguard", "subnet"], "10.201.0.0/28"),
           _append("nodes", dict(node(4, tenant="acme"), ip="192.0.2.8"))),
     "nodes[3].wireguard_ip: WireGuard address 10.201.0.8 (derived from host offset 8 of 192.0.2.8 in "
     "10.201.0.0/28) of nodes[3] (gpu04) is already used by nodes[0] (gpu01); set wireguard_ip on one of them"),
    ("duplicate-wireguard-ip",
     _both(_append("nodes", dict(node(4, tenant="acme"), wireguard_ip="10.201.0.21"))),
     "nodes[0].wireguard_ip: WireGuard address 10.201.0.21 (derived from host offset 21 of 192.0.2.21 in "
     "10.201.0.0/24) of nodes[0] (gpu01) is already used by nodes[3] (gpu04)"),
]


@pytest.mark.parametrize("mutate,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule(mutate, expected):
    found = problems_after(mutate)
    assert any(expected in p for p in found), "expected %r among:\n%s" % (expected, "\n".join(found))


def test_every_problem_is_reported_at_once():
    data = fleet()
    data["tenants"][1]["vlan"] = 5000
    data["nodes"][2]["mac"] = "zz"
    data["fabric"]["switches"][0]["asn"] = -5
    with pytest.raises(FleetError) as err:
        load_fleet(data)
    assert len(err.value.problems) == 3
    assert str(err.value).startswith("fleet is invalid (3 problems):")


def test_not_a_mapping():
    assert validate_fleet(["nope"]) == [
        "(top level): a fleet file is a mapping with keys plugin, site, fabric, nodes, tenants, got a list"]


def test_derived_tenant_names():
    model = load_fleet(fleet())
    acme = model["tenants"][0]
    assert acme["namespace"] == "tenant-acme"
    assert acme["queue"] == "tenant-acme"
    assert acme["vcluster_release"] == "acme"
    assert acme["vcluster_secret"] == "vc-acme"
    assert acme["gateway"] == "10.101.0.1"
    assert acme["gateway_cidr"] == "10.101.0.1/24"
    assert acme["nodes"] == ["gpu01"]
    assert acme["wireguard"]["hub_ip"] == "10.201.0.1"
    assert acme["group"] == "tenant_acme"


def test_subnet_in_netmask_form_is_read_as_cidr():
    data = fleet()
    data["site"]["management"]["subnet"] = "192.0.2.0/255.255.255.0"
    data["tenants"][1]["subnet"] = "10.102.0.0/255.255.254.0"
    model = load_fleet(data)
    assert model["site"]["management"]["subnet"] == "192.0.2.0/24"
    assert model["site"]["management"]["netmask"] == "255.255.255.0"
    assert model["site"]["management"]["prefixlen"] == 24
    beta = model["tenants"][1]
    assert (beta["subnet"], beta["gateway_cidr"], beta["prefixlen"]) == ("10.102.0.0/23", "10.102.0.1/23", 23)


def test_wireguard_ip_keeps_management_offset_and_explicit_wins():
    data = fleet()
    data["nodes"].append(dict(node(4, tenant="acme"), wireguard_ip="10.201.0.200"))
    model = load_fleet(data)
    by_name = {n["name"]: n for n in model["nodes"]}
    assert by_name["gpu01"]["wireguard_ip"] == "10.201.0.21"
    assert by_name["gpu04"]["wireguard_ip"] == "10.201.0.200"
    assert "wireguard_ip" not in by_name["gpu02"]


def test_wireguard_ip_folds_offsets_beyond_the_subnet():
    """A /24 WireGuard subnet per tenant on a large management network: offsets fold into 2..254."""
    data = fleet()
    data["site"]["management"] = {"subnet": "100.64.0.0/16", "gateway": "100.64.0.1",
                                  "dhcp_range": ["100.64.255.1", "100.64.255.200"], "pxe_server": "100.64.0.2"}
    data["nodes"] = [dict(node(i, tenant="acme" if i <= 2 else None), ip=ip, bmc={"address": "bmc%d" % i,
                          "username": "a", "password": "p"})
                     for i, ip in ((1, "100.64.1.1"), (2, "100.64.3.233"), (3, "100.64.4.0"))]
    data["tenants"][0]["gpu"]["limit"] = data["tenants"][0]["gpu"]["quota"] = 16
    model = load_fleet(data)
    by_name = {n["name"]: n["wireguard_ip"] for n in model["nodes"] if n["tenant"]}
    # offset 257 -> 2 + 255 % 253 = 4; offset 1001 -> 2 + 999 % 253 = 242
    assert by_name == {"gpu01": "10.201.0.4", "gpu02": "10.201.0.242"}


def test_adding_a_node_never_moves_another():
    data = fleet()
    data["tenants"][0]["wireguard"]["subnet"] = "10.201.0.0/28"
    before = {n["name"]: n["wireguard_ip"] for n in load_fleet(data)["nodes"] if n["tenant"]}
    data["nodes"].insert(0, dict(node(5, tenant="acme"), ip="192.0.2.5"))
    after = {n["name"]: n["wireguard_ip"] for n in load_fleet(data)["nodes"] if n["tenant"]}
    assert after == dict(before, gpu05="10.201.0.5")


def test_generated_fleets_need_no_explicit_wireguard_addresses():
    from tests.support.fleetgen import generate

    model = load_fleet(generate(1000, 1000, 128, private_share=0.5, nodes_per_private=3))
    private = [n for n in model["nodes"] if n["tenant"]]
    assert len(private) == 498 and all(n["wireguard_ip"] for n in private)


def test_switch_os_version_defaults_and_keeps_what_is_given():
    data = fleet()
    data["fabric"]["switches"][1]["os_version"] = "master"
    data["fabric"]["switches"][2]["os_version"] = "4.31.2F"
    switches = {s["name"]: s for s in load_fleet(data)["fabric"]["switches"]}
    assert switches["leaf1"]["os_version"] == "5.12"  # the default: the newest tested NVUE
    assert switches["leaf2"]["os_version"] == "master"
    assert switches["spine1"]["os_version"] == "4.31.2F"


def test_macs_are_normalised():
    data = fleet()
    data["nodes"][1]["mac"] = "52-54-00-AB-CD-EF"
    model = load_fleet(data)
    assert model["nodes"][1]["mac"] == "52:54:00:ab:cd:ef"


def test_switch_tenants_and_ports():
    model = load_fleet(fleet())
    switches = {s["name"]: s for s in model["fabric"]["switches"]}
    leaf1 = switches["leaf1"]["tenants"]
    assert [t["name"] for t in leaf1] == ["acme", "beta"]
    assert leaf1[0]["ports"] == [{"port": "swp1", "node": "gpu01", "mode": "access"}]
    assert leaf1[1]["ports"] == [{"port": "swp2", "node": "gpu02", "mode": "trunk"}]
    assert leaf1[1]["l3vni"] == 50102 and leaf1[1]["vrf"] == "beta" and leaf1[1]["gateway"] == "10.102.0.1/24"
    assert [t["name"] for t in switches["leaf2"]["tenants"]] == ["beta"]
    assert switches["spine1"]["tenants"] == []


def test_unlimited_limit_is_allowed():
    data = fleet()
    data["tenants"][1]["gpu"]["limit"] = -1
    assert validate_fleet(data) == []


def test_model_has_no_private_keys():
    def walk(value, path="model"):
        if isinstance(value, dict):
            for k, v in value.items():
                assert not str(k).startswith("_"), path + "." + k
                walk(v, path + "." + str(k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, "%s[%d]" % (path, i))

    walk(load_fleet(fleet()))


def test_shared_tenants_share_one_trunk_port_list():
    data = fleet()
    data["tenants"].append(tenant("gamma", 103, quota=4, limit=4))
    data["tenants"][1]["gpu"] = {"quota": 4, "limit": 4, "over_quota_weight": 1}
    model = load_fleet(data)
    leaf1 = {s["name"]: s for s in model["fabric"]["switches"]}["leaf1"]
    assert leaf1["trunk_ports"] == [{"port": "swp2", "node": "gpu02", "mode": "trunk"}]
    shared = [t for t in leaf1["tenants"] if t["isolation"] == "shared"]
    assert [t["name"] for t in shared] == ["beta", "gamma"]
    assert all(t["ports"] == leaf1["trunk_ports"] for t in shared)


def test_compact_switch_round_trips():
    from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import compact_switch, expand_switch

    data = fleet()
    data["tenants"].append(tenant("gamma", 103, quota=4, limit=4))
    data["tenants"][1]["gpu"] = {"quota": 4, "limit": 4, "over_quota_weight": 1}
    model = load_fleet(data)
    for switch in model["fabric"]["switches"]:
        compact = compact_switch(switch)
        assert "tenants" not in compact
        assert expand_switch(compact, model["tenants"]) == switch


def _gateway(value):
    def mutate(data):
        data["site"].setdefault("host_cluster", {})["wireguard_gateway"] = value
    return mutate


@pytest.mark.parametrize("value, expected", [
    ({"name": "gpu01", "ip": "192.0.2.5"},
     "site.host_cluster.wireguard_gateway.name: 'gpu01' is already the name of a node"),
    ({"name": "cp", "ip": "192.0.2.300"}, "site.host_cluster.wireguard_gateway.ip"),
    ({"name": "cp"}, "site.host_cluster.wireguard_gateway.ip"),
    ({"name": "cp", "ip": "192.0.2.5", "port": 1}, "site.host_cluster.wireguard_gateway.port"),
    ({"name": "Bad_Name", "ip": "192.0.2.5"}, "site.host_cluster.wireguard_gateway.name"),
])
def test_wireguard_gateway_rules(value, expected):
    found = problems_after(_gateway(value))
    assert any(p.startswith(expected) for p in found), found


def test_wireguard_gateway_view_lists_private_tenants_and_their_nodes():
    data = fleet()
    _gateway({"name": "cp", "ip": "192.0.2.5"})(data)
    model = load_fleet(data)
    assert model["site"]["host_cluster"]["wireguard_gateway"] == {"name": "cp", "ip": "192.0.2.5"}
    tenants = wireguard_tenants(model)
    assert [t["name"] for t in tenants] == ["acme"]  # the shared tenant has no tunnel
    acme = tenants[0]
    assert acme["wireguard"]["interface"] == "wg-acme" and acme["wireguard"]["prefixlen"] == 24
    assert acme["nodes"] == [{"name": "gpu01", "ip": "192.0.2.21", "wireguard_ip": "10.201.0.21"}]


def test_wireguard_interface_names_fit_linux_and_stay_apart():
    assert interface_name("acme") == "wg-acme"
    long_a, long_b = "research-lab-alpha", "research-lab-bravo"
    assert len(interface_name(long_a)) <= 15 and len(interface_name(long_b)) <= 15
    assert interface_name(long_a) != interface_name(long_b)
    assert interface_name(long_a) == interface_name(long_a)  # stable across runs


def test_bmc_account_may_come_from_the_role_instead_of_the_fleet():
    """A fleet whose nodes name only their BMC address (an AWX BMC credential gives every node's account)."""
    data = fleet()
    for n in data["nodes"]:
        n["bmc"] = {"address": n["bmc"]["address"]}
    model = load_fleet(data)
    assert all(set(n["bmc"]) == {"address", "url"} for n in model["nodes"])


def test_the_model_imports_no_view():
    """Views read the model; the model (every file of the package but views/ and the package's
    __init__, which composes the two) never imports a view."""
    package = Path(model_module.__file__).parent
    offenders = []
    for path in sorted(package.glob("*.py")):
        if path.name == "__init__.py":
            continue
        for stmt in ast.walk(ast.parse(path.read_text())):
            if isinstance(stmt, ast.ImportFrom) and (stmt.module or "").split(".")[0] == "views":
                offenders.append("%s: from .%s" % (path.name, stmt.module))
            if isinstance(stmt, ast.ImportFrom) and stmt.module is None and any(a.name == "views" for a in stmt.names):
                offenders.append("%s: from . import views" % path.name)
    assert offenders == []


def test_the_sites_known_hosts_file_has_a_default_and_keeps_what_is_given():
    assert load_fleet(fleet())["site"]["ssh_known_hosts"] == "~/.ansible/gpucloud/known_hosts"
    data = fleet()
    data["site"]["ssh_known_hosts"] = "~/.ssh/gpucloud-fra1"
    assert load_fleet(data)["site"]["ssh_known_hosts"] == "~/.ssh/gpucloud-fra1"
