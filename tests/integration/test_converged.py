# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab after the whole rollout, converged once per session (conftest's ``converged``: site.yml, then the
rollout again as AWX's stage jobs).

These tests only read what site.yml left, so they share one converge and run first. Together they
check what each role's own verification used to check after a converge of its own (Molecule
scenarios that repeated the stage tests): the boot server answers, installed nodes were left
alone, the leaves carry the tenants, the GPU hosts, the GPU Operator, the queue tree and the
tenants' control planes are as the fleet says, and validate.yml agrees across every layer.
"""
from __future__ import annotations

import base64
import json
import os
import re
import ssl
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import yaml

from tests.integration.conftest import Converged
from tests.integration.lab import Lab, config, hostvars, kubectl, on, secrets

# isort: split
from gpucloud_lab.infra import pkg_mirror  # tests.integration.lab puts lab/ on the path

REPO = Path(__file__).resolve().parents[2]
PXE = config.PXE_SERVER.name
GPU_NODES = [h.name for h in config.GPU_NODES]


def _nvue_applied(switch: str) -> dict:
    # The inventory's password is vaulted; it is the simulation's own (lab/gpucloud_lab/core/secrets.py).
    switch_vars = hostvars()[switch]
    user = switch_vars["switch_fabric_nvue_username"]
    auth = base64.b64encode(f"{user}:{secrets.LAB_PASSWORD}".encode()).decode()
    request = urllib.request.Request(f"{config.switch(switch).nvue_url}/nvue_v1/?rev=applied",
                                     headers={"Authorization": f"Basic {auth}"})
    context = ssl.create_default_context(cafile=switch_vars["switch_fabric_nvue_ca_path"])
    with urllib.request.urlopen(request, timeout=5, context=context) as response:
        return dict(json.load(response))


def _tenant_vlans(applied: dict) -> dict[str, set[str]]:
    vlans = applied.get("bridge", {}).get("domain", {}).get("br_default", {}).get("vlan", {})
    return {vlan: set(body.get("vni", {})) for vlan, body in vlans.items()}


def _fleet_tenants() -> list[dict]:
    """The tenants as the inventory derives them (queue, namespace...), from the lab fleet."""
    return list(hostvars()["localhost"]["gpucloud_tenants"])


def test_site_converges_the_lab_then_changes_nothing(converged: Converged, lab: Lab) -> None:
    first = converged.first
    assert "Apply an NVUE revision" in first.changed_tasks("leaf1")
    assert "Apply an NVUE revision" not in first.changed_tasks("leaf2")  # SONiC: rendered, not pushed
    assert (config.STATE_DIR / "fabric" / "leaf2.sonic.json").exists()
    assert not converged.changed(), converged.changed()  # the rollout again, as AWX's stage jobs
    applied = _nvue_applied("leaf1")
    tenants = _fleet_tenants()
    assert _tenant_vlans(applied) == {str(t["vlan"]): {str(t["vni"])} for t in tenants}
    for t in tenants:
        vrf = t["vrf"]  # the inventory's tenant: vrf is its name, l3vni beside it
        assert str(t["vni"]) in applied["evpn"]["vni"]
        assert applied["interface"][f"vlan{t['vlan']}"]["ip"]["vrf"] == vrf
        assert applied["interface"][f"vlan{t['vlan']}"]["description"] == f"gpucloud:{t['name']}"
        assert str(t["l3vni"]) in applied["vrf"][vrf]["evpn"]["vni"]
    # What the simulation persisted (and `status` reports) is what its API answers.
    assert json.loads((config.SWITCH_STATE_DIR / "leaf1.json").read_text())["applied"] == applied
    status = subprocess.run([str(lab.repo / "lab" / "gpucloud-lab"), "status"], capture_output=True, text=True,
                            check=False).stdout
    leaf1 = config.switch("leaf1")
    pattern = rf"switch leaf1 +running +{re.escape(leaf1.nvue_url)} +NVUE API SIMULATION, {len(tenants)} tenants"
    assert re.search(pattern, status), status


def test_the_boot_server_answers_and_installed_nodes_were_left_alone(converged: Converged) -> None:
    conf = "/etc/dnsmasq.d/gpucloud-pxe.conf"
    on(PXE, f"dnsmasq --test --conf-file={conf}")
    http_port = config.fleet()["site"]["management"].get("http_port", 8080)
    # nginx listens on the boot server's management address only, not on every address of the host.
    listening = on(PXE, f"ss -Hltn 'sport = :{http_port}'").stdout.split()
    assert f"{config.PXE_SERVER.ip}:{http_port}" in listening and f"0.0.0.0:{http_port}" not in listening, listening
    # dnsmasq's TFTP too (pxe_server_dhcp_listen: listen-address + bind-dynamic); its DHCP socket is always the
    # wildcard one, and dnsmasq answers there only on the interface holding that address.
    tftp = on(PXE, "ss -Hlun 'sport = :69'").stdout.split()
    assert f"{config.PXE_SERVER.ip}:69" in tftp and "0.0.0.0:69" not in tftp and "*:69" not in tftp, tftp
    scripts = {}
    for name in [*GPU_NODES, config.BOOT_TARGET.name]:
        url = f"http://{config.PXE_SERVER.ip}:{http_port}/hosts/{name}.ipxe"
        with urllib.request.urlopen(url, timeout=10) as response:
            scripts[name] = response.read().decode()
        assert scripts[name].startswith("#!ipxe"), name
    # Only a node marked installing gets its installer (the boot target, sent to install at lab up); an installed
    # node that boots from the network gets the script that boots it from its disk.
    assert "kernel --name linux" in scripts[config.BOOT_TARGET.name]
    for name in GPU_NODES:
        assert "booting from its disk" in scripts[name] and "kernel" not in scripts[name], (name, scripts[name])
    # Nodes that answer SSH are installed: no install mark was left for them, and no power action ran. Each is
    # recorded as deployed (adopted: the lab made them), so silent later it is reported, never installed over.
    marks = on(PXE, "ls /var/lib/gpucloud/provision 2>/dev/null; true").stdout.split()
    assert not [m for m in marks if m.split(".")[0] in GPU_NODES and m.endswith(".installing")], marks
    assert sorted(m.split(".")[0] for m in marks if m.endswith(".deployed")) == sorted(GPU_NODES), marks
    for node in GPU_NODES:
        assert "Boot once from the network and power-cycle the node" not in converged.first.changed_tasks(node)


def test_gpu_hosts_blacklist_nouveau_and_run_containerd_as_kubelet_expects(converged: Converged) -> None:
    for node in GPU_NODES:
        assert "blacklist nouveau" in on(node, "cat /etc/modprobe.d/gpucloud-blacklist-nouveau.conf").stdout
        toml = on(node, "cat /etc/containerd/config.toml").stdout
        assert "SystemdCgroup = true" in toml and "/etc/containerd/conf.d/*.toml" in toml, node
        assert on(node, "systemctl is-active containerd").stdout.strip() == "active", node


def test_gpu_hosts_install_kubeadm_and_the_kubelet_from_the_sites_mirror_held(converged: Converged) -> None:
    """The lab's hosts start without kubeadm, kubectl or a kubelet (their base image has none); gpu_host installed
    them from the lab's signed mirror of pkgs.k8s.io, at the pinned version, held, and the kubelet unit is enabled."""
    mounts = Path("/proc/mounts").read_text()
    lower = re.search(r"^gcl-gpu1 \S+ overlay \S*lowerdir=([^,]+)", mounts, re.M)
    assert lower, "gpu1's overlay"
    assert not [p for p in ("usr/bin/kubeadm", "usr/bin/kubelet", "usr/bin/kubectl")
                if (Path(lower.group(1)) / p).exists()]
    for node in GPU_NODES:
        versions = on(node, "dpkg-query -W -f '${Package} ${Version} ${Status}\\n' kubeadm kubectl kubelet").stdout
        assert versions.splitlines() == ["kubeadm 1.20.2-1.1 hold ok installed", "kubectl 1.20.2-1.1 hold ok installed",
                                         "kubelet 1.20.2-1.1 hold ok installed"], (node, versions)
        assert on(node, "kubectl version --client --short").stdout.strip() == "Client Version: v1.20.2", node
        policy = on(node, "apt-cache policy kubeadm").stdout
        assert pkg_mirror.URL.rstrip("/") in policy, (node, policy)
        assert on(node, "systemctl is-enabled kubelet").stdout.strip() == "enabled", node
        assert "Signed-By: /etc/apt/keyrings/kubernetes-apt-keyring.asc" in on(
            node, "cat /etc/apt/sources.list.d/kubernetes.sources").stdout


