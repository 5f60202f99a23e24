# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab itself: what every playbook relies on, driven through ansible-runner."""
from __future__ import annotations

import base64
import json
import re
import shlex
import ssl
import subprocess
import time
import urllib.request
from pathlib import Path

import yaml

from tests.integration.lab import KUBECONFIG, Lab

REPO = Path(__file__).resolve().parents[2]
KNOWN_HOSTS = Path("/var/lib/gpucloud-lab/ssh/known_hosts")

CHART_REPO = "http://198.51.100.1:8880"
HOST_ROOTS = Path("/var/lib/gpucloud-lab/hosts")
NVUE_API = "https://198.51.100.31:8765"  # leaf1: the lab's NVUE REST API simulation
NVUE_STATE = Path("/var/lib/gpucloud-lab/switches/leaf1.json")
K8S_VARS = {"lab_chart_repo": CHART_REPO, "lab_kubeconfig": str(KUBECONFIG)}


def test_hosts_look_like_servers(lab: Lab) -> None:
    run = lab.playbook("lab_smoke.yml")
    assert run.rc == 0, run.failures()
    assert set(run.hosts_with("ok")) == {"pxe", "gpu1", "gpu2", "gpu3"}
    assert not run.failed_hosts
    assert not run.hosts_with("changed")


def test_ssh_checks_each_hosts_key_against_the_labs_known_hosts(lab: Lab, tmp_path: Path) -> None:
    """inventories/lab connects with StrictHostKeyChecking=yes against the lab's known_hosts file (each running
    host's own keys, written by the lab); gpu1 answering with a key that file does not hold for it fails."""
    args = yaml.safe_load((REPO / "inventories/lab/group_vars/all.yml").read_text())["ansible_ssh_common_args"]
    assert "-o StrictHostKeyChecking=yes" in args and f"UserKnownHostsFile={KNOWN_HOSTS}" in args, args
    ssh = ["ssh", "-i", "/var/lib/gpucloud-lab/ssh/id_ed25519", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]

    def reach(known: Path) -> subprocess.CompletedProcess:
        opts = shlex.split(args.replace(str(KNOWN_HOSTS), str(known)))
        return subprocess.run(ssh + opts + ["root@198.51.100.21", "hostname"], capture_output=True, text=True,
                              check=False, timeout=30)

    good = reach(KNOWN_HOSTS)
    assert good.returncode == 0 and good.stdout.strip() == "gpu1", good.stderr
    lines = KNOWN_HOSTS.read_text().splitlines()
    gpu2 = [line.split(" ", 1)[1] for line in lines if line.startswith("gpu2,")]
    tampered = tmp_path / "known_hosts"  # gpu1's names and address with gpu2's keys
    tampered.write_text("".join(f"gpu1,198.51.100.21 {key}\n" for key in gpu2))
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
        node = _kubectl("get", "node", "gpu2", "-o", "jsonpath={.metadata.labels.nvidia\\.com/gpu\\.product}")
        assert node == "H100-SXM5-80GB"
    finally:
        lab.playbook("gpu_operator.yml", {**K8S_VARS, "lab_state": "absent"})


def test_tenant_control_plane_part_of_the_lab_controller(lab: Lab) -> None:
    run = lab.playbook("vcluster.yml", K8S_VARS)
    assert run.rc == 0, run.failures()
    server = _kubectl("-n", "vcluster-labtest", "get", "secret", "vc-labtest", "-o", "jsonpath={.data.config}")
    assert server
    gone = lab.playbook("vcluster.yml", {**K8S_VARS, "lab_state": "absent"})
    assert gone.rc == 0, gone.failures()
    _wait(lambda: not _units("vc-vcluster-labtest-labtest"), "the tenant control plane to stop")


def test_redfish_bmcs_power_the_gpu_nodes(lab: Lab) -> None:
    lab.playbook("redfish.yml", {"lab_power": "PowerForceOff"})
    # Like real hardware, the emulator applies power actions after 1-11 s.
    _wait(lambda: _power_states() == {"Off"}, "the nodes to power off", timeout=20)
    on = lab.playbook("redfish.yml")
    assert on.rc == 0, on.failures()
    assert set(on.hosts_with("changed")) == {"gpu1", "gpu2", "gpu3"}
    _wait(lambda: _power_states() == {"On"}, "the nodes to power on", timeout=20)
    again = lab.playbook("redfish.yml")
    assert not again.hosts_with("changed")
    off = lab.playbook("redfish.yml", {"lab_power": "PowerForceOff"})
    assert off.rc == 0 and set(off.hosts_with("changed")) == {"gpu1", "gpu2", "gpu3"}


