# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every generated vcluster.yaml against the real chart's values.schema.json of the release it is for
(../shared/upstream/vcluster/<tag>/, test data), the lab's stand-in chart against that release, the host
objects, and the refusals before any change."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet
from ansible_collections.gpucloud.baremetal.plugins.modules import vcluster_values
from tests.support import inventory_yaml
from tests.support.fabric import example_model

REPO = Path(__file__).resolve().parents[4]
PINNED = str(yaml.safe_load((REPO / "roles" / "vcluster_tenant" / "defaults" / "main.yml").read_text())[
    "vcluster_tenant_chart_version"])
UPSTREAM = REPO.parent / "shared" / "upstream" / "vcluster"
LAB_CHART = REPO / "lab" / "charts" / "vcluster"
# Chart versions the collection writes values for: the pinned one, and one before the top-level `platform` key.
VERSIONS = [PINNED, "0.30.0"]
PRO = {"pro_image": "ghcr.io/loft-sh/vcluster-pro:%s" % PINNED, "platform_secret": "platform-key"}

# A stated skip where it is missing; in CI, which installs tests/requirements.txt, any skip fails (tests/support/ci.py).
jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (tests/requirements.txt)")


def schema_of(version: str) -> dict:
    path = UPSTREAM / ("v" + version) / "values.schema.json"
    if not path.exists():
        pytest.skip(f"UPSTREAM SCHEMA MISSING: {path} (../shared/upstream); vcluster.yaml not checked against it")
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def upstream() -> dict:
    return schema_of(PINNED)


def lab_tenants() -> list[dict]:
    with open(REPO / "inventories" / "lab" / "fleet.yml", encoding="utf-8") as fh:
        return load_fleet(inventory_yaml.load(fh.name))["tenants"]


TENANTS = [("example", t) for t in example_model()["tenants"]] + [("lab", t) for t in lab_tenants()]
SHARED = [(f, t) for f, t in TENANTS if t["isolation"] == "shared"]
BETA = next(t for f, t in TENANTS if f == "lab" and t["isolation"] == "shared")
ACME = next(t for f, t in TENANTS if f == "lab" and t["isolation"] == "private")


def params(tenant: dict, **extra) -> dict:
    base = {"tenant": tenant, "installed_isolation": "", "chart_version": PINNED, "scheduler_name": "kai-scheduler",
            "expose": "NodePort", "expose_host": "10.0.0.11", "api_port": 443, "pro_image": "", "platform_secret": "",
            "platform_secret_namespace": "", "values": {}, "quota": {}, "limit_range": {"default": {"cpu": "1"}},
            "api_server_cidrs": ["10.0.0.11/32"], "api_server_ports": [443, 6443], "shared_enforcement": "auto",
            "pod_security": "baseline", "pod_policy": "required", "policy_api_served": True}
    return {**base, **extra}


def errors(schema: dict, values: dict) -> list[str]:
    cls = jsonschema.validators.validator_for(schema)
    return sorted("%s: %s" % ("/".join(map(str, e.absolute_path)), e.message) for e in cls(schema).iter_errors(values))


def test_both_tiers_are_among_the_tenants() -> None:
    assert {t["isolation"] for _f, t in TENANTS} == {"shared", "private"}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("enforcement", ["patches", "admission-policy"])
@pytest.mark.parametrize(("fleet", "tenant"), TENANTS, ids=lambda v: v if isinstance(v, str) else v["name"])
def test_every_generated_vcluster_yaml_validates_against_its_releases_schema(
        fleet: str, tenant: dict, enforcement: str, version: str) -> None:
    values = vcluster_values.run(params(tenant, chart_version=version, shared_enforcement=enforcement,
                                        **PRO))["values"]
    assert errors(schema_of(version), values) == []
    if (tenant["isolation"] == "private" or enforcement == "patches") and version == "0.30.0":
        assert "platform" not in values and values["external"] == {"platform": {"apiKey": {"secretName": "platform-key"}}}


def test_the_platform_key_of_one_release_is_refused_by_the_other() -> None:
    new = vcluster_values.run(params(ACME, **PRO))["values"]
    old = vcluster_values.run(params(ACME, chart_version="0.30.0", **PRO))["values"]
    assert any("'platform' was unexpected" in e for e in errors(schema_of("0.30.0"), new))
    assert errors(schema_of("0.30.0"), old) == []


