# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vcluster_kubeconfig module: waits for the tenant's kubeconfig secret and for the tenant API's /readyz
(asked with the tenant's own credentials), writes the kubeconfig 0600 only when it changed, returns it only
with return_content, and its credentials never in the printed result; state=absent removes the file without
any API request; a control plane that never gets ready fails naming what was awaited and writes nothing.
The host API is tests/unit/plugins/module_utils/_k8s/fake.py's FakeApi, the tenant API a FakeApi that answers
/readyz; no network, no sleeps."""
from __future__ import annotations

import base64
import json
import stat
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s import tenants
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.args import AUTH_ARG_SPEC
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.errors import K8sError
from ansible_collections.gpucloud.baremetal.plugins.modules import vcluster_kubeconfig
from tests.support.module_args import patch_module_args
from tests.unit.plugins.module_utils._k8s.fake import FakeApi

TOKEN = "tenant-admin-token-Zq81xP"
KEY_DATA = "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCmtleQ=="
SERVER = "https://198.51.100.11:7443"
KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: beta, cluster: {server: "%s", certificate-authority-data: Q0E=}}]
users:
- {name: admin, user: {client-certificate-data: Q0VSVA==, client-key-data: %s}}
- {name: sa, user: {token: %s}}
contexts: [{name: beta, context: {cluster: beta, user: admin}}]
current-context: beta
""" % (SERVER, KEY_DATA, TOKEN)
SECRET_PATH = "/api/v1/namespaces/tenant-beta/secrets/vc-beta"


def secret(text: str) -> dict:
    return {"metadata": {"name": "vc-beta"}, "data": {"config": base64.b64encode(text.encode()).decode()}}


class TenantApi(FakeApi):
    """The tenant's API server: /readyz answers ``ready`` (or a forced answer), the rest as FakeApi."""

    def __init__(self, ready: bytes = b"ok", answers: list | None = None):
        super().__init__(answers=answers)
        self.ready = ready

    def _send(self, method, url, body, content_type):
        if url == "/readyz" and not self.answers:
            return 200, {}, self.ready
        return super()._send(method, url, body, content_type)


class Apis:
    def __init__(self) -> None:
        self.host = FakeApi({SECRET_PATH: secret(KUBECONFIG)})
        self.tenant = TenantApi()
        self.host_params: list[dict] = []
        self.tenant_params: list[dict] = []


@pytest.fixture
def apis(monkeypatch: pytest.MonkeyPatch) -> Apis:
    apis = Apis()

    def host(params: dict) -> FakeApi:
        apis.host_params.append(params)
        return apis.host

    def tenant(params: dict) -> FakeApi:
        apis.tenant_params.append(params)
        return apis.tenant

    monkeypatch.setattr(vcluster_kubeconfig, "Client", host)
    monkeypatch.setattr(tenants, "Client", tenant)
    return apis


def module(check: bool = False, **params) -> SimpleNamespace:
    base = {"namespace": "tenant-beta", "secret": "vc-beta", "dest": "", "return_content": False,
            "wait_timeout": 0, "state": "present", "kubeconfig": None, "request_timeout": 30.0}
    return SimpleNamespace(params={**base, **params}, check_mode=check, _diff=False, no_log_values=set())


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_kubeconfig_is_written_0600_and_kept_out_of_the_result(apis: Apis, tmp_path: Path) -> None:
    dest = tmp_path / "kube" / "beta.kubeconfig"
    m = module(dest=str(dest))
    result = vcluster_kubeconfig.run(m)
    assert result == {"changed": True, "server": SERVER, "path": str(dest)}
    assert dest.read_text() == KUBECONFIG and mode(dest) == 0o600
    assert TOKEN not in json.dumps(result) and KEY_DATA not in json.dumps(result)
    assert {TOKEN, KEY_DATA} <= m.no_log_values  # Ansible masks them wherever they would show
    assert apis.host.writes == []  # the host cluster is only read


def test_readiness_is_asked_of_the_tenant_api_with_the_tenants_own_credentials(apis: Apis) -> None:
    vcluster_kubeconfig.run(module(wait_timeout=300))
    assert len(apis.tenant_params) == 1
    asked = apis.tenant_params[0]
    assert asked["kubeconfig"] == yaml.safe_load(KUBECONFIG)
    assert 0 < asked["request_timeout"] <= 10.0
    assert apis.tenant.requests == 1


def test_an_unchanged_kubeconfig_is_left_alone_and_check_mode_writes_nothing(apis: Apis, tmp_path: Path) -> None:
    dest = tmp_path / "beta.kubeconfig"
    assert vcluster_kubeconfig.run(module(check=True, dest=str(dest)))["changed"] is True
    assert not dest.exists()
    assert vcluster_kubeconfig.run(module(dest=str(dest)))["changed"] is True
    assert vcluster_kubeconfig.run(module(dest=str(dest)))["changed"] is False
    dest.write_text("stale\n")
    assert vcluster_kubeconfig.run(module(check=True, dest=str(dest)))["changed"] is True
    assert dest.read_text() == "stale\n"


def test_without_dest_nothing_is_written_and_nothing_changes(apis: Apis) -> None:
    assert vcluster_kubeconfig.run(module()) == {"changed": False, "server": SERVER, "path": ""}


def test_return_content_returns_the_mapping_with_its_credentials_registered_as_secrets(apis: Apis) -> None:
    m = module(return_content=True)
    result = vcluster_kubeconfig.run(m)
    assert result["kubeconfig"]["clusters"][0]["cluster"]["server"] == SERVER
    assert "secrets" not in result and {TOKEN, KEY_DATA} <= m.no_log_values


def test_main_never_prints_the_credentials_even_with_return_content(apis: Apis, tmp_path: Path, capsys) -> None:
    dest = tmp_path / "beta.kubeconfig"
    args = {"namespace": "tenant-beta", "secret": "vc-beta", "dest": str(dest), "return_content": True,
            "wait_timeout": 0}
    with patch_module_args(args), pytest.raises(SystemExit) as exited:
        vcluster_kubeconfig.main()
    printed = capsys.readouterr().out
    out = json.loads(printed)
    assert exited.value.code == 0 and out["changed"] is True and out["server"] == SERVER
    assert out["kubeconfig"]["current-context"] == "beta"
    assert TOKEN not in printed and KEY_DATA not in printed
    assert dest.read_text() == KUBECONFIG and mode(dest) == 0o600


def test_an_empty_credential_does_not_mask_the_whole_result(apis: Apis, tmp_path: Path, capsys) -> None:
    """An empty string among the no-log values makes Ansible mask every string of the result (the server came back
    as '********h********t...'): an empty credential (a user with token: "") is not a secret value."""
    apis.host.objects[SECRET_PATH] = secret(KUBECONFIG.replace("user: {token: %s}" % TOKEN, 'user: {token: ""}'))
    args = {"namespace": "tenant-beta", "secret": "vc-beta", "dest": str(tmp_path / "beta.kubeconfig"),
            "wait_timeout": 0}
    with patch_module_args(args), pytest.raises(SystemExit) as exited:
        vcluster_kubeconfig.main()
    out = json.loads(capsys.readouterr().out)
    assert exited.value.code == 0 and out["server"] == SERVER and out["path"] == args["dest"], out


def test_a_secret_that_never_appears_fails_naming_it_and_writes_nothing(apis: Apis, tmp_path: Path) -> None:
    apis.host.objects.clear()
    dest = tmp_path / "beta.kubeconfig"
    with pytest.raises(K8sError) as err:
        vcluster_kubeconfig.run(module(dest=str(dest)))
    assert err.value.problems == [
        "tenant control plane in tenant-beta (secret vc-beta, key config): not ready after 0s (not yet)"]
    assert not dest.exists() and apis.tenant_params == []


def test_a_secret_that_is_not_a_kubeconfig_fails_naming_the_secret(apis: Apis, tmp_path: Path) -> None:
    apis.host.objects[SECRET_PATH] = secret("kind: Config\nusers: []\n")
    with pytest.raises(K8sError, match=r"secret tenant-beta/vc-beta key config: not a kubeconfig \(no clusters\)"):
        vcluster_kubeconfig.run(module(dest=str(tmp_path / "beta.kubeconfig")))
    assert not (tmp_path / "beta.kubeconfig").exists()


@pytest.mark.parametrize(("answer", "last"), [
    ({"ready": b"[-]etcd failed: reason withheld\nreadyz check failed"}, "not yet"),
    ({"answers": [(401, {"reason": "Unauthorized", "message": "invalid bearer token"})]},
     "GET /readyz of the tenant API server: 401 Unauthorized: invalid bearer token"),
])
def test_a_tenant_api_that_is_not_ready_fails_naming_its_server(apis: Apis, tmp_path: Path, answer: dict,
                                                                last: str) -> None:
    apis.tenant = TenantApi(**answer)
    dest = tmp_path / "beta.kubeconfig"
    with pytest.raises(K8sError) as err:
        vcluster_kubeconfig.run(module(dest=str(dest)))
    assert err.value.problems == ["tenant API server %s /readyz: not ready after 0s (%s)" % (SERVER, last)]
    assert not dest.exists()
    assert TOKEN not in str(err.value) and KEY_DATA not in str(err.value)


def test_absent_removes_the_file_without_asking_any_api(apis: Apis, tmp_path: Path) -> None:
    dest = tmp_path / "beta.kubeconfig"
    dest.write_text(KUBECONFIG)
    assert vcluster_kubeconfig.run(module(check=True, state="absent", dest=str(dest))) == {
        "changed": True, "path": str(dest)}
    assert dest.exists()
    assert vcluster_kubeconfig.run(module(state="absent", dest=str(dest))) == {"changed": True, "path": str(dest)}
    assert not dest.exists()
    assert vcluster_kubeconfig.run(module(state="absent", dest=str(dest)))["changed"] is False
    assert vcluster_kubeconfig.run(module(state="absent"))["changed"] is False
    assert apis.host_params == [] and apis.tenant_params == []


@pytest.mark.parametrize(("args", "words"), [
    ({"namespace": "tenant-beta", "secret": "vc-beta", "state": "gone"}, ["state", "present, absent"]),
    ({"namespace": "tenant-beta"}, ["missing required arguments", "secret"]),
    ({"namespace": "tenant-beta", "secret": "vc-beta", "wait_timeout": "a while"}, ["wait_timeout", "int"]),
])
def test_bad_arguments_fail_naming_the_option_before_any_api_call(apis: Apis, capsys, args: dict,
                                                                  words: list[str]) -> None:
    with patch_module_args(args), pytest.raises(SystemExit) as exited:
        vcluster_kubeconfig.main()
    out = json.loads(capsys.readouterr().out)
    assert exited.value.code == 1 and out["failed"] is True
    assert all(w in out["msg"] for w in words), out["msg"]
    assert apis.host_params == []


def test_documentation_matches_the_argument_spec() -> None:
    doc = yaml.safe_load(vcluster_kubeconfig.DOCUMENTATION)
    assert set(doc["options"]) == {"namespace", "secret", "dest", "return_content", "wait_timeout", "state"}
    assert "gpucloud.baremetal.k8s_auth" in doc["extends_documentation_fragment"]
    assert not set(doc["options"]) & set(AUTH_ARG_SPEC)
    assert set(yaml.safe_load(vcluster_kubeconfig.RETURN)) == {"server", "path", "kubeconfig"}
    assert doc["options"]["state"]["choices"] == ["present", "absent"]
