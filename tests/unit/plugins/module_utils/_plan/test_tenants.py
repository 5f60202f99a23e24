# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tenant layers of the plan: the same values and objects the tenant modules apply, Queue objects that
KAI's own CRD accepts, WireGuard topology without keys, and every tenant's problems at once."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, wireguard_tunnels
from ansible_collections.gpucloud.baremetal.plugins.module_utils._plan.tenants import tenant_files, vcluster_settings
from ansible_collections.gpucloud.baremetal.plugins.modules import vcluster_values
from tests.support import inventory_yaml
from tests.support.fabric import example_model

REPO = Path(__file__).resolve().parents[5]
QUEUE_CRD = REPO.parent / "shared" / "upstream" / "kai-scheduling.run.ai_queues.crd.yaml"
PRO = {"pro_image": "ghcr.io/loft-sh/vcluster-pro:0.36.1", "platform_secret": "platform-key",
       "api_server_cidrs": ["10.0.0.11/32"]}

# A stated skip where it is missing; in CI, which installs tests/requirements.txt, any skip fails (tests/support/ci.py).
jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (tests/requirements.txt)")


def lab_model() -> dict:
    with open(REPO / "inventories" / "lab" / "fleet.yml", encoding="utf-8") as fh:
        return load_fleet(inventory_yaml.load(fh.name))


def plan(model: dict, settings: dict | None = None, **extra) -> dict:
    gpus = {n["name"]: n["gpu"]["count"] for n in model["nodes"]}
    shared = [n["name"] for n in model["nodes"] if not n.get("tenant")]
    gateway = (model["site"].get("host_cluster") or {}).get("wireguard_gateway")
    return tenant_files(model["tenants"], gpus, shared, PRO if settings is None else settings,
                        tunnels=wireguard_tunnels(model), gateway=gateway["name"] if gateway else None, **extra)


def test_every_tenant_gets_its_values_and_objects_and_every_private_one_its_wireguard() -> None:
    data = plan(example_model())
    assert sorted(data) == ["kai/queues.yaml",
                            "vcluster/acme.objects.yaml", "vcluster/acme.values.yaml",
                            "vcluster/beta.objects.yaml", "vcluster/beta.values.yaml",
                            "vcluster/cobalt.objects.yaml", "vcluster/cobalt.values.yaml",
                            "wireguard/acme.yaml", "wireguard/cobalt.yaml"]


@pytest.mark.parametrize("name", ["acme", "beta", "cobalt"])
def test_values_and_objects_are_what_the_vcluster_values_module_returns(name: str) -> None:
    model = example_model()
    tenant = next(t for t in model["tenants"] if t["name"] == name)
    params = {"tenant": tenant, "installed_isolation": "", "chart_version": "0.36.1", "scheduler_name": "kai-scheduler",
              "expose": "NodePort", "expose_host": "192.0.2.10", "api_port": 443, "platform_secret_namespace": "",
              "pod_security": "baseline", "pod_policy": "required", "policy_api_served": True,
              "values": {"sync": {"fromHost": {}}}, "quota": {"requests.cpu": "64"}, "limit_range": None,
              "api_server_cidrs": ["10.0.0.0/22"], "api_server_ports": [443, 6443], "shared_enforcement": "auto", **PRO}
    module = vcluster_values.run(params)
    role_vars = {"vcluster_tenant_" + k: v for k, v in params.items() if k not in ("tenant", "installed_isolation")}
    data = plan(model, vcluster_settings(dict(role_vars, vcluster_tenant_kubeconfig="/not/read")))
    assert data["vcluster/%s.values.yaml" % name] == module["values"]
    assert data["vcluster/%s.objects.yaml" % name] == module["objects"]


