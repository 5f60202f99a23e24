# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rules across sections (``rules``), each called on its own with the checked sections it reads:
disjoint subnets, GPU quotas within the GPUs behind them, room for the leaves' SVI addresses, a host name
of its own for the WireGuard gateway, one GPU driver mode per cluster."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import validate_fleet
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.checker import Checker, Subnet
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.rules import (
    check_capacity,
    check_gateway_name,
    check_gpu_driver,
    check_overlaps,
    check_svi_room,
)
from tests.support import inventory_yaml


def subnet(text: str) -> Subnet:
    return Subnet.of(ipaddress.IPv4Network(text))


def overlaps(*claims: tuple[str, str]) -> list[str]:
    c = Checker()
    for text, path in claims:
        c.claim_subnet(subnet(text), path)
    check_overlaps(c)
    return c.problems


def gpu_node(i: int, count: int | None = 8, tenant: str | None = None, driver: str = "operator",
             ports: tuple[str, ...] = ("leaf1",)) -> dict:
    """A node as the node section leaves it for the rules."""
    return {"_path": "nodes[%d]" % i, "name": "gpu%02d" % i, "tenant": tenant,
            "isolation": "private" if tenant else "shared",
            "gpu": {"count": count, "driver": driver} if count is not None else {},
            "switch_ports": [{"switch": s, "port": "swp%d" % i} for s in ports]}


def a_tenant(i: int, name: str, isolation: str = "shared", quota: int | None = 4, net: str = "10.0.0.0/24") -> dict:
    """A tenant as the tenant section leaves it for the rules."""
    return {"_path": "tenants[%d]" % i, "name": name, "isolation": isolation,
            "gpu": {"quota": quota} if quota is not None else {}, "_net": subnet(net)}


# --- disjoint subnets -------------------------------------------------------------------------------------------


def test_disjoint_and_adjacent_subnets_pass() -> None:
    assert overlaps(("10.0.1.0/24", "tenants[1].subnet"), ("10.0.0.0/24", "tenants[0].subnet"),
                    ("192.0.2.0/24", "site.management.subnet"), ("10.0.2.0/23", "tenants[2].subnet")) == []


def test_an_overlap_is_reported_on_the_later_subnet_naming_both() -> None:
    assert overlaps(("192.0.2.0/24", "site.management.subnet"), ("192.0.2.128/25", "tenants[1].subnet")) == [
        "tenants[1].subnet: 192.0.2.128/25 overlaps site.management.subnet (192.0.2.0/24); management, tenant "
        "and WireGuard subnets must be disjoint"]


def test_a_wide_subnet_is_remembered_past_the_small_ones_inside_it() -> None:
    problems = overlaps(("10.0.0.0/16", "tenants[0].subnet"), ("10.0.1.0/24", "tenants[1].subnet"),
                        ("10.0.2.0/24", "tenants[2].subnet"), ("10.1.0.0/24", "tenants[3].subnet"))
    assert [p.split(" (")[0] for p in problems] == [
        "tenants[1].subnet: 10.0.1.0/24 overlaps tenants[0].subnet",
        "tenants[2].subnet: 10.0.2.0/24 overlaps tenants[0].subnet",
    ]


def test_the_same_subnet_twice_is_an_overlap() -> None:
    problems = overlaps(("10.9.0.0/24", "tenants[0].wireguard.subnet"), ("10.9.0.0/24", "tenants[1].subnet"))
    assert problems == ["tenants[1].subnet: 10.9.0.0/24 overlaps tenants[0].wireguard.subnet (10.9.0.0/24); "
                        "management, tenant and WireGuard subnets must be disjoint"]


# --- GPU capacity -----------------------------------------------------------------------------------------------


def test_quotas_within_the_gpus_behind_them_pass() -> None:
    c = Checker()
    nodes = [gpu_node(0, 8, "acme"), gpu_node(1, 8), gpu_node(2, 4), gpu_node(3, None)]
    tenants = [a_tenant(0, "acme", "private", 8), a_tenant(1, "beta", quota=6), a_tenant(2, "gamma", quota=6),
               a_tenant(3, "delta", quota=None)]
    check_capacity(c, nodes, tenants)
    assert c.problems == []


def test_a_private_quota_above_the_tenants_own_gpus_is_refused() -> None:
    c = Checker()
    nodes = [gpu_node(0, 8, "acme"), gpu_node(1, 4, "acme"), gpu_node(2, 64)]
    check_capacity(c, nodes, [a_tenant(0, "acme", "private", 13), a_tenant(1, "cobalt", "private", 1)])
    assert c.problems == [
        "tenants[0].gpu.quota: quota 13 exceeds the 12 GPUs of the own nodes of tenant 'acme'",
        "tenants[1].gpu.quota: quota 1 exceeds the 0 GPUs of the own nodes of tenant 'cobalt'",
    ]


