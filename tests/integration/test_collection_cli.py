# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection as users run it: real ansible-inventory, ansible-playbook (through
ansible-runner, as automation does), ansible-doc and ansible-galaxy, no lab needed."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import ansible_runner
import pytest
import yaml

from tests.integration.lab import secrets
from tests.support import inventory_yaml
from tests.support.fleet_data import fleet

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
EXAMPLE = os.path.join(ROOT, "inventories", "example", "fleet.yml")

ENV = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), PATH=BIN + os.pathsep + os.environ["PATH"],
           ANSIBLE_NOCOLOR="1")


def run(*args: str, cwd: str = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env or ENV, capture_output=True, text=True, timeout=300, check=False)


def plain(value):
    """ansible-inventory --list marks some strings as {"__ansible_unsafe": value}."""
    return value["__ansible_unsafe"] if isinstance(value, dict) and "__ansible_unsafe" in value else value


def write_fleet(tmp_path, data: dict, name: str = "fleet.yml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def runner(tmp_path, playbook, inventory, **kwargs):
    """ansible-playbook as automation runs it: ansible-runner with a private_data_dir."""
    private = tmp_path / "runner"
    private.mkdir(exist_ok=True)
    return ansible_runner.run(private_data_dir=str(private), playbook=str(playbook), inventory=str(inventory),
                              envvars={"ANSIBLE_CONFIG": os.path.join(ROOT, "ansible.cfg")}, quiet=True, **kwargs)


def test_example_fleet_inventory():
    proc = run("ansible-inventory", "-i", EXAMPLE, "--list")
    assert proc.returncode == 0, proc.stderr
    inv = json.loads(proc.stdout)
    assert inv["tenant_acme"]["hosts"] == ["gpu-r1-01", "gpu-r1-02"]
    assert sorted(inv["switches_sonic"]["hosts"]) == ["leaf-r2a", "leaf-r2b"]
    assert inv["pxe_servers"]["hosts"] == ["pxe01"]
    hostvars = inv["_meta"]["hostvars"]
    assert plain(hostvars["gpu-r2-01"]["ansible_host"]) == "10.0.0.41"
    assert plain(hostvars["gpu-r2-01"]["gpucloud_node"]["tenant"]) == "cobalt"
    # the BMC is a variable of its own, and its secrets stay encrypted in the inventory output
    assert "bmc" not in hostvars["gpu-r1-01"]["gpucloud_node"]
    assert "__ansible_vault" in json.dumps(hostvars["gpu-r1-01"]["gpucloud_bmc"]["password"])
    assert "calvin-example" not in proc.stdout


def test_invalid_fleet_fails_inventory_with_every_problem(tmp_path):
    data = fleet()
    data["tenants"][1]["vlan"] = 4095
    data["nodes"][1]["mac"] = data["nodes"][0]["mac"]
    proc = run("ansible-inventory", "-i", write_fleet(tmp_path, data), "--list")
    assert proc.returncode != 0
    assert "tenants[1].vlan: 4095 is outside 1..4094" in proc.stderr
    assert "nodes[1].mac: MAC 52:54:00:00:00:01 is already used by nodes[0].mac" in proc.stderr


def test_invalid_fleet_stops_playbook_before_any_task(tmp_path):
    data = fleet()
    data["tenants"][0]["gpu"]["quota"] = 64
    data["tenants"][0]["gpu"]["limit"] = 64
    inventory = write_fleet(tmp_path, data)
    playbook = tmp_path / "touch.yml"
    marker = tmp_path / "ran"
    playbook.write_text(yaml.safe_dump([{
        "name": "Would change something", "hosts": "localhost", "gather_facts": False,
        "tasks": [{"name": "Touch", "ansible.builtin.file": {"path": str(marker), "state": "touch"}}],
    }]))
    result = runner(tmp_path, playbook, inventory)
    assert result.rc != 0
    assert not marker.exists()
    assert not [e for e in result.events if e.get("event") == "runner_on_ok"]
    stdout = result.stdout.read()
    assert "quota 64 exceeds the 8 GPUs of the own nodes of tenant 'acme'" in stdout


def test_vault_encrypted_bmc_password_is_usable_and_never_printed(tmp_path):
    secret = "s3cr3t-bmc-pass"
    vault_pass = tmp_path / "vault-pass"
    vault_pass.write_text("test-vault-password\n")
    enc = run("ansible-vault", "encrypt_string", "--vault-password-file", str(vault_pass), secret)
    assert enc.returncode == 0, enc.stderr
    data = fleet()
    data["nodes"][0]["bmc"]["password"] = "@@VAULT@@"
    text = yaml.safe_dump(data, sort_keys=False).replace("'@@VAULT@@'", "@@VAULT@@")
    body = enc.stdout.strip().replace("\n", "\n        ")
    inventory = tmp_path / "fleet.yml"
    inventory.write_text(text.replace("@@VAULT@@", body))

    listed = run("ansible-inventory", "-i", str(inventory), "--list")
    assert listed.returncode == 0, listed.stderr
    assert secret not in listed.stdout

    # Used as the collection uses it, at -vvv and with no task hiding its output: the decrypted password,
    # and the BMC given to the Redfish module with an argument it refuses and with a BMC that does not answer.
    redfish = {"name": "gpu01", "bmc": "{{ gpucloud_bmc | combine(bmc) }}", "power": "{{ power }}", "retries": 0,
               "timeout": 1}
    bmc_task = {"gpucloud.baremetal.redfish_system": redfish, "ignore_errors": True}
    playbook = tmp_path / "use.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Use the BMC password", "hosts": "gpu01", "gather_facts": False, "connection": "local",
        "vars": {"ansible_python_interpreter": sys.executable, "bmc": {"url": "https://127.0.0.1:9"}},
        "tasks": [
            {"name": "The decrypted password is the secret",  # by its hash: the playbook's text is shown on errors
             "ansible.builtin.assert": {"that": ["gpucloud_bmc.password | hash('sha256') == '%s'"
                                                 % hashlib.sha256(secret.encode()).hexdigest()], "quiet": True}},
            {"name": "A power state the module does not know", **bmc_task, "vars": {"power": "sideways"}},
            {"name": "A BMC that does not answer", **bmc_task, "vars": {"power": "read"}},
        ],
    }]))
    result = runner(tmp_path, playbook, inventory, cmdline="--vault-password-file %s" % vault_pass, verbosity=3)
    assert result.rc == 0, result.stdout.read()
    assert result.stats["ok"] == {"gpu01": 3} and result.stats["ignored"] == {"gpu01": 2}
    failed = [e["event_data"]["res"]["msg"] for e in result.events if e["event"] == "runner_on_failed"]
    assert "value of power must be one of" in failed[0] and "gpu01: BMC https://127.0.0.1:9" in failed[1], failed
    assert secret not in json.dumps(list(result.events)) and secret not in result.stdout.read()
    leaked = [str(p) for p in (tmp_path / "runner").rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    assert not leaked, leaked


def test_ansible_doc_resolves_from_repo_root():
    proc = run("ansible-doc", "-t", "inventory", "gpucloud.baremetal.fleet")
    assert proc.returncode == 0, proc.stderr
    assert "Reads a fleet file (nodes, switches, tenants)" in " ".join(proc.stdout.split())


def test_built_collection_installs_and_works(tmp_path):
    out = tmp_path / "build"
    build = run("ansible-galaxy", "collection", "build", "--output-path", str(out), ROOT)
    assert build.returncode == 0, build.stderr
    (tarball,) = list(out.glob("gpucloud-baremetal-*.tar.gz"))
    with tarfile.open(tarball) as tar:
        names = tar.getnames()
    assert "plugins/module_utils/_fleet/model.py" in names
    assert not [n for n in names if n.startswith((".venv", ".collections", "tests/output"))]

    dest = tmp_path / "collections"
    install = run("ansible-galaxy", "collection", "install", "--force", "--offline", "--no-deps", "-p", str(dest), str(tarball))
    assert install.returncode == 0, install.stderr
    # From a folder without the repo's ansible.cfg, using only the installed copy.
    env = {k: v for k, v in ENV.items() if k != "ANSIBLE_CONFIG"}
    env.update(ANSIBLE_COLLECTIONS_PATH=str(dest), ANSIBLE_INVENTORY_UNPARSED_FAILED="1")
    workdir = tmp_path / "elsewhere"
    workdir.mkdir()
    shutil.copy(EXAMPLE, workdir / "fleet.yml")
    proc = run("ansible-inventory", "-i", "fleet.yml", "--graph", cwd=str(workdir), env=env)
    assert proc.returncode == 0, proc.stderr
    assert "@tenant_cobalt" in proc.stdout
    doc = run("ansible-doc", "-t", "inventory", "gpucloud.baremetal.fleet", cwd=str(workdir), env=env)
    assert doc.returncode == 0, doc.stderr
    assert str(dest) in doc.stdout


# What a built tarball may hold at its top level; anything else (a new folder of the repo) fails the test
# below until galaxy.yml's build_ignore or this list says where it belongs.
SHIPPED = {"MANIFEST.json", "FILES.json", "README.md", "COPYING", "changelogs", "docs", "meta", "playbooks",
           "plugins", "roles", "inventories", "requirements.txt", "bindep.txt", "extensions"}
NOT_SHIPPED = ("lab/", "tests/", "bench/", "tools/", "inventories/lab/", ".ci/", "Makefile", "ansible.cfg",
               "meta/execution-environment.yml")


def lab_passwords() -> set[str]:
    """The lab's secrets (lab/gpucloud_lab/core/secrets.py: the BMC and NVUE password the inventory holds
    vaulted, the vault password, the switches' own) and every plain value of a key named like a password
    in the lab inventory."""
    found: set[str] = set(secrets.scanned().values())

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if "password" in str(key).lower() and isinstance(value, str):
                    found.add(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    for path in sorted((Path(ROOT) / "inventories" / "lab").rglob("*.yml")):
        walk(inventory_yaml.load(path))
    return found - {"vaulted"}


@pytest.fixture(scope="module")
def built_tarball(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("build")
    build = run("ansible-galaxy", "collection", "build", "--output-path", str(out), ROOT)
    assert build.returncode == 0, build.stderr
    (tarball,) = list(out.glob("gpucloud-baremetal-*.tar.gz"))
    return tarball


def test_built_collection_ships_no_lab_tests_or_lab_passwords(built_tarball):
    passwords = lab_passwords()
    assert passwords, "no password found in inventories/lab: the check below would prove nothing"
    # A password counts where it stands as a word: not as part of a path or a longer name (lab/gpucloud-lab).
    patterns = {pw: re.compile(r"(?<![\w./-])" + re.escape(pw) + r"(?![\w-])") for pw in passwords}
    with tarfile.open(built_tarball) as tar:
        names = tar.getnames()
        leaks = [f"{member.name}: {pw}" for member in tar.getmembers() if member.isfile()
                 for pw, pattern in patterns.items()
                 if pattern.search(tar.extractfile(member).read().decode("utf-8", "replace"))]
    assert {n.split("/", 1)[0] for n in names} <= SHIPPED, sorted({n.split("/", 1)[0] for n in names} - SHIPPED)
    assert [n for n in names if n.startswith(NOT_SHIPPED) or n + "/" in NOT_SHIPPED or n in NOT_SHIPPED] == []
    assert not leaks, leaks
    assert {"inventories/example/fleet.yml", "meta/runtime.yml", "requirements.txt", "README.md"} <= set(names)


def test_execution_environment_builders_read_the_installed_collections_requirements(built_tarball, tmp_path):
    """ansible-builder's introspection (its own script, as an EE build runs it over the installed collections)
    takes an installed collection's Python and system dependencies from requirements.txt and bindep.txt."""
    import ansible_builder

    dest = tmp_path / "collections"
    install = run("ansible-galaxy", "collection", "install", "--force", "--offline", "--no-deps", "-p", str(dest),
                  str(built_tarball))
    assert install.returncode == 0, install.stderr
    script = Path(ansible_builder.__file__).parent / "_target_scripts" / "introspect.py"
    proc = run(sys.executable, str(script), "introspect", str(dest))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = yaml.safe_load(proc.stdout)
    wanted = [line.split("#")[0].strip() for line in Path(ROOT, "requirements.txt").read_text().splitlines()]
    ours = [line.split("#")[0].strip() for line in found["python"] if "from collection gpucloud.baremetal" in line]
    # ansible-builder leaves out what every EE has (ansible-core, ansible-runner, pip, setuptools).
    assert ours and set(ours) <= {w for w in wanted if w}
    assert any(line.startswith("openssh-clients [platform:rpm]") for line in found["system"])


@pytest.mark.parametrize("playbook", sorted(
    f for f in os.listdir(os.path.join(ROOT, "playbooks")) if f.endswith(".yml")))
def test_playbooks_parse(playbook):
    proc = run("ansible-playbook", "--syntax-check", "-i", EXAMPLE, os.path.join("playbooks", playbook))
    assert proc.returncode == 0, proc.stderr


def test_constructed_options_add_groups(tmp_path):
    data = fleet()
    data["keyed_groups"] = [{"key": "gpucloud_node.gpu.model", "prefix": "model"}]
    data["compose"] = {"gpu_count": "gpucloud_node.gpu.count"}
    proc = run("ansible-inventory", "-i", write_fleet(tmp_path, data), "--list")
    assert proc.returncode == 0, proc.stderr
    inv = json.loads(proc.stdout)
    assert sorted(inv["model_H100"]["hosts"]) == ["gpu01", "gpu02", "gpu03"]
    assert inv["_meta"]["hostvars"]["gpu02"]["gpu_count"] == 8
