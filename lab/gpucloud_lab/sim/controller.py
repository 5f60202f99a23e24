# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""THE LAB CONTROLLER: a simulation of what needs GPUs or running pods, which this lab has not.

It only reacts to what the roles created, the way the real components would,
and is never called by them. It plays three parts:

* the NVIDIA GPU Operator (with NFD, GFD and the device plugin): once a ClusterPolicy exists in
  the host cluster, it reports `notReady` (OperandNotReady) while operands start on each GPU node,
  then `ready` (Reconciled; NoGPUNodes when no node has a GPU), and gives every Node of a fleet
  node with GPUs the `nvidia.com/gpu.*` labels and `nvidia.com/gpu` capacity from the fleet;
* the kubelet, where a host has none of its own: when a lab host has
  `/etc/kubernetes/kubelet.conf` but no client certificate from a TLS bootstrap,
  it registers that host's Node (Ready) with the API server named in that file
  (a host joined with `kubeadm join` runs the simulated kubelet, kubelet_sim.py);
* a tenant control-plane pod: for each vCluster release (StatefulSet labelled `app=vcluster`)
  it starts a real etcd + kube-apiserver and publishes its kubeconfig as the chart would,
  in secret `vc-<release>` key `config`; when the release goes, so does the control plane.
  With privateNodes.enabled (read from secret vc-config-<release>) nodes can join it as they join
  the host cluster, at its controlPlane.endpoint (join_endpoint_sim.py plays the vCluster Service there:
  the API behind TLS and the node join script).
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

from gpucloud_lab.core import config
from gpucloud_lab.core.util import daemon_pid, run, start_daemon, stop_unit
from gpucloud_lab.infra import hosts, kube, kubeadm_init, pki, tools
from gpucloud_lab.infra.kubeapi import JSON, Api, ApiError

LOG = logging.getLogger("lab-controller")
TENANTS_FILE = config.STATE_DIR / "controller" / "tenant-control-planes.json"
TENANT_PORT_BASE = 7443
TENANT_ETCD_BASE = 12379
CLUSTER_POLICIES = "/apis/nvidia.com/v1/clusterpolicies"


def fleet_gpus() -> dict[str, JSON]:
    """Node name -> {'model', 'count'} from the lab's fleet file."""
    return {n["name"]: n.get("gpu", {}) for n in config.fleet().get("nodes", []) if n.get("gpu")}


