# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What `kubeadm init` leaves in a cluster for nodes to join it, written into the lab's host cluster at `up`.

The lab plays "this cluster was built by kubeadm": the objects, names and
subjects are those of kubeadm 1.20 (cmd/kubeadm/app/phases/bootstraptoken/
clusterinfo/clusterinfo.go, .../bootstraptoken/node/tlsbootstrap.go,
phases/uploadconfig/uploadconfig.go, phases/kubelet/config.go), so a real
`kubeadm join` finds what it looks for: the signed `cluster-info`, the
bootstrap-token RBAC, `kubeadm-config` and the kubelet's base config.
"""
from __future__ import annotations

import base64
import json
from typing import Any

from gpucloud_lab.core import config
from gpucloud_lab.infra import pki

JSON = dict[str, Any]
BOOTSTRAPPERS = "system:bootstrappers:kubeadm:default-node-token"
NODES = "system:nodes"
RBAC = "rbac.authorization.k8s.io"
MINOR = ".".join(config.KUBERNETES_VERSION.split(".")[:2])


def _group(name: str) -> JSON:
    return {"kind": "Group", "apiGroup": RBAC, "name": name}


def _cluster_role_binding(name: str, role: str, *subjects: JSON) -> JSON:
    return {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role}, "subjects": list(subjects)}


def _config_map_reader(namespace: str, name: str, config_map: str, *subjects: JSON) -> list[JSON]:
    """A Role that may `get` one ConfigMap, and its RoleBinding of the same name."""
    meta = {"name": name, "namespace": namespace}
    return [
        {"apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": meta,
         "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"],
                    "resourceNames": [config_map]}]},
        {"apiVersion": f"{RBAC}/v1", "kind": "RoleBinding", "metadata": meta,
         "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": name}, "subjects": list(subjects)},
    ]


def cluster_info_kubeconfig(server: str) -> str:
    """kube-public/cluster-info's kubeconfig: the cluster (server + CA) of admin.conf under the name ""."""
    ca = base64.b64encode(pki.CA_CERT.read_bytes()).decode()
    return ("apiVersion: v1\nclusters:\n- cluster:\n"
            f"    certificate-authority-data: {ca}\n    server: {server}\n  name: \"\"\n"
            "contexts: null\ncurrent-context: \"\"\nkind: Config\npreferences: {}\nusers: null\n")


def cluster_configuration(endpoint: str) -> str:
    return "\n".join([
        "apiServer:", "  timeoutForControlPlane: 4m0s",
        "apiVersion: kubeadm.k8s.io/v1beta2",
        "certificatesDir: /etc/kubernetes/pki",
        "clusterName: kubernetes",
        f"controlPlaneEndpoint: {endpoint}",
        "controllerManager: {}",
        "dns:", "  type: CoreDNS",
        "etcd:", "  local:", "    dataDir: /var/lib/etcd",
        "imageRepository: k8s.gcr.io",
        "kind: ClusterConfiguration",
        f"kubernetesVersion: v{config.KUBERNETES_VERSION}",
        "networking:", "  dnsDomain: cluster.local", "  serviceSubnet: 10.96.0.0/12",
        "scheduler: {}", "",
    ])


def cluster_status(node: str, ip: str, port: int) -> str:
    return (f"apiEndpoints:\n  {node}:\n    advertiseAddress: {ip}\n    bindPort: {port}\n"
            "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterStatus\n")


def kubelet_configuration() -> str:
    """kubeadm's base KubeletConfiguration (the fields `kubeadm init` sets by default)."""
    return "\n".join([
        "apiVersion: kubelet.config.k8s.io/v1beta1",
        "authentication:", "  anonymous:", "    enabled: false", "  webhook:", "    enabled: true",
        "  x509:", "    clientCAFile: /etc/kubernetes/pki/ca.crt",
        "authorization:", "  mode: Webhook",
        "cgroupDriver: systemd",
        "clusterDNS:", "- 10.96.0.10",
        "clusterDomain: cluster.local",
        "healthzBindAddress: 127.0.0.1", "healthzPort: 10248",
        "kind: KubeletConfiguration",
        "rotateCertificates: true",
        "staticPodPath: /etc/kubernetes/manifests", "",
    ])


def objects(server: str, endpoint: str, node: str, ip: str, port: int) -> list[JSON]:
    """Everything, in an order `kubectl apply` can take in one call."""
    return [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cluster-info", "namespace": "kube-public"},
         "data": {"kubeconfig": cluster_info_kubeconfig(server)}},
        *_config_map_reader("kube-public", "kubeadm:bootstrap-signer-clusterinfo", "cluster-info",
                            {"kind": "User", "apiGroup": RBAC, "name": "system:anonymous"}),
        _cluster_role_binding("kubeadm:kubelet-bootstrap", "system:node-bootstrapper", _group(BOOTSTRAPPERS)),
        {"apiVersion": f"{RBAC}/v1", "kind": "ClusterRole", "metadata": {"name": "kubeadm:get-nodes"},
         "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]},
        _cluster_role_binding("kubeadm:get-nodes", "kubeadm:get-nodes", _group(BOOTSTRAPPERS)),
        _cluster_role_binding("kubeadm:node-autoapprove-bootstrap",
                              "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
                              _group(BOOTSTRAPPERS)),
        _cluster_role_binding("kubeadm:node-autoapprove-certificate-rotation",
                              "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", _group(NODES)),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kubeadm-config", "namespace": "kube-system"},
         "data": {"ClusterConfiguration": cluster_configuration(endpoint),
                  "ClusterStatus": cluster_status(node, ip, port)}},
        *_config_map_reader("kube-system", "kubeadm:nodes-kubeadm-config", "kubeadm-config",
                            _group(BOOTSTRAPPERS), _group(NODES)),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"kubelet-config-{MINOR}",
                                                               "namespace": "kube-system"},
         "data": {"kubelet": kubelet_configuration()}},
        *_config_map_reader("kube-system", f"kubeadm:kubelet-config-{MINOR}", f"kubelet-config-{MINOR}",
                            _group(NODES), _group(BOOTSTRAPPERS)),
    ]


def manifest(server: str, endpoint: str, node: str, ip: str, port: int) -> str:
    """A v1 List (JSON) for `kubectl apply -f -`."""
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects(server, endpoint, node, ip, port)})