@pytest.mark.parametrize(("fleet", "tenant"), TENANTS, ids=lambda v: v if isinstance(v, str) else v["name"])
def test_each_tier_as_upstream_takes_it(upstream: dict, fleet: str, tenant: dict) -> None:
    out = vcluster_values.run(params(tenant, **PRO))
    values = out["values"]
    port = tenant["vcluster"]["node_port"]
    assert values["controlPlane"]["service"] == {"spec": {"type": "NodePort"}, "httpsNodePort": port}
    assert values["exportKubeConfig"] == {"server": f"https://10.0.0.11:{port}"} and out["server"] == f"https://10.0.0.11:{port}"
    if tenant["isolation"] == "shared":
        assert values["experimental"] == {"syncSettings": {"setOwner": False}}
        assert values["policies"] == {"podSecurityStandard": "baseline"}
        patches = values["sync"]["toHost"]["pods"]["patches"]
        assert {"path": "spec.schedulerName", "expression": '"kai-scheduler"'} in patches
        assert any(f'"kai.scheduler/queue": "{tenant["queue"]}"' in p["expression"] for p in patches)
        # Patches are vCluster Pro's: the shared tenant runs the Pro image with the Platform key too.
        assert values["controlPlane"]["statefulSet"]["image"]["repository"] == "loft-sh/vcluster-pro"
        assert values["platform"] == {"apiKey": {"secretName": "platform-key"}}
        assert "privateNodes" not in values and values["controlPlane"]["proxy"]["extraSANs"] == ["10.0.0.11"]
    else:
        hub = tenant["wireguard"]["hub_ip"]
        assert values["privateNodes"] == {"enabled": True}
        assert values["controlPlane"]["endpoint"] == f"{hub}:443"
        assert values["controlPlane"]["proxy"]["extraSANs"] == [hub, "10.0.0.11"]
        assert values["deploy"]["cni"]["flannel"]["enabled"] and values["deploy"]["kubeProxy"]["enabled"]
        assert "sync" not in values and "policies" not in values  # its own nodes: its own rules (GPU Operator)


@pytest.mark.parametrize(("expose", "service", "ingress", "server"), [
    ("LoadBalancer", {"spec": {"type": "LoadBalancer"}}, None, "https://api.beta.example:443"),
    ("Ingress", {"spec": {"type": "ClusterIP"}}, {"enabled": True, "host": "api.beta.example"},
     "https://api.beta.example:443"),
])
def test_the_operator_chooses_the_way_in(upstream: dict, expose: str, service: dict, ingress: dict | None,
                                         server: str) -> None:
    values = vcluster_values.run(params(BETA, expose=expose, expose_host="api.beta.example", **PRO))["values"]
    assert errors(upstream, values) == []
    assert values["controlPlane"]["service"] == service and values["controlPlane"].get("ingress") == ingress
    assert values["exportKubeConfig"]["server"] == server
    assert values["controlPlane"]["proxy"]["extraSANs"] == ["api.beta.example"]


def test_fleet_values_are_merged_over_ours(upstream: dict) -> None:
    beta = next(t for f, t in TENANTS if f == "example" and t["name"] == "beta")
    values = vcluster_values.run(params(beta))["values"]
    assert values["controlPlane"]["statefulSet"]["resources"] == {"limits": {"memory": "4Gi"}}
    assert values["controlPlane"]["distro"] == {"k8s": {"enabled": True}}
    assert errors(upstream, values) == []


@pytest.mark.parametrize("typo", [{"controlPlane": {"distro": {"k8s": {"enabeld": True}}}},
                                  {"experimental": {"syncSetings": {"setOwner": False}}},
                                  {"controlPlane": {"distro": {"k3s": {"enabled": True}}}}])
def test_a_misspelled_key_is_caught_by_the_schema_the_lab_chart_carries(upstream: dict, typo: dict) -> None:
    values = vcluster_values.run(params(BETA, values=typo))["values"]
    wrong = next(iter(json.dumps(typo).split('"')[-4:-3]))
    lab = json.loads((LAB_CHART / "values.schema.json").read_text())
    for schema in (upstream, lab):
        assert any("Additional properties are not allowed" in e and wrong in e for e in errors(schema, values))


def test_the_lab_stand_in_carries_the_pinned_releases_schema_and_values_verbatim() -> None:
    release = UPSTREAM / ("v" + PINNED)
    if not release.is_dir():
        schema_of(PINNED)  # fails in CI, skips elsewhere
    for name in ("values.schema.json", "values.yaml"):
        assert (LAB_CHART / name).read_bytes() == (release / name).read_bytes(), name
    chart = yaml.safe_load((LAB_CHART / "Chart.yaml").read_text())
    assert chart["version"] == chart["appVersion"] == PINNED
    assert (LAB_CHART / "lab-versions").read_text().split() == [PINNED]


