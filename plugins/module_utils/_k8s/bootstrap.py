# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bootstrap tokens and join discovery, as kubeadm and ``vcluster token create`` do them.

Private to the collection. Sources: kubernetes ``cmd/kubeadm/app/phases/bootstraptoken``,
``staging/src/k8s.io/cluster-bootstrap/token`` (api, util), kubeadm's ``pubkeypin`` (the
discovery hash is sha256 of the CA's SubjectPublicKeyInfo); loft-sh/vcluster
``cmd/vclusterctl/cmd/token/create.go`` (endpoint from ``kube-system/kubeadm-config``,
CA from ConfigMap ``kube-root-ca.crt``).
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from datetime import datetime, timedelta, timezone

from .client import Client, object_path
from .errors import TokenError

try:
    import yaml

    HAS_YAML = True
except ImportError:  # pragma: no cover - PyYAML comes with ansible-core
    HAS_YAML = False

TOKEN_CHARS = "0123456789abcdefghijklmnopqrstuvwxyz"
TOKEN_RE = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
SECRET_TYPE = "bootstrap.kubernetes.io/token"
DEFAULT_GROUP = "system:bootstrappers:kubeadm:default-node-token"
NAMESPACE = "kube-system"


def generate_token(choice=secrets.choice) -> tuple[str, str]:
    """(token id, token secret): 6 and 16 characters of [a-z0-9], from a CSPRNG."""
    token_id = "".join(choice(TOKEN_CHARS) for _index in range(6))
    return token_id, "".join(choice(TOKEN_CHARS) for _index in range(16))


def secret_name(token_id: str) -> str:
    return "bootstrap-token-" + token_id