class GpuOperator:
    """Plays the NVIDIA GPU Operator (v25/v26) with NFD, GPU Feature Discovery and the device plugin.

    Sources: NVIDIA/gpu-operator `controllers/clusterpolicy_controller.go` (the reconcile's end:
    `notReady` + Error/OperandNotReady "ClusterPolicy is not ready; states not ready: [...]" while
    operands start; `ready` + Ready/NFDLabelsMissing without NFD labels, Ready/NoGPUNodes without a GPU
    node, Ready/Reconciled otherwise), `internal/conditions/{clusterpolicy,consts}.go` (Ready and Error
    conditions set together), `controllers/state_manager.go` (state names, the operator's one
    ClusterPolicy — others are `ignored` —, `nvidia.com/gpu.present=true` on nodes with NFD's
    `feature.node.kubernetes.io/pci-10de.present`), `controllers/object_controls.go` (DCGM exporter
    ServiceMonitor: before v26.4 a missing monitoring.coreos.com CRD kept state-dcgm-exporter not
    ready); NVIDIA/k8s-device-plugin `internal/lm/resource.go` (GFD's `nvidia.com/gpu.product|count`).
    What the lab cannot have is played from the fleet file: a node has the PCI devices, model and
    count the fleet gives it (a count of 0: no NVIDIA device, so no NFD pci-10de label); operands
    take OPERAND_START_S on each new GPU node; without a ClusterPolicy the device plugin is gone
    and the kubelet reports allocatable `nvidia.com/gpu: 0`.
    """

    OPERAND_START_S = 3.0
    NFD_PCI = "feature.node.kubernetes.io/pci-10de.present"
    NFD_OS = "feature.node.kubernetes.io/system-os_release.ID"
    STATES = (("driver", "state-driver"), ("toolkit", "state-container-toolkit"),
              (None, "state-operator-validation"), ("devicePlugin", "state-device-plugin"),
              ("dcgm", "state-dcgm"), ("dcgmExporter", "state-dcgm-exporter"),
              ("gfd", "gpu-feature-discovery"), ("migManager", "state-mig-manager"),
              ("nodeStatusExporter", "state-node-status-exporter"))
    SERVICE_MONITOR_CRD = ("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                           "servicemonitors.monitoring.coreos.com")

    def __init__(self, host_api: Api) -> None:
        self.host_api = host_api
        self.operands_since: dict[tuple[str, str], float] = {}  # (api server, node) -> when operands started

    # --- the cluster-wide part: one reconcile of the ClusterPolicy ------------------------------
    def sync(self, apis: dict[str, Api], gpus: dict[str, JSON]) -> None:
        policies = sorted(self.host_api.items(CLUSTER_POLICIES),
                          key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))
        now = time.monotonic()
        for api in apis.values():
            self._discover(api, gpus, operator=bool(policies), now=now)
        if not policies:
            self.operands_since.clear()
            return
        policy, ignored = policies[0], policies[1:]
        for other in ignored:
            self._set_status(other, "ignored", None)
        spec = policy.get("spec", {})
        gpu_nodes = [(api, node) for api in apis.values() for node in api.items("/api/v1/nodes")
                     if node["metadata"].get("labels", {}).get(self.NFD_PCI) == "true"]
        starting = [node for api, node in gpu_nodes if self._starting(api, node["metadata"]["name"], now)]
        not_ready = [state for key, state in self.STATES if starting and (key is None or _enabled(spec, key))]
        if "state-dcgm-exporter" not in not_ready and self._monitor_blocks(spec):
            not_ready.append("state-dcgm-exporter")
        has_nfd = any(k.startswith("feature.node.kubernetes.io/") for n in self._all_nodes(apis)
                      for k in n["metadata"].get("labels", {}))
        if not_ready:
            message = "ClusterPolicy is not ready; states not ready: [%s]" % " ".join(not_ready)
            self._set_status(policy, "notReady", ("Error", "OperandNotReady", message))
        elif not has_nfd:
            self._set_status(policy, "ready", ("Ready", "NFDLabelsMissing", "No NFD labels found"))
        elif not gpu_nodes:
            self._set_status(policy, "ready", ("Ready", "NoGPUNodes",
                                               "No GPU node found, watching for new nodes to join the cluster."))
        else:
            self._set_status(policy, "ready", ("Ready", "Reconciled",
                                               "ClusterPolicy is ready as all resources have been successfully "
                                               "reconciled"))

    def _starting(self, api: Api, node: str, now: float) -> bool:
        return now - self.operands_since.get((api.server, node), now) < self.OPERAND_START_S

    def _monitor_blocks(self, spec: JSON) -> bool:
        """Before v26.4, a ServiceMonitor asked for without its CRD kept the DCGM exporter state not ready."""
        monitor = spec.get("dcgmExporter", {}).get("serviceMonitor", {})
        wanted = _enabled(spec, "dcgmExporter") and monitor.get("enabled")
        return bool(wanted) and self._version() < (26, 4) and self.host_api.get(self.SERVICE_MONITOR_CRD) is None

    @staticmethod
    def _all_nodes(apis: dict[str, Api]) -> list[JSON]:
        return [node for api in apis.values() for node in api.items("/api/v1/nodes")]

    def _version(self) -> tuple[int, ...]:
        """The operator's version, from its Deployment's image tag (v26.7.0 -> (26, 7, 0))."""
        for deployment in self.host_api.items("/apis/apps/v1/deployments?labelSelector=app%3Dgpu-operator"):
            for container in deployment["spec"]["template"]["spec"].get("containers", []):
                tag = container.get("image", "").rpartition(":")[2].lstrip("v").split("-")[0]
                try:
                    return tuple(int(part) for part in tag.split("."))
                except ValueError:
                    continue
        return (0,)

    def _namespace(self) -> str:
        for deployment in self.host_api.items("/apis/apps/v1/deployments?labelSelector=app%3Dgpu-operator"):
            return str(deployment["metadata"]["namespace"])
        return "gpu-operator"

    def _set_status(self, policy: JSON, state: str, condition: tuple[str, str, str] | None) -> None:
        """status.state and the Ready/Error pair as the operator's conditions updater sets them."""
        name, old = policy["metadata"]["name"], policy.get("status", {})
        conditions = [dict(c) for c in old.get("conditions", [])]
        if condition:
            kind, reason, message = condition
            other = "Error" if kind == "Ready" else "Ready"
            _set_condition(conditions, kind, "True", reason, message)
            # Upstream leaves this message empty; this lab's API server (1.20) refuses an empty string
            # in a required field of a custom resource as null, so the lab writes one space.
            _set_condition(conditions, other, "False", kind, " ")
        status = {"state": state, "namespace": self._namespace()}
        if condition:
            status["conditions"] = conditions
        if all(old.get(k) == v for k, v in status.items()):
            return
        # An update of the status subresource, as the operator's conditions updater does.
        self.host_api.request("PUT", f"{CLUSTER_POLICIES}/{name}/status", {**policy, "status": {**old, **status}})
        LOG.info("ClusterPolicy %s: state %s%s", name, state, " (%s: %s)" % condition[1:] if condition else "")

    # --- the per-node part: NFD, the operator's labels, GFD and the device plugin ----------------
    def _discover(self, api: Api, gpus: dict[str, JSON], operator: bool, now: float) -> None:
        for node in api.items("/api/v1/nodes"):
            name = node["metadata"]["name"]
            if name not in gpus:
                continue
            gpu, labels = gpus[name], node["metadata"].get("labels", {})
            count = int(gpu.get("count") or 0)
            want = {}
            if operator:  # NFD (the chart's node-feature-discovery) labels every node, pci-10de where one is
                want[self.NFD_OS] = "debian"
            if operator and count:
                want[self.NFD_PCI] = "true"
                key = (api.server, name)
                since = self.operands_since.setdefault(key, now)
                want.update({"nvidia.com/gpu.present": "true", "nvidia.com/gpu.deploy.operands": "true"})
                if now - since >= self.OPERAND_START_S:  # GFD runs: product and count
                    want.update({"nvidia.com/gpu.product": _product(gpu.get("model")),
                                 "nvidia.com/gpu.count": str(count)})
            changed = {k: v for k, v in want.items() if labels.get(k) != v}
            if changed:
                api.patch(f"/api/v1/nodes/{name}", {"metadata": {"labels": changed}})
                LOG.info("node %s: labels %s", name, ", ".join(f"{k}={v}" for k, v in sorted(changed.items())))
            self._device_plugin(api, node, count if operator and "nvidia.com/gpu.count" in want else 0,
                                registered=operator and "nvidia.com/gpu.count" in want)

    @staticmethod
    def _device_plugin(api: Api, node: JSON, count: int, registered: bool) -> None:
        """Capacity while a device plugin has ever registered the resource; allocatable only while it runs."""
        name, status = node["metadata"]["name"], node.get("status", {})
        capacity = status.get("capacity", {}).get("nvidia.com/gpu")
        allocatable = status.get("allocatable", {}).get("nvidia.com/gpu")
        if registered:
            want = {"capacity": str(count), "allocatable": str(count)}
        elif capacity is not None:
            want = {"capacity": capacity, "allocatable": "0"}
        else:
            return
        if capacity == want["capacity"] and allocatable == want["allocatable"]:
            return
        api.patch(f"/api/v1/nodes/{name}/status",
                  {"status": {k: {"nvidia.com/gpu": v} for k, v in want.items()}})
        LOG.info("node %s: nvidia.com/gpu capacity %s, allocatable %s", name, want["capacity"], want["allocatable"])


