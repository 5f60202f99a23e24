# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SIMULATION of NVIDIA's DCGM exporter (dcgm-exporter 4.x, the GPU Operator's `state-dcgm-exporter`) on a lab host.

A lab host has no GPU, no DCGM and no exporter pod. Where the real operator would run the exporter on a GPU node,
this serves its `/metrics` from the host's simulated GPUs, so that a fault injected with `gpucloud-lab fault`
shows up as a series, as it would from the real exporter:

* The lab controller (`DcgmExporters.sync`, part of gpu_operator_sim.py's reconcile) starts one process per GPU
  node of a cluster whose ClusterPolicy enables `dcgmExporter` with `hostNetwork: true`, in the node's own network
  namespace, on the node's address, port 9400 (the exporter's `:9400`); with `hostNetwork` false the real
  exporter listens on a pod address nothing outside the cluster reaches, so the lab serves nothing on the node.
* It collects exactly the fields of the counter file the ClusterPolicy names (`dcgmExporter.config.name`: the
  ConfigMap's `dcgm-metrics.csv`, read as dcgm-exporter reads it: `field, type, help`, `#` comments), or
  dcgm-exporter's default counters without one (the few of them the lab needs, below). `label` fields become a
  label of every series (`DCGM_FI_DEV_SERIAL="..."`), as in dcgm-exporter's `pkg/dcgmexporter`.
* Series and labels as dcgm-exporter writes them (its README's sample and `pkg/dcgmexporter/metrics_format`):
  `# HELP` with the file's help text, `# TYPE`, labels `gpu`, `UUID`, `pci_bus_id`, `device`, `modelName`,
  `Hostname` (the node name: the operator sets NODE_NAME), and `container`, `namespace`, `pod` of the pod that
  holds the GPU (the kubelet's pod-resources API; here: the lab controller's list of the node's Running pods
  that request `nvidia.com/gpu`, GPUs given in pod-name order), unless the ClusterPolicy's exporter env sets
  DCGM_EXPORTER_KUBERNETES to false (the operator's daemonset sets it true). `DCGM_EXP_XID_ERRORS_COUNT` carries
  `xid` and `window_size_in_ms` (300000: the exporter's default window), one series per Xid seen in the window.
* Faults come from the host's /etc/gpucloud-lab/gpu-faults.json (`gpucloud-lab fault NODE xid=79 missing=1`):
  an Xid is reported on GPU 0 (as the simulated kernel log reports it), a missing GPU is not enumerated.

State file (written by the controller, read on each scrape): RUN_DIR/dcgm-exporter-<node>.json
  {"root": host root dir, "ip": node address, "fields": [[name, type, help], ...], "pods": {"<gpu>": {pod...}}}
"""
from __future__ import annotations

import json
import logging
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

LOG = logging.getLogger("lab-controller")
PORT = 9400
XID_WINDOW_MS = 300000
MODEL = "NVIDIA H100 80GB HBM3"
DRIVER = "580.95.05"
# dcgm-exporter's default-counters.csv (4.x), the lines the lab's values cover; used without a counter file.
DEFAULT_FIELDS = [
    ["DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."],
    ["DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."],
    ["DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."],
    ["DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."],
    ["DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."],
    ["DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."],
    ["DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."],
    ["DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."],
    ["DCGM_FI_DRIVER_VERSION", "label", "Driver Version"],
]
# What a healthy, idle H100 SXM reads; a GPU held by a pod reads busy. Fields not here read 0 (error counters,
# violations, remap flags of a healthy GPU).
IDLE = {"DCGM_FI_DEV_SM_CLOCK": 345, "DCGM_FI_DEV_MEM_CLOCK": 2619, "DCGM_FI_DEV_MEMORY_TEMP": 36,
        "DCGM_FI_DEV_GPU_TEMP": 31, "DCGM_FI_DEV_POWER_USAGE": 71.3, "DCGM_FI_DEV_FB_FREE": 81004,
        "DCGM_FI_DEV_FB_RESERVED": 555, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": 0}
BUSY = {"DCGM_FI_DEV_SM_CLOCK": 1980, "DCGM_FI_DEV_GPU_TEMP": 58, "DCGM_FI_DEV_POWER_USAGE": 612.4,
        "DCGM_FI_DEV_GPU_UTIL": 97, "DCGM_FI_DEV_MEM_COPY_UTIL": 41, "DCGM_FI_DEV_FB_USED": 61440,
        "DCGM_FI_DEV_FB_FREE": 19564, "DCGM_FI_PROF_GR_ENGINE_ACTIVE": 0.93, "DCGM_FI_PROF_SM_ACTIVE": 0.91,
        "DCGM_FI_PROF_SM_OCCUPANCY": 0.47, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": 0.62, "DCGM_FI_PROF_DRAM_ACTIVE": 0.55}


def read_counters(text: str) -> list[list[str]]:
    """dcgm-exporter's counter file: `field, type, help`, blank lines and `#` comments skipped."""
    fields = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [part.strip() for part in line.split(",", 2)]
        if len(parts) == 3:
            fields.append(parts)
    return fields


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render(node: str, state: dict[str, Any], started: float) -> str:
    """The exposition text of one scrape."""
    root = Path(state.get("root", "/nonexistent"))
    faults = _load(root / "etc/gpucloud-lab/gpu-faults.json")
    count = int(_load(root / "etc/gpucloud-lab/gpus.json").get("count") or 0)
    count = max(0, count - int(faults.get("missing") or 0))
    xids = [int(code) for code in faults.get("xid") or []]
    fields = state.get("fields") or DEFAULT_FIELDS
    pods = state.get("pods") or {}
    label_fields = [name for name, kind, _help in fields if kind == "label"]
    out: list[str] = []
    for name, kind, help_text in fields:
        if kind == "label":
            continue
        prom_type = "counter" if kind == "counter" else "gauge"
        lines = []
        for gpu in range(count):
            labels = {"gpu": str(gpu), "UUID": "GPU-%08x-1111-4222-8333-444455556666" % gpu,
                      "pci_bus_id": "00000000:%02X:00.0" % (0x18 + gpu * 0x10), "device": "nvidia%d" % gpu,
                      "modelName": MODEL, "Hostname": node}
            for label in label_fields:
                labels[label] = DRIVER if label == "DCGM_FI_DRIVER_VERSION" else \
                    "16501230%05d" % gpu if label == "DCGM_FI_DEV_SERIAL" else ""
            holder = pods.get(str(gpu))
            if holder:
                labels.update(container=holder["container"], namespace=holder["namespace"], pod=holder["pod"])
            values = {**IDLE, **(BUSY if holder else {})}
            if name == "DCGM_EXP_XID_ERRORS_COUNT":
                for code in sorted(set(xids)) if gpu == 0 else []:
                    lines.append(_series(name, {**labels, "window_size_in_ms": str(XID_WINDOW_MS),
                                                "xid": str(code)}, xids.count(code)))
                continue
            if name == "DCGM_EXP_CLOCK_EVENTS_COUNT":
                continue  # no clock event in the window
            if name == "DCGM_FI_DEV_XID_ERRORS":
                value: float = xids[-1] if xids and gpu == 0 else 0
            elif name == "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION":
                value = round((time.time() - started) * values["DCGM_FI_DEV_POWER_USAGE"] * 1000)
            else:
                value = values.get(name, 0)
            lines.append(_series(name, labels, value))
        if lines:
            out += [f"# HELP {name} {help_text}", f"# TYPE {name} {prom_type}", *lines]
    return "\n".join(out) + "\n"


def _series(name: str, labels: dict[str, str], value: float) -> str:
    text = ",".join(f'{key}="{_escape(str(val))}"' for key, val in labels.items())
    return f"{name}{{{text}}} {value}"


def state_path(run_dir: Path, node: str) -> Path:
    return run_dir / f"dcgm-exporter-{node}.json"


UNIT_PREFIX = "lab-dcgm-exporter-"


class DcgmExporters:
    """The controller's part: which GPU nodes get an exporter process, with which fields and pods (see above)."""

    def sync(self, apis: dict[str, Any]) -> None:
        # Imported here: the exporter process itself needs none of the lab's modules.
        from gpucloud_lab.core import config  # pylint: disable=import-outside-toplevel
        from gpucloud_lab.core.util import daemon_pid, lab_units, start_daemon, stop_unit  # pylint: disable=import-outside-toplevel
        from gpucloud_lab.infra import hosts  # pylint: disable=import-outside-toplevel

        lab_gpu_hosts = {host.name: host for host in config.GPU_NODES}
        want: dict[str, dict[str, Any]] = {}
        for api in apis.values():
            policies = sorted(api.items("/apis/nvidia.com/v1/clusterpolicies"),
                              key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))
            spec = policies[0].get("spec", {}) if policies else {}
            exporter = spec.get("dcgmExporter", {})
            if not policies or not exporter.get("enabled", True) or exporter.get("hostNetwork") is not True:
                continue
            fields = DEFAULT_FIELDS
            if (exporter.get("config") or {}).get("name"):
                namespace = policies[0].get("status", {}).get("namespace") or "gpu-operator"
                configmap = api.get(f"/api/v1/namespaces/{namespace}/configmaps/{exporter['config']['name']}")
                if configmap is None:
                    continue  # the exporter pod cannot mount its counter file: it does not start
                fields = read_counters(configmap.get("data", {}).get("dcgm-metrics.csv", ""))
            for node in api.items("/api/v1/nodes"):
                name = node["metadata"]["name"]
                host = lab_gpu_hosts.get(name)
                if host is None or "nvidia.com/gpu.count" not in node["metadata"].get("labels", {}) \
                        or not hosts.is_running(host):
                    continue
                env = {e.get("name"): e.get("value") for e in exporter.get("env") or [] if isinstance(e, dict)}
                attribution = str(env.get("DCGM_EXPORTER_KUBERNETES", "true")).lower() == "true"
                want[name] = {"root": str(hosts.root_dir(host)), "ip": host.ip, "fields": fields,
                              "pods": _gpu_pods(api, name) if attribution else {}}
        for name, state in want.items():
            path = state_path(config.RUN_DIR, name)
            text = json.dumps(state, sort_keys=True)
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
            unit = UNIT_PREFIX + name
            if not daemon_pid(unit):
                start_daemon(unit, ["ip", "netns", "exec", lab_gpu_hosts[name].netns, sys.executable, "-m",
                                    "gpucloud_lab.sim.dcgm_exporter_sim", name, str(config.RUN_DIR)])
                LOG.info("node %s: DCGM exporter (simulation) on %s:%d", name, state["ip"], PORT)
        for unit in lab_units():
            if unit.startswith(UNIT_PREFIX) and unit[len(UNIT_PREFIX):] not in want:
                stop_unit(unit)
                state_path(config.RUN_DIR, unit[len(UNIT_PREFIX):]).unlink(missing_ok=True)
                LOG.info("node %s: DCGM exporter (simulation) stopped", unit[len(UNIT_PREFIX):])


def _gpu_pods(api: Any, node: str) -> dict[str, dict[str, str]]:
    """GPU index -> the Running pod (and its first container asking for GPUs) that holds it, GPUs given in order."""
    held: dict[str, dict[str, str]] = {}
    pods = api.items(f"/api/v1/pods?fieldSelector=spec.nodeName%3D{node}")
    for pod in sorted(pods, key=lambda p: (p["metadata"]["namespace"], p["metadata"]["name"])):
        if pod.get("status", {}).get("phase") != "Running":
            continue
        for container in pod["spec"].get("containers", []):
            limits = container.get("resources", {}).get("limits", {})
            for _gpu in range(int(limits.get("nvidia.com/gpu") or 0)):
                held[str(len(held))] = {"pod": pod["metadata"]["name"], "namespace": pod["metadata"]["namespace"],
                                        "container": container["name"]}
    return held


def main(argv: list[str]) -> int:
    """`python -m gpucloud_lab.sim.dcgm_exporter_sim NODE RUN_DIR` (in the node's network namespace)."""
    node, run_dir = argv[0], Path(argv[1])
    started = time.time()
    ip = _load(state_path(run_dir, node)).get("ip", "127.0.0.1")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            body = render(node, _load(state_path(run_dir, node)), started).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:
            return

    server = ThreadingHTTPServer((ip, PORT), Handler)
    print(f"dcgm-exporter SIMULATION for {node} on {ip}:{PORT}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
