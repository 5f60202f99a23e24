# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every generated vcluster.yaml against the real chart's values.schema.json (../shared/upstream, test data),
the lab's stand-in schema against the real one, the host objects, and the refusals before any change."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet
from ansible_collections.gpucloud.baremetal.plugins.modules import vcluster_values
from tests.support.fabric import example_model

REPO = Path(__file__).resolve().parents[4]
UPSTREAM = REPO.parent / "shared" / "upstream" / "vcluster-values.schema.json"
LAB_SCHEMA = REPO / "lab" / "charts" / "vcluster" / "values.schema.json"
PRO = {"pro_image": "ghcr.io/loft-sh/vcluster-pro:0.30.0", "platform_secret": "platform-key"}

try:
    import jsonschema
except ImportError:  # an error in CI, which installs tests/requirements.txt
    if os.environ.get("CI"):
        raise
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed (tests/requirements.txt)")


@pytest.fixture(scope="module")
def upstream() -> dict:
    if not UPSTREAM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"the upstream vCluster schema is missing in CI: {UPSTREAM}")
        pytest.skip(f"UPSTREAM SCHEMA MISSING: {UPSTREAM} (../shared/upstream); vcluster.yaml not checked against it")
    return json.loads(UPSTREAM.read_text())


def lab_tenants() -> list[dict]:
    with open(REPO / "inventories" / "lab" / "fleet.yml", encoding="utf-8") as fh:
        return load_fleet(yaml.safe_load(fh))["tenants"]


TENANTS = [("example", t) for t in example_model()["tenants"]] + [("lab", t) for t in lab_tenants()]


def params(tenant: dict, **extra) -> dict:
    base = {"tenant": tenant, "installed_isolation": "", "scheduler_name": "kai-scheduler", "kubeconfig_server": "",
            "api_port": 443, "pro_image": "", "platform_secret": "", "platform_secret_namespace": "", "values": {},
            "quota": {}, "limit_range": {"default": {"cpu": "1"}}, "api_server_cidrs": [], "api_server_ports": [443],
            "shared_enforcement": "auto"}
    return {**base, **extra}


def errors(schema: dict, values: dict) -> list[str]:
    cls = jsonschema.validators.validator_for(schema)
    return sorted("%s: %s" % ("/".join(map(str, e.absolute_path)), e.message) for e in cls(schema).iter_errors(values))


def test_both_tiers_are_among_the_tenants() -> None:
    assert {t["isolation"] for _f, t in TENANTS} == {"shared", "private"}


@pytest.mark.parametrize(("fleet", "tenant"), TENANTS, ids=lambda v: v if isinstance(v, str) else v["name"])
def test_every_generated_vcluster_yaml_validates(upstream: dict, fleet: str, tenant: dict) -> None:
    values = vcluster_values.run(params(tenant, **PRO))["values"]
    assert errors(upstream, values) == []
    assert errors(json.loads(LAB_SCHEMA.read_text()), values) == []
    if tenant["isolation"] == "shared":
        assert values["experimental"] == {"syncSettings": {"setOwner": False}}
        patches = values["sync"]["toHost"]["pods"]["patches"]
        assert {"path": "spec.schedulerName", "expression": '"kai-scheduler"'} in patches
        assert any(f'"kai.scheduler/queue": "{tenant["queue"]}"' in p["expression"] for p in patches)
        # Patches are vCluster Pro's: the shared tenant runs the Pro image with the Platform key too.
        assert values["controlPlane"]["statefulSet"]["image"]["repository"] == "loft-sh/vcluster-pro"
        assert values["platform"] == {"apiKey": {"secretName": "platform-key"}}
        assert "privateNodes" not in values
    else:
        hub = tenant["wireguard"]["hub_ip"]
        assert values["privateNodes"] == {"enabled": True}
        assert values["controlPlane"]["endpoint"] == f"{hub}:443"
        assert values["controlPlane"]["proxy"]["extraSANs"] == [hub]
        assert values["controlPlane"]["statefulSet"]["image"]["repository"] == "loft-sh/vcluster-pro"
        assert values["deploy"]["cni"]["flannel"]["enabled"] and values["deploy"]["kubeProxy"]["enabled"]
        assert "sync" not in values


def test_fleet_values_are_merged_over_ours(upstream: dict) -> None:
    beta = next(t for f, t in TENANTS if f == "example" and t["name"] == "beta")
    values = vcluster_values.run(params(beta))["values"]
    assert values["controlPlane"]["statefulSet"]["resources"] == {"limits": {"memory": "4Gi"}}
    assert values["controlPlane"]["distro"] == {"k8s": {"enabled": True}}