def test_site_pushes_leaf1_to_the_nvue_simulation_and_is_idempotent(lab: Lab) -> None:
    # Start from a leaf without our tenants (the lab may already have run site.yml): the role's own
    # `deleted`, through the same revision flow.
    reset = lab.playbook("playbooks/fabric.yml", {"fabric_state": "deleted"}, limit="leaf1")
    assert reset.rc == 0, reset.failures()
    assert not _tenant_vlans(_nvue_applied())
    first = lab.playbook("playbooks/site.yml")
    assert first.rc == 0, first.failures()
    assert "Apply an NVUE revision" in first.changed_tasks("leaf1")
    assert "Apply an NVUE revision" not in first.changed_tasks("leaf2")  # SONiC: rendered, not pushed
    assert (HOST_ROOTS.parent / "fabric" / "leaf2.sonic.json").exists()
    second = lab.playbook("playbooks/site.yml")
    assert second.rc == 0, second.failures()
    assert not second.hosts_with("changed"), second.changed_tasks()
    applied = _nvue_applied()
    assert _tenant_vlans(applied) == {"101": {"10101"}, "102": {"10102"}}
    for vlan, vni, vrf, l3vni in ((101, 10101, "acme", 50101), (102, 10102, "beta", 50102)):
        assert str(vni) in applied["evpn"]["vni"]
        assert applied["interface"][f"vlan{vlan}"]["ip"]["vrf"] == vrf
        assert applied["interface"][f"vlan{vlan}"]["description"] == f"gpucloud:{vrf}"
        assert str(l3vni) in applied["vrf"][vrf]["evpn"]["vni"]
    # What the simulation persisted (and `status` reports) is what its API answers.
    assert json.loads(NVUE_STATE.read_text())["applied"] == applied
    status = subprocess.run([str(lab.repo / "lab" / "gpucloud-lab"), "status"], capture_output=True, text=True,
                            check=False).stdout
    assert re.search(r"switch leaf1 +running +https://198\.51\.100\.31:8765 +NVUE API SIMULATION, 2 tenants", status)


def _nvue_applied() -> dict:
    auth = base64.b64encode(b"cumulus:gpucloud-lab").decode()
    request = urllib.request.Request(f"{NVUE_API}/nvue_v1/?rev=applied", headers={"Authorization": f"Basic {auth}"})
    context = ssl.create_default_context(cafile="/var/lib/gpucloud-lab/pki/ca.crt")
    with urllib.request.urlopen(request, timeout=5, context=context) as response:
        return dict(json.load(response))


def _tenant_vlans(applied: dict) -> dict[str, set[str]]:
    vlans = applied.get("bridge", {}).get("domain", {}).get("br_default", {}).get("vlan", {})
    return {vlan: set(body.get("vni", {})) for vlan, body in vlans.items()}


def _power_states() -> set[str]:
    context = ssl.create_default_context(cafile="/var/lib/gpucloud-lab/pki/ca.crt")
    auth = base64.b64encode(b"admin:gpucloud-lab").decode()
    states = set()
    for port in (8001, 8002, 8003):
        request = urllib.request.Request(f"https://198.51.100.1:{port}/redfish/v1/Systems/gpu{port - 8000}",
                                         headers={"Authorization": f"Basic {auth}"})
        with urllib.request.urlopen(request, context=context, timeout=5) as response:
            states.add(json.load(response)["PowerState"])
    return states


def _kubectl(*args: str) -> str:
    return subprocess.run(["kubectl", f"--kubeconfig={KUBECONFIG}", *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def _units(fragment: str) -> list[str]:
    root = Path("/sys/fs/cgroup/systemd/gpucloud-lab")
    return [p.name for p in root.iterdir() if fragment in p.name] if root.is_dir() else []


def _wait(predicate, what: str, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)
