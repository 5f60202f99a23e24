# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: fleet
short_description: Inventory of a GPU cloud from one fleet file
version_added: 0.1.0
description:
  - Reads a fleet file (nodes, switches, tenants), validates it completely and yields the
    groups and host variables every role of C(gpucloud.baremetal) needs.
  - Every problem of an invalid fleet is reported at once, each with its path and what is
    allowed. The collection's C(ansible.cfg) makes an unparsable inventory fatal, so a bad
    fleet stops C(ansible-playbook) before any task runs.
  - "Groups: C(pxe_servers), C(gpu_nodes), C(private_nodes), C(shared_nodes), C(switches),
    C(leaf_switches), C(spine_switches), C(switches_<platform>) and C(tenant_<name>) (the
    private nodes of a tenant; C(-) in a tenant name becomes C(_))."
  - "Variables on every host: C(gpucloud_site), C(gpucloud_tenants), C(gpucloud_fabric).
    Nodes get C(gpucloud_node), switches C(gpucloud_switch) (with the tenants, VLANs, VNIs,
    VRFs and ports it carries), the PXE server C(gpucloud_pxe_nodes)."
  - BMC passwords may be vault-encrypted; they stay encrypted in the inventory and are never
    printed by this plugin.
extends_documentation_fragment:
  - constructed
options:
  plugin:
    description: Marks the file as a fleet file for this plugin.
    required: true
    choices: ['gpucloud.baremetal.fleet']
    type: str
notes:
  - The file must be named C(fleet.yml), C(fleet.yaml) or end in C(.fleet.yml) / C(.fleet.yaml).
  - The fleet's own keys (C(site), C(fabric), C(nodes), C(tenants)) are documented in the
    collection's C(docs/fleet.md); C(inventories/example/fleet.yml) is a complete example.
requirements:
  - netaddr (Python library, on the controller)
"""

EXAMPLES = r"""
# inventories/prod/fleet.yml
plugin: gpucloud.baremetal.fleet
site:
  name: fra1
  domain: gpu.example.com
  management:
    subnet: 192.0.2.0/24
    gateway: 192.0.2.1
    dhcp_range: [192.0.2.200, 192.0.2.250]
    pxe_server: 192.0.2.10
  os_profiles:
    ubuntu2404: {family: ubuntu, version: "24.04"}
fabric:
  switches:
    - {name: leaf1, platform: nvue, mgmt_ip: 198.51.100.11, asn: 65101, loopback: 10.255.0.11, role: leaf}
nodes:
  - name: gpu01
    mac: "52:54:00:00:00:01"
    ip: 192.0.2.21
    bmc:
      address: 192.0.2.121
      username: admin
      password: !vault |
        $ANSIBLE_VAULT;1.1;AES256
        6631...
    os: ubuntu2404
    gpu: {model: H100-SXM5-80GB, count: 8}
    switch_ports: [{switch: leaf1, port: swp1}]
tenants:
  - name: beta
    isolation: shared
    vlan: 110
    vni: 10110
    vrf: {name: beta, l3vni: 50110}
    subnet: 10.110.0.0/24
    gpu: {quota: 4, limit: 8, over_quota_weight: 1}

# ansible-inventory -i inventories/prod/fleet.yml --graph
"""

from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin, Constructable

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import (
    CONSTRUCTED_KEYS,
    FleetError,
    compact_switch,
    load_fleet,
)

_SUFFIXES = ("fleet.yml", "fleet.yaml")
_NETWORK_OS = {
    "nvue": "nvidia.nvue.nvue",
    "sonic": "dellemc.enterprise_sonic.sonic",
    "eos": "arista.eos.eos",
}


class InventoryModule(BaseInventoryPlugin, Constructable):
    NAME = "gpucloud.baremetal.fleet"

    def verify_file(self, path: str) -> bool:
        return super().verify_file(path) and path.endswith(_SUFFIXES)

    def parse(self, inventory, loader, path, cache=True):
        super().parse(inventory, loader, path, cache)
        data = self.loader.load_from_file(path, cache="none", unsafe=True)
        if not isinstance(data, dict) or data.get("plugin") != self.NAME:
            raise AnsibleParserError("%s is not a fleet file: it must start with 'plugin: %s'" % (path, self.NAME))
        if any(key in data for key in CONSTRUCTED_KEYS):
            # Compose/keyed_groups expressions must be loaded as trusted templates.
            self._read_config_data(path)
        else:
            self.set_options(direct={"plugin": data["plugin"]}, var_options=self._vars)
        try:
            model = load_fleet(data)
        except FleetError as exc:
            raise AnsibleParserError("%s: %s" % (path, exc)) from None
        self._populate(model, path)

    def _populate(self, model: dict, path: str) -> None:
        inv = self.inventory
        for group in (
            "pxe_servers",
            "gpu_nodes",
            "private_nodes",
            "shared_nodes",
            "switches",
            "leaf_switches",
            "spine_switches",
        ):
            inv.add_group(group)
        inv.set_variable("all", "gpucloud_site", model["site"])
        inv.set_variable("all", "gpucloud_tenants", model["tenants"])
        inv.set_variable("all", "gpucloud_fabric", {"underlay": model["fabric"]["underlay"]})
        inv.set_variable("all", "gpucloud_fleet_file", path)

        mgmt = model["site"]["management"]
        pxe = mgmt["pxe_server_name"]
        inv.add_host(pxe, group="pxe_servers")
        inv.set_variable(pxe, "ansible_host", mgmt["pxe_server"])
        inv.set_variable(
            pxe,
            "gpucloud_pxe_nodes",
            [{"name": n["name"], "mac": n["mac"], "ip": n["ip"], "os": n["os"]} for n in model["nodes"]],
        )

        for tenant in model["tenants"]:
            inv.add_group(tenant["group"])
            inv.set_variable(tenant["group"], "gpucloud_tenant", tenant["name"])

        for switch in model["fabric"]["switches"]:
            name = switch["name"]
            inv.add_host(name, group="switches")
            inv.add_host(name, group="%s_switches" % switch["role"])
            platform_group = "switches_%s" % switch["platform"]
            inv.add_group(platform_group)
            inv.add_host(name, group=platform_group)
            inv.set_variable(name, "ansible_host", switch["mgmt_ip"])
            inv.set_variable(name, "gpucloud_switch", compact_switch(switch))
            inv.set_variable(name, "gpucloud_network_os", _NETWORK_OS[switch["platform"]])
            self._construct(name, {"gpucloud_switch": switch})

        tenants = {t["name"]: t for t in model["tenants"]}
        for node in model["nodes"]:
            name = node["name"]
            inv.add_host(name, group="gpu_nodes")
            inv.add_host(name, group="private_nodes" if node["tenant"] else "shared_nodes")
            if node["tenant"]:
                inv.add_host(name, group=tenants[node["tenant"]]["group"])
            inv.set_variable(name, "ansible_host", node["ip"])
            inv.set_variable(name, "gpucloud_node", node)
            self._construct(name, {"gpucloud_node": node})

    def _construct(self, host: str, variables: dict) -> None:
        if not (self.get_option("compose") or self.get_option("groups") or self.get_option("keyed_groups")):
            return  # nothing to construct: skip copying every host's variables
        strict = self.get_option("strict")
        hostvars = dict(self.inventory.get_host(host).get_vars(), **variables)
        self._set_composite_vars(self.get_option("compose"), hostvars, host, strict=strict)
        self._add_host_to_composed_groups(self.get_option("groups"), hostvars, host, strict=strict)
        self._add_host_to_keyed_groups(self.get_option("keyed_groups"), hostvars, host, strict=strict)