def test_gpu_hosts_prepare_the_kernel_as_kubeadms_preflight_checks_it(converged: Converged) -> None:
    """Forwarding and bridged traffic through iptables on, now and at boot; overlay and br_netfilter at boot;
    swap units masked. The lab's inventory skips no preflight check for these (ip_forward was skipped before)."""
    skipped = yaml.safe_load((REPO / "inventories/lab/group_vars/gpu_nodes.yml").read_text())
    assert not [c for c in skipped["node_join_ignore_preflight_errors"] if "proc-sys-net" in c], skipped
    for node in GPU_NODES:
        now = on(node, "sysctl -n net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables "
                       "net.bridge.bridge-nf-call-ip6tables").stdout.split()
        assert now == ["1", "1", "1"], (node, now)
        assert "net.ipv4.ip_forward = 1" in on(node, "cat /etc/sysctl.d/90-gpucloud-kubernetes.conf").stdout
        assert on(node, "cat /etc/modules-load.d/gpucloud-kubernetes.conf").stdout.split("\n")[-3:-1] == [
            "overlay", "br_netfilter"], node
        assert on(node, "systemctl is-enabled swap.target", check=False).stdout.strip() == "masked", node


def test_containerd_pulls_the_sandbox_and_test_images_from_the_sites_registry_only(converged: Converged) -> None:
    """containerd's own view of the config (``containerd config dump``) has the CNI plugins in /opt/cni/bin, the
    registry host folder and the fleet's sandbox image; and containerd's own resolver (``ctr ... --hosts-dir``, the
    code the CRI plugin uses for config_path) reads the hosts.toml the role wrote. The lab's site registry (Debian's
    docker-registry, lab/gpucloud_lab/infra/registry.py) serves the pause image the lab built from the Kubernetes
    source and its test image: both pull, by the registry's digest, from that registry (its access log names the
    node); an image the site does not mirror fails there, and with gpu_host_registry_fallback false nothing asks
    registry-1.docker.io."""
    pushed = json.loads(Path("/var/lib/gpucloud-lab/registry/images.json").read_text())
    node_vars = hostvars()[GPU_NODES[0]]
    sandbox = node_vars["gpu_host_sandbox_image"]
    assert sandbox in pushed, (sandbox, sorted(pushed))  # the inventory's pause tag is the one the lab built
    hello = next(ref for ref in pushed if ref.startswith("docker.io/"))
    registry = node_vars["gpu_host_registry_mirrors"]["docker.io"][0]
    assert node_vars["gpu_host_registry_mirrors"]["registry.k8s.io"] == [registry]
    log = Path("/var/lib/gpucloud-lab/log/site-registry.log")
    for node in GPU_NODES:
        address = hostvars()[node]["ansible_host"]
        dump = on(node, "containerd config dump").stdout
        assert re.search(r'bin_dir = "/opt/cni/bin"', dump), node
        assert re.search(r'config_path = "/etc/containerd/certs.d"', dump), node
        assert f'sandbox_image = "{sandbox}"' in dump, node
        on(node, "ctr -n gpucloud-mirror-test images rm --sync %s %s" % (sandbox, hello), check=False)
        seen = log.stat().st_size
        for ref in (sandbox, hello):
            on(node, f"ctr -n gpucloud-mirror-test images pull --hosts-dir /etc/containerd/certs.d {ref}",
               timeout=60)
        listed = on(node, "ctr -n gpucloud-mirror-test images ls").stdout
        for ref in (sandbox, hello):
            line = next((row.split() for row in listed.splitlines() if row.startswith(ref + " ")), None)
            assert line and pushed[ref] in line, (node, ref, listed)
        asked = log.read_text()[seen:]
        repository = sandbox.split("/", 1)[1].split(":")[0]
        assert re.search(rf"{re.escape(address)}\S* .*\"GET /v2/{repository}/manifests/", asked), (node, asked[-2000:])
        missing = on(node, "ctr -n gpucloud-mirror-test images pull --hosts-dir /etc/containerd/certs.d "
                           "docker.io/library/busybox:1.36", check=False, timeout=60)
        assert missing.returncode != 0, node
        assert "/v2/library/busybox/manifests/1.36" in log.read_text()[seen:], node
        assert "registry-1.docker.io" not in missing.stderr, (node, missing.stderr)
        on(node, "ctr -n gpucloud-mirror-test images rm --sync %s %s" % (sandbox, hello), check=False)


