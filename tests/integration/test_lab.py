# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab itself: what every playbook relies on, driven through ansible-runner."""
from __future__ import annotations

import base64
import json
import shlex
import ssl
import subprocess
import urllib.request
from pathlib import Path

import yaml

from tests.integration.lab import KUBECONFIG, Lab, config, kubectl, secrets, wait

REPO = Path(__file__).resolve().parents[2]
KNOWN_HOSTS = config.KNOWN_HOSTS
K8S_VARS = {"lab_chart_repo": config.CHART_REPO_URL, "lab_kubeconfig": str(KUBECONFIG)}
GPU_NODES = {h.name for h in config.GPU_NODES}


def test_hosts_look_like_servers(lab: Lab) -> None:
    run = lab.playbook("lab_smoke.yml")
    assert run.rc == 0, run.failures()
    assert set(run.hosts_with("ok")) == {config.PXE_SERVER.name, *GPU_NODES}
    assert not run.failed_hosts
    assert not run.hosts_with("changed")


def test_ssh_checks_each_hosts_key_against_the_labs_known_hosts(lab: Lab, tmp_path: Path) -> None:
    """inventories/lab connects with StrictHostKeyChecking=yes against the lab's known_hosts file (each running
    host's own keys, written by the lab); gpu1 answering with a key that file does not hold for it fails."""
    args = yaml.safe_load((REPO / "inventories/lab/group_vars/all.yml").read_text())["ansible_ssh_common_args"]
    assert "-o StrictHostKeyChecking=yes" in args and f"UserKnownHostsFile={KNOWN_HOSTS}" in args, args
    ssh = ["ssh", "-i", str(config.SSH_KEY), "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]
    gpu1 = config.host("gpu1")

    def reach(known: Path) -> subprocess.CompletedProcess:
        opts = shlex.split(args.replace(str(KNOWN_HOSTS), str(known)))
        return subprocess.run(ssh + opts + [f"root@{gpu1.ip}", "hostname"], capture_output=True, text=True,
                              check=False, timeout=30)

    good = reach(KNOWN_HOSTS)
    assert good.returncode == 0 and good.stdout.strip() == "gpu1", good.stderr
    lines = KNOWN_HOSTS.read_text().splitlines()
    gpu2 = [line.split(" ", 1)[1] for line in lines if line.startswith("gpu2,")]
    tampered = tmp_path / "known_hosts"  # gpu1's names and address with gpu2's keys
    tampered.write_text("".join(f"gpu1,{gpu1.ip} {key}\n" for key in gpu2))
    bad = reach(tampered)
    assert bad.returncode == 255 and "Host key verification failed" in bad.stderr, (bad.returncode, bad.stderr)


def test_services_are_managed_with_systemd_and_idempotent(lab: Lab) -> None:
    stopped = {"lab_service_state": "stopped", "lab_service_enabled": False}
    try:
        # From a known state: whatever ran on gpu1 before (or a lab left up) must not decide the result.
        assert lab.playbook("service.yml", stopped).rc == 0
        first = lab.playbook("service.yml")
        second = lab.playbook("service.yml")
        assert first.rc == 0 and not first.failed_hosts
        assert first.changed_tasks("gpu1") == ["Set nginx state"]
        assert second.changed_tasks() == []
    finally:
        lab.playbook("service.yml", stopped)


def test_wireguard_go_tunnel_between_hosts(lab: Lab) -> None:
    run = lab.playbook("wireguard.yml")
    assert run.rc == 0, run.failures()
    assert not run.failed_hosts
    assert "Start wg-quick@labtest" in run.changed_tasks("gpu1")


def test_host_cluster_api_with_the_charts_crds(lab: Lab) -> None:
    run = lab.playbook("host_cluster.yml", K8S_VARS)
    assert run.rc == 0, run.failures()
    task = "Create a KAI Queue whose GPU quota is a string"
    assert run.failed_tasks("localhost") == [task]
    rejected = run.results(task)["localhost"]
    assert rejected["reason"] == "Unprocessable Entity" and "spec.resources.gpu.quota" in rejected["msg"]


def test_gpu_operator_part_of_the_lab_controller(lab: Lab) -> None:
    try:
        run = lab.playbook("gpu_operator.yml", K8S_VARS)
        assert run.rc == 0, run.failures()
        assert "Install or remove the gpu-operator release" in run.changed_tasks("localhost")
        assert "Write or remove kubelet.conf" in run.changed_tasks("gpu2")
        node = kubectl("get", "node", "gpu2", "-o", "jsonpath={.metadata.labels.nvidia\\.com/gpu\\.product}").stdout
        assert node == "H100-SXM5-80GB"
    finally:
        lab.playbook("gpu_operator.yml", {**K8S_VARS, "lab_state": "absent"})


def test_tenant_control_plane_part_of_the_lab_controller(lab: Lab) -> None:
    run = lab.playbook("vcluster.yml", K8S_VARS)
    assert run.rc == 0, run.failures()
    server = kubectl("-n", "vcluster-labtest", "get", "secret", "vc-labtest", "-o", "jsonpath={.data.config}").stdout
    assert server
    gone = lab.playbook("vcluster.yml", {**K8S_VARS, "lab_state": "absent"})
    assert gone.rc == 0, gone.failures()
    wait(lambda: not _units("vc-vcluster-labtest-labtest"), "the tenant control plane to stop", timeout=30)


def test_redfish_bmcs_power_the_gpu_nodes(lab: Lab) -> None:
    lab.playbook("redfish.yml", {"lab_power": "PowerForceOff"})
    # Like real hardware, the emulator applies power actions after 1-11 s.
    wait(lambda: _power_states() == {"Off"}, "the nodes to power off", timeout=20, interval=0.5)
    on = lab.playbook("redfish.yml")
    assert on.rc == 0, on.failures()
    assert set(on.hosts_with("changed")) == GPU_NODES
    wait(lambda: _power_states() == {"On"}, "the nodes to power on", timeout=20, interval=0.5)
    again = lab.playbook("redfish.yml")
    assert not again.hosts_with("changed")
    off = lab.playbook("redfish.yml", {"lab_power": "PowerForceOff"})
    assert off.rc == 0 and set(off.hosts_with("changed")) == GPU_NODES


def _power_states() -> set[str]:
    context = ssl.create_default_context(cafile=str(config.PKI_DIR / "ca.crt"))
    users = {n["name"]: n["bmc"]["username"] for n in config.fleet()["nodes"]}
    states = set()
    for node in config.GPU_NODES:
        auth = base64.b64encode(f"{users[node.name]}:{secrets.LAB_PASSWORD}".encode()).decode()
        request = urllib.request.Request(f"https://{config.bmc_address(node)}/redfish/v1/Systems/{node.name}",
                                         headers={"Authorization": f"Basic {auth}"})
        with urllib.request.urlopen(request, context=context, timeout=5) as response:
            states.add(json.load(response)["PowerState"])
    return states


def _units(fragment: str) -> list[str]:
    root = Path("/sys/fs/cgroup/systemd") / config.CGROUP_NAME
    return [p.name for p in root.iterdir() if fragment in p.name] if root.is_dir() else []
