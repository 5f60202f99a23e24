# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plays the vCluster pod behind a tenant's Service: its API behind TLS, and the node join script.

A tenant's vCluster is reached through its Service (443 -> 8443 of the control-plane pod), which the
collection exposes (here: a NodePort on the host cluster's node); a private tenant's nodes reach it at
``controlPlane.endpoint`` (the tenant's WireGuard hub address, port 443), which the collection's WireGuard
gateway forwards to that Service. Behind the Service the vCluster binary terminates TLS, serves the
Kubernetes API, and, with private nodes, serves ``GET /node/join?token=<bootstrap token>``, the script of
``vcluster token create`` (vCluster Pro, closed source: it installs the Kubernetes binaries, enables
containerd and the kubelet, and runs a normal ``kubeadm join``, per vCluster's private-nodes docs). In the
lab the tenant API server listens on the control-plane host's management address, and this process,
started by the lab controller (vcluster_sim.py) in that host's network namespace, listens on the Service's
NodePort on that address (where kube-proxy would take it to the pod) and plays the pod:

* TLS with the tenant API server's own serving certificate (it carries the endpoint and the exposed
  address as SANs); HTTP/1.1 only (ALPN), as clients fall back to it.
* ``/node/join?token=T`` (private nodes only): the token must be a live bootstrap token of the tenant
  cluster (``kube-system/bootstrap-token-<id>`` with the same secret, usable for authentication, not
  expired), else 401 and no script. The script is the lab's stand-in for vCluster's: it checks that
  kubeadm and the kubelet are installed (lab hosts have them; installing them is what the real script
  adds) and runs ``kubeadm join <controlPlane.endpoint> --token T --discovery-token-ca-cert-hash ...``.
* Everything else goes to the API server. A client that shows a certificate of the cluster CA (a
  kubelet after its TLS bootstrap) is passed on with kube-apiserver's front-proxy headers
  (``X-Remote-User``/``X-Remote-Group`` from the certificate's CN/O, over a connection with the
  ``front-proxy-client`` certificate the API server trusts through ``--requestheader-*``), so the
  API server sees the node's own identity. Any other client (bootstrap token, anonymous discovery)
  is passed on as it is, over a connection without a client certificate. Client-sent
  ``X-Remote-*`` headers are dropped.

Not here: forwarding the hub address to the Service. That is the collection's part (the role
private_node_join's nftables rules on the gateway), as on a site.

Usage: python -m gpucloud_lab.sim.join_endpoint_sim LISTEN_IP:PORT TARGET_IP:PORT CERT KEY [JOIN_ENDPOINT]
"""
from __future__ import annotations

import asyncio
import base64
import datetime
import json
import re
import socket
import ssl
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

import yaml

from gpucloud_lab.core import config
from gpucloud_lab.infra import pki

TOKEN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")  # kubeadm's bootstrap token format
# kubeadm preflight checks a lab host cannot pass, with the reasons, are kept in one place: the lab inventory's
# node_join_ignore_preflight_errors. The real script runs on an installed GPU node, which passes them.
GPU_NODE_VARS = config.REPO_DIR / "inventories" / "lab" / "group_vars" / "gpu_nodes.yml"
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade"}


@dataclass(frozen=True)
class Endpoint:
    listen: tuple[str, int]
    target: tuple[str, int]
    cert: str
    key: str
    join: str = ""  # controlPlane.endpoint (host:port) where private nodes join; empty: no join script

    @property
    def name(self) -> str:
        return f"{self.listen[0]}:{self.listen[1]}"

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.cert, self.key)
        ctx.load_verify_locations(str(pki.CA_CERT))
        ctx.verify_mode = ssl.CERT_OPTIONAL  # kubelets show one; kubeadm and curl do not
        ctx.set_alpn_protocols(["http/1.1"])
        return ctx

    def upstream_context(self, identity: str) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(pki.CA_CERT))
        if identity == "front-proxy":
            ctx.load_cert_chain(*map(str, pki.issue("front-proxy-client", "/CN=front-proxy-client")))
        elif identity == "admin":
            ctx.load_cert_chain(*map(str, pki.issue("admin", "/O=system:masters/CN=gpucloud-lab-admin")))
        ctx.set_alpn_protocols(["http/1.1"])
        return ctx


def identity_of(peercert: dict | None) -> tuple[str, list[str]] | None:
    """(user, groups) from a verified client certificate, as kube-apiserver's x509 authenticator reads it."""
    if not peercert:
        return None
    user, groups = "", []
    for rdn in peercert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                user = value
            elif key == "organizationName":
                groups.append(value)
    return (user, groups) if user else None


def ca_cert_hash() -> str:
    """sha256 of the CA's public key (SubjectPublicKeyInfo), as --discovery-token-ca-cert-hash takes it."""
    pub = subprocess.run(["openssl", "x509", "-in", str(pki.CA_CERT), "-noout", "-pubkey"],
                         check=True, capture_output=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "DER"], input=pub,
                         check=True, capture_output=True).stdout
    digest = subprocess.run(["openssl", "dgst", "-sha256", "-hex"], input=der,
                            check=True, capture_output=True).stdout.decode().split()[-1]
    return f"sha256:{digest}"


def token_problem(endpoint: Endpoint, token: str, now: datetime.datetime | None = None) -> str | None:
    """None when ``token`` is a live bootstrap token of the tenant cluster, else why not."""
    match = TOKEN.match(token)
    if not match:
        return "the token is not a bootstrap token ([a-z0-9]{6}.[a-z0-9]{16})"
    token_id, token_secret = match.groups()
    url = f"https://{endpoint.target[0]}:{endpoint.target[1]}/api/v1/namespaces/kube-system/secrets/bootstrap-token-{token_id}"
    try:
        with urllib.request.urlopen(url, context=endpoint.upstream_context("admin"), timeout=5) as response:
            secret = json.load(response)
    except urllib.error.HTTPError as exc:
        return "no such token" if exc.code == 404 else f"the API server answered {exc.code}"
    data = {k: base64.b64decode(v).decode() for k, v in (secret.get("data") or {}).items()}
    if data.get("token-secret") != token_secret or data.get("usage-bootstrap-authentication") != "true":
        return "no such token"
    expires = data.get("expiration")
    if expires:
        when = datetime.datetime.fromisoformat(expires.replace("Z", "+00:00"))
        if when <= (now or datetime.datetime.now(datetime.UTC)):
            return "the token has expired"
    return None


def lab_preflight_ignores() -> list[str]:
    return list(yaml.safe_load(GPU_NODE_VARS.read_text()).get("node_join_ignore_preflight_errors") or [])


def join_script(endpoint: Endpoint, token: str, ca_hash: str) -> str:
    ignores = ",".join(lab_preflight_ignores())
    return (
        "#!/bin/sh\n"
        "# gpucloud lab: stand-in for vCluster's node join script (GET /node/join). The real one also installs\n"
        "# the Kubernetes binaries and enables containerd and the kubelet; lab hosts have them already.\n"
        "set -eu\n"
        "for tool in kubeadm kubelet; do\n"
        "  command -v \"$tool\" >/dev/null 2>&1 || { echo \"node join: $tool is not installed\" >&2; exit 1; }\n"
        "done\n"
        f"exec kubeadm join {endpoint.join} --token {token} --discovery-token-ca-cert-hash {ca_hash} \\\n"
        f"  --ignore-preflight-errors={ignores}\n"
    )


def _response(status: str, body: bytes, content_type: str) -> bytes:
    head = (f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n")
    return head.encode() + body


async def _serve_join(endpoint: Endpoint, method: str, target: str, writer: asyncio.StreamWriter,
                      ca_hash: str) -> None:
    if method != "GET":
        writer.write(_response("405 Method Not Allowed", b"GET only\n", "text/plain"))
        return
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(target).query)
    token = (query.get("token") or [""])[0]
    problem = await asyncio.to_thread(token_problem, endpoint, token)
    token_id = token.split(".")[0] if TOKEN.match(token) else "(malformed)"
    print(f"node join {endpoint.name}: token id {token_id}: {problem or 'script served'}", file=sys.stderr, flush=True)
    if problem:
        writer.write(_response("401 Unauthorized", f"node join refused: {problem}\n".encode(), "text/plain"))
        return
    writer.write(_response("200 OK", join_script(endpoint, token, ca_hash).encode(), "text/x-shellscript"))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def _relay_body(headers: list[tuple[str, str]], reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
    fields = {k.lower(): v for k, v in headers}
    if "chunked" in fields.get("transfer-encoding", "").lower():
        while True:
            size_line = await reader.readuntil(b"\r\n")
            writer.write(size_line)
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while (trailer := await reader.readuntil(b"\r\n")) != b"\r\n":
                    writer.write(trailer)
                writer.write(b"\r\n")
                break
            writer.write(await reader.readexactly(size + 2))
    elif int(fields.get("content-length", "0") or 0) > 0:
        writer.write(await reader.readexactly(int(fields["content-length"])))
    await writer.drain()


def _request_head(request_line: str, headers: list[tuple[str, str]], who: tuple[str, list[str]] | None) -> bytes:
    kept = [(k, v) for k, v in headers if not k.lower().startswith("x-remote-")]
    if who:
        user, groups = who
        kept += [("X-Remote-User", user)] + [("X-Remote-Group", g) for g in groups]
    return (request_line + "\r\n" + "".join(f"{k}: {v}\r\n" for k, v in kept) + "\r\n").encode()


def _parse_head(head: bytes) -> tuple[str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    headers = []
    for line in lines[1:]:
        if line:
            key, _sep, value = line.partition(":")
            headers.append((key.strip(), value.strip()))
    return lines[0], headers


async def _handle(endpoint: Endpoint, ca_hash: str, reader: asyncio.StreamReader,
                  writer: asyncio.StreamWriter) -> None:
    who = identity_of(writer.get_extra_info("peercert"))
    up_writer: asyncio.StreamWriter | None = None
    pump: asyncio.Task | None = None
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                break
            request_line, headers = _parse_head(head)
            method, target = [*request_line.split(" "), "", ""][:2]
            if urllib.parse.urlsplit(target).path == "/node/join" and up_writer is None and endpoint.join:
                await _serve_join(endpoint, method, target, writer, ca_hash)
                await writer.drain()
                break
            if up_writer is None:
                up_reader, up_writer = await asyncio.open_connection(
                    *endpoint.target, ssl=endpoint.upstream_context("front-proxy" if who else "none"),
                    server_hostname=endpoint.target[0])
                pump = asyncio.create_task(_pipe(up_reader, writer))
            up_writer.write(_request_head(request_line, headers, who))
            await _relay_body(headers, reader, up_writer)
            if any(k.lower() == "upgrade" for k, _v in headers):
                await _pipe(reader, up_writer)  # the connection is the upgraded protocol's from here on
                break
    except (ConnectionError, OSError, asyncio.IncompleteReadError, ValueError):
        pass
    finally:
        # The client is gone (or the API server closed, which ended the pump): nothing is left to answer.
        if up_writer is not None:
            up_writer.close()
        if pump is not None:
            pump.cancel()
        writer.close()


async def serve(endpoint: Endpoint) -> None:
    ca_hash = ca_cert_hash()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(endpoint.listen)
    server = await asyncio.start_server(lambda r, w: _handle(endpoint, ca_hash, r, w), sock=sock,
                                        ssl=endpoint.server_context())
    async with server:
        await server.serve_forever()


def _address(text: str) -> tuple[str, int]:
    host, port = text.rsplit(":", 1)
    return host, int(port)


def main() -> int:
    if len(sys.argv) not in (5, 6):
        print(__doc__, file=sys.stderr)
        return 2
    join = sys.argv[5] if len(sys.argv) == 6 else ""
    asyncio.run(serve(Endpoint(_address(sys.argv[1]), _address(sys.argv[2]), sys.argv[3], sys.argv[4], join)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
