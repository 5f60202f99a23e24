# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A pod runs on a node that the collection made, through a real kubelet (issue 19); so does a tenant's pod that
requests a GPU and that KAI bound (issue 20).

gpu3 starts as a freshly installed server (``gpucloud-lab reimage``: the base image, no kubeadm, no kubelet) whose
site mirror is the lab mirror's second repository, the one whose ``kubelet`` package is the real kubelet built from
Debian's kubernetes source (lab/gpucloud_lab/infra/pkg_mirror.py). ``gpu_hosts.yml`` installs the node stack from
it and joins the host cluster; the kubelet runs pods with containerd and runc, and the host cluster's real
kube-scheduler places them. A pod with a fixed command runs to Succeeded there, gets its address from the pod
network, and its log is read back through the API (API server -> kubelet, with the API server's kubelet client
certificate). A second run of the playbook changes nothing. The test then gives gpu3 back as site.yml left it:
reimaged and joined again from the lab's usual mirror (the simulated kubelet, which the lab's GPU and KAI
simulations serve).

Two things here are the site's, not the collection's, and the test does them as the site would:
* the pod network: a cluster's network add-on (Calico, Cilium, Flannel) writes its CNI configuration on each node
  once it joins; the collection installs the CNI plugins (kubernetes-cni, /opt/cni/bin) and leaves the network to
  the site. The test writes a bridge network (plugins bridge + host-local) before the join;
* the test pod tolerates ``node.kubernetes.io/not-ready``: the kubelet registers its Node with that taint and the
  node lifecycle controller removes it once Ready, but the lab's kube-controller-manager runs without that
  controller (the lab's other Nodes do not heartbeat; lab/gpucloud_lab/infra/kube.py). It tolerates the gate's
  ``gpucloud.baremetal/gpu-gate`` taint too: a node joins with it until its GPUs passed the gate (GPU health).
"""
from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest

from tests.integration.lab import REPO, Lab, kubectl, on, wait, write_pod_network

NODE = "gpu3"
POD = "hello-real-kubelet"
# The lab's site registry serves it (lab/gpucloud_lab/infra/registry.py, lab/lib/hello.c): prints a fixed line,
# then its arguments.
IMAGE = "docker.io/gpucloud-lab/hello:1.0"
SAID = "ran through a real kubelet"
POD_SUBNET = "10.244.23.0/24"
# A shared tenant of the lab's fleet (inventories/lab/fleet.yml), its namespace and KAI queue (the fleet's derived
# names, plugins/module_utils/_fleet/schema.py TENANT_DERIVED_NAMES).
TENANT_NS, TENANT_QUEUE = "tenant-beta", "tenant-beta"
TENANT_POD = "beta-on-a-real-kubelet"
TENANT_SAID = "a tenant's pod, bound by KAI"
GPU = "nvidia.com/gpu"


def _real_mirror() -> str:
    """The lab mirror's repository with the real kubelet (pkg_mirror.REAL_URL)."""
    from gpucloud_lab.infra import pkg_mirror  # the lab's own package (tests/integration/lab.py puts it on the path)
    return pkg_mirror.REAL_URL


def _reimage() -> None:
    kubectl("delete", "node", NODE, "--ignore-not-found", "--wait=false")
    kubectl("-n", "kube-node-lease", "delete", "lease", NODE, "--ignore-not-found")
    subprocess.run([str(REPO / "lab" / "gpucloud-lab"), "reimage", NODE], check=True, capture_output=True, text=True)


def _pod() -> dict:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": POD, "namespace": "default"},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {"kubernetes.io/hostname": NODE},
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"},
                            {"key": "gpucloud.baremetal/gpu-gate", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [{"name": "hello", "image": IMAGE, "args": [SAID]}],
        },
    }


def _tenant_pod() -> dict:
    """A shared tenant's pod as vCluster's syncer writes it into the tenant's namespace of the host cluster: KAI's
    scheduler and the tenant's queue (the lab's KAI simulation binds it, within the queue's limits), CPU, memory
    and one GPU (an extended resource: its request is its limit). The GPU is the lab's: the GPU Operator
    simulation plays its device plugin's effect on the Node (capacity and allocatable ``nvidia.com/gpu``, as on
    every lab node of a cluster with a ClusterPolicy); the real kubelet admits the pod against that allocatable,
    as it does any extended resource no device plugin registered with it."""
    pod = _pod()
    pod["metadata"] = {"name": TENANT_POD, "namespace": TENANT_NS, "labels": {"kai.scheduler/queue": TENANT_QUEUE}}
    pod["spec"]["schedulerName"] = "kai-scheduler"
    pod["spec"]["containers"][0].update(args=[TENANT_SAID], resources={
        "requests": {"cpu": "100m", "memory": "16Mi", GPU: "1"}, "limits": {GPU: "1"}})
    return pod


@pytest.fixture
def real_node(converged, lab: Lab) -> Iterator[Lab]:
    kubectl("delete", "pod", POD, "--ignore-not-found", "--grace-period=0", "--force")
    kubectl("-n", TENANT_NS, "delete", "pod", TENANT_POD, "--ignore-not-found", "--grace-period=0", "--force")
    _reimage()
    on(NODE, "test ! -e /usr/bin/kubelet && test ! -e /usr/bin/kubeadm")  # a fresh install: the roles bring them
    write_pod_network(NODE, POD_SUBNET)
    yield lab
    kubectl("delete", "pod", POD, "--ignore-not-found", "--grace-period=0", "--force")
    kubectl("-n", TENANT_NS, "delete", "pod", TENANT_POD, "--ignore-not-found", "--grace-period=0", "--force")
    _reimage()
    back = lab.playbook("playbooks/gpu_hosts.yml", limit=NODE)
    assert back.rc == 0, ("gpu3 not given back as site.yml left it", back.failures())


