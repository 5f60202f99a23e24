#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: switch_tenants
short_description: Tenant VLAN, L2 VNI, VRF and L3 VNI on leaf switches, from the fleet model
version_added: 0.1.0
description:
  - Computes the native config of a leaf switch's tenant networks (VLAN mapped to its L2 VNI on
    the ports of the tenant's nodes, an anycast-gateway SVI in the tenant's VRF, the VRF mapped to
    its L3 VNI with BGP EVPN) for NVIDIA Cumulus Linux (NVUE), SONiC (config_db) and Arista EOS
    (CLI), plus FRR for the platforms that route with FRR (NVUE, SONiC).
  - Follows the network resource-module states. C(rendered) and C(parsed) work offline.
    C(merged), C(replaced), C(overridden) and C(deleted) compare the switch's gathered config
    (O(running_config)) with the fleet and return the native commands that reach the state; the
    role M(gpucloud.baremetal.switch_fabric) pushes them with each platform's transport
    (M(gpucloud.baremetal.nvue_config), M(arista.eos.eos_config), config_db over SSH).
  - Only objects this collection owns are ever changed or removed; they carry the marker
    C(gpucloud:<tenant>) (NVUE SVI description, SONiC VLAN description, EOS VLAN name).
    A VLAN made by hand is never touched, even by C(overridden).
  - "Runs on the controller (C(delegate_to: localhost)); it never connects to a switch itself."
author:
  - gpucloud.baremetal contributors (@gpucloud)
