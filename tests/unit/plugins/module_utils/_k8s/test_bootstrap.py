# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bootstrap tokens and join discovery: token format, the Secret kubeadm writes, the CA hash against openssl."""
from __future__ import annotations

import base64
import hashlib
import random
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s import bootstrap

needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None,
                                   reason="the openssl command is not installed (bindep.txt); CA hashes not checked")


def test_tokens_have_kubeadms_format_and_differ() -> None:
    tokens = {".".join(bootstrap.generate_token()) for _index in range(50)}
    assert len(tokens) == 50
    assert all(bootstrap.TOKEN_RE.match(t) for t in tokens)


def test_token_uses_the_given_random_choice() -> None:
    rng = random.Random(1)
    assert bootstrap.generate_token(rng.choice) == bootstrap.generate_token(random.Random(1).choice)


@pytest.mark.parametrize(("text", "seconds"), [("15m", 900), ("1h", 3600), ("90s", 90), ("1h30m", 5400), ("600", 600)])
def test_ttl(text: str, seconds: int) -> None:
    assert bootstrap.parse_ttl(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["0", "0m", "forever", "15 m", "-5m", ""])
def test_a_token_must_expire(text: str) -> None:
    with pytest.raises(bootstrap.TokenError, match="ttl"):
        bootstrap.parse_ttl(text)


def test_expiration_is_rfc3339_utc() -> None:
    now = datetime(2026, 12, 2, 17, 0, 0, tzinfo=timezone.utc)  # noqa: UP017 - as the module_utils
    assert bootstrap.expiration(timedelta(minutes=15), now) == "2026-12-02T17:15:00Z"


def test_secret_is_what_kubeadm_token_create_writes() -> None:
    secret = bootstrap.token_secret("abcdef", "0123456789abcdef", "2026-12-02T17:15:00Z", "join gpu3",
                                    [bootstrap.DEFAULT_GROUP], ["authentication", "signing"])
    assert secret["type"] == "bootstrap.kubernetes.io/token"
    assert secret["metadata"] == {"name": "bootstrap-token-abcdef", "namespace": "kube-system"}
    assert secret["stringData"] == {
        "token-id": "abcdef", "token-secret": "0123456789abcdef", "expiration": "2026-12-02T17:15:00Z",
        "description": "join gpu3", "usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
        "auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token",
    }


def test_extra_groups_must_be_bootstrappers() -> None:
    assert bootstrap.validate_groups(["system:bootstrappers:x", "system:masters"]) == [
        "groups: 'system:masters' must start with system:bootstrappers:"]


@pytest.mark.parametrize(("server", "endpoint"), [("https://198.51.100.11:6443", "198.51.100.11:6443"),
                                                  ("https://api.example.com/", "api.example.com:443"),
                                                  ("https://[fd00::1]:6443", "[fd00::1]:6443")])
def test_endpoint_from_the_kubeconfig_server(server: str, endpoint: str) -> None:
    assert bootstrap.endpoint_from_server(server) == endpoint


def test_endpoint_from_kubeadm_config() -> None:
    text = "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\ncontrolPlaneEndpoint: 10.0.0.1:6443\n"
    assert bootstrap.control_plane_endpoint(text) == "10.0.0.1:6443"
    assert bootstrap.control_plane_endpoint("kind: ClusterConfiguration\n") == ""


def _openssl_hash(cert: Path) -> str:
    pub = subprocess.run(["openssl", "x509", "-pubkey", "-noout", "-in", str(cert)], check=True,
                         capture_output=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "DER"], input=pub, check=True,
                         capture_output=True).stdout
    return "sha256:" + hashlib.sha256(der).hexdigest()


@needs_openssl
@pytest.mark.parametrize("key", [["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"],
                                 ["-newkey", "rsa:2048"]])
