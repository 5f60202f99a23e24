# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan of every layer (``playbooks/plan.yml``), private to the collection.

- ``files``: the plan folder, one file per object: written only when its bytes differ, files of
  objects gone from the plan removed, data as YAML with sorted keys (the same fleet, the same bytes);
- ``tenants``: each tenant's vcluster.yaml and host objects, the KAI queue trees and the private
  tenants' WireGuard topology, computed by the same code the tenant modules apply;
- ``nodes``: what role ``gpu_host`` installs on a node (its decisions, from its own files' values).

Imports point one way: files/tenants/nodes -> ``_k8s`` (vcluster, queue_tree) -> errors. Modules
(``plan_files``, ``plan_tenants``) and the action ``plan_node_stack`` import them.
"""
