# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes modules' connection options (``_k8s.args``): the same options as the ``k8s_auth`` doc
fragment under kubernetes.core's names and aliases, and a main() that never prints a kubeconfig's credentials
or the API key."""
from __future__ import annotations

import json

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.doc_fragments.k8s_auth import ModuleDocFragment
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.args import (
    AUTH_ARG_SPEC,
    run_module,
    secret_values,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.errors import K8sError
from tests.support.module_args import patch_module_args

TOKEN = "eyJhbGciOi-tenant-token-7Qx"
KEY_DATA = "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t"
PASSWORD = "basic-auth-Passw0rd"
CERT_DATA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t"  # public: a client certificate
KUBECONFIG = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [{"name": "t", "cluster": {"server": "https://198.51.100.11:7443"}}],
    "users": [
        {"name": "sa", "user": {"token": TOKEN}},
        {"name": "admin", "user": {"client-certificate-data": CERT_DATA, "client-key-data": KEY_DATA}},
        {"name": "basic", "user": {"username": "ops", "password": PASSWORD}},
    ],
    "contexts": [{"name": "t", "context": {"cluster": "t", "user": "sa"}}],
    "current-context": "t",
}


def main(capsys: pytest.CaptureFixture, run, args: dict, spec: dict | None = None) -> tuple[int, dict, str]:
    with patch_module_args(args), pytest.raises(SystemExit) as exited:
        run_module(dict(AUTH_ARG_SPEC, **(spec or {})), run)
    printed = capsys.readouterr().out
    return exited.value.code, json.loads(printed), printed


def test_the_credentials_of_a_kubeconfig_mapping_are_its_secret_values() -> None:
    assert secret_values(KUBECONFIG) == {TOKEN, KEY_DATA, PASSWORD}


def test_public_empty_and_odd_entries_are_not_secret_values() -> None:
    odd = {"users": [None, {"name": "x"}, {"user": None},
                     {"user": {"token": "", "password": 1234, "client-certificate-data": CERT_DATA,
                               "username": "ops"}}]}
    assert secret_values(odd) == set()
    assert secret_values({"clusters": []}) == set()


@pytest.mark.parametrize("kubeconfig", [None, "/etc/gpucloud/host.kubeconfig", ["not", "a", "mapping"]])
def test_a_kubeconfig_path_or_none_has_no_secret_values(kubeconfig) -> None:
    assert secret_values(kubeconfig) == set()


def test_the_options_are_the_k8s_auth_doc_fragments_with_kubernetes_core_aliases() -> None:
    fragment = yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"]
    assert set(fragment) == set(AUTH_ARG_SPEC)
    for name, spec in AUTH_ARG_SPEC.items():
        doc = fragment[name]
        assert doc["type"] == spec["type"], name
        assert doc.get("default") == spec.get("default"), name
        assert sorted(doc.get("aliases") or []) == sorted(spec.get("aliases") or []), name
    assert AUTH_ARG_SPEC["api_key"]["no_log"] is True


def test_kubeconfig_credentials_never_reach_the_output_even_in_a_failure(capsys) -> None:
    def run(module):
        users = module.params["kubeconfig"]["users"]
        raise K8sError(["GET /readyz with %s: 401 Unauthorized" % users[0]["user"]["token"]],
                       echoed=[u["user"] for u in users])

    rc, out, printed = main(capsys, run, {"kubeconfig": KUBECONFIG})
    assert rc == 1 and out["failed"] is True and "401 Unauthorized" in out["msg"]
    for secret in (TOKEN, KEY_DATA, PASSWORD):
        assert secret not in printed, secret
    assert "********" in out["msg"]
    assert CERT_DATA in printed  # public: only the credentials are hidden


def test_kubeconfig_credentials_are_hidden_in_a_successful_result(capsys) -> None:
    rc, out, printed = main(capsys, lambda m: {"changed": False, "config": m.params["kubeconfig"]},
                            {"kubeconfig": KUBECONFIG})
    assert rc == 0 and out["config"]["clusters"][0]["cluster"]["server"] == "https://198.51.100.11:7443"
    assert TOKEN not in printed and KEY_DATA not in printed and PASSWORD not in printed


def test_the_api_key_is_never_printed(capsys) -> None:
    rc, out, printed = main(capsys, lambda m: {"changed": False, "header": "Bearer " + m.params["api_key"]},
                            {"host": "https://198.51.100.11:6443", "api_key": TOKEN})
    assert rc == 0 and TOKEN not in printed and out["header"].startswith("Bearer ")


def test_kubernetes_core_aliases_and_defaults(capsys) -> None:
    seen = {}

    def run(module):
        seen.update(module.params)
        return {"changed": False}

    rc, out, _printed = main(capsys, run, {"kubeconfig": "/etc/gpucloud/host.kubeconfig", "verify_ssl": False,
                                           "ssl_ca_cert": "/etc/ssl/ca.pem", "cert_file": "/etc/ssl/me.pem",
                                           "key_file": "/etc/ssl/me.key"})
    assert rc == 0, out
    assert seen["validate_certs"] is False and seen["ca_cert"] == "/etc/ssl/ca.pem"
    assert seen["client_cert"] == "/etc/ssl/me.pem" and seen["client_key"] == "/etc/ssl/me.key"
    assert seen["request_timeout"] == 30.0 and seen["context"] is None and seen["host"] is None


@pytest.mark.parametrize(("args", "field", "allowed"), [
    ({"request_timeout": "soon"}, "request_timeout", "float"),
    ({"validate_certs": "perhaps"}, "validate_certs", "bool"),
    ({"kubecnofig": "/tmp/k"}, "kubecnofig", "kubeconfig"),
])
def test_bad_options_fail_naming_the_option_and_what_is_allowed(capsys, args: dict, field: str, allowed: str) -> None:
    called = []
    rc, out, _printed = main(capsys, lambda m: called.append(1) or {}, args)
    assert rc == 1 and not called
    assert field in out["msg"] and allowed in out["msg"], out["msg"]
