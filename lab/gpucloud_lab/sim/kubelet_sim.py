# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""THE LAB'S SIMULATED KUBELET: /usr/bin/kubelet of the lab mirror's `kubelet` package (infra/pkg_mirror.py).

It runs no pods.

The lab's GPU, GPU Operator and KAI simulations serve the Nodes of this kubelet (no GPU exists here; the real
kubelet, which runs pods, is the mirror's second repository's: infra/pkg_mirror.py,
tests/integration/test_real_kubelet.py). Everything a node does to *join* runs for real, as the kubelet does it
(kubernetes 1.20 pkg/kubelet/certificate/bootstrap/bootstrap.go, pkg/kubelet/kubelet_node_status.go,
pkg/kubelet/nodelease):

* flags as kubeadm's systemd drop-in passes them (`--bootstrap-kubeconfig`,
  `--kubeconfig`, `--config`, `--hostname-override`, `--node-labels`,
  `--register-with-taints` as kubeadm writes a JoinConfiguration's nodeRegistration.taints
  (`key=value:Effect,...`, kubeadm app/phases/kubelet/flags.go); others are accepted and ignored);
  without its `--config` file it exits 1, as the
  kubelet does, and systemd restarts it;
* TLS bootstrap: when `--kubeconfig` is missing, it authenticates with the
  bootstrap kubeconfig's token, generates a key on the node, creates a
  CertificateSigningRequest (signer kubernetes.io/kube-apiserver-client-kubelet,
  CN system:node:<name>, O system:nodes), waits for kube-controller-manager to
  approve and sign it, stores cert + key in /var/lib/kubelet/pki/
  kubelet-client-<time>.pem with the kubelet-client-current.pem link and writes
  `--kubeconfig` pointing at it;
* with that identity (the Node authorizer and NodeRestriction apply): registers
  its Node, posts status Ready, renews its Lease in kube-node-lease every 10 s
  and its Ready condition every 40 s;
* healthz on 127.0.0.1:10248, which `kubeadm join` waits for.

