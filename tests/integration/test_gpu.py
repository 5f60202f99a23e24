# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU stage against the lab: gpu_host on the (Debian, GPU-less) lab hosts and the GPU Operator waited
for against the lab controller's simulation (validate.yml across layers: test_converged.py)."""
from __future__ import annotations

import base64
import json
import subprocess
import time
from pathlib import Path

import yaml

from tests.integration.conftest import Converged
from tests.integration.lab import Lab, kubectl, on

REPO = Path(__file__).resolve().parents[2]


def _kubectl(*args: str) -> str:
    return kubectl(*args).stdout


def test_gpu_host_converges_says_what_it_skipped_and_refuses_bad_input(lab: Lab, converged: Converged) -> None:
    # The session's rollout (conftest): site.yml's GPU stage converged the nodes, and its AWX stage job changed
    # nothing (test_converged.py); site in check mode too (test_awx.py). What the stage said it skipped:
    report = converged.first.results("Say what applies here and what is skipped")
    for host in ("gpu1", "gpu2", "gpu3"):
        lines = report[host]["msg"]
        assert any("SKIPPED kernel headers, NVIDIA driver" in line and "Debian is not a supported OS" in line
                   for line in lines), lines
        assert "applies: nouveau blacklist, containerd config" in lines
    assert not converged.rollout["gpu_hosts"].hosts_with("changed"), converged.rollout["gpu_hosts"].changed_tasks()

    # Registry mirrors: bad input is refused before anything changes, naming the field and what is wrong; a
    # registry dropped from the dict loses the hosts.toml the role wrote (check mode: said, not done).
    bad = lab.playbook("playbooks/gpu_hosts.yml", {"gpu_host_registry_mirrors": {
        "docker.io": ["ftp://mirror.example"], "Not_A_Registry": ["http://198.51.100.1:5000"]}}, limit="gpu1")
    assert bad.rc != 0 and not bad.hosts_with("changed"), bad.changed_tasks()
    message = " ".join(bad.failures())
    assert "gpu_host_registry_mirrors" in message and "Nothing was changed" in message, message
    assert '"ftp://mirror.example" is not an http:// or https:// URL' in message, message
    assert 'key "Not_A_Registry" is not a registry name' in message, message
    sysctls = lab.playbook("playbooks/gpu_hosts.yml", {"gpu_host_sysctls": {
        "net.ipv4.ip_forward = 1\nkernel.core_pattern": "|/tmp/x"}}, limit="gpu1")
    assert sysctls.rc != 0 and not sysctls.hosts_with("changed"), sysctls.changed_tasks()
    message = " ".join(sysctls.failures())
    assert "gpu_host_sysctls must be a dict of sysctl keys" in message and "Nothing was changed" in message, message
    # The Kubernetes packages: a version that is no release, one the mirror does not have, a key that is not the
    # pinned one; each fails naming the field, and the installed packages stay as they are.
    installed = on("gpu1", "dpkg-query -W kubeadm kubelet").stdout
    for extra, expected in (
            ({"gpu_host_kubernetes_version": "1.20"}, "gpu_host_kubernetes_version \"1.20\""),
            ({"gpu_host_kubernetes_version": "1.20.9"},
             "has no kubeadm, kubelet, kubectl, kubernetes-cni at version 1.20.9-1.1"),
            ({"gpu_host_kubernetes_key_fingerprint": "DE15B14486CD377B9E876E1A234654DA9A296436"},
             "expected key DE15B14486CD377B9E876E1A234654DA9A296436, found "),
            ({"gpu_host_kubernetes_host_packages": ["socat", "iptables; reboot"]},
             'gpu_host_kubernetes_host_packages ["socat", "iptables; reboot"] (a list of distribution package names)')):
        refused = lab.playbook("playbooks/gpu_hosts.yml", extra, limit="gpu1")
        assert refused.rc != 0, extra
        # The whole message of each failed task (failures() keeps 500 characters; the input check names every field).
        message = " ".join(str(res.get("msg", "")) for task in refused.failed_tasks("gpu1")
                           for res in refused.results(task).values())
        assert expected in message, (extra, message)
        assert on("gpu1", "dpkg-query -W kubeadm kubelet").stdout == installed, extra
    moved = lab.playbook("playbooks/gpu_hosts.yml", {"gpu_host_registry_mirrors": {
        "nvcr.io": ["http://198.51.100.1:5000"]}}, limit="gpu1", check=True)
    assert moved.rc == 0, moved.failures()
    assert {"Write each registry's mirrors (containerd hosts.toml)",
            "Remove the mirrors of registries no longer in gpu_host_registry_mirrors"} <= set(moved.changed_tasks("gpu1"))
    assert on("gpu1", "test -f /etc/containerd/certs.d/docker.io/hosts.toml && "
                      "! test -e /etc/containerd/certs.d/nvcr.io", check=False).returncode == 0


