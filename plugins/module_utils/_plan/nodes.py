# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What role ``gpu_host`` installs on a node (``nodes/<node>.yaml`` of the plan).

The inputs are the role's own values: its settings (``gpu_host_*``: its defaults, or the node's
inventory) and the vars file of the node's OS (``vars/<distribution>.yml``, ``<os_family>.yml``
or ``default.yml``, the role's ``first_found``), both templated for the node by the action
``plan_node_stack``. ``node_stack`` makes the role's decisions on them (``tasks/facts.yml``,
``packages.yml``, ``containerd.yml``, ``kubernetes_packages.yml``): NVIDIA packages only on a supported OS with
GPUs, the host driver, toolkit (and fabric manager on NVSwitch systems) only with ``gpu.driver: host``; the
Kubernetes node packages at their pinned version, their repository and the kubelet on every node.
The fleet gives the OS; the running kernel is known on the node only.
"""

from __future__ import annotations

from typing import Any

from ansible.module_utils.parsing.convert_bool import boolean

from .errors import PlanError

# The fleet's OS family -> (ansible_distribution, ansible_os_family) the node reports.
DISTRIBUTIONS = {"ubuntu": ("Ubuntu", "Debian"), "debian": ("Debian", "Debian"), "rocky": ("Rocky", "RedHat"),
                 "rhel": ("RedHat", "RedHat")}
RUNNING_KERNEL = "<running kernel>"
ROLE_PREFIX = "gpu_host_"


def node_facts(os_profile: dict) -> dict[str, str]:
    """The facts role gpu_host reads, as a node of this OS profile reports them (the kernel aside)."""
    family = os_profile.get("family")
    if family not in DISTRIBUTIONS:
        raise PlanError("os_profile %s: family %r is not one of %s"
                        % (os_profile.get("name"), family, ", ".join(DISTRIBUTIONS)))
    distribution, os_family = DISTRIBUTIONS[family]
    version = str(os_profile.get("version") or "")
    major = version.split(".", maxsplit=1)[0]
    return {"ansible_distribution": distribution, "ansible_os_family": os_family,
            "ansible_distribution_version": version, "ansible_distribution_major_version": major,
            "ansible_kernel": RUNNING_KERNEL}


def vars_files(facts: dict[str, str]) -> list[str]:
    """The role's vars files for these facts, in its ``first_found`` order."""
    return ["%s.yml" % facts["ansible_distribution"], "%s.yml" % facts["ansible_os_family"], "default.yml"]


