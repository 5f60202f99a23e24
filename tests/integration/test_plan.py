# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/plan.yml on the example fleet, through the real ansible-playbook, no lab: every layer is
written, one file per object; a second plan changes nothing, byte for byte; --diff after one tenant's
VLAN changes names exactly the files that carry that VLAN; objects gone from the fleet are removed;
--check writes nothing; no secret of the fleet is in the plan."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ansible.constants import DEFAULT_VAULT_ID_MATCH
from ansible.parsing.vault import VaultLib, VaultSecret

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "inventories" / "example"
VAULT_PASSWORD = b"gpucloud-example"  # the example fleet's (its header says so)
BIN = os.path.dirname(sys.executable)
ENV = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), PATH=BIN + os.pathsep + os.environ["PATH"],
           ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
NODES = ["gpu-r1-01", "gpu-r1-02", "gpu-r1-03", "gpu-r1-04", "gpu-r2-01", "gpu-r2-02", "gpu-r2-03", "gpu-r2-04"]
UBUNTU, ROCKY = NODES[:4], NODES[4:]
LEAVES = {"leaf-r1a": "nvue.yaml", "leaf-r1b": "nvue.yaml", "leaf-r2a": "sonic.json", "leaf-r2b": "sonic.json"}


class _Vaulted(yaml.SafeLoader):
    pass


_Vaulted.add_constructor("!vault", lambda loader, node: {"vault": loader.construct_scalar(node)})


def plan(inventory: Path, plan_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["ansible-playbook", "-i", str(inventory / "fleet.yml"), str(ROOT / "playbooks" / "plan.yml"),
         "-e", "plan_output_dir=%s" % plan_dir, *args],
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600, check=False)


def recap(run: subprocess.CompletedProcess) -> dict[str, dict[str, int]]:
    """PLAY RECAP: host -> its counters."""
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    out = {}
    for host, counters in re.findall(r"^(\S+)\s+: (ok=.*)$", run.stdout, re.M):
        out[host] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", counters)}
    return out


