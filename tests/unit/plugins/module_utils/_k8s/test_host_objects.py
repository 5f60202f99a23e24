# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``_k8s.host_objects``: a tenant's objects in the host cluster. Held here: every object labelled as ours and
the tenant's, the Pod Security level chosen, the quota from the GPU limit and the settings, the LimitRange
defaults, ingress and egress of the NetworkPolicy, read-only RBAC that reaches one secret, when the pod
admission policy is made and for which service account, and the refusals naming the variable and what is
allowed. The order of kinds and the default egress are held by tests/unit/plugins/modules/test_vcluster_values.py."""
from __future__ import annotations

import copy

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.errors import VclusterError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.host_objects import (
    DEFAULTS,
    host_objects,
)

BETA = {"name": "beta", "isolation": "shared", "namespace": "tenant-beta", "queue": "tenant-beta",
        "vcluster_release": "beta", "vcluster_secret": "vc-beta", "gpu": {"quota": 8, "limit": 16},
        "vcluster": {"node_port": 30443}}
ACME = {"name": "acme", "isolation": "private", "namespace": "tenant-acme", "queue": "tenant-acme",
        "vcluster_release": "acme", "vcluster_secret": "vc-acme", "gpu": {"quota": 4, "limit": 4},
        "vcluster": {"node_port": 30444}}
SERVED = {"api_server_cidrs": ["10.0.0.11/32"], "policy_api_served": True}
READ = ["get", "list", "watch"]


def by_kind(objs: list[dict]) -> dict[str, dict]:
    return {o["kind"]: o for o in objs}


def tenant(base: dict, **changes) -> dict:
    out = copy.deepcopy(base)
    out.update(changes)
    return out


@pytest.mark.parametrize("who", [BETA, ACME], ids=["shared", "private"])
def test_every_object_is_labelled_as_ours_and_the_tenants(who: dict) -> None:
    objs = host_objects(who, SERVED)
    assert objs[0]["kind"] == "Namespace" and objs[0]["metadata"]["name"] == who["namespace"]
    for obj in objs:
        labels = obj["metadata"]["labels"]
        assert labels["app.kubernetes.io/managed-by"] == "gpucloud.baremetal", obj["kind"]
        assert labels["gpucloud.baremetal/tenant"] == who["name"], obj["kind"]
        cluster_scoped = obj["kind"] in ("Namespace", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
        assert ("namespace" in obj["metadata"]) is not cluster_scoped, obj["kind"]
    assert objs[0]["metadata"]["labels"]["gpucloud.baremetal/isolation"] == who["isolation"]


@pytest.mark.parametrize("level", ["restricted", "privileged", "baseline"])
def test_the_namespace_enforces_the_chosen_pod_security_level_and_warns_at_restricted(level: str) -> None:
    labels = host_objects(BETA, dict(SERVED, pod_security=level))[0]["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == level
    assert labels["pod-security.kubernetes.io/warn"] == labels["pod-security.kubernetes.io/audit"] == "restricted"


def test_the_quota_is_the_gpu_limit_and_the_settings_quota_as_strings() -> None:
    quota = by_kind(host_objects(BETA, dict(SERVED, quota={"requests.cpu": 32, "limits.memory": "256Gi"})))
    assert quota["ResourceQuota"]["spec"]["hard"] == {"requests.nvidia.com/gpu": "16", "requests.cpu": "32",
                                                      "limits.memory": "256Gi"}
    assert quota["ResourceQuota"]["metadata"] == {
        "name": "tenant-quota", "namespace": "tenant-beta",
        "labels": {"app.kubernetes.io/managed-by": "gpucloud.baremetal", "gpucloud.baremetal/tenant": "beta"}}


@pytest.mark.parametrize("gpu", [{}, {"quota": 2}, {"quota": 2, "limit": -1}])
def test_a_shared_tenant_without_a_gpu_limit_gets_no_gpu_quota(gpu: dict) -> None:
    unlimited = tenant(BETA, gpu=gpu)
    assert "ResourceQuota" not in by_kind(host_objects(unlimited, SERVED))
    only_cpu = by_kind(host_objects(unlimited, dict(SERVED, quota={"requests.cpu": "8"})))["ResourceQuota"]
    assert only_cpu["spec"]["hard"] == {"requests.cpu": "8"}


def test_a_shared_tenant_limited_to_no_gpus_gets_a_zero_quota() -> None:
    zero = by_kind(host_objects(tenant(BETA, gpu={"quota": 0, "limit": 0}), SERVED))["ResourceQuota"]
    assert zero["spec"]["hard"] == {"requests.nvidia.com/gpu": "0"}


def test_a_private_tenant_gets_no_gpus_in_the_host_namespace_whatever_its_limit() -> None:
    quota = by_kind(host_objects(tenant(ACME, gpu={"quota": 64, "limit": 64}), SERVED))["ResourceQuota"]
    assert quota["spec"]["hard"] == {"requests.nvidia.com/gpu": "0"}


def test_the_limit_range_defaults_and_an_override() -> None:
    default = by_kind(host_objects(BETA, SERVED))["LimitRange"]
    assert default["metadata"]["name"] == "tenant-limits"
    assert default["spec"]["limits"] == [{"type": "Container", "default": {"cpu": "1", "memory": "2Gi"},
                                          "defaultRequest": {"cpu": "100m", "memory": "256Mi"}}]
    own = {"default": {"cpu": "4"}, "max": {"memory": "64Gi"}}
    limits = by_kind(host_objects(BETA, dict(SERVED, limit_range=own)))["LimitRange"]["spec"]["limits"]
    assert limits == [{"type": "Container", "default": {"cpu": "4"}, "max": {"memory": "64Gi"}}]


def test_changing_the_objects_does_not_change_the_defaults_of_the_next_tenant() -> None:
    before = copy.deepcopy(DEFAULTS)
    first = by_kind(host_objects(BETA, SERVED))
    first["LimitRange"]["spec"]["limits"][0]["default"]["cpu"] = "999"
    first["NetworkPolicy"]["spec"]["egress"][1]["to"][0]["podSelector"]["matchLabels"]["k8s-app"] = "evil"
    assert before == DEFAULTS
    second = by_kind(host_objects(ACME, SERVED))
    assert second["LimitRange"]["spec"]["limits"][0]["default"]["cpu"] == "1"
    assert second["NetworkPolicy"]["spec"]["egress"][1]["to"][0]["podSelector"] == {
        "matchLabels": {"k8s-app": "kube-dns"}}


def test_ingress_is_the_namespace_and_non_tenant_namespaces_plus_the_tenant_api_port() -> None:
    spec = by_kind(host_objects(BETA, SERVED))["NetworkPolicy"]["spec"]
    assert spec["podSelector"] == {} and spec["policyTypes"] == ["Ingress", "Egress"]
    assert spec["ingress"] == [
        {"from": [{"podSelector": {}}, {"namespaceSelector": {"matchExpressions": [
            {"key": "gpucloud.baremetal/tenant", "operator": "DoesNotExist"}]}}]},
        {"ports": [{"protocol": "TCP", "port": 8443}]}]


def test_egress_follows_the_dns_and_api_server_settings() -> None:
    settings = dict(SERVED, api_server_cidrs=["192.0.2.10/32"], api_server_ports=[8443],
                    dns_namespace="dns", dns_pod_labels={"app": "unbound"})
    egress = by_kind(host_objects(ACME, settings))["NetworkPolicy"]["spec"]["egress"]
    assert egress[1] == {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "dns"}},
                                 "podSelector": {"matchLabels": {"app": "unbound"}}}],
                         "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}
    assert egress[2] == {"to": [{"ipBlock": {"cidr": "192.0.2.10/32"}}], "ports": [{"protocol": "TCP", "port": 8443}]}
    default_ports = by_kind(host_objects(ACME, SERVED))["NetworkPolicy"]["spec"]["egress"][2]["ports"]
    assert [p["port"] for p in default_ports] == [443, 6443]


def test_the_tenants_host_credentials_read_their_namespace_and_one_secret_only() -> None:
    objs = by_kind(host_objects(BETA, SERVED))
    assert objs["ServiceAccount"]["metadata"]["name"] == "tenant-admin"
    rules = objs["Role"]["rules"]
    assert all(set(rule["verbs"]) <= set(READ) for rule in rules), rules
    secrets = [rule for rule in rules if "secrets" in rule["resources"]]
    assert secrets == [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["vc-beta"], "verbs": ["get"]}]
    binding = objs["RoleBinding"]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "tenant-access"}
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "tenant-admin", "namespace": "tenant-beta"},
        {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "gpucloud:tenant:beta"}]


def test_the_pod_policy_names_the_control_planes_service_account() -> None:
    default = by_kind(host_objects(BETA, SERVED))["ValidatingAdmissionPolicy"]
    assert default["spec"]["matchConditions"][0]["expression"] == (
        "request.userInfo.username == 'system:serviceaccount:tenant-beta:vc-beta'")
    values = {"controlPlane": {"advanced": {"serviceAccount": {"name": "beta-syncer"}}}}
    own = by_kind(host_objects(BETA, SERVED, values))["ValidatingAdmissionPolicy"]
    assert own["spec"]["matchConditions"][0]["expression"].endswith(":tenant-beta:beta-syncer'")


def test_the_policy_is_made_wherever_the_host_serves_its_api_for_shared_tenants_only() -> None:
    pro = dict(SERVED, pro_image="ghcr.io/loft-sh/vcluster-pro:0.36.1", pod_policy="when-served")
    assert "ValidatingAdmissionPolicyBinding" in by_kind(host_objects(BETA, pro))
    unserved = by_kind(host_objects(BETA, dict(pro, policy_api_served=False)))
    assert "ValidatingAdmissionPolicy" not in unserved and "ValidatingAdmissionPolicyBinding" not in unserved
    assert "ValidatingAdmissionPolicy" not in by_kind(host_objects(ACME, SERVED))


def test_missing_cidrs_and_an_unknown_pod_policy_are_both_refused_naming_the_variables() -> None:
    with pytest.raises(VclusterError) as err:
        host_objects(ACME, {"pod_policy": "sometimes"})
    problems = err.value.problems
    assert [p.split(":")[0] for p in problems] == ["vcluster_tenant_api_server_cidrs",
                                                   "vcluster_tenant_pod_policy"]
    assert "10.0.0.11/32" in problems[0]
    assert problems[1] == "vcluster_tenant_pod_policy: 'sometimes' is not one of required, when-served"


@pytest.mark.parametrize(("changes", "problem"), [
    ({"api_server_cidrs": ["0.0.0.0/0"]}, "vcluster_tenant_api_server_cidrs: '0.0.0.0/0' is every address"),
    ({"api_server_cidrs": ["::/0"]}, "vcluster_tenant_api_server_cidrs: '::/0' is every address"),
    ({"api_server_cidrs": ["10.0.0.11"]}, "vcluster_tenant_api_server_cidrs: '10.0.0.11' is not a CIDR"),
    ({"api_server_cidrs": ["10.0.0.11/24"]}, "vcluster_tenant_api_server_cidrs: '10.0.0.11/24' is not a CIDR ("),
    ({"api_server_cidrs": ["10.0.0.300/32"]}, "vcluster_tenant_api_server_cidrs: '10.0.0.300/32' is not a CIDR ("),
    ({"api_server_ports": []}, "vcluster_tenant_api_server_ports: []; give the API servers' TCP ports"),
    ({"api_server_ports": [443, 0]}, "vcluster_tenant_api_server_ports: [443, 0]; give the API servers' TCP ports"),
])
def test_egress_that_would_reach_every_address_or_port_is_refused(changes: dict, problem: str) -> None:
    """The egress rule to the API servers is the one way out of a tenant namespace besides DNS: a /0 block or a
    rule without ports would let tenant pods reach anything (BMCs included); a block the API server would refuse
    is refused here, before any object is applied."""
    with pytest.raises(VclusterError) as err:
        host_objects(ACME, dict(SERVED, **changes))
    assert len(err.value.problems) == 1 and err.value.problems[0].startswith(problem), err.value.problems


def test_api_server_blocks_of_either_family_pass() -> None:
    objs = by_kind(host_objects(ACME, dict(SERVED, api_server_cidrs=["10.0.0.0/29", "2001:db8::11/128"])))
    egress = objs["NetworkPolicy"]["spec"]["egress"][-1]
    assert [b["ipBlock"]["cidr"] for b in egress["to"]] == ["10.0.0.0/29", "2001:db8::11/128"]


def test_a_shared_tenant_needs_the_policy_api_where_the_policy_is_required() -> None:
    pro = {"api_server_cidrs": ["10.0.0.11/32"], "pro_image": "ghcr.io/loft-sh/vcluster-pro:0.36.1"}
    with pytest.raises(VclusterError) as err:
        host_objects(BETA, pro)  # pod_policy defaults to required
    assert err.value.problems[0].startswith("vcluster_tenant_pod_policy: tenant beta (shared) runs on shared GPU")
    assert "or accept Pod Security admission alone with vcluster_tenant_pod_policy: when-served" in str(err.value)
    assert "Nothing was changed." in str(err.value)