@pytest.mark.parametrize("typo", [{"controlPlane": {"distro": {"k8s": {"enabeld": True}}}},
                                  {"experimental": {"syncSetings": {"setOwner": False}}},
                                  {"controlPlane": {"distro": {"k3s": {"enabled": True}}}}])
def test_a_misspelled_key_is_caught_by_both_schemas(upstream: dict, typo: dict) -> None:
    beta = next(t for f, t in TENANTS if f == "lab" and t["isolation"] == "shared")
    values = vcluster_values.run(params(beta, values=typo))["values"]
    wrong = next(iter(json.dumps(typo).split('"')[-4:-3]))
    assert any("Additional properties are not allowed" in e and wrong in e for e in errors(upstream, values))
    assert any("Additional properties are not allowed" in e and wrong in e
               for e in errors(json.loads(LAB_SCHEMA.read_text()), values))


def _upstream_node(schema: dict, node: dict | bool) -> dict:
    if not isinstance(node, dict):  # `true`: anything
        return {}
    while "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _walk(lab: dict, up: dict, schema: dict, path: str, found: list[str]) -> None:
    up = _upstream_node(schema, up)
    if lab.get("type") == "array" and "items" in lab:
        _walk(lab["items"], up.get("items", {}), schema, path + "[]", found)
        return
    if "properties" not in lab:
        if "type" in lab and lab["type"] != up.get("type"):
            found.append(f"{path}: type {lab['type']} here, {up.get('type')} upstream")
        return
    if lab.get("additionalProperties") is not False or up.get("additionalProperties") is not False:
        found.append(f"{path}: must be closed here as upstream")
    if set(lab["properties"]) != set(up.get("properties", {})):
        found.append(f"{path}: keys differ: lab-only {sorted(set(lab['properties']) - set(up['properties']))}, "
                     f"upstream-only {sorted(set(up['properties']) - set(lab['properties']))}")
    for key, sub in lab["properties"].items():
        if key in up.get("properties", {}):
            _walk(sub, up["properties"][key], schema, f"{path}.{key}" if path else key, found)


def test_lab_stand_in_schema_has_upstreams_keys_and_types_where_it_describes(upstream: dict) -> None:
    lab = json.loads(LAB_SCHEMA.read_text())
    found: list[str] = []
    _walk(lab, upstream, upstream, "", found)
    assert found == []


def test_private_tenant_without_pro_settings_is_refused_naming_the_variables() -> None:
    acme = next(t for f, t in TENANTS if f == "lab" and t["isolation"] == "private")
    with pytest.raises(ProblemsError) as err:
        vcluster_values.run(params(acme))
    assert [p.split(":")[0] for p in err.value.problems] == ["vcluster_tenant_pro_image", "vcluster_tenant_platform_secret"]
    assert "licence" in err.value.problems[0] and "free mode" in err.value.problems[1]


def test_a_tier_change_is_refused() -> None:
    beta = next(t for f, t in TENANTS if f == "lab" and t["isolation"] == "shared")
    with pytest.raises(ProblemsError, match="installed as private and is now shared; the tier is fixed at first install"):
        vcluster_values.run(params(beta, installed_isolation="private"))
    assert vcluster_values.run(params(beta, installed_isolation="shared"))["values"]


def test_host_objects_of_a_shared_and_a_private_tenant() -> None:
    beta = next(t for f, t in TENANTS if f == "lab" and t["isolation"] == "shared")
    objs = vcluster_values.run(params(beta, **PRO))["objects"]
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [
        ("Namespace", "tenant-beta"), ("ResourceQuota", "tenant-quota"), ("LimitRange", "tenant-limits"),
        ("NetworkPolicy", "tenant-isolation"), ("ServiceAccount", "tenant-admin"), ("Role", "tenant-access"),
        ("RoleBinding", "tenant-access")]
    assert objs[0]["metadata"]["labels"]["gpucloud.baremetal/isolation"] == "shared"
    assert objs[1]["spec"]["hard"] == {"requests.nvidia.com/gpu": str(beta["gpu"]["limit"])}
    assert all(o["metadata"].get("namespace") == "tenant-beta" for o in objs[1:])
    acme = next(t for f, t in TENANTS if f == "lab" and t["isolation"] == "private")
    quota = next(o for o in vcluster_values.run(params(acme, **PRO))["objects"] if o["kind"] == "ResourceQuota")
    assert quota["spec"]["hard"] == {"requests.nvidia.com/gpu": "0"}


