# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's components, in start order, and the status table."""
from __future__ import annotations

import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from gpucloud_lab.core import config
from gpucloud_lab.core.util import daemon_pid, lab_units, remove_lab_cgroup, run, say, start_daemon, stop_unit, wait_for
from gpucloud_lab.infra import boottarget, charts, hosts, kube, kubeadm_init, net, node_packages, redfish, rootfs, tools
from gpucloud_lab.sim import nvue_switch_sim as switches


@dataclass(frozen=True)
class Row:
    component: str
    state: str
    address: str
    detail: str = ""


class Component(Protocol):
    def up(self) -> None: ...

    def down(self) -> None: ...

    def rows(self) -> list[Row]: ...


class Network:
    def up(self) -> None:
        say("lab network: namespace, bridge, controller veth")
        net.ensure_lab_network()

    def down(self) -> None:
        net.remove_lab_network()

    def rows(self) -> list[Row]:
        state = "up" if net.netns_exists(config.LAB_NETNS) and net.link_exists(config.ROOT_VETH) else "down"
        return [Row("network", state, f"{config.SUBNET_PREFIX}.0/{config.PREFIX_LEN}",
                    f"bridge {config.BRIDGE} in netns {config.LAB_NETNS}; controller {config.CONTROLLER_IP}")]


class Hosts:
    def up(self) -> None:
        base = rootfs.ensure_base()
        hosts.ensure_ssh_key()
        say(f"lab hosts: booting {', '.join(h.name for h in config.HOSTS)}")
        for host in config.HOSTS:
            hosts.start(host, base)
        for host in config.HOSTS:
            wait_for(lambda h=host: hosts.ssh_ready(h), f"sshd on {host.name}", timeout=60)
        say("lab hosts: sshd answers on all hosts")

    def down(self) -> None:
        for host in config.HOSTS:
            hosts.stop(host)

    def rows(self) -> list[Row]:
        rows = []
        for host in config.HOSTS:
            running = hosts.is_running(host)
            state = "running" if running and hosts.ssh_ready(host) else ("booting" if running else "stopped")
            rows.append(Row(f"host {host.name}", state, f"{host.ip}:22", f"{host.role}, mac {host.mac}"))
        return rows


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


class Redfish:
    """BMC stand-ins: sushy-tools' Redfish emulator, one system per GPU node."""

    def up(self) -> None:
        say("Redfish BMC emulators: " + ", ".join(config.bmc_address(h) for h in config.GPU_NODES))
        redfish.up()

    def down(self) -> None:
        redfish.down()

    def rows(self) -> list[Row]:
        return [Row(f"bmc {h.name}", redfish.state(h), f"https://{config.bmc_address(h)}",
                    f"sushy-tools fake driver, system {h.name}, user {redfish.USERNAME}")
                for h in config.GPU_NODES]


class Switches:
    """SIMULATION of the fleet's NVUE switches: the NVUE REST API on each one's mgmt_ip (sim/nvue_switch_sim.py)."""

    def up(self) -> None:
        switches.up()

    def down(self) -> None:
        switches.down()

    def rows(self) -> list[Row]:
        rows = []
        for switch in switches.nvue_switches():
            tenants = switches.applied_tenants(switch)
            rows.append(Row(f"switch {switch.name}", switches.state(switch), switch.url,
                            f"NVUE API SIMULATION, {len(tenants)} tenants applied"
                            + (f" ({', '.join(tenants)})" if tenants else "")
                            + f"; netns {switch.host.netns}, log {config.LOG_DIR / (switch.unit + '.log')}"))
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


class NodePackages:
    """kubeadm (real) and the SIMULATED kubelet on the GPU nodes, as a site's node image carries them."""

    def up(self) -> None:
        say("GPU nodes: kubeadm " + config.KUBERNETES_VERSION + " and the simulated kubelet (kubelet.service)")
        node_packages.up()

    def down(self) -> None:
        """They live in the host overlays, which `down` removes."""

    def rows(self) -> list[Row]:
        missing = [h.name for h in config.GPU_NODES if not node_packages.installed(h)]
        return [Row("kubeadm, kubelet", "missing" if missing else "ready", "/usr/bin on "
                    + ",".join(h.name for h in config.GPU_NODES),
                    f"kubeadm {config.KUBERNETES_VERSION} (real), kubelet SIMULATION (TLS bootstrap, no pods)")]


