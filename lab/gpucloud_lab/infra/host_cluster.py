# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host cluster as a lab component: its API (kube.HOST_CLUSTER), the charts' CRDs, kubeadm's join
objects, the private tier's vCluster Platform key, and helm/kubectl on PATH for the playbooks."""
from __future__ import annotations

from pathlib import Path

from gpucloud_lab.core import config, secrets
from gpucloud_lab.core.components import Row
from gpucloud_lab.core.util import run, say
from gpucloud_lab.infra import charts, kube, kubeadm_init, tools


class Kubernetes:
    """The host cluster's API, and helm/kubectl on PATH for the playbooks."""

    def up(self) -> None:
        tools.ensure_tools()
        tools.link_onto_path()
        kube.ensure_binaries()
        say(f"host cluster: etcd + kube-apiserver at {kube.HOST_CLUSTER.server}")
        kube.HOST_CLUSTER.up()
        install_chart_crds()
        install_kubeadm_objects()
        install_platform_key()
        say(f"host cluster: ready; admin kubeconfig {config.KUBECONFIG}")

    def down(self) -> None:
        kube.HOST_CLUSTER.down()
        tools.unlink_from_path()

    def rows(self) -> list[Row]:
        cluster = kube.HOST_CLUSTER
        rows = [Row(part, state, cluster.server if part == "kube-apiserver" else f"{cluster.ip} (netns)",
                    f"host cluster {config.KUBERNETES_VERSION}" + (f", kubeconfig {config.KUBECONFIG}"
                                                                   if part == "kube-apiserver" else ""))
                for part, state in cluster.states().items()]
        rows.append(Row("helm, kubectl", "ready" if tools.linked() else "missing", str(config.BIN_LINK_DIR),
                        config.TOOLS_VERSION))
        return rows


def chart_crds() -> list[Path]:
    """The CRDs of the stand-in charts (Helm's `crds/` folders): the real charts' CRDs, written to the same API."""
    return sorted(crd for chart in charts.chart_dirs() for crd in (chart / "crds").glob("*.yaml"))


def install_chart_crds() -> None:
    """Into the host cluster at `up`, as an operator installs a chart's CRDs ahead of its releases."""
    crds = chart_crds()
    if crds:
        run([str(tools.TOOLS_DIR / "kubectl"), f"--kubeconfig={config.KUBECONFIG}", "apply", "--server-side",
             "--force-conflicts", "--field-manager=gpucloud-lab", *(f"--filename={c}" for c in crds)])


def install_kubeadm_objects() -> None:
    """What `kubeadm init` creates for joins (cluster-info, bootstrap-token RBAC, kubeadm-config): see kubeadm_init."""
    cluster = kube.HOST_CLUSTER
    manifest = kubeadm_init.manifest(cluster.server, f"{cluster.ip}:{cluster.port}", config.CONTROL_PLANE.name,
                                     cluster.ip, cluster.port)
    run([str(tools.TOOLS_DIR / "kubectl"), f"--kubeconfig={config.KUBECONFIG}", "apply", "--server-side",
         "--force-conflicts", "--field-manager=gpucloud-lab", "--filename=-"], input=manifest)


def install_platform_key() -> None:
    """The vCluster Platform access key the private tier names (core/secrets.py), as an operator creates it."""
    run([str(tools.TOOLS_DIR / "kubectl"), f"--kubeconfig={config.KUBECONFIG}", "apply", "--server-side",
         "--force-conflicts", "--field-manager=gpucloud-lab", "--filename=-"], input=secrets.platform_key_manifest())