def test_shared_quotas_add_up_against_the_shared_nodes_only() -> None:
    c = Checker()
    nodes = [gpu_node(0, 8, "acme"), gpu_node(1, 8), gpu_node(2, 0)]
    check_capacity(c, nodes, [a_tenant(0, "acme", "private", 8), a_tenant(1, "beta", quota=5),
                              a_tenant(2, "gamma", quota=4)])
    assert c.problems == [
        "tenants: the quotas of the shared tenants (beta, gamma) add up to 9 GPUs, more than the 8 GPUs of the "
        "shared nodes (nodes without a tenant)"]


# --- SVI room ---------------------------------------------------------------------------------------------------

SWITCHES = [{"name": "leaf1", "role": "leaf"}, {"name": "spine1", "role": "spine"}, {"name": "leaf2", "role": "leaf"},
            {"name": "leaf3", "role": "leaf"}]


def svi_problems(nodes: list[dict], tenants: list[dict]) -> list[str]:
    c = Checker()
    check_svi_room(c, SWITCHES, nodes, tenants)
    return c.problems


def test_a_30_has_room_for_the_gateway_and_one_leaf() -> None:
    assert svi_problems([gpu_node(0, ports=("leaf1", "spine1"))], [a_tenant(0, "beta", net="10.0.0.0/30")]) == []


def test_a_subnet_too_small_for_the_leaves_that_carry_it_is_refused() -> None:
    problems = svi_problems([gpu_node(0), gpu_node(1, ports=("leaf2",))], [a_tenant(1, "beta", net="10.0.0.0/30")])
    assert problems == [
        "tenants[1].subnet: 10.0.0.0/30 has room for 1 leaf SVI addresses besides the gateway, but leaf leaf2 is the "
        "2. leaf (fleet order) carrying tenant 'beta'; each leaf takes one address from the top of the subnet: use "
        "a larger subnet"]


def test_the_highest_leaf_counts_and_a_29_holds_five() -> None:
    nodes = [gpu_node(0, ports=("leaf3",))]
    assert svi_problems(nodes, [a_tenant(0, "beta", net="10.0.0.0/29")]) == []
    (problem,) = svi_problems(nodes, [a_tenant(0, "beta", net="10.0.0.0/30")])
    assert problem.startswith("tenants[0].subnet: 10.0.0.0/30 has room for 1 leaf SVI addresses besides the gateway, "
                              "but leaf leaf3 is the 3. leaf")


def test_a_private_tenant_counts_its_own_nodes_leaves_only() -> None:
    nodes = [gpu_node(0, tenant="acme"), gpu_node(1, ports=("leaf3",)), gpu_node(2, tenant="cobalt", ports=("leaf2",))]
    problems = svi_problems(nodes, [a_tenant(0, "acme", "private", net="10.1.0.0/30"),
                                    a_tenant(1, "cobalt", "private", net="10.2.0.0/30"),
                                    a_tenant(2, "beta", net="10.3.0.0/30")])
    assert [p.split(":")[0] for p in problems] == ["tenants[1].subnet", "tenants[2].subnet"]
    assert "leaf leaf2 is the 2. leaf" in problems[0] and "leaf leaf3 is the 3. leaf" in problems[1]


def test_tenants_without_a_checked_subnet_or_name_are_left_to_their_own_problems() -> None:
    nodes = [gpu_node(0, ports=("leaf3",))]
    assert svi_problems(nodes, [dict(a_tenant(0, "beta"), _net=None), dict(a_tenant(1, "x"), name=None)]) == []


# --- the gateway's host name ------------------------------------------------------------------------------------


def gateway_problems(name: str | None, pxe_server_name: str | None = None) -> list[str]:
    site = {"name": "fra1", "host_cluster": {"wireguard_gateway": {"name": name, "ip": "192.0.2.5"}},
            "management": {"pxe_server_name": pxe_server_name} if pxe_server_name else {}}
    c = Checker()
    check_gateway_name(c, site, [gpu_node(0)], [{"name": "leaf1"}])
    return c.problems


def test_a_gateway_named_like_another_host_is_refused() -> None:
    prefix = "site.host_cluster.wireguard_gateway.name: "
    assert gateway_problems("gpu00") == [
        prefix + "'gpu00' is already the name of a node; the gateway needs a host name of its own"]
    assert gateway_problems("leaf1") == [
        prefix + "'leaf1' is already the name of a switch; the gateway needs a host name of its own"]
    assert gateway_problems("boot", pxe_server_name="boot") == [
        prefix + "'boot' is already the name of a PXE server (site.management.pxe_server_name, default <site>-pxe); "
                 "the gateway needs a host name of its own"]