def _enabled(spec: JSON, operand: str) -> bool:
    return bool(spec.get(operand, {}).get("enabled", True))


def _product(model: Any) -> str:
    """GFD's label value: the NVML device name with spaces as dashes (e.g. NVIDIA-H100-80GB-HBM3)."""
    return str(model or "unknown").replace(" ", "-")


def _set_condition(conditions: list[JSON], kind: str, status: str, reason: str, message: str) -> None:
    """apimachinery's meta.SetStatusCondition: lastTransitionTime moves only when the status does."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for cond in conditions:
        if cond.get("type") == kind:
            if cond.get("status") != status:
                cond["lastTransitionTime"] = now
            cond.update(status=status, reason=reason, message=message)
            return
    conditions.append({"type": kind, "status": status, "reason": reason, "message": message,
                       "lastTransitionTime": now})


class SimulatedGpus:
    """Plays the GPUs and the driver's NVML on each lab host the fleet gives GPUs.

    A lab host has no GPU and no libnvidia-ml, so the lab installs a SIMULATION of NVIDIA's `pynvml`
    (PyPI nvidia-ml-py) into the host's Python path: `pynvml.py` there is a shim that replaces itself
    with the collection's fake NVML (`tests/support/fake_nvml.py`, copied as
    `gpucloud_lab_fake_nvml.py`: the real function names, return types and NVMLError classes) holding
    the fleet's GPU count of H100s. The module `nvml_health` runs on the host unchanged. A node the
    fleet gives no GPU gets no NVML (as a host without the driver: the module fails in one line).
    """

    SITE = Path("usr/local/lib/python3.11/dist-packages")
    FAKE = config.REPO_DIR / "tests" / "support" / "fake_nvml.py"
    SHIM = '''"""LAB SIMULATION of NVIDIA's pynvml (nvidia-ml-py), installed by gpucloud-lab (controller.py).