def test_gpu_operator_waits_for_policy_and_nodes_and_is_idempotent(converged: Converged) -> None:
    # The platform stage waits for the operator; here its run on the converged lab (the session's second rollout,
    # the platform template as an AWX job, conftest), which also changed nothing.
    again = converged.rollout["platform"]
    assert again.rc == 0 and not again.hosts_with("changed"), again.changed_tasks()
    status = again.results("Wait for the ClusterPolicy and every GPU node's GPUs")
    assert status["localhost"]["policy"]["state"] == "ready"
    assert status["localhost"]["policy"]["reason"] == "Reconciled"
    assert {r["node"]: r["allocatable"] for r in status["localhost"]["nodes"]} == {"gpu2": 8, "gpu3": 8}
    # The real CRD's schema holds what the chart created; values from the fleet reached the spec.
    assert _kubectl("get", "clusterpolicy", "cluster-policy", "-o", "jsonpath={.spec.driver.enabled}") == "true"
    assert _kubectl("get", "node", "gpu2", "-o", "jsonpath={.metadata.labels.nvidia\\.com/gpu\\.present}") == "true"


def test_gpu_operator_timeout_names_the_node_short_of_gpus(lab: Lab) -> None:
    # The fleet (as these extra vars say) gives gpu3 16 GPUs; the lab's operator advertises its 8.
    nodes = [{"name": "gpu2", "gpu": {"count": 8}}, {"name": "gpu3", "gpu": {"count": 16}}]
    run = lab.playbook("playbooks/platform.yml", {"gpu_operator_nodes": nodes, "gpu_operator_wait_timeout": 4,
                                                  "gpu_operator_wait_interval": 1})
    assert run.rc != 0
    result = run.results("Wait for the ClusterPolicy and every GPU node's GPUs")
    msg = result["localhost"]["msg"]
    assert msg.startswith("GPU Operator not ready after 4s")
    assert "gpu3: allocatable nvidia.com/gpu is 8, the fleet says 16" in msg
    assert "gpu2" not in msg
    assert "gpu3  16     true         8            allocatable nvidia.com/gpu is 8" in result["localhost"]["table"]


PROMETHEUS_RULE_CRD = REPO / "tests" / "upstream" / "prometheus-operator" / "v0.93.0" / \
    "monitoring.coreos.com_prometheusrules.yaml"
RULES = REPO / "roles" / "gpu_operator" / "files" / "prometheus-rules-gpucloud-v1.yml"