def diffed(run: subprocess.CompletedProcess) -> set[str]:
    """The files the --diff output names (one unified diff per file, headed by its path in the plan)."""
    return set(re.findall(r"^\+\+\+ after: (\S+)$", run.stdout, re.M))


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def fleet_copy(tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the example inventory (fleet file and group_vars) with one edit of the fleet file's text
    (its vaulted passwords stay as they are)."""
    dest = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, dest)
    text = (dest / "fleet.yml").read_text()
    assert text.count(old) == 1, old
    (dest / "fleet.yml").write_text(text.replace(old, new))
    return dest


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    plan_dir = tmp_path_factory.mktemp("plan") / "fra1"
    return plan_dir, plan(EXAMPLE, plan_dir)


@pytest.fixture
def planned(first, tmp_path: Path) -> Path:
    """A private copy of the first plan, for a test that changes it."""
    shutil.copytree(first[0], tmp_path / "plan")
    return tmp_path / "plan"


def test_every_layer_is_written_one_file_per_object(first) -> None:
    plan_dir, run = first
    assert recap(run)["localhost"]["changed"] == 1
    expected = (
        {"pxe/dnsmasq.conf", "kai/queues.yaml", "wireguard/acme.yaml", "wireguard/cobalt.yaml"}
        | {"pxe/hosts/%s.ipxe" % n for n in NODES}
        | {"pxe/hosts/%s/%s" % (n, seed) for n in UBUNTU for seed in ("user-data", "meta-data")}
        | {"pxe/hosts/%s/ks.cfg" % n for n in ROCKY}
        | {"nodes/%s.yaml" % n for n in NODES}
        | {"vcluster/%s.%s.yaml" % (t, kind) for t in ("acme", "beta", "cobalt") for kind in ("values", "objects")}
        | {"fabric/%s.%s" % (leaf, native) for leaf, native in LEAVES.items()}
        | {"fabric/%s-frr.conf" % leaf for leaf in LEAVES}
        | {"fabric/spine1.eos.cfg", "fabric/spine2.eos.cfg"}
    )
    assert set(files(plan_dir)) == expected
    assert not (plan_dir / ".staging").exists()
    queues = yaml.safe_load((plan_dir / "kai" / "queues.yaml").read_text())
    assert [q["metadata"]["name"] for q in queues["host_cluster"]] == ["gpucloud", "tenant-beta"]
    node = yaml.safe_load((plan_dir / "nodes" / "gpu-r2-01.yaml").read_text())
    assert node["package_manager"] == "dnf" and "containerd.io" in node["packages"]
    assert json.loads((plan_dir / "fabric" / "leaf-r2a.sonic.json").read_text())  # native files, as rendered


def test_the_boot_servers_dnsmasq_conf_passes_dnsmasq_test(first) -> None:
    dnsmasq = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"
    if not os.access(dnsmasq, os.X_OK):
        pytest.skip("dnsmasq is not installed (bindep.txt): the plan's dnsmasq.conf is not checked by it")
    check = subprocess.run([dnsmasq, "--test", "--conf-file=%s" % (first[0] / "pxe" / "dnsmasq.conf")],
                           capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr


def test_a_second_plan_changes_nothing_byte_for_byte(first, planned: Path) -> None:
    before = files(planned)
    stamps = {p: (planned / p).stat().st_mtime_ns for p in before}
    again = plan(EXAMPLE, planned, "--diff")
    assert all(c["changed"] == 0 for c in recap(again).values()), recap(again)
    assert diffed(again) == set()
    assert files(planned) == before and {p: (planned / p).stat().st_mtime_ns for p in before} == stamps


def test_nothing_in_the_plan_is_a_secret(first) -> None:
    data = yaml.load((EXAMPLE / "fleet.yml").read_text(), Loader=_Vaulted)
    vault = VaultLib([(DEFAULT_VAULT_ID_MATCH, VaultSecret(VAULT_PASSWORD))])
    ciphertexts = {n["bmc"]["password"]["vault"] for n in data["nodes"]}
    passwords = {vault.decrypt(c).decode() for c in ciphertexts}
    assert passwords and all(passwords)
    needles = passwords | {line for c in ciphertexts for line in c.splitlines()[1:]} | {"$ANSIBLE_VAULT"}
    hits = {(path, n) for path, body in files(first[0]).items() for n in needles if n.encode() in body}
    assert hits == set()


def test_one_tenants_vlan_shows_in_the_files_of_the_leaves_that_carry_it(tmp_path: Path, planned: Path) -> None:
    """acme's nodes are dual-homed to leaf-r1a and leaf-r1b: its VLAN is in those two leaves' NVUE configs
    (FRR holds VRFs and VNIs, no VLAN). The example gives acme no vcluster.node_port, so its API's NodePort
    is the fleet's default, 30000 + VLAN: its vcluster.yaml changes too, and no other file."""
    run = plan(fleet_copy(tmp_path, "    vlan: 101\n", "    vlan: 100\n"), planned, "--diff")
    assert diffed(run) == {"fabric/leaf-r1a.nvue.yaml", "fabric/leaf-r1b.nvue.yaml", "vcluster/acme.values.yaml"}
    assert {h for h, c in recap(run).items() if c["changed"]} == {"localhost"}
    assert "-      vlan101:\n+      vlan100:" in run.stdout


def test_check_shows_what_a_gone_node_removes_and_then_it_is_removed(tmp_path: Path, planned: Path) -> None:
    text = (EXAMPLE / "fleet.yml").read_text()
    node = text[text.index("  - name: gpu-r1-04\n"):text.index("  - name: gpu-r2-01\n")]
    inventory = fleet_copy(tmp_path, node, "")
    before = files(planned)
    gone = {"pxe/hosts/gpu-r1-04.ipxe", "pxe/hosts/gpu-r1-04/user-data", "pxe/hosts/gpu-r1-04/meta-data",
            "nodes/gpu-r1-04.yaml"}
    # its reservation, its switch ports (shared tenant beta on swp4) and the shared pool's GPUs change too
    changed = {"pxe/dnsmasq.conf", "fabric/leaf-r1a.nvue.yaml", "fabric/leaf-r1b.nvue.yaml", "kai/queues.yaml"}
    check = plan(inventory, planned, "--check", "--diff")
    assert diffed(check) == gone | changed and recap(check)["localhost"]["changed"] == 1
    assert files(planned) == before and not (planned / ".staging").exists()
    real = plan(inventory, planned)
    assert recap(real)["localhost"]["changed"] == 1
    assert set(files(planned)) == set(before) - gone and not (planned / "pxe" / "hosts" / "gpu-r1-04").exists()
