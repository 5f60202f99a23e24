#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: vcluster_kubeconfig
short_description: Wait for a tenant control plane and export its kubeconfig (0600)
version_added: 0.1.0
description:
  - Waits until the tenant's vCluster has published its kubeconfig (secret O(secret), key
    C(config), in O(namespace) of the host cluster), then until the tenant API server answers
    C(/readyz) with those credentials.
  - Writes the kubeconfig to O(dest) with mode 0600 (atomically, only when it changed) and/or
    returns it in C(kubeconfig). Its credentials are registered as secrets, so Ansible masks them
    in output; still use C(no_log) on the task when you register C(kubeconfig).
  - With O(state=absent), removes O(dest).
author:
  - gpucloud.baremetal contributors (@gpucloud)
extends_documentation_fragment:
  - gpucloud.baremetal.k8s_auth
options:
  namespace:
    description: Host namespace of the tenant (C(tenant-<name>)).
    type: str
    required: true
  secret:
    description: The kubeconfig secret the vCluster chart writes (C(vc-<release>)).
    type: str
    required: true
  dest:
    description: File on the controller to write the kubeconfig to (mode 0600); empty for none.
    type: path
    default: ""
  return_content:
    description: Return the kubeconfig (a mapping) in C(kubeconfig).
    type: bool
    default: false
  wait_timeout:
    description: Seconds to wait for the secret and for C(/readyz).
    type: int
    default: 300
  state:
    description: V(present) waits and exports; V(absent) removes O(dest).
    type: str
    choices: [present, absent]
    default: present
attributes:
  check_mode:
    support: full
    description: Reads and checks readiness; reports whether O(dest) would change without writing it.
  diff_mode:
    support: none
    description: Nothing to compare; see the result.
"""

EXAMPLES = r"""
- name: Export beta's kubeconfig
  gpucloud.baremetal.vcluster_kubeconfig:
    namespace: tenant-beta
    secret: vc-beta
    dest: "{{ lookup('ansible.builtin.env', 'HOME') }}/.kube/tenants/beta.kubeconfig"
"""

RETURN = r"""
server:
  description: The tenant API server the kubeconfig points to.
  returned: state is present
  type: str
  sample: https://198.51.100.11:7443
path:
  description: Where the kubeconfig was written (empty for nowhere).
  returned: always
  type: str
kubeconfig:
  description: The tenant kubeconfig (only with O(return_content)); its credentials are masked in output.
  returned: return_content
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.args import AUTH_ARG_SPEC, run_module
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.client import Client
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.tenants import export_kubeconfig, remove_file


def run(module: AnsibleModule) -> dict:
    p = module.params
    if p["state"] == "absent":
        return {"changed": remove_file(p["dest"], module.check_mode), "path": p["dest"]}
    host = Client(p)
    found = export_kubeconfig(host, p["namespace"], p["secret"], p["wait_timeout"], p["dest"], module.check_mode)
    module.no_log_values.update(v for v in found.pop("secrets") if v)
    if not p["return_content"]:
        found.pop("kubeconfig")
    return found


def main() -> None:
    spec = dict(
        AUTH_ARG_SPEC,
        namespace={"type": "str", "required": True},
        secret={"type": "str", "required": True, "no_log": False},
        dest={"type": "path", "default": ""},
        return_content={"type": "bool", "default": False},
        wait_timeout={"type": "int", "default": 300},
        state={"type": "str", "choices": ["present", "absent"], "default": "present"},
    )
    run_module(spec, run)


if __name__ == "__main__":
    main()
