# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The WireGuard tunnel view: each host's tunnels and peers, from the fleet's peer graph."""
from __future__ import annotations

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, wireguard_tunnels
from tests.support.fleet_data import fleet, node, tenant

GATEWAY = {"name": "cp", "ip": "192.0.2.5"}


def two_private_tenants(with_gateway: bool = True) -> dict:
    """acme (gpu01, gpu04) and cobalt (gpu05, own port), beside the shared tenant beta."""
    data = fleet()
    if with_gateway:
        data["site"]["host_cluster"] = {"wireguard_gateway": dict(GATEWAY)}
    data["tenants"][0]["gpu"] = {"quota": 16, "limit": 16, "over_quota_weight": 1}
    data["tenants"].append(tenant("cobalt", 103, isolation="private", quota=8, limit=8,
                                  wg={"subnet": "10.203.0.0/23", "port": 51821}))
    data["nodes"] += [node(4, tenant="acme"), node(5, tenant="cobalt")]
    return data


def tunnels(data: dict) -> dict:
    return wireguard_tunnels(load_fleet(data))


def test_gateway_has_one_tunnel_per_private_tenant_with_its_nodes_as_peers():
    gw = tunnels(two_private_tenants())["cp"]
    assert [(t["tenant"], t["interface"], t["port"], t["address"]) for t in gw] == [
        ("acme", "wg-acme", 51820, "10.201.0.1/24"), ("cobalt", "wg-cobalt", 51821, "10.203.0.1/23")]
    assert gw[0]["peers"] == [
        {"host": "gpu01", "allowed": "10.201.0.21/32", "endpoint": None, "keepalive": False, "mesh": False},
        {"host": "gpu04", "allowed": "10.201.0.24/32", "endpoint": None, "keepalive": False, "mesh": False}]
    assert [p["host"] for p in gw[1]["peers"]] == ["gpu05"]


def test_node_peers_with_its_gateway_and_marks_its_tenants_other_nodes_as_mesh():
    out = tunnels(two_private_tenants())
    (gpu01,) = out["gpu01"]
    assert (gpu01["tenant"], gpu01["interface"], gpu01["port"], gpu01["address"]) == (
        "acme", "wg-acme", 51820, "10.201.0.21/24")
    assert gpu01["peers"] == [
        {"host": "cp", "allowed": "10.201.0.1/32", "endpoint": "192.0.2.5:51820", "keepalive": True, "mesh": False},
        {"host": "gpu04", "allowed": "10.201.0.24/32", "endpoint": "192.0.2.24:51820", "keepalive": False,
         "mesh": True}]
    (gpu05,) = out["gpu05"]  # alone in its tenant: the gateway only, on its tenant's port
    assert gpu05["address"] == "10.203.0.25/23"
    assert gpu05["peers"] == [
        {"host": "cp", "allowed": "10.203.0.1/32", "endpoint": "192.0.2.5:51821", "keepalive": True, "mesh": False}]


def test_shared_nodes_and_switches_have_no_tunnel():
    out = tunnels(two_private_tenants())
    assert sorted(out) == ["cp", "gpu01", "gpu04", "gpu05"]


def test_without_a_gateway_private_nodes_keep_their_mesh_but_have_no_gateway_peer():
    out = tunnels(two_private_tenants(with_gateway=False))
    assert sorted(out) == ["gpu01", "gpu04", "gpu05"]
    assert [(p["host"], p["mesh"]) for p in out["gpu04"][0]["peers"]] == [("gpu01", True)]
    assert out["gpu05"][0]["peers"] == []


def test_an_explicit_wireguard_address_is_the_one_peers_allow():
    data = two_private_tenants()
    data["nodes"][3]["wireguard_ip"] = "10.201.0.200"
    out = tunnels(data)
    assert out["gpu04"][0]["address"] == "10.201.0.200/24"
    assert [p["allowed"] for p in out["cp"][0]["peers"]] == ["10.201.0.21/32", "10.201.0.200/32"]
    assert out["gpu01"][0]["peers"][1]["allowed"] == "10.201.0.200/32"