def test_a_gateway_named_like_the_default_boot_server_is_refused() -> None:
    """Without pxe_server_name the boot server is <site>-pxe (filled in after this check): one inventory host for
    both would give the gateway's address to the boot server."""
    assert gateway_problems("fra1-pxe") == [
        "site.host_cluster.wireguard_gateway.name: 'fra1-pxe' is already the name of a PXE server "
        "(site.management.pxe_server_name, default <site>-pxe); the gateway needs a host name of its own"]
    assert gateway_problems("fra1-pxe", pxe_server_name="boot") == []


def test_a_gateway_of_its_own_name_or_none_passes() -> None:
    assert gateway_problems("cp", pxe_server_name="boot") == []
    assert gateway_problems(None) == []
    c = Checker()
    check_gateway_name(c, {"management": {}}, [gpu_node(0)], [])
    assert c.problems == []


# --- GPU driver mode --------------------------------------------------------------------------------------------


def test_one_driver_mode_per_cluster_is_refused_where_mixed() -> None:
    c = Checker()
    nodes = [gpu_node(0, driver="host"), gpu_node(1, driver="operator"), gpu_node(2, driver="host"),
             gpu_node(3, tenant="acme", driver="operator"), gpu_node(4, tenant="acme", driver="host")]
    check_gpu_driver(c, nodes)
    assert c.problems == [
        "nodes[1].gpu.driver: 'operator' differs from 'host' of gpu00: the GPU Operator of the host cluster "
        "(shared nodes) runs one driver mode",
        "nodes[4].gpu.driver: 'host' differs from 'operator' of gpu03: the GPU Operator of tenant 'acme''s cluster "
        "runs one driver mode",
    ]


def test_clusters_may_differ_and_nodes_without_gpus_do_not_count() -> None:
    c = Checker()
    nodes = [gpu_node(0, driver="host"), gpu_node(1, count=0, driver="operator"), gpu_node(2, count=None),
             gpu_node(3, tenant="acme", driver="operator"), gpu_node(4, tenant="cobalt", driver="host")]
    check_gpu_driver(c, nodes)
    assert c.problems == []


# --- one address, one machine --------------------------------------------------------------------------------------


def lab_fleet() -> dict:
    return inventory_yaml.load(Path(__file__).resolve().parents[5] / "inventories" / "lab" / "fleet.yml")


@pytest.mark.parametrize(("where", "value", "problem"), [
    (("nodes", 1, "ip"), "198.51.100.31",
     "fabric.switches[0].mgmt_ip: 198.51.100.31 is already the address of node gpu2 (nodes[1].ip)"),
    (("nodes", 1, "ip"), "198.51.100.11",
     "nodes[1].ip: 198.51.100.11 is already the address of the WireGuard gateway "
     "(site.host_cluster.wireguard_gateway.ip)"),
    (("fabric", "switches", 0, "mgmt_ip"), "198.51.100.10",
     "fabric.switches[0].mgmt_ip: 198.51.100.10 is already the address of the boot server "
     "(site.management.pxe_server)"),
    (("fabric", "switches", 0, "loopback"), "198.51.100.32",
     "fabric.switches[1].mgmt_ip: 198.51.100.32 is already the address of switch leaf1 (loopback) "
     "(fabric.switches[0].loopback)"),
])
def test_an_address_of_two_kinds_of_machine_is_refused(where: tuple, value: str, problem: str) -> None:
    """A node given a switch's or the gateway's address would have its plays run on that machine."""
    data = lab_fleet()
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    assert validate_fleet(data) == [problem + "; one address, one machine"]


def test_the_clash_names_the_entry_where_it_is_even_after_an_entry_that_is_no_mapping() -> None:
    data = lab_fleet()
    data["nodes"][1]["ip"] = "198.51.100.11"
    data["nodes"].insert(0, "gpu0")
    problems = validate_fleet(data)
    assert problems[0].startswith("nodes[0]: must be a mapping") and problems[1:] == [
        "nodes[2].ip: 198.51.100.11 is already the address of the WireGuard gateway "
        "(site.host_cluster.wireguard_gateway.ip); one address, one machine"]


def test_the_wireguard_gateway_may_run_on_the_boot_server() -> None:
    data = lab_fleet()
    data["site"]["host_cluster"]["wireguard_gateway"]["ip"] = data["site"]["management"]["pxe_server"]
    assert validate_fleet(data) == []


def test_a_duplicate_within_one_kind_is_reported_once() -> None:
    data = lab_fleet()
    data["nodes"][1]["ip"] = "198.51.100.10"
    assert validate_fleet(data) == ["nodes[1].ip: IP 198.51.100.10 is already used by site.management.pxe_server"]
    assert validate_fleet(lab_fleet()) == []
