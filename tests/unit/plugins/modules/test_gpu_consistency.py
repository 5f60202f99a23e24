# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_consistency module: for each fleet node with GPUs, the fleet's count must equal what NVML sees and the
node's allocatable nvidia.com/gpu in its cluster (the host cluster for shared nodes, the tenant's own cluster
where tenant_kubeconfigs names one, otherwise not checked); each shared tenant's KAI queue must exist and its quota,
and the shared quotas together, fit the GPUs the shared nodes really offer; a private tenant's quota must fit its
own nodes. Each disagreement is one problem naming the node or tenant and the layer; it fails unless
fail_on_problems=false, and never changes anything. A node entry with fields the module does not compare is
refused before any API call. The clusters are tests/unit/plugins/module_utils/_k8s/fake.py's FakeApi stand-in:
no network, no sleeps."""
from __future__ import annotations

import json

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.args import AUTH_ARG_SPEC
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.errors import ApiStatus
from ansible_collections.gpucloud.baremetal.plugins.modules import gpu_consistency
from tests.support.module_args import Failed, ModuleStub, patch_module_args, run_unreachable
from tests.unit.plugins.module_utils._k8s.fake import FakeApi

HOST = "/etc/gpucloud/host.kubeconfig"
ACME = "/etc/gpucloud/acme.kubeconfig"
QUEUES = "/apis/scheduling.run.ai/v2/queues"


def node(name: str, gpus: int | None = 8) -> dict:
    allocatable = {"cpu": "64"} if gpus is None else {"cpu": "64", "nvidia.com/gpu": str(gpus)}
    return {"metadata": {"name": name, "labels": {}}, "status": {"allocatable": allocatable}}


def queue(name: str, quota: int) -> dict:
    return {"metadata": {"name": name, "labels": {"gpucloud.baremetal/queue-tree": "gpucloud"}},
            "spec": {"resources": {"gpu": {"quota": quota, "limit": -1}}}}


class Api(FakeApi):
    """A cluster's API; ``queue_status`` forces an answer for the KAI queue list (404: no Queue CRD)."""

    def __init__(self, objects: dict) -> None:
        super().__init__(objects)
        self.urls: list[str] = []
        self.queue_status: int | None = None

    def _send(self, method, url, body, content_type):
        self.urls.append(url)
        if self.queue_status and url.split("?")[0] == QUEUES:
            return self.queue_status, {}, b'{"reason": "Forced", "message": "forced answer"}'
        return super()._send(method, url, body, content_type)


class Apis:
    def __init__(self) -> None:
        self.host = Api({"/api/v1/nodes/gpu2": node("gpu2"), "/api/v1/nodes/gpu3": node("gpu3"),
                         "/api/v1/nodes/cpu1": node("cpu1", gpus=None),
                         QUEUES + "/tenant-alpha": queue("tenant-alpha", 4),
                         QUEUES + "/tenant-beta": queue("tenant-beta", 4)})
        self.acme = Api({"/api/v1/nodes/gpu1": node("gpu1")})
        self.params: list[dict] = []


@pytest.fixture
def apis(monkeypatch: pytest.MonkeyPatch) -> Apis:
    apis = Apis()

    def client(params: dict) -> Api:
        apis.params.append(params)
        return {HOST: apis.host, ACME: apis.acme}[params["kubeconfig"]]

    monkeypatch.setattr(gpu_consistency, "Client", client)
    return apis


def fleet_node(name: str, count: int | None = 8, tenant: str | None = None) -> dict:
    """A node entry as AnsibleModule hands it to run()."""
    return {"name": name, "gpu": None if count is None else {"count": count}, "tenant": tenant}


def nvml(count: int = 8, **more) -> dict:
    return {"changed": False, "failed": False, "gpu_count": count, "msg": "%d GPUs healthy" % count, **more}