def node_stack(name: str, node: dict, facts: dict[str, str], settings: dict[str, Any], family: dict[str, Any]) -> dict:
    """The node stack of one node: ``settings`` are the role's ``gpu_host_*``, ``family`` its vars file's values."""
    s = settings
    count = int(s["gpu_host_gpu_count"])
    mode = s["gpu_host_driver_mode"]
    nvswitch = boolean(s["gpu_host_nvswitch"])
    supported = facts["ansible_distribution"] in s["gpu_host_supported_distributions"] and boolean(
        family["gpu_host__supported_family"])
    install = supported and count > 0
    host_stack = install and mode == "host"
    packages = list(family["gpu_host__header_packages"]) if install and boolean(s["gpu_host_kernel_headers"]) else []
    nvlink5 = nvswitch and boolean(s.get("gpu_host_nvlink5", False))
    dnf = family["gpu_host__pkg_family"] == "dnf"
    stream = str(family.get("gpu_host__driver_module_stream") or "").strip() if host_stack and dnf else ""
    if host_stack:
        packages += [s["gpu_host_epel_package"]] if dnf and boolean(s["gpu_host_epel"]) else []
        packages += family["gpu_host__driver_packages"] + family["gpu_host__toolkit_packages"]
        packages += family["gpu_host__fabricmanager_packages"] if nvswitch else []
        packages += family["gpu_host__nvlsm_packages"] if nvlink5 else []
    containerd = boolean(s["gpu_host_containerd"])
    docker = containerd and s.get("gpu_host_containerd_source") == "docker"
    if containerd:  # vars/main.yml's gpu_host__containerd_pkg: Docker's, or the distribution's
        packages.append("containerd.io" if docker else family["gpu_host__containerd_package"])
    # tasks/main.yml includes kubernetes_node.yml only for a Kubernetes node, which installs the packages only when
    # asked to (gpu_host_kubernetes_install)
    kubernetes = boolean(s.get("gpu_host_kubernetes_node", True)) and boolean(
        s.get("gpu_host_kubernetes_install", False))
    if kubernetes:  # tasks/kubernetes_packages.yml: pinned, apt name=version / dnf name-version
        kube_dnf = facts["ansible_os_family"] == "RedHat"
        version = "%s-%s" % (s["gpu_host_kubernetes_version"], s["gpu_host_kubernetes_package_revision"])
        packages += list(s["gpu_host_kubernetes_host_packages"])  # what kubeadm's preflight checks, from the distro
        packages += [("%s-%s" if kube_dnf else "%s=%s") % (name, version) for name in s["gpu_host_kubernetes_packages"]]
    return {
        "node": name,
        "os": {"profile": node["os_profile"].get("name"), "distribution": facts["ansible_distribution"],
               "version": facts["ansible_distribution_version"]},
        "gpu": {"model": node["gpu"].get("model"), "count": count, "driver": mode, "nvswitch": nvswitch,
                "nvlink5": nvlink5, "kernel_modules": s["gpu_host_driver_kernel_modules"]},
        "package_manager": family["gpu_host__pkg_family"],
        "repositories": (_repositories(s, family["gpu_host__pkg_family"]) if host_stack else [])
        # tasks/containerd.yml adds Docker's repository for Docker's containerd where the role manages repositories
        + ([{"name": "docker", "url": s["gpu_host_docker_repo_url"],
             "key_fingerprint": str(s["gpu_host_docker_key_fingerprint"]).replace(" ", "").upper()}]
           if docker and boolean(s["gpu_host_manage_repos"]) else [])
        + ([{"name": "kubernetes", "url": s["gpu_host_kubernetes_repo_url"],
             "key_fingerprint": s["gpu_host_kubernetes_key_fingerprint"]}] if kubernetes else []),
        "module_streams": [stream] if stream else [],
        "packages": packages,
        "kernel_modules": ["ib_umad"] if host_stack and nvlink5 else [],
        "pip": ["nvidia-ml-py==%s" % s["gpu_host_nvml_python_version"]]
        if install and boolean(s["gpu_host_nvml_python"]) else [],
        "services": ((["nvidia-persistenced"] + (["nvidia-fabricmanager"] if nvswitch else [])) if host_stack else [])
        + (["kubelet"] if kubernetes and "kubelet" in s["gpu_host_kubernetes_packages"] else []),
        "skipped": _skipped(facts, supported, count, mode),
    }


def _repositories(s: dict[str, Any], pkg_family: str) -> list[dict]:
    if not boolean(s["gpu_host_manage_repos"]) or pkg_family not in ("apt", "dnf"):
        return []
    kind = "apt" if pkg_family == "apt" else "yum"
    return [{"name": "nvidia-cuda", "url": s["gpu_host_%s_cuda_repo_url" % kind],
             "key_fingerprint": s["gpu_host_%s_cuda_key_fingerprint" % kind]},
            {"name": "nvidia-container-toolkit", "url": s["gpu_host_%s_toolkit_repo_url" % kind],
             "key_fingerprint": s["gpu_host_%s_toolkit_key_fingerprint" % kind]}]


def _skipped(facts: dict[str, str], supported: bool, count: int, mode: str) -> list[str]:
    out = []
    if not supported:
        out.append("NVIDIA packages: %s is not a supported OS for them" % facts["ansible_distribution"])
    if count == 0:
        out.append("everything NVIDIA: the fleet gives this node no GPU")
    elif mode == "operator":
        out.append("host driver and container toolkit: the GPU Operator brings them (gpu.driver operator)")
    return out
