# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""THE LAB CONTROLLER: the loop that runs the lab's simulations of what needs GPUs or running pods.

It only reacts to what the roles created, the way the real components would, and is never called
by them. Every second it runs, in this order, six simulations (one file each):

* vcluster_sim.py: the vCluster control-plane pod of each tenant release (a real API server each);
* kubelet_standin_sim.py: a kubelet's registration, for a host with a kubelet.conf but no kubelet
  of its own, and the pods bound to a lab host reported Running;
* nvml_sim.py: the fleet's GPUs as a simulated NVML on each lab host with GPUs;
* gpu_operator_sim.py: the NVIDIA GPU Operator (ClusterPolicy status, node labels, GPU capacity)
  in each cluster that has its own ClusterPolicy (the host cluster, a private tenant's control plane);
  dcgm_exporter_sim.py: its DCGM exporter on each GPU node where the ClusterPolicy puts it on the host network;
* kai_scheduler_sim.py: KAI Scheduler's queue admission and binding of kai-scheduler pods, in each
  cluster where KAI is installed.

Run by the lab (`python -m gpucloud_lab.sim.controller`, unit `lab-controller`); its log is
LOG_DIR/lab-controller.log.
"""
from __future__ import annotations

import logging
import signal
import sys
import time
from typing import Any

import yaml

from gpucloud_lab.core import config
from gpucloud_lab.core.components import Row, stop_order
from gpucloud_lab.core.util import daemon_pid, lab_units, say, start_daemon, stop_unit
from gpucloud_lab.infra import kube
from gpucloud_lab.infra.kubeapi import Api, ApiError
from gpucloud_lab.sim.dcgm_exporter_sim import UNIT_PREFIX as EXPORTER_UNITS
from gpucloud_lab.sim.dcgm_exporter_sim import DcgmExporters
from gpucloud_lab.sim.gpu_operator_sim import GpuOperator
from gpucloud_lab.sim.kai_scheduler_sim import KaiScheduler
from gpucloud_lab.sim.kubelet_standin_sim import Kubelet
from gpucloud_lab.sim.nvml_sim import SimulatedGpus
from gpucloud_lab.sim.vcluster_sim import TenantControlPlanes

LOG = logging.getLogger("lab-controller")


class Controller:
    def __init__(self) -> None:
        self.host_api = Api(kube.HOST_CLUSTER.server)
        self.operator = GpuOperator()
        self.kai = KaiScheduler()
        self.gpus = SimulatedGpus()
        self.exporters = DcgmExporters()
        self.tenants = TenantControlPlanes(self.host_api)
        self._apis: dict[str, Api] = {kube.HOST_CLUSTER.server: self.host_api}

    def apis(self) -> dict[str, Api]:
        """The host cluster's API and each running tenant control plane's, clients kept between steps."""
        servers = {kube.HOST_CLUSTER.server} | {s.server for s in self.tenants.servers().values()}
        for server in servers - set(self._apis):
            self._apis[server] = Api(server)
        for server in set(self._apis) - servers:
            del self._apis[server]
        return dict(self._apis)

    def step(self) -> None:
        self.tenants.sync()
        apis = self.apis()
        Kubelet(apis).sync()
        gpus = config.fleet_gpus()
        self.gpus.sync(gpus)
        self.operator.sync(apis, gpus)
        self.exporters.sync(apis)
        self.kai.sync(apis)


class LabController:
    """The lab component that runs this loop as a lab process (unit lab-controller)."""

    unit = "lab-controller"

    def up(self) -> None:
        if not daemon_pid(self.unit):
            say("lab controller (simulates GPU Operator, KAI Scheduler, kubelet, vCluster control-plane pods)")
            start_daemon(self.unit, [sys.executable, "-m", "gpucloud_lab.sim.controller"],
                         env={"PYTHONPATH": str(config.LAB_DIR)})

    def down(self) -> None:
        stop_unit(self.unit)
        # The tenant control planes and DCGM exporters it started.
        for unit in stop_order(u for u in lab_units() if "-vc-" in u or u.startswith(EXPORTER_UNITS)):
            stop_unit(unit)

    def rows(self) -> list[Row]:
        state = "running" if daemon_pid(self.unit) else "stopped"
        return [Row("lab controller", state, "-", f"SIMULATION; log {config.LOG_DIR / (self.unit + '.log')}")]


def _stop(_signum: int, _frame: Any) -> None:
    LOG.info("stopping")
    sys.exit(0)


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stdout)
    signal.signal(signal.SIGTERM, _stop)
    controller = Controller()
    LOG.info("watching %s (fleet %s)", kube.HOST_CLUSTER.server, config.FLEET)
    while True:
        try:
            controller.step()
        except (OSError, ApiError, yaml.YAMLError, TimeoutError) as err:
            LOG.warning("retrying after: %s", err)
        time.sleep(1.0)


if __name__ == "__main__":
    sys.exit(main())
