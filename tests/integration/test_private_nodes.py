# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Private nodes' WireGuard tunnels against the lab: real wireguard-go on the lab hosts, and the gateway's
forwarding and firewall as real nftables rules in the control-plane host's kernel.

The lab fleet has one private tenant (acme: gpu1). These tests add a second one (zeta: gpu3) in a
copy of the lab inventory, so that isolation between two tenants is tried for real.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.integration.lab import LAB_INVENTORY, Lab, config, hostvars, kubectl, on

PLAYBOOK = "playbooks/private_nodes.yml"
NODE_CHECK = "Refuse a node that is a working Node of its cluster"  # role os_install, tasks/node_check.yml
# acme is the lab fleet's private tenant (gpu1): its hub and node addresses as the inventory derives them.
ACME = next(t for t in hostvars()["localhost"]["gpucloud_tenants"] if t["name"] == "acme")
ACME_HUB, ACME_GPU1 = ACME["wireguard"]["hub_ip"], hostvars()["gpu1"]["gpucloud_node"]["wireguard_ip"]
# zeta is this file's own second private tenant (gpu3), in a copy of the lab inventory (two_tenants).
ZETA_SUBNET = "10.202.0.0/24"
ZETA_HUB, ZETA_GPU3 = "10.202.0.1", "10.202.0.23"
TOKEN = re.compile(rb"\b[a-z0-9]{6}\.[a-z0-9]{16}\b")  # a bootstrap token (id.secret)


