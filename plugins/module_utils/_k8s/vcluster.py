# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A tenant's ``vcluster.yaml``, from the fleet model's tenant, for the chart version it runs.

- Both tiers: the control plane's Service is exposed as the operator chooses (``expose``: a
  NodePort - the tenant's ``vcluster.node_port`` from the fleet -, a LoadBalancer, or an Ingress),
  ``exportKubeConfig.server`` names that address (``expose_host`` and the port), and the address
  is in the serving certificate (``controlPlane.proxy.extraSANs``).
- shared: pods synced to the host with ``schedulerName: kai-scheduler`` and the queue label, and
  ``experimental.syncSettings.setOwner: false``, so KAI on the host enforces the quota; vCluster's
  own Pod Security Standard (``policies.podSecurityStandard``) inside the virtual cluster. Who makes
  the pods carry scheduler and queue is ``shared_enforcement``: ``patches`` - vCluster sets them
  (``sync.toHost.pods.patches``, a vCluster Pro feature: the open-source syncer refuses a patch
  list, loft-sh/vcluster ``pkg/pro/patches.go``), so it needs the Pro image and Platform key; or
  ``admission-policy`` - open-source vCluster, tenants set them (the vCluster KAI docs' pattern) and
  the host's ValidatingAdmissionPolicy (``pod_policy``) refuses any other; ``auto``: patches when a
  Pro image is set.
- private: ``privateNodes.enabled`` with the tenant's own CNI, kube-proxy and storage, the
  control plane endpoint on the tenant's WireGuard hub address (the gateway forwards it to the
  Service), the vcluster-pro image and the vCluster Platform key (required: the open-source build
  refuses private nodes).
