# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tenants stage against the lab: KAI queues on the real Queue CRD and the lab's simulation of KAI's
queue admission, a vCluster per tenant (the lab controller's real per-tenant kube-apiserver, reached
through its Service's NodePort), real RBAC, onboarding and offboarding."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.integration.conftest import Converged
from tests.integration.lab import KUBECONFIG, Lab, config, hostvars, kubectl, wait

TREE = "gpucloud-itest"
CONTROL_PLANES = config.STATE_DIR / "controller" / "tenant-control-planes.json"
BETA_OBJECTS = ["limitrange/tenant-limits", "networkpolicy.networking.k8s.io/tenant-isolation",
                "resourcequota/tenant-quota", "role.rbac.authorization.k8s.io/tenant-access",
                "rolebinding.rbac.authorization.k8s.io/tenant-access", "serviceaccount/tenant-admin"]
LABELS = "app.kubernetes.io/managed-by=gpucloud.baremetal"
UNLIMITED = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
TENANTS = {t["name"]: t for t in hostvars()["localhost"]["gpucloud_tenants"]}


def tenant(name: str, quota: int, limit: int = 16) -> dict:
    return {"name": name, "queue": f"itest-{name}", "gpu": {"quota": quota, "limit": limit, "over_quota_weight": 1}}


def queues(tree: str = TREE) -> dict[str, dict]:
    items = json.loads(kubectl("get", "queues.scheduling.run.ai", "-o", "json").stdout)["items"]
    return {q["metadata"]["name"]: q for q in items
            if q["metadata"]["name"] == tree or q.get("spec", {}).get("parentQueue") == tree}


def snapshot() -> dict[str, list[str]]:
    """What the tenants stage could touch in the host cluster: namespaces, queues, every namespaced object we label."""
    def names(*args: str) -> list[str]:
        return sorted(kubectl("get", *args, "-o", "name").stdout.split())
    return {"namespaces": names("namespaces"), "queues": names("queues.scheduling.run.ai"),
            "ours": names("all,resourcequotas,limitranges,networkpolicies,serviceaccounts,roles,rolebindings,secrets",
                          "-A", "-l", LABELS),
            "statefulsets": names("statefulsets", "-A")}


def test_queue_tree_applied_idempotent_pruned_and_refused(lab: Lab) -> None:
    kv = {"lab_kubeconfig": str(KUBECONFIG)}
    try:
        three = {**kv, "itest_tenants": [tenant("a", 4), tenant("b", 4), tenant("c", 8)]}
        first = lab.playbook("kai_queues.yml", three)
        assert first.rc == 0, first.failures()
        result = first.results("Apply the queue tree")["localhost"]
        assert result["created"] == [TREE, "itest-a", "itest-b", "itest-c"]
        got = queues()
        assert got["itest-c"]["spec"] == {"displayName": "c", "parentQueue": TREE, "resources": {
            "gpu": {"quota": 8, "limit": 16, "overQuotaWeight": 1}, "cpu": UNLIMITED, "memory": UNLIMITED}}
        assert got[TREE]["spec"]["resources"]["gpu"] == {"quota": 16, "limit": 16, "overQuotaWeight": 1}

        again = lab.playbook("kai_queues.yml", three)
        assert again.changed_tasks() == [] and again.results("Apply the queue tree")["localhost"]["requests"] == 1

        # A hand-made queue under our parent is not ours: prune leaves it alone.
        hand = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "itest-hand"},
                "spec": {"parentQueue": TREE, "resources": {"gpu": {"quota": 0, "limit": -1, "overQuotaWeight": 1}}}}
        kubectl("create", "-f", "-", input=json.dumps(hand))
        before = queues()
        checked = lab.playbook("kai_queues.yml", {**kv, "itest_tenants": [tenant("a", 2)], "itest_prune": True},
                               check=True)
        assert checked.rc == 0, checked.failures()
        assert checked.results("Apply the queue tree")["localhost"]["deleted"] == ["itest-b", "itest-c"]
        assert {n: q["spec"] for n, q in queues().items()} == {n: q["spec"] for n, q in before.items()}, \
            "check mode changed a queue"

        pruned = lab.playbook("kai_queues.yml", {**kv, "itest_tenants": [tenant("a", 2)], "itest_prune": True})
        res = pruned.results("Apply the queue tree")["localhost"]
        assert res["updated"] == ["itest-a"] and sorted(res["deleted"]) == ["itest-b", "itest-c"]
        assert sorted(queues()) == [TREE, "itest-a", "itest-hand"]

        over = lab.playbook("kai_queues.yml", {**kv, "itest_tenants": [tenant("a", 10), tenant("d", 10)]})
        assert over.failed_tasks() == ["Apply the queue tree"]
        msg = over.results("Apply the queue tree")["localhost"]["msg"]
        assert "itest-a, itest-d: gpu quotas together 20 exceed the quota 16 of their parent gpucloud-itest" in msg
        assert "itest-d" not in queues(), "a refused tree was partly applied"
    finally:
        kubectl("delete", "queue.scheduling.run.ai", "itest-hand", "--ignore-not-found")
        gone = lab.playbook("kai_queues.yml", {**kv, "itest_state": "absent"})
        assert gone.rc == 0, gone.failures()
        assert queues() == {}