def module(check: bool = False, **params) -> ModuleStub:
    base = {"kubeconfig": HOST, "context": "host-admin", "request_timeout": 30.0,
            "nodes": [fleet_node("gpu2"), fleet_node("gpu3"), fleet_node("gpu1", tenant="acme"),
                      fleet_node("cpu1", count=None), fleet_node("cpu2", count=0)],
            "nvml": {"gpu1": nvml(), "gpu2": nvml(), "gpu3": nvml()},
            "tenants": [{"name": "alpha", "isolation": "shared", "gpu": {"quota": 4}},
                        {"name": "beta", "gpu": {"quota": 4}},
                        {"name": "acme", "isolation": "private", "gpu": {"quota": 8}}],
            "tenant_kubeconfigs": {"acme": ACME}, "queue_tree": "gpucloud", "fail_on_problems": True}
    return ModuleStub(params={**base, **params}, check_mode=check)


def test_layers_that_agree_pass_with_a_table_of_ok(apis: Apis) -> None:
    result = gpu_consistency.run(module())
    assert result["ok"] is True and result["changed"] is False and result["problems"] == []
    assert [(r["node"], r["cluster"], r["fleet"], r["nvml"], r["allocatable"], r["notes"]) for r in result["nodes"]] == [
        ("gpu2", "host", 8, 8, 8, []), ("gpu3", "host", 8, 8, 8, []), ("gpu1", "tenant acme", 8, 8, 8, [])]
    assert [(t["tenant"], t["quota"], t["capacity"]) for t in result["tenants"]] == [
        ("alpha", 4, 16), ("beta", 4, 16), ("acme", 8, 8)]
    nodes, tenants = result["table"].split("\n\n")
    assert [line.split()[-1] for line in nodes.splitlines()[1:]] == ["OK", "OK", "OK"]
    assert [line.split()[-1] for line in tenants.splitlines()[1:]] == ["OK", "OK", "OK"]
    assert apis.host.writes == [] and apis.acme.writes == []


def test_a_private_tenants_nodes_are_read_in_its_own_cluster(apis: Apis) -> None:
    gpu_consistency.run(module())
    assert [(p["kubeconfig"], p["context"]) for p in apis.params] == [(HOST, "host-admin"), (ACME, None)]
    assert apis.acme.urls == ["/api/v1/nodes"]  # only its nodes: the queues are the host's


def test_a_private_node_without_a_kubeconfig_is_noted_not_checked_and_not_looked_for_on_the_host(apis: Apis) -> None:
    result = gpu_consistency.run(module(tenant_kubeconfigs={}))
    assert result["ok"] is True
    assert result["nodes"][2]["notes"] == ["tenant acme cluster not checked (no kubeconfig for it)"]
    assert result["nodes"][2]["allocatable"] is None
    assert [p["kubeconfig"] for p in apis.params] == [HOST]
    assert "not checked" in result["table"]


def test_nodes_without_gpus_are_not_checked(apis: Apis) -> None:
    result = gpu_consistency.run(module(nodes=[fleet_node("cpu1", count=None), fleet_node("cpu2", count=0)],
                                        tenants=[]))
    assert result == {"changed": False, "ok": True, "nodes": [], "tenants": [], "problems": [],
                      "table": result["table"]}


def drop(objects: dict, path: str) -> None:
    del objects[path]


