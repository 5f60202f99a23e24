# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small valid fleet, built in Python so that each test can break exactly one thing."""

import copy


def node(i, tenant=None, switch="leaf1", port=None, gpus=8):
    n = {
        "name": "gpu%02d" % i,
        "mac": "52:54:00:00:00:%02x" % i,
        "ip": "192.0.2.%d" % (20 + i),
        "bmc": {"address": "192.0.2.%d" % (120 + i), "username": "admin", "password": "secret"},
        "os": "ubuntu",
        "gpu": {"model": "H100", "count": gpus},
        "switch_ports": [{"switch": switch, "port": port or "swp%d" % i}],
    }
    if tenant:
        n["tenant"] = tenant
    return n


def tenant(name, vlan, isolation="shared", quota=4, limit=8, subnet=None, wg=None):
    t = {
        "name": name,
        "isolation": isolation,
        "vlan": vlan,
        "vni": 10000 + vlan,
        "vrf": {"name": name, "l3vni": 50000 + vlan},
        "subnet": subnet or "10.%d.0.0/24" % vlan,
        "gpu": {"quota": quota, "limit": limit, "over_quota_weight": 1},
    }
    if isolation == "private":
        t["wireguard"] = wg or {"subnet": "10.%d.0.0/24" % (vlan + 100), "port": 51820}
    return t


BASE = {
    "plugin": "gpucloud.baremetal.fleet",
    "site": {
        "name": "lab",
        "domain": "gpu.example.net",
        "management": {
            "subnet": "192.0.2.0/24",
            "gateway": "192.0.2.1",
            "dhcp_range": ["192.0.2.200", "192.0.2.250"],
            "pxe_server": "192.0.2.10",
        },
        "os_profiles": {"ubuntu": {"family": "ubuntu", "version": "24.04"}},
    },
    "fabric": {
        "switches": [
            {"name": "leaf1", "platform": "nvue", "mgmt_ip": "198.51.100.11", "asn": 65101,
             "loopback": "203.0.113.11", "role": "leaf"},
            {"name": "leaf2", "platform": "sonic", "mgmt_ip": "198.51.100.12", "asn": 65102,
             "loopback": "203.0.113.12", "role": "leaf"},
            {"name": "spine1", "platform": "eos", "mgmt_ip": "198.51.100.1", "asn": 65000,
             "loopback": "203.0.113.1", "role": "spine"},
        ]
    },
    "nodes": [node(1, tenant="acme"), node(2), node(3, switch="leaf2", port="Ethernet0")],
    "tenants": [tenant("acme", 101, isolation="private", quota=8, limit=8), tenant("beta", 102, quota=8, limit=16)],
}


def fleet():
    return copy.deepcopy(BASE)
