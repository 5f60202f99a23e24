# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What role gpu_host installs on a node, decided on the role's own files' values: the operator's driver
leaves the host stack out, a host driver brings its pinned packages, NVSwitch the fabric manager, and an
unsupported OS or a node without GPUs nothing NVIDIA."""
from __future__ import annotations

from pathlib import Path

import jinja2
import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._plan.nodes import node_facts, node_stack, vars_files

ROLE = Path(__file__).resolve().parents[5] / "roles" / "gpu_host"
PROFILES = {"ubuntu": {"name": "ubuntu2404", "family": "ubuntu", "version": "24.04"},
            "rocky": {"name": "rocky9", "family": "rocky", "version": "9.4"},
            "debian": {"name": "debian12", "family": "debian", "version": "12"}}
# The Kubernetes node packages the role pins (defaults), as apt names them.
# What kubeadm's preflight checks (from the distribution), then the pinned Kubernetes packages.
KUBE = ["conntrack", "iptables", "iproute2", "ebtables", "ethtool", "socat", "mount", "util-linux",
        "kubeadm=1.32.3-1.1", "kubelet=1.32.3-1.1", "kubectl=1.32.3-1.1", "cri-tools=1.32.3-1.1"]


def stack(family: str, count: int = 8, driver: str = "operator", nvswitch: bool = False, nvlink5: bool = False,
          model: str = "H100-SXM5-80GB", **overrides) -> dict:
    """The role's defaults and vars file, templated for the node as the action does (here with plain Jinja)."""
    node = {"gpu": {"model": model, "count": count, "driver": driver, "nvswitch": nvswitch, "nvlink5": nvlink5},
            "os_profile": PROFILES[family]}
    facts = node_facts(node["os_profile"])
    variables = dict(yaml.safe_load((ROLE / "defaults" / "main.yml").read_text()), gpucloud_node=node, **facts,
                     **overrides)
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    for _round in range(3):  # defaults that use other defaults
        variables = {k: env.from_string(v).render(variables) if isinstance(v, str) else v for k, v in variables.items()}
    native = ("gpu_host_gpu_count", "gpu_host_nvswitch", "gpu_host_nvlink5", "gpu_host_kubernetes_host_packages")
    settings = {k: yaml.safe_load(v) if k in native else v for k, v in variables.items() if k.startswith("gpu_host_")}
    vars_file = next(ROLE / "vars" / f for f in vars_files(facts) if (ROLE / "vars" / f).exists())
    family_vars = yaml.safe_load(env.from_string(vars_file.read_text()).render(variables))
    return node_stack("n1", node, facts, settings, family_vars)


def test_operator_driver_leaves_only_headers_containerd_and_nvml() -> None:
    out = stack("ubuntu")
    assert out["package_manager"] == "apt"
    assert out["packages"] == ["linux-headers-<running kernel>", "containerd", *KUBE]
    assert out["pip"] == ["nvidia-ml-py==13.615.71"] and out["services"] == ["kubelet"]
    assert out["repositories"] == [{"name": "kubernetes", "url": "https://pkgs.k8s.io/core:/stable:/v1.32/deb/",
                                    "key_fingerprint": "DE15B14486CD377B9E876E1A234654DA9A296436"}]
    assert out["skipped"] == ["host driver and container toolkit: the GPU Operator brings them (gpu.driver operator)"]


def test_host_driver_brings_the_pinned_driver_and_toolkit_and_nvswitch_the_fabric_manager() -> None:
    out = stack("ubuntu", driver="host", nvswitch=True)
    assert "nvidia-open-580=580.95.05-*" in out["packages"]
    assert "nvidia-container-toolkit=1.17.8-1" in out["packages"]
    assert "nvidia-fabricmanager-580=580.95.05-*" in out["packages"]
    assert out["services"] == ["nvidia-persistenced", "nvidia-fabricmanager", "kubelet"]
    assert out["repositories"][0]["url"].endswith("/cuda/repos/ubuntu2404/x86_64/")
    no_switch = stack("ubuntu", driver="host")
    assert not [p for p in no_switch["packages"] if "fabricmanager" in p] and no_switch["services"] == [
        "nvidia-persistenced", "kubelet"]