# --- the tenants stage: tenants.yml, tenant_onboard.yml, tenant_offboard.yml on the lab fleet ----------


@pytest.fixture(scope="module")
def kdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kubeconfigs") / "tenants"


def _vars(kdir: Path, **extra) -> dict:
    return {"tenants_kubeconfig_dir": str(kdir), **extra}


def _offboard(lab: Lab, kdir: Path, name: str, limit: str | None = "localhost"):
    return lab.playbook("playbooks/tenant_offboard.yml", _vars(kdir, tenant=name, confirm=name), limit=limit)


def _ours(namespace: str) -> list[str]:
    kinds = "resourcequotas,limitranges,networkpolicies,serviceaccounts,roles,rolebindings"
    return sorted(kubectl("get", kinds, "-n", namespace, "-l", LABELS, "-o", "name").stdout.split())


def _control_planes() -> dict:
    return json.loads(CONTROL_PLANES.read_text()) if CONTROL_PLANES.exists() else {}


def test_tenants_stage_check_apply_and_idempotent(lab: Lab, kdir: Path) -> None:
    for name in ("acme", "beta"):  # from a clean state
        assert _offboard(lab, kdir, name).rc == 0
    before = snapshot()
    check = lab.playbook("playbooks/tenants.yml", _vars(kdir), check=True)
    assert check.rc == 0, check.failures()
    assert snapshot() == before, "check mode changed the host cluster"
    assert not kdir.exists(), "check mode wrote a kubeconfig"

    run = lab.playbook("playbooks/tenants.yml", _vars(kdir))
    assert run.rc == 0, run.failures()
    assert _ours("tenant-beta") == BETA_OBJECTS
    ns = json.loads(kubectl("get", "namespace", "tenant-beta", "-o", "json").stdout)["metadata"]["labels"]
    assert ns["gpucloud.baremetal/isolation"] == "shared" and ns["gpucloud.baremetal/tenant"] == "beta"
    quota = json.loads(kubectl("get", "resourcequota", "tenant-quota", "-n", "tenant-beta", "-o", "json").stdout)
    assert quota["spec"]["hard"] == {"requests.nvidia.com/gpu": "16"}
    host_queues = queues("gpucloud")
    assert sorted(host_queues) == ["gpucloud", "tenant-beta"]
    assert host_queues["tenant-beta"]["spec"]["resources"]["gpu"] == {"quota": 8, "limit": 16, "overQuotaWeight": 2}
    assert host_queues["gpucloud"]["spec"]["resources"]["gpu"]["quota"] == 16  # the shared nodes' GPUs

    assert {k: v for k, v in ns.items() if k.startswith("pod-security.kubernetes.io/")} == {
        "pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/enforce-version": "latest",
        "pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/warn-version": "latest",
        "pod-security.kubernetes.io/audit": "restricted", "pod-security.kubernetes.io/audit-version": "latest"}

    # The exported kubeconfigs: 0600 in a 0700 folder, each naming its tenant's Service (the NodePort of the
    # fleet on the host cluster's node) and reaching the tenant's own API server through it, from here.
    assert oct(kdir.stat().st_mode & 0o777) == "0o700"
    for name in ("acme", "beta"):
        path = kdir / f"{name}.kubeconfig"
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        server = kubectl("config", "view", "-o", "jsonpath={.clusters[0].cluster.server}", kubeconfig=path).stdout
        assert server == f"https://{config.CONTROL_PLANE.ip}:{TENANTS[name]['vcluster']['node_port']}"
        service = json.loads(kubectl("get", "service", name, "-n", f"tenant-{name}", "-o", "json").stdout)["spec"]
        assert (service["type"], service["ports"][0]["nodePort"]) == ("NodePort", TENANTS[name]["vcluster"]["node_port"])
        names = kubectl("get", "namespaces", "-o", "name", kubeconfig=path).stdout.split()
        assert "namespace/default" in names and f"namespace/tenant-{name}" not in names
    # The private tenant schedules inside its own cluster: KAI's Queue CRD and its queue are there.
    inside = json.loads(kubectl("get", "queues.scheduling.run.ai", "-o", "json", kubeconfig=kdir / "acme.kubeconfig")
                        .stdout)["items"]
    assert {q["metadata"]["name"]: q["spec"]["resources"]["gpu"]["quota"] for q in inside} == {
        "gpucloud": 8, "tenant-acme": 8}
    assert "tenant-acme" not in queues("gpucloud")
    # ... and its own GPU Operator: a ClusterPolicy in its cluster, none of the host's.
    policies = kubectl("get", "clusterpolicies.nvidia.com", "-o", "name", kubeconfig=kdir / "acme.kubeconfig").stdout
    assert policies.split() == ["clusterpolicy.nvidia.com/cluster-policy"]

    again = lab.playbook("playbooks/tenants.yml", _vars(kdir))
    assert again.rc == 0 and again.changed_tasks() == [], again.changed_tasks()
    checked = lab.playbook("playbooks/tenants.yml", _vars(kdir), check=True)
    assert checked.rc == 0 and checked.changed_tasks() == [], checked.changed_tasks()