class ChartRepo:
    """The air-gapped site's Helm repository, serving the lab's stand-in charts."""

    def up(self) -> None:
        say(f"chart repository: stand-in charts at {charts.URL}")
        charts.up()

    def down(self) -> None:
        charts.down()

    def rows(self) -> list[Row]:
        names = ", ".join(c.name for c in charts.chart_dirs())
        return [Row("chart repo", charts.state(), charts.URL, f"lab stand-ins: {names}")]


class LabController:
    """The simulation of what needs GPUs or running pods (see sim/controller.py)."""

    unit = "lab-controller"

    def up(self) -> None:
        if not daemon_pid(self.unit):
            say("lab controller (simulates GPU Operator, kubelet, vCluster control-plane pods)")
            start_daemon(self.unit, [sys.executable, "-m", "gpucloud_lab.sim.controller"],
                         env={"PYTHONPATH": str(config.LAB_DIR)})

    def down(self) -> None:
        stop_unit(self.unit)
        for unit in stop_order(u for u in lab_units() if "-vc-" in u):  # the tenant control planes it started
            stop_unit(unit)

    def rows(self) -> list[Row]:
        state = "running" if daemon_pid(self.unit) else "stopped"
        return [Row("lab controller", state, "-", f"SIMULATION; log {config.LOG_DIR / (self.unit + '.log')}")]


class BootTarget:
    """The QEMU network-boot target: off after `up`; tests and users power it on."""

    def up(self) -> None:
        boottarget.ensure_ra()

    def down(self) -> None:
        boottarget.power_off()
        boottarget.stop_ra()

    def rows(self) -> list[Row]:
        ra = "running" if daemon_pid(boottarget.RA_UNIT) else "stopped"
        return [Row("boot target", boottarget.state(), f"tap {config.BOOT_TARGET_TAP}",
                    f"qemu TCG, mac {config.BOOT_TARGET_MAC}, PXE via the segment's DHCP; "
                    f"`gpucloud-lab boot-target on`"),
                Row("pxe ipv6 RA", ra, config.BRIDGE, "lifetime-0 RA: iPXE reaches DHCP in ~5 s")]


ALL: list[Component] = [Network(), Hosts(), Redfish(), Switches(), Kubernetes(), NodePackages(), ChartRepo(),
                        LabController(), BootTarget()]


def stop_order(units: Iterable[str]) -> list[str]:
    """API servers before their etcd (an API server whose etcd is gone takes long to stop)."""
    return sorted(units, key=lambda unit: unit.startswith("etcd-"))


def status_table() -> str:
    rows = [row for component in ALL for row in component.rows()]
    header = Row("COMPONENT", "STATE", "ADDRESS", "DETAIL")
    widths = [max(len(getattr(r, f)) for r in [header, *rows]) for f in ("component", "state", "address")]
    lines = []
    for r in [header, *rows]:
        cells = (f"{r.component:<{widths[0]}}", f"{r.state:<{widths[1]}}", f"{r.address:<{widths[2]}}", r.detail)
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def all_running() -> bool:
    return all(row.state in ("up", "running", "ready", "on", "off") for c in ALL for row in c.rows())


def cleanup() -> None:
    """What `down` leaves after the components: nothing but caches, keys and the CA."""
    for unit in stop_order(lab_units()):  # anything still running, e.g. a crashed controller's tenants
        stop_unit(unit)
    remove_lab_cgroup()
    for path in (config.RUN_DIR, config.STATE_DIR / "hosts", config.STATE_DIR / "kube",
                 config.STATE_DIR / "controller", switches.STATE):
        shutil.rmtree(path, ignore_errors=True)
    Path(config.STATE_DIR).mkdir(parents=True, exist_ok=True)
