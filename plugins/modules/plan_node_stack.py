#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: plan_node_stack
short_description: What the node stack installs on every GPU node, offline, from role gpu_host's own files
version_added: 0.1.0
description:
  - Computes, for the plan (C(playbooks/plan.yml)), the file C(nodes/<node>.yaml) of each GPU node - the package
    manager, repositories, packages (with their pinned versions), Python packages and services that role
    C(gpucloud.baremetal.gpu_host) installs there, and what it skips and why.
  - The role's own files are the source - its defaults (versions, switches) and the vars file of the node's OS
    (the role's C(first_found) of C(<distribution>.yml), C(<os_family>.yml), C(default.yml)) - templated for each
    node with the node's inventory variables over the role's defaults, as the role sees them, and the facts the
    node's OS profile in the fleet gives (distribution, version). The running kernel is known on the node only;
    kernel headers show it as C(<running kernel>).
  - An action on the controller; it reaches no host. One task for the whole fleet.
author:
  - gpucloud.baremetal contributors (@gpucloud)
options:
  nodes:
    description: The nodes to plan, by name, each a host of the group C(gpu_nodes) (another name fails the task, naming
      it); default the group C(gpu_nodes).
    type: list
    elements: str
  role_path:
    description: The role C(gpu_host) to read; default the one of this collection.
    type: path
attributes:
  action:
    support: full
    description: Runs on the controller as an action plugin.
  check_mode:
    support: full
    description: The action only computes.
  diff_mode:
    support: none
    description: Nothing to compare; M(gpucloud.baremetal.plan_files) shows what changed.
  platform:
    support: full
    platforms: posix
    description: Runs on the controller; talks to nothing.
"""

EXAMPLES = r"""
- name: What the node stack installs on each GPU node
  gpucloud.baremetal.plan_node_stack:
  register: nodes

- name: Write them into the plan
  gpucloud.baremetal.plan_files:
    dest: ~/.cache/gpucloud/plan/fra1
    layers: [nodes]
    data: "{{ nodes.data }}"
"""

RETURN = r"""
data:
  description: C(nodes/<node>.yaml) -> the node stack of that node, for O(gpucloud.baremetal.plan_files#module:data).
  returned: success
  type: dict
  sample:
    nodes/gpu-r1-01.yaml:
      node: gpu-r1-01
      os: {profile: ubuntu2404, distribution: Ubuntu, version: "24.04"}
      gpu: {model: H100-SXM5-80GB, count: 8, driver: operator, nvswitch: true, nvlink5: false, kernel_modules: open}
      package_manager: apt
      repositories:
        - {name: kubernetes, url: "https://pkgs.k8s.io/core:/stable:/v1.32/deb/",
           key_fingerprint: DE15B14486CD377B9E876E1A234654DA9A296436}
      module_streams: []
      packages: [linux-headers-<running kernel>, containerd, conntrack, iptables, iproute2, ebtables, ethtool, socat,
                 mount, util-linux, kubeadm=1.32.3-1.1, kubelet=1.32.3-1.1, kubectl=1.32.3-1.1, cri-tools=1.32.3-1.1]
      kernel_modules: []
      pip: [nvidia-ml-py==13.615.71]
      services: [kubelet]
      skipped: ["host driver and container toolkit: the GPU Operator brings them (gpu.driver operator)"]
"""