@pytest.mark.parametrize(("change", "problem"), [
    (lambda a, p: p["nvml"].update(gpu2=nvml(7)), "gpu2: NVML sees 7 GPUs, the fleet says 8"),
    (lambda a, p: p["nvml"].pop("gpu2"), "gpu2: NVML not run on the node (unreachable, or left out of the play)"),
    (lambda a, p: p["nvml"].update(gpu2={"unreachable": True, "msg": "ssh: connect timed out "}),
     "gpu2: node unreachable: ssh: connect timed out"),
    (lambda a, p: p["nvml"].update(gpu2={"failed": True, "msg": "libnvidia-ml.so.1 not found"}),
     "gpu2: NVML: libnvidia-ml.so.1 not found"),
    (lambda a, p: p["nvml"].update(gpu2=nvml(8, failed=True, msg="GPU 3: XID 79")), "gpu2: NVML health: GPU 3: XID 79"),
    (lambda a, p: drop(a.host.objects, "/api/v1/nodes/gpu2"), "gpu2: no Node in the host cluster"),
    (lambda a, p: a.host.objects.update({"/api/v1/nodes/gpu2": node("gpu2", 7)}),
     "gpu2: allocatable nvidia.com/gpu in the host cluster is 7, the fleet says 8"),
    (lambda a, p: a.host.objects.update({"/api/v1/nodes/gpu2": node("gpu2", None)}),
     "gpu2: allocatable nvidia.com/gpu in the host cluster is absent, the fleet says 8"),
    (lambda a, p: p["nodes"][0].update(gpu={"count": 4}),
     "gpu2: NVML sees 8 GPUs, the fleet says 4; gpu2: allocatable nvidia.com/gpu in the host cluster is 8, "
     "the fleet says 4"),
])
def test_a_shared_node_that_disagrees_fails_naming_the_node_and_the_layer(apis: Apis, change, problem: str) -> None:
    m = module()
    change(apis, m.params)
    with pytest.raises(Failed) as failed:
        gpu_consistency.run(m)
    result = failed.value.result
    assert result["msg"] == "GPU layers disagree: " + problem
    assert result["problems"] == problem.split("; ") and result["ok"] is False and result["changed"] is False
    assert result["nodes"][0]["problems"] == problem.split("; ")
    assert [r["problems"] for r in result["nodes"][1:]] == [[], []]
    assert "gpu2" in result["table"]


@pytest.mark.parametrize(("change", "problem"), [
    (lambda a, p: a.acme.objects.update({"/api/v1/nodes/gpu1": node("gpu1", 4)}),
     "gpu1: allocatable nvidia.com/gpu in the tenant acme cluster is 4, the fleet says 8"),
    (lambda a, p: drop(a.acme.objects, "/api/v1/nodes/gpu1"), "gpu1: no Node in the tenant acme cluster"),
])
def test_a_private_node_that_disagrees_fails_naming_its_tenants_cluster(apis: Apis, change, problem: str) -> None:
    m = module(tenants=[])
    change(apis, m.params)
    with pytest.raises(Failed) as failed:
        gpu_consistency.run(m)
    assert failed.value.result["problems"] == [problem]
    assert failed.value.result["nodes"][2]["problems"] == [problem]


def fewer_gpus_than_the_fleet_says(apis: Apis, params: dict) -> None:
    params["nvml"]["gpu3"] = nvml(4)
    apis.acme.objects["/api/v1/nodes/gpu1"] = node("gpu1", 2)
    apis.host.objects[QUEUES + "/tenant-alpha"] = queue("tenant-alpha", 14)


@pytest.mark.parametrize(("change", "problems"), [
    (lambda a, p: drop(a.host.objects, QUEUES + "/tenant-beta"),
     {"beta": ["tenant beta: KAI queue tenant-beta missing on the host cluster"]}),
    (lambda a, p: a.host.objects.update({QUEUES + "/tenant-alpha": queue("tenant-alpha", 20)}),
     {"alpha": ["tenant alpha: queue quota 20 exceeds the 16 GPUs the shared nodes offer",
                "shared tenants' quotas add up to 24, more than the 16 GPUs the shared nodes offer"],
      "beta": ["shared tenants' quotas add up to 24, more than the 16 GPUs the shared nodes offer"]}),
    (lambda a, p: a.host.objects.update({QUEUES + "/tenant-alpha": queue("tenant-alpha", 10),
                                         QUEUES + "/tenant-beta": queue("tenant-beta", 10)}),
     {"alpha": ["shared tenants' quotas add up to 20, more than the 16 GPUs the shared nodes offer"],
      "beta": ["shared tenants' quotas add up to 20, more than the 16 GPUs the shared nodes offer"]}),
    (lambda a, p: p["tenants"][2].update(gpu={"quota": 12}),
     {"acme": ["tenant acme: GPU quota 12 exceeds the 8 GPUs its nodes offer"]}),
    # What the nodes really offer, not what the fleet says: NVML sees 4 on gpu3, so the shared nodes offer 12,
    # and acme's node, whose cluster shows 2, offers 2.
    (fewer_gpus_than_the_fleet_says,
     {"gpu3": ["gpu3: NVML sees 4 GPUs, the fleet says 8"],
      "gpu1": ["gpu1: allocatable nvidia.com/gpu in the tenant acme cluster is 2, the fleet says 8"],
      "alpha": ["tenant alpha: queue quota 14 exceeds the 12 GPUs the shared nodes offer",
                "shared tenants' quotas add up to 18, more than the 12 GPUs the shared nodes offer"],
      "beta": ["shared tenants' quotas add up to 18, more than the 12 GPUs the shared nodes offer"],
      "acme": ["tenant acme: GPU quota 8 exceeds the 2 GPUs its nodes offer"]}),
])
def test_a_tenant_quota_that_does_not_fit_fails_naming_the_tenant(apis: Apis, change, problems: dict) -> None:
    m = module(fail_on_problems=False)
    change(apis, m.params)
    result = gpu_consistency.run(m)
    assert result["ok"] is False
    found = {r.get("node") or r.get("tenant"): r["problems"] for r in result["nodes"] + result["tenants"]}
    assert {k: v for k, v in found.items() if v} == problems
    assert result["problems"] == [x for r in result["nodes"] + result["tenants"] for x in r["problems"]]