def test_the_gpu_fault_alerts_go_where_the_prometheus_operator_is(lab: Lab) -> None:
    """No PrometheusRule CRD in the lab's cluster: auto applies nothing and "true" fails naming the CRD. With the
    Prometheus Operator's CRD (upstream's, v0.93.0; the API server holds the object against its schema): the
    PrometheusRule carries the rules file's groups and the labels asked for, a second run changes nothing, and
    "false" removes it."""
    quick = {"gpu_operator_wait_timeout": 30}
    asked = lab.playbook("playbooks/platform.yml", {**quick, "gpu_operator_alert_rules": "true"})
    assert asked.rc != 0 and "has no PrometheusRule CRD (prometheusrules.monitoring.coreos.com" in \
        " ".join(asked.failures()), asked.failures()
    # refused before the release is touched
    assert "Install or remove the GPU Operator release" not in [e.get("event_data", {}).get("task") for e in asked.events]
    try:
        kubectl("apply", "-f", str(PROMETHEUS_RULE_CRD))
        kubectl("wait", "--for=condition=Established", "crd/prometheusrules.monitoring.coreos.com", "--timeout=60s")
        labels = {"gpu_operator_alert_rules_labels": {"release": "kube-prometheus-stack"}}
        applied = lab.playbook("playbooks/platform.yml", {**quick, **labels})
        assert applied.rc == 0 and applied.changed_tasks() == ["Apply or remove the GPU fault alerts"], \
            (applied.failures(), applied.changed_tasks())
        rule = json.loads(_kubectl("get", "prometheusrule", "gpucloud-gpu-faults", "-n", "gpu-operator", "-o", "json"))
        assert rule["spec"] == yaml.safe_load(RULES.read_text())
        assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"
        again = lab.playbook("playbooks/platform.yml", {**quick, **labels})
        assert again.rc == 0 and not again.changed_tasks(), again.changed_tasks()
        off = lab.playbook("playbooks/platform.yml", {**quick, "gpu_operator_alert_rules": "false"})
        assert off.rc == 0 and off.changed_tasks() == ["Apply or remove the GPU fault alerts"], off.changed_tasks()
        assert not _kubectl("get", "prometheusrules", "-n", "gpu-operator", "-o", "name")
    finally:
        kubectl("delete", "--ignore-not-found", "-f", str(PROMETHEUS_RULE_CRD), check=False)


LAB_CMD = REPO / "lab" / "gpucloud-lab"


def _fault(node: str, *faults: str) -> None:
    """The lab's fault injection into a host's simulated GPUs and tools (gpucloud-lab fault)."""
    subprocess.run([str(LAB_CMD), "fault", node, *faults], cwd=REPO, check=True, capture_output=True, text=True)


def _report(node: str) -> dict:
    return json.loads(on(node, "cat /var/lib/gpucloud/gate/latest.json").stdout)


RECORDS = "/var/lib/gpucloud/provision/gate"


def _kept(node: str) -> dict:
    """The node's last gate report as role gpu_gate keeps it with the node's lifecycle record (the boot server)."""
    return json.loads(on("pxe", f"cat {RECORDS}/{node}/latest.json").stdout)


def _node(name: str) -> dict:
    return json.loads(_kubectl("get", "node", name, "-o", "json"))


