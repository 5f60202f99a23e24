# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bootstrap_token module: state=present creates Secret kube-system/bootstrap-token-<id> as kubeadm does and
returns the token with the join discovery data (endpoint from kubeadm-config, else the kubeconfig's server; CA
hash of kube-root-ca.crt); the token's secret part is only in ``token`` (empty in check mode, "(secret)" in the
diff, never in an error); refusals (groups, ttl, token_id) come before any request; state=absent deletes only
what is there. The API is tests/unit/plugins/module_utils/_k8s/fake.py's FakeApi with POST added; the token
format, the Secret's fields and the CA hash against openssl are held by _k8s/test_bootstrap.py."""
from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s import bootstrap
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.args import AUTH_ARG_SPEC
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.errors import K8sError, TokenError
from ansible_collections.gpucloud.baremetal.plugins.modules import bootstrap_token
from tests.support.module_args import patch_module_args
from tests.unit.plugins.module_utils._k8s.fake import FakeApi

# A throwaway self-signed CA (EC P-256, CN=kubernetes); its hash as kubeadm's documented openssl pipeline prints it:
# openssl x509 -pubkey -noout | openssl pkey -pubin -outform DER | sha256sum
CA_PEM = """-----BEGIN CERTIFICATE-----
MIIBfzCCASWgAwIBAgIUF9Zx0LN3aOStSOG7ZImwVZ9fy9AwCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKa3ViZXJuZXRlczAeFw0yNjEyMDcwMTA5MjRaFw0zNjEyMDQw
MTA5MjRaMBUxEzARBgNVBAMMCmt1YmVybmV0ZXMwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAT7cq2yrp9mH390CQk2XXwYykP6OQdAqWIczjE/pKd2F/AK6T/aF5Cv
Do+NSJPycvL94d/nhmYEFRzlURnLyg4wo1MwUTAdBgNVHQ4EFgQUxxuxJP8S7kK5
J3HGf1UmG2tkiGYwHwYDVR0jBBgwFoAUxxuxJP8S7kK5J3HGf1UmG2tkiGYwDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiAMenbm0tkFHmF8bsEPX9z6
9sQmV/cFpqeC14cEPvnTwQIhAIJStiw4oHlwX+otxckGhMHY34ymD43sR9bzbzjq
mTYh
-----END CERTIFICATE-----
"""
CA_HASH = "sha256:5d816808abc6dfb0fa0f854a05d0cddf32419dc2827a59d4ec9884c1b4060bf0"
KUBEADM_CONFIG = "/api/v1/namespaces/kube-system/configmaps/kubeadm-config"
ROOT_CA = "/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt"
SECRETS = "/api/v1/namespaces/kube-system/secrets"
CLUSTER_CONFIGURATION = ("apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n"
                         "controlPlaneEndpoint: cp.gpucloud.test:6443\n")


class ClusterApi(FakeApi):
    """FakeApi with POST (create; ``dryRun=All`` stores nothing; ``refuse`` answers 403) and the kubeconfig's
    server as ``api.configuration.host``."""

    def __init__(self, objects: dict | None = None, server: str = "https://203.0.113.5:6443"):
        super().__init__(objects)
        self.api = SimpleNamespace(configuration=SimpleNamespace(host=server))
        self.posts: list[tuple[str, dict, str]] = []
        self.refuse = False

    def _send(self, method, url, body, content_type):
        if method != "POST" or self.answers:
            return super()._send(method, url, body, content_type)
        path, _sep, query = url.partition("?")
        dry = "dryRun=All" in query
        self.posts.append((path, copy.deepcopy(body), "dry" if dry else "real"))
        if self.refuse:
            return 403, {}, b'{"reason": "Forbidden", "message": "secrets is forbidden: User \\"ops\\" cannot create"}'
        if not dry:
            self.objects[path + "/" + body["metadata"]["name"]] = copy.deepcopy(body)
        return 201, {}, json.dumps(body).encode()


def cluster(**objects) -> ClusterApi:
    found = {KUBEADM_CONFIG: {"data": {"ClusterConfiguration": CLUSTER_CONFIGURATION}},
             ROOT_CA: {"data": {"ca.crt": CA_PEM}}}
    found.update({{"kubeadm_config": KUBEADM_CONFIG, "root_ca": ROOT_CA}[k]: v for k, v in objects.items()})
    return ClusterApi({path: obj for path, obj in found.items() if obj is not None})


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> ClusterApi:
    return use(monkeypatch, cluster())


def use(monkeypatch: pytest.MonkeyPatch, fake: ClusterApi) -> ClusterApi:
    monkeypatch.setattr(bootstrap_token, "Client", lambda params: fake)
    return fake


def module(check: bool = False, diff: bool = False, **params) -> SimpleNamespace:
    base = {"state": "present", "token_id": None, "ttl": "15m", "description": "node join by gpucloud.baremetal",
            "groups": [bootstrap.DEFAULT_GROUP], "usages": ["authentication", "signing"], "labels": {}}
    return SimpleNamespace(params={**base, **params}, check_mode=check, _diff=diff)


