# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vcluster_tenant role in steps (vcluster_tenant_step; tenant_onboard.yml runs install, ready and in_cluster in
different plays): a step run without the one before it in the same run is refused with a message naming the step
to run first, before any cluster is asked anything; a shared tenant has no in_cluster part. ansible-playbook on
localhost, no cluster: the host kubeconfig names a closed port, so any API call would fail the run."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent


def _run(where: Path, tenant: dict, step: str) -> subprocess.CompletedProcess:
    kubeconfig = where / "host.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "closed",
        "clusters": [{"name": "closed", "cluster": {"server": "https://127.0.0.1:9", "insecure-skip-tls-verify": True}}],
        "users": [{"name": "nobody", "user": {"token": "none"}}],
        "contexts": [{"name": "closed", "context": {"cluster": "closed", "user": "nobody"}}]}))
    kubeconfig.chmod(0o600)
    play = [{"name": "One step of the role", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "The step", "ansible.builtin.include_role": {"name": "gpucloud.baremetal.vcluster_tenant"},
         "vars": {"vcluster_tenant_tenant": tenant, "vcluster_tenant_step": step,
                  "vcluster_tenant_kubeconfig": str(kubeconfig), "vcluster_tenant_kubeconfig_dir": str(where)}}]}]
    playbook = where / "play.yml"
    playbook.write_text(yaml.safe_dump(play, sort_keys=False))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
               ANSIBLE_NOCOLOR="1")
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(playbook)],
                          cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=300)


ACME = {"name": "acme", "namespace": "tenant-acme", "isolation": "private"}
BETA = {"name": "beta", "namespace": "tenant-beta", "isolation": "shared"}


@pytest.mark.parametrize(("step", "first", "task"), [
    ("ready", "vcluster_tenant_step=install first",
     "Check that the release was installed earlier in this run (vcluster_tenant_step=install first)"),
    ("in_cluster", "run the role with vcluster_tenant_step=install, then ready,",
     "Check that the ready step ran earlier in this run (vcluster_tenant_step=ready first)"),
])
def test_a_step_without_the_one_before_it_is_refused_before_any_api_call(
        tmp_path: Path, step: str, first: str, task: str) -> None:
    run = _run(tmp_path, ACME, step)
    out = " ".join((run.stdout + run.stderr).split())
    assert run.returncode != 0, out[-2000:]
    assert f"TASK [gpucloud.baremetal.vcluster_tenant : {task}]" in out
    assert first in out, out[-2000:]
    # The refusal is the only failure: no task asked the (closed) API anything.
    assert out.count("fatal: [localhost]") == 1 and "127.0.0.1:9" not in out, out[-2000:]


def test_a_shared_tenant_has_no_in_cluster_part(tmp_path: Path) -> None:
    run = _run(tmp_path, BETA, "in_cluster")
    out = " ".join((run.stdout + run.stderr).split())
    assert run.returncode == 0, out[-2000:]
    assert "ok=" in out and "failed=0" in out
    assert "Install KAI Scheduler" not in out and "Install the GPU Operator" not in out