def test_tenant_credentials_reach_only_their_own_namespace(lab: Lab) -> None:
    acme = "system:serviceaccount:tenant-acme:tenant-admin"
    assert kubectl("get", "pods", "-n", "tenant-acme", "--as", acme).returncode == 0
    assert kubectl("get", "secret", "vc-acme", "-n", "tenant-acme", "--as", acme, "-o", "name").returncode == 0
    for args in (("get", "pods", "-n", "tenant-beta"), ("get", "secret", "vc-beta", "-n", "tenant-beta"),
                 ("get", "secrets", "-n", "tenant-acme"), ("delete", "pods", "--all", "-n", "tenant-acme")):
        denied = kubectl(*args, "--as", acme, check=False)
        assert denied.returncode != 0 and "forbidden" in denied.stderr.lower(), (args, denied.stderr)
    group = kubectl("get", "pods", "-n", "tenant-beta", "--as", "someone", "--as-group", "gpucloud:tenant:acme",
                    check=False)
    assert "forbidden" in group.stderr.lower()


def test_a_tier_change_is_refused_before_any_change(lab: Lab, kdir: Path) -> None:
    kubectl("label", "namespace", "tenant-beta", "gpucloud.baremetal/isolation=private", "--overwrite")
    try:
        before = snapshot()
        run = lab.playbook("playbooks/tenants.yml", _vars(kdir, tenants_only=["beta"]), limit="localhost")
        assert run.rc != 0
        failed = run.failures()
        assert any("installed as private and is now shared; the tier is fixed at first install" in f
                   for f in failed), failed
        assert snapshot() == before
    finally:
        kubectl("label", "namespace", "tenant-beta", "gpucloud.baremetal/isolation=shared", "--overwrite")


