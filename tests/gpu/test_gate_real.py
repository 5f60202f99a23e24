# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU gate's quick profile (module gpu_gate) on this machine's real GPUs, run through ansible-playbook.

Skipped where there is no NVIDIA GPU, like test_nvml_real.py (whose checks of the machine it shares). What it
holds: the inventory passes against what nvidia-smi lists, the kernel log is read, and every tool that is
installed here (dcgmi, nvbandwidth, all_reduce_perf) is run and its real output parsed: a check may fail for
a real reason (a slow link, a DCGM finding), never because the gate could not read what the tool printed. A tool
that is not installed fails its check with exit 127 and the hint to install it. Bandwidth floors are 1 GB/s
(this test is about reading the tools, not about this machine's speed); the report is printed.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import yaml

from tests.gpu.test_nvml_real import BIN, COLLECTIONS, needs_gpu, smi

# What the gate says when it could not read a tool's output (gate.py's GateError texts): never on real output.
UNREADABLE = ("not JSON", "no result row", "no 'Running", "not as DCGM writes it", "no test result", "no matrix",
              "no SUM line", "printed nothing", "did not finish")
TOOLS = {"dcgm_diag": "dcgmi", "h2d": "nvbandwidth", "d2h": "nvbandwidth", "d2d": "nvbandwidth",
         "nccl_all_reduce": "all_reduce_perf"}


def gpu_gate(tmp_path: Path, **args) -> dict:
    out = tmp_path / "result.json"
    play = [{"name": "gpu_gate on this machine", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "The quick gate", "gpucloud.baremetal.gpu_gate": args, "register": "gate", "ignore_errors": True},
        {"name": "Keep the result", "ansible.builtin.copy": {"content": "{{ gate | to_json }}", "dest": str(out),
                                                             "mode": "0600"}, "check_mode": False}]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play))
    (tmp_path / "ansible.cfg").write_text("[defaults]\n")
    env = dict(os.environ, ANSIBLE_CONFIG=str(tmp_path / "ansible.cfg"), ANSIBLE_COLLECTIONS_PATH=COLLECTIONS,
               ANSIBLE_INVENTORY_ENABLED="host_list", ANSIBLE_PYTHON_INTERPRETER=sys.executable,
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_REMOTE_TMP=str(tmp_path / "tmp"))
    playbook_bin = shutil.which("ansible-playbook", path=str(BIN)) or "ansible-playbook"
    done = subprocess.run([playbook_bin, "-i", "localhost,", "-c", "local", str(tmp_path / "play.yml")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=3600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(out.read_text())


@needs_gpu
def test_the_quick_gate_reads_every_installed_tool_on_real_gpus(tmp_path: Path) -> None:
    names = [row[0] for row in smi("name") or []]
    assert names, "nvidia-smi lists no GPU"
    model = names[0]
    floors = {"nccl_busbw": 1.0, "nccl_bytes": "1G", "h2d": 1.0, "d2h": 1.0, "d2d": 1.0}
    result = gpu_gate(tmp_path, node="this-machine", profile="quick", gpu_count=len(names), model=model,
                      thresholds={"^" + re.escape(model) + "$": floors}, report_dir=str(tmp_path / "gate"),
                      tool_timeout=1800)
    assert "report" in result, result.get("msg")
    report = result["report"]
    print("\n" + "\n".join("%s %s: %s" % ("PASS" if c["passed"] else "FAIL", c["name"], c["message"])
                           for c in report["checks"]))
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["inventory"]["passed"], checks["inventory"]["message"]
    assert [g["name"] for g in report["gpus"]] == names
    if os.geteuid() == 0:  # dmesg may be restricted to root (kernel.dmesg_restrict)
        assert not any(word in checks["kernel_log"]["message"] for word in (*UNREADABLE, "exited")), \
            checks["kernel_log"]
    for name, tool in TOOLS.items():
        if name not in checks:
            continue
        message = checks[name]["message"]
        if shutil.which(tool) is None:
            assert not checks[name]["passed"] and "exited 127" in message, checks[name]
        elif not (name == "nccl_all_reduce" and len(names) == 1):
            assert not any(word in message for word in UNREADABLE), (name, message)
    latest = tmp_path / "gate" / "latest.json"
    assert json.loads(latest.read_text()) == report
    assert stat.S_IMODE(latest.stat().st_mode) == 0o644