Stdlib + the openssl command only: lab hosts have python3 and openssl, nothing else.
"""
from __future__ import annotations

import base64
import datetime
import hashlib
import http.server
import json
import os
import platform
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

VERSION = "v1.20.2"
PKI = Path("/var/lib/kubelet/pki")
CURRENT = PKI / "kubelet-client-current.pem"
SIGNER = "kubernetes.io/kube-apiserver-client-kubelet"
USAGES = ["digital signature", "key encipherment", "client auth"]
JSON = dict[str, Any]


def log(message: str) -> None:
    print(f"kubelet (gpucloud-lab simulation): {message}", flush=True)


def parse_flags(argv: list[str]) -> dict[str, str]:
    flags: dict[str, str] = {}
    for arg in argv:
        if arg.startswith("--"):
            key, _sep, value = arg[2:].partition("=")
            flags[key] = value if _sep else "true"
    return flags


def kubeconfig_fields(path: Path) -> dict[str, str]:
    """The first value of each key of a single-cluster kubeconfig (YAML as kubeadm and kubectl write it, or JSON)."""
    text = path.read_text()
    fields: dict[str, str] = {}
    for key, value in re.findall(r'^[\s-]*"?([a-z-]+)"?\s*:\s*"?([^"\s,]+)"?,?\s*$', text, re.MULTILINE):
        fields.setdefault(key, value)
    return fields


class Client:
    """A REST client with either a bearer token or a client certificate."""

    def __init__(self, server: str, ca_pem: bytes, token: str | None = None, cert_file: Path | None = None) -> None:
        self.server = server.rstrip("/")
        self.token = token
        self.context = ssl.create_default_context(cadata=ca_pem.decode())
        if cert_file is not None:
            self.context.load_cert_chain(str(cert_file))

    def request(self, method: str, path: str, body: JSON | None = None,
                content_type: str = "application/json") -> tuple[int, JSON]:
        headers = {"Content-Type": content_type, "Accept": "application/json",
                   "User-Agent": f"kubelet/{VERSION} (linux/amd64) gpucloud-lab-simulation"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.server + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, context=self.context, timeout=10) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as err:
            try:
                return err.code, json.loads(err.read() or b"{}")
            except ValueError:
                return err.code, {}


def openssl(*args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["openssl", *args], input=data, capture_output=True, check=True).stdout


def csr_name(key_pem: bytes, subject: str) -> str:
    """node-csr-<digest of public key, subject and usages>, as the kubelet names its CSRs."""
    public = openssl("pkey", "-pubout", "-outform", "DER", data=key_pem)
    digest = hashlib.sha512(public + subject.encode() + "|".join(USAGES).encode()).digest()
    return "node-csr-" + base64.urlsafe_b64encode(digest).decode().rstrip("=")


def bootstrap(flags: dict[str, str], node: str, kubeconfig: Path) -> None:
    """The TLS bootstrap: bootstrap token -> CSR -> signed client certificate -> kubeconfig."""
    boot = Path(flags.get("bootstrap-kubeconfig", ""))
    if not boot.is_file():
        raise SystemExit(f"unable to load bootstrap kubeconfig: stat {boot}: no such file or directory")
    fields = kubeconfig_fields(boot)
    ca_pem = base64.b64decode(fields["certificate-authority-data"])
    client = Client(fields["server"], ca_pem, token=fields.get("token"))
    PKI.mkdir(parents=True, exist_ok=True)
    key_file = PKI / "kubelet-client.key.tmp"
    if not key_file.exists():
        key_file.write_bytes(openssl("ecparam", "-genkey", "-name", "prime256v1", "-noout"))
        key_file.chmod(0o600)
    key_pem = key_file.read_bytes()
    subject = f"/O=system:nodes/CN=system:node:{node}"
    with tempfile.NamedTemporaryFile() as keytmp:
        keytmp.write(key_pem)
        keytmp.flush()
        csr_pem = openssl("req", "-new", "-key", keytmp.name, "-subj", subject)
    name = csr_name(key_pem, subject)
    csr = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name},
           "spec": {"request": base64.b64encode(csr_pem).decode(), "signerName": SIGNER, "usages": USAGES}}
    code, body = client.request("POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", csr)
    if code not in (201, 409):
        raise SystemExit(f"failed to create CSR {name}: {code} {body.get('message', body)}")
    log(f"certificate signing request {name} created as the bootstrap token user; waiting for it to be signed")
    cert_pem = wait_signed(client, name)
    stamp = time.strftime("%Y-%m-%d-%H-%M-%S")
    pem = PKI / f"kubelet-client-{stamp}.pem"
    pem.write_bytes(cert_pem + key_pem)
    pem.chmod(0o600)
    tmp_link = PKI / "kubelet-client-current.pem.tmp"
    tmp_link.unlink(missing_ok=True)
    tmp_link.symlink_to(pem)
    tmp_link.rename(CURRENT)
    key_file.unlink()
    write_kubeconfig(kubeconfig, fields["server"], fields["certificate-authority-data"])
    log(f"TLS bootstrap done: client certificate {CURRENT}, kubeconfig {kubeconfig}")


def wait_signed(client: Client, name: str, timeout: float = 3600) -> bytes:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code, body = client.request("GET", f"/apis/certificates.k8s.io/v1/certificatesigningrequests/{name}")
        if code == 200:
            conditions = {c.get("type") for c in body.get("status", {}).get("conditions", [])}
            if conditions & {"Denied", "Failed"}:
                raise SystemExit(f"certificate signing request {name} was {sorted(conditions)}")
            if body.get("status", {}).get("certificate"):
                return base64.b64decode(body["status"]["certificate"])
        time.sleep(1)
    raise SystemExit(f"timed out waiting for certificate signing request {name}")


def write_kubeconfig(path: Path, server: str, ca_data: str) -> None:
    """What the kubelet writes after its TLS bootstrap (client cert and key both in the -current file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = ("apiVersion: v1\nclusters:\n- cluster:\n"
            f"    certificate-authority-data: {ca_data}\n    server: {server}\n  name: default-cluster\n"
            "contexts:\n- context:\n    cluster: default-cluster\n    namespace: default\n"
            "    user: default-auth\n  name: default-context\ncurrent-context: default-context\n"
            "kind: Config\npreferences: {}\nusers:\n- name: default-auth\n  user:\n"
            f"    client-certificate: {CURRENT}\n    client-key: {CURRENT}\n")
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.chmod(0o600)
    tmp.rename(path)


def now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_ip(flags: dict[str, str] | None = None) -> str:
    """--node-ip if given (kubelet_node_status.go: validateNodeIP refuses an address the host does not have),
    else the address of the route out, as the kubelet picks it."""
    wanted = (flags or {}).get("node-ip", "")
    if wanted:
        family = socket.AF_INET6 if ":" in wanted else socket.AF_INET
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as sock:
                sock.bind((wanted, 0))
        except OSError as err:
            raise RuntimeError(f"failed to validate nodeIP: node IP: {wanted!r} not found in the host's network "
                               "interfaces") from err
        return wanted
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.connect(("198.51.100.254", 9))
            return str(sock.getsockname()[0])
    except OSError:
        return "127.0.0.1"


def node_status(node: str, ip: str, transition: str) -> JSON:
    resources = {"cpu": str(os.cpu_count() or 1), "memory": "512Gi", "pods": "110", "ephemeral-storage": "1Ti"}
    return {
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "message": "kubelet is posting ready status (gpucloud-lab simulated kubelet: runs no pods)",
                        "lastHeartbeatTime": now(), "lastTransitionTime": transition}],
        "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": node}],
        "capacity": resources, "allocatable": resources,
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {"kubeletVersion": VERSION, "kubeProxyVersion": VERSION, "operatingSystem": "linux",
                     "architecture": "amd64", "containerRuntimeVersion": "containerd://1.6.20",
                     "osImage": "Debian GNU/Linux 12 (bookworm)", "kernelVersion": platform.release(),
                     "machineID": Path("/etc/machine-id").read_text().strip(), "systemUUID": "", "bootID": ""},
    }


