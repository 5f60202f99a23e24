# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A tenant's control plane seen from the host: its kubeconfig secret, its readiness, the export.

The vCluster chart (and the lab's stand-in) publishes the tenant kubeconfig in secret
``vc-<release>`` of the tenant namespace, key ``config``. ``export_kubeconfig`` waits for it,
checks that the tenant API server answers ``/readyz`` with those credentials, and writes it to
a file readable by its owner only (0600), atomically and only when it changed.
"""

from __future__ import annotations

import base64
import os
import tempfile

from .args import secret_values
from .client import Client, object_path
from .errors import K8sError
from .wait import wait_for

try:
    import yaml

    HAS_YAML = True
except ImportError:  # pragma: no cover - ansible-core brings PyYAML
    HAS_YAML = False


def read_kubeconfig(host: Client, namespace: str, secret: str) -> tuple[str, dict] | None:
    """The tenant kubeconfig (text, parsed) from its secret, or None while it is not there."""
    obj = host.get(object_path("v1", "secrets", secret, namespace), what="read secret %s/%s" % (namespace, secret))
    data = (obj or {}).get("data") or {}
    if not data.get("config"):
        return None
    text = base64.b64decode(data["config"]).decode()
    try:
        parsed = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise K8sError(["secret %s/%s key config: not a kubeconfig (%s)" % (namespace, secret, err)]) from None
    if not isinstance(parsed, dict) or not parsed.get("clusters"):
        raise K8sError(["secret %s/%s key config: not a kubeconfig (no clusters)" % (namespace, secret)])
    return text, parsed


def readyz(kubeconfig: dict, timeout: float) -> bool:
    tenant = Client({"kubeconfig": kubeconfig, "request_timeout": min(timeout, 10.0)})
    return tenant.request("GET", "/readyz", what="GET /readyz of the tenant API server", text=True).strip() == "ok"


def write_private(path: str, text: str, check_mode: bool) -> bool:
    """Write ``text`` to ``path`` with mode 0600 (atomic); True when the file changed."""
    try:
        with open(path) as f:
            same = f.read() == text
        if same and (os.stat(path).st_mode & 0o777) == 0o600:
            return False
    except FileNotFoundError:
        pass
    if check_mode:
        return True
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".kubeconfig-")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True


def export_kubeconfig(
    host: Client, namespace: str, secret: str, timeout: float, dest: str = "", check_mode: bool = False
) -> dict:
    """Wait for the secret and for the tenant API; write ``dest`` (0600) when given."""
    what = "tenant control plane in %s (secret %s, key config)" % (namespace, secret)
    text, parsed = wait_for(what, lambda: read_kubeconfig(host, namespace, secret), timeout)
    server = parsed["clusters"][0].get("cluster", {}).get("server", "")
    wait_for("tenant API server %s /readyz" % server, lambda: readyz(parsed, timeout), timeout)
    changed = write_private(dest, text, check_mode) if dest else False
    return {"changed": changed, "server": server, "kubeconfig": parsed, "path": dest, "secrets": secret_values(parsed)}


def remove_file(path: str, check_mode: bool) -> bool:
    if not path or not os.path.exists(path):
        return False
    if not check_mode:
        os.unlink(path)
    return True
