# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet stand-in plays the kubelet only where the simulated one runs: a lab host whose /usr/bin/kubelet is
the real kubelet (a program, from the mirror's real-kubelet repository) runs and reports its pods itself, so the
stand-in neither reports them Running nor deletes them for it."""
from __future__ import annotations

from pathlib import Path

import pytest
from gpucloud_lab.core import config
from gpucloud_lab.infra import hosts
from gpucloud_lab.sim import kubelet_standin_sim


class Api:
    def __init__(self, pods: list[dict]) -> None:
        self.pods = pods
        self.patched: list[str] = []

    def items(self, path: str) -> list[dict]:
        return [p for p in self.pods if "Pending" not in path or p["status"]["phase"] == "Pending"]

    def patch(self, path: str, body: dict) -> None:
        self.patched.append(path)

    def get(self, path: str) -> dict:
        return {}


def _pod(name: str, node: str) -> dict:
    return {"metadata": {"name": name, "namespace": "default", "uid": name},
            "spec": {"nodeName": node, "containers": [{"name": "c"}]}, "status": {"phase": "Pending"}}


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(hosts, "root_dir", lambda host: tmp_path / host.name)
    for host in config.HOSTS:
        (tmp_path / host.name / "usr" / "bin").mkdir(parents=True)
    return tmp_path


def test_a_host_with_the_real_kubelet_runs_its_own_pods(roots: Path) -> None:
    real, simulated = config.GPU_NODES[-1], config.GPU_NODES[0]
    (roots / real.name / "usr/bin/kubelet").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(64))
    (roots / simulated.name / "usr/bin/kubelet").write_bytes(b"#!/usr/bin/python3\nprint()\n")
    assert kubelet_standin_sim.has_real_kubelet(real)
    assert not kubelet_standin_sim.has_real_kubelet(simulated)
    assert not kubelet_standin_sim.has_real_kubelet(config.GPU_NODES[1])  # no kubelet at all

    api = Api([_pod("on-real", real.name), _pod("on-simulated", simulated.name)])
    kubelet_standin_sim.Kubelet({"https://host": api}).sync()
    assert api.patched == ["/api/v1/namespaces/default/pods/on-simulated/status"]