def test_the_pinned_charts_control_plane_runs_as_root_so_baseline_not_restricted() -> None:
    """Pod Security `restricted` requires runAsNonRoot; the chart runs the control plane as uid 0."""
    defaults = yaml.safe_load((UPSTREAM / ("v" + PINNED) / "values.yaml").read_text()) if (
        UPSTREAM / ("v" + PINNED)).is_dir() else schema_of(PINNED)
    security = defaults["controlPlane"]["statefulSet"]["security"]["containerSecurityContext"]
    assert security["runAsUser"] == 0 and security["allowPrivilegeEscalation"] is False


@pytest.mark.parametrize(("extra", "variables"), [
    ({}, ["vcluster_tenant_pro_image", "vcluster_tenant_platform_secret"]),
    ({"expose_host": "", **PRO}, ["vcluster_tenant_expose_host"]),
    ({"api_server_cidrs": [], **PRO}, ["vcluster_tenant_api_server_cidrs"]),
    ({"expose": "Route", **PRO}, ["vcluster_tenant_expose"]),
])
def test_missing_or_wrong_settings_are_refused_naming_the_variables(extra: dict, variables: list[str]) -> None:
    with pytest.raises(ProblemsError) as err:
        vcluster_values.run(params(ACME, **extra))
    assert [p.split(":")[0] for p in err.value.problems] == variables
    if "pro_image" not in extra:
        assert "licence" in err.value.problems[0] and "free mode" in err.value.problems[1]


def test_a_tier_change_is_refused() -> None:
    with pytest.raises(ProblemsError, match="installed as private and is now shared; the tier is fixed at first install"):
        vcluster_values.run(params(BETA, installed_isolation="private"))
    assert vcluster_values.run(params(BETA, installed_isolation="shared"))["values"]


def test_host_objects_of_a_shared_and_a_private_tenant() -> None:
    objs = vcluster_values.run(params(BETA, **PRO))["objects"]
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [
        ("Namespace", "tenant-beta"), ("ResourceQuota", "tenant-quota"), ("LimitRange", "tenant-limits"),
        ("NetworkPolicy", "tenant-isolation"), ("ServiceAccount", "tenant-admin"), ("Role", "tenant-access"),
        ("RoleBinding", "tenant-access"), ("ValidatingAdmissionPolicy", "gpucloud-tenant-beta-pods"),
        ("ValidatingAdmissionPolicyBinding", "gpucloud-tenant-beta-pods")]
    labels = objs[0]["metadata"]["labels"]
    assert labels["gpucloud.baremetal/isolation"] == "shared"
    assert {k: v for k, v in labels.items() if k.startswith("pod-security.kubernetes.io/")} == {
        "pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/enforce-version": "latest",
        "pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/warn-version": "latest",
        "pod-security.kubernetes.io/audit": "restricted", "pod-security.kubernetes.io/audit-version": "latest"}
    assert objs[1]["spec"]["hard"] == {"requests.nvidia.com/gpu": str(BETA["gpu"]["limit"])}
    assert all(o["metadata"].get("namespace") == "tenant-beta" for o in objs[1:7])
    private = vcluster_values.run(params(ACME, **PRO))["objects"]
    assert [o["kind"] for o in private][-1] == "RoleBinding"  # no pod policy: its pods run on its own nodes
    assert next(o for o in private if o["kind"] == "ResourceQuota")["spec"]["hard"] == {"requests.nvidia.com/gpu": "0"}


def test_egress_is_the_namespace_the_cluster_dns_and_the_api_servers_only() -> None:
    policy = next(o for o in vcluster_values.run(params(BETA, api_server_cidrs=["10.0.0.11/32", "10.0.0.12/32"],
                                                        **PRO))["objects"] if o["kind"] == "NetworkPolicy")
    egress = policy["spec"]["egress"]
    assert egress[0] == {"to": [{"podSelector": {}}]}
    assert egress[1]["to"] == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}]
    assert egress[2]["to"] == [{"ipBlock": {"cidr": "10.0.0.11/32"}}, {"ipBlock": {"cidr": "10.0.0.12/32"}}]
    assert all(rule.get("to") for rule in egress), "an egress rule without `to` allows any address"


def test_a_host_without_the_policy_api_is_refused_unless_the_operator_accepts_pod_security_alone() -> None:
    with pytest.raises(ProblemsError, match=r"does not serve admissionregistration\.k8s\.io/v1 ValidatingAdmissionPolicy"):
        vcluster_values.run(params(BETA, policy_api_served=False, **PRO))
    accepted = vcluster_values.run(params(BETA, policy_api_served=False, pod_policy="when-served", **PRO))
    assert "ValidatingAdmissionPolicy" not in [o["kind"] for o in accepted["objects"]]
    # Open-source vCluster: only the policy enforces scheduler and queue, so it is required whatever was asked.
    with pytest.raises(ProblemsError, match="enforce the scheduler and queue"):
        vcluster_values.run(params(BETA, policy_api_served=False, pod_policy="when-served"))
    # A private tenant has no pod policy and needs no such API.
    assert vcluster_values.run(params(ACME, policy_api_served=False, **PRO))["objects"]