def test_ca_hash_is_what_kubeadms_documented_openssl_pipeline_prints(tmp_path: Path, key: list[str]) -> None:
    cert = tmp_path / "ca.crt"
    subprocess.run(["openssl", "req", "-x509", *key, "-nodes", "-keyout", str(tmp_path / "ca.key"),
                    "-out", str(cert), "-days", "1", "-subj", "/CN=test-ca"], check=True, capture_output=True)
    assert bootstrap.ca_cert_hashes(cert.read_text()) == [_openssl_hash(cert)]


@needs_openssl
def test_a_bundle_gives_one_hash_per_ca(tmp_path: Path) -> None:
    certs = []
    for name in ("a", "b"):
        cert = tmp_path / f"{name}.crt"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", str(tmp_path / f"{name}.key"), "-out", str(cert), "-days", "1",
                        "-subj", f"/CN={name}"], check=True, capture_output=True)
        certs.append(cert)
    bundle = "".join(c.read_text() for c in certs)
    assert bootstrap.ca_cert_hashes(bundle) == [_openssl_hash(c) for c in certs]


def test_garbage_is_a_ca_hash_problem() -> None:
    with pytest.raises(bootstrap.TokenError, match="CA hash"):
        bootstrap.ca_cert_hashes("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")


# --- which cluster a node's kubelet belongs to (node_join refuses to reset another cluster's node) ----------

def _kubelet_conf(ca_data: str | None = None, ca_file: str | None = None, current: str = "default-context") -> str:
    """A kubelet.conf as kubeadm join writes it (kubeadm's kubeconfig phase), with a client key of its own."""
    cluster: dict = {"server": "https://198.51.100.11:6443"}
    if ca_data is not None:
        cluster["certificate-authority-data"] = ca_data
    if ca_file is not None:
        cluster["certificate-authority"] = ca_file
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": current,
        "clusters": [{"name": "default-cluster", "cluster": cluster}],
        "contexts": [{"name": "default-context",
                      "context": {"cluster": "default-cluster", "user": "default-auth", "namespace": "default"}}],
        "users": [{"name": "default-auth",
                   "user": {"client-certificate": "/var/lib/kubelet/pki/kubelet-client-current.pem",
                            "client-key-data": "c2VjcmV0LWtleQ=="}}]})


@needs_openssl
def test_a_kubelet_conf_names_its_server_and_ca_pins_and_nothing_of_its_user(tmp_path: Path) -> None:
    cert = tmp_path / "ca.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", str(tmp_path / "ca.key"), "-out", str(cert), "-days", "1", "-subj", "/CN=kubernetes"],
                   check=True, capture_output=True)
    data = base64.b64encode(cert.read_bytes()).decode()
    found = bootstrap.kubeconfig_cluster(_kubelet_conf(ca_data=data))
    assert found == {"server": "https://198.51.100.11:6443", "ca_pins": [_openssl_hash(cert)], "ca_file": "",
                     "problem": ""}
    assert "c2VjcmV0LWtleQ" not in str(found)
    # the CA as a file the kubeconfig names: its path, for the caller to read on the node
    by_file = bootstrap.kubeconfig_cluster(_kubelet_conf(ca_file="/etc/kubernetes/pki/ca.crt"))
    assert (by_file["ca_pins"], by_file["ca_file"], by_file["problem"]) == ([], "/etc/kubernetes/pki/ca.crt", "")


@pytest.mark.parametrize(("text", "problem"), [
    ("", "not a kubeconfig"),
    ("[1, 2]", "not a kubeconfig"),
    ("clusters: [", "not a kubeconfig"),
    (_kubelet_conf(), "names no CA"),
    (_kubelet_conf(ca_data="bm90IGEgY2VydA=="), "not a PEM certificate"),
    (_kubelet_conf(ca_data="%%%"), "not a PEM certificate"),
    (yaml.safe_dump({"current-context": "x", "contexts": [], "clusters": [{"name": "a"}, {"name": "b"}]}),
     "no cluster"),
])
def test_what_is_no_kubeconfig_gives_a_problem_and_no_pins(text: str, problem: str) -> None:
    found = bootstrap.kubeconfig_cluster(text)
    assert found["ca_pins"] == [] and problem in found["problem"]