@pytest.fixture(scope="module")
def two_tenants(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lab inventory with a second private tenant, zeta, owning gpu3."""
    inv = tmp_path_factory.mktemp("inventory") / "lab"
    shutil.copytree(LAB_INVENTORY, inv)
    fleet = config.read_fleet(inv / "fleet.yml")
    fleet["tenants"].append({
        "name": "zeta", "isolation": "private", "vlan": 103, "vni": 10103,
        "vrf": {"name": "zeta", "l3vni": 50103}, "subnet": "10.103.0.0/24",
        "gpu": {"quota": 8, "limit": 8, "over_quota_weight": 1},
        "wireguard": {"subnet": ZETA_SUBNET, "port": 51821},
    })
    for node in fleet["nodes"]:
        if node["name"] == "gpu3":
            node["tenant"] = "zeta"
    config.write_fleet(inv / "fleet.yml", fleet)
    return inv


TUNNELS_ONLY = {"private_node_join_join": False}  # zeta has no control plane: tunnels only


@pytest.fixture
def tunnels(lab: Lab, two_tenants: Path):
    down = {"private_node_join_state": "absent", **TUNNELS_ONLY}
    assert lab.playbook(PLAYBOOK, down, inventory=two_tenants).rc == 0  # from no tunnels at all
    yield two_tenants
    gone = lab.playbook(PLAYBOOK, down, inventory=two_tenants)
    assert gone.rc == 0, gone.failures()


def _connects(host: str, address: str, port: int = 443, seconds: int = 3) -> str:
    """'open', 'refused' (something answered with a reset) or 'dropped' (no answer): a TCP connect from host."""
    rc = on(host, f"timeout {seconds} bash -c 'exec 3<>/dev/tcp/{address}/{port}'", check=False).returncode
    return {0: "open", 124: "dropped"}.get(rc, "refused")


def _retired_keys_only(host: str) -> list[str]:
    """What is left in /etc/wireguard: only private keys moved aside (0600), no configuration, no live key."""
    names = on(host, "ls /etc/wireguard").stdout.split()
    assert all(".key.retired-" in n for n in names), (host, names)
    modes = on(host, "stat -c %a /etc/wireguard/*.retired-* 2>/dev/null; true").stdout.split()
    assert set(modes) <= {"600"}, (host, modes)
    return names


def _ping(host: str, address: str, tries: int = 5) -> bool:
    for _attempt in range(tries):
        if on(host, f"ping -c 1 -W 2 {address}", check=False).returncode == 0:
            return True
        time.sleep(1)
    return False


def _public_key(host: str, interface: str) -> str:
    return on(host, f"wg show {interface} public-key").stdout.strip()


def _peers(host: str, interface: str) -> set[str]:
    return set(on(host, f"wg show {interface} peers").stdout.split())


def test_tunnels_up_isolated_idempotent_rotatable_and_secret(lab: Lab, tunnels: Path, tmp_path: Path) -> None:
    first = lab.playbook(PLAYBOOK, TUNNELS_ONLY, inventory=tunnels, verbosity=3, artifacts=tmp_path / "runner")
    assert first.rc == 0, first.failures()
    assert set(first.hosts_with("changed")) == {"cp", "gpu1", "gpu3"}

    # Traffic across the tunnel (the gateway answers nothing from a tunnel but the hub's API port, so the
    # gateway pings the nodes), and a recent handshake.
    assert _ping("cp", ACME_GPU1) and _ping("cp", ZETA_GPU3)
    handshakes = on("gpu1", "wg show wg-acme latest-handshakes").stdout.split()
    assert len(handshakes) == 2 and time.time() - int(handshakes[1]) < 120, handshakes

    # Keys: 0600 in a 0700 directory, generated on the host, never in ansible-runner's artifacts of a -vvv run.
    assert on("gpu1", "stat -c %a /etc/wireguard /etc/wireguard/wg-acme.key").stdout.split() == ["700", "600"]
    secrets = {on(h, f"cat /etc/wireguard/{i}.key").stdout.strip()
               for h, i in (("gpu1", "wg-acme"), ("gpu3", "wg-zeta"), ("cp", "wg-acme"), ("cp", "wg-zeta"))}
    assert len(secrets) == 4  # one key per interface: the gateway's tenants do not share a key
    leaked = [str(f) for f in (tmp_path / "runner").rglob("*") if f.is_file()
              and any(s.encode() in f.read_bytes() for s in secrets)]
    assert not leaked, leaked
    assert "PrivateKey" not in on("gpu1", "cat /etc/wireguard/wg-acme.conf").stdout  # loaded from the key file

    # Isolation: acme's node has only acme's gateway as peer and cannot reach zeta's gateway or node.
    assert _peers("gpu1", "wg-acme") == {_public_key("cp", "wg-acme")}
    assert _public_key("cp", "wg-zeta") not in _peers("gpu1", "wg-acme")
    assert _peers("cp", "wg-zeta") == {_public_key("gpu3", "wg-zeta")}
    assert not _ping("gpu1", ZETA_HUB, tries=1) and not _ping("gpu1", ZETA_GPU3, tries=1)
    assert "wg-zeta" not in on("gpu1", "ip -o link show").stdout
    assert "wg-" not in on("gpu2", "ip -o link show").stdout  # a shared node has no tunnel

    # A second run changes nothing and keeps the keys.
    before = {h: _public_key(h, i) for h, i in (("gpu1", "wg-acme"), ("gpu3", "wg-zeta"))}
    second = lab.playbook(PLAYBOOK, TUNNELS_ONLY, inventory=tunnels)
    assert second.rc == 0 and second.changed_tasks() == [], second.changed_tasks()
    # A node left out (unreachable, --limit) keeps its peer: the gateway reads its key from its configuration.
    limited = lab.playbook(PLAYBOOK, TUNNELS_ONLY, inventory=tunnels, limit="cp,gpu1")
    assert limited.rc == 0 and limited.changed_tasks() == [], limited.failures() or limited.changed_tasks()
    assert {h: _public_key(h, i) for h, i in (("gpu1", "wg-acme"), ("gpu3", "wg-zeta"))} == before

    # Rotation replaces the keys only when asked, and the tunnel is back right after.
    rotated = lab.playbook(PLAYBOOK, {"wireguard_rotate": True, "private_node_join_tenants": ["acme"], **TUNNELS_ONLY},
                           inventory=tunnels)
    assert rotated.rc == 0, rotated.failures()
    assert _public_key("gpu3", "wg-zeta") == before["gpu3"]  # only the named tenant's tunnels
    assert _public_key("gpu1", "wg-acme") != before["gpu1"]
    assert _peers("cp", "wg-acme") == {_public_key("gpu1", "wg-acme")}
    assert _ping("cp", ACME_GPU1)


def test_missing_gateway_is_named(lab: Lab, tmp_path: Path) -> None:
    inv = tmp_path / "lab"
    shutil.copytree(LAB_INVENTORY, inv)
    fleet = config.read_fleet(inv / "fleet.yml")
    del fleet["site"]["host_cluster"]["wireguard_gateway"]
    config.write_fleet(inv / "fleet.yml", fleet)
    run = lab.playbook(PLAYBOOK, TUNNELS_ONLY, inventory=inv, check=True)
    assert run.rc != 0
    assert any("site.host_cluster.wireguard_gateway" in f for f in run.failures()), run.failures()


def test_decommission_leaves_no_interface_peer_or_file(lab: Lab, tunnels: Path) -> None:
    up = lab.playbook(PLAYBOOK, TUNNELS_ONLY, inventory=tunnels)
    assert up.rc == 0, up.failures()
    gone = lab.playbook(PLAYBOOK, {"private_node_join_state": "absent", **TUNNELS_ONLY}, inventory=tunnels)
    assert gone.rc == 0, gone.failures()
    for host in ("cp", "gpu1", "gpu3"):
        assert "wg-" not in on(host, "ip -o link show").stdout, host
        assert len(_retired_keys_only(host)) >= 1, host  # keys are moved aside, never deleted
    again = lab.playbook(PLAYBOOK, {"private_node_join_state": "absent", **TUNNELS_ONLY}, inventory=tunnels)
    assert again.rc == 0 and again.changed_tasks() == [], again.changed_tasks()


def _tenant_kubectl(kubeconfig: Path, *args: str) -> str:
    return kubectl(*args, kubeconfig=kubeconfig).stdout


def _prepare_kernels(lab: Lab) -> None:
    """What gpu_hosts.yml does before any join: kubeadm's preflight checks ip_forward and bridge-nf-call-iptables."""
    prepared = lab.playbook("kubernetes_node.yml", {"lab_join_hosts": "private_nodes"})
    assert prepared.rc == 0, prepared.failures()


def _gate_passed(node: str) -> bool:
    """What the node's last GPU gate report says, as role gpu_gate keeps it with the node's lifecycle record on the
    boot server (a private node's own report is its tenant's to write, so it is never read)."""
    report = on("pxe", f"cat /var/lib/gpucloud/provision/gate/{node}/latest.json", check=False).stdout
    return bool(report) and json.loads(report).get("passed") is True


def test_private_node_joins_its_tenant_through_the_tunnel_and_offboarding_takes_it_out(
        lab: Lab, tmp_path: Path) -> None:
    kdir = tmp_path / "kubeconfigs"
    extra = {"tenants_kubeconfig_dir": str(kdir)}
    _prepare_kernels(lab)
    tenants = lab.playbook("playbooks/tenants.yml", extra)
    assert tenants.rc == 0, tenants.failures()
    acme = kdir / "acme.kubeconfig"
    try:
        # gpu1 passed the GPU gate (site.yml's gate stage, or a gate run now), as a node must before it joins.
        if not _gate_passed("gpu1"):
            gated = lab.playbook("playbooks/gpu_gate.yml", {"regate": "gpu1", "confirm": "gpu1"}, limit="gpu1")
            assert gated.rc == 0 and _gate_passed("gpu1"), gated.failures()
        # From an unjoined node (site.yml may have joined it), then a tunnel that does not answer:
        # the join fails at its step and leaves the node unjoined.
        assert lab.playbook(PLAYBOOK, {**extra, "private_node_join_state": "absent"}).rc == 0
        assert lab.playbook(PLAYBOOK, {**extra, "private_node_join_join": False}).rc == 0
        on("cp", "systemctl stop wg-quick@wg-acme")
        broken = lab.playbook(PLAYBOOK, {**extra, "private_node_join_tunnel_timeout": 2}, limit="gpu1")
        assert broken.rc != 0
        assert any("private_node_join step tunnel failed on gpu1" in f for f in broken.failures()), broken.failures()
        assert on("gpu1", "test -e /etc/kubernetes/kubelet.conf", check=False).returncode != 0

        # With the gateway back (the whole play), the node joins.
        run = lab.playbook(PLAYBOOK, extra, verbosity=3, artifacts=tmp_path / "runner")
        assert run.rc == 0, run.failures()
        # No bootstrap token (format [a-z0-9]{6}.[a-z0-9]{16}) and no private key in the -vvv artifacts.
        keys = {on(h, "cat /etc/wireguard/wg-acme.key").stdout.strip().encode() for h in ("gpu1", "cp")}
        for path in (tmp_path / "runner").rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                assert not TOKEN.search(data), f"a bootstrap token in {path}"
                assert not any(k in data for k in keys), f"a WireGuard private key in {path}"
        # The tenant's API server answers on its endpoint through the tunnel, and only there: the gateway's
        # forwarding (the collection's nftables rules) takes the hub's port to the tenant's Service; nothing of
        # the lab listens on the hub address.
        version = on("gpu1", f"curl -sS --cacert /etc/kubernetes/pki/ca.crt https://{ACME_HUB}:443/version").stdout
        assert json.loads(version)["gitVersion"].startswith("v1.")
        assert on("gpu2", f"curl -sS -m 3 -k https://{ACME_HUB}:443/version", check=False).returncode != 0
        assert f"{ACME_HUB}:443" not in on("cp", "ss -Htln").stdout
        assert "dnat ip to" in on("cp", "nft list table inet gpucloud_wireguard").stdout
        # Its GPUs are advertised in its own cluster, by the GPU Operator installed there.
        allocatable = json.loads(_tenant_kubectl(acme, "get", "node", "gpu1", "-o", "json"))["status"]["allocatable"]
        assert allocatable.get("nvidia.com/gpu") == str(hostvars()["gpu1"]["gpucloud_node"]["gpu"]["count"])
        node = json.loads(_tenant_kubectl(acme, "get", "node", "gpu1", "-o", "json"))
        ready = {c["type"]: c["status"] for c in node["status"]["conditions"]}
        assert ready["Ready"] == "True" and node["metadata"]["labels"]["gpucloud.baremetal/tenant"] == "acme"
        # It joined with its passing gate report (above), so it carries the gate's label in acme's cluster, where
        # site.yml's gate stage (which labels Nodes of the host cluster) never labels it.
        assert node["metadata"]["labels"].get("gpucloud.baremetal/gpu-gate") == "passed", node["metadata"]["labels"]
        # Its kubelet gives the tunnel address (--node-ip), not the management address its default route has.
        wg_ip = hostvars()["gpu1"]["gpucloud_node"]["wireguard_ip"]
        assert f"--node-ip={wg_ip}" in on("gpu1", "cat /var/lib/kubelet/kubeadm-flags.env").stdout
        assert {"type": "InternalIP", "address": wg_ip} in node["status"]["addresses"], node["status"]["addresses"]
        # The node talks to its tenant's API server through the tunnel, with the identity of its TLS bootstrap.
        assert f"server: https://{ACME_HUB}:443" in on("gpu1", "cat /etc/kubernetes/kubelet.conf").stdout
        subject = on("gpu1", "openssl x509 -noout -subject -in /var/lib/kubelet/pki/kubelet-client-current.pem").stdout
        assert "CN = system:node:gpu1" in subject and "O = system:nodes" in subject
        csrs = json.loads(_tenant_kubectl(acme, "get", "csr", "-o", "json"))["items"]
        newest = max(csrs, key=lambda c: c["metadata"]["creationTimestamp"])
        assert newest["spec"]["username"].startswith("system:bootstrap:")
        assert newest["spec"]["signerName"] == "kubernetes.io/kube-apiserver-client-kubelet"
        assert newest["status"].get("certificate") and newest["status"]["conditions"][0]["type"] == "Approved"
        # The token is gone, and the node is in no other cluster.
        assert "bootstrap-token-" not in _tenant_kubectl(acme, "get", "secrets", "-n", "kube-system", "-o", "name")
        assert subprocess.run(["kubectl", "get", "node", "gpu1"], capture_output=True, check=False).returncode != 0
        again = lab.playbook(PLAYBOOK, extra)
        assert again.rc == 0 and again.changed_tasks() == [], again.changed_tasks()

        # Joined, gpu1 is a working Node of acme's cluster (the host cluster has no Node gpu1): a confirmed
        # reinstall reads that cluster and is refused before any BMC request or install mark.
        reinstall = lab.playbook("playbooks/provision.yml", {"reinstall": "gpu1", "confirm": "gpu1",
                                                             "os_install_tenant_kubeconfig_dir": str(kdir)},
                                 limit="pxe,gpu1")
        assert reinstall.rc != 0 and reinstall.failed_tasks() == [NODE_CHECK], reinstall.failures()
        message = reinstall.results(NODE_CHECK)["gpu1"]["msg"]
        assert message.startswith("gpu1: is a Node of the cluster of tenant acme, schedulable"), message
        assert not [e for e in reinstall.events if e.get("event_data", {}).get("host") == "gpu1"
                    and e.get("event_data", {}).get("task_action", "").endswith("redfish_system")], "the BMC was asked"
        assert on("pxe", "ls /var/lib/gpucloud/provision/gpu1.installing", check=False).returncode != 0

        # Offboarding the tenant drains and deletes its node, resets it and takes the tunnel down.
        off = lab.playbook("playbooks/tenant_offboard.yml", {**extra, "tenant": "acme", "confirm": "acme"})
        assert off.rc == 0, off.failures()
        assert "wg-" not in on("gpu1", "ip -o link show").stdout
        assert on("gpu1", "test -e /etc/kubernetes/kubelet.conf", check=False).returncode != 0
        _retired_keys_only("cp")

        # Onboarding it again is one command, tenant_onboard.yml. Checked first: nothing changes, and the node's join
        # is reported as waiting for a control plane that is not there yet. Then for real: the control plane, the
        # tunnel (beside the control plane's start), the tenant's own KAI Scheduler and GPU Operator (beside the join),
        # the join, and the node's GPUs in its cluster.
        onboard, limit = {**extra, "tenant": "acme"}, "localhost,cp,gpu1"
        checked = lab.playbook("playbooks/tenant_onboard.yml", onboard, limit=limit, check=True)
        assert checked.rc == 0, checked.failures()
        waiting = checked.results("In check mode, say that the join waits for the tenant's control plane")["gpu1"]
        assert "gpu1 would join tenant acme's control plane once it runs" in waiting["msg"], waiting
        assert kubectl("get", "namespace", "tenant-acme", check=False).returncode != 0, "check mode made a change"
        back = lab.playbook("playbooks/tenant_onboard.yml", onboard, limit=limit)
        assert back.rc == 0, back.failures()
        node = json.loads(_tenant_kubectl(acme, "get", "node", "gpu1", "-o", "json"))
        assert node["metadata"]["labels"]["gpucloud.baremetal/tenant"] == "acme"
        assert node["status"]["allocatable"].get("nvidia.com/gpu") == str(hostvars()["gpu1"]["gpucloud_node"]["gpu"]["count"])
        assert json.loads(_tenant_kubectl(acme, "get", "queue", "tenant-acme", "-o", "json"))["spec"]["resources"]
    finally:
        lab.playbook(PLAYBOOK, {**extra, "private_node_join_state": "absent"})
        for name in ("acme", "beta"):
            lab.playbook("playbooks/tenant_offboard.yml", {**extra, "tenant": name, "confirm": name}, limit="localhost")


ENDPOINT_LOG = config.LOG_DIR / "vc-endpoint-tenant-acme-acme.log"


def test_join_script_variant_fetches_the_script_with_a_live_token_only(lab: Lab, tmp_path: Path) -> None:
    """private_node_join_method=script: the node runs the control plane's /node/join?token= script
    (vCluster Pro's join; the lab's endpoint.py serves a stand-in) instead of kubeadm join."""
    extra = {"tenants_kubeconfig_dir": str(tmp_path / "kubeconfigs")}
    _prepare_kernels(lab)
    assert lab.playbook("playbooks/tenants.yml", extra).rc == 0
    acme = tmp_path / "kubeconfigs" / "acme.kubeconfig"
    assert lab.playbook(PLAYBOOK, {**extra, "private_node_join_state": "absent"}).rc == 0
    assert on("gpu1", "test -e /etc/kubernetes/kubelet.conf", check=False).returncode != 0
    served = ENDPOINT_LOG.read_text().count("script served") if ENDPOINT_LOG.exists() else 0

    script = {**extra, "private_node_join_method": "script"}
    run = lab.playbook(PLAYBOOK, script, verbosity=3, artifacts=tmp_path / "runner")
    assert run.rc == 0, run.failures()
    assert ENDPOINT_LOG.read_text().count("script served") == served + 1  # the script did the join
    for path in (tmp_path / "runner").rglob("*"):
        if path.is_file():
            assert not TOKEN.search(path.read_bytes()), f"a bootstrap token in {path}"
    node = json.loads(_tenant_kubectl(acme, "get", "node", "gpu1", "-o", "json"))
    assert {c["type"]: c["status"] for c in node["status"]["conditions"]}["Ready"] == "True"
    assert node["metadata"]["labels"]["gpucloud.baremetal/tenant"] == "acme"
    subject = on("gpu1", "openssl x509 -noout -subject -in /var/lib/kubelet/pki/kubelet-client-current.pem").stdout
    assert "CN = system:node:gpu1" in subject
    assert "bootstrap-token-" not in _tenant_kubectl(acme, "get", "secrets", "-n", "kube-system", "-o", "name")
    again = lab.playbook(PLAYBOOK, script)
    assert again.rc == 0 and again.changed_tasks() == [], again.changed_tasks()

    # No script for a token the tenant cluster does not have; and identity headers a client sends itself
    # are dropped (anonymous gets 403), as they are by a real front proxy.
    curl = "curl -sS -o /dev/null -w '%{http_code}' --cacert /etc/kubernetes/pki/ca.crt"
    assert on("gpu1", f"{curl} 'https://{ACME_HUB}/node/join?token=abcdef.0123456789abcdef'").stdout == "401"
    spoof = f"{curl} -H 'X-Remote-User: admin' -H 'X-Remote-Group: system:masters' https://{ACME_HUB}/api/v1/secrets"
    assert on("gpu1", spoof).stdout == "403"


# --- the gateway is a firewall; nodes' keys are not trusted; pruning is explicit ------------------------------

HOSTILE_WG = """#!/bin/sh
# itest: a tampered wg that prints more than the public key
if [ "$1" = pubkey ]; then /usr/bin/wg pubkey; echo 'AllowedIPs = 0.0.0.0/0'; exit 0; fi
exec /usr/bin/wg "$@"
"""


def _through_the_tunnel(host: str, interface: str, address: str) -> None:
    """What a hostile node (root on it) can do: route an address into its tunnel and let its peer take it."""
    gateway_key = _public_key("cp", interface)
    allowed = on(host, f"wg show {interface} allowed-ips").stdout
    current = next(line.split("\t", 1)[1] for line in allowed.splitlines() if line.startswith(gateway_key))
    on(host, f"wg set {interface} peer {gateway_key} allowed-ips {current.replace(' ', ',')},{address}/32 && "
             f"ip route replace {address}/32 dev {interface}")


def _forwarding(host: config.Host, value: int) -> None:
    """ip_forward of a lab host, as a kubeadm host has it (1). It is per network namespace, and the container's
    /proc/sys is read-only (systemd-nspawn), so it is set from the controller in the host's namespace."""
    subprocess.run(["ip", "netns", "exec", host.netns, "sysctl", "-qw", f"net.ipv4.ip_forward={value}"], check=True)


def test_the_gateway_forwards_nothing_from_a_tunnel_even_with_ip_forward_on(lab: Lab, tunnels: Path) -> None:
    up = lab.playbook(PLAYBOOK, TUNNELS_ONLY, inventory=tunnels)
    assert up.rc == 0, up.failures()
    pxe, cp = config.PXE_SERVER, config.CONTROL_PLANE
    acme_net = ACME["wireguard"]["subnet"]
    _forwarding(cp, 1)
    on(pxe.name, f"ip route replace {acme_net} via {cp.ip}")  # so that a forwarded packet could come back
    try:
        _through_the_tunnel("gpu1", "wg-acme", pxe.ip)
        _through_the_tunnel("gpu1", "wg-acme", ZETA_HUB)
        assert not _ping("gpu1", pxe.ip, tries=2), "the gateway forwarded a tunnel's packet to the management network"
        assert _connects("gpu1", ZETA_HUB) == "dropped", "another tenant's hub answered through the gateway"
        # The same with the collection's table gone: the test would see it (the lab network itself forwards).
        on("cp", "nft delete table inet gpucloud_wireguard")
        assert _ping("gpu1", pxe.ip), "without the firewall the packet should have passed (is the test wrong?)"
        assert _connects("gpu1", ZETA_HUB) == "refused"
    finally:
        on(pxe.name, f"ip route del {acme_net} via {cp.ip}", check=False)
        _forwarding(cp, 0)
        on("gpu1", f"ip route del {pxe.ip}/32; ip route del {ZETA_HUB}/32", check=False)
    # The next run puts the rules back.
    again = lab.playbook(PLAYBOOK, TUNNELS_ONLY, inventory=tunnels)
    assert again.rc == 0, again.failures()
    assert "gpucloud_wireguard" in on("cp", "nft list tables").stdout


def test_a_node_that_prints_more_than_its_key_is_refused(lab: Lab, tunnels: Path) -> None:
    on("gpu3", f"cat > /usr/local/sbin/wg <<'EOF'\n{HOSTILE_WG}EOF\nchmod 0755 /usr/local/sbin/wg")
    try:
        run = lab.playbook(PLAYBOOK, TUNNELS_ONLY, inventory=tunnels)
        assert run.rc != 0
        assert run.failed_tasks("gpu3") == ["Check that each public key is one WireGuard key (32 bytes, base64) "
                                            "and nothing else"]
        assert any("gpu3: `wg pubkey` for wg-zeta did not print one WireGuard public key" in f for f in run.failures())
        zeta = on("cp", "cat /etc/wireguard/wg-zeta.conf").stdout
        assert "0.0.0.0/0" not in zeta and "# gpu3" not in zeta  # the refused peer is left out
        assert _peers("cp", "wg-zeta") == set()
        assert _peers("cp", "wg-acme") == {_public_key("gpu1", "wg-acme")}  # other tenants are configured
        assert "0.0.0.0/0" not in on("cp", "wg show all allowed-ips").stdout
    finally:
        on("gpu3", "rm -f /usr/local/sbin/wg")


def test_tunnels_of_a_tenant_gone_from_the_fleet_stay_until_pruned_and_keep_their_keys(
        lab: Lab, tunnels: Path) -> None:
    up = lab.playbook(PLAYBOOK, TUNNELS_ONLY, inventory=tunnels)
    assert up.rc == 0, up.failures()
    zeta_key = on("cp", "cat /etc/wireguard/wg-zeta.key").stdout.strip()
    # The lab fleet as it is: zeta is not in it. Its tunnels are listed and kept.
    kept = lab.playbook(PLAYBOOK, TUNNELS_ONLY)
    assert kept.rc == 0, kept.failures()
    assert "wg-zeta" in on("cp", "ip -o link show").stdout
    said = json.dumps([e for e in kept.events if e.get("event") == "runner_on_ok"])
    assert "Would prune (left in place): tunnels wg-zeta of tenants zeta" in said
    assert "-e prune=true -e confirm=zeta" in said
    refused = lab.playbook(PLAYBOOK, {**TUNNELS_ONLY, "prune": True, "confirm": "acme"})
    assert refused.rc != 0 and any("confirm it with -e confirm=zeta" in f for f in refused.failures())
    assert "wg-zeta" in on("cp", "ip -o link show").stdout
    pruned = lab.playbook(PLAYBOOK, {**TUNNELS_ONLY, "prune": True, "confirm": "zeta"})
    assert pruned.rc == 0, pruned.failures()
    # (gpu3 is a shared node in the lab fleet, so this playbook no longer runs on it: only the gateway prunes.)
    assert "wg-zeta" not in on("cp", "ip -o link show").stdout
    # The newest key moved aside is this tunnel's (earlier tests of the session may have retired others).
    newest = '"$(ls -t /etc/wireguard/wg-zeta.key.retired-* | head -n 1)"'
    assert on("cp", f"cat {newest}").stdout.strip() == zeta_key
    assert set(on("cp", "stat -c %a /etc/wireguard/wg-zeta.key.retired-*").stdout.split()) == {"600"}
    assert "wg-acme" in on("cp", "ip -o link show").stdout
