# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a site's node image carries for a kubeadm join, put on the lab's GPU nodes at `up`.

* `/usr/bin/kubeadm`: the real kubeadm, built from the same Debian source as the
  lab's kube-apiserver (kube.py);
* `/usr/bin/kubelet`: the SIMULATED kubelet (sim/kubelet_sim.py: the real TLS
  bootstrap and registration, no pods), with the systemd unit and drop-in of the
  upstream kubelet/kubeadm packages (release/cmd/kubepkg/templates), enabled as
  the package enables it: it exits until a join gives it its config, and
  systemd restarts it every 10 s.
"""
from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

from gpucloud_lab.core import config
from gpucloud_lab.core.components import Row
from gpucloud_lab.core.util import run, say, write_file
from gpucloud_lab.infra import hosts, kube

SIM_KUBELET = config.LAB_DIR / "gpucloud_lab" / "sim" / "kubelet_sim.py"

KUBELET_SERVICE = """\
[Unit]
Description=kubelet: The Kubernetes Node Agent (gpucloud-lab SIMULATION: TLS bootstrap and registration, no pods)
Documentation=https://kubernetes.io/docs/home/
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=/usr/bin/kubelet
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
"""

KUBEADM_DROPIN = """\
# Note: This dropin only works with kubeadm and kubelet v1.11+
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf \
--kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
# This is a file that "kubeadm init" and "kubeadm join" generates at runtime, populating the KUBELET_KUBEADM_ARGS
# variable dynamically
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
# This is a file that the user can use for overrides of the kubelet args as a last resort. Preferably, the user
# should use the .NodeRegistration.KubeletExtraArgs object in the configuration files instead.
# KUBELET_EXTRA_ARGS should be sourced from this file.
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
"""


def _copy(src: Path, dest: Path) -> bool:
    if dest.exists() and filecmp.cmp(src, dest, shallow=False):
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".gpucloud-lab")
    shutil.copyfile(src, tmp)
    tmp.chmod(0o755)
    tmp.rename(dest)
    return True


def _write(path: Path, content: str, mode: int = 0o644) -> bool:
    if path.exists() and path.read_text() == content:
        return False
    write_file(path, content, mode=mode)
    return True


def install(host: config.Host) -> bool:
    """Into the host's root (running or not); True when something changed."""
    root = hosts.root_dir(host)
    changed = _copy(kube.BIN_DIR / "kubeadm", root / "usr/bin/kubeadm")
    changed |= _write(root / "usr/bin/kubelet", "#!/usr/bin/python3\n" + SIM_KUBELET.read_text(), mode=0o755)
    changed |= _write(root / "lib/systemd/system/kubelet.service", KUBELET_SERVICE)
    changed |= _write(root / "etc/systemd/system/kubelet.service.d/10-kubeadm.conf", KUBEADM_DROPIN)
    wants = root / "etc/systemd/system/multi-user.target.wants/kubelet.service"
    if not wants.is_symlink():
        wants.parent.mkdir(parents=True, exist_ok=True)
        wants.symlink_to("/lib/systemd/system/kubelet.service")
        changed = True
    return changed


def reload_systemd(host: config.Host) -> None:
    run(["ssh", "-i", str(config.SSH_KEY), "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
         "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", f"root@{host.ip}",
         "systemctl daemon-reload && systemctl start kubelet.service"], check=False)


def up() -> None:
    for host in config.GPU_NODES:
        if install(host):
            reload_systemd(host)


def installed(host: config.Host) -> bool:
    root = hosts.root_dir(host)
    return (root / "usr/bin/kubeadm").exists() and (root / "usr/bin/kubelet").exists()


class NodePackages:
    """The lab component: kubeadm (real) and the SIMULATED kubelet on the GPU nodes, as a node image has them."""

    def up(self) -> None:
        say("GPU nodes: kubeadm " + config.KUBERNETES_VERSION + " and the simulated kubelet (kubelet.service)")
        up()

    def down(self) -> None:
        """They live in the host overlays, which `down` removes."""

    def rows(self) -> list[Row]:
        missing = [h.name for h in config.GPU_NODES if not installed(h)]
        return [Row("kubeadm, kubelet", "missing" if missing else "ready", "/usr/bin on "
                    + ",".join(h.name for h in config.GPU_NODES),
                    f"kubeadm {config.KUBERNETES_VERSION} (real), kubelet SIMULATION (TLS bootstrap, no pods)")]