options:
  switch:
    description:
      - The switch part of the fleet model, the C(gpucloud_switch) host variable the
        C(gpucloud.baremetal.fleet) inventory gives every switch (C(name), C(platform), C(asn),
        C(loopback), C(role), C(tenants)).
      - Required for every state but C(parsed) and C(gathered).
    type: dict
  fleet_tenants:
    description:
      - The fleet's tenants, the C(gpucloud_tenants) variable that the inventory keeps once, on
        its C(controller) group (C(hostvars['localhost'].gpucloud_tenants)). Needed when O(switch) is in the
        compact form the inventory gives hosts (C(access_ports), C(trunk_ports), C(shared_tenants)
        instead of C(tenants)).
    type: list
    elements: dict
  underlay:
    description:
      - The fabric underlay, C(gpucloud_fabric.underlay) (C(anycast_mac), C(mtu)).
    type: dict
    default: {}
  platform:
    description:
      - The switch platform; defaults to C(switch.platform). Needed for C(parsed) and C(gathered)
        without O(switch). V(frr) parses an FRR config.
    type: str
    choices: [nvue, sonic, eos, frr]
  state:
    description:
      - V(rendered) returns the native config of the fleet's tenants (no switch needed).
      - V(merged) adds the fleet's tenants and their ports; nothing is removed.
      - V(replaced) makes each tenant of the fleet exactly as the fleet says; other tenants stay.
      - V(overridden) makes the switch carry exactly the fleet's tenants; tenants we own that are
        not in the fleet are removed.
      - V(deleted) removes the tenants named in O(tenants), or every tenant we own.
      - A tenant of ours that is only half on the switch (its marker, but no L2 VNI, VRF, L3 VNI
        or anycast gateway) stops every state before any change, except V(deleted) when it is
        among the tenants to remove; then the parts it has are removed, and RV(incomplete) names
        what was missing.
      - V(gathered) and V(parsed) read O(running_config) back into the model's shape.
    type: str
    default: merged
    choices: [rendered, merged, replaced, overridden, deleted, gathered, parsed]
  running_config:
    description:
      - The switch's current config in its native form, as the platform transport gathers it
        (NVUE tree from C(GET /nvue_v1/?rev=applied), a C(nv set) listing or patch YAML; SONiC
        C(sonic-cfggen -d --print-data) JSON; EOS C(show running-config) text; FRR config text).
      - Give only the part the collection owns (filter C(gpucloud.baremetal.owned_config), or
        M(gpucloud.baremetal.nvue_config)'s V(gathered)); a switch's whole config holds its own secrets
        (users, SNMP communities, BGP passwords), and a module's arguments are shown at C(-vvv). The same
        tenants are read from either.
      - Required for every state but V(rendered), unless O(kept_dir) is given.
    type: raw
  kept_dir:
    description:
      - For a switch whose config is kept as files rather than pushed (the switch_fabric role's
        C(switch_fabric_push=false)), the folder on the controller that keeps them. The switch's
        config is read from its native file there (C(<switch>.nvue.yaml), C(<switch>.sonic.json),
        C(<switch>.eos.cfg); none yet is an empty switch) instead of O(running_config); with
        O(render_after), RV(files) are what to write back.
    type: path
  tenants:
    description:
      - Limit the change to these tenants (day-2 onboarding or offboarding of one tenant).
        With V(overridden), only these tenants are brought in line with the fleet.
    type: list
    elements: str
  route_target_asn:
    description:
      - The 2-byte ASN of every EVPN route target, C(ASN:VNI). The same on every leaf, so that
        leaves with different ASNs (eBGP underlay) import each other's routes.
    type: int
    default: 64512
  l3vni_vlan_offset:
    description:
      - SONiC only. SONiC carries an L3 VNI on a VLAN of its own; a tenant's is
        C(vlan + l3vni_vlan_offset). It must not collide with a tenant VLAN on the switch.
    type: int
    default: 2000
  render_after:
    description:
      - With a push state (V(merged), V(replaced), V(overridden), V(deleted)), also return the
        native files of the switch's config after the change in RV(rendered). For a switch
        whose config is kept as files rather than pushed (the switch_fabric role's
        C(switch_fabric_push=false)), the kept file is the O(running_config), and these files
        replace it.
    type: bool
    default: false
  max_removals:
    description:
      - The most tenants one run may remove from the switch (V(replaced), V(overridden), V(deleted)).
        A plan that removes more fails, naming them, before anything is pushed, so that a fleet mistake
        (an empty tenant list, the wrong fleet file) cannot take every tenant's network down at once.
      - A tenant kept by name whose VLAN, VNI or VRF changes counts as removed, since the change takes it down and
        makes it again (a fleet of another site with the same tenant names).
      - Unset, no limit (the switch_fabric role always sets it, from C(switch_fabric_max_removals)).
    type: int
  foreign_vlans:
    description:
      - The VLANs the switch has that are none of ours (no C(gpucloud:) marker), as the filter
        C(gpucloud.baremetal.foreign_vlans) or O(gpucloud.baremetal.nvue_config#module:state=gathered) reads them
        from the switch's whole config. With a push state, a tenant whose VLAN (on SONiC also its L3 VNI VLAN) is
        one of them fails, naming it, before anything is pushed - the tenant would take the operator's VLAN over
        and remove it when the tenant goes.
      - Unset, not checked (the switch_fabric role always gives it when it gathers a switch).
    type: list
    elements: int
  foreign_vrfs:
    description:
      - The VRFs the switch has that no tenant of ours is in (as the switch names them, e.g. C(Vrf-acme) on
        SONiC), read as O(foreign_vlans) is (filter C(gpucloud.baremetal.foreign_vrfs)). With a push state, a
        tenant whose VRF is one of them fails, naming it, before anything is pushed - the tenant would share the
        operator's VRF and remove it when the tenant goes.
      - Unset, not checked.
    type: list
    elements: str
  vrf_users:
    description:
      - The interfaces of the switch that are not ours, by the VRF each is in (VRF name as the switch names it, e.g.
        C(Vrf-acme) on SONiC, to the list of interface names), read as O(foreign_vrfs) is (filter
        C(gpucloud.baremetal.vrf_users) or O(gpucloud.baremetal.nvue_config#module:state=gathered)). With a push
        state, a change that would remove a VRF of ours that one of them is in (its tenant removed, its VRF renamed,
        on EOS also the tenant taken down and made again with another VLAN) fails, naming the VRF, the tenant and
        the interfaces, before anything is pushed - removing the VRF would move the operator's interface out of it
        or break it. The other tenants' changes of that run are not made either.
      - Unset, not checked.
    type: dict
attributes:
  check_mode:
    support: full
    description: The module only computes; it never changes a switch, in check mode or not.
  diff_mode:
    support: full
    description: The diff is the native config of the owned tenants, gathered against intended.
  platform:
    support: full
    platforms: [nvue, sonic, eos]
    description: Runs on the controller; platforms are the switch operating systems it renders.
notes:
  - Spines carry no tenant networks; their rendered file says so and holds no config.
  - C(changed) is true when the switch needs a change; the push task makes it.
seealso:
  - module: gpucloud.baremetal.nvue_config
  - module: arista.eos.eos_config
"""

EXAMPLES = r"""
- name: Render every native file of a switch, offline
  gpucloud.baremetal.switch_tenants:
    switch: "{{ gpucloud_switch }}"
    fleet_tenants: "{{ hostvars['localhost'].gpucloud_tenants }}"
    underlay: "{{ gpucloud_fabric.underlay }}"
    state: rendered
  delegate_to: localhost
  register: fabric_rendered

- name: Parse an EOS running-config into the model's shape
  gpucloud.baremetal.switch_tenants:
    platform: eos
    state: parsed
    running_config: "{{ lookup('ansible.builtin.file', 'leaf1.eos.cfg') }}"
  delegate_to: localhost

- name: What removing tenants that left the fleet takes, as NVUE set/unset
  gpucloud.baremetal.switch_tenants:
    switch: "{{ gpucloud_switch }}"
    fleet_tenants: "{{ hostvars['localhost'].gpucloud_tenants }}"
    underlay: "{{ gpucloud_fabric.underlay }}"
    state: overridden
    running_config: "{{ nvue_gathered.config }}"
  delegate_to: localhost
  register: fabric_plan
"""

RETURN = r"""
rendered:
  description:
    - Native files of the switch, extension to text
      (C(nvue.yaml), C(nvue.nv), C(sonic.json), C(eos.cfg), C(frr.conf)).
  returned: state is rendered, or O(render_after) with a push state
  type: dict
  sample: {"eos.cfg": "vlan 101\n   name gpucloud:acme\n!\n"}
files:
  description:
    - The files kept for the switch, file name to text, RV(rendered) named as the switch_fabric role
      writes them (C(<switch>.nvue.yaml), C(<switch>.sonic.json), C(<switch>.eos.cfg),
      C(<switch>-frr.conf)).
  returned: when RV(rendered) is
  type: dict
  sample: {"leaf1.eos.cfg": "vlan 101\n   name gpucloud:acme\n!\n"}
parsed:
  description: The tenants found in O(running_config), in the model's shape.
  returned: state is parsed
  type: list
  elements: dict
  sample: [{"name": "acme", "vlan": 101, "vni": 10101, "vrf": "acme", "l3vni": 50101,
            "gateway": "10.101.0.1/24", "subnet": "10.101.0.0/24", "ports": [{"port": "swp1", "mode": "access"}]}]
gathered:
  description: Same as RV(parsed), for V(gathered).
  returned: state is gathered
  type: list
  elements: dict
before:
  description: Tenants we own on the switch before the change.
  returned: state is merged, replaced, overridden or deleted
  type: list
  elements: dict
after:
  description: Tenants we own on the switch once the commands are applied.
  returned: state is merged, replaced, overridden or deleted
  type: list
  elements: dict
changes:
  description: Tenant names added, removed and modified.
  returned: state is merged, replaced, overridden or deleted
  type: dict
  sample: {"added": ["acme"], "removed": ["old"], "modified": []}
incomplete:
  description:
    - With V(deleted), the problems of the half tenants it removes (what each lacked, with the native path).
  returned: state is deleted and the switch held half tenants
  type: list
  elements: str
  sample: ["interface vlan10 (gpucloud:acme): no VRF (interface vlan10 ip vrf)"]
diff_from_plan:
  description:
    - Whether the push cannot show the change of the owned part as a diff (EOS, SONiC), so that the plan reports
      it (the role switch_fabric marks this task changed then, so C(--diff) shows the change once).
  returned: state is merged, replaced, overridden or deleted
  type: bool
  sample: true
commands:
  description:
    - The native change. NVUE - C(set) (REST body), C(unset) (REST paths), C(nv) (nv set/unset lines).
      SONiC - C(set) (config_db JSON), C(delete) (C(TABLE|key) in apply order).
      EOS - C(commands) (CLI lines). NVUE and SONiC also C(frr) (vtysh lines).
  returned: state is merged, replaced, overridden or deleted
  type: dict
  sample: {"commands": ["no vlan 199"]}
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric import plan, registry
from ansible_collections.gpucloud.baremetal.plugins.module_utils._runner import run_module


def argument_spec() -> dict:
    """The options; ``platform`` takes its choices from the platform registry."""
    return {
        "switch": {"type": "dict"},
        "fleet_tenants": {"type": "list", "elements": "dict"},
        "underlay": {"type": "dict", "default": {}},
        "platform": {"type": "str", "choices": registry.names()},
        "state": {"type": "str", "default": "merged", "choices": list(plan.STATES)},
        "running_config": {"type": "raw"},
        "kept_dir": {"type": "path"},
        "tenants": {"type": "list", "elements": "str"},
        "route_target_asn": {"type": "int", "default": 64512},
        "l3vni_vlan_offset": {"type": "int", "default": 2000},
        "render_after": {"type": "bool", "default": False},
        "max_removals": {"type": "int"},
        "foreign_vlans": {"type": "list", "elements": "int"},
        "foreign_vrfs": {"type": "list", "elements": "str"},
        "vrf_users": {"type": "dict"},
    }


def run(module: AnsibleModule) -> dict:
    return plan.run(module.params)


def main() -> None:
    run_module(argument_spec(), run, mutually_exclusive=[("running_config", "kept_dir")])


if __name__ == "__main__":
    main()
