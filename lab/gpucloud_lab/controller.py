# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""THE LAB CONTROLLER: a simulation of what needs GPUs or running pods, which this lab has not.

It only reacts to what the roles created, the way the real components would,
and is never called by them. It plays three parts:

* the NVIDIA GPU Operator: once a ClusterPolicy exists in the host cluster, it sets
  `status.state: ready` and gives every Node of a fleet GPU node the `nvidia.com/gpu.*`
  labels and allocatable `nvidia.com/gpu` from the fleet's GPU count;
* the kubelet, where a host has none of its own: when a lab host has
  `/etc/kubernetes/kubelet.conf` but no client certificate from a TLS bootstrap,
  it registers that host's Node (Ready) with the API server named in that file
  (a host joined with `kubeadm join` runs the simulated kubelet, sim_kubelet.py);
* a tenant control-plane pod: for each vCluster release (StatefulSet labelled `app=vcluster`)
  it starts a real etcd + kube-apiserver and publishes its kubeconfig as the chart would,
  in secret `vc-<release>` key `config`; when the release goes, so does the control plane.
"""
from __future__ import annotations

import base64
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from gpucloud_lab import config, hosts, kube
from gpucloud_lab.kubeapi import JSON, Api, ApiError

LOG = logging.getLogger("lab-controller")
TENANTS_FILE = config.STATE_DIR / "controller" / "tenant-control-planes.json"
TENANT_PORT_BASE = 7443
TENANT_ETCD_BASE = 12379
CLUSTER_POLICIES = "/apis/nvidia.com/v1/clusterpolicies"


def fleet_gpus() -> dict[str, JSON]:
    """Node name -> {'model', 'count'} from the lab's fleet file."""
    return {n["name"]: n.get("gpu", {}) for n in config.fleet().get("nodes", []) if n.get("gpu")}


class GpuOperator:
    """Plays the GPU Operator: ClusterPolicy status, node GPU labels and allocatable GPUs."""

    def __init__(self, host_api: Api) -> None:
        self.host_api = host_api

    def ready_policy(self) -> bool:
        policies = self.host_api.items(CLUSTER_POLICIES)
        for policy in policies:
            if policy.get("status", {}).get("state") != "ready":
                name = policy["metadata"]["name"]
                status = {"status": {"state": "ready", "namespace": "gpu-operator"}}
                try:
                    self.host_api.patch(f"{CLUSTER_POLICIES}/{name}/status", status)
                except ApiError:
                    self.host_api.patch(f"{CLUSTER_POLICIES}/{name}", status)
                LOG.info("ClusterPolicy %s: state ready", name)
        return bool(policies)

    def label_nodes(self, api: Api, gpus: dict[str, JSON]) -> None:
        for node in api.items("/api/v1/nodes"):
            name = node["metadata"]["name"]
            if name in gpus:
                self._advertise(api, node, gpus[name])

    @staticmethod
    def _advertise(api: Api, node: JSON, gpu: JSON) -> None:
        name, count = node["metadata"]["name"], str(gpu.get("count", 0))
        labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": count,
                  "nvidia.com/gpu.product": str(gpu.get("model", "unknown")),
                  "nvidia.com/gpu.deploy.operands": "true"}
        if any(node["metadata"].get("labels", {}).get(k) != v for k, v in labels.items()):
            api.patch(f"/api/v1/nodes/{name}", {"metadata": {"labels": labels}})
            LOG.info("node %s: GPU labels (%s x %s)", name, count, labels["nvidia.com/gpu.product"])
        if node.get("status", {}).get("allocatable", {}).get("nvidia.com/gpu") != count:
            resources = {"nvidia.com/gpu": count}
            api.patch(f"/api/v1/nodes/{name}/status",
                      {"status": {"capacity": resources, "allocatable": resources}})
            LOG.info("node %s: allocatable nvidia.com/gpu=%s", name, count)