def test_offboard_needs_confirmation_and_leaves_nothing_behind(lab: Lab, kdir: Path) -> None:
    refused = lab.playbook("playbooks/tenant_offboard.yml", _vars(kdir, tenant="beta"))
    assert refused.rc != 0 and any("-e confirm=beta" in f for f in refused.failures()), refused.failures()
    assert kubectl("get", "namespace", "tenant-beta", check=False).returncode == 0
    wrong = lab.playbook("playbooks/tenant_offboard.yml", _vars(kdir, tenant="beta", confirm="acme"))
    assert wrong.rc != 0

    off = _offboard(lab, kdir, "beta", limit=None)
    assert off.rc == 0, off.failures()
    assert kubectl("get", "namespace", "tenant-beta", check=False).returncode != 0
    assert kubectl("get", "all,secrets,rolebindings", "-A", "-l", "gpucloud.baremetal/tenant=beta", "-o", "name").stdout == ""
    assert queues("gpucloud") == {}, "the queue (and the then empty parent) must be gone"
    assert not (kdir / "beta.kubeconfig").exists()
    wait(lambda: "tenant-beta/beta" not in _control_planes(), "the lab to stop beta's control plane")
    assert (kdir / "acme.kubeconfig").exists() and kubectl("get", "namespace", "tenant-acme").returncode == 0


def test_a_misspelled_value_fails_before_install_then_onboarding_is_one_command(lab: Lab, kdir: Path) -> None:
    if kubectl("get", "namespace", "tenant-beta", check=False).returncode == 0:  # run on its own
        assert _offboard(lab, kdir, "beta").rc == 0
    typo = {"vcluster_tenant_values": {"controlPlane": {"distro": {"k8s": {"enabeld": True}}}}}
    bad = lab.playbook("playbooks/tenant_onboard.yml", _vars(kdir, tenant="beta", **typo), limit="localhost")
    assert bad.rc != 0
    assert bad.failed_tasks() == ["Validate vcluster.yaml against the chart's values schema before any change"]
    assert "enabeld" in " ".join(bad.failures())
    assert kubectl("get", "namespace", "tenant-beta", check=False).returncode != 0, "a change was made"
    # Open-source vCluster's shared tier needs the host to enforce the scheduler and queue with a
    # ValidatingAdmissionPolicy; the lab's real kube-apiserver 1.20 does not serve that API.
    oss = lab.playbook("playbooks/tenant_onboard.yml",
                       _vars(kdir, tenant="beta", vcluster_tenant_shared_enforcement="admission-policy"), limit="localhost")
    assert oss.rc != 0
    assert oss.failed_tasks() == [
        "Compute vcluster.yaml and the host objects (fails on a tier change or missing settings, before any change)"]
    assert "ValidatingAdmissionPolicy (Kubernetes 1.30 or later)" in " ".join(oss.failures())
    assert kubectl("get", "namespace", "tenant-beta", check=False).returncode != 0, "a change was made"

    started = time.monotonic()
    on = lab.playbook("playbooks/tenant_onboard.yml", _vars(kdir, tenant="beta"))
    elapsed = time.monotonic() - started
    assert on.rc == 0, (on.status, on.failures(), [e.get("stdout", "") for e in on.events[-3:]])
    print(f"onboarding beta (fabric + queue + control plane + kubeconfig): {elapsed:.1f} s")
    assert _ours("tenant-beta") == BETA_OBJECTS
    assert sorted(queues("gpucloud")) == ["gpucloud", "tenant-beta"]
    names = kubectl("get", "namespaces", "-o", "name", kubeconfig=kdir / "beta.kubeconfig").stdout.split()
    assert "namespace/default" in names
    again = lab.playbook("playbooks/tenant_onboard.yml", _vars(kdir, tenant="beta"))
    # The tenants stage's plays run on localhost; the fabric play (switches) is the fabric stage's to keep idempotent.
    assert again.rc == 0 and again.changed_tasks("localhost") == [], again.changed_tasks()