def test_gpu_operator_policy_is_ready_with_the_fleets_values(converged: Converged) -> None:
    policy = json.loads(kubectl("get", "clusterpolicy", "cluster-policy", "-o", "json").stdout)
    spec = policy["spec"]
    assert policy["status"]["state"] == "ready"
    assert spec["driver"]["enabled"] and spec["toolkit"]["enabled"] and spec["cdi"]["enabled"]
    assert spec["mig"]["strategy"] == "single" and not spec["dcgmExporter"]["serviceMonitor"]["enabled"]
    # The collection's DCGM counter profile: the chart made the ConfigMap (key dcgm-metrics.csv) that the operator
    # mounts as the exporter's collectors file, and the ClusterPolicy (the real CRD's schema) names it.
    assert spec["dcgmExporter"]["config"] == {"name": "gpucloud-dcgm-metrics-v1"}
    metrics = json.loads(kubectl("get", "configmap", "gpucloud-dcgm-metrics-v1", "-n", "gpu-operator", "-o",
                                 "json").stdout)["data"]
    profile = REPO / "roles" / "gpu_operator" / "files" / "dcgm-metrics-gpucloud-v1.csv"
    assert metrics == {"dcgm-metrics.csv": profile.read_text()}


def test_queue_tree_has_a_leaf_per_shared_tenant_with_its_quota(converged: Converged) -> None:
    items = json.loads(kubectl("get", "queues.scheduling.run.ai", "-l", "gpucloud.baremetal/queue-tree=gpucloud",
                               "-o", "json").stdout)["items"]
    leaves = {q["metadata"]["name"]: q["spec"] for q in items if q["spec"].get("parentQueue")}
    assert [q["metadata"]["name"] for q in items if not q["spec"].get("parentQueue")] == ["gpucloud"]
    shared = [t for t in _fleet_tenants() if t["isolation"] == "shared"]
    assert sorted(leaves) == sorted(t["queue"] for t in shared), leaves
    assert {name: spec["resources"]["gpu"]["quota"] for name, spec in leaves.items()} == {
        t["queue"]: t["gpu"]["quota"] for t in shared}