This host has no GPU: NVML answers with {count} simulated GPU(s) of the lab fleet ({model}).
"""
import sys

from gpucloud_lab_fake_nvml import FakeNvml, h100

sys.modules[__name__] = FakeNvml([h100(i) for i in range({count})], driver="580.95.05", cuda=13000)
'''

    def sync(self, gpus: dict[str, JSON]) -> None:
        if not self.FAKE.exists():
            return
        fake = self.FAKE.read_text()
        for host in config.GPU_NODES:
            count = int(gpus.get(host.name, {}).get("count") or 0)
            site = hosts.root_dir(host) / self.SITE
            if not (hosts.root_dir(host) / "usr").is_dir():
                continue  # host not started
            files = {site / "gpucloud_lab_fake_nvml.py": fake,
                     site / "pynvml.py": self.SHIM.format(count=count, model=gpus.get(host.name, {}).get("model"))}
            for path, text in files.items():
                if not count:
                    path.unlink(missing_ok=True)
                elif not path.exists() or path.read_text() != text:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text)
                    LOG.info("host %s: simulated NVML (%s GPUs) in %s", host.name, count, path.relative_to(
                        hosts.root_dir(host)))


class Kubelet:
    """Plays the kubelet for a host that has a kubelet.conf but no kubelet of its own: registers its Node.

    A host whose kubelet did its own TLS bootstrap (the simulated kubelet of
    kubelet_sim.py, after `kubeadm join`) has its client certificate in
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
        # Private nodes join a tenant's control plane as they join the host cluster: with bootstrap
        # tokens and CSRs its own kube-controller-manager approves and signs.
        return kube.ApiServer(name, config.CONTROL_PLANE.netns, config.CONTROL_PLANE.ip, rec["port"],
                              rec["etcd_port"], controllers=bool(rec.get("private")),
                              kubeconfig=config.STATE_DIR / "kube" / f"{name}.kubeconfig",
                              extra_sans=tuple(rec.get("sans", ())))

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
        if self._configure(rec):
            old = self._server(rec)
            for part in ("kube-controller-manager", "kube-apiserver"):
                stop_unit(old.unit(part))
        server = self._server(rec)
        started = False
        if server.states()["kube-apiserver"] != "ready":
            LOG.info("vcluster %s: starting its control plane at %s", key, server.server)
            server.up()
            started = True
        if rec.get("private"):
            self._private_nodes(rec, server, started)
        self._publish(rec, server)
        self._pods_ready(rec)

    def _configure(self, rec: JSON) -> bool:
        """Read the release's vcluster.yaml (secret vc-config-<release>, as the real chart writes it);
        True when what the lab control plane depends on changed."""
        secret = self.host_api.get(f"/api/v1/namespaces/{rec['namespace']}/secrets/vc-config-{rec['release']}")
        if not secret:
            return False
        values = yaml.safe_load(base64.b64decode(secret.get("data", {}).get("config.yaml", "")) or b"{}") or {}
        plane = values.get("controlPlane") or {}
        wanted = {"private": bool((values.get("privateNodes") or {}).get("enabled")),
                  "endpoint": str(plane.get("endpoint") or ""),
                  "sans": [str(n) for n in (plane.get("proxy") or {}).get("extraSANs") or []]}
        if all(rec.get(k, d) == wanted[k] for k, d in (("private", False), ("endpoint", ""), ("sans", []))):
            return False
        had = "private" in rec
        rec.update(wanted)
        self._save()
        return had

    def _private_nodes(self, rec: JSON, server: kube.ApiServer, started: bool) -> None:
        """What a vCluster with privateNodes.enabled offers nodes: kubeadm's join objects with the
        endpoint as controlPlaneEndpoint, and the endpoint itself (the vCluster Service, played by
        join_endpoint_sim.py: TLS, the API and /node/join) in front of the API server."""
        endpoint = rec["endpoint"] or f"{server.ip}:{server.port}"
        if ":" not in endpoint:
            endpoint += ":443"
        if started or not rec.get("join_objects"):
            manifest = kubeadm_init.manifest(f"https://{endpoint}", endpoint, config.CONTROL_PLANE.name,
                                             server.ip, server.port)
            run([str(tools.TOOLS_DIR / "kubectl"), f"--kubeconfig={server.kubeconfig}", "apply", "--server-side",
                 "--force-conflicts", "--field-manager=gpucloud-lab", "--filename=-"], input=manifest)
            rec["join_objects"] = True
            self._save()
        unit = self._endpoint_unit(rec)
        if rec["endpoint"] and not daemon_pid(unit):
            LOG.info("vcluster %s/%s: endpoint %s -> %s", rec["namespace"], rec["release"], endpoint, server.server)
            cert, key = server.serving_cert()
            pki.issue("front-proxy-client", "/CN=front-proxy-client")  # the endpoint's identity towards the API server
            start_daemon(unit, ["ip", "netns", "exec", server.netns, sys.executable, "-m",
                                "gpucloud_lab.sim.join_endpoint_sim", endpoint, f"{server.ip}:{server.port}",
                                str(cert), str(key)],
                         env={"PYTHONPATH": str(config.LAB_DIR)})

    @staticmethod
    def _endpoint_unit(rec: JSON) -> str:
        return f"vc-endpoint-{rec['namespace']}-{rec['release']}"

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
        rec = self.records.pop(key)
        stop_unit(self._endpoint_unit(rec))
        server = self._server(rec)
        server.down()
        server.kubeconfig.unlink(missing_ok=True)
        self._save()


def _unb64(value: str) -> str:
    return base64.b64decode(value).decode()


class Controller:
    def __init__(self) -> None:
        self.host_api = Api(kube.HOST_CLUSTER.server)
        self.operator = GpuOperator(self.host_api)
        self.gpus = SimulatedGpus()
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
        gpus = fleet_gpus()
        self.gpus.sync(gpus)
        self.operator.sync(apis, gpus)


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