# --- KAI's queue admission (the lab's simulation of KAI, sim/kai_scheduler_sim.py) on the converged lab --------


def _pod(name: str, gpus: int, cpu: str) -> dict:
    """A shared tenant's pod as vCluster's syncer writes it into the host namespace: KAI's scheduler, the queue."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "tenant-beta",
                         "labels": {"kai.scheduler/queue": "tenant-beta", "itest": "kai"}},
            "spec": {"schedulerName": "kai-scheduler", "containers": [{
                "name": "train", "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                # Limits as well as requests: the tenant's LimitRange defaults a missing CPU limit to 1 core, and
                # the API server refuses a request above its limit before any scheduler sees the pod.
                "resources": {"limits": {"nvidia.com/gpu": str(gpus), "cpu": cpu, "memory": "1Gi"},
                              "requests": {"cpu": cpu, "memory": "1Gi"}}}]}}


def _get_pod(name: str) -> dict:
    return json.loads(kubectl("get", "pod", name, "-n", "tenant-beta", "-o", "json").stdout)


def test_a_tenant_pod_runs_in_its_queue_and_one_over_the_queues_limit_stays_pending(converged: Converged) -> None:
    beta = TENANTS["beta"]
    limit = beta["cpu"]["limit"]  # cores; the fleet's tenants[].cpu
    try:
        kubectl("apply", "-f", "-", input=json.dumps(_pod("itest-fits", 1, "1")))
        bound = wait(lambda: _get_pod("itest-fits")["spec"].get("nodeName"), "KAI to bind the pod")
        assert bound in [h.name for h in config.GPU_NODES] and not hostvars()[bound]["gpucloud_node"].get("tenant")
        wait(lambda: _get_pod("itest-fits")["status"].get("phase") == "Running", "the bound pod to run")

        over = _pod("itest-over", 1, str(limit))  # 1 core allocated + the limit requested > the limit
        kubectl("apply", "-f", "-", input=json.dumps(over))
        condition = wait(lambda: next((c for c in _get_pod("itest-over")["status"].get("conditions", [])
                                       if c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable"), None),
                         "KAI to refuse the pod")
        assert condition["status"] == "False"
        assert condition["message"] == (
            f"OverLimit: beta quota has reached the allowable limit of CPU cores. Limit is {limit} cores, currently 1 "
            f"cores allocated and workload requested {limit} cores.")
        time.sleep(2)
        assert not _get_pod("itest-over")["spec"].get("nodeName")
    finally:
        kubectl("delete", "pods", "-n", "tenant-beta", "-l", "itest=kai", "--wait=false", check=False)


def test_a_shared_tenants_control_plane_pod_is_admitted_under_pod_security(converged: Converged) -> None:
    """Its namespace enforces Pod Security baseline (restricted would refuse vCluster's root control plane).
    The lab's kube-apiserver (1.20) enforces neither Pod Security nor ValidatingAdmissionPolicies; the unit
    tests evaluate the policy's CEL (cel-python) on the control-plane pod and on privileged pods."""
    labels = json.loads(kubectl("get", "namespace", "tenant-beta", "-o", "json").stdout)["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "baseline"
    pods = json.loads(kubectl("get", "pods", "-n", "tenant-beta", "-l", "app=vcluster,release=beta", "-o",
                              "json").stdout)["items"]
    assert [p["metadata"]["name"] for p in pods] == ["beta-0"]
    assert {c["type"]: c["status"] for c in pods[0]["status"]["conditions"]}["Ready"] == "True"


def test_shared_nodes_toolkit_gives_no_gpu_for_nvidia_visible_devices(converged: Converged) -> None:
    """The GPU Operator's toolkit refuses the variable from unprivileged containers (a CUDA image sets it)."""
    policy = json.loads(kubectl("get", "clusterpolicy", "cluster-policy", "-o", "json").stdout)
    env = {e["name"]: e["value"] for e in policy["spec"]["toolkit"].get("env", [])}
    assert env["ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED"] == "false"