def test_a_pod_runs_to_succeeded_through_a_real_kubelet_on_a_node_the_roles_made(real_node: Lab) -> None:
    mirror = {"gpu_host_kubernetes_repo_url": _real_mirror()}
    first = real_node.playbook("playbooks/gpu_hosts.yml", mirror, limit=NODE)
    assert first.rc == 0, first.failures()
    # The kubelet the roles installed from the mirror is the real one: a program, not the lab's Python simulation.
    assert on(NODE, "head -c4 /usr/bin/kubelet | od -An -c | tr -d ' '").stdout.strip() == "177ELF"
    plugins = on(NODE, "ls /opt/cni/bin").stdout.split()
    assert {"bridge", "host-local", "loopback"} <= set(plugins), f"kubernetes-cni's plugins in /opt/cni/bin: {plugins}"
    node = json.loads(kubectl("get", "node", NODE, "-o", "json").stdout)
    assert any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"]["conditions"]), node["status"]
    assert node["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("containerd://")

    kubectl("apply", "-f", "-", input=json.dumps(_pod()))

    def finished() -> dict | None:
        pod = json.loads(kubectl("get", "pod", POD, "-o", "json").stdout)
        return pod if pod["status"].get("phase") in ("Succeeded", "Failed") else None

    try:
        pod = wait(finished, f"pod {POD} to finish on {NODE}", timeout=120, interval=2)
    except AssertionError as err:
        events = kubectl("get", "events", "--field-selector", f"involvedObject.name={POD}", check=False).stdout
        journal = on(NODE, "journalctl -u kubelet -u containerd --no-pager | tail -n 30", check=False).stdout
        raise AssertionError(f"{err}\nevents:\n{events}\nkubelet/containerd:\n{journal}") from None
    assert pod["status"]["phase"] == "Succeeded", pod["status"]
    assert pod["spec"]["nodeName"] == NODE
    # Placed by the host cluster's kube-scheduler (the lab's KAI simulation binds only kai-scheduler pods).
    events = json.loads(kubectl("get", "events", "--field-selector", f"involvedObject.name={POD}", "-o",
                                "json").stdout)["items"]
    # The scheduler writes events.k8s.io/v1 Events (reportingController); the kubelet core/v1 ones (source).
    reasons = {(e.get("source", {}).get("component") or e.get("reportingComponent"), e["reason"]) for e in events}
    assert ("default-scheduler", "Scheduled") in reasons and ("kubelet", "Started") in reasons, reasons
    assert pod["status"]["podIP"].startswith(POD_SUBNET.rsplit(".", 2)[0] + "."), pod["status"]
    # The log, read through the API server from the node's kubelet.
    assert kubectl("logs", POD).stdout == f"gpucloud-lab hello\n{SAID}\n"

    # A shared tenant's pod requesting CPU and one GPU, bound by KAI within its queue's limits (issue 20: "a tenant
    # pod requesting CPU and one GPU is bound in its queue and runs"): the lab's KAI simulation binds it (no
    # default-scheduler) against the Node's allocatable GPUs, the real kubelet admits and runs it.
    def gpus_allocatable() -> str | None:
        allocatable = json.loads(kubectl("get", "node", NODE, "-o", "json").stdout)["status"].get("allocatable", {})
        return allocatable.get(GPU) if allocatable.get(GPU, "0") != "0" else None

    gpus = wait(gpus_allocatable, f"{NODE}'s GPUs in its allocatable (GPU Operator simulation)", timeout=60)
    assert int(gpus) == real_node.config.fleet_gpus()[NODE]["count"], gpus
    kubectl("apply", "-f", "-", input=json.dumps(_tenant_pod()))

    def tenant_finished() -> dict | None:
        pod = json.loads(kubectl("-n", TENANT_NS, "get", "pod", TENANT_POD, "-o", "json").stdout)
        return pod if pod["status"].get("phase") in ("Succeeded", "Failed") else None

    tenant = wait(tenant_finished, f"{TENANT_NS}/{TENANT_POD} to finish on {NODE}", timeout=120, interval=2)
    assert tenant["status"]["phase"] == "Succeeded" and tenant["spec"]["nodeName"] == NODE, tenant["status"]
    events = json.loads(kubectl("-n", TENANT_NS, "get", "events", "--field-selector",
                                f"involvedObject.name={TENANT_POD}", "-o", "json").stdout)["items"]
    sources = {(e.get("source", {}).get("component") or e.get("reportingComponent"), e["reason"]) for e in events}
    assert ("kubelet", "Started") in sources and ("default-scheduler", "Scheduled") not in sources, sources
    controller_log = (real_node.config.LOG_DIR / "lab-controller.log").read_text()
    assert f"kai-scheduler: {TENANT_NS}/{TENANT_POD} bound to {NODE} (queue {TENANT_QUEUE})" in controller_log
    assert kubectl("-n", TENANT_NS, "logs", TENANT_POD).stdout == f"gpucloud-lab hello\n{TENANT_SAID}\n"

    again = real_node.playbook("playbooks/gpu_hosts.yml", mirror, limit=NODE)
    assert again.rc == 0, again.failures()
    assert again.changed_tasks(NODE) == [], again.changed_tasks(NODE)
