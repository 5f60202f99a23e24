# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's Kubernetes client code (private to the collection).

- ``args``: the connection options every Kubernetes module of the collection shares;
- ``client``: one place that talks to the API: server-side apply with a field manager,
  server-side dry run, retries on 409/429/5xx, errors as ``K8sError`` (a ``ProblemsError``);
- ``queues``: the KAI queue tree (desired tree from ``_fleet.views.queues``);
- ``wait``: readiness waits.

Imports point one way: modules -> this package -> the fleet model -> ``_errors``.
"""