def test_rocky_takes_the_redhat_names_and_an_overridden_version() -> None:
    out = stack("rocky", driver="host", gpu_host_driver_version="575.1.2")
    assert out["package_manager"] == "dnf" and out["os"]["distribution"] == "Rocky"
    assert "nvidia-driver-575.1.2" in out["packages"] and "containerd.io" in out["packages"]
    assert out["repositories"][0]["url"].endswith("/cuda/repos/rhel9/x86_64/")
    assert "kubeadm-1.32.3-150500.1.1" in out["packages"]
    # NVIDIA's driver guide for RHEL 8/9: EPEL (DKMS), the open module stream, the open kernel module package.
    assert out["module_streams"] == ["nvidia-driver:580-open"] and "epel-release" in out["packages"]
    assert "kmod-nvidia-open-dkms-575.1.2" in out["packages"]
    assert {"conntrack-tools", "iptables-nft", "iproute-tc", "socat"} <= set(out["packages"])  # RHEL's names
    assert out["repositories"][-1]["url"] == "https://pkgs.k8s.io/core:/stable:/v1.32/rpm/"


def test_an_unsupported_os_or_no_gpu_installs_nothing_nvidia() -> None:
    debian = stack("debian", count=0)
    assert debian["packages"] == ["containerd", *KUBE] and debian["pip"] == [] and debian["package_manager"] == "none"
    assert debian["skipped"] == ["NVIDIA packages: Debian is not a supported OS for them",
                                 "everything NVIDIA: the fleet gives this node no GPU"]
    no_gpu = stack("ubuntu", count=0, driver="host")
    assert no_gpu["packages"] == ["containerd", *KUBE] and no_gpu["services"] == ["kubelet"]


def test_switches_of_the_role_are_followed() -> None:
    out = stack("ubuntu", gpu_host_containerd=False, gpu_host_kernel_headers=False, gpu_host_nvml_python=False,
                gpu_host_kubernetes_install=False)
    assert out["packages"] == [] and out["pip"] == [] and out["services"] == [] and out["repositories"] == []


def test_an_unknown_os_family_is_named() -> None:
    with pytest.raises(ProblemsError, match="family 'suse' is not one of"):
        node_facts({"name": "sles", "family": "suse", "version": "15"})


def test_open_kernel_modules_by_default_proprietary_on_request() -> None:
    out = stack("ubuntu", driver="host")
    assert "nvidia-open-580=580.95.05-*" in out["packages"] and out["gpu"]["kernel_modules"] == "open"
    assert out["module_streams"] == []  # apt has no module streams
    old = stack("ubuntu", driver="host", gpu_host_driver_kernel_modules="proprietary")
    assert "cuda-drivers-580=580.95.05-*" in old["packages"] and "nvidia-open-580=580.95.05-*" not in old["packages"]
    rocky = stack("rocky", driver="host", gpu_host_driver_kernel_modules="proprietary")
    assert rocky["module_streams"] == ["nvidia-driver:580-dkms"] and "kmod-nvidia-latest-dkms-580.95.05" in rocky["packages"]


def test_nvlink5_systems_get_the_fabric_manager_nvlsm_and_ib_umad() -> None:
    out = stack("ubuntu", driver="host", nvswitch=True, nvlink5=True, model="B200-SXM6-180GB")
    assert "nvlsm" in out["packages"] and any(p.startswith("nvidia-fabricmanager-580=") for p in out["packages"])
    assert out["kernel_modules"] == ["ib_umad"] and "nvidia-fabricmanager" in out["services"]
    hopper = stack("ubuntu", driver="host", nvswitch=True)
    assert "nvlsm" not in hopper["packages"] and hopper["kernel_modules"] == []
    operator = stack("ubuntu", nvswitch=True, nvlink5=True, model="B200")  # the operator's driver container runs them
    assert "nvlsm" not in operator["packages"] and operator["kernel_modules"] == []