def test_the_queue_a_tenant_names_is_the_one_compared(apis: Apis) -> None:
    apis.host.objects[QUEUES + "/team-b"] = queue("team-b", 30)
    result = gpu_consistency.run(module(fail_on_problems=False, tenants=[{"name": "beta", "queue": "team-b"}]))
    assert result["tenants"][0]["quota"] == 30
    assert result["problems"] == ["tenant beta: queue quota 30 exceeds the 16 GPUs the shared nodes offer"]


def test_the_queues_are_listed_by_their_tree_label(apis: Apis) -> None:
    gpu_consistency.run(module(queue_tree="lab-tree"))
    assert [u for u in apis.host.urls if u.startswith(QUEUES)] == [
        QUEUES + "?labelSelector=gpucloud.baremetal%2Fqueue-tree%3Dlab-tree"]


def test_without_the_queue_crd_the_fleet_quotas_are_compared_and_noted(apis: Apis) -> None:
    apis.host.queue_status = 404
    result = gpu_consistency.run(module(fail_on_problems=False))
    assert result["ok"] is True
    assert result["tenants"][0]["notes"] == ["no KAI Queue CRD on the host cluster yet (tenants stage not run)"]
    assert "no KAI Queue CRD" in result["table"]
    tenants = [{"name": "alpha", "gpu": {"quota": 12}}, {"name": "beta", "gpu": {"quota": 12}}]
    result = gpu_consistency.run(module(fail_on_problems=False, tenants=tenants))
    assert result["problems"] == ["shared tenants' quotas add up to 24, more than the 16 GPUs the shared nodes offer"] * 2


def test_another_api_error_on_the_queues_fails_naming_the_request(apis: Apis) -> None:
    apis.host.queue_status = 403
    with pytest.raises(ApiStatus) as err:
        gpu_consistency.run(module())
    assert err.value.problems == ["list KAI queues: 403 Forced: forced answer"]


def test_fail_on_problems_false_returns_the_problems_without_failing(apis: Apis) -> None:
    m = module(fail_on_problems=False)
    m.params["nvml"]["gpu3"] = nvml(6)
    result = gpu_consistency.run(m)
    assert result["ok"] is False and result["changed"] is False
    assert "gpu3: NVML sees 6 GPUs, the fleet says 8" in result["problems"]


def run_main(capsys: pytest.CaptureFixture, **args) -> tuple[int, dict]:
    with patch_module_args(args), pytest.raises(SystemExit) as exited:
        gpu_consistency.main()
    return exited.value.code, json.loads(capsys.readouterr().out)


