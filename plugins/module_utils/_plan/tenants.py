# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tenant layers of the plan, computed by the code the tenant stage applies with.

- ``vcluster/<tenant>.values.yaml`` and ``.objects.yaml``: ``_k8s.vcluster`` (what the modules
  ``vcluster_values`` and ``tenant_objects`` apply), for a tenant as it would be installed now. The
  plan reads no cluster, so a tier change of an installed tenant is found by the tenant stage only.
- ``kai/queues.yaml``: the Queue objects of every tree, by ``_k8s.queue_tree`` (what ``kai_queues``
  applies): the host cluster's (shared tenants on the shared nodes' GPUs, as ``tenants.yml``) and
  each private tenant's own (its nodes' GPUs, as role ``vcluster_tenant``).
- ``wireguard/<tenant>.yaml``: the fleet inventory's tunnels of the gateway and the tenant's nodes
  (addresses, ports, endpoints, allowed IPs). Keys are made on the hosts and are never here.
"""

from __future__ import annotations

from typing import Any

from .._errors import ProblemsError
from .._k8s.host_objects import host_objects
from .._k8s.queue_tree import queue_tree
from .._k8s.queues import queue_object
from .._k8s.vcluster import vcluster_values
from .errors import PlanError

ROLE_PREFIX = "vcluster_tenant_"
EXPOSE_HOST = "<host cluster API host>"
# What role vcluster_tenant passes to the module vcluster_values (its SETTINGS).
SETTINGS = ("chart_version", "scheduler_name", "expose", "expose_host", "api_port", "pro_image", "platform_secret",
            "platform_secret_namespace", "shared_enforcement", "pod_security", "pod_policy", "policy_api_served",
            "values", "quota", "limit_range", "api_server_cidrs", "api_server_ports")


def vcluster_settings(role_vars: dict[str, Any]) -> dict[str, Any]:
    """Role ``vcluster_tenant``'s variables (``vcluster_tenant_<setting>``) -> the settings it passes on.

    Without ``vcluster_tenant_expose_host`` the role takes the host cluster API's host from its kubeconfig,
    which the plan does not read: tenant_files names it ``<host cluster API host>``."""
    return {name: role_vars[ROLE_PREFIX + name] for name in SETTINGS if role_vars.get(ROLE_PREFIX + name) is not None}


def tenant_files(
    tenants: list[dict],
    gpus: dict[str, int],
    shared_nodes: list[str],
    settings: dict[str, Any] | None = None,
    parent: dict | None = None,
    tunnels: dict[str, list[dict]] | None = None,
    gateway: str | None = None,
) -> dict[str, Any]:
    """Plan path -> data of every tenant layer; every problem of every tenant in one PlanError.

    ``gpus``: node name -> its GPU count; ``shared_nodes``: the nodes of no tenant (the shared pool).
    """
    out: dict[str, Any] = {}
    problems: list[str] = []
    # What the role learns from the host cluster, which the plan does not read: its API's host, and whether it
    # serves ValidatingAdmissionPolicy (the plan shows the policy a current cluster gets).
    settings = {"expose_host": EXPOSE_HOST, "policy_api_served": True, **(settings or {})}
    for tenant in tenants:
        _collect(problems, lambda t=tenant: out.update(_vcluster(t, settings)))
    _collect(problems, lambda: out.update({"kai/queues.yaml": queue_trees(tenants, gpus, shared_nodes, parent or {})}))
    for tenant in tenants:
        if tenant.get("wireguard"):
            out["wireguard/%s.yaml" % tenant["name"]] = wireguard(tenant, tunnels or {}, gateway)
    if problems:
        raise PlanError(list(dict.fromkeys(problems)))  # a setting every tenant lacks is said once
    return out


def queue_trees(tenants: list[dict], gpus: dict[str, int], shared_nodes: list[str], parent: dict) -> dict[str, Any]:
    """The host cluster's queue tree (the shared tenants) and each private tenant's; every tree's problems at once,
    a private tenant's named by its cluster."""
    shared = [t for t in tenants if t["isolation"] == "shared"]
    trees: dict[str, Any] = {"host_cluster": [], "tenant_clusters": {}}
    problems: list[str] = []
    if shared:
        _collect(problems, lambda: trees.update(host_cluster=_tree(shared, _sum(gpus, shared_nodes), parent)))
    for tenant in tenants:
        if tenant["isolation"] == "private":
            mine: list[str] = []
            _collect(mine, lambda t=tenant: trees["tenant_clusters"].update(
                {t["name"]: _tree([t], _sum(gpus, t.get("nodes") or []), parent)}))
            problems.extend("tenant %s's cluster: %s" % (tenant["name"], problem) for problem in mine)
    if problems:
        raise PlanError(problems)
    return trees


def wireguard(tenant: dict, tunnels: dict[str, list[dict]], gateway: str | None) -> dict[str, Any]:
    wg = tenant["wireguard"]
    hosts = ([gateway] if gateway else []) + list(tenant.get("nodes") or [])
    return {
        "tenant": tenant["name"],
        "interface": wg.get("interface"),
        "port": wg.get("port"),
        "subnet": wg.get("subnet"),
        "hub_ip": wg.get("hub_ip"),
        "gateway": gateway,
        "tunnels": {host: t for host in hosts for t in tunnels.get(host) or [] if t.get("tenant") == tenant["name"]},
    }


def _vcluster(tenant: dict, settings: dict[str, Any]) -> dict[str, Any]:
    name = tenant["name"]
    values = vcluster_values(tenant, settings)
    return {"vcluster/%s.values.yaml" % name: values,
            "vcluster/%s.objects.yaml" % name: host_objects(tenant, settings, values)}


def _tree(tenants: list[dict], capacity: int, parent: dict) -> list[dict]:
    queues = queue_tree(tenants, capacity, parent)
    return [queue_object(q, queues[0]["name"]) for q in queues]


def _sum(gpus: dict[str, int], names: list[str]) -> int:
    return sum(int(gpus.get(name) or 0) for name in names)


def _collect(problems: list[str], step) -> None:
    try:
        step()
    except ProblemsError as err:
        problems.extend(err.problems)