def stored(api: ClusterApi) -> dict[str, dict]:
    return {path: obj for path, obj in api.objects.items() if path.startswith(SECRETS + "/")}


def when(rfc3339: str) -> datetime:
    return datetime.strptime(rfc3339, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)  # noqa: UP017


def test_present_creates_the_token_secret_and_returns_what_a_join_needs(api: ClusterApi) -> None:
    before = datetime.now(timezone.utc)  # noqa: UP017
    result = bootstrap_token.run(module(description="join gpu7"))
    after = datetime.now(timezone.utc)  # noqa: UP017
    token_id, token_secret = result["token"].split(".")
    assert bootstrap.TOKEN_RE.match(result["token"]) and token_id == result["token_id"]
    assert result["changed"] is True and "diff" not in result
    assert (result["endpoint"], result["endpoint_source"]) == ("cp.gpucloud.test:6443", "kube-system/kubeadm-config")
    assert result["ca_cert"] == CA_PEM and result["ca_cert_hashes"] == [CA_HASH]
    assert before + timedelta(minutes=15) - timedelta(seconds=1) <= when(result["expiration"])
    assert when(result["expiration"]) <= after + timedelta(minutes=15)
    secret = stored(api)[SECRETS + "/bootstrap-token-" + token_id]
    assert secret["type"] == "bootstrap.kubernetes.io/token"
    assert secret["metadata"] == {"name": "bootstrap-token-" + token_id, "namespace": "kube-system"}
    assert secret["stringData"] == {
        "token-id": token_id, "token-secret": token_secret, "expiration": result["expiration"],
        "description": "join gpu7", "usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
        "auth-extra-groups": bootstrap.DEFAULT_GROUP}
    assert [(p, mode) for p, _body, mode in api.posts] == [(SECRETS, "real")]


def test_the_secret_part_is_only_in_token(api: ClusterApi) -> None:
    result = bootstrap_token.run(module(diff=True))
    token_secret = result["token"].split(".")[1]
    rest = {k: v for k, v in result.items() if k != "token"}
    assert token_secret not in json.dumps(rest)
    assert rest["diff"]["before"] == {}
    assert rest["diff"]["after"]["stringData"]["token-secret"] == "(secret)"
    assert rest["diff"]["after"]["stringData"]["token-id"] == result["token_id"]


def test_check_mode_dry_runs_the_create_and_returns_no_token(api: ClusterApi) -> None:
    result = bootstrap_token.run(module(check=True, diff=True))
    assert result["changed"] is True and result["token"] == "" and result["ca_cert_hashes"] == [CA_HASH]
    assert stored(api) == {}
    [(path, body, mode)] = api.posts
    assert (path, mode) == (SECRETS, "dry")
    assert body["stringData"]["token-secret"] not in json.dumps(result)


def test_ttl_usages_groups_and_labels_reach_the_secret(api: ClusterApi) -> None:
    groups = ["system:bootstrappers:kubeadm:default-node-token", "system:bootstrappers:gpu-nodes"]
    result = bootstrap_token.run(module(ttl="1h30m", usages=["authentication"], groups=groups,
                                        labels={"gpucloud.baremetal/node": "gpu7"}))
    secret = stored(api)[SECRETS + "/bootstrap-token-" + result["token_id"]]
    assert secret["metadata"]["labels"] == {"gpucloud.baremetal/node": "gpu7"}
    data = secret["stringData"]
    assert data["auth-extra-groups"] == ",".join(groups)
    assert data["usage-bootstrap-authentication"] == "true" and "usage-bootstrap-signing" not in data
    lifetime = when(result["expiration"]) - datetime.now(timezone.utc)  # noqa: UP017
    assert timedelta(minutes=89) < lifetime <= timedelta(minutes=90)


def test_every_token_is_new(api: ClusterApi) -> None:
    tokens = {bootstrap_token.run(module())["token"] for _index in range(5)}
    assert len(tokens) == 5 and len(stored(api)) == 5


@pytest.mark.parametrize("kubeadm_config", [None, {"data": {"ClusterConfiguration": "kind: ClusterConfiguration\n"}},
                                            {"data": {}}])
def test_without_a_control_plane_endpoint_the_kubeconfigs_server_is_the_endpoint(monkeypatch,
                                                                                 kubeadm_config) -> None:
    fake = use(monkeypatch, cluster(kubeadm_config=kubeadm_config))
    result = bootstrap_token.run(module())
    assert (result["endpoint"], result["endpoint_source"]) == ("203.0.113.5:6443", "kubeconfig")
    assert len(stored(fake)) == 1


def test_a_cluster_without_its_root_ca_fails_at_the_ca_hash_and_creates_no_token(monkeypatch) -> None:
    fake = use(monkeypatch, cluster(root_ca={"data": {}}))
    with pytest.raises(TokenError) as err:
        bootstrap_token.run(module())
    assert err.value.problems == [
        "CA hash: ConfigMap kube-system/kube-root-ca.crt has no ca.crt (is kube-controller-manager running?)"]
    assert fake.posts == []