@pytest.mark.parametrize(("ref", "image"), [
    ("ghcr.io/loft-sh/vcluster-pro:0.36.1", {"registry": "ghcr.io", "repository": "loft-sh/vcluster-pro", "tag": "0.36.1"}),
    ("registry.local:5000/mirror/vcluster-pro:0.36.1",
     {"registry": "registry.local:5000", "repository": "mirror/vcluster-pro", "tag": "0.36.1"}),
    ("loft-sh/vcluster-pro", {"repository": "loft-sh/vcluster-pro"})])
def test_the_pro_image_reference_becomes_the_charts_image_fields(ref: str, image: dict) -> None:
    values = vcluster_values.run(params(ACME, pro_image=ref, platform_secret="k"))["values"]
    assert values["controlPlane"]["statefulSet"]["image"] == image


@pytest.mark.parametrize(("fleet", "tenant"), SHARED, ids=lambda v: v if isinstance(v, str) else v["name"])
def test_open_source_shared_tier_has_no_patches_and_a_host_admission_policy(upstream: dict, fleet: str,
                                                                            tenant: dict) -> None:
    out = vcluster_values.run(params(tenant))  # no Pro image: auto -> admission-policy
    assert out["shared_enforcement"] == "admission-policy"
    values = out["values"]
    assert errors(upstream, values) == []
    assert values["sync"]["toHost"]["pods"] == {"enabled": True}  # the open-source syncer refuses any patch list
    assert "image" not in values["controlPlane"]["statefulSet"] and "platform" not in values
    policy, binding = out["objects"][-2:]
    name = f"gpucloud-tenant-{tenant['name']}-pods"
    assert (policy["kind"], policy["metadata"]["name"]) == ("ValidatingAdmissionPolicy", name)
    assert (binding["kind"], binding["spec"]["policyName"], binding["spec"]["validationActions"]) == (
        "ValidatingAdmissionPolicyBinding", name, ["Deny"])
    selector = binding["spec"]["matchResources"]["namespaceSelector"]["matchLabels"]
    assert selector == {"kubernetes.io/metadata.name": tenant["namespace"]}
    assert policy["spec"]["matchConditions"] == [{
        "name": "written-by-the-tenants-vcluster",
        "expression": f"request.userInfo.username == 'system:serviceaccount:{tenant['namespace']}:vc-{tenant['name']}'"}]


def test_the_policy_follows_a_service_account_the_values_rename() -> None:
    renamed = {"controlPlane": {"advanced": {"serviceAccount": {"name": "syncer"}}}}
    policy = vcluster_values.run(params(BETA, values=renamed, **PRO))["objects"][-2]
    assert policy["spec"]["matchConditions"][0]["expression"].endswith(":tenant-beta:syncer'")


def test_admission_policy_objects_are_what_the_kubernetes_api_types_hold() -> None:
    """Held against the Kubernetes client's generated admissionregistration/v1 models (from the upstream
    OpenAPI): every field we write is a field of the API, with a value of its type, and nothing is lost."""
    kubernetes = pytest.importorskip("kubernetes", reason="the kubernetes client is a requirement (requirements.txt)")
    api = kubernetes.client.ApiClient()
    for obj in vcluster_values.run(params(BETA))["objects"]:
        if obj["kind"].startswith("ValidatingAdmissionPolicy") or obj["kind"] in ("NetworkPolicy", "Namespace"):
            model = api._ApiClient__deserialize(obj, "V1" + obj["kind"])  # pylint: disable=protected-access
            assert api.sanitize_for_serialization(model) == obj


def test_patches_without_pro_settings_are_refused_naming_the_variables() -> None:
    with pytest.raises(ProblemsError) as err:
        vcluster_values.run(params(BETA, shared_enforcement="patches"))
    assert [p.split(":")[0] for p in err.value.problems] == ["vcluster_tenant_pro_image", "vcluster_tenant_platform_secret"]
    assert "admission-policy" in err.value.problems[0]
    # With the Pro settings, patches; and an explicit admission-policy wins over a Pro image.
    assert "patches" in vcluster_values.run(params(BETA, **PRO))["values"]["sync"]["toHost"]["pods"]
    oss = vcluster_values.run(params(BETA, shared_enforcement="admission-policy", **PRO))
    assert oss["shared_enforcement"] == "admission-policy" and "patches" not in oss["values"]["sync"]["toHost"]["pods"]
