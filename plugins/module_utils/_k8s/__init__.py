# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's Kubernetes client code (private to the collection).

- ``args``: the connection options every Kubernetes module of the collection shares;
- ``client``: one place that talks to the API: server-side apply with a field manager,
  server-side dry run, retries on 409/429/5xx, errors as ``K8sError`` (a ``ProblemsError``);
- ``queue_tree``: the desired KAI queue tree from the fleet's tenants (pure data, checked
  against its parent and the GPU capacity); ``queues``: that tree applied to a cluster;
- ``vcluster``: a tenant's ``vcluster.yaml`` (pure data); ``host_objects``: its host-side objects, with
  ``pod_policy``, the admission policy of a shared tenant's synced pods (pure data);
- ``objects``, ``tenants``, ``bootstrap``: host-side objects, tenant kubeconfigs, bootstrap tokens;
- ``errors``: the package's errors, all ``ProblemsError``;
- ``wait``: readiness waits.

Imports point one way: modules -> this package -> the fleet model -> ``_errors``.
"""
