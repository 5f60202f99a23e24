#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: kai_queues
short_description: The whole KAI Scheduler queue tree of a cluster, from the fleet, in one call
version_added: 0.1.0
description:
  - Applies a parent queue for the cloud and one leaf queue per tenant (KAI Scheduler C(Queue),
    C(scheduling.run.ai/v2)) with C(resources.{gpu,cpu,memory}.{quota,limit,overQuotaWeight}), in one task.
  - Every queue states C(cpu) and C(memory) as well as C(gpu) - KAI reads a resource a queue leaves out as
    limit 0, "no additional resources allowed", and would admit no pod that requests CPU. Where a tenant gives
    no C(cpu) / C(memory), its queue gets quota and limit -1 (unlimited - a quota of 0 would refuse every
    non-preemptible pod that asks for CPU) and its GPU weight; the parent gets the sum of its children's quotas
    (-1 when one is unlimited) and no limit.
  - Reads every queue with one request and applies only the queues that differ, by server-side
    apply with the field manager O(field_manager); a second run makes no write (C(changed=false)).
  - KAI does not check children against their parent, so this module does, before any change.
    It refuses a tree whose leaf quotas together exceed the parent's quota, a leaf whose quota or
    limit exceeds the parent's, or a parent above O(gpu_capacity), naming the queues.
  - Queues it creates carry the labels C(app.kubernetes.io/managed-by=gpucloud.baremetal) and
    C(gpucloud.baremetal/queue-tree=<parent>); O(prune) and O(state=absent) only remove those.
    KAI's own C(default-queue) and hand-made queues are never touched.
author:
  - gpucloud.baremetal contributors (@gpucloud)
extends_documentation_fragment:
  - gpucloud.baremetal.k8s_auth
options:
  tenants:
    description:
      - The tenants whose leaf queues make up the tree, as the C(gpucloud.baremetal.fleet)
        inventory gives them in C(gpucloud_tenants) (C(name), C(queue), C(gpu) with C(quota),
        C(limit), C(over_quota_weight)), and C(cpu) (cores, e.g. C(64) or C(0.5)) and C(memory)
        (Kubernetes quantities, e.g. C(512Gi)) with the same keys; C(-1) is unlimited. The module
        writes them in KAI's units (millicores, MB of 10^6 bytes).
      - On the host cluster, the shared tenants; in a private tenant's own cluster, that tenant.
      - With O(state=absent), the tenants whose leaf queues are removed; omitted or empty removes
        every queue of the tree.
    type: list
    elements: dict
    default: []
  gpu_capacity:
    description:
      - GPUs of the nodes this tree schedules on (the shared nodes on the host cluster; the
        tenant's own nodes in a private tenant's cluster). The parent's GPU quota and limit
        default to it, and nothing may exceed it.
      - Required with O(state=present) unless O(parent) gives C(gpu.quota).
    type: float
  parent:
    description:
      - The parent queue. C(name) (default C(gpucloud)), C(display_name), and C(gpu) / C(cpu) /
        C(memory) mappings with C(quota), C(limit), C(over_quota_weight), in the units of O(tenants).
    type: dict
    default: {}
  state:
    description:
      - V(present) applies the tree; V(absent) removes the leaf queues of O(tenants), then the
        parent when no queue is left under it.
    type: str
    choices: [present, absent]
    default: present
  prune:
    description:
      - With V(present), also remove the queues of this tree that this collection created and
        that are not in O(tenants) any more (a tenant that left the fleet). Without it they are only
        reported (RV(stale), RV(stale_tenants)); the role C(gpucloud.baremetal.kai_scheduler) prunes
        only with C(-e prune=true) and a confirmation that names those tenants.
    type: bool
    default: false
  field_manager:
    description:
      - Field manager of the server-side apply.
    type: str
    default: gpucloud.baremetal
  force_conflicts:
    description:
      - Take over fields another manager set (server-side apply C(force)). The tree is ours.
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: Every write is sent with the server's dry run, so the API server validates it and stores nothing.
  diff_mode:
    support: full
    description: Before and after (labels and spec) of every queue that changes.
notes:
  - The Queue CRD must be installed; the role C(gpucloud.baremetal.kai_scheduler) installs KAI
    Scheduler and waits for it.
seealso:
  - name: KAI Scheduler queues
    description: How KAI uses the queue tree.
    link: https://github.com/NVIDIA/KAI-Scheduler/blob/main/docs/queues/README.md
"""

EXAMPLES = r"""
- name: Queue tree of the shared tenants on the host cluster
  gpucloud.baremetal.kai_queues:
    kubeconfig: /etc/gpucloud/host.kubeconfig
    tenants: "{{ gpucloud_tenants | selectattr('isolation', 'eq', 'shared') }}"
    gpu_capacity: 128
    prune: true

- name: Remove one tenant's queue
  gpucloud.baremetal.kai_queues:
    tenants: "{{ gpucloud_tenants | selectattr('name', 'eq', 'acme') }}"
    state: absent
"""

RETURN = r"""
queues:
  description: Names of the queues of the tree, parent first.
  returned: always
  type: list
  elements: str
  sample: [gpucloud, tenant-acme]
created:
  description: Queues created (in check mode, that would be created).
  returned: always
  type: list
  elements: str
updated:
  description: Queues changed.
  returned: always
  type: list
  elements: str
deleted:
  description: Queues removed (pruned, or by O(state=absent)).
  returned: always
  type: list
  elements: str
unchanged:
  description: Queues already as wanted.
  returned: always
  type: list
  elements: str
stale:
  description: With O(state=present), the queues of this tree that this collection created for tenants no longer in
    O(tenants) (removed with O(prune)).
  returned: when O(state=present)
  type: list
  elements: str
stale_tenants:
  description: The tenants of RV(stale) (label C(gpucloud.baremetal/tenant)).
  returned: when O(state=present)
  type: list
  elements: str
requests:
  description: API requests the module made (one LIST plus one per changed queue).
  returned: always
  type: int
  sample: 1
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.args import AUTH_ARG_SPEC, run_module
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.client import Client
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.queue_tree import PARENT_QUEUE, queue_tree
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.queues import QueueTree


def run(module: AnsibleModule) -> dict:
    p = module.params
    absent = p["state"] == "absent"
    tenants = p["tenants"] or []
    parent = dict(p["parent"] or {})
    if absent:
        # Only the names matter when removing; no capacity check.
        queues = [{"name": parent.get("name") or PARENT_QUEUE, "tenant": None, "spec": {}}]
    else:
        queues = queue_tree(tenants, p["gpu_capacity"], parent)
    client = Client(p, field_manager=p["field_manager"])
    tree = QueueTree(client, queues, check_mode=module.check_mode, force=p["force_conflicts"])
    if absent:
        result = tree.absent([t.get("name") for t in tenants] if tenants else None)
    else:
        result = tree.present(prune=p["prune"])
    result["requests"] = client.requests
    if not module._diff:
        result.pop("diff")
    return result


def main() -> None:
    spec = dict(
        AUTH_ARG_SPEC,
        tenants={"type": "list", "elements": "dict", "default": []},
        gpu_capacity={"type": "float"},
        parent={"type": "dict", "default": {}},
        state={"type": "str", "choices": ["present", "absent"], "default": "present"},
        prune={"type": "bool", "default": False},
        field_manager={"type": "str", "default": "gpucloud.baremetal"},
        force_conflicts={"type": "bool", "default": True},
    )
    run_module(spec, run)


if __name__ == "__main__":
    main()