def test_queue_trees_host_for_the_shared_tenants_and_one_per_private_tenant() -> None:
    trees = plan(example_model())["kai/queues.yaml"]
    host = {q["metadata"]["name"]: q["spec"] for q in trees["host_cluster"]}
    # the shared pool: gpu-r1-03/04 and gpu-r2-02/03/04, 8 GPUs each
    assert host["gpucloud"]["resources"]["gpu"] == {"quota": 40, "limit": 40, "overQuotaWeight": 1}
    assert host["tenant-beta"]["resources"]["gpu"] == {"quota": 16, "limit": 32, "overQuotaWeight": 2}
    assert sorted(host) == ["gpucloud", "tenant-beta"]
    assert sorted(trees["tenant_clusters"]) == ["acme", "cobalt"]
    acme = {q["metadata"]["name"]: q["spec"] for q in trees["tenant_clusters"]["acme"]}
    assert acme["gpucloud"]["resources"]["gpu"]["quota"] == 16 and acme["tenant-acme"]["parentQueue"] == "gpucloud"


def test_queue_objects_are_valid_against_kais_own_crd() -> None:
    if not QUEUE_CRD.exists():
        pytest.skip(f"UPSTREAM CRD MISSING: {QUEUE_CRD} (../shared/upstream)")
    crd = yaml.safe_load(QUEUE_CRD.read_text())
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == "v2")["schema"]["openAPIV3Schema"]
    trees = plan(example_model())["kai/queues.yaml"]
    queues = trees["host_cluster"] + [q for tree in trees["tenant_clusters"].values() for q in tree]
    assert len(queues) == 6
    for queue in queues:
        assert queue["apiVersion"] == "%s/v2" % crd["spec"]["group"] and queue["kind"] == crd["spec"]["names"]["kind"]
        jsonschema.validate(queue, schema)


def test_wireguard_is_the_gateway_and_the_nodes_tunnels_with_no_key() -> None:
    data = plan(lab_model())
    wg = data["wireguard/acme.yaml"]
    assert (wg["gateway"], wg["hub_ip"], wg["interface"]) == ("cp", "10.201.0.1", "wg-acme")
    assert sorted(wg["tunnels"]) == ["cp", "gpu1"]
    assert wg["tunnels"]["gpu1"]["peers"] == [{"host": "cp", "allowed": "10.201.0.1/32",
                                               "endpoint": "198.51.100.11:51820", "keepalive": True, "mesh": False}]
    assert "key" not in yaml.safe_dump(wg).lower()
    assert "wireguard/beta.yaml" not in data  # a shared tenant has no tunnel


def test_every_tenants_problems_are_reported_at_once() -> None:
    with pytest.raises(ProblemsError) as err:
        plan(example_model(), settings={}, parent={"gpu": {"quota": 64}})
    problems = "\n".join(err.value.problems)
    assert "tenant acme (private)" in problems and "tenant cobalt (private)" in problems
    assert "vcluster_tenant_pro_image" in problems and "vcluster_tenant_platform_secret" in problems
    assert "gpucloud: GPU quota 64 exceeds the fleet's GPU capacity of 40" in problems


def test_every_queue_trees_problems_come_at_once_each_said_once() -> None:
    """The host tree's problem did not stop the private tenants' trees from being checked; a private tree's problem
    names its cluster; a problem every tenant has (a missing setting) is said once."""
    with pytest.raises(ProblemsError) as err:
        plan(example_model(), settings={}, parent={"gpu": {"quota": 64}})
    problems = err.value.problems
    assert "gpucloud: GPU quota 64 exceeds the fleet's GPU capacity of 40 for this tree" in problems, problems
    private = [p for p in problems if p.startswith("tenant acme's cluster: gpucloud: GPU quota 64 exceeds")]
    assert len(private) == 1, problems
    assert len(problems) == len(set(problems)), problems


def test_no_shared_tenant_no_host_tree() -> None:
    model = example_model()
    model["tenants"] = [t for t in model["tenants"] if t["isolation"] == "private"]
    trees = plan(model)["kai/queues.yaml"]
    assert trees["host_cluster"] == [] and sorted(trees["tenant_clusters"]) == ["acme", "cobalt"]


def test_role_variables_become_settings_and_others_are_ignored() -> None:
    assert vcluster_settings({"vcluster_tenant_pro_image": "img", "vcluster_tenant_chart_ref": "vcluster",
                              "vcluster_tenant_api_port": 6443, "vcluster_tenant_quota": None, "other": 1}) == {
        "pro_image": "img", "api_port": 6443}
