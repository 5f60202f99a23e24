# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's certificate authority and the certificates it issues (openssl)."""
from __future__ import annotations

import base64
from pathlib import Path

from gpucloud_lab.core import config
from gpucloud_lab.core.util import run, write_file

CA_CERT = config.PKI_DIR / "ca.crt"
CA_KEY = config.PKI_DIR / "ca.key"
SA_KEY = config.PKI_DIR / "sa.key"
SA_PUB = config.PKI_DIR / "sa.pub"
DAYS = "3650"


def ensure_ca() -> None:
    config.PKI_DIR.mkdir(parents=True, mode=0o700, exist_ok=True)
    if not CA_CERT.exists():
        run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", str(CA_KEY), "-out", str(CA_CERT), "-days", DAYS, "-subj", "/CN=gpucloud-lab-ca",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
    if not SA_KEY.exists():
        run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", str(SA_KEY)])
        run(["openssl", "pkey", "-in", str(SA_KEY), "-pubout", "-out", str(SA_PUB)])
    for key in (CA_KEY, SA_KEY):
        key.chmod(0o600)


def issue(name: str, subject: str, sans: list[str] | None = None, server: bool = False) -> tuple[Path, Path]:
    """A certificate + key signed by the lab CA, made once; returns (cert, key)."""
    cert, key, csr = (config.PKI_DIR / f"{name}.{ext}" for ext in ("crt", "key", "csr"))
    if cert.exists() and key.exists():
        return cert, key
    usage = "serverAuth" if server else "clientAuth"
    req = ["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
           "-keyout", str(key), "-out", str(csr), "-subj", subject, "-addext", f"extendedKeyUsage={usage}"]
    if sans:
        req += ["-addext", "subjectAltName=" + ",".join(sans)]
    run(req)
    run(["openssl", "x509", "-req", "-in", str(csr), "-CA", str(CA_CERT), "-CAkey", str(CA_KEY),
         "-CAcreateserial", "-days", DAYS, "-copy_extensions", "copyall", "-out", str(cert)])
    key.chmod(0o600)
    csr.unlink()
    return cert, key


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def kubeconfig(server: str, cluster: str, user_cert: Path, user_key: Path) -> str:
    """A kubeconfig with everything embedded (JSON is valid YAML)."""
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: {cluster}\n  cluster:\n    server: {server}\n"
        f"    certificate-authority-data: {_b64(CA_CERT)}\n"
        f"users:\n- name: {cluster}-admin\n  user:\n"
        f"    client-certificate-data: {_b64(user_cert)}\n    client-key-data: {_b64(user_key)}\n"
        f"contexts:\n- name: {cluster}\n  context:\n    cluster: {cluster}\n    user: {cluster}-admin\n"
        f"current-context: {cluster}\n"
    )


def write_kubeconfig(path: Path, server: str, cluster: str) -> None:
    cert, key = issue("admin", "/O=system:masters/CN=gpucloud-lab-admin")
    write_file(path, kubeconfig(server, cluster, cert, key), mode=0o600)
