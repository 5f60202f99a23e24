#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: nvue_config
short_description: Read or change a Cumulus Linux switch's config through the NVUE REST API revisions
version_added: 0.1.0
description:
  - Talks to the NVUE REST API of NVIDIA Cumulus Linux 5.x, with Ansible's own HTTP client (no
    extra Python library). Used by the role M(gpucloud.baremetal.switch_fabric) to push what
    M(gpucloud.baremetal.switch_tenants) computed.
  - V(gathered) reads the applied config (C(GET /nvue_v1/?rev=applied)) and returns the part of it the
    collection owns (the tenants marked as ours and their ports' memberships), because a switch's own config
    holds users, SNMP communities and BGP passwords, which no result may show.
  - V(applied) creates a revision, unsets O(unset) (C(DELETE /nvue_v1/PATH?rev=ID)), patches O(set)
    (C(PATCH /nvue_v1/?rev=ID)), compares the revision with the applied config and, when they
    differ, applies it (C(PATCH /nvue_v1/revision/ID) with C(state=apply)) and waits until the
    switch reports C(applied). A revision that changes nothing is deleted, never applied.
author:
  - gpucloud.baremetal contributors (@gpucloud)
options:
  state:
    description:
      - V(gathered) returns the applied config; V(applied) changes it.
    type: str
    default: applied
    choices: [applied, gathered]
  set:
    description:
      - The NVUE tree to merge into the config (the C(commands.set) result of
        M(gpucloud.baremetal.switch_tenants)).
    type: dict
    default: {}
  unset:
    description:
      - Config paths to remove, C(/)-separated with each part URL-encoded (C(interface/vlan101)),
        before O(set) is merged.
    type: list
    elements: str
    default: []
  apply_timeout:
    description:
      - Seconds to wait for the switch to apply a revision. A failure state of the revision
        (C(apply_error), C(verify_error), C(ays_fail), any C(*_fail) or C(*_error)) ends the wait at
        once with an error naming the state.
    type: int
    default: 120
  save:
    description:
      - Save the applied config to the startup config when the switch has not saved it itself.
        Cumulus Linux 5.9 and later save on apply (state C(applied_and_saved)); up to 5.8 an
        applied revision is lost at reboot unless saved, which this does with a PATCH of
        C(/nvue_v1/revision/applied) to state C(save).
    type: bool
    default: true
extends_documentation_fragment:
  - gpucloud.baremetal.nvue
attributes:
  check_mode:
    support: full
    description: Creates and patches a revision to compute the change and the diff, then deletes it unapplied.
  diff_mode:
    support: full
    description:
      - Before is the applied config, after the revision's config, each as far as the collection owns it or
        this change sets or unsets it; nothing else of the switch's config.
  platform:
    support: full
    platforms: [nvue]
    description: Runs on the controller (C(delegate_to) localhost) and reaches the switch over HTTPS.
"""

EXAMPLES = r"""
- name: Read the applied NVUE config
  gpucloud.baremetal.nvue_config:
    host: "{{ ansible_host }}"
    password: "{{ nvue_password }}"
    state: gathered
  delegate_to: localhost
  register: nvue_gathered

- name: Push the tenant change computed by switch_tenants
  gpucloud.baremetal.nvue_config:
    host: "{{ ansible_host }}"
    password: "{{ nvue_password }}"
    set: "{{ fabric_plan.commands.set }}"
    unset: "{{ fabric_plan.commands.unset }}"
  delegate_to: localhost
"""

RETURN = r"""
config:
  description:
    - The part of the applied config the collection owns (V(gathered)) - each tenant marked as ours (SVI,
      bridge VLAN, EVPN VNI, VRF without BGP sessions) and the bridge memberships of the ports that carry it.
  returned: state is gathered
  type: dict
  sample: {"interface": {"vlan101": {"type": "svi", "description": "gpucloud:acme"}}}
foreign_vlans:
  description:
    - The bridge VLANs of the applied config that are none of ours (no SVI marked as ours), for
      O(gpucloud.baremetal.switch_tenants#module:foreign_vlans) (V(gathered)).
  returned: state is gathered
  type: list
  elements: int
  sample: [10, 20]
foreign_vrfs:
  description:
    - The VRFs of the applied config that no SVI of ours is in (C(default) and C(mgmt) among them), for
      O(gpucloud.baremetal.switch_tenants#module:foreign_vrfs) (V(gathered)).
  returned: state is gathered
  type: list
  elements: str
  sample: [default, mgmt]
vrf_users:
  description:
    - The interfaces of the applied config that are not ours (no SVI marked as ours), by the VRF each is in, for
      O(gpucloud.baremetal.switch_tenants#module:vrf_users) (V(gathered)).
  returned: state is gathered
  type: dict
  sample: {"mgmt": ["eth0"], "acme": ["vlan999"]}
revision:
  description: The revision applied; null when nothing was applied (no change, or check mode).
  returned: state is applied
  type: str
  sample: "12"
saved:
  description:
    - Whether the applied config is in the switch's startup config (saved by the switch itself from
      Cumulus Linux 5.9, or by this module with O(save)); null when nothing was applied.
  returned: state is applied
  type: bool
  sample: true
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.nvue_api import (
    CONNECTION_SPEC,
    NvueClient,
    change,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.registry import (
    foreign_vlans,
    foreign_vrfs,
    owned_native,
    shown,
    vrf_users,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._runner import run_module

SPEC = dict(
    CONNECTION_SPEC,
    state={"type": "str", "default": "applied", "choices": ["applied", "gathered"]},
    set={"type": "dict", "default": {}},
    unset={"type": "list", "elements": "str", "default": []},
    apply_timeout={"type": "int", "default": 120},
    save={"type": "bool", "default": True},
)


def run(module: AnsibleModule) -> dict:
    p = module.params
    api = NvueClient.from_params(p)
    if p["state"] == "gathered":
        applied = api.applied()
        return {"changed": False, "config": owned_native("nvue", applied),
                "foreign_vlans": foreign_vlans("nvue", applied), "foreign_vrfs": foreign_vrfs("nvue", applied),
                "vrf_users": vrf_users("nvue", applied)}
    result = change(api, p["set"], p["unset"], module.check_mode, wait=p["apply_timeout"], save=p["save"])
    return {
        "changed": result["changed"],
        "revision": result["revision"],
        "saved": result["saved"],
        "diff": {"before": shown("nvue", result["before"], p["set"], p["unset"]),
                 "after": shown("nvue", result["after"], p["set"], p["unset"])},
    }


def main() -> None:
    run_module(SPEC, run)


if __name__ == "__main__":
    main()