def test_a_shared_tenants_kubeconfig_is_private_and_reaches_its_own_api(converged: Converged) -> None:
    folder = Path(os.environ.get("HOME", "/root")) / ".kube" / "gpucloud" / config.fleet()["site"]["name"]
    for tenant in [t for t in _fleet_tenants() if t["isolation"] == "shared"]:
        path = folder / f"{tenant['name']}.kubeconfig"
        assert path.stat().st_mode & 0o777 == 0o600, path
        namespaces = kubectl("get", "namespaces", "-o", "name", kubeconfig=path).stdout.split()
        assert "namespace/default" in namespaces and f"namespace/{tenant['namespace']}" not in namespaces, path


def test_validate_is_green_across_every_layer(converged: Converged, lab: Lab) -> None:
    validate = lab.playbook("playbooks/validate.yml")
    assert validate.rc == 0, validate.failures()
    rows = validate.results("Compare fleet, NVML, the clusters and the KAI quotas")["localhost"]
    counts = {n["name"]: n["gpu"]["count"] for n in config.fleet()["nodes"] if n["name"] in GPU_NODES}
    assert rows["ok"] and {r["node"]: r["nvml"] for r in rows["nodes"]} == counts
    # A private node is checked in its tenant's own cluster (kubeconfig exported by the tenants stage).
    tenant_of = {n["name"]: n.get("tenant") for n in config.fleet()["nodes"]}
    assert {r["node"]: (r["cluster"], r["allocatable"]) for r in rows["nodes"]} == {
        n: (f"tenant {tenant_of[n]}" if tenant_of[n] else "host", counts[n]) for n in GPU_NODES}
    check = lab.playbook("playbooks/validate.yml", check=True)
    assert check.rc == 0, check.failures()
