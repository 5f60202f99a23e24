# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``tenants`` section on its own (``tenants`` and its parts): a private and a shared tenant as written, with
their gateway, queue amounts, vCluster NodePort and WireGuard hub; the longest tenant name and the derived names
it must fit; every wrong field refused with its path and what is allowed; duplicates across a thousand tenants
named with the first that had them; the derived names (``derive_tenant``, ``group_name``)."""

from __future__ import annotations

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.checker import Checker
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.schema import TENANT_NAME_MAX
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.tenants import (
    derive_tenant,
    group_name,
    tenant_gpu,
    tenant_name,
    tenant_resource,
    tenants,
    vcluster,
    wireguard,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.units import (
    CPU_WHAT,
    MEMORY_WHAT,
    cpu_cores,
    memory_bytes,
)
from tests.support.fleet_data import tenant
from tests.support.fleetgen import generate


def load(raw) -> tuple[list[dict], list[str], Checker]:
    c = Checker()
    return tenants(c, raw), c.problems, c


def public(entry: dict) -> dict:
    return {k: public(v) if isinstance(v, dict) else v for k, v in entry.items() if not k.startswith("_")}


def acme_and_beta() -> list[dict]:
    return [tenant("acme", 101, isolation="private", quota=8, limit=8), tenant("beta", 102, quota=8, limit=16)]


# --- tenants as written -------------------------------------------------------------------------------------------


def test_a_private_and_a_shared_tenant_as_written() -> None:
    out, problems, c = load(acme_and_beta())
    assert problems == []
    unlimited = {"quota": -1, "limit": -1, "over_quota_weight": 1}
    assert [public(t) for t in out] == [
        {"name": "acme", "isolation": "private", "vlan": 101, "vni": 10101, "vrf": "acme", "l3vni": 50101,
         "subnet": "10.101.0.0/24", "gateway": "10.101.0.1", "gateway_cidr": "10.101.0.1/24",
         "gpu": {"quota": 8, "limit": 8, "over_quota_weight": 1}, "cpu": unlimited, "memory": unlimited,
         "vcluster": {"node_port": 30101},
         "wireguard": {"subnet": "10.201.0.0/24", "hub_ip": "10.201.0.1", "port": 51820}},
        {"name": "beta", "isolation": "shared", "vlan": 102, "vni": 10102, "vrf": "beta", "l3vni": 50102,
         "subnet": "10.102.0.0/24", "gateway": "10.102.0.1", "gateway_cidr": "10.102.0.1/24",
         "gpu": {"quota": 8, "limit": 16, "over_quota_weight": 1}, "cpu": unlimited, "memory": unlimited,
         "vcluster": {"node_port": 30102}, "wireguard": {}},
    ]
    assert [path for _first, _last, path in c.subnets] == [
        "tenants[0].subnet", "tenants[0].wireguard.subnet", "tenants[1].subnet"]


def test_a_tenants_cpu_and_memory_take_its_gpu_weight_unless_given() -> None:
    raw = dict(tenant("beta", 102), cpu={"quota": 0.5, "limit": 64}, memory={"quota": "256Gi", "over_quota_weight": 5})
    raw["gpu"]["over_quota_weight"] = 3
    (out,), problems, _c = load([raw])
    assert problems == []
    assert out["cpu"] == {"quota": 0.5, "limit": 64, "over_quota_weight": 3}
    assert out["memory"] == {"quota": "256Gi", "limit": -1, "over_quota_weight": 5}


# --- names --------------------------------------------------------------------------------------------------------


def test_the_longest_tenant_name_is_taken_and_all_its_derived_names_fit() -> None:
    name = "a" * TENANT_NAME_MAX
    c = Checker()
    assert tenant_name(c, name, "tenants[0].name") == name
    assert c.problems == []
    (entry,), problems, _c = load([dict(tenant("x", 101, isolation="private"), name=name)])
    assert problems == []
    derive_tenant(entry, [])
    assert len(entry["namespace"]) <= 63 and len(entry["queue"]) <= 63 and len(entry["vcluster_secret"]) <= 63
    assert len(entry["vcluster_release"]) <= 53  # Helm's limit
    assert len(entry["wireguard"]["interface"]) <= 15  # Linux's IFNAMSIZ


def test_a_name_one_longer_is_refused_listing_the_derived_names() -> None:
    name = "a" * (TENANT_NAME_MAX + 1)
    c = Checker()
    assert tenant_name(c, name, "tenants[3].name") is None
    assert c.problems == [
        "tenants[3].name: %r is %d characters; at most %d are allowed so that the derived names (namespace tenant-%s, "
        "vcluster_release %s, vcluster_secret vc-%s, queue tenant-%s) fit"
        % (name, TENANT_NAME_MAX + 1, TENANT_NAME_MAX, name, name, name, name)]


@pytest.mark.parametrize(("prefix", "name", "group"), [
    ("tenant_", "acme", "tenant_acme"),
    ("tenant_", "research-lab-1", "tenant_research_lab_1"),
    ("switch_", "leaf1.fra1", "switch_leaf1_fra1"),
])
def test_a_group_name_has_no_dash_or_dot(prefix: str, name: str, group: str) -> None:
    assert group_name(prefix, name) == group


def test_derived_names_nodes_and_wireguard_interface() -> None:
    out, problems, _c = load(acme_and_beta())
    assert problems == []
    acme, beta = out
    derive_tenant(acme, ["gpu01", "gpu04"])
    derive_tenant(beta, [])
    assert {k: acme[k] for k in ("namespace", "vcluster_release", "vcluster_secret", "queue", "group", "prefixlen",
                                 "nodes")} == {
        "namespace": "tenant-acme", "vcluster_release": "acme", "vcluster_secret": "vc-acme", "queue": "tenant-acme",
        "group": "tenant_acme", "prefixlen": 24, "nodes": ["gpu01", "gpu04"]}
    assert acme["wireguard"]["interface"] == "wg-acme"
    assert (beta["group"], beta["nodes"], beta["wireguard"]) == ("tenant_beta", [], {})


# --- each wrong field, with its path and what is allowed ------------------------------------------------------


def _acme(**keys) -> dict:
    raw = tenant("acme", 101, isolation="private", quota=8, limit=8)
    raw.update(keys)
    return raw


@pytest.mark.parametrize(("raw", "expected"), [
    (_acme(vrf={"name": "Default", "l3vni": 50101}),
     ["tenants[0].vrf.name: 'Default' is reserved by the switch OS; pick another name"]),
    (_acme(vrf={"name": "1acme", "l3vni": 50101}),
     ["tenants[0].vrf.name: '1acme' is not a VRF name (a letter, then letters, digits, '_' or '-', 15 characters at "
      "most)"]),
    (_acme(vrf={"name": "acme"}), ["tenants[0].vrf.l3vni: is required"]),
    (_acme(vni=50101), ["tenants[0].vni: L2 VNI 50101 equals the L3 VNI of tenants[0]; L2 and L3 VNIs must differ"]),
    (_acme(vlan=0), ["tenants[0].vlan: 0 is outside 1..4094"]),
    (_acme(gpu={"quota": 8, "limit": -2, "over_quota_weight": 1}),
     ["tenants[0].gpu.limit: -2 is outside 0..1000000 or -1"]),
    (_acme(gpu={"quota": 8, "limit": 8}), ["tenants[0].gpu.over_quota_weight: is required"]),
    (_acme(vcluster={"values": ["sync"]}),
     ["tenants[0].vcluster.values: must be a mapping of vCluster chart values, got a list"]),
    (_acme(vcluster={"version": "0.20"}),
     ["tenants[0].vcluster.version: unknown key; allowed keys here are chart_version, values, node_port"]),
    (_acme(wireguard={"subnet": "10.201.0.1/24", "port": 51820}),
     ["tenants[0].wireguard.subnet: '10.201.0.1/24' has host bits set; did you mean 10.201.0.0/24?"]),
    (_acme(wireguard={"subnet": "10.201.0.0/24"}), ["tenants[0].wireguard.port: is required"]),
    (_acme(wireguard={"subnet": "10.201.0.0/24", "port": 51820, "mtu": 1420}),
     ["tenants[0].wireguard.mtu: unknown key; allowed keys here are subnet, port"]),
    (_acme(isolation="dedicated"), ["tenants[0].isolation: 'dedicated' is not one of shared, private"]),
    (_acme(name="Acme"), ["tenants[0].name: 'Acme' is not a DNS-1123 label starting with a letter (lowercase "
                          "letters, digits and '-')"]),
    (_acme(subnets="10.101.0.0/24"), ["tenants[0].subnets: unknown key; allowed keys here are name, isolation, vlan, "
                                      "vni, vrf, subnet, gpu, cpu, memory, vcluster, wireguard"]),
])
def test_a_wrong_field_is_refused_with_its_path_and_what_is_allowed(raw: dict, expected: list) -> None:
    assert load([raw])[1] == expected


def test_only_a_private_tenant_has_wireguard_and_it_must() -> None:
    raw = _acme()
    raw.pop("wireguard")
    assert load([raw])[1] == ["tenants[0].wireguard: is required for a private tenant ({subnet, port})"]
    shared = dict(tenant("beta", 102), wireguard={"subnet": "10.202.0.0/24", "port": 51820})
    (out,), problems, c = load([shared])
    assert problems == ["tenants[0].wireguard: is only allowed for private tenants (shared tenants have no private "
                        "nodes)"]
    assert out["wireguard"] == {}
    assert [path for _first, _last, path in c.subnets] == ["tenants[0].subnet"]


def test_what_is_not_a_tenant_is_refused_and_the_others_are_kept() -> None:
    out, problems, _c = load(["acme", tenant("beta", 102)])
    assert problems == ["tenants[0]: must be a mapping with keys name, isolation, vlan, vni, vrf, subnet, gpu, cpu, "
                        "memory, vcluster, wireguard, got a string"]
    assert [t["name"] for t in out] == ["beta"]


# --- the parts on their own ---------------------------------------------------------------------------------------


def test_a_gpu_limit_of_minus_one_is_no_limit_and_a_quota_above_a_limit_is_refused() -> None:
    c = Checker()
    assert tenant_gpu(c, {"quota": 500, "limit": -1, "over_quota_weight": 2}, "tenants[0].gpu") == {
        "quota": 500, "limit": -1, "over_quota_weight": 2}
    assert c.problems == []
    tenant_gpu(c, {"quota": 9, "limit": 8, "over_quota_weight": 1}, "tenants[0].gpu")
    assert c.problems == ["tenants[0].gpu.quota: quota 9 is above the limit 8; the limit must be at least the quota "
                          "(or -1 for none)"]


def test_a_resource_left_out_is_unlimited_with_the_given_weight() -> None:
    c = Checker()
    assert tenant_resource(c, None, "tenants[0].cpu", cpu_cores, CPU_WHAT, 4) == {
        "quota": -1, "limit": -1, "over_quota_weight": 4}
    assert tenant_resource(c, {"quota": "1Ti", "limit": -1}, "tenants[0].memory", memory_bytes, MEMORY_WHAT, 1) == {
        "quota": "1Ti", "limit": -1, "over_quota_weight": 1}
    assert c.problems == []


@pytest.mark.parametrize(("raw", "amount", "what", "expected"), [
    ({"quota": "64Gi", "limit": "32Gi"}, memory_bytes, MEMORY_WHAT,
     "tenants[0].r.quota: quota 64Gi is above the limit 32Gi; the limit must be at least the quota (or -1 for none)"),
    ({"quota": "1000Mi", "limit": "1G"}, memory_bytes, MEMORY_WHAT,  # 1048576000 > 10**9 bytes
     "tenants[0].r.quota: quota 1000Mi is above the limit 1G; the limit must be at least the quota (or -1 for none)"),
    ({"quota": 8, "limit": 4}, cpu_cores, CPU_WHAT,
     "tenants[0].r.quota: quota 8 is above the limit 4; the limit must be at least the quota (or -1 for none)"),
    ({"limit": "8 cores"}, cpu_cores, CPU_WHAT, "tenants[0].r.limit: '8 cores' is not " + CPU_WHAT),
    ({"limit": float("inf")}, cpu_cores, CPU_WHAT, "tenants[0].r.limit: inf is not " + CPU_WHAT),
    ({"quota": "1.5TB"}, memory_bytes, MEMORY_WHAT, "tenants[0].r.quota: '1.5TB' is not " + MEMORY_WHAT),
])
def test_a_wrong_amount_names_the_key_and_what_is_allowed(raw: dict, amount, what: str, expected: str) -> None:
    c = Checker()
    tenant_resource(c, raw, "tenants[0].r", amount, what, 1)
    assert c.problems == [expected]


@pytest.mark.parametrize(("vlan", "node_port"), [(None, None), (1, 30001), (2767, 32767)])
def test_the_node_port_is_the_vlans_while_it_fits(vlan, node_port) -> None:
    c = Checker()
    out = vcluster(c, None, "tenants[0].vcluster", vlan)
    assert (out.get("node_port"), c.problems) == (node_port, [])


def test_a_vlan_past_the_node_port_range_needs_a_node_port_and_one_given_wins() -> None:
    c = Checker()
    assert vcluster(c, {"chart_version": "0.20.0"}, "tenants[0].vcluster", 2768) == {"chart_version": "0.20.0"}
    assert c.problems == ["tenants[0].vcluster.node_port: is required: the default NodePort 30000 + VLAN 2768 = 32768 "
                          "is outside 30000..32767"]
    c = Checker()
    values = {"sync": {"toHost": {"ingresses": {"enabled": True}}}}
    assert vcluster(c, {"node_port": 31000, "values": values}, "tenants[0].vcluster", 2768) == {
        "node_port": 31000, "values": values}
    assert c.problems == []


def test_wireguard_of_a_tenant_of_unknown_isolation_is_still_checked() -> None:
    c = Checker()
    out = wireguard(c, {"wireguard": {"subnet": "10.201.0.0/31", "port": 51820}}, {"isolation": None}, "tenants[0]")
    assert out == {"port": 51820}
    assert c.problems == ["tenants[0].wireguard.subnet: '10.201.0.0/31' is too small; the prefix length must be at "
                          "most /30"]


# --- a thousand tenants -------------------------------------------------------------------------------------------


def test_among_a_thousand_tenants_each_duplicate_names_the_first_that_had_it() -> None:
    raw = generate(nodes=10, tenants=1000, switches=4)["tenants"]
    out, problems, _c = load(raw)
    assert problems == []
    assert len(out) == 1000 and len({t["vcluster"]["node_port"] for t in out}) == 1000
    raw[999]["vlan"] = raw[0]["vlan"]
    raw[998]["vni"] = raw[1]["vrf"]["l3vni"]
    raw[997]["vrf"]["name"] = raw[2]["vrf"]["name"]
    assert load(raw)[1] == [
        "tenants[997].vrf.name: VRF name t0002 is already used by tenants[2].vrf.name",
        "tenants[999].vlan: VLAN 100 is already used by tenants[0].vlan",
        "tenants[999].vcluster.node_port: vCluster NodePort 30100 is already used by tenants[0].vcluster.node_port",
        "tenants[998].vni: L2 VNI 500001 equals the L3 VNI of tenants[1]; L2 and L3 VNIs must differ",
    ]


def test_two_private_tenants_on_one_wireguard_port_are_refused() -> None:
    """The gateway has one interface per private tenant: a second on the same port cannot bind."""
    raw = [tenant("acme", 101, isolation="private", quota=8, limit=8,
                  wg={"subnet": "10.201.0.0/24", "port": 51820}),
           tenant("cobalt", 103, isolation="private", quota=8, limit=8,
                  wg={"subnet": "10.203.0.0/24", "port": 51820})]
    assert load(raw)[1] == [
        "tenants[1].wireguard.port: WireGuard port 51820 is already used by tenants[0].wireguard.port"]
    raw[1]["wireguard"]["port"] = 51821
    assert load(raw)[1] == []
