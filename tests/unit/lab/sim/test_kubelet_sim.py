# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's simulated kubelet takes --register-with-taints as the kubelet does (kubeadm writes a JoinConfiguration's
nodeRegistration.taints into it as key=value:Effect, comma-separated: kubeadm app/phases/kubelet/flags.go, and the
kubelet's taint flag parsing refuses anything else), and registers its Node with them (kubelet_node_status.go)."""
from __future__ import annotations

import pytest
from gpucloud_lab.sim import kubelet_sim


def test_taints_are_read_as_kubeadm_writes_them() -> None:
    flags = kubelet_sim.parse_flags(["--register-with-taints=gpucloud.baremetal/gpu-gate=pending:NoSchedule,"
                                     "dedicated:NoExecute"])
    assert kubelet_sim.register_taints(flags) == [
        {"key": "gpucloud.baremetal/gpu-gate", "value": "pending", "effect": "NoSchedule"},
        {"key": "dedicated", "effect": "NoExecute"}]
    assert kubelet_sim.register_taints({}) == []


@pytest.mark.parametrize("bad", ["gpu-gate=pending", "gpu-gate=pending:Sometimes", ":NoSchedule"])
def test_a_malformed_taint_stops_the_kubelet(bad: str) -> None:
    with pytest.raises(SystemExit, match="register-with-taints"):
        kubelet_sim.register_taints({"register-with-taints": bad})


def test_the_node_is_registered_with_its_taints() -> None:
    sent = []

    class Client:
        def request(self, method: str, path: str, body: dict) -> tuple[int, dict]:
            sent.append((method, path, body))
            return 201, {}

    taints = [{"key": "gpucloud.baremetal/gpu-gate", "value": "pending", "effect": "NoSchedule"}]
    kubelet_sim.register(Client(), "gpu3", {}, taints)
    kubelet_sim.register(Client(), "gpu3", {})
    assert sent[0][2]["spec"] == {"taints": taints} and sent[1][2]["spec"] == {}