def test_the_gpu_gate_keeps_a_report_and_cordons_a_node_that_fails_it(lab: Lab, converged: Converged) -> None:
    """site.yml gated the shared GPU nodes (simulated tools, real parsers): each keeps a passing report, their
    Nodes carry the gate label and no longer the gate's taint they joined with. A fatal Xid 79 and a slow NCCL all-reduce injected on gpu2 fail its regate: the
    report says so, the label goes and the Node is cordoned by the gate; regate needs its confirm. Cleared, the
    next regate passes and the gate uncordons the Node it cordoned, and nothing else changes on a second run."""
    # gpu1 is acme's private node with the GPU Operator's driver: it has no driver before it joins its tenant, so
    # the gate leaves it out (and says so) unless regate names it.
    assert "No such file" in on("gpu1", "cat /var/lib/gpucloud/gate/latest.json", check=False).stderr
    assert on("pxe", f"test -e {RECORDS}/gpu1/latest.json", check=False).returncode != 0
    for node in ("gpu2", "gpu3"):
        report = _report(node)
        assert report["schema"] == "gpucloud.baremetal/gpu-gate/v1" and report["passed"], report
        assert {c["name"] for c in report["checks"]} >= {"inventory", "kernel_log", "dcgm_diag", "h2d", "d2h", "d2d",
                                                         "nccl_all_reduce"}, report
        # The report is kept with the node's lifecycle record on the boot server, under its start time too.
        assert _kept(node) == report
        started = report["started"].replace(":", "")
        assert json.loads(on("pxe", f"cat {RECORDS}/{node}/reports/{started}.json").stdout) == report
    node = _node("gpu2")
    assert node["metadata"]["labels"].get("gpucloud.baremetal/gpu-gate") == "passed", node["metadata"]["labels"]
    # gpu2 joined before the gate could run (the operator's driver comes after the join), with the gate's taint:
    # the gate removed it; the operator's daemonsets tolerate it meanwhile.
    assert not [t for t in node["spec"].get("taints", []) if t["key"].startswith("gpucloud.baremetal/")], node["spec"]
    policy = json.loads(_kubectl("get", "clusterpolicies.nvidia.com", "-o", "json"))["items"][0]
    assert {"key": "gpucloud.baremetal/gpu-gate", "operator": "Exists", "effect": "NoSchedule"} in \
        policy["spec"]["daemonsets"]["tolerations"], policy["spec"]["daemonsets"]

    unconfirmed = lab.playbook("playbooks/gpu_gate.yml", {"regate": "gpu2"})
    assert unconfirmed.rc != 0 and any("confirm" in f for f in unconfirmed.failures()), unconfirmed.failures()
    assert _report("gpu2")["passed"], "the gate ran without its confirm"

    gpu3_started = _report("gpu3")["started"]
    _fault("gpu2", "xid=79", "nccl_busbw=300")
    try:
        failed = lab.playbook("playbooks/gpu_gate.yml", {"regate": "gpu2", "confirm": "gpu2"})
        assert failed.rc != 0, "a node with Xid 79 and a slow all-reduce passed the gate"
        message = " ".join(failed.failures())
        assert "FAILED on gpu2" in message and "XID 79" in message and "300.00 GB/s" in message, message
        report = _report("gpu2")
        assert not report["passed"] and set(report["failed_checks"]) == {"kernel_log", "nccl_all_reduce"}, report
        node = _node("gpu2")
        assert node["spec"].get("unschedulable") is True, node["spec"]
        assert node["metadata"]["annotations"].get("gpucloud.baremetal/cordoned-by") == "gpu-gate"
        assert "gpucloud.baremetal/gpu-gate" not in node["metadata"]["labels"], node["metadata"]["labels"]
        assert {"key": "gpucloud.baremetal/gpu-gate", "value": "failed", "effect": "NoSchedule"} in \
            node["spec"]["taints"], node["spec"]
        assert _report("gpu3")["started"] == gpu3_started, "gpu3 was gated again although regate named gpu2 only"
        assert _kept("gpu2") == report, "the failed report was not kept in gpu2's record"
        # Whoever has root on the node (a private node's tenant) can write it a passing report: the verdict is
        # the record's, so the gate runs again (and fails again) instead of giving the node back.
        forged = {**_kept("gpu3"), "node": "gpu2"}
        encoded = base64.b64encode(json.dumps(forged).encode()).decode()
        on("gpu2", f"echo {encoded} | base64 -d > /var/lib/gpucloud/gate/latest.json")
        again = lab.playbook("playbooks/gpu_gate.yml", limit="gpu2")
        assert again.rc != 0 and "FAILED on gpu2" in " ".join(again.failures()), again.failures()
        assert _node("gpu2")["spec"].get("unschedulable") is True, "a forged report on the node gave gpu2 back"
        assert not _kept("gpu2")["passed"]
    finally:
        _fault("gpu2", "clear")
    passed = lab.playbook("playbooks/gpu_gate.yml", {"regate": "gpu2", "confirm": "gpu2"})
    assert passed.rc == 0, passed.failures()
    node = _node("gpu2")
    assert not node["spec"].get("unschedulable") and node["metadata"]["labels"]["gpucloud.baremetal/gpu-gate"] == \
        "passed", node
    assert not [t for t in node["spec"].get("taints", []) if t["key"] == "gpucloud.baremetal/gpu-gate"], node["spec"]
    again = lab.playbook("playbooks/gpu_gate.yml")
    assert again.rc == 0 and not again.changed_tasks(), (again.failures(), again.changed_tasks())


def _annotations(name: str) -> dict:
    return _node(name)["metadata"].get("annotations") or {}