MAIN_ARGS = {
    "kubeconfig": HOST,
    "nodes": [{"name": "gpu2", "gpu": {"count": 8}}, {"name": "gpu3", "gpu": {"count": 8}},
              {"name": "gpu1", "gpu": {"count": 8}, "tenant": "acme"}, {"name": "cpu1"}],
    "nvml": {"gpu1": nvml(), "gpu2": nvml(), "gpu3": nvml()},
    "tenants": [{"name": "alpha", "isolation": "shared", "gpu": {"quota": 4}}],
    "tenant_kubeconfigs": {"acme": ACME},
}


@pytest.mark.parametrize("check", [False, True])
def test_main_passes_when_the_layers_agree_in_check_mode_too(apis: Apis, capsys, check: bool) -> None:
    code, out = run_main(capsys, **MAIN_ARGS, _ansible_check_mode=check)
    assert code == 0 and out["ok"] is True and out["changed"] is False and out["problems"] == []
    assert set(out) >= set(yaml.safe_load(gpu_consistency.RETURN))
    assert [r["node"] for r in out["nodes"]] == ["gpu2", "gpu3", "gpu1"]


@pytest.mark.parametrize("check", [False, True])
def test_main_fails_with_the_table_when_they_disagree(apis: Apis, capsys, check: bool) -> None:
    apis.host.objects["/api/v1/nodes/gpu3"] = node("gpu3", 7)
    code, out = run_main(capsys, **MAIN_ARGS, _ansible_check_mode=check)
    assert code == 1 and out["failed"] is True and out["ok"] is False and out["changed"] is False
    assert out["msg"] == "GPU layers disagree: gpu3: allocatable nvidia.com/gpu in the host cluster is 7, the fleet says 8"
    assert "gpu3" in out["table"] and out["problems"] == [out["msg"].split(": ", 1)[1]]


def test_main_with_fail_on_problems_false_exits_ok(apis: Apis, capsys) -> None:
    del apis.acme.objects["/api/v1/nodes/gpu1"]
    code, out = run_main(capsys, **MAIN_ARGS, fail_on_problems=False)
    assert code == 0 and out["ok"] is False and out["problems"] == ["gpu1: no Node in the tenant acme cluster"]


def test_main_a_node_whose_gpu_has_no_count_is_not_checked(apis: Apis, capsys) -> None:
    code, out = run_main(capsys, kubeconfig=HOST, nodes=[{"name": "gpu2", "gpu": {}}], nvml={})
    assert code == 0 and out["ok"] is True and out["nodes"] == []


# --- the node fields taken: argument-level, against an unreachable API ----------------------------------------


@pytest.mark.parametrize("node", [
    {"name": "gpu2", "gpu": {"count": 8}, "tenant": None, "bmc": {"address": "10.0.2.22"}},
    {"name": "gpu2", "gpu": {"count": 8, "model": "H100"}},
])
def test_a_node_with_fields_the_module_does_not_compare_is_refused(capsys, node):
    result = run_unreachable(capsys, gpu_consistency.main, nodes=[node])
    assert result["failed"] and result["msg"].startswith("Unsupported parameters"), result["msg"]


def test_the_fields_a_module_compares_are_taken(capsys):
    result = run_unreachable(capsys, gpu_consistency.main, nodes=[{"name": "gpu1", "gpu": {"count": 8}, "tenant": "acme"}])
    assert result["failed"] and "Unsupported parameters" not in result["msg"], result["msg"]


# --- documentation -------------------------------------------------------------------------------------------


def test_documentation_takes_auth_from_the_fragment_and_names_its_returns() -> None:
    """The rest of the documentation (each option's type, default, choices, suboptions) against the argument spec
    is ansible-test's validate-modules to judge (sanity, empty ignore file)."""
    doc = yaml.safe_load(gpu_consistency.DOCUMENTATION)
    assert "gpucloud.baremetal.k8s_auth" in doc["extends_documentation_fragment"]
    assert not set(doc["options"]) & set(AUTH_ARG_SPEC)
    assert set(yaml.safe_load(gpu_consistency.RETURN)) == {"ok", "nodes", "tenants", "problems", "table"}