- The Platform key is ``platform.apiKey`` from chart 0.32.0 and ``external.platform.apiKey``
  before (each release's ``values.schema.json`` refuses the other).
- The fleet's ``tenants[].vcluster.values`` are merged over the collection's.

Pure data in, data out; problems are ``ProblemsError`` naming the field and what is allowed.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from .errors import VclusterError

TENANT_LABEL = "gpucloud.baremetal/tenant"
QUEUE_LABEL = "kai.scheduler/queue"
EXPOSURES = ("NodePort", "LoadBalancer", "Ingress")
ENFORCEMENTS = ("auto", "patches", "admission-policy")
POD_SECURITY_LEVELS = ("baseline", "restricted", "privileged")
PLATFORM_KEY_FROM = (0, 32, 0)  # the top-level `platform` key exists from this chart version

DEFAULT_SETTINGS: dict[str, Any] = {
    "chart_version": "0.36.1",
    "scheduler_name": "kai-scheduler",
    "expose": "NodePort",
    "expose_host": "",
    "pro_image": "",
    "platform_secret": "",
    "shared_enforcement": "auto",
    "platform_secret_namespace": "",
    "pod_security": "baseline",
    "api_port": 443,
    "values": {},
}


def settings_with_defaults(settings: dict | None) -> dict:
    out = copy.deepcopy(DEFAULT_SETTINGS)
    out.update({k: v for k, v in (settings or {}).items() if v is not None})
    return out


def merge(base: Any, over: Any) -> Any:
    """Recursive merge of mappings; ``over`` wins; lists are replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            out[key] = merge(base.get(key), value) if key in base else copy.deepcopy(value)
        return out
    return copy.deepcopy(over)


def chart_version(text: str) -> tuple[int, ...]:
    """``0.36.1`` / ``v0.30.0-rc.1`` -> (0, 36, 1) / (0, 30, 0)."""
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", str(text).strip())
    if not match:
        raise VclusterError(["vcluster_tenant_chart_version: %r is not a chart version such as 0.36.1" % text])
    return tuple(int(part) for part in match.groups())


def _pro_image(ref: str) -> dict:
    """``registry/repository:tag`` -> the chart's ``{registry, repository, tag}``."""
    name, tag = [*ref.rsplit(":", 1), ""][:2] if ":" in ref.rsplit("/", 1)[-1] else (ref, "")
    first = name.split("/", 1)[0]
    has_registry = "/" in name and ("." in first or ":" in first or first == "localhost")
    registry, repository = (first, name.split("/", 1)[1]) if has_registry else ("", name)
    image = {"registry": registry, "repository": repository}
    if tag:
        image["tag"] = tag
    return {k: v for k, v in image.items() if v}


def shared_enforcement(settings: dict) -> str:
    """How a shared tenant's pods get the scheduler and queue: 'patches' (vCluster Pro) or 'admission-policy'."""
    mode = settings.get("shared_enforcement") or "auto"
    if mode == "auto":
        return "patches" if settings.get("pro_image") else "admission-policy"
    return mode


def _pro_values(values: dict, s: dict) -> None:
    values["controlPlane"]["statefulSet"]["image"] = _pro_image(s["pro_image"])
    api_key = {"secretName": s["platform_secret"]}
    if s["platform_secret_namespace"]:
        api_key["namespace"] = s["platform_secret_namespace"]
    if chart_version(s["chart_version"]) >= PLATFORM_KEY_FROM:
        values["platform"] = {"apiKey": api_key}
    else:
        values["external"] = {"platform": {"apiKey": api_key}}


def api_address(tenant: dict, s: dict) -> tuple[str, int]:
    """Where clients (and the WireGuard gateway) reach the tenant API: the exposed host and its port."""
    port = tenant["vcluster"]["node_port"] if s["expose"] == "NodePort" else 443
    return s["expose_host"], int(port)


def _exposure(tenant: dict, s: dict) -> dict:
    """``controlPlane`` values that expose the Service (upstream chart: controlPlane.service / ingress)."""
    host, _port = api_address(tenant, s)
    if s["expose"] == "Ingress":
        return {"service": {"spec": {"type": "ClusterIP"}}, "ingress": {"enabled": True, "host": host}}
    service: dict[str, Any] = {"spec": {"type": s["expose"]}}
    if s["expose"] == "NodePort":
        service["httpsNodePort"] = tenant["vcluster"]["node_port"]
    return {"service": service}


def vcluster_values(tenant: dict, settings: dict | None = None) -> dict:
    """The tenant's ``vcluster.yaml``; raises VclusterError where settings are missing or wrong."""
    s = settings_with_defaults(settings)
    check_settings(tenant, s)
    name = tenant["name"]
    host, port = api_address(tenant, s)
    plane: dict[str, Any] = {
        "distro": {"k8s": {"enabled": True}},
        "statefulSet": {"labels": {TENANT_LABEL: name}},
        "proxy": {"extraSANs": [host]},
        **_exposure(tenant, s),
    }
    values: dict[str, Any] = {"controlPlane": plane, "exportKubeConfig": {"server": "https://%s:%d" % (host, port)}}
    if tenant["isolation"] == "private":
        hub = tenant["wireguard"]["hub_ip"]
        values["privateNodes"] = {"enabled": True}
        plane["endpoint"] = "%s:%d" % (hub, s["api_port"])
        plane["proxy"]["extraSANs"] = [hub, host]
        _pro_values(values, s)
        values["deploy"] = {
            "cni": {"flannel": {"enabled": True}},
            "kubeProxy": {"enabled": True},
            "localPathProvisioner": {"enabled": True},
        }
    else:
        # Synced pods go to KAI on the host, in the tenant's queue (vCluster docs, KAI Scheduler integration).
        pods: dict[str, Any] = {"enabled": True}
        if shared_enforcement(s) == "patches":
            pods["patches"] = [
                {"path": "spec.schedulerName", "expression": '"%s"' % s["scheduler_name"]},
                {"path": "metadata.labels",
                 "expression": '({...(value || {}), "%s": "%s"})' % (QUEUE_LABEL, tenant["queue"])},
            ]
            _pro_values(values, s)
        values["sync"] = {"toHost": {"pods": pods}}
        values["experimental"] = {"syncSettings": {"setOwner": False}}
        values["policies"] = {"podSecurityStandard": s["pod_security"]}
    values = merge(values, s["values"])
    return merge(values, (tenant.get("vcluster") or {}).get("values") or {})


def service_account(values: dict, tenant: dict) -> str:
    """The control-plane pod's service account, as the chart names it (``vc-<release>`` unless set)."""
    advanced = ((values.get("controlPlane") or {}).get("advanced") or {}).get("serviceAccount") or {}
    return str(advanced.get("name") or "vc-%s" % tenant["vcluster_release"])


def _choice(s: dict, key: str, allowed: tuple[str, ...]) -> list[str]:
    if s.get(key) in allowed:
        return []
    return ["vcluster_tenant_%s: %r is not one of %s" % (key, s.get(key), ", ".join(allowed))]


def check_settings(tenant: dict, s: dict) -> None:
    problems = (_choice(s, "shared_enforcement", ENFORCEMENTS) + _choice(s, "expose", EXPOSURES)
                + _choice(s, "pod_security", POD_SECURITY_LEVELS))
    chart_version(s["chart_version"])
    if not s.get("expose_host"):
        problems.append("vcluster_tenant_expose_host: give the address clients reach the tenant API at (a host "
                        "cluster node for NodePort, the load balancer's address, the Ingress host name)")
    if s.get("expose") == "NodePort" and not (tenant.get("vcluster") or {}).get("node_port"):
        problems.append("tenants.%s.vcluster.node_port: the tenant needs its NodePort (the fleet inventory derives "
                        "it from the VLAN)" % tenant.get("name"))
    if problems:
        raise VclusterError(problems)
    _check_pro(tenant, s)


def _check_pro(tenant: dict, s: dict) -> None:
    if tenant.get("isolation") == "private":
        where = "tenant %s (private)" % tenant.get("name")
        feature = "private nodes are a vCluster Pro feature and the open-source image refuses them with a licence error"
    elif shared_enforcement(s) == "patches":
        where = "tenant %s (shared, vcluster_tenant_shared_enforcement: patches)" % tenant.get("name")
        feature = ("pod patches (sync.toHost.pods.patches) are a vCluster Pro feature, the open-source syncer "
                   "refuses them; or use vcluster_tenant_shared_enforcement: admission-policy (open source, "
                   "Kubernetes >= 1.30)")
    else:
        return
    problems = []
    if not s.get("pro_image"):
        problems.append("vcluster_tenant_pro_image: %s needs the vcluster-pro image "
                        "(e.g. ghcr.io/loft-sh/vcluster-pro:%s); %s" % (where, s["chart_version"], feature))
    if not s.get("platform_secret"):
        problems.append(
            "vcluster_tenant_platform_secret: %s needs the secret holding the vCluster Platform access key "
            "(its free mode is enough; created by `vcluster platform connect`/`add`)" % where
        )
    if tenant.get("isolation") == "private" and not (tenant.get("wireguard") or {}).get("hub_ip"):
        problems.append("tenants.%s.wireguard: a private tenant needs its WireGuard hub address" % tenant["name"])
    if problems:
        raise VclusterError(problems)


def check_tier(tenant: dict, installed: str | None) -> None:
    """The tier (shared/private) is fixed at first install; ``installed`` is the namespace's label."""
    if installed and installed != tenant["isolation"]:
        raise VclusterError(
            [
                "tenants.%s.isolation: the tenant was installed as %s and is now %s; the tier is fixed at first "
                "install (vCluster enables private nodes only at creation). Offboard the tenant "
                "(playbooks/tenant_offboard.yml) and onboard it again to change it, or set isolation back to %s"
                % (tenant["name"], installed, tenant["isolation"], installed)
            ]
        )