def test_a_gpu_fault_quarantines_its_node_within_the_breaker_and_the_gate_brings_it_back(
        lab: Lab, converged: Converged) -> None:
    """gpu_quarantine.yml (what the GPU health rulebook runs on a fatal alert) on gpu2: check mode changes nothing;
    the Node is cordoned, its pod drained, the reason recorded and its gate label gone; a second run changes
    nothing. The breaker (2 shared GPU nodes: max(1, 10 %) = 1 per 10 minutes) refuses gpu3 next, touching nothing;
    a node someone else cordoned is never touched. A gate run after the repair passes and gives gpu2 back."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpu-work", "namespace": "default"},
           "spec": {"nodeName": "gpu2", "containers": [{"name": "work", "image": "registry.k8s.io/pause:3.2"}]}}
    kubectl("apply", "-f", "-", input=json.dumps(pod))
    reason = "GpuFellOffTheBus: GPU 0 (GPU-00000000-1111-4222-8333-444455556666) fell off the bus (Xid 79)"
    try:
        check = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu2", "reason": reason}, check=True)
        assert check.rc == 0 and check.changed_tasks(), check.failures()
        assert not _node("gpu2")["spec"].get("unschedulable"), "check mode cordoned gpu2"

        started = time.monotonic()
        done = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu2", "reason": reason})
        took = time.monotonic() - started
        assert done.rc == 0, done.failures()
        node = _node("gpu2")
        notes = node["metadata"]["annotations"]
        assert node["spec"].get("unschedulable") is True and notes["gpucloud.baremetal/quarantined-by"] == "gpu-health"
        assert notes["gpucloud.baremetal/quarantine-reason"] == reason, notes
        assert "gpucloud.baremetal/gpu-gate" not in node["metadata"]["labels"], node["metadata"]["labels"]
        assert "gpu-work" not in _kubectl("get", "pods", "-n", "default", "-o", "name"), "the pod was not drained"
        print(f"quarantine of gpu2 (cordon + drain of one pod): {took:.1f} s")
        again = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu2", "reason": reason})
        assert again.rc == 0 and not again.changed_tasks(), (again.failures(), again.changed_tasks())

        # The site's idempotent gate stage leaves a quarantined node out of service (its old report passed).
        gated = lab.playbook("playbooks/gpu_gate.yml", limit="gpu2")
        assert gated.rc == 0 and _node("gpu2")["spec"].get("unschedulable") is True, gated.failures()

        refused = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu3", "reason": "GpuFatalXid: Xid 48"})
        message = " ".join(refused.failures())
        assert refused.rc != 0 and "circuit breaker open" in message and "gpu3 was NOT quarantined" in message, message
        assert not _node("gpu3")["spec"].get("unschedulable"), "the open breaker let gpu3 be cordoned"

        kubectl("cordon", "gpu3")
        try:
            theirs = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu3", "reason": "GpuFatalXid: Xid 48"})
            assert theirs.rc == 0 and not theirs.changed_tasks(), theirs.failures()
            assert "gpucloud.baremetal/quarantined-by" not in _annotations("gpu3")
            released = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu3", "gpu_quarantine_state": "released"})
            assert released.rc == 0 and _node("gpu3")["spec"].get("unschedulable") is True, "someone else's cordon went"
        finally:
            kubectl("uncordon", "gpu3")
    finally:
        kubectl("delete", "pod", "-n", "default", "gpu-work", "--ignore-not-found", "--wait=false")
        back = lab.playbook("playbooks/gpu_gate.yml", {"regate": "gpu2", "confirm": "gpu2"})
        last = _annotations("gpu2")
        # The circuit breaker's manual reset, so that later tests may quarantine again within the window.
        kubectl("annotate", "node", "gpu2", "gpucloud.baremetal/last-quarantined-at-",
                "gpucloud.baremetal/last-quarantine-reason-")
    assert back.rc == 0, back.failures()
    assert last.get("gpucloud.baremetal/last-quarantine-reason") == reason, last  # when and why stay after release
    node = _node("gpu2")
    assert not node["spec"].get("unschedulable") and node["metadata"]["labels"]["gpucloud.baremetal/gpu-gate"] == \
        "passed", node
    assert not [k for k in _annotations("gpu2") if k.startswith("gpucloud.baremetal/quarantine")], _annotations("gpu2")


def test_a_quarantine_drain_tries_a_disruption_budget_again_and_a_rerun_finishes_it(
        lab: Lab, converged: Converged) -> None:
    """A pod on gpu2 under a PodDisruptionBudget that allows no disruption (maxUnavailable 0; the API server answers
    its eviction 429, as for a budget already spent): the quarantine cordons gpu2 and tries the eviction again every
    5 s, as kubectl drain does (kubernetes.core.k8s_drain alone fails at the first 429), then fails after the drain
    timeout naming the budget, gpu2 cordoned and the pod still on it. With the budget gone, the next run (the node
    is the quarantine's own: no breaker) finishes the drain."""
    labels = {"app": "gpu-budgeted"}
    meta = {"name": "gpu-budgeted", "namespace": "default", "labels": labels}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
           "spec": {"nodeName": "gpu2", "containers": [{"name": "work", "image": "registry.k8s.io/pause:3.2"}]}}
    budget = {"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget",  # the lab's API server: 1.20
              "metadata": {"name": "gpu-budgeted", "namespace": "default"},
              "spec": {"maxUnavailable": 0, "selector": {"matchLabels": labels}}}
    kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod, budget]}))
    reason = "GpuDoubleBitError: GPU 0 (GPU-00000000-1111-4222-8333-444455556666) double-bit ECC error"
    try:
        blocked = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu2", "reason": reason,
                                                                "gpu_quarantine_drain_timeout": 12})
        message = " ".join(blocked.failures())
        assert blocked.rc != 0 and "disruption budget" in message, message
        retries = [e for e in blocked.events if e["event"] == "runner_retry"]
        assert len(retries) >= 2, "the eviction was not tried again"
        assert _node("gpu2")["spec"].get("unschedulable") is True
        assert "gpu-budgeted" in _kubectl("get", "pods", "-n", "default", "-o", "name")
        kubectl("delete", "pdb", "-n", "default", "gpu-budgeted")
        finished = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu2", "reason": reason})
        assert finished.rc == 0, finished.failures()
        assert "gpu-budgeted" not in _kubectl("get", "pods", "-n", "default", "-o", "name"), "the pod was not drained"
        assert _annotations("gpu2")["gpucloud.baremetal/quarantine-reason"] == reason
    finally:
        kubectl("delete", "pdb", "-n", "default", "gpu-budgeted", "--ignore-not-found")
        kubectl("delete", "pod", "-n", "default", "gpu-budgeted", "--ignore-not-found", "--wait=false")
        back = lab.playbook("playbooks/gpu_gate.yml", {"regate": "gpu2", "confirm": "gpu2"})
        kubectl("annotate", "node", "gpu2", "gpucloud.baremetal/last-quarantined-at-",
                "gpucloud.baremetal/last-quarantine-reason-")
    assert back.rc == 0, back.failures()
    assert not _node("gpu2")["spec"].get("unschedulable")


