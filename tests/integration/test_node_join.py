# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_join against the lab: a real kubeadm join, the kubelet's TLS bootstrap, the token gone afterwards.

gpu3 is a shared GPU node no other lab test joins; the test leaves it as it found it (reset, no Node).
"""
from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.lab import KUBECONFIG, Lab, config, kubectl, on

REPO = Path(__file__).resolve().parents[2]
NODE = "gpu3"
VARS = {"lab_kubeconfig": str(KUBECONFIG), "lab_join_hosts": NODE, "lab_node_ip": config.host(NODE).ip}
# An address of the control-plane host where nothing listens: a wrong endpoint.
WRONG_ENDPOINT = f"{config.CONTROL_PLANE.ip}:6999"
# Where role gpu_gate keeps gpu3's gate reports with its lifecycle record (the boot server).
RECORD = f"/var/lib/gpucloud/provision/gate/{NODE}"


def _kubectl(*args: str) -> str:
    return kubectl(*args).stdout


def _on_node(command: str) -> str:
    return on(NODE, command).stdout


def _reset() -> None:
    _on_node("kubeadm reset -f >/dev/null 2>&1; true")
    _kubectl("delete", "node", NODE, "--ignore-not-found")
    _kubectl("-n", "kube-node-lease", "delete", "lease", NODE, "--ignore-not-found")


def _tokens() -> list[str]:
    found = json.loads(_kubectl("-n", "kube-system", "get", "secrets", "--field-selector",
                                "type=bootstrap.kubernetes.io/token", "-o", "json"))
    return [s["metadata"]["name"] for s in found["items"]]


@pytest.fixture
def fresh_node(lab: Lab) -> Iterator[Lab]:
    # What gpu_hosts.yml does before any join (kubeadm's preflight checks ip_forward and bridge-nf-call-iptables).
    prepared = lab.playbook("kubernetes_node.yml", VARS)
    assert prepared.rc == 0, prepared.failures()
    _reset()
    yield lab
    _reset()


def _node_csrs() -> list[dict]:
    found = json.loads(_kubectl("get", "csr", "-o", "json"))["items"]
    return [c for c in found if c["spec"].get("signerName") == "kubernetes.io/kube-apiserver-client-kubelet"]


def test_join_with_the_tls_bootstrap_identity_then_nothing_to_do(fresh_node: Lab) -> None:
    before = {c["metadata"]["name"] for c in _node_csrs()}
    bad = fresh_node.playbook("node_join.yml", {**VARS, "lab_node_ip": "198.51.100.300"})
    assert bad.rc != 0 and any("node_join_node_ip" in f and "198.51.100.300" in f for f in bad.failures()), \
        bad.failures()
    assert not _tokens() and _on_node("test -e /etc/kubernetes/kubelet.conf || echo none").strip() == "none"
    # A node without kubeadm yet (a fresh node, whose kubeadm gpu_host installs first in a real run): check mode
    # says so and predicts no more for it; a real run stops at the prerequisite, naming it.
    missing = {**VARS, "node_join_kubeadm": "/usr/local/sbin/no-kubeadm-here"}
    predicted = fresh_node.playbook("node_join.yml", missing, check=True)
    assert predicted.rc == 0, predicted.failures()
    said = predicted.results("Prerequisites - in check mode, say that the join waits for kubeadm")[NODE]["msg"]
    assert "'/usr/local/sbin/no-kubeadm-here' does not run" in said and "Check mode: nothing was installed" in said
    assert "Read the Node" not in [e.get("event_data", {}).get("task") for e in predicted.events]
    stopped = fresh_node.playbook("node_join.yml", missing)
    assert stopped.rc != 0 and not stopped.hosts_with("changed"), stopped.changed_tasks()
    assert any("node_join step prerequisites failed on gpu3: '/usr/local/sbin/no-kubeadm-here' does not run" in f
               for f in stopped.failures()), stopped.failures()
    check = fresh_node.playbook("node_join.yml", VARS, check=True)
    assert check.rc == 0, check.failures()
    assert not _tokens(), "check mode created a bootstrap token"
    assert not _kubectl("get", "nodes", "-o", "name").count(f"node/{NODE}")

    # site.yml's gate stage may have left gpu3 a passing gate report: then it joins with the gate's label.
    report = on("pxe", f"cat {RECORD}/latest.json 2>/dev/null || cat /dev/null").stdout or \
        _on_node("cat /var/lib/gpucloud/gate/latest.json 2>/dev/null || true")
    gate_passed = bool(report.strip()) and json.loads(report).get("passed") is True
    run = fresh_node.playbook("node_join.yml", VARS)
    assert run.rc == 0, run.failures()
    # (the token and join tasks run with no_log, so their events carry no `changed`; the stats do)
    assert run.hosts_with("changed")[NODE] == 4 + gate_passed
    assert run.changed_tasks(NODE) == ["Token - delete it"] + (
        ["GPU gate - a node that joins with a passing gate report carries the gate's label"] if gate_passed else []
    ) + ["Label the Node"]
    node = json.loads(_kubectl("get", "node", NODE, "-o", "json"))
    ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
    assert ready and ready[0]["status"] == "True"
    assert node["metadata"]["labels"].get("gpucloud.baremetal/gpu-gate") == ("passed" if gate_passed else None)
    assert node["metadata"]["labels"]["gpucloud.baremetal/role"] == "shared-gpu"
    # The kubelet runs with the fleet's address (kubeadm's kubeletExtraArgs end in kubeadm-flags.env).
    assert f"--node-ip={config.host(NODE).ip}" in _on_node("cat /var/lib/kubelet/kubeadm-flags.env")
    assert {"type": "InternalIP", "address": config.host(NODE).ip} in node["status"]["addresses"]
    # The identity came from the TLS bootstrap: a CSR by the bootstrap token's user, approved and signed
    # by kube-controller-manager, and the node's client certificate is system:node:gpu3 of the lab CA.
    new = [c for c in _node_csrs() if c["metadata"]["name"] not in before]
    assert len(new) == 1, new
    csr = new[0]
    assert csr["spec"]["username"].startswith("system:bootstrap:")
    assert "system:bootstrappers:kubeadm:default-node-token" in csr["spec"]["groups"]
    assert {c["type"] for c in csr["status"]["conditions"]} == {"Approved"} and csr["status"].get("certificate")
    subject = _on_node("openssl x509 -noout -subject -issuer -in /var/lib/kubelet/pki/kubelet-client-current.pem")
    assert "CN = system:node:gpu3" in subject and "O = system:nodes" in subject and "gpucloud-lab-ca" in subject
    assert "client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem" in _on_node(
        "cat /etc/kubernetes/kubelet.conf")
    # The token is gone and never showed up in the run's output.
    token_id = csr["spec"]["username"].removeprefix("system:bootstrap:")
    assert not _tokens()
    stdout = "".join(str(e.get("stdout", "")) + json.dumps(e.get("event_data", {}).get("res", {})) for e in run.events)
    assert token_id + "." not in stdout

    again = fresh_node.playbook("node_join.yml", VARS)
    assert again.rc == 0, again.failures()
    assert again.changed_tasks() == []


def test_a_wrong_endpoint_fails_naming_the_step_and_the_node_joins_afterwards(fresh_node: Lab) -> None:
    wrong = fresh_node.playbook("node_join.yml", {**VARS, "node_join_endpoint": WRONG_ENDPOINT,
                                                  "node_join_endpoint_timeout": 3})
    assert wrong.rc != 0
    messages = " ".join(wrong.failures())
    assert "node_join step endpoint failed for gpu3" in messages and WRONG_ENDPOINT in messages
    assert not _tokens(), "the token outlived the failed join"
    retry = fresh_node.playbook("node_join.yml", VARS)
    assert retry.rc == 0, retry.failures()
    assert "Ready" in _kubectl("get", "node", NODE, "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].type}")


def _kubelet_conf_sum() -> str:
    return _on_node("sha256sum /etc/kubernetes/kubelet.conf").split()[0]


def test_a_node_of_another_cluster_is_refused_never_reset_unless_forced(fresh_node: Lab) -> None:
    """A node whose kubelet trusts another CA and which has no Node here belongs to another cluster: the join is
    refused before anything changes (no reset, no token), in check mode too; node_join_force_reset lets it join.
    A kubelet kubeconfig of this cluster whose Node is gone (a half-done join) is reset and joined as before."""
    joined = fresh_node.playbook("node_join.yml", VARS)
    assert joined.rc == 0, joined.failures()

    # This cluster's kubelet.conf, Node gone (kubelet stopped first, so nothing registers it again): joined again.
    _on_node("systemctl stop kubelet")
    _kubectl("delete", "node", NODE)
    rejoined = fresh_node.playbook("node_join.yml", VARS)
    assert rejoined.rc == 0, rejoined.failures()
    assert "Ready" in _kubectl("get", "node", NODE, "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].type}")

    # Another cluster's: its kubelet trusts a CA this cluster never had, and this cluster has no Node of it.
    _on_node("systemctl stop kubelet")
    _kubectl("delete", "node", NODE)
    _on_node("set -e; cd /root; openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
             "-keyout other-ca.key -out other-ca.crt -days 1 -subj /CN=other-cluster-ca 2>/dev/null; "
             "sed -i \"s|certificate-authority-data: .*|certificate-authority-data: $(base64 -w0 other-ca.crt)|\" "
             "/etc/kubernetes/kubelet.conf")
    before = _kubelet_conf_sum()
    for check in (True, False):
        refused = fresh_node.playbook("node_join.yml", VARS, check=check)
        assert refused.rc != 0, ("check" if check else "run", "the node of another cluster was not refused")
        message = " ".join(refused.failures())
        assert "node_join step another-cluster refused for gpu3" in message and "node_decommission" in message
        assert "node_join_force_reset" in message, message
    assert _kubelet_conf_sum() == before, "the refused join changed the node's kubelet.conf (kubeadm reset ran)"
    assert not _tokens(), "a bootstrap token was made for a refused join"
    assert not _kubectl("get", "nodes", "-o", "name").count(f"node/{NODE}")

    forced = fresh_node.playbook("node_join.yml", {**VARS, "node_join_force_reset": True})
    assert forced.rc == 0, forced.failures()
    assert "Ready" in _kubectl("get", "node", NODE, "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].type}")
    assert _kubelet_conf_sum() != before, "forced, the node's kubelet.conf should be this cluster's now"


def _fault(*faults: str) -> None:
    """The lab's fault injection into gpu3's simulated GPUs and tools (gpucloud-lab fault)."""
    subprocess.run([str(REPO / "lab" / "gpucloud-lab"), "fault", NODE, *faults], cwd=REPO, check=True,
                   capture_output=True, text=True)


def test_a_node_that_failed_the_gpu_gate_gets_no_join_token(fresh_node: Lab) -> None:
    """A GPU gone from gpu3 (simulated) fails its gate; node_join then refuses it before any token is made, in
    check mode too. Once the GPU is back, a node without a report (with the GPU Operator's driver the gate runs
    after the join) joins with the gate's taint, and the gate, passing, removes it and labels the Node."""
    _fault("missing=1")
    try:
        gated = fresh_node.playbook("playbooks/gpu_gate.yml", {"regate": NODE, "confirm": NODE}, limit=NODE)
        assert gated.rc != 0, "a node short of a GPU passed the gate"
        assert any("NVML sees 7 GPUs, expected 8" in f for f in gated.failures()), gated.failures()
        for check in (True, False):
            refused = fresh_node.playbook("node_join.yml", VARS, check=check)
            message = " ".join(refused.failures())
            assert refused.rc != 0 and "node_join step gpu-gate refused gpu3" in message, message
            assert "inventory" in message and "regate=gpu3" in message, message
            assert f"{RECORD}/latest.json" in message, "the verdict was not read from the node's record"
        assert not _tokens(), "a bootstrap token was made for a node that failed the gate"
        assert f"node/{NODE}" not in _kubectl("get", "nodes", "-o", "name")
    finally:
        _fault("clear")
    # No report: neither the node's own nor the record that role gpu_gate keeps on the boot server.
    _on_node("rm -r /var/lib/gpucloud/gate")
    on("pxe", f"rm -r {RECORD}")
    joined = fresh_node.playbook("node_join.yml", VARS)
    assert joined.rc == 0, joined.failures()
    taints = json.loads(_kubectl("get", "node", NODE, "-o", "jsonpath={.spec.taints}") or "[]")
    assert {"key": "gpucloud.baremetal/gpu-gate", "value": "pending", "effect": "NoSchedule"} in taints, taints
    passed = fresh_node.playbook("playbooks/gpu_gate.yml", limit=NODE)
    assert passed.rc == 0, passed.failures()
    node = json.loads(_kubectl("get", "node", NODE, "-o", "json"))
    assert not [t for t in node["spec"].get("taints", []) if t["key"] == "gpucloud.baremetal/gpu-gate"], node["spec"]
    assert node["metadata"]["labels"].get("gpucloud.baremetal/gpu-gate") == "passed", node["metadata"]["labels"]
    # A shared node gated before the records were kept has only its own report: the gate copies it in once.
    own = _on_node("cat /var/lib/gpucloud/gate/latest.json")
    on("pxe", f"rm -r {RECORD}")
    adopted = fresh_node.playbook("playbooks/gpu_gate.yml", limit=NODE)
    assert adopted.rc == 0 and set(adopted.changed_tasks()) == {
        "The node's record folder on the boot server", "The report, under its start time and as the node's latest"}, \
        (adopted.failures(), adopted.changed_tasks())
    assert json.loads(on("pxe", f"cat {RECORD}/latest.json").stdout) == json.loads(own)
    again = fresh_node.playbook("playbooks/gpu_gate.yml", limit=NODE)
    assert again.rc == 0 and not again.changed_tasks(), again.changed_tasks()
