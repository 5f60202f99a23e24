# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Generate valid fleets of any size, for benchmarks and scaling tests."""

from __future__ import annotations

import ipaddress


def generate(nodes: int, tenants: int, switches: int, private_share: float = 0.2, nodes_per_private: int = 1) -> dict:
    """A valid fleet written the way people write one: `nodes` 8-GPU nodes on a /16 spread over
    `switches` leaves (plus 2 spines), `tenants` tenants of which `private_share` are private
    with `nodes_per_private` dedicated nodes each (at most half of the nodes are private).
    No node sets `wireguard_ip`: the model derives every one."""
    mgmt = ipaddress.ip_network("100.64.0.0/16")
    hosts = mgmt.network_address
    leaves = max(1, switches - 2)
    fleet: dict = {
        "plugin": "gpucloud.baremetal.fleet",
        "site": {
            "name": "bench",
            "domain": "bench.example.net",
            "management": {
                "subnet": str(mgmt),
                "gateway": str(hosts + 1),
                "dhcp_range": [str(hosts + 65000), str(hosts + 65500)],
                "pxe_server": str(hosts + 2),
            },
            "os_profiles": {"ubuntu": {"family": "ubuntu", "version": "24.04"}},
        },
        "fabric": {"switches": []},
        "nodes": [],
        "tenants": [],
    }
    platforms = ("nvue", "sonic", "eos")
    for i in range(leaves):
        fleet["fabric"]["switches"].append(
            {
                "name": "leaf%03d" % i,
                "platform": platforms[i % 3],
                "mgmt_ip": str(ipaddress.ip_address("198.18.0.10") + i),
                "asn": 65100 + i,
                "loopback": str(ipaddress.ip_address("198.19.0.10") + i),
                "role": "leaf",
            }
        )
    for i in range(min(2, switches)):
        fleet["fabric"]["switches"].append(
            {
                "name": "spine%d" % i,
                "platform": "eos",
                "mgmt_ip": str(ipaddress.ip_address("198.18.255.1") + i),
                "asn": 65000,
                "loopback": str(ipaddress.ip_address("198.19.255.1") + i),
                "role": "spine",
            }
        )
    n_private = int(tenants * private_share)
    n_private = min(n_private, nodes // (2 * nodes_per_private))
    for t in range(tenants):
        private = t < n_private
        tenant = {
            "name": "t%04d" % t,
            "isolation": "private" if private else "shared",
            "vlan": 100 + t,
            "vni": 10000 + t,
            "vrf": {"name": "t%04d" % t, "l3vni": 500000 + t},
            "subnet": "10.%d.%d.0/24" % (t // 256, t % 256),
            "gpu": {"quota": 8 if private else 1, "limit": 8 * nodes_per_private if private else 16,
                    "over_quota_weight": 1},
        }
        if private:
            tenant["wireguard"] = {"subnet": "172.%d.%d.0/24" % (16 + t // 256, t % 256), "port": 51820 + t}
        fleet["tenants"].append(tenant)
    for n in range(nodes):
        leaf = n % leaves
        node = {
            "name": "gpu%05d" % n,
            "mac": "02:00:%02x:%02x:%02x:%02x" % ((n >> 24) & 255, (n >> 16) & 255, (n >> 8) & 255, n & 255),
            "ip": str(hosts + 10 + n),
            "bmc": {"address": "bmc-%05d.bench.example.net" % n, "username": "admin", "password": "x"},
            "os": "ubuntu",
            "gpu": {"model": "H100", "count": 8},
            "switch_ports": [{"switch": "leaf%03d" % leaf, "port": "swp%d" % (n // leaves + 1)}],
        }
        if n < n_private * nodes_per_private:
            node["tenant"] = "t%04d" % (n // nodes_per_private)
        fleet["nodes"].append(node)
    return fleet