class Kubelet:
    """Plays the kubelet for a host that has a kubelet.conf but no kubelet of its own: registers its Node.

    A host whose kubelet did its own TLS bootstrap (the simulated kubelet of
    sim_kubelet.py, after `kubeadm join`) has its client certificate in
    /var/lib/kubelet/pki; that kubelet registers and heartbeats its Node
    itself, with its own identity, and is left alone here.
    """

    def __init__(self, apis: dict[str, Api]) -> None:
        self.apis = apis

    def sync(self) -> None:
        for host in config.HOSTS:
            root = hosts.root_dir(host)
            if (root / "var" / "lib" / "kubelet" / "pki" / "kubelet-client-current.pem").exists():
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
        if node and _is_ready(node):
            return
        if node is None:
            labels = {"kubernetes.io/hostname": host.name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
            api.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                         "metadata": {"name": host.name, "labels": labels}})
        api.patch(f"/api/v1/nodes/{host.name}/status", {"status": _node_status(host)})
        LOG.info("node %s: registered with %s (kubelet stand-in)", host.name, api.server)


def _is_ready(node: JSON) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in node.get("status", {}).get("conditions", []))


def _running_pod_status(pod: JSON) -> JSON:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    conditions = [{"type": t, "status": "True", "lastTransitionTime": now}
                  for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")]
    containers = [{"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": True, "started": True,
                   "restartCount": 0, "state": {"running": {"startedAt": now}}}
                  for c in pod["spec"].get("containers", [])]
    return {"phase": "Running", "conditions": conditions, "containerStatuses": containers,
            "hostIP": config.CONTROL_PLANE.ip, "podIP": config.CONTROL_PLANE.ip, "startTime": now}


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


class TenantControlPlanes:
    """Plays the vCluster control-plane pod: a real API server per release, its kubeconfig in vc-<release>."""

    def __init__(self, host_api: Api) -> None:
        self.host_api = host_api
        self.records: dict[str, JSON] = json.loads(TENANTS_FILE.read_text()) if TENANTS_FILE.exists() else {}

    def servers(self) -> dict[str, kube.ApiServer]:
        return {key: self._server(rec) for key, rec in self.records.items()}

    @staticmethod
    def _server(rec: JSON) -> kube.ApiServer:
        name = f"vc-{rec['namespace']}-{rec['release']}"
        return kube.ApiServer(name, config.CONTROL_PLANE.netns, config.CONTROL_PLANE.ip, rec["port"],
                              rec["etcd_port"], kubeconfig=config.STATE_DIR / "kube" / f"{name}.kubeconfig")

    def sync(self) -> None:
        releases = self.host_api.items("/apis/apps/v1/statefulsets?labelSelector=app%3Dvcluster")
        wanted = {f"{s['metadata']['namespace']}/{s['metadata']['name']}": s for s in releases}
        for key in set(self.records) - set(wanted):
            self._remove(key)
        for key, statefulset in wanted.items():
            self._ensure(key, statefulset)

    def _allocate(self, key: str) -> JSON:
        used = {rec["slot"] for rec in self.records.values()}
        slot = next(i for i in range(100) if i not in used)
        namespace, release = key.split("/")
        rec = {"namespace": namespace, "release": release, "slot": slot,
               "port": TENANT_PORT_BASE + slot, "etcd_port": TENANT_ETCD_BASE + 10 * slot}
        self.records[key] = rec
        self._save()
        return rec

    def _save(self) -> None:
        TENANTS_FILE.parent.mkdir(parents=True, exist_ok=True)
        TENANTS_FILE.write_text(json.dumps(self.records, indent=1))

    def _ensure(self, key: str, statefulset: JSON) -> None:
        rec = self.records.get(key) or self._allocate(key)
        server = self._server(rec)
        if server.states()["kube-apiserver"] != "ready":
            LOG.info("vcluster %s: starting its control plane at %s", key, server.server)
            server.up()
        self._publish(rec, server)
        self._pods_ready(rec)

    def _pods_ready(self, rec: JSON) -> None:
        """The control-plane pod runs (here: its API server does), so its Pod reports Ready."""
        selector = f"app%3Dvcluster%2Crelease%3D{rec['release']}"
        for pod in self.host_api.items(f"/api/v1/namespaces/{rec['namespace']}/pods?labelSelector={selector}"):
            if not _is_ready(pod):
                path = f"/api/v1/namespaces/{rec['namespace']}/pods/{pod['metadata']['name']}/status"
                self.host_api.patch(path, {"status": _running_pod_status(pod)})

    def _publish(self, rec: JSON, server: kube.ApiServer) -> None:
        path = f"/api/v1/namespaces/{rec['namespace']}/secrets/vc-{rec['release']}"
        kubeconfig = server.kubeconfig.read_bytes()
        existing = self.host_api.get(path)
        if existing and existing.get("data", {}).get("config") == base64.b64encode(kubeconfig).decode():
            return
        cfg = yaml.safe_load(kubeconfig)
        user, cluster = cfg["users"][0]["user"], cfg["clusters"][0]["cluster"]
        data = {"config": kubeconfig.decode(), "certificate-authority": _unb64(cluster["certificate-authority-data"]),
                "client-certificate": _unb64(user["client-certificate-data"]),
                "client-key": _unb64(user["client-key-data"])}
        secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                  "metadata": {"name": f"vc-{rec['release']}", "namespace": rec["namespace"],
                               "labels": {"app": "vcluster", "release": rec["release"]}},
                  "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}
        if existing:
            self.host_api.request("PUT", path, {**secret, "metadata": {**existing["metadata"], **secret["metadata"]}})
        else:
            self.host_api.create(f"/api/v1/namespaces/{rec['namespace']}/secrets", secret)
        LOG.info("vcluster %s/%s: kubeconfig published in secret vc-%s", rec["namespace"], rec["release"],
                 rec["release"])

    def _remove(self, key: str) -> None:
        LOG.info("vcluster %s: release gone, stopping its control plane", key)
        server = self._server(self.records.pop(key))
        server.down()
        server.kubeconfig.unlink(missing_ok=True)
        self._save()


def _unb64(value: str) -> str:
    return base64.b64decode(value).decode()


class Controller:
    def __init__(self) -> None:
        self.host_api = Api(kube.HOST_CLUSTER.server)
        self.operator = GpuOperator(self.host_api)
        self.tenants = TenantControlPlanes(self.host_api)
        self._apis: dict[str, Api] = {kube.HOST_CLUSTER.server: self.host_api}

    def apis(self) -> dict[str, Api]:
        """The host cluster's API and each running tenant control plane's, clients kept between steps."""
        servers = {kube.HOST_CLUSTER.server} | {s.server for s in self.tenants.servers().values()}
        for server in servers - set(self._apis):
            self._apis[server] = Api(server)
        for server in set(self._apis) - servers:
            del self._apis[server]
        return dict(self._apis)

    def step(self) -> None:
        self.tenants.sync()
        apis = self.apis()
        Kubelet(apis).sync()
        if self.operator.ready_policy():
            gpus = fleet_gpus()
            for api in apis.values():
                self.operator.label_nodes(api, gpus)


def _stop(_signum: int, _frame: Any) -> None:
    LOG.info("stopping")
    sys.exit(0)


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stdout)
    signal.signal(signal.SIGTERM, _stop)
    controller = Controller()
    LOG.info("watching %s (fleet %s)", kube.HOST_CLUSTER.server, config.FLEET)
    while True:
        try:
            controller.step()
        except (OSError, ApiError, yaml.YAMLError, TimeoutError) as err:
            LOG.warning("retrying after: %s", err)
        time.sleep(1.0)


if __name__ == "__main__":
    sys.exit(main())