def parse_ttl(ttl: str) -> timedelta:
    """``15m``, ``1h``, ``90s``, ``1h30m`` or plain seconds; must be positive."""
    text = str(ttl).strip()
    if text.isdigit():
        seconds = int(text)
    else:
        parts = re.findall(r"(\d+)([hms])", text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise TokenError(["ttl: %r is not a duration like 15m, 1h or 90s" % ttl])
        seconds = sum(int(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in parts)
    if seconds <= 0:
        raise TokenError(["ttl: %r must be positive (a join token must expire)" % ttl])
    return timedelta(seconds=seconds)


def expiration(ttl: timedelta, now: datetime | None = None) -> str:
    """RFC3339 in UTC, as kubeadm writes it (``2026-01-02T03:04:05Z``)."""
    utc = timezone.utc  # noqa: UP017 - module_utils also run on Pythons older than 3.11
    moment = (now or datetime.now(utc)) + ttl
    return moment.astimezone(utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def token_secret(
    token_id: str,
    token: str,
    expires: str,
    description: str,
    groups: list[str],
    usages: list[str],
    labels: dict | None = None,
) -> dict:
    """The Secret ``kube-system/bootstrap-token-<id>`` (string values in ``stringData``)."""
    data = {"token-id": token_id, "token-secret": token, "expiration": expires, "description": description}
    for usage in usages:
        data["usage-bootstrap-" + usage] = "true"
    if groups:
        data["auth-extra-groups"] = ",".join(groups)
    meta: dict = {"name": secret_name(token_id), "namespace": NAMESPACE}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Secret", "type": SECRET_TYPE, "metadata": meta, "stringData": data}


def validate_groups(groups: list[str]) -> list[str]:
    """kube-apiserver only accepts extra groups under ``system:bootstrappers:``."""
    prefix = "system:bootstrappers:"
    return ["groups: %r must start with %s" % (g, prefix) for g in groups if not g.startswith(prefix)]


# --- CA hash (discovery-token-ca-cert-hash) --------------------------------------------


def _der_element(der: bytes, pos: int) -> tuple[int, int, int]:
    """(tag, start of content, end of content) of the DER element at ``pos``."""
    tag, length = der[pos], der[pos + 1]
    pos += 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(der[pos:pos + count], "big")
        pos += count
    return tag, pos, pos + length


def spki_der(cert_der: bytes) -> bytes:
    """The SubjectPublicKeyInfo (DER) of an X.509 certificate (DER)."""
    _tag, cert_start, _end = _der_element(cert_der, 0)  # Certificate
    _tag, pos, _tbs_end = _der_element(cert_der, cert_start)  # TBSCertificate
    tag, _start, end = _der_element(cert_der, pos)
    if tag == 0xA0:  # [0] version
        pos = end
    for _field in range(5):  # serial, signature, issuer, validity, subject
        pos = _der_element(cert_der, pos)[2]
    _tag, _start, end = _der_element(cert_der, pos)
    return cert_der[pos:end]


def pem_certificates(pem: str) -> list[bytes]:
    blocks = re.findall(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", pem, re.DOTALL)
    return [base64.b64decode("".join(block.split())) for block in blocks]


def ca_cert_hashes(pem: str) -> list[str]:
    """``sha256:<hex>`` of each CA certificate's public key, as kubeadm's pubkeypin computes it."""
    try:
        return ["sha256:" + hashlib.sha256(spki_der(der)).hexdigest() for der in pem_certificates(pem)]
    except (IndexError, ValueError) as err:
        raise TokenError(["CA hash: the CA bundle is not a valid PEM certificate (%s)" % err]) from None


def kubeconfig_cluster(text: str) -> dict:
    """The cluster a kubeconfig (a node's ``/etc/kubernetes/kubelet.conf``) points at: its ``server``, the
    public-key pins of the CA it trusts (``ca_pins``, as ``ca_cert_hashes``), or the CA file it names instead
    (``ca_file``), and ``problem`` when none of it can be read. The text comes from a node: untrusted, never
    echoed; nothing of ``users`` (the kubelet's client key) is read or returned."""
    out = {"server": "", "ca_pins": [], "ca_file": "", "problem": ""}
    try:
        config = yaml.safe_load(text) if HAS_YAML else None
    except yaml.YAMLError:
        config = None
    if not isinstance(config, dict):
        out["problem"] = "not a kubeconfig (no YAML mapping)"
        return out
    contexts = {c.get("name"): c.get("context") or {} for c in config.get("contexts") or [] if isinstance(c, dict)}
    clusters = {c.get("name"): c.get("cluster") or {} for c in config.get("clusters") or [] if isinstance(c, dict)}
    wanted = contexts.get(config.get("current-context"), {}).get("cluster")
    cluster = clusters.get(wanted) or (next(iter(clusters.values())) if len(clusters) == 1 else None)
    if not isinstance(cluster, dict):
        out["problem"] = "no cluster for its current context"
        return out
    out["server"] = str(cluster.get("server") or "")[:256]
    data, path = cluster.get("certificate-authority-data"), cluster.get("certificate-authority")
    if data:
        try:
            out["ca_pins"] = ca_cert_hashes(base64.b64decode(str(data), validate=True).decode("ascii"))
        except (ValueError, TokenError):
            out["problem"] = "its certificate-authority-data is not a PEM certificate"
    elif path:
        out["ca_file"] = str(path)[:4096]
    else:
        out["problem"] = "it names no CA"
    if data and not out["ca_pins"]:
        out["problem"] = "its certificate-authority-data is not a PEM certificate"
    return out


# --- endpoint -------------------------------------------------------------------------


def endpoint_from_server(server: str) -> str:
    """``https://10.0.0.1:6443/`` -> ``10.0.0.1:6443`` (kubeadm join takes host:port)."""
    rest = re.sub(r"^[a-z]+://", "", server.strip()).rstrip("/")
    return rest if re.search(r":\d+$", rest) else rest + ":443"


def control_plane_endpoint(cluster_configuration: str) -> str:
    """``controlPlaneEndpoint`` of a kubeadm ClusterConfiguration (YAML), or ''."""
    try:
        config = yaml.safe_load(cluster_configuration) or {}
    except yaml.YAMLError as err:
        raise TokenError(["endpoint: kube-system/kubeadm-config ClusterConfiguration is not YAML (%s)" % err]) from None
    return str(config.get("controlPlaneEndpoint") or "") if isinstance(config, dict) else ""


def discover(client: Client) -> dict:
    """Endpoint (kubeadm-config, else the kubeconfig's server), CA certificate and its hashes (kube-root-ca.crt)."""
    source = "kube-system/kubeadm-config"
    found = client.get(object_path("v1", "configmaps", "kubeadm-config", NAMESPACE),
                       what="endpoint: read kube-system/kubeadm-config")
    endpoint = control_plane_endpoint(((found or {}).get("data") or {}).get("ClusterConfiguration", ""))
    if not endpoint:
        source, endpoint = "kubeconfig", endpoint_from_server(client.api.configuration.host)
    root_ca = client.get(object_path("v1", "configmaps", "kube-root-ca.crt", NAMESPACE),
                         what="CA hash: read kube-system/kube-root-ca.crt")
    pem = ((root_ca or {}).get("data") or {}).get("ca.crt", "")
    if not pem:
        problem = "CA hash: ConfigMap kube-system/kube-root-ca.crt has no ca.crt (is kube-controller-manager running?)"
        raise TokenError([problem])
    return {"endpoint": endpoint, "endpoint_source": source, "ca_cert": pem, "ca_cert_hashes": ca_cert_hashes(pem)}


def create(client: Client, secret: dict, dry_run: bool) -> None:
    path = object_path("v1", "secrets", namespace=NAMESPACE)
    query = {"dryRun": "All"} if dry_run else None
    client.request("POST", path, body=secret, query=query, what="token: create %s" % secret["metadata"]["name"])


def delete(client: Client, token_id: str, dry_run: bool) -> bool:
    path = object_path("v1", "secrets", secret_name(token_id), NAMESPACE)
    return client.delete(path, dry_run=dry_run, what="token: delete %s" % secret_name(token_id))
