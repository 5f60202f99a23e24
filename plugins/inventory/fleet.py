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
    C(leaf_switches), C(spine_switches), C(switches_<platform>), C(tenant_<name>) (the
    private nodes of a tenant; C(-) in a tenant name becomes C(_)), C(wireguard_gateways) (the
    host of C(site.host_cluster.wireguard_gateway), if set) and C(controller)."
  - "Each host carries only its own data. On every host: C(gpucloud_site), C(gpucloud_fabric)
    (the underlay settings) and C(gpucloud_fleet_file). Nodes get C(gpucloud_node) (the node's
    fleet entry without its BMC) and C(gpucloud_bmc) (its C(bmc): address, account, options; only
    the tasks that drive the BMC read it), switches
    C(gpucloud_switch) (compact: the ports of each tenant they carry), the PXE server
    C(gpucloud_pxe_nodes), the WireGuard gateway C(gpucloud_wireguard_tenants) (the private
    tenants' tunnels and nodes); each C(tenant_<name>) group carries C(gpucloud_tenant) (that
    tenant, with its derived names)."
  - "The WireGuard gateway and every private node carry C(gpucloud_wireguard_tunnels), the
    host's own tunnels worked out from the fleet's peer graph - per tunnel C(tenant),
    C(interface), C(port), C(address) (with prefix length) and C(peers), each with C(host),
    C(allowed) (its /32), C(endpoint) (C(null) where the peer dials in), C(keepalive) (true for a
    node's gateway) and C(mesh) (true for the tenant's other nodes). Public keys are not in
    it; the role C(private_node_join) adds them at run time."
  - "Fleet-wide data is read once, by plays on the controller: the group C(controller) holds
    the host C(localhost) (local connection, the controller's Python) and carries
    C(gpucloud_tenants), the list of all tenants. Plays on other hosts read it as
    C(hostvars['localhost'].gpucloud_tenants). So C(ansible-inventory --list) grows with the
    fleet, not with hosts x tenants."
  - BMC passwords may be vault-encrypted; they stay encrypted in the inventory and are never
    printed by this plugin.
  - "Host keys: the group C(gpu_nodes) carries C(ansible_ssh_common_args)
    (C(-o StrictHostKeyChecking=yes -o UserKnownHostsFile=<site.ssh_known_hosts> -o GlobalKnownHostsFile=/dev/null))
    and C(os_install_known_hosts) (the same file), and C(ansible_ssh_host_key_checking=true): a variable outranks
    C(ANSIBLE_HOST_KEY_CHECKING=False), which ansible-runner (and AWX, through it) exports by default and which
    would put C(-o StrictHostKeyChecking=no) first on the ssh command line, where OpenSSH takes the first value
    of an option. The role M(gpucloud.baremetal.os_install) writes the host keys
    each node posts on phone-home into that file, and every SSH connection to a node is checked against it, so a
    node that answers with another key is not connected to. C(site.ssh_known_hosts) defaults to
    C(~/.ansible/gpucloud/known_hosts) (the controller user's home when the connection is made). They are group
    variables: an inventory's own C(group_vars) override them."
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

import yaml
from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin, Constructable

try:  # ansible-core >= 2.19 templates only trusted strings from inventory plugins
    from ansible.template import trust_as_template
except ImportError:  # older ansible-core templates every inventory string

    def trust_as_template(value):
        return value


from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import (
    CONSTRUCTED_KEYS,
    FleetError,
    compact_switch,
    load_fleet,
    node_ssh_vars,
    node_vars,
    pxe_nodes,
    wireguard_tenants,
    wireguard_tunnels,
)

_SUFFIXES = ("fleet.yml", "fleet.yaml")
_VAULT_HEADER = b"$ANSIBLE_VAULT;"

try:  # ansible-core >= 2.19: a vault scalar is an EncryptedString, decrypted where it is used
    from ansible.parsing.vault import EncryptedString
except ImportError:  # older ansible-core: its own loader (slower) builds its vault objects
    EncryptedString = None


class _FleetYamlLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """YAML as Ansible reads it (``!vault``, ``!unsafe``), without tagging every value with its
    origin: at 5,000 nodes Ansible's own loader took most of the inventory's start-up time.
    A key given twice in one mapping is an error (a silently overwritten fleet key is a bug)."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, str) and key in seen:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found duplicate key %r (first at line %d)" % (key, seen[key].line + 1),
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def _construct_vault(loader, node):
    return EncryptedString(ciphertext=str(loader.construct_scalar(node)))


def _construct_unsafe(loader, node):  # fleet values are never templated anyway
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_mapping(node, deep=True)


_FleetYamlLoader.add_constructor("!vault", _construct_vault)
_FleetYamlLoader.add_constructor("!vault-encrypted", _construct_vault)
_FleetYamlLoader.add_constructor("!unsafe", _construct_unsafe)
CONTROLLER_GROUP = "controller"
CONTROLLER_HOST = "localhost"


class InventoryModule(BaseInventoryPlugin, Constructable):
    NAME = "gpucloud.baremetal.fleet"

    def verify_file(self, path: str) -> bool:
        return super().verify_file(path) and path.endswith(_SUFFIXES)

    def parse(self, inventory, loader, path, cache=True):
        super().parse(inventory, loader, path, cache)
        data = self._load(path)
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

    def _load(self, path: str):
        with open(path, "rb") as fh:
            text = fh.read()
        if EncryptedString is None or text.lstrip().startswith(_VAULT_HEADER):
            # a whole-file vault, or an ansible-core without EncryptedString: Ansible's loader
            return self.loader.load_from_file(path, cache="none", unsafe=True)
        try:
            return yaml.load(text, Loader=_FleetYamlLoader)  # a SafeLoader subclass
        except yaml.YAMLError as exc:
            raise AnsibleParserError("%s is not valid YAML: %s" % (path, exc)) from None

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
            CONTROLLER_GROUP,
        ):
            inv.add_group(group)
        # Small and needed everywhere.
        inv.set_variable("all", "gpucloud_site", model["site"])
        inv.set_variable("all", "gpucloud_fabric", {"underlay": model["fabric"]["underlay"]})
        inv.set_variable("all", "gpucloud_fleet_file", path)

        # Fleet-wide data: once, on the controller (not copied into every host's variables).
        inv.add_host(CONTROLLER_HOST, group=CONTROLLER_GROUP)
        inv.set_variable(CONTROLLER_HOST, "ansible_connection", "local")
        python = trust_as_template("{{ ansible_playbook_python }}")
        inv.set_variable(CONTROLLER_HOST, "ansible_python_interpreter", python)
        inv.set_variable(CONTROLLER_GROUP, "gpucloud_tenants", model["tenants"])

        mgmt = model["site"]["management"]
        pxe = mgmt["pxe_server_name"]
        inv.add_host(pxe, group="pxe_servers")
        inv.set_variable(pxe, "ansible_host", mgmt["pxe_server"])
        inv.set_variable(pxe, "gpucloud_pxe_nodes", pxe_nodes(model))

        for tenant in model["tenants"]:
            inv.add_group(tenant["group"])
            inv.set_variable(tenant["group"], "gpucloud_tenant", tenant)

        for switch in model["fabric"]["switches"]:
            name = switch["name"]
            inv.add_host(name, group="switches")
            inv.add_host(name, group="%s_switches" % switch["role"])
            platform_group = "switches_%s" % switch["platform"]
            inv.add_group(platform_group)
            inv.add_host(name, group=platform_group)
            inv.set_variable(name, "ansible_host", switch["mgmt_ip"])
            inv.set_variable(name, "gpucloud_switch", compact_switch(switch))
            self._construct(name, {"gpucloud_switch": switch})

        inv.add_group("wireguard_gateways")
        tunnels = wireguard_tunnels(model)
        gateway = model["site"].get("host_cluster", {}).get("wireguard_gateway")
        if gateway:
            inv.add_host(gateway["name"], group="wireguard_gateways")
            inv.set_variable(gateway["name"], "ansible_host", gateway["ip"])
            inv.set_variable(gateway["name"], "gpucloud_wireguard_tenants", wireguard_tenants(model))
            inv.set_variable(gateway["name"], "gpucloud_wireguard_tunnels", tunnels.get(gateway["name"], []))

        # Every node's host key is checked against its phone-home record; group variables, so that an
        # inventory's own group_vars (the lab's known_hosts) take precedence.
        for key, value in node_ssh_vars(model["site"]).items():
            inv.set_variable("gpu_nodes", key, value)
        groups = {t["name"]: t["group"] for t in model["tenants"]}
        for node in model["nodes"]:
            name = node["name"]
            inv.add_host(name, group="gpu_nodes")
            inv.add_host(name, group="private_nodes" if node["tenant"] else "shared_nodes")
            if node["tenant"]:
                inv.add_host(name, group=groups[node["tenant"]])
            inv.set_variable(name, "ansible_host", node["ip"])
            variables = node_vars(node)
            for key, value in variables.items():
                inv.set_variable(name, key, value)
            if name in tunnels:
                inv.set_variable(name, "gpucloud_wireguard_tunnels", tunnels[name])
            self._construct(name, {"gpucloud_node": variables["gpucloud_node"]})

    def _construct(self, host: str, variables: dict) -> None:
        if not (self.get_option("compose") or self.get_option("groups") or self.get_option("keyed_groups")):
            return  # nothing to construct: skip copying every host's variables
        strict = self.get_option("strict")
        hostvars = dict(self.inventory.get_host(host).get_vars(), **variables)
        self._set_composite_vars(self.get_option("compose"), hostvars, host, strict=strict)
        self._add_host_to_composed_groups(self.get_option("groups"), hostvars, host, strict=strict)
        self._add_host_to_keyed_groups(self.get_option("keyed_groups"), hostvars, host, strict=strict)
