# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SIMULATION of the vCluster control-plane pod (loft-sh/vcluster's chart and syncer), one per tenant release.

A part of the lab controller (controller.py), which runs it every second. The vCluster image
cannot run here (no pods), so for each vCluster release (StatefulSet labelled `app=vcluster`, as
the chart creates it) it starts a real etcd + kube-apiserver and publishes its kubeconfig as the
chart would, in secret `vc-<release>` key `config`, and reports the release's pod Ready; when the
release goes, so does the control plane. With privateNodes.enabled (read from secret
vc-config-<release>, as the chart writes vcluster.yaml) the control plane also gets its own
kube-controller-manager and kubeadm's join objects, and nodes join it at its
controlPlane.endpoint, where join_endpoint_sim.py plays the vCluster Service (the API behind TLS
and the node join script). Sources: loft-sh/vcluster `chart/templates/`, `config/config.go`,
`pkg/pro/privatenodes.go` (vCluster docs, "Private nodes"). The pod sync itself is not simulated:
no tenant pod runs.
"""
from __future__ import annotations

import base64
import json
import logging
import sys

import yaml

from gpucloud_lab.core import config
from gpucloud_lab.core.util import daemon_pid, run, start_daemon, stop_unit
from gpucloud_lab.infra import kube, kubeadm_init, pki, tools
from gpucloud_lab.infra.kubeapi import JSON, Api, is_ready
from gpucloud_lab.sim.kubelet_standin_sim import running_status

LOG = logging.getLogger("lab-controller")
TENANTS_FILE = config.STATE_DIR / "controller" / "tenant-control-planes.json"
TENANT_PORT_BASE = 7443
TENANT_ETCD_BASE = 12379


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
            for unit in (old.unit("kube-scheduler"), old.unit("kube-controller-manager"), old.unit("kube-apiserver"),
                         self._endpoint_unit(rec)):
                stop_unit(unit)
        server = self._server(rec)
        started = False
        if server.states()["kube-apiserver"] != "ready":
            LOG.info("vcluster %s: starting its control plane at %s", key, server.server)
            server.up()
            started = True
        if rec.get("private"):
            self._private_nodes(rec, server, started)
        self._service(rec, server)
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
        service = plane.get("service") or {}
        exposed = (service.get("spec") or {}).get("type") in ("NodePort", "LoadBalancer")
        wanted = {"private": bool((values.get("privateNodes") or {}).get("enabled")),
                  "endpoint": str(plane.get("endpoint") or ""),
                  "sans": [str(n) for n in (plane.get("proxy") or {}).get("extraSANs") or []],
                  "node_port": int(service.get("httpsNodePort") or 0) if exposed else 0,
                  "server": str((values.get("exportKubeConfig") or {}).get("server") or "")}
        defaults = (("private", False), ("endpoint", ""), ("sans", []), ("node_port", 0), ("server", ""))
        if all(rec.get(k, d) == wanted[k] for k, d in defaults):
            return False
        had = "private" in rec
        rec.update(wanted)
        self._save()
        return had

    def _private_nodes(self, rec: JSON, server: kube.ApiServer, started: bool) -> None:
        """What a vCluster with privateNodes.enabled offers nodes: kubeadm's join objects with the
        endpoint as controlPlaneEndpoint, and the endpoint itself (the vCluster Service, played by
        join_endpoint_sim.py, started by _service)."""
        endpoint = self._join_endpoint(rec, server)
        if started or not rec.get("join_objects"):
            manifest = kubeadm_init.manifest(f"https://{endpoint}", endpoint, config.CONTROL_PLANE.name,
                                             server.ip, server.port)
            run([str(tools.TOOLS_DIR / "kubectl"), f"--kubeconfig={server.kubeconfig}", "apply", "--server-side",
                 "--force-conflicts", "--field-manager=gpucloud-lab", "--filename=-"], input=manifest)
            rec["join_objects"] = True
            self._save()

    def _service(self, rec: JSON, server: kube.ApiServer) -> None:
        """The vCluster pod behind its Service's NodePort on the host cluster's node (the control-plane
        host): the API behind TLS and, with private nodes, the join script (join_endpoint_sim.py)."""
        unit = self._endpoint_unit(rec)
        if not rec.get("node_port") or daemon_pid(unit):
            return
        listen = f"{config.CONTROL_PLANE.ip}:{rec['node_port']}"
        LOG.info("vcluster %s/%s: Service NodePort %s -> %s", rec["namespace"], rec["release"], listen, server.server)
        cert, key = server.serving_cert()
        pki.issue("front-proxy-client", "/CN=front-proxy-client")  # the endpoint's identity towards the API server
        join = [self._join_endpoint(rec, server)] if rec.get("private") else []
        start_daemon(unit, ["ip", "netns", "exec", server.netns, sys.executable, "-m",
                            "gpucloud_lab.sim.join_endpoint_sim", listen, f"{server.ip}:{server.port}",
                            str(cert), str(key), *join],
                     env={"PYTHONPATH": str(config.LAB_DIR)})

    @staticmethod
    def _join_endpoint(rec: JSON, server: kube.ApiServer) -> str:
        endpoint = rec.get("endpoint") or f"{server.ip}:{server.port}"
        return endpoint if ":" in endpoint else endpoint + ":443"

    @staticmethod
    def _endpoint_unit(rec: JSON) -> str:
        return f"vc-endpoint-{rec['namespace']}-{rec['release']}"

    def _pods_ready(self, rec: JSON) -> None:
        """The control-plane pod runs (here: its API server does), so its Pod reports Ready."""
        selector = f"app%3Dvcluster%2Crelease%3D{rec['release']}"
        for pod in self.host_api.items(f"/api/v1/namespaces/{rec['namespace']}/pods?labelSelector={selector}"):
            if not is_ready(pod):
                path = f"/api/v1/namespaces/{rec['namespace']}/pods/{pod['metadata']['name']}/status"
                self.host_api.patch(path, {"status": _running_pod_status(pod)})

    def _publish(self, rec: JSON, server: kube.ApiServer) -> None:
        path = f"/api/v1/namespaces/{rec['namespace']}/secrets/vc-{rec['release']}"
        cfg = yaml.safe_load(server.kubeconfig.read_bytes())
        if rec.get("server"):  # exportKubeConfig.server, as the chart's kubeconfig export writes it
            cfg["clusters"][0]["cluster"]["server"] = rec["server"]
        kubeconfig = yaml.safe_dump(cfg, sort_keys=False).encode()
        existing = self.host_api.get(path)
        if existing and existing.get("data", {}).get("config") == base64.b64encode(kubeconfig).decode():
            return
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


def _running_pod_status(pod: JSON) -> JSON:
    """The control-plane pod runs on the control-plane host: its kubelet's Running status, with the pod's IP."""
    return dict(running_status(pod, host_ip=config.CONTROL_PLANE.ip), podIP=config.CONTROL_PLANE.ip)
