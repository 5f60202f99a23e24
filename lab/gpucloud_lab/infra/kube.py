# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real Kubernetes API servers: etcd + kube-apiserver (+ kube-controller-manager and kube-scheduler where nodes
join).

They run as lab processes inside the control-plane host's network namespace,
so the API answers on that host's address as it would in a rack, while the
binaries come from the machine (built once, cached) and the host's own
systemd stays free for what the roles put there.
"""
from __future__ import annotations

import hashlib
import ipaddress
import shutil
import ssl
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from gpucloud_lab.core import config
from gpucloud_lab.core.util import daemon_pid, run, say, start_daemon, stop_unit, wait_for
from gpucloud_lab.infra import pki

BIN_DIR = config.CACHE_DIR / f"kubernetes-{config.KUBERNETES_VERSION}"
BUILDER = config.LAB_DIR / "lib" / "build-kubernetes.sh"
SERVICE_CIDR = "10.96.0.0/12"


# pause (and pause.tag, its version): the binary of the site registry's pause image (infra/registry.py).
# kubelet: the real one, which the package mirror's second repository carries (infra/pkg_mirror.py).
BINARIES = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubeadm", "kubectl", "kubelet", "pause",
            "pause.tag")


def ensure_binaries() -> None:
    if all((BIN_DIR / name).exists() for name in BINARIES):
        return
    say(f"building Kubernetes {config.KUBERNETES_VERSION} from Debian's source package (once; cached in {BIN_DIR})")
    run([str(BUILDER), str(BIN_DIR)], quiet=False)


@dataclass(frozen=True)
class ApiServer:
    """One Kubernetes control plane: its etcd, its API server, optionally its controller-manager."""

    name: str
    netns: str
    ip: str
    port: int
    etcd_port: int
    # kube-controller-manager and kube-scheduler: the control plane of a cluster that nodes join.
    controllers: bool = False
    kubeconfig: Path = config.KUBECONFIG
    # More names in the serving certificate (a vCluster's controlPlane.proxy.extraSANs).
    extra_sans: tuple[str, ...] = ()

    @property
    def server(self) -> str:
        return f"https://{self.ip}:{self.port}"

    @property
    def data_dir(self) -> Path:
        return config.STATE_DIR / "kube" / self.name

    def unit(self, part: str) -> str:
        return f"{part}-{self.name}"

    def _exec(self, *cmd: str) -> list[str]:
        return ["ip", "netns", "exec", self.netns, *cmd]

    def etcd_command(self) -> list[str]:
        client, peer = f"http://127.0.0.1:{self.etcd_port}", f"http://127.0.0.1:{self.etcd_port + 1}"
        return self._exec(
            "etcd", f"--name={self.name}", f"--data-dir={self.data_dir / 'etcd'}",
            f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster={self.name}={peer}", "--snapshot-count=5000", "--log-level=warn",
        )

    def serving_cert(self) -> tuple[Path, Path]:
        """The API server's serving certificate and key (also shown by sim/join_endpoint_sim.py)."""
        sans = self.sans()
        # The certificate is made once per name: other SANs make another certificate.
        suffix = "-" + hashlib.sha256(",".join(sans).encode()).hexdigest()[:8] if self.extra_sans else ""
        return pki.issue(f"apiserver-{self.name}{suffix}", f"/CN=kube-apiserver-{self.name}", sans, server=True)

    def apiserver_command(self) -> list[str]:
        cert, key = self.serving_cert()
        kubelet_client = pki.issue("apiserver-kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client")
        return self._exec(
            str(BIN_DIR / "kube-apiserver"),
            f"--etcd-servers=http://127.0.0.1:{self.etcd_port}", f"--etcd-prefix=/registry-{self.name}",
            f"--bind-address={self.ip}", f"--advertise-address={self.ip}", f"--secure-port={self.port}",
            "--insecure-port=0", f"--tls-cert-file={cert}", f"--tls-private-key-file={key}",
            f"--client-ca-file={pki.CA_CERT}", "--authorization-mode=Node,RBAC", "--allow-privileged=true",
            # As kubeadm sets them: a front proxy (here a tenant's join_endpoint_sim.py) passes on the identity of the
            # client certificate it verified; only a certificate named front-proxy-client may.
            f"--requestheader-client-ca-file={pki.CA_CERT}", "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            # As kubeadm sets them: nodes join with bootstrap tokens and may touch only their own Node.
            "--enable-bootstrap-token-auth=true", "--enable-admission-plugins=NodeRestriction",
            f"--service-account-key-file={pki.SA_PUB}", f"--service-account-signing-key-file={pki.SA_KEY}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-cluster-ip-range={SERVICE_CIDR}", "--profiling=false", "--v=1",
            f"--cert-dir={self.data_dir / 'cert'}",
            # As kubeadm 1.20 issues it (apiserver-kubelet-client, O=system:masters): the API server's identity at a
            # kubelet, for logs, exec and port-forward; a kubelet's Webhook authorization asks this API about it.
            f"--kubelet-client-certificate={kubelet_client[0]}", f"--kubelet-client-key={kubelet_client[1]}",
            "--kubelet-preferred-address-types=InternalIP,Hostname",
        )

    def controller_manager_command(self) -> list[str]:
        return self._exec(
            str(BIN_DIR / "kube-controller-manager"), f"--kubeconfig={self.kubeconfig}",
            f"--service-account-private-key-file={pki.SA_KEY}", f"--root-ca-file={pki.CA_CERT}",
            f"--cluster-signing-cert-file={pki.CA_CERT}", f"--cluster-signing-key-file={pki.CA_KEY}",
            # Nodes the lab controller registers do not heartbeat, so the node lifecycle controller stays off.
            # bootstrapsigner (signs cluster-info per token) and tokencleaner are off in `*`; kubeadm turns them on.
            "--controllers=*,bootstrapsigner,tokencleaner,-nodelifecycle", "--leader-elect=false", "--port=0",
            "--secure-port=0",
            "--use-service-account-credentials=false", "--v=1",
        )

    def scheduler_command(self) -> list[str]:
        """The real kube-scheduler (default profile): binds pods of schedulerName default-scheduler. KAI's pods
        (schedulerName kai-scheduler) are the KAI simulation's (sim/kai_scheduler_sim.py)."""
        return self._exec(
            str(BIN_DIR / "kube-scheduler"), f"--kubeconfig={self.kubeconfig}", "--leader-elect=false", "--port=0",
            "--secure-port=0", f"--authentication-kubeconfig={self.kubeconfig}",
            f"--authorization-kubeconfig={self.kubeconfig}", "--v=1",
        )

    def sans(self) -> list[str]:
        names = ["kubernetes", "kubernetes.default", "kubernetes.default.svc",
                 "kubernetes.default.svc.cluster.local", "localhost", self.name]
        extra = [f"IP:{n}" if _is_ip(n) else f"DNS:{n}" for n in self.extra_sans]
        return [f"IP:{self.ip}", "IP:127.0.0.1", "IP:10.96.0.1", *extra, *(f"DNS:{n}" for n in names)]

    def ready(self) -> bool:
        context = ssl.create_default_context(cafile=str(pki.CA_CERT))
        cert, key = pki.issue("admin", "/O=system:masters/CN=gpucloud-lab-admin")
        context.load_cert_chain(str(cert), str(key))
        try:
            with urllib.request.urlopen(f"{self.server}/readyz", context=context, timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def up(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        pki.ensure_ca()
        pki.write_kubeconfig(self.kubeconfig, self.server, f"gpucloud-lab-{self.name}")
        if not daemon_pid(self.unit("etcd")):
            start_daemon(self.unit("etcd"), self.etcd_command())
        if not daemon_pid(self.unit("kube-apiserver")):
            start_daemon(self.unit("kube-apiserver"), self.apiserver_command())
        wait_for(self.ready, f"kube-apiserver {self.name} at {self.server}", timeout=90, interval=0.5)
        if self.controllers and not daemon_pid(self.unit("kube-controller-manager")):
            start_daemon(self.unit("kube-controller-manager"), self.controller_manager_command())
        if self.controllers and not daemon_pid(self.unit("kube-scheduler")):
            start_daemon(self.unit("kube-scheduler"), self.scheduler_command())

    def down(self) -> None:
        for part in ("kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"):
            stop_unit(self.unit(part))
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def states(self) -> dict[str, str]:
        parts = ["etcd", "kube-apiserver"] + (["kube-controller-manager", "kube-scheduler"] if self.controllers else [])
        states = {p: "running" if daemon_pid(self.unit(p)) else "stopped" for p in parts}
        if states["kube-apiserver"] == "running":
            states["kube-apiserver"] = "ready" if self.ready() else "starting"
        return states


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


HOST_CLUSTER = ApiServer("host", config.CONTROL_PLANE.netns, config.CONTROL_PLANE.ip, config.API_PORT, 2379,
                         controllers=True)
