# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_validate role's collection of every node's NVML result on the controller, as ansible-playbook
evaluates the role's own expression (roles/gpu_validate/vars/main.yml) at 5,000 nodes: one entry per
node, its registered result or None where it has none (no GPUs, unreachable)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
ROLE = REPO / "roles" / "gpu_validate"
NODES = 5000


def nvml_result(i: int) -> dict | None:
    if i % 7 == 3:
        return None  # the host has no result (left out, or unreachable)
    return {"gpu_count": i % 9, "failed": i % 5 == 0, "msg": "gpu%05d" % i}


def test_every_nodes_nvml_result_is_collected_once_in_fleet_order(tmp_path: Path) -> None:
    hosts = {}
    for i in range(NODES):
        host = {}
        if nvml_result(i) is not None:
            host["gpu_validate_nvml"] = nvml_result(i)
        hosts["gpu%05d" % i] = host
    # An inventory script (JSON): Ansible's YAML inventory takes tens of seconds for 5,000 hosts.
    (tmp_path / "hosts.json").write_text(json.dumps({"gpu_nodes": {"hosts": list(hosts)}, "_meta": {"hostvars": hosts}}))
    inventory = tmp_path / "hosts.sh"
    inventory.write_text("#!/bin/sh\nexec cat '%s'\n" % (tmp_path / "hosts.json"))
    inventory.chmod(0o755)
    out = tmp_path / "collected.json"
    playbook = tmp_path / "collect.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Collect as the role does", "hosts": "localhost", "gather_facts": False,
        "vars": {"gpu_validate_nodes": "{{ groups['gpu_nodes'] }}"},
        "tasks": [
            {"name": "The role's expressions", "ansible.builtin.include_vars": {"file": str(ROLE / "vars" / "main.yml")}},
            {"name": "Write what they give", "ansible.builtin.copy": {
                "content": "{{ gpu_validate__nvml | to_json }}",
                "dest": str(out), "mode": "0600"}},
        ],
    }]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    run = subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), "-c", "local",
                          "-e", f"ansible_python_interpreter={sys.executable}", str(playbook)],
                         cwd=REPO, env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    collected = json.loads(out.read_text())
    names = ["gpu%05d" % i for i in range(NODES)]
    assert list(collected) == names
    assert collected == {name: nvml_result(i) for i, name in enumerate(names)}
