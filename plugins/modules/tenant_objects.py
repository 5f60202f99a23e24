#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: tenant_objects
short_description: Apply a tenant's host-side objects in one call (server-side apply, dry run, diff)
version_added: 0.1.0
description:
  - Applies a list of plain objects (a tenant's namespace, ResourceQuota, LimitRange,
    NetworkPolicy, ServiceAccount, Role, RoleBinding, as M(gpucloud.baremetal.vcluster_values)
    computes them) by server-side apply with the field manager O(field_manager).
  - Reads each object first and writes only those that differ, so a second run makes no write.
  - In check mode every write is a server-side dry run; objects inside a namespace that does
    not exist yet are reported as to be created (the server cannot dry-run them).
author:
  - gpucloud.baremetal contributors (@gpucloud)
extends_documentation_fragment:
  - gpucloud.baremetal.k8s_auth
options:
  objects:
    description:
      - The objects, in order (namespaces first). Kinds - Namespace, ResourceQuota, LimitRange,
        NetworkPolicy, ServiceAccount, Role, RoleBinding, Secret, ConfigMap.
    type: list
    elements: dict
    required: true
  field_manager:
    description: Field manager of the server-side apply.
    type: str
    default: gpucloud.baremetal
  force_conflicts:
    description: Take over fields another manager set (server-side apply C(force)).
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Server-side dry run; nothing is stored.
  diff_mode:
    support: full
    description: Labels and content of every object that changes, before and after.
"""

EXAMPLES = r"""
- name: A tenant's host objects
  gpucloud.baremetal.tenant_objects:
    objects: "{{ tenant_render.objects }}"
"""

RETURN = r"""
created:
  description: Objects created (C(Kind namespace/name)).
  returned: always
  type: list
  elements: str
  sample: ["Namespace tenant-beta", "ResourceQuota tenant-beta/tenant-quota"]
updated:
  description: Objects changed.
  returned: always
  type: list
  elements: str
unchanged:
  description: Objects already as wanted.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.args import AUTH_ARG_SPEC, run_module
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.client import Client
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.objects import KINDS, apply_objects


def run(module: AnsibleModule) -> dict:
    p = module.params
    problems = []
    for i, obj in enumerate(p["objects"]):
        if obj.get("kind") not in KINDS:
            problems.append("objects[%d].kind: %r is not one of %s" % (i, obj.get("kind"), ", ".join(sorted(KINDS))))
        elif not (obj.get("metadata") or {}).get("name") or not obj.get("apiVersion"):
            problems.append("objects[%d]: needs apiVersion and metadata.name" % i)
    if problems:
        raise ProblemsError(problems)
    client = Client(p, field_manager=p["field_manager"])
    result = apply_objects(client, p["objects"], check_mode=module.check_mode, force=p["force_conflicts"])
    if not module._diff:
        result.pop("diff")
    return result


def main() -> None:
    spec = dict(
        AUTH_ARG_SPEC,
        objects={"type": "list", "elements": "dict", "required": True},
        field_manager={"type": "str", "default": "gpucloud.baremetal"},
        force_conflicts={"type": "bool", "default": True},
    )
    run_module(spec, run)


if __name__ == "__main__":
    main()