ACME = Path.home() / ".kube" / "gpucloud" / "lab" / "acme.kubeconfig"  # what the session's site.yml exported
RECORD = ("-n", "kube-system", "configmap", "gpucloud-quarantine-gpu1")


def _acme_node() -> dict:
    return json.loads(kubectl("get", "node", "gpu1", "-o", "json", kubeconfig=ACME).stdout)


def _record() -> dict:
    found = kubectl("get", *RECORD, "-o", "json", check=False)
    return json.loads(found.stdout) if found.returncode == 0 else {}


def test_a_private_node_is_quarantined_in_its_tenants_cluster_within_its_tenants_and_the_fleets_breakers(
        lab: Lab, converged: Converged) -> None:
    """gpu1, acme's private node (a Node of acme's cluster, not of the host cluster): gpu_quarantine.yml cordons it
    there, records why on it, and records the quarantine in the host cluster too (kube-system ConfigMap), which is
    what the breakers read - acme is admin of its own cluster and could write anything on its Node. The fleet's
    breaker (gpu1-gpu3: max(1, 10 %) = 1) then refuses gpu2 of the shared pool, whose own breaker has room; once
    gpu1 is given back, acme's own breaker (1 node: 1) refuses gpu1 again within the window."""
    reason = "GpuFatalXid: Xid 48 (double bit ECC error) on GPU 2"
    assert ACME.exists(), f"the session's site.yml exported no kubeconfig for acme at {ACME}"
    assert not _acme_node()["spec"].get("unschedulable") and not _record()
    try:
        check = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu1", "reason": reason}, check=True)
        assert check.rc == 0 and check.changed_tasks(), check.failures()
        assert not _acme_node()["spec"].get("unschedulable") and not _record(), "check mode changed something"

        done = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu1", "reason": reason})
        assert done.rc == 0, done.failures()
        node = _acme_node()
        notes = node["metadata"].get("annotations") or {}
        assert node["spec"].get("unschedulable") is True, node["spec"]
        assert notes.get("gpucloud.baremetal/quarantined-by") == "gpu-health", notes
        assert notes.get("gpucloud.baremetal/quarantine-reason") == reason, notes
        record = _record()
        assert record["metadata"]["labels"]["gpucloud.baremetal/tenant"] == "acme", record["metadata"]
        assert record["metadata"]["labels"]["gpucloud.baremetal/node"] == "gpu1", record["metadata"]
        held = record["metadata"]["annotations"]
        assert held["gpucloud.baremetal/quarantined-by"] == "gpu-health" and \
            held["gpucloud.baremetal/quarantined-at"] == notes["gpucloud.baremetal/quarantined-at"], held
        again = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu1", "reason": reason})
        assert again.rc == 0 and not again.changed_tasks(), (again.failures(), again.changed_tasks())

        # The tenant takes its own quarantine mark off its Node: the fleet's breaker still counts gpu1 (it reads the
        # host cluster's record), and refuses gpu2, touching nothing.
        kubectl("annotate", "node", "gpu1", "gpucloud.baremetal/quarantined-at=2001-01-01T00:00:00Z", "--overwrite",
                kubeconfig=ACME)
        refused = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu2", "reason": "GpuFatalXid: Xid 48"})
        message = " ".join(refused.failures())
        assert refused.rc != 0 and "circuit breaker open (the fleet)" in message, message
        assert "gpu1" in message and "gpu2 was NOT quarantined" in message, message
        assert not _node("gpu2")["spec"].get("unschedulable"), "the open breaker let gpu2 be cordoned"

        released = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu1", "gpu_quarantine_state": "released"})
        assert released.rc == 0, released.failures()
        assert not _acme_node()["spec"].get("unschedulable"), "gpu1 was not given back"
        ended = _record()["metadata"]["annotations"]
        assert "gpucloud.baremetal/quarantined-by" not in ended, ended
        assert ended["gpucloud.baremetal/last-quarantined-at"] == held["gpucloud.baremetal/quarantined-at"], ended

        # Given back, still within the window: acme's own breaker (one node) refuses it.
        refused = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu1", "reason": reason})
        message = " ".join(refused.failures())
        assert refused.rc != 0 and "circuit breaker open (tenant acme)" in message, message
        assert not _acme_node()["spec"].get("unschedulable")

        # The repair, as the rulebook asks it (a breaker window of 1 s lets it past): quarantined, power-cycled
        # through gpu1's BMC, its GPUs awaited and the quick gate run against acme's cluster; the pass gives it back
        # there and ends the host cluster's record.
        repaired = lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu1", "reason": reason, "repair": True,
                                                                 "gpu_quarantine_window": 1})
        assert repaired.rc == 0, repaired.failures()
        assert "Power-cycle the node over Redfish" in repaired.changed_tasks("gpu1"), repaired.changed_tasks()
        node = _acme_node()
        assert not node["spec"].get("unschedulable") and \
            node["metadata"]["labels"].get("gpucloud.baremetal/gpu-gate") == "passed", node["metadata"]
        assert not [k for k in node["metadata"].get("annotations") or {} if k.startswith("gpucloud.baremetal/quarantine")]
        ended = _record()["metadata"]["annotations"]
        assert "gpucloud.baremetal/quarantined-by" not in ended and \
            ended["gpucloud.baremetal/last-quarantine-reason"] == reason, ended
    finally:
        if (_acme_node()["metadata"].get("annotations") or {}).get("gpucloud.baremetal/quarantined-by"):
            lab.playbook("playbooks/gpu_quarantine.yml", {"node": "gpu1", "gpu_quarantine_state": "released"})
        # The breakers' manual reset (later tests quarantine within the window), and acme's Node as it was.
        kubectl("delete", *RECORD, "--ignore-not-found")
        kubectl("annotate", "node", "gpu1", "gpucloud.baremetal/last-quarantined-at-",
                "gpucloud.baremetal/last-quarantine-reason-", "gpucloud.baremetal/quarantined-at-", kubeconfig=ACME)
        kubectl("uncordon", "gpu1", kubeconfig=ACME)
