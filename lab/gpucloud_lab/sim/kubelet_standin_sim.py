# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SIMULATION of a kubelet's registration, for a lab host that has a kubelet.conf but no kubelet of its own.

A part of the lab controller (controller.py), which runs it every second. When a lab host has
`/etc/kubernetes/kubelet.conf` (e.g. a copied admin kubeconfig, as in
tests/integration/playbooks/gpu_operator.yml) but no client certificate from a TLS bootstrap, it
registers that host's Node (Ready, invented capacity) with the API server named in that file, as
a kubelet would (kubernetes 1.20 pkg/kubelet/kubelet_node_status.go). A host joined with
`kubeadm join` runs the simulated kubelet binary (kubelet_sim.py), which registers and heartbeats
its Node itself, with its own identity, and is left alone here.

It also plays the one thing of a kubelet that no lab kubelet does: running the pods bound to its node.
A pod that a scheduler bound (spec.nodeName, through the binding subresource; kai_scheduler_sim.py) to a
Node of a lab host is reported Running and Ready, as its kubelet would once its containers started.
"""
from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import yaml

from gpucloud_lab.core import config
from gpucloud_lab.infra import hosts
from gpucloud_lab.infra.kubeapi import JSON, Api, ApiError, is_ready

LOG = logging.getLogger("lab-controller")


class Kubelet:
    """Plays the kubelet for a host that has a kubelet.conf but no kubelet of its own: registers its Node.

    A host whose kubelet did its own TLS bootstrap has its client certificate in /var/lib/kubelet/pki.
    """

    def __init__(self, apis: dict[str, Api]) -> None:
        self.apis = apis

    def sync(self) -> None:
        self._register_hosts()
        # A host whose kubelet is the real one (the package mirror's real-kubelet repository) runs its pods itself.
        names = {host.name for host in config.HOSTS if not has_real_kubelet(host)}
        for api in self.apis.values():
            run_bound_pods(api, names)
            finish_deleted_pods(api, names)

    def _register_hosts(self) -> None:
        for host in config.HOSTS:
            root = hosts.root_dir(host)
            # The kubelet's link is absolute (/var/lib/kubelet/pki/kubelet-client-<time>.pem, as the real one writes
            # it): seen from here it dangles, so the link itself is what counts.
            current = root / "var" / "lib" / "kubelet" / "pki" / "kubelet-client-current.pem"
            if current.is_symlink() or current.exists():
                continue
            conf = root / "etc" / "kubernetes" / "kubelet.conf"
            server = self._server(conf)
            if server and server in self.apis:
                self._register(self.apis[server], host)

    @staticmethod
    def _server(conf: Path) -> str | None:
        try:
            data = yaml.safe_load(conf.read_text())
            return str(data["clusters"][0]["cluster"]["server"]).rstrip("/")
        except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError):
            return None

    @staticmethod
    def _register(api: Api, host: config.Host) -> None:
        node = api.get(f"/api/v1/nodes/{host.name}")
        if node and is_ready(node):
            return
        if node is None:
            labels = {"kubernetes.io/hostname": host.name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
            api.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                         "metadata": {"name": host.name, "labels": labels}})
        api.patch(f"/api/v1/nodes/{host.name}/status", {"status": _node_status(host)})
        LOG.info("node %s: registered with %s (kubelet stand-in)", host.name, api.server)


def has_real_kubelet(host: config.Host) -> bool:
    """Whether the host's /usr/bin/kubelet is the real kubelet (a program) rather than the lab's simulated one (a
    Python script)."""
    try:
        with open(hosts.root_dir(host) / "usr" / "bin" / "kubelet", "rb") as handle:
            return handle.read(4) == b"\x7fELF"
    except OSError:
        return False


def run_bound_pods(api: Api, hosts: set[str]) -> None:
    """Pending pods bound to a lab host's Node: Running and Ready (their containers never start here)."""
    for pod in api.items("/api/v1/pods?fieldSelector=status.phase%3DPending"):
        node = pod["spec"].get("nodeName")
        if node not in hosts or pod["metadata"].get("deletionTimestamp"):
            continue
        meta = pod["metadata"]
        api.patch(f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status",
                  {"status": running_status(pod, host_ip=_node_ip(api, node))})
        LOG.info("pod %s/%s: running on %s (kubelet stand-in)", meta["namespace"], meta["name"], node)


def finish_deleted_pods(api: Api, hosts: set[str]) -> None:
    """Pods on a lab host's Node that are being deleted: gone, as their kubelet makes them once their containers
    stopped (kubernetes 1.20 pkg/kubelet/status/status_manager.go: a delete with grace period 0). Without this a
    bound pod stays Terminating and its namespace never goes."""
    for pod in api.items("/api/v1/pods"):
        meta = pod["metadata"]
        if pod["spec"].get("nodeName") not in hosts or not meta.get("deletionTimestamp"):
            continue
        path = f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}"
        try:
            api.request("DELETE", path, {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
                                         "preconditions": {"uid": meta["uid"]}})
        except ApiError as err:
            if err.status not in (404, 409):  # gone already, or another pod of that name now
                raise
            continue
        LOG.info("pod %s/%s: stopped and deleted on %s (kubelet stand-in)", meta["namespace"], meta["name"],
                 pod["spec"]["nodeName"])


def _node_ip(api: Api, node: str) -> str:
    found = api.get(f"/api/v1/nodes/{node}") or {}
    return next((a["address"] for a in found.get("status", {}).get("addresses", []) if a.get("type") == "InternalIP"),
                "")


def running_status(pod: JSON, host_ip: str) -> JSON:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    conditions = [{"type": t, "status": "True", "lastTransitionTime": now}
                  for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")]
    containers = [{"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": True, "started": True,
                   "restartCount": 0, "state": {"running": {"startedAt": now}}}
                  for c in pod["spec"].get("containers", [])]
    return {"phase": "Running", "conditions": conditions, "containerStatuses": containers, "hostIP": host_ip,
            "startTime": now}


def _node_status(host: config.Host) -> JSON:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    resources = {"cpu": "64", "memory": "512Gi", "pods": "110", "ephemeral-storage": "1Ti"}
    return {
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "lab kubelet stand-in",
                        "lastHeartbeatTime": now, "lastTransitionTime": now}],
        "addresses": [{"type": "InternalIP", "address": host.ip}, {"type": "Hostname", "address": host.name}],
        "capacity": resources, "allocatable": resources,
        "nodeInfo": {"kubeletVersion": f"v{config.KUBERNETES_VERSION}", "kubeProxyVersion": "",
                     "operatingSystem": "linux", "architecture": "amd64", "containerRuntimeVersion": "containerd://1.6",
                     "osImage": "Debian GNU/Linux 12 (bookworm)", "kernelVersion": os.uname().release,
                     "machineID": "", "systemUUID": "", "bootID": ""},
    }
