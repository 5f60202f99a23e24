# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_gate module end to end: main() with the fake pynvml and the lab's simulated tools
(lab/gpucloud_lab/sim/gpu_tools_sim.py, a temporary copy whose config paths point into tmp_path)."""
from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.modules import gpu_gate
from tests.support.fake_nvml import FakeNvml, h100, install
from tests.support.module_args import patch_module_args

ROOT = Path(__file__).resolve().parents[4]
SIM = ROOT / "lab" / "gpucloud_lab" / "sim" / "gpu_tools_sim.py"
TOOLS = ("dcgmi", "nvbandwidth", "all_reduce_perf", "dmesg")


class Lab:
    def __init__(self, tmp: Path):
        self.bin = tmp / "bin"
        self.bin.mkdir()
        self.conf = tmp / "gpus.json"
        self.faults = tmp / "gpu-faults.json"
        self.reports = tmp / "gate"
        source = SIM.read_text(encoding="utf-8")
        for old, new in (('CONF = "/etc/gpucloud-lab/gpus.json"', "CONF = %r" % str(self.conf)),
                         ('FAULTS = "/etc/gpucloud-lab/gpu-faults.json"', "FAULTS = %r" % str(self.faults)),
                         ):
            assert old in source
            source = source.replace(old, new)
        # The lab runs the file through its wrappers; here it runs as a script under this Python.
        source = "#!" + sys.executable + "\n" + source
        script = self.bin / "gpu_tools_sim.py"
        script.write_text(source, encoding="utf-8")
        script.chmod(0o755)
        for tool in TOOLS:
            (self.bin / tool).symlink_to(script)
        self.conf.write_text(json.dumps({"count": 8}))
        self.fault()

    def fault(self, **faults) -> None:
        self.faults.write_text(json.dumps(faults))

    def args(self, **changes) -> dict:
        args = {"node": "gpu-node-1", "gpu_count": 8, "model": "H100-SXM5-80GB", "report_dir": str(self.reports),
                "tools": {"dcgmi": str(self.bin / "dcgmi"), "nvbandwidth": str(self.bin / "nvbandwidth"),
                          "all_reduce_perf": str(self.bin / "all_reduce_perf"),
                          "kernel_log": [str(self.bin / "dmesg")]}}
        args.update(changes)
        return args


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Lab:
    install(monkeypatch, FakeNvml([h100(i) for i in range(8)]))
    return Lab(tmp_path)


def run_main(capsys: pytest.CaptureFixture, args: dict) -> tuple[int, dict]:
    with patch_module_args(args), pytest.raises(SystemExit) as exited:
        gpu_gate.main()
    return exited.value.code, json.loads(capsys.readouterr().out)


def checks(out: dict) -> dict[str, dict]:
    return {c["name"]: c for c in out["report"]["checks"]}


def failed(out: dict) -> list[str]:
    return [c["name"] for c in out["report"]["checks"] if not c["passed"]]


ALL = ["inventory", "kernel_log", "dcgm_diag", "h2d", "d2h", "d2d", "nccl_all_reduce"]


def test_the_simulated_tools_answer(lab: Lab) -> None:
    import subprocess
    out = subprocess.run([str(lab.bin / "dcgmi"), "diag", "-r", "2", "-j"], capture_output=True, text=True, check=False)
    assert out.returncode == 0 and "DCGM Diagnostic" in out.stdout


def test_a_healthy_node_passes_and_writes_its_report(lab: Lab, capsys) -> None:
    rc, out = run_main(capsys, lab.args())
    assert rc == 0 and out["passed"] is True and out["changed"] is True and not out.get("failed"), out["msg"]
    assert [c["name"] for c in out["report"]["checks"]] == ALL and failed(out) == []
    assert out["msg"].startswith("GPU gate (quick) passed on gpu-node-1: 7 checks in ")
    latest = lab.reports / "latest.json"
    assert stat.S_IMODE(latest.stat().st_mode) == 0o644
    assert stat.S_IMODE(Path(out["path"]).stat().st_mode) == 0o644
    assert Path(out["path"]).parent == lab.reports / "reports"
    rep = json.loads(latest.read_text())
    assert rep == json.loads(Path(out["path"]).read_text()) == out["report"]
    assert rep["schema"] == "gpucloud.baremetal/gpu-gate/v1" and rep["passed"] is True and rep["failed_checks"] == []
    assert rep["node"] == "gpu-node-1" and rep["profile"] == "quick" and len(rep["gpus"]) == 8
    assert rep["tools"]["dcgm_level"] == 2 and rep["tools"]["floors"]["nccl_busbw"] == 460.0
    c = checks(out)
    assert c["nccl_all_reduce"]["measured"] == 481.3 and c["h2d"]["measured"] == 55.2 and c["d2d"]["measured"] == 388.4
    assert c["dcgm_diag"]["measured"] == {"failed": 0, "passed": 27}  # level 2: 3 tests x (8 GPUs + summary)
    from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu import gate
    assert gate.read_report(latest.read_text())["valid"] is True


def test_a_missing_gpu_fails_inventory(lab: Lab, capsys, monkeypatch) -> None:
    install(monkeypatch, FakeNvml([h100(i) for i in range(7)]))
    lab.fault(missing=1)
    rc, out = run_main(capsys, lab.args())
    assert rc == 1 and out["failed"] is True and out["passed"] is False
    assert "inventory" in failed(out) and "nccl_all_reduce" in failed(out)  # -g 8 on 7 GPUs
    assert checks(out)["inventory"]["measured"] == 7 and checks(out)["inventory"]["threshold"] == 8
    assert json.loads((lab.reports / "latest.json").read_text())["passed"] is False
    assert out["msg"].startswith("GPU gate (quick) FAILED on gpu-node-1: ")


def test_xid_79_fails_the_kernel_log(lab: Lab, capsys) -> None:
    lab.fault(xid=[13, 79])
    rc, out = run_main(capsys, lab.args())
    assert rc == 1 and failed(out) == ["kernel_log"]
    assert checks(out)["kernel_log"]["measured"] == ["xid 79"]
    assert any(w.startswith("XID 13 ") for w in out["report"]["warnings"])


def test_xid_13_alone_is_a_warning(lab: Lab, capsys) -> None:
    lab.fault(xid=[13])
    rc, out = run_main(capsys, lab.args())
    assert rc == 0 and failed(out) == [] and any(w.startswith("XID 13 ") for w in out["report"]["warnings"])


def test_low_nccl_bus_bandwidth_fails(lab: Lab, capsys) -> None:
    lab.fault(nccl_busbw=300)
    rc, out = run_main(capsys, lab.args())
    assert rc == 1 and failed(out) == ["nccl_all_reduce"]
    c = checks(out)["nccl_all_reduce"]
    assert c["measured"] == 300.0 and c["threshold"] == 460.0 and "bus bandwidth below the floor" in c["message"]
    assert json.loads((lab.reports / "latest.json").read_text())["failed_checks"] == ["nccl_all_reduce"]


def test_low_d2d_fails_d2d(lab: Lab, capsys) -> None:
    lab.fault(d2d=300)
    rc, out = run_main(capsys, lab.args())
    assert rc == 1 and failed(out) == ["d2d"] and checks(out)["d2d"]["measured"] == 300.0


def test_a_dcgm_failure_fails_dcgm_diag(lab: Lab, capsys) -> None:
    lab.fault(dcgm_fail="pcie")
    rc, out = run_main(capsys, lab.args())
    assert rc == 1 and failed(out) == ["dcgm_diag"]
    message = checks(out)["dcgm_diag"]["message"]
    assert message.startswith("DCGM diag level 2: 2 of 27 results failed: pcie GPU 0 Fail: Error in pcie for GPU 0")


def test_dcgm_level_follows_the_profile(lab: Lab, capsys) -> None:
    lab.fault(dcgm_fail="targeted_stress")  # a level-3 test only
    rc, out = run_main(capsys, lab.args())
    assert rc == 0 and out["report"]["tools"]["dcgm_level"] == 2
    rc, out = run_main(capsys, lab.args(profile="full"))
    assert rc == 1 and failed(out) == ["dcgm_diag"] and out["report"]["tools"]["dcgm_level"] == 3


@pytest.mark.parametrize("tool, names, hint", [
    ("dcgmi", ["dcgm_diag"], "datacenter-gpu-manager"),
    ("nvbandwidth", ["h2d", "d2h", "d2d"], "nvbandwidth"),
    ("all_reduce_perf", ["nccl_all_reduce"], "nccl-tests"),
])
def test_a_missing_tool_fails_its_check_with_a_hint(lab: Lab, capsys, tool: str, names: list, hint: str) -> None:
    args = lab.args()
    args["tools"][tool] = str(lab.bin / "absent" / tool)
    rc, out = run_main(capsys, args)
    assert rc == 1 and failed(out) == names
    for name in names:
        message = checks(out)[name]["message"]
        assert message.startswith("%s exited 127: " % tool) and message.endswith(gpu_gate.HINTS[tool])
        assert hint in message


def test_a_missing_kernel_log_command_fails_kernel_log(lab: Lab, capsys) -> None:
    args = lab.args()
    args["tools"]["kernel_log"] = [str(lab.bin / "absent" / "dmesg")]
    rc, out = run_main(capsys, args)
    assert rc == 1 and failed(out) == ["kernel_log"] and "exited 127" in checks(out)["kernel_log"]["message"]


def test_a_tool_that_cannot_run_fails_its_check(lab: Lab, capsys) -> None:
    args = lab.args()
    args["tools"]["dcgmi"] = str(lab.bin)  # a directory: exec fails with EACCES, not ENOENT
    rc, out = run_main(capsys, args)
    assert rc == 1 and failed(out) == ["dcgm_diag"]
    assert checks(out)["dcgm_diag"]["message"].startswith("dcgmi exited 126: "), checks(out)["dcgm_diag"]


def test_an_unknown_model_fails_before_any_tool_runs(lab: Lab, capsys, monkeypatch) -> None:
    ran = []
    monkeypatch.setattr(gpu_gate, "_run", lambda argv, timeout: ran.append(argv) or (0, "", ""))
    rc, out = run_main(capsys, lab.args(model="H100-PCIE-80GB"))
    assert rc == 1 and out["failed"] is True and ran == []
    assert len(out["problems"]) == 1
    assert out["problems"][0].startswith("thresholds: no bandwidth floors for GPU model 'H100-PCIE-80GB'")
    assert "report" not in out and not lab.reports.exists()


def test_bad_thresholds_fail_before_any_tool_runs(lab: Lab, capsys, monkeypatch) -> None:
    ran = []
    monkeypatch.setattr(gpu_gate, "_run", lambda argv, timeout: ran.append(argv) or (0, "", ""))
    rc, out = run_main(capsys, lab.args(thresholds={"H100": {"h2d": "fast"}}, gpu_count=0))
    assert rc == 1 and ran == [] and not lab.reports.exists()
    assert any(p.startswith("gpu_count: must be 1 or more") for p in out["problems"])
    assert any(p.startswith("thresholds['H100'].h2d: must be a number") for p in out["problems"])


def test_the_fleet_row_decides_the_floor(lab: Lab, capsys) -> None:
    row = {"nccl_busbw": 490.0, "nccl_bytes": "8G", "h2d": 40.0, "d2h": 40.0, "d2d": 300.0}
    rc, out = run_main(capsys, lab.args(thresholds={"H100": row}))
    assert rc == 1 and failed(out) == ["nccl_all_reduce"] and out["report"]["tools"]["floors"] == row
    assert checks(out)["nccl_all_reduce"]["message"].startswith("all_reduce_perf at %d bytes" % (8 << 30))


def test_check_mode_runs_and_writes_nothing(lab: Lab, capsys, monkeypatch) -> None:
    ran = []
    monkeypatch.setattr(gpu_gate, "_run", lambda argv, timeout: ran.append(argv) or (0, "", ""))
    rc, out = run_main(capsys, dict(lab.args(), _ansible_check_mode=True))
    assert rc == 0 and out["changed"] is True and ran == []
    assert out["msg"] == "GPU gate (quick, DCGM level 2) would run on gpu-node-1; check mode runs no test"
    assert "report" not in out and not lab.reports.exists()
    assert sorted(os.listdir(lab.bin.parent)) == ["bin", "gpu-faults.json", "gpus.json"]
