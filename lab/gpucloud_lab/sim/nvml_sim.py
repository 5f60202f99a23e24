# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SIMULATION of the GPUs and the driver's NVML (NVIDIA's `pynvml`, PyPI nvidia-ml-py) on each lab host.

A part of the lab controller (controller.py), which runs it every second. A lab host has no GPU
and no libnvidia-ml, so the lab installs a simulated `pynvml` into the host's Python path:
`pynvml.py` there is a shim that replaces itself with the collection's fake NVML
(`tests/support/fake_nvml.py`, copied as `gpucloud_lab_fake_nvml.py`: the real function names,
return types and NVMLError classes) holding the fleet's GPU count of H100s, less the GPUs that
`gpucloud-lab fault NODE missing=N` took away. The module `nvml_health` runs on the host unchanged.
A node the fleet gives no GPU gets no NVML (as a host without the driver: the module fails in one line).

The GPU gate's tools are simulated too (gpu_tools_sim.py: dcgmi, nvbandwidth, all_reduce_perf and the
kernel log's dmesg, in /usr/local/bin, ahead of the host's own dmesg), reading the host's GPU count from
/etc/gpucloud-lab/gpus.json and the injected faults from /etc/gpucloud-lab/gpu-faults.json.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

from gpucloud_lab.core import config
from gpucloud_lab.infra import hosts
from gpucloud_lab.infra.kubeapi import JSON

LOG = logging.getLogger("lab-controller")


class SimulatedGpus:
    """Installs, on each lab GPU host, a simulated NVML with the fleet's GPUs (or none where it gives none)."""

    SITE = Path("usr/local/lib/python3.11/dist-packages")
    FAKE = config.REPO_DIR / "tests" / "support" / "fake_nvml.py"
    SHIM = '''"""LAB SIMULATION of NVIDIA's pynvml (nvidia-ml-py), installed by gpucloud-lab (controller.py).

This host has no GPU: NVML answers with {count} simulated GPU(s) of the lab fleet ({model}).
"""
import json
import sys

from gpucloud_lab_fake_nvml import FakeNvml, h100

try:  # GPUs taken away by `gpucloud-lab fault NODE missing=N` (a GPU fallen off the bus is not enumerated)
    with open("/etc/gpucloud-lab/gpu-faults.json", encoding="utf-8") as _faults:
        _missing = int(json.load(_faults).get("missing") or 0)
except (OSError, ValueError, AttributeError):
    _missing = 0
sys.modules[__name__] = FakeNvml([h100(i) for i in range(max(0, {count} - _missing))], driver="580.95.05",
                                 cuda=13000)
'''
    TOOLS_SRC = Path(__file__).with_name("gpu_tools_sim.py")
    TOOLS_LIB = Path("usr/local/lib/gpucloud-lab/gpu_tools_sim.py")
    TOOL_NAMES = ("dcgmi", "nvbandwidth", "all_reduce_perf", "dmesg")
    CONF = Path("etc/gpucloud-lab/gpus.json")

    def sync(self, gpus: dict[str, JSON]) -> None:
        if not self.FAKE.exists():
            return
        fake = self.FAKE.read_text()
        for host in config.GPU_NODES:
            count = int(gpus.get(host.name, {}).get("count") or 0)
            site = hosts.root_dir(host) / self.SITE
            if not (hosts.root_dir(host) / "usr").is_dir():
                continue  # host not started
            root = hosts.root_dir(host)
            files = {site / "gpucloud_lab_fake_nvml.py": fake,
                     site / "pynvml.py": self.SHIM.format(count=count, model=gpus.get(host.name, {}).get("model")),
                     root / self.CONF: json.dumps({"count": count}) + "\n",
                     root / self.TOOLS_LIB: self.TOOLS_SRC.read_text()}
            for name in self.TOOL_NAMES:
                files[root / "usr/local/bin" / name] = "#!/bin/sh\n# gpucloud-lab SIMULATION of %s (no GPU here)\n" \
                    "exec python3 /%s %s \"$@\"\n" % (name, self.TOOLS_LIB, name)
            for path, text in files.items():
                if not count:
                    path.unlink(missing_ok=True)
                elif not path.exists() or path.read_text() != text:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text)
                    if path.parent.name == "bin":
                        path.chmod(0o755)
                    LOG.info("host %s: simulated NVML (%s GPUs) in %s", host.name, count, path.relative_to(
                        hosts.root_dir(host)))