def register(client: Client, node: str, labels: dict[str, str], taints: list[JSON] | None = None) -> None:
    """As kubelet_node_status.go's initialNode: labels, and the --register-with-taints taints in spec.taints."""
    body = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node, "labels": {"kubernetes.io/hostname": node, "kubernetes.io/os": "linux",
                                                  "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                                                  "beta.kubernetes.io/arch": "amd64", **labels},
                         "annotations": {"volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
            "spec": {"taints": taints} if taints else {}}
    code, answer = client.request("POST", "/api/v1/nodes", body)
    if code == 201:
        log(f"successfully registered node {node}")
    elif code != 409:
        raise RuntimeError(f"unable to register node {node} with API server: {code} {answer.get('message', '')}")


def renew_lease(client: Client, node: str) -> None:
    path = f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{node}"
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    spec = {"holderIdentity": node, "leaseDurationSeconds": 40, "renewTime": stamp}
    code, lease = client.request("GET", path)
    if code == 404:
        client.request("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
                       {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                        "metadata": {"name": node, "namespace": "kube-node-lease"}, "spec": spec})
    elif code == 200:
        lease["spec"] = {**lease.get("spec", {}), **spec}
        client.request("PUT", path, lease)


def serve_healthz(flags: dict[str, str]) -> None:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/healthz" else 404)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(flags.get("healthz-port", "10248"))), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()


def node_labels(flags: dict[str, str]) -> dict[str, str]:
    pairs = [p.split("=", 1) for p in flags.get("node-labels", "").split(",") if "=" in p]
    return dict(pairs)


def register_taints(flags: dict[str, str]) -> list[JSON]:
    """``--register-with-taints key=value:Effect,key:Effect`` (the kubelet's taint syntax); a malformed one is
    an error at start, as the kubelet's flag parsing makes it."""
    taints = []
    for item in filter(None, flags.get("register-with-taints", "").split(",")):
        spec, _sep, effect = item.rpartition(":")
        key, _eq, value = spec.partition("=")
        if not key or effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise SystemExit(f"invalid argument {item!r} for \"--register-with-taints\" flag")
        taints.append({"key": key, "effect": effect, **({"value": value} if value else {})})
    return taints


def main(argv: list[str]) -> int:
    flags = parse_flags(argv)
    if "version" in flags:
        print(f"Kubernetes {VERSION}")
        return 0
    config = Path(flags.get("config", ""))
    if flags.get("config") and not config.is_file():
        log(f"failed to load Kubelet config file {config}: no such file or directory")
        return 1
    node = (flags.get("hostname-override") or socket.gethostname()).lower()
    kubeconfig = Path(flags.get("kubeconfig", "/etc/kubernetes/kubelet.conf"))
    ip = node_ip(flags)
    serve_healthz(flags)
    if not (kubeconfig.is_file() and CURRENT.exists()):
        bootstrap(flags, node, kubeconfig)
    fields = kubeconfig_fields(kubeconfig)
    client = Client(fields["server"], base64.b64decode(fields["certificate-authority-data"]),
                    cert_file=Path(fields.get("client-certificate", CURRENT)))
    register(client, node, node_labels(flags), register_taints(flags))
    transition, last_status = now(), 0.0
    while True:
        if time.monotonic() - last_status >= 40:
            code, answer = client.request("PATCH", f"/api/v1/nodes/{node}/status",
                                          {"status": node_status(node, ip, transition)},
                                          "application/strategic-merge-patch+json")
            if code != 200:
                log(f"error updating node status: {code} {answer.get('message', '')}")
            last_status = time.monotonic()
        renew_lease(client, node)
        time.sleep(10)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (OSError, subprocess.CalledProcessError, RuntimeError, KeyError) as err:
        log(f"failed: {err}")
        sys.exit(1)
