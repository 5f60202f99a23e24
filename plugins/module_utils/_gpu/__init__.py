# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's GPU code (private to the collection).

- ``nvml``: the one place that talks to NVML (``pynvml`` from ``nvidia-ml-py``, imported only
  when a module runs): reads every GPU into plain dicts, marks what a GPU does not support, and
  raises ``NvmlUnavailable`` (a ``ProblemsError``) when NVML cannot be used at all;
- ``health``: expectations, findings with a severity, and the table a person reads; it works on
  ``nvml``'s dicts alone and never imports it;
- ``operator``: whether the GPU Operator is done (ClusterPolicy state, GPU node labels and counts).

Imports point one way: modules -> this package -> ``_errors``.
"""
