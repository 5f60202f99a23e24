# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tenant kubeconfig: read from its secret, written 0600 only when it changed, waits that say what they awaited."""
from __future__ import annotations

import base64
import os

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s import tenants
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.errors import K8sError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.wait import wait_for
from tests.unit.plugins.module_utils._k8s.fake import FakeApi

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: t, cluster: {server: "https://198.51.100.11:7443", certificate-authority-data: Q0E=}}]
users: [{name: t, user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ}}]
contexts: [{name: t, context: {cluster: t, user: t}}]
current-context: t
"""
SECRET = "/api/v1/namespaces/tenant-a/secrets/vc-a"


def secret(text: str) -> dict:
    return {"metadata": {"name": "vc-a"}, "data": {"config": base64.b64encode(text.encode()).decode()}}


def test_reads_the_kubeconfig_and_names_its_secrets() -> None:
    api = FakeApi({SECRET: secret(KUBECONFIG)})
    text, parsed = tenants.read_kubeconfig(api, "tenant-a", "vc-a")
    assert text == KUBECONFIG and parsed["clusters"][0]["cluster"]["server"] == "https://198.51.100.11:7443"
    assert tenants.secret_values(parsed) == {"S0VZ"}
    assert tenants.read_kubeconfig(FakeApi(), "tenant-a", "vc-a") is None


def test_a_secret_that_is_not_a_kubeconfig_fails_naming_it() -> None:
    with pytest.raises(K8sError, match="secret tenant-a/vc-a key config: not a kubeconfig"):
        tenants.read_kubeconfig(FakeApi({SECRET: secret("hello: world\n")}), "tenant-a", "vc-a")


def test_written_0600_atomically_and_only_when_changed(tmp_path) -> None:
    dest = tmp_path / "kube" / "a.kubeconfig"
    assert tenants.write_private(str(dest), KUBECONFIG, check_mode=True) and not dest.exists()
    assert tenants.write_private(str(dest), KUBECONFIG, check_mode=False)
    assert dest.read_text() == KUBECONFIG and oct(dest.stat().st_mode & 0o777) == "0o600"
    assert oct(dest.parent.stat().st_mode & 0o777) == "0o700"
    assert not tenants.write_private(str(dest), KUBECONFIG, check_mode=False)
    os.chmod(dest, 0o644)
    assert tenants.write_private(str(dest), KUBECONFIG, check_mode=False)
    assert oct(dest.stat().st_mode & 0o777) == "0o600"
    assert tenants.remove_file(str(dest), check_mode=False) and not dest.exists()


def test_wait_names_what_it_waited_for_and_the_last_error() -> None:
    now = [0.0]

    def failing():
        raise K8sError(["GET /readyz: 503 ServiceUnavailable: etcd not ready"])

    with pytest.raises(K8sError, match=r"tenant API server /readyz: not ready after 5s \(GET /readyz: 503"):
        wait_for("tenant API server /readyz", failing, 5, clock=lambda: now[0],
                 sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert wait_for("x", lambda: "ok", 5) == "ok"
