# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SIMULATION of the GPUs and the driver's NVML (NVIDIA's `pynvml`, PyPI nvidia-ml-py) on each lab host.

A part of the lab controller (controller.py), which runs it every second. A lab host has no GPU
and no libnvidia-ml, so the lab installs a simulated `pynvml` into the host's Python path:
`pynvml.py` there is a shim that replaces itself with the collection's fake NVML
(`tests/support/fake_nvml.py`, copied as `gpucloud_lab_fake_nvml.py`: the real function names,
return types and NVMLError classes) holding the fleet's GPU count of H100s. The module
`nvml_health` runs on the host unchanged. A node the fleet gives no GPU gets no NVML (as a host
without the driver: the module fails in one line).
"""
from __future__ import annotations

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
import sys

from gpucloud_lab_fake_nvml import FakeNvml, h100

sys.modules[__name__] = FakeNvml([h100(i) for i in range({count})], driver="580.95.05", cuda=13000)
'''

    def sync(self, gpus: dict[str, JSON]) -> None:
        if not self.FAKE.exists():
            return
        fake = self.FAKE.read_text()
        for host in config.GPU_NODES:
            count = int(gpus.get(host.name, {}).get("count") or 0)
            site = hosts.root_dir(host) / self.SITE
            if not (hosts.root_dir(host) / "usr").is_dir():
                continue  # host not started
            files = {site / "gpucloud_lab_fake_nvml.py": fake,
                     site / "pynvml.py": self.SHIM.format(count=count, model=gpus.get(host.name, {}).get("model"))}
            for path, text in files.items():
                if not count:
                    path.unlink(missing_ok=True)
                elif not path.exists() or path.read_text() != text:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text)
                    LOG.info("host %s: simulated NVML (%s GPUs) in %s", host.name, count, path.relative_to(
                        hosts.root_dir(host)))