@pytest.mark.parametrize(("ref", "image"), [
    ("ghcr.io/loft-sh/vcluster-pro:0.30.0", {"registry": "ghcr.io", "repository": "loft-sh/vcluster-pro", "tag": "0.30.0"}),
    ("registry.local:5000/mirror/vcluster-pro:0.30.0",
     {"registry": "registry.local:5000", "repository": "mirror/vcluster-pro", "tag": "0.30.0"}),
    ("loft-sh/vcluster-pro", {"repository": "loft-sh/vcluster-pro"})])
def test_the_pro_image_reference_becomes_the_charts_image_fields(ref: str, image: dict) -> None:
    acme = next(t for f, t in TENANTS if f == "lab" and t["isolation"] == "private")
    values = vcluster_values.run(params(acme, pro_image=ref, platform_secret="k"))["values"]
    assert values["controlPlane"]["statefulSet"]["image"] == image


SHARED = [(f, t) for f, t in TENANTS if t["isolation"] == "shared"]


@pytest.mark.parametrize(("fleet", "tenant"), SHARED, ids=lambda v: v if isinstance(v, str) else v["name"])
def test_open_source_shared_tier_has_no_patches_and_a_host_admission_policy(upstream: dict, fleet: str,
                                                                            tenant: dict) -> None:
    out = vcluster_values.run(params(tenant))  # no Pro image: auto -> admission-policy
    assert out["shared_enforcement"] == "admission-policy"
    values = out["values"]
    assert errors(upstream, values) == []
    assert values["sync"]["toHost"]["pods"] == {"enabled": True}  # the open-source syncer refuses any patch list
    assert "image" not in values["controlPlane"]["statefulSet"] and "platform" not in values
    assert values["experimental"] == {"syncSettings": {"setOwner": False}}
    policy, binding = out["objects"][-2:]
    name = f"gpucloud-tenant-{tenant['name']}-pods"
    assert (policy["kind"], policy["metadata"]["name"]) == ("ValidatingAdmissionPolicy", name)
    assert (binding["kind"], binding["spec"]["policyName"], binding["spec"]["validationActions"]) == (
        "ValidatingAdmissionPolicyBinding", name, ["Deny"])
    selector = binding["spec"]["matchResources"]["namespaceSelector"]["matchLabels"]
    assert selector == {"kubernetes.io/metadata.name": tenant["namespace"]}
    expressions = " ".join(v["expression"] for v in policy["spec"]["validations"])
    assert "object.spec.schedulerName == 'kai-scheduler'" in expressions
    assert f"object.metadata.labels['kai.scheduler/queue'] == '{tenant['queue']}'" in expressions


def test_admission_policy_objects_are_what_the_kubernetes_api_types_hold() -> None:
    """Held against the Kubernetes client's generated admissionregistration/v1 models (from the upstream
    OpenAPI): every field we write is a field of the API, with a value of its type, and nothing is lost."""
    kubernetes = pytest.importorskip("kubernetes", reason="the kubernetes client is a requirement (requirements.txt)")
    api = kubernetes.client.ApiClient()
    beta = next(t for f, t in TENANTS if f == "lab" and t["isolation"] == "shared")
    for obj in vcluster_values.run(params(beta))["objects"][-2:]:
        model = api._ApiClient__deserialize(obj, "V1" + obj["kind"])  # pylint: disable=protected-access
        assert api.sanitize_for_serialization(model) == obj


def test_patches_without_pro_settings_are_refused_naming_the_variables() -> None:
    beta = next(t for f, t in TENANTS if f == "lab" and t["isolation"] == "shared")
    with pytest.raises(ProblemsError) as err:
        vcluster_values.run(params(beta, shared_enforcement="patches"))
    assert [p.split(":")[0] for p in err.value.problems] == ["vcluster_tenant_pro_image", "vcluster_tenant_platform_secret"]
    assert "admission-policy" in err.value.problems[0]
    # With the Pro settings, patches; and an explicit admission-policy wins over a Pro image.
    assert "patches" in vcluster_values.run(params(beta, **PRO))["values"]["sync"]["toHost"]["pods"]
    oss = vcluster_values.run(params(beta, shared_enforcement="admission-policy", **PRO))
    assert oss["shared_enforcement"] == "admission-policy" and "patches" not in oss["values"]["sync"]["toHost"]["pods"]
