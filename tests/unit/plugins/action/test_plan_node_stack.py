# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action plan_node_stack as Ansible drives it: an ActionModule made of a Task with its args, a
connection stub, a DataLoader and a Templar, run with the task variables of a real inventory (a YAML file
read by InventoryManager, its hostvars a real HostVars). What its documentation promises: each node's
repositories (with the pinned key fingerprint), packages at their pins, pip packages, services and skips;
role gpu_host's defaults templated for the node with its inventory over them and its OS's facts; the nodes
of group gpu_nodes unless named; another role folder read when given; bad input refused by name; the same
result in check mode; no BMC account or other secret in the result."""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path
from unittest.mock import MagicMock

import pytest
import yaml
from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.inventory.manager import InventoryManager
from ansible.parsing.dataloader import DataLoader
from ansible.parsing.vault import VaultLib, VaultSecret
from ansible.playbook.play_context import PlayContext
from ansible.playbook.task import Task
from ansible.template import Templar
from ansible.vars.hostvars import HostVars
from ansible.vars.manager import VariableManager

from ansible_collections.gpucloud.baremetal.plugins.action.plan_node_stack import ROLE_PATH, ActionModule

UBUNTU = {"name": "ubuntu2404", "family": "ubuntu", "version": "24.04"}
UBUNTU_22 = {"name": "ubuntu2204", "family": "ubuntu", "version": "22.04"}
ROCKY = {"name": "rocky9", "family": "rocky", "version": "9.5"}
DEBIAN = {"name": "debian12", "family": "debian", "version": "12"}
K8S_KEY = "DE15B14486CD377B9E876E1A234654DA9A296436"
APT_HOST_PACKAGES = ["conntrack", "iptables", "iproute2", "ebtables", "ethtool", "socat", "mount", "util-linux"]
DNF_HOST_PACKAGES = ["conntrack-tools", "iptables-nft", "iproute", "iproute-tc", "ethtool", "socat", "util-linux"]


def fleet_node(os_profile: dict, **gpu) -> dict:
    """``gpucloud_node`` as the fleet inventory plugin gives it (the node's fleet entry, no BMC)."""
    return {"mac": "52:54:00:00:00:01", "ip": "192.0.2.21", "os_profile": dict(os_profile),
            "gpu": dict({"model": "H100-SXM5-80GB", "count": 8}, **gpu)}


def inventory(path: Path, nodes: dict[str, dict], group_vars: dict | None = None, text: str = "") -> Path:
    """An inventory file: ``nodes`` in group gpu_nodes (with ``group_vars``), a switch in another group."""
    data = {"all": {"children": {
        "gpu_nodes": {"hosts": nodes, "vars": group_vars or {}},
        "switches": {"hosts": {"leaf1": {"gpucloud_node": fleet_node(UBUNTU)}}},
    }}}
    path.write_text(yaml.safe_dump(data, sort_keys=False) + text)
    return path


def run_action(inv: Path, check_mode: bool = False, **args) -> dict:
    """Run the action as the task executor does: a Task with ``args``, task variables from the inventory."""
    loader = DataLoader()
    manager = InventoryManager(loader=loader, sources=[str(inv)])
    variables = VariableManager(loader=loader, inventory=manager)
    task = Task()
    task.args = args
    task.check_mode = check_mode
    context = PlayContext()
    context.check_mode = check_mode
    connection = MagicMock()
    connection._shell.tmpdir = None
    action = ActionModule(task=task, connection=connection, play_context=context, loader=loader,
                          templar=Templar(loader=loader), shared_loader_obj=None)
    task_vars = {"hostvars": HostVars(inventory=manager, variable_manager=variables, loader=loader),
                 "groups": manager.get_groups_dict()}
    return action.run(task_vars=task_vars)


def stack(result: dict, name: str) -> dict:
    assert "failed" not in result, result
    return result["data"]["nodes/%s.yaml" % name]


def test_an_operator_node_on_ubuntu_from_the_role_defaults(tmp_path: Path) -> None:
    inv = inventory(tmp_path / "hosts.yml", {"gpu-r1-01": {"gpucloud_node": fleet_node(
        UBUNTU, driver="operator", nvswitch=True)}})
    result = run_action(inv)
    assert result["changed"] is False and list(result["data"]) == ["nodes/gpu-r1-01.yaml"]
    assert stack(result, "gpu-r1-01") == {
        "node": "gpu-r1-01",
        "os": {"profile": "ubuntu2404", "distribution": "Ubuntu", "version": "24.04"},
        "gpu": {"model": "H100-SXM5-80GB", "count": 8, "driver": "operator", "nvswitch": True, "nvlink5": False,
                "kernel_modules": "open"},
        "package_manager": "apt",
        "repositories": [{"name": "kubernetes", "url": "https://pkgs.k8s.io/core:/stable:/v1.32/deb/",
                          "key_fingerprint": K8S_KEY}],
        "module_streams": [],
        "packages": ["linux-headers-<running kernel>", "containerd", *APT_HOST_PACKAGES,
                     "kubeadm=1.32.3-1.1", "kubelet=1.32.3-1.1", "kubectl=1.32.3-1.1", "cri-tools=1.32.3-1.1"],
        "kernel_modules": [],
        "pip": ["nvidia-ml-py==13.615.71"],
        "services": ["kubelet"],
        "skipped": ["host driver and container toolkit: the GPU Operator brings them (gpu.driver operator)"],
    }


def test_a_host_driver_nvlink5_node_on_rocky(tmp_path: Path) -> None:
    inv = inventory(tmp_path / "hosts.yml", {"gpu-b200": {"gpucloud_node": fleet_node(
        ROCKY, model="B200", driver="host", nvswitch=True, nvlink5=True)}})
    node = stack(run_action(inv), "gpu-b200")
    assert node["package_manager"] == "dnf" and node["os"]["distribution"] == "Rocky"
    assert node["gpu"] == {"model": "B200", "count": 8, "driver": "host", "nvswitch": True, "nvlink5": True,
                           "kernel_modules": "open"}
    assert node["repositories"] == [
        {"name": "nvidia-cuda", "url": "https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/",
         "key_fingerprint": "610C7B14E068A878070DA4E99CD0A493D42D0685"},
        {"name": "nvidia-container-toolkit", "url": "https://nvidia.github.io/libnvidia-container/stable/rpm/x86_64",
         "key_fingerprint": "C95B321B61E88C1809C4F759DDCAE044F796ECB0"},
        # containerd.io on RHEL comes from Docker's repository, which the role adds with Docker's pinned key
        {"name": "docker", "url": "https://download.docker.com/linux/centos",
         "key_fingerprint": "060A61C51B558A7F742B77AAC52FEB6B621E9F35"},
        {"name": "kubernetes", "url": "https://pkgs.k8s.io/core:/stable:/v1.32/rpm/", "key_fingerprint": K8S_KEY},
    ]
    assert node["module_streams"] == ["nvidia-driver:580-open"]
    assert node["packages"] == [
        "kernel-devel-<running kernel>", "kernel-headers-<running kernel>", "epel-release",
        "nvidia-driver-580.95.05", "nvidia-driver-cuda-580.95.05", "kmod-nvidia-open-dkms-580.95.05",
        "nvidia-container-toolkit-1.17.8", "nvidia-container-toolkit-base-1.17.8",
        "libnvidia-container-tools-1.17.8", "libnvidia-container1-1.17.8",
        "nvidia-fabric-manager-580.95.05", "nvlsm", "containerd.io", *DNF_HOST_PACKAGES,
        "kubeadm-1.32.3-150500.1.1", "kubelet-1.32.3-150500.1.1", "kubectl-1.32.3-150500.1.1",
        "cri-tools-1.32.3-150500.1.1",
    ]
    assert node["kernel_modules"] == ["ib_umad"]
    assert node["services"] == ["nvidia-persistenced", "nvidia-fabricmanager", "kubelet"]
    assert node["skipped"] == []


def test_a_host_driver_node_on_ubuntu_2204_gets_its_own_cuda_repository(tmp_path: Path) -> None:
    inv = inventory(tmp_path / "hosts.yml", {"gpu-u22": {"gpucloud_node": fleet_node(UBUNTU_22, driver="host")}})
    node = stack(run_action(inv), "gpu-u22")
    assert node["repositories"][0] == {
        "name": "nvidia-cuda", "url": "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/",
        "key_fingerprint": "EB693B3035CD5710E231E123A4B469963BF863CC"}
    assert node["packages"][:6] == [
        "linux-headers-<running kernel>", "nvidia-open-580=580.95.05-*", "nvidia-container-toolkit=1.17.8-1",
        "nvidia-container-toolkit-base=1.17.8-1", "libnvidia-container-tools=1.17.8-1", "libnvidia-container1=1.17.8-1"]
    assert "nvidia-fabricmanager-580=580.95.05-*" not in node["packages"]  # no NVSwitch
    assert node["module_streams"] == [] and node["kernel_modules"] == []
    assert node["services"] == ["nvidia-persistenced", "kubelet"]


def test_the_inventory_over_the_role_defaults_templated_in_the_nodes_context(tmp_path: Path) -> None:
    # A group value over a default, a host value over the group's, a host value that is itself a template of
    # another inventory variable; the role's derived defaults (the repository URL) follow the inventory.
    inv = inventory(tmp_path / "hosts.yml", {
        "gpu-a": {"gpucloud_node": fleet_node(UBUNTU, driver="host"),
                  "site_driver": "575.57.08", "gpu_host_driver_version": "{{ site_driver }}",
                  "gpu_host_kubernetes_version": "1.33.1"},
        "gpu-b": {"gpucloud_node": fleet_node(UBUNTU, driver="host")},
    }, group_vars={"gpu_host_kubernetes_version": "1.31.5", "gpu_host_manage_repos": False,
                   "gpu_host_kubernetes_key_fingerprint": "0123456789ABCDEF0123456789ABCDEF01234567"})
    result = run_action(inv)
    a, b = stack(result, "gpu-a"), stack(result, "gpu-b")
    assert "nvidia-open-580=575.57.08-*" in a["packages"] and "nvidia-open-580=580.95.05-*" in b["packages"]
    assert "kubelet=1.33.1-1.1" in a["packages"] and "kubelet=1.31.5-1.1" in b["packages"]
    assert a["repositories"] == [{"name": "kubernetes", "url": "https://pkgs.k8s.io/core:/stable:/v1.33/deb/",
                                  "key_fingerprint": "0123456789ABCDEF0123456789ABCDEF01234567"}]
    assert b["repositories"][0]["url"] == "https://pkgs.k8s.io/core:/stable:/v1.31/deb/"


def test_the_kubernetes_switches(tmp_path: Path) -> None:
    inv = inventory(tmp_path / "hosts.yml", {
        "gpu-off": {"gpucloud_node": fleet_node(UBUNTU), "gpu_host_kubernetes_install": False},
        "gpu-nokubelet": {"gpucloud_node": fleet_node(UBUNTU), "gpu_host_kubernetes_packages": ["kubeadm", "kubectl"],
                          "gpu_host_containerd": False},
    })
    result = run_action(inv)
    off, nokubelet = stack(result, "gpu-off"), stack(result, "gpu-nokubelet")
    # No Kubernetes node at all (the role skips tasks/kubernetes_node.yml): no Kubernetes packages either.
    node_off = stack(run_action(inventory(tmp_path / "off.yml", {"gpu-nonode": {
        "gpucloud_node": fleet_node(UBUNTU), "gpu_host_kubernetes_node": False}})), "gpu-nonode")
    assert node_off["packages"] == ["linux-headers-<running kernel>", "containerd"], node_off["packages"]
    assert node_off["repositories"] == [] and node_off["services"] == []
    assert off["repositories"] == [] and off["services"] == []
    assert off["packages"] == ["linux-headers-<running kernel>", "containerd"]
    assert nokubelet["packages"] == ["linux-headers-<running kernel>", *APT_HOST_PACKAGES,
                                     "kubeadm=1.32.3-1.1", "kubectl=1.32.3-1.1"]
    assert nokubelet["services"] == [] and [r["name"] for r in nokubelet["repositories"]] == ["kubernetes"]


def test_what_is_skipped_and_why(tmp_path: Path) -> None:
    inv = inventory(tmp_path / "hosts.yml", {
        "gpu-debian": {"gpucloud_node": fleet_node(DEBIAN, driver="host")},
        "cpu-01": {"gpucloud_node": fleet_node(UBUNTU, count=0, model=None)},
    })
    result = run_action(inv)
    debian, cpu = stack(result, "gpu-debian"), stack(result, "cpu-01")
    assert debian["skipped"] == ["NVIDIA packages: Debian is not a supported OS for them"]
    assert debian["package_manager"] == "none" and debian["pip"] == [] and debian["module_streams"] == []
    assert debian["packages"] == ["containerd", *APT_HOST_PACKAGES, "kubeadm=1.32.3-1.1", "kubelet=1.32.3-1.1",
                                  "kubectl=1.32.3-1.1", "cri-tools=1.32.3-1.1"]
    assert cpu["skipped"] == ["everything NVIDIA: the fleet gives this node no GPU"]
    assert cpu["gpu"]["count"] == 0 and cpu["pip"] == [] and "linux-headers-<running kernel>" not in cpu["packages"]


def test_nodes_alike_are_each_named_and_a_different_setting_is_not_shared(tmp_path: Path) -> None:
    inv = inventory(tmp_path / "hosts.yml", {
        "gpu-01": {"gpucloud_node": fleet_node(UBUNTU)},
        "gpu-02": {"gpucloud_node": fleet_node(UBUNTU)},
        "gpu-03": {"gpucloud_node": fleet_node(UBUNTU), "gpu_host_nvml_python_version": "12.560.30"},
    })
    result = run_action(inv)
    assert sorted(result["data"]) == ["nodes/gpu-01.yaml", "nodes/gpu-02.yaml", "nodes/gpu-03.yaml"]
    assert [stack(result, n)["node"] for n in ("gpu-01", "gpu-02", "gpu-03")] == ["gpu-01", "gpu-02", "gpu-03"]
    assert stack(result, "gpu-02")["pip"] == ["nvidia-ml-py==13.615.71"]
    assert stack(result, "gpu-03")["pip"] == ["nvidia-ml-py==12.560.30"]


def test_the_nodes_of_group_gpu_nodes_unless_named(tmp_path: Path) -> None:
    inv = inventory(tmp_path / "hosts.yml", {"gpu-01": {"gpucloud_node": fleet_node(UBUNTU)},
                                             "gpu-02": {"gpucloud_node": fleet_node(ROCKY)}})
    assert sorted(run_action(inv)["data"]) == ["nodes/gpu-01.yaml", "nodes/gpu-02.yaml"]  # not the switch leaf1
    named = run_action(inv, nodes=["gpu-02"])
    assert list(named["data"]) == ["nodes/gpu-02.yaml"] and stack(named, "gpu-02")["package_manager"] == "dnf"
    assert run_action(inv, nodes=[]) == {"changed": False, "data": {}}


def test_another_role_folder_is_read_when_given(tmp_path: Path) -> None:
    role = tmp_path / "gpu_host"
    shutil.copytree(Path(ROLE_PATH) / "defaults", role / "defaults")
    shutil.copytree(Path(ROLE_PATH) / "vars", role / "vars")
    defaults = role / "defaults" / "main.yml"
    defaults.write_text(defaults.read_text().replace('gpu_host_kubernetes_version: "1.32.3"',
                                                     'gpu_host_kubernetes_version: "1.34.0"'))
    (role / "vars" / "Ubuntu.yml").unlink()  # Ubuntu falls back to its os_family's file, Debian.yml (none): default
    inv = inventory(tmp_path / "hosts.yml", {"gpu-01": {"gpucloud_node": fleet_node(UBUNTU)}})
    node = stack(run_action(inv, role_path=str(role)), "gpu-01")
    assert "kubelet=1.34.0-1.1" in node["packages"] and node["package_manager"] == "none"
    assert node["repositories"][0]["url"] == "https://pkgs.k8s.io/core:/stable:/v1.34/deb/"
    (role / "vars" / "default.yml").unlink()
    with pytest.raises(AnsibleError, match=re.escape("none of the vars files Ubuntu.yml, Debian.yml, default.yml")):
        run_action(inv, role_path=str(role))


def test_an_unknown_option_is_refused_by_name(tmp_path: Path) -> None:
    inv = inventory(tmp_path / "hosts.yml", {"gpu-01": {"gpucloud_node": fleet_node(UBUNTU)}})
    with pytest.raises(AnsibleActionFail, match=r"Invalid options for .*: node$"):
        run_action(inv, node=["gpu-01"])


@pytest.mark.parametrize(("nodes", "msg"), [
    (["nosuch"], "nodes: nosuch is not a GPU node of the inventory (group gpu_nodes); nothing was planned"),
    (["leaf1", "gpu-02"], "nodes: leaf1, gpu-02 are not a GPU node of the inventory (group gpu_nodes); nothing was"
                          " planned"),
    ("gpu-01", "nodes: must be a list of node names (hosts of group gpu_nodes); nothing was planned"),
    ([1], "nodes: must be a list of node names (hosts of group gpu_nodes); nothing was planned"),
    ({"gpu-01": {}}, "nodes: must be a list of node names (hosts of group gpu_nodes); nothing was planned"),
])
def test_nodes_that_are_not_the_inventorys_gpu_nodes_are_refused_by_name(
        tmp_path: Path, nodes: object, msg: str) -> None:
    """A switch, a typo or one name given as text: named, before anything is templated."""
    inv = inventory(tmp_path / "hosts.yml", {"gpu-01": {"gpucloud_node": fleet_node(UBUNTU)}})
    result = run_action(inv, nodes=nodes)
    assert result.get("failed") is True and result["msg"] == msg, result
    assert "data" not in result


def test_an_os_family_the_plan_does_not_know_fails_naming_the_profile(tmp_path: Path) -> None:
    arch = {"name": "arch", "family": "arch", "version": "2025"}
    inv = inventory(tmp_path / "hosts.yml", {"gpu-01": {"gpucloud_node": fleet_node(UBUNTU)},
                                             "gpu-02": {"gpucloud_node": fleet_node(arch)}})
    result = run_action(inv)
    problem = "os_profile arch: family 'arch' is not one of ubuntu, debian, rocky, rhel"
    assert result["failed"] is True and result["problems"] == [problem]
    assert problem in result["msg"] and "data" not in result


def test_check_mode_gives_the_same_plan(tmp_path: Path) -> None:
    inv = inventory(tmp_path / "hosts.yml", {"gpu-01": {"gpucloud_node": fleet_node(ROCKY, driver="host")}})
    checked = run_action(inv, check_mode=True)
    assert "skipped" not in checked and checked["changed"] is False
    assert checked == run_action(inv) and stack(checked, "gpu-01")["packages"]


def test_no_bmc_account_or_other_secret_in_the_result(tmp_path: Path) -> None:
    # The BMC password is vaulted with a secret the loader does not have: reading it would fail the task.
    vault = VaultLib([("default", VaultSecret(b"not-given-to-the-loader"))])
    cipher = vault.encrypt("hunter2-bmc").decode()
    vaulted = textwrap.indent("password: !vault |\n" + textwrap.indent(cipher, "  ") + "\n", " " * 12)
    bmc = "          gpucloud_bmc:\n            address: 192.0.2.121\n            username: bmcadmin\n" + vaulted
    path = inventory(tmp_path / "hosts.yml", {"gpu-01": {
        "gpucloud_node": fleet_node(UBUNTU, driver="host"),
        "gpu_host_pip_index_url": "https://ci:pip-s3cret@pypi.example/simple",
    }})
    text = path.read_text()
    path.write_text(text.replace("        gpu-01:\n", "        gpu-01:\n" + bmc, 1))
    assert "$ANSIBLE_VAULT" in path.read_text()
    result = run_action(path)
    dumped = json.dumps(result, default=str)
    assert stack(result, "gpu-01")["pip"] == ["nvidia-ml-py==13.615.71"]
    for secret in ("hunter2", "ANSIBLE_VAULT", "192.0.2.121", "bmcadmin", "pip-s3cret", "gpucloud_bmc", "bmc"):
        assert secret not in dumped
