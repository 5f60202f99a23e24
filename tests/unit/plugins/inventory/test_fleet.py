# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet inventory plugin as `ansible-inventory` runs it: where each variable lives, how the
file is read (vault, duplicate keys), and that no host carries the data of other hosts."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import yaml

from tests.support.fleet_data import fleet

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
EXAMPLE = os.path.join(ROOT, "inventories", "example", "fleet.yml")
BIN = os.path.dirname(sys.executable)
ENV = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), PATH=BIN + os.pathsep + os.environ["PATH"],
           ANSIBLE_NOCOLOR="1")


def plain(value):
    """ansible-inventory --list marks inventory strings {"__ansible_unsafe": ...}; unwrap them."""
    if isinstance(value, dict):
        if set(value) == {"__ansible_unsafe"}:
            return value["__ansible_unsafe"]
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def inventory(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([os.path.join(BIN, "ansible-inventory"), *args], cwd=ROOT, env=ENV, text=True,
                          capture_output=True, check=False)


def listed(path: str, *extra: str) -> dict:
    proc = inventory("-i", path, "--list", *extra)
    assert proc.returncode == 0, proc.stderr
    return plain(json.loads(proc.stdout))


def test_fleet_wide_data_lives_once_on_the_controller():
    inv = listed(EXAMPLE)
    hostvars = inv["_meta"]["hostvars"]
    assert inv["controller"]["hosts"] == ["localhost"]
    assert hostvars["localhost"]["ansible_connection"] == "local"
    tenants = hostvars["localhost"]["gpucloud_tenants"]
    with open(EXAMPLE) as fh:
        names = sorted(line.split(":", 1)[1].strip() for line in fh.read().split("\ntenants:", 1)[1].splitlines()
                       if line.startswith("  - name:"))
    assert sorted(t["name"] for t in tenants) == names
    carriers = sorted(h for h, v in hostvars.items() if "gpucloud_tenants" in v)
    assert carriers == ["localhost"]
    assert not [h for h, v in hostvars.items() if "gpucloud_network_os" in v]


def test_private_nodes_get_their_own_tenant_only():
    hostvars = listed(EXAMPLE)["_meta"]["hostvars"]
    cobalt = hostvars["gpu-r2-01"]["gpucloud_tenant"]
    assert cobalt["name"] == "cobalt" and cobalt["namespace"] == "tenant-cobalt"
    assert "gpu-r2-01" in cobalt["nodes"] and "gpu-r1-01" not in cobalt["nodes"]
    assert "gpucloud_tenant" not in hostvars["leaf-r1a"]


def test_export_keeps_tenant_list_on_the_controller_group():
    inv = listed(EXAMPLE, "--export")
    assert [t["name"] for t in inv["controller"]["vars"]["gpucloud_tenants"]]
    assert "gpucloud_tenants" not in inv["all"].get("vars", {})


def test_duplicate_key_is_an_error_naming_it(tmp_path):
    text = yaml.safe_dump(fleet(), sort_keys=False).replace("  vlan: 102\n", "  vlan: 102\n  vlan: 103\n", 1)
    path = tmp_path / "fleet.yml"
    path.write_text(text)
    proc = inventory("-i", str(path), "--list")
    assert proc.returncode != 0
    assert "found duplicate key 'vlan'" in proc.stderr


def test_whole_file_vault_fleet_is_read(tmp_path):
    pw = tmp_path / "pw"
    pw.write_text("fleet-vault-pass\n")
    path = tmp_path / "fleet.yml"
    path.write_text(yaml.safe_dump(fleet(), sort_keys=False))
    enc = subprocess.run([os.path.join(BIN, "ansible-vault"), "encrypt", "--vault-password-file", str(pw), str(path)],
                         env=ENV, capture_output=True, text=True, check=False)
    assert enc.returncode == 0, enc.stderr
    assert path.read_text().startswith("$ANSIBLE_VAULT;")
    inv = listed(str(path), "--vault-password-file", str(pw))
    assert inv["tenant_acme"]["hosts"] == ["gpu01"]


def test_wireguard_tunnels_live_on_the_gateway_and_the_private_nodes_only():
    hostvars = listed(os.path.join(ROOT, "inventories", "lab", "fleet.yml"))["_meta"]["hostvars"]
    carriers = sorted(h for h, v in hostvars.items() if "gpucloud_wireguard_tunnels" in v)
    assert carriers == ["cp", "gpu1"]  # the lab's gateway and its one private node
    (node,) = hostvars["gpu1"]["gpucloud_wireguard_tunnels"]
    assert (node["tenant"], node["interface"], node["address"]) == ("acme", "wg-acme", "10.201.0.21/24")
    assert [(p["host"], p["endpoint"], p["keepalive"]) for p in node["peers"]] == [
        ("cp", "198.51.100.11:51820", True)]
    (gateway,) = hostvars["cp"]["gpucloud_wireguard_tunnels"]
    assert [(p["host"], p["allowed"], p["endpoint"]) for p in gateway["peers"]] == [("gpu1", "10.201.0.21/32", None)]


def test_a_nodes_bmc_is_a_variable_of_its_own_and_never_in_its_node_entry():
    hostvars = listed(EXAMPLE)["_meta"]["hostvars"]
    nodes = [h for h, v in hostvars.items() if "gpucloud_node" in v]
    assert nodes and all("bmc" not in hostvars[h]["gpucloud_node"] for h in nodes)
    bmc = hostvars["gpu-r1-01"]["gpucloud_bmc"]
    assert (bmc["address"], bmc["username"], set(bmc["password"])) == ("10.0.2.21", "admin", {"__ansible_vault"})
    carriers = sorted(h for h, v in hostvars.items() if "gpucloud_bmc" in v)
    assert carriers == sorted(nodes)


def test_nodes_are_reached_with_their_host_key_checked_against_the_sites_known_hosts(tmp_path):
    default = listed(EXAMPLE, "--export")["gpu_nodes"]["vars"]
    assert default["ansible_ssh_common_args"] == (
        "-o StrictHostKeyChecking=yes -o UserKnownHostsFile=~/.ansible/gpucloud/known_hosts"
        " -o GlobalKnownHostsFile=/dev/null")
    assert default["os_install_known_hosts"] == "~/.ansible/gpucloud/known_hosts"
    # a variable, so that ansible-runner's ANSIBLE_HOST_KEY_CHECKING=False cannot turn the check off
    assert default["ansible_ssh_host_key_checking"] is True
    data = fleet()
    data["site"]["ssh_known_hosts"] = "/etc/gpucloud/fra1.known_hosts"
    path = tmp_path / "fleet.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    hostvars = listed(str(path))["_meta"]["hostvars"]
    for name in ("gpu01", "gpu02"):
        assert "UserKnownHostsFile=/etc/gpucloud/fra1.known_hosts " in hostvars[name]["ansible_ssh_common_args"]
        assert hostvars[name]["os_install_known_hosts"] == "/etc/gpucloud/fra1.known_hosts"
    others = [h for h, v in hostvars.items() if "gpucloud_node" not in v]
    assert others and not [h for h in others if "ansible_ssh_common_args" in hostvars[h]]


def test_an_inventorys_own_group_vars_keep_their_ssh_options():
    """The lab inventory keeps its own known_hosts (group_vars/all.yml, gpu_nodes.yml) over the fleet's."""
    hostvars = listed(os.path.join(ROOT, "inventories", "lab"))["_meta"]["hostvars"]
    assert "UserKnownHostsFile=/var/lib/gpucloud-lab/ssh/known_hosts" in hostvars["gpu1"]["ansible_ssh_common_args"]
    assert hostvars["gpu1"]["os_install_known_hosts"] == "/var/lib/gpucloud-lab/provision/known_hosts"