def test_a_refused_create_names_the_token_step_and_not_the_secret(api: ClusterApi) -> None:
    api.refuse = True
    with pytest.raises(K8sError) as err:
        bootstrap_token.run(module())
    [(_path, body, _mode)] = api.posts
    [problem] = err.value.problems
    assert problem.startswith("token: create %s: 403 Forbidden: " % body["metadata"]["name"])
    assert body["stringData"]["token-secret"] not in str(err.value)


@pytest.mark.parametrize(("params", "problems"), [
    ({"groups": ["system:bootstrappers:ok", "system:masters"]},
     ["groups: 'system:masters' must start with system:bootstrappers:"]),
    ({"ttl": "forever"}, ["ttl: 'forever' is not a duration like 15m, 1h or 90s"]),
    ({"ttl": "0s"}, ["ttl: '0s' must be positive (a join token must expire)"]),
])
def test_bad_groups_or_ttl_are_refused_before_any_request(api: ClusterApi, params: dict, problems: list) -> None:
    with pytest.raises(TokenError) as err:
        bootstrap_token.run(module(**params))
    assert err.value.problems == problems
    assert api.requests == 0


def test_absent_deletes_an_existing_token(api: ClusterApi) -> None:
    token_id = bootstrap_token.run(module())["token_id"]
    path = SECRETS + "/bootstrap-token-" + token_id
    check = bootstrap_token.run(module(check=True, diff=True, state="absent", token_id=token_id))
    assert check == {"changed": True, "token_id": token_id,
                     "diff": {"before": {"metadata": {"name": "bootstrap-token-" + token_id}}, "after": {}}}
    assert path in api.objects and api.writes == [("DELETE", path, "dry")]
    assert bootstrap_token.run(module(state="absent", token_id=token_id)) == {"changed": True, "token_id": token_id}
    assert path not in api.objects and api.writes[-1] == ("DELETE", path, "real")


def test_absent_of_a_token_that_is_gone_changes_nothing(api: ClusterApi) -> None:
    assert bootstrap_token.run(module(state="absent", token_id="abcdef")) == {"changed": False, "token_id": "abcdef"}
    assert api.writes == [] and api.requests == 1


@pytest.mark.parametrize("token_id", [None, "", "ABCDEF", "abc", "abcdefg", "abcdef.0123456789abcdef", "abc/ef"])
def test_a_bad_token_id_is_refused_naming_it_before_any_request(api: ClusterApi, token_id) -> None:
    with pytest.raises(TokenError) as err:
        bootstrap_token.run(module(state="absent", token_id=token_id))
    assert err.value.problems == ["token_id: %r is not a token id ([a-z0-9]{6})" % (token_id or "")]
    assert api.requests == 0


def run_main(capsys: pytest.CaptureFixture, args: dict) -> tuple[int, dict, str]:
    with patch_module_args(args), pytest.raises(SystemExit) as exited:
        bootstrap_token.main()
    printed = capsys.readouterr().out
    return exited.value.code, json.loads(printed), printed


def test_main_returns_the_documented_keys_and_hides_the_secret_in_the_diff(api: ClusterApi, capsys) -> None:
    rc, out, printed = run_main(capsys, {"ttl": "10m", "_ansible_diff": True})
    assert rc == 0 and out["changed"] is True
    documented = set(yaml.safe_load(bootstrap_token.RETURN))
    assert documented <= set(out) and set(out) - documented <= {"changed", "diff", "invocation"}
    token_secret = out["token"].split(".")[1]
    assert printed.count(token_secret) == 1  # in `token`, nowhere else
    assert out["diff"]["after"]["stringData"]["token-secret"] == "(secret)"


@pytest.mark.parametrize(("args", "words"), [
    ({"usages": ["authentication", "admin"]}, ["usages", "authentication, signing", "admin"]),
    ({"state": "revoked"}, ["state", "present, absent"]),
    ({"labels": ["node", "gpu7"]}, ["labels", "dict"]),
])
def test_bad_arguments_fail_naming_the_option_and_the_choices(api: ClusterApi, capsys, args: dict,
                                                              words: list[str]) -> None:
    rc, out, _printed = run_main(capsys, args)
    assert rc == 1 and out["failed"] is True and api.requests == 0
    assert all(w in out["msg"] for w in words), out["msg"]


def test_main_fails_a_bad_token_id_with_its_problem(api: ClusterApi, capsys) -> None:
    rc, out, _printed = run_main(capsys, {"state": "absent", "token_id": "NOPE!"})
    assert rc == 1 and out["problems"] == ["token_id: 'NOPE!' is not a token id ([a-z0-9]{6})"]
    assert out["msg"].startswith("bootstrap token (1 problem)")


def test_documentation_matches_the_argument_spec() -> None:
    doc = yaml.safe_load(bootstrap_token.DOCUMENTATION)
    assert set(doc["options"]) == {"state", "token_id", "ttl", "description", "groups", "usages", "labels"}
    assert not set(doc["options"]) & set(AUTH_ARG_SPEC)
    assert doc["options"]["groups"]["default"] == [bootstrap.DEFAULT_GROUP]
    assert doc["options"]["usages"]["choices"] == ["authentication", "signing"]
    assert doc["attributes"]["check_mode"]["support"] == "full"
