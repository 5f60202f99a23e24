# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The provisioning stage against the lab: dnsmasq + nginx on the PXE host answered by a real DHCP
client and TFTP/HTTP fetches, the Redfish module against the emulators, and the QEMU boot target
network-booting the Debian installer from our server up to its preseed fetch."""
from __future__ import annotations

import hashlib
import ipaddress
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from tests.integration.conftest import BootChain
from tests.integration.lab import Lab, config, hostvars, kubectl, on, secrets

# isort: split
from gpucloud_lab.infra import boottarget, cloud_image, pkg_mirror  # tests.integration.lab puts lab/ on the path

PXE = config.PXE_SERVER
REPO = Path(__file__).resolve().parents[2]
GPU4 = config.BOOT_TARGET  # the boot target; powered off while a test client borrows its MAC
GPU1 = config.host("gpu1")
PXE_ROOT = config.STATE_DIR / "hosts" / PXE.name / "root"
DNSMASQ_CONF = "/etc/dnsmasq.d/gpucloud-pxe.conf"
ACCESS_LOG = "/var/log/nginx/gpucloud-pxe.access.log"
ERROR_LOG = "/var/log/gpucloud-pxe/phone-home.error.log"  # role pxe_server's pxe_server_phone_home_error_log
HTTP = config.PXE_HTTP_URL
GPU4_CIDR = f"{config.BOOT_TARGET.ip}/{config.PREFIX_LEN}"  # the boot target's address as its installer sets it
GPU4_MAC = GPU4.mac
UNKNOWN_MAC = "52:54:00:99:99:01"
TIMINGS = config.LOG_DIR / "provision-timings.json"
FLEET_RANGE = tuple(str(a) for a in config.fleet()["site"]["management"]["dhcp_range"])
# The site's own DHCP server of the proxy test: addresses of the lab subnet that the lab fleet does not use.
SITE_IP = str(config.SUBNET[250])
SITE_RANGE = (str(config.SUBNET[230]), str(config.SUBNET[239]))
UDHCPC_SCRIPT = """#!/bin/sh
[ "$1" = bound ] && env | grep -E '^(ip|boot_file|siaddr|hostname|dns|router)=' > "$UDHCPC_OUT"
exit 0
"""


def pxe(command: str) -> str:
    return on(PXE.name, command).stdout


def _in_range(address: str, bounds: tuple[str, ...]) -> bool:
    first, last = (ipaddress.ip_address(b) for b in bounds)
    return first <= ipaddress.ip_address(address) <= last


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def dnsmasq_pid() -> str:
    return pxe("systemctl show -p MainPID --value dnsmasq").strip()


@pytest.fixture(scope="module")
def served(lab: Lab) -> Lab:
    run = lab.playbook("playbooks/provision.yml", limit="pxe")
    assert run.rc == 0, run.failures()
    return lab


@pytest.fixture
def client(tmp_path: Path) -> Iterator:
    """A DHCP client (busybox udhcpc) in a namespace of its own on the lab segment."""
    ns, port = "gcl-dhcptest", "gcldhcpt0"
    _remove_client(ns, port)  # a previous test's pair may still be going away (veth removal is async)
    subprocess.run(["ip", "netns", "add", ns], check=True)
    script = tmp_path / "udhcpc.sh"
    script.write_text(UDHCPC_SCRIPT)
    script.chmod(0o755)
    try:
        subprocess.run(["ip", "link", "add", port, "netns", config.LAB_NETNS, "type", "veth", "peer", "name", "eth0",
                        "netns", ns], check=True)
        subprocess.run(["ip", "-n", config.LAB_NETNS, "link", "set", port, "master", config.BRIDGE, "up"], check=True)

        def dhcp(mac: str, ipxe: bool = False, arch: int | None = None, vendor: str | None = None) -> dict[str, str]:
            subprocess.run(["ip", "-n", ns, "addr", "flush", "dev", "eth0"], check=True)
            subprocess.run(["ip", "-n", ns, "link", "set", "eth0", "down"], check=True)
            subprocess.run(["ip", "-n", ns, "link", "set", "eth0", "address", mac, "up"], check=True)
            out = tmp_path / f"lease-{mac}-{ipxe}-{arch}"
            cmd = ["ip", "netns", "exec", ns, "busybox", "udhcpc", "-i", "eth0", "-f", "-q", "-n", "-R",
                   "-t", "5", "-T", "2", "-s", str(script)] + (["-x", "0xaf:0101"] if ipxe else [])
            if vendor is not None:  # option 60, e.g. PXEClient
                cmd += ["-V", vendor]
            if arch is not None:  # option 93, client system architecture (RFC 4578): 7 is x86-64 UEFI
                cmd += ["-x", "0x5d:%04x" % arch]
            run = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "UDHCPC_OUT": str(out)},
                                 check=False, timeout=60)
            assert run.returncode == 0, run.stderr
            lease = dict(line.split("=", 1) for line in out.read_text().splitlines())
            subprocess.run(["ip", "-n", ns, "addr", "add", f"{lease['ip']}/{config.PREFIX_LEN}", "dev", "eth0"],
                           check=True)
            return lease

        def tftp(name: str, dest: Path) -> None:
            subprocess.run(["ip", "netns", "exec", ns, "busybox", "tftp", "-g", "-r", name, "-l", str(dest),
                            PXE.ip], check=True, timeout=60)

        yield dhcp, tftp
    finally:
        _remove_client(ns, port)


def _remove_client(ns: str, port: str) -> None:
    """Remove the client's veth pair and namespace, and wait until the lab's end is gone."""
    subprocess.run(["ip", "-n", config.LAB_NETNS, "link", "del", port], check=False, capture_output=True)
    subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        gone = subprocess.run(["ip", "-n", config.LAB_NETNS, "link", "show", port], check=False, capture_output=True)
        if gone.returncode != 0:
            return
        time.sleep(0.2)


def power(lab: Lab, state: str, **extra) -> object:
    return lab.playbook("provision_bmc.yml", {"lab_power": state, **extra})


def test_pxe_server_is_idempotent_and_check_mode_touches_nothing(served: Lab) -> None:
    again = served.playbook("playbooks/provision.yml", limit="pxe")
    assert again.rc == 0 and not again.hosts_with("changed"), again.changed_tasks()
    before, pid = sha(PXE_ROOT / DNSMASQ_CONF.lstrip("/")), dnsmasq_pid()
    check = served.playbook("playbooks/provision.yml", {"pxe_server_lease_time": "6h"}, limit="pxe", check=True)
    assert check.rc == 0, check.failures()
    assert "Configure dnsmasq (checked with dnsmasq --test first)" in check.changed_tasks("pxe")
    assert sha(PXE_ROOT / DNSMASQ_CONF.lstrip("/")) == before and dnsmasq_pid() == pid


def test_dhcp_client_gets_reservation_boot_file_and_ipxe_script(served: Lab, client) -> None:
    dhcp, tftp = client
    off = power(served, "off")
    assert off.rc == 0, off.failures()
    firmware = dhcp(GPU4_MAC)
    assert (firmware["ip"], firmware["hostname"], firmware["boot_file"]) == (GPU4.ip, GPU4.name, "undionly.kpxe")
    assert firmware["siaddr"] == PXE.ip and firmware["dns"].split() == [config.GATEWAY_IP]
    fetched = Path(f"/tmp/gpucloud-tftp-{os.getpid()}")
    try:
        tftp("undionly.kpxe", fetched)
        assert sha(fetched) == sha(PXE_ROOT / "usr/lib/ipxe/undionly.kpxe")
    finally:
        fetched.unlink(missing_ok=True)
    ipxe = dhcp(GPU4_MAC, ipxe=True)
    assert ipxe["boot_file"] == f"{HTTP}/hosts/gpu4.ipxe"

    def script() -> str:
        with urllib.request.urlopen(ipxe["boot_file"], timeout=10) as response:
            return response.read().decode()

    # The installer only while gpu4 is marked installing (os_install's mark); else the boot-from-disk script.
    mark = PXE_ROOT / "var/lib/gpucloud/provision/gpu4.installing"
    kept = mark.read_text() if mark.exists() else None
    mark.parent.mkdir(parents=True, exist_ok=True)
    try:
        mark.write_text("gpu4: install started by the os_install role\n")
        installer = script()
        assert installer.startswith("#!ipxe") and f"url={HTTP}/hosts/gpu4/preseed.cfg" in installer
        mark.unlink()
        local = script()
        assert local.startswith("#!ipxe") and "exit 1" in local.splitlines() and "kernel" not in local, local
    finally:
        if kept is None:
            mark.unlink(missing_ok=True)
        else:
            mark.write_text(kept)
    unknown = dhcp(UNKNOWN_MAC, ipxe=True)
    assert "boot_file" not in unknown, "a MAC in no fleet got a boot file"
    assert _in_range(unknown["ip"], FLEET_RANGE)  # the dynamic range, nothing to boot


def test_uefi_client_gets_the_uefi_ipxe_binary_over_tftp(served: Lab, client) -> None:
    """A UEFI x86-64 firmware (DHCP option 93 = 7) of a fleet node gets snponly.efi, not the BIOS
    undionly.kpxe, and TFTP serves that file; once in iPXE it gets its script as a BIOS node does."""
    dhcp, tftp = client
    off = power(served, "off")
    assert off.rc == 0, off.failures()
    uefi = dhcp(GPU4_MAC, arch=7)
    assert (uefi["ip"], uefi["boot_file"], uefi["siaddr"]) == (GPU4.ip, "snponly.efi", PXE.ip)
    assert dhcp(GPU4_MAC, arch=0)["boot_file"] == "undionly.kpxe"  # BIOS (arch 0) for comparison
    fetched = Path(f"/tmp/gpucloud-tftp-efi-{os.getpid()}")
    try:
        tftp("snponly.efi", fetched)
        assert sha(fetched) == sha(PXE_ROOT / "usr/lib/ipxe/snponly.efi")
    finally:
        fetched.unlink(missing_ok=True)
    assert dhcp(GPU4_MAC, ipxe=True, arch=7)["boot_file"] == f"{HTTP}/hosts/gpu4.ipxe"
    assert "boot_file" not in dhcp(UNKNOWN_MAC, arch=7), "a MAC in no fleet got a boot file"


def test_broken_dnsmasq_config_never_reaches_the_service(served: Lab, client) -> None:
    conf = PXE_ROOT / DNSMASQ_CONF.lstrip("/")
    before, pid = sha(conf), dnsmasq_pid()
    broken = served.playbook("playbooks/provision.yml", {"pxe_server_dnsmasq_options": ["dhcp-range=garbage"]},
                             limit="pxe")
    assert broken.rc != 0
    assert broken.failed_tasks("pxe") == ["Configure dnsmasq (checked with dnsmasq --test first)"]
    assert "failed to validate" in " ".join(broken.failures())
    assert sha(conf) == before and dnsmasq_pid() == pid
    dhcp = client[0]
    assert "boot_file" not in dhcp(UNKNOWN_MAC)  # the old configuration still answers


class _Busy(BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        type(self).hits += 1
        self.send_response(503)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def test_bmc_failures_are_named_and_never_print_the_password(served: Lab) -> None:
    wrong = "not-the-bmc-password-42"
    denied = power(served, "read", lab_bmc={"password": wrong})
    assert denied.rc != 0
    assert any(f"gpu4: BMC https://{config.bmc_address(GPU4)}: authentication failed (HTTP 401)" in f
               for f in denied.failures()), denied.failures()
    assert wrong not in json.dumps(denied.events)
    server = ThreadingHTTPServer((config.CONTROLLER_IP, 0), _Busy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://{config.CONTROLLER_IP}:{server.server_address[1]}"
        busy = power(served, "read", lab_bmc={"url": url}, lab_retries=2)
    finally:
        server.shutdown()
    assert busy.rc != 0 and _Busy.hits == 3
    assert any(f"gpu4: BMC {url}: GET /redfish/v1/ failed 3 times, last with HTTP 503" in f
               for f in busy.failures()), busy.failures()
    assert secrets.LAB_PASSWORD not in json.dumps(busy.events)


def test_a_bmc_that_drives_another_server_is_refused_and_nothing_changes(served: Lab) -> None:
    """The fleet's MAC of gpu4 identifies its BMC's system (sushy-tools lists the system's NICs): with it the
    power request goes through; with gpu1's MAC (gpu4's BMC address copied into gpu1's entry, say) the module
    refuses before any request that changes something, naming the MACs the BMC listed."""
    before = power(served, "read", lab_expect_mac=GPU4.mac)
    assert before.rc == 0, before.failures()
    state = before.results("Power through Redfish")["gpu4"]["power_state"]
    assert before.results("Power through Redfish")["gpu4"]["mac_addresses"] == [GPU4.mac.lower()]
    other = config.host("gpu1").mac
    # (a request that would change nothing even if it went through: the boot chain may be running on gpu4)
    wrong = power(served, "on" if state == "On" else "off", lab_expect_mac=other)
    assert wrong.rc != 0 and not wrong.hosts_with("changed")
    assert any("the system it drives" in f and f"has the network interfaces {GPU4.mac.lower()}, not {other.lower()}"
               in f and "nothing was changed" in f for f in wrong.failures()), wrong.failures()
    after = power(served, "read", lab_expect_mac=GPU4.mac)
    assert after.results("Power through Redfish")["gpu4"]["power_state"] == state


RUNNING_REFUSED = "Refuse to install a node that is on but did not answer SSH (it may be running)"
KNOWN_HOSTS = config.STATE_DIR / "provision" / "known_hosts"  # os_install_known_hosts in the lab
RECORDS = "/var/lib/gpucloud/phone-home"
MARKS = "/var/lib/gpucloud/provision"  # os_install's install marks on the boot server


def _pxe_root() -> str:
    """The boot server's root folder: the inventory's, else the role's default."""
    default = yaml.safe_load((REPO / "roles/pxe_server/defaults/main.yml").read_text())["pxe_server_root"]
    return hostvars()[PXE.name].get("pxe_server_root", default)


def _mark(node: str) -> str:
    """Mark the node as being installed, as os_install does before it boots the node from the network: its one-time
    phone-home token (root's), nginx reloaded so that the node's seed carries it, then the mark. The token."""
    token = hashlib.sha256(os.urandom(32)).hexdigest()[:40]
    pxe(f"mkdir -p {MARKS} && (umask 077 && echo 'node-{node} \"{token}\";' > {MARKS}/{node}.token) && "
        f"systemctl reload nginx && echo '{node}: install started by the os_install role' > {MARKS}/{node}.installing")
    return token


REGISTRATION = "Fail when the node answers with another host key than the one it posted"


def phone_home(host: str, name: str, fields: str, token: str = "") -> str:
    """POST from host to the boot server as cloud-init's phone_home does (form fields, the seed's URL with the
    install's token); the HTTP status."""
    run = on(host, f"curl -sS -o /dev/null -w '%{{http_code}}' -X POST {fields} "
                   f"'{HTTP}/phone-home/{name}?token={token}'", check=False)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_the_phone_home_token_reaches_no_log_others_read_when_the_receiver_is_down(served: Lab) -> None:
    """nginx quotes the request line, token and all, in its error lines ("connect() failed ... request: POST
    /phone-home/NAME?token=..."): with the receiver stopped, a post is answered 502, and its error line goes to the
    phone-home location's own log in a folder of root's alone, not to nginx's logs (group adm) or the journal."""
    token = "leakcheck" + os.urandom(8).hex()
    pxe("systemctl stop gpucloud-phone-home")
    try:
        assert phone_home("gpu1", "gpu1", "--data-urlencode step=started", token) == "502"
        time.sleep(1)
        assert pxe(f"grep -rl {token} /var/log/nginx /var/log/syslog 2>/dev/null; true").strip() == ""
        assert token not in pxe("journalctl --no-pager --since '-2 min'")
        assert pxe(f"grep -c {token} {ERROR_LOG}").strip() == "1"
        assert pxe(f"stat -c '%a %U' {ERROR_LOG.rsplit('/', 1)[0]}").split() == ["700", "root"]
        assert token not in pxe(f"cat {ACCESS_LOG}")
    finally:
        pxe("systemctl start gpucloud-phone-home")


CLOUD_INIT_FIELDS = " ".join(
    [f"--data-urlencode pub_key_{t}@/etc/ssh/ssh_host_{t}_key.pub" for t in ("rsa", "ecdsa", "ed25519")]
    + ["--data-urlencode instance_id=gpu1-lab", "--data-urlencode hostname=gpu1",
       f"--data-urlencode fqdn=gpu1.{config.DOMAIN}"])


def test_registration_checks_the_host_key_the_node_posted_on_phone_home(served: Lab, tmp_path: Path) -> None:
    """gpu1, marked as being installed (the mark os_install makes before a network boot, made here), posts its real
    host keys the way cloud-init does; registration collects them into the managed known_hosts file, checks gpu1's
    SSH host key against it and clears the mark. Only an install posts, and its first post wins: a post while gpu1
    is not being installed, or a second one, replaces nothing (409). A posted key that is not gpu1's makes
    registration fail naming gpu1; without a record it falls back to waiting for SSH."""
    pxe(f"rm -f {RECORDS}/gpu1.json {MARKS}/gpu1.installing {MARKS}/gpu1.token")
    try:
        # Not being installed: a running node (or anything at its address) cannot post host keys.
        assert phone_home("gpu1", "gpu1", CLOUD_INIT_FIELDS) == "409"
        token = _mark("gpu1")
        # The seed nginx serves gpu1 carries this install's token in its phone-home URL (the rendered file has the
        # placeholder); the token file is root's alone.
        seed = on("gpu1", f"curl -fsS {HTTP}/hosts/gpu1/user-data").stdout
        assert f"/phone-home/gpu1?token={token}" in seed and "__GPUCLOUD_PHONE_HOME_TOKEN__" not in seed, seed
        assert "__GPUCLOUD_PHONE_HOME_TOKEN__" in pxe(f"cat {_pxe_root()}/http/hosts/gpu1/user-data")
        assert pxe(f"stat -c '%a %U' {MARKS}/gpu1.token").split() == ["600", "root"]
        # Without the token, or with another install's, nothing is taken.
        assert phone_home("gpu1", "gpu1", CLOUD_INIT_FIELDS) == "403"
        assert phone_home("gpu1", "gpu1", CLOUD_INIT_FIELDS, token[::-1]) == "403"
        # What the receiver refuses is not stored: a key that is no key, another node's name, a name in no fleet.
        assert phone_home("gpu1", "gpu1", "--data-urlencode pub_key_ed25519='ssh-ed25519 bm90IGEga2V5'",
                          token) == "400"
        assert phone_home("gpu1", "gpu1", "--data-urlencode 'pub_key_ed25519@/etc/ssh/ssh_host_rsa_key.pub'",
                          token) == "400"
        assert phone_home("gpu1", "gpu2", CLOUD_INIT_FIELDS, token) == "403"  # not from gpu2's address
        assert phone_home("gpu1", "nosuchnode", CLOUD_INIT_FIELDS, token) == "404"
        assert pxe(f"ls -A {RECORDS}; stat -c '%a %U' {RECORDS}").split() == ["700", "root"]

        assert phone_home("gpu1", "gpu1", CLOUD_INIT_FIELDS, token) == "204"
        # The token reaches neither nginx's access log nor the receiver's journal.
        assert token not in pxe(f"cat {ACCESS_LOG}") and "POST /phone-home/gpu1 " in pxe(f"cat {ACCESS_LOG}")
        assert token not in pxe("journalctl -u gpucloud-phone-home --no-pager")
        assert pxe(f"stat -c '%a %U' {RECORDS}/gpu1.json").split() == ["600", "root"]
        posted = sorted(" ".join(line.split()[:2]) for line in
                        on("gpu1", "cat /etc/ssh/ssh_host_*_key.pub").stdout.splitlines())
        record = json.loads(pxe(f"cat {RECORDS}/gpu1.json"))
        assert record["host_keys"] == posted and len(posted) == 3
        assert (record["source"], record["instance_id"], record["fqdn"]) == (GPU1.ip, "gpu1-lab", f"gpu1.{config.DOMAIN}")
        # The first post of an install wins: a second one (another key, from gpu1's address) is refused.
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
        other = (tmp_path / "other.pub").read_text().strip()
        assert phone_home("gpu1", "gpu1", f"--data-urlencode 'pub_key_ed25519={other}'", token) == "409"
        assert json.loads(pxe(f"cat {RECORDS}/gpu1.json"))["host_keys"] == posted

        run = served.playbook("playbooks/provision.yml", limit="pxe,gpu1,gpu2")
        assert run.rc == 0, run.failures()
        assert run.results(REGISTRATION)["gpu1"]["msg"] == "gpu1: answers SSH with a host key it posted on phone-home"
        assert any(e["event"] == "runner_on_skipped" and e["event_data"].get("task") == REGISTRATION
                   and e.get("event_data", {}).get("host") == "gpu2" for e in run.events), "gpu2 posted nothing: no key check"
        lines = [line for line in KNOWN_HOSTS.read_text().splitlines() if not line.startswith("#")]
        assert lines == [f"gpu1,{GPU1.ip} {key}" for key in posted]
        assert oct(KNOWN_HOSTS.stat().st_mode & 0o777) == "0o644"
        assert oct(KNOWN_HOSTS.parent.stat().st_mode & 0o777) == "0o700"
        # The file really pins gpu1: plain ssh with strict checking against it connects.
        strict = subprocess.run(["ssh", "-i", str(config.SSH_KEY), "-o", "BatchMode=yes",
                                 "-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={KNOWN_HOSTS}",
                                 f"root@{GPU1.ip}", "hostname"], capture_output=True, text=True, check=False)
        assert strict.stdout.strip() == "gpu1", strict.stderr
        # Registered, gpu1 is no longer being installed: no post replaces the keys the controller now trusts.
        assert pxe(f"test -e {MARKS}/gpu1.installing && echo marked || echo clear").strip() == "clear"
        assert pxe(f"test -e {MARKS}/gpu1.token && echo kept || echo gone").strip() == "gone"
        assert pxe(f"cat {MARKS}/gpu1.deployed").strip() == "gpu1: deployed (registered by the os_install role)"
        assert phone_home("gpu1", "gpu1", f"--data-urlencode 'pub_key_ed25519={other}'", token) == "409"

        again = served.playbook("playbooks/provision.yml", limit="pxe,gpu1,gpu2")
        assert again.rc == 0 and not again.hosts_with("changed"), again.changed_tasks()

        # A new install (os_install forgets the last record, then marks the node) whose post is a key gpu1 does
        # not have: registration must fail, naming gpu1.
        pxe(f"rm -f {RECORDS}/gpu1.json")
        again_token = _mark("gpu1")
        # The last install's token (a seed fetched then) is not this install's.
        assert phone_home("gpu1", "gpu1", f"--data-urlencode 'pub_key_ed25519={other}'", token) == "403"
        assert phone_home("gpu1", "gpu1", f"--data-urlencode 'pub_key_ed25519={other}'", again_token) == "204"
        check = served.playbook("playbooks/provision.yml", limit="pxe,gpu1", check=True)
        assert check.rc == 0 and KNOWN_HOSTS.read_text().count("gpu1,") == 3  # check mode writes nothing
        wrong = served.playbook("playbooks/provision.yml", limit="pxe,gpu1")
        assert wrong.rc != 0 and wrong.failed_tasks() == [REGISTRATION], wrong.failures()
        message = wrong.results(REGISTRATION)["gpu1"]["msg"]
        assert message.startswith("gpu1: its SSH host key is not one it posted on phone-home"), message
        assert f"gpu1,{GPU1.ip} {' '.join(other.split()[:2])}" in KNOWN_HOSTS.read_text()
    finally:
        pxe(f"rm -f {RECORDS}/gpu1.json {MARKS}/gpu1.installing {MARKS}/gpu1.token")
    # No record: today's behaviour (SSH answers), and gpu1's lines leave the file.
    back = served.playbook("playbooks/provision.yml", limit="pxe,gpu1")
    assert back.rc == 0, back.failures()
    assert "gpu1" not in KNOWN_HOSTS.read_text()


NO_POST = "Fail when an install sent no phone-home post in time"


def test_an_install_with_no_phone_home_post_in_time_fails_and_keeps_its_mark(served: Lab) -> None:
    """gpu1, marked as being installed, answers SSH but never posts: nothing says that what answers is the node that
    was installed, so registration fails naming gpu1, trusts no key, and the mark stays for the next run."""
    pxe(f"rm -f {RECORDS}/gpu1.json {MARKS}/gpu1.installing")
    _mark("gpu1")
    try:
        run = served.playbook("playbooks/provision.yml", {"os_install_phone_home_timeout": 5}, limit="pxe,gpu1")
        assert run.rc != 0 and run.failed_tasks() == [NO_POST], run.failures()
        message = run.results(NO_POST)["gpu1"]["msg"]
        assert message.startswith("gpu1: answers SSH but posted no phone-home record within 5 s"), message
        assert "its mark stays" in message
        assert pxe(f"test -e {MARKS}/gpu1.installing && echo marked || echo clear").strip() == "marked"
        assert "gpu1," not in (KNOWN_HOSTS.read_text() if KNOWN_HOSTS.exists() else "")
        assert REGISTRATION not in [e["event_data"].get("task") for e in run.events if e["event"] == "runner_on_ok"]
    finally:
        pxe(f"rm -f {RECORDS}/gpu1.json {MARKS}/gpu1.installing {MARKS}/gpu1.token")


DEPLOY_FAILED = "Fail when the deploy failed or did not write the image in time"


def _image_inventory(tmp_path: Path) -> Path:
    """The lab inventory with gpu1 on an image profile that brings its own deploy ramdisk (small files here: the
    deploy ramdisk's part is played by posts from gpu1, so nothing boots them and the boot server builds none)."""
    inv = tmp_path / "lab"
    shutil.copytree(REPO / "inventories" / "lab", inv)
    files = {}
    for name in ("vmlinuz", "initrd.gz", "debian-12.raw"):
        (tmp_path / name).write_bytes(os.urandom(4096))
        files[name] = (str(tmp_path / name), sha(tmp_path / name))
    fleet = (inv / "fleet.yml").read_text()
    profiles = "  os_profiles:\n"
    assert fleet.count(profiles) == 1
    profile = ("    deb12img:\n      family: debian\n      version: \"12\"\n      kind: image\n"
               f"      image: {files['debian-12.raw'][0]}\n      image_sha256: {files['debian-12.raw'][1]}\n"
               f"      kernel: {files['vmlinuz'][0]}\n      kernel_sha256: {files['vmlinuz'][1]}\n"
               f"      initrd: {files['initrd.gz'][0]}\n      initrd_sha256: {files['initrd.gz'][1]}\n")
    head, gpu1 = fleet.replace(profiles, profiles + profile).split("  - name: gpu1\n")
    gpu1 = re.sub(r"(?m)^    os: \S+$", "    os: deb12img", gpu1, count=1)
    assert "    os: deb12img\n" in gpu1.split("  - name:")[0]
    (inv / "fleet.yml").write_text(head + "  - name: gpu1\n" + gpu1)
    return inv


def _step(token: str, step: str, detail: str = "", host: str = "gpu1") -> str:
    """A step report as deploy.sh posts it (busybox wget: a form post to the node's phone-home URL)."""
    fields = f"--data-urlencode step={step}" + (f" --data-urlencode {shlex.quote('detail=' + detail)}" if detail else "")
    return phone_home(host, "gpu1", fields, token)


def test_an_image_deploy_s_steps_end_its_network_boots_and_a_failed_deploy_is_reported_at_once(
        served: Lab, tmp_path: Path) -> None:
    """gpu1 on an image profile, marked as being installed; its deploy ramdisk's reports are posted from gpu1's
    address as deploy.sh posts them. A deploy that reports failed makes provision.yml fail at once with the
    ramdisk's reason, with no power action and the mark kept. A deploy that reports done turns gpu1's network boot
    into local-boot (nginx reads the receiver's gpu1.imaged) though gpu1 is still marked, and a second start is
    refused (what a stray network boot into the ramdisk would send); once gpu1 posts its host keys, provision.yml
    registers it and clears the mark, the token and the image-written mark."""
    inv = _image_inventory(tmp_path)
    records = {name: pxe(f"cat {MARKS}/{name}") for name in pxe(f"ls {MARKS}").split()
               if name in ("gpu1.deployed", "gpu1.decommissioned")}
    pxe(f"rm -f {RECORDS}/gpu1.json {RECORDS}/gpu1.steps {MARKS}/gpu1.installing {MARKS}/gpu1.token "
        f"{MARKS}/gpu1.imaged")
    try:
        token = _mark("gpu1")
        render = served.playbook("playbooks/provision.yml", limit="pxe", inventory=inv)
        assert render.rc == 0, render.failures()
        local_boot = on("gpu2", f"curl -fsS {HTTP}/local-boot.ipxe").stdout
        assert on("gpu2", f"curl -fsS {HTTP}/hosts/gpu1.ipxe").stdout != local_boot  # marked: its deploy
        # A deploy that failed: reported at once, with the ramdisk's reason.
        assert _step(token, "started", "debian-12.raw") == "204"
        reason = "no root disk (gpucloud: root disk of gpu1: no disk matches hints serial=S5GXNG0R1)"
        assert _step(token, "failed", reason) == "204"
        failed = served.playbook("playbooks/provision.yml", {"os_install_wait_timeout": 600}, limit="pxe,gpu1",
                                 inventory=inv)
        assert failed.rc != 0 and failed.failed_tasks() == [DEPLOY_FAILED], failed.failures()
        message = failed.results(DEPLOY_FAILED)["gpu1"]["msg"]
        assert message.startswith("gpu1: its deploy failed at ") and reason in message, message
        assert "-e reinstall=gpu1 -e confirm=gpu1" in message
        assert not [e for e in failed.events if e["event"] in ("runner_on_ok", "runner_on_failed")
                    and e["event_data"].get("host") == "gpu1"
                    and e["event_data"].get("task_action", "").endswith("redfish_system")], "the BMC was asked"
        assert pxe(f"test -e {MARKS}/gpu1.installing && echo marked || echo clear").strip() == "marked"
        # A deploy that wrote its image: from done on, gpu1's network boot boots its disk, and no second start.
        pxe(f"rm -f {RECORDS}/gpu1.steps")
        for step, detail in (("started", "debian-12.raw"), ("disk", "/dev/nvme0n1"), ("image", "SHA-256 checked"),
                             ("written", "/dev/nvme0n1, partition 1 grown")):
            assert _step(token, step, detail) == "204"
        assert on("gpu2", f"curl -fsS {HTTP}/hosts/gpu1.ipxe").stdout != local_boot
        assert _step(token, "done", "debian-12.raw on /dev/nvme0n1") == "204"
        assert on("gpu2", f"curl -fsS {HTTP}/hosts/gpu1.ipxe").stdout == local_boot
        assert _step(token, "started", "debian-12.raw") == "409"
        assert _step(token, "disk", host="gpu2") == "403"  # not from gpu1's address
        assert _step(token, "rebooted") == "400"  # not a step of deploy.sh
        assert pxe(f"stat -c '%a %U' {RECORDS}/gpu1.steps").split() == ["600", "root"]
        # The deployed OS's first boot posts the host keys; registration takes them and clears every mark.
        assert phone_home("gpu1", "gpu1", CLOUD_INIT_FIELDS, token) == "204"
        done = served.playbook("playbooks/provision.yml", limit="pxe,gpu1", inventory=inv)
        assert done.rc == 0, done.failures()
        assert REGISTRATION in [e["event_data"].get("task") for e in done.events if e["event"] == "runner_on_ok"]
        left = pxe(f"ls {MARKS}").split()
        assert not {"gpu1.installing", "gpu1.token", "gpu1.imaged"} & set(left), left
        assert "gpu1.deployed" in left
        assert on("gpu2", f"curl -fsS {HTTP}/hosts/gpu1.ipxe").stdout == local_boot
    finally:
        pxe(f"rm -f {RECORDS}/gpu1.json {RECORDS}/gpu1.steps {MARKS}/gpu1.installing {MARKS}/gpu1.token "
            f"{MARKS}/gpu1.imaged {MARKS}/gpu1.deployed {MARKS}/gpu1.decommissioned")
        for name, text in records.items():
            pxe(f"printf '%s' {shlex.quote(text)} > {MARKS}/{name}")
        # The boot server as the lab fleet has it (gpu1 on its installer profile again).
        assert served.playbook("playbooks/provision.yml", limit="pxe").rc == 0


LOST = "Report a deployed or decommissioned node that does not answer (never reinstalled unless asked)"


def test_a_deployed_node_that_does_not_answer_is_reported_never_installed_again(served: Lab) -> None:
    """gpu2 answers SSH: provision.yml records it as deployed (a node installed before records existed is adopted).
    Silent afterwards (here: its SSH port taken to be one nothing listens on, as a dead sshd or a firewall would
    leave it), it is reported by name and nothing is asked of its BMC: a running node is never installed over."""
    pxe(f"rm -f {MARKS}/gpu2.installing {MARKS}/gpu2.deployed")
    adopt = served.playbook("playbooks/provision.yml", limit="pxe,gpu2")
    assert adopt.rc == 0, adopt.failures()
    assert "Record the node as deployed" in adopt.changed_tasks("gpu2")
    assert pxe(f"cat {MARKS}/gpu2.deployed").strip() == "gpu2: deployed (registered by the os_install role)"
    for check in (True, False):
        silent = served.playbook("playbooks/provision.yml", {"os_install_ssh_port": 2222}, limit="pxe,gpu2",
                                 check=check)
        assert silent.rc != 0 and silent.failed_tasks() == [LOST], silent.failures()
        message = silent.results(LOST)["gpu2"]["msg"]
        assert message.startswith(f"gpu2: deployed ({MARKS}/gpu2.deployed on pxe) but it did not answer SSH on "
                                  "port 2222"), message
        assert "-e reinstall=gpu2 -e confirm=gpu2" in message and message.endswith("Nothing was changed.")
        assert not silent.hosts_with("changed").get("gpu2"), silent.changed_tasks("gpu2")
        assert not [e for e in silent.events if e.get("event_data", {}).get("host") == "gpu2"
                    and e.get("event_data", {}).get("task_action", "").endswith("redfish_system")], "the BMC was asked"
    assert pxe(f"ls {MARKS}").split().count("gpu2.installing") == 0


def test_a_seed_is_served_only_to_its_node_and_only_while_it_is_installed(served: Lab) -> None:
    """A node's seed (its installer's answers) is served by nginx only while the node is marked installing and only
    to the node's own address: gpu2 cannot read gpu1's seed, and an installed gpu1 cannot read its own. Its iPXE
    script and the kernels stay public (they hold nothing of the node's)."""
    root = _pxe_root()
    seeds = pxe(f"ls {root}/http/hosts/gpu1/").split()
    assert seeds, "gpu1 has seed files on the boot server"
    url = f"{HTTP}/hosts/gpu1/{seeds[0]}"

    def status(host: str, target: str = url) -> str:
        return on(host, f"curl -s -o /dev/null -w '%{{http_code}}' {target}").stdout

    pxe(f"rm -f {MARKS}/gpu1.installing")
    try:
        assert (status("gpu1"), status("gpu2")) == ("403", "403")  # installed: nobody reads it
        _mark("gpu1")
        assert (status("gpu1"), status("gpu2")) == ("200", "403")  # being installed: gpu1 alone
        assert status("gpu2", f"{HTTP}/hosts/gpu1.ipxe") == "200"
    finally:
        pxe(f"rm -f {MARKS}/gpu1.installing {MARKS}/gpu1.token")


def test_a_kernel_by_url_is_served_only_after_the_boot_server_checked_its_digest(served: Lab, tmp_path: Path) -> None:
    """A profile's kernel given by URL with kernel_sha256 is fetched by the boot server, checked, and the node's iPXE
    script names the boot server's copy; a digest the file does not have fails the run and serves nothing new.
    The URL is a file the lab's package mirror serves on the controller (any file does: the check is the point)."""
    url = pkg_mirror.URL + "Release.key"
    with urllib.request.urlopen(url, timeout=10) as response:
        digest = hashlib.sha256(response.read()).hexdigest()
    root = _pxe_root()
    script = f"{root}/http/hosts/gpu4.ipxe"

    def inventory(sha: str) -> Path:
        inv = tmp_path / sha[:8] / "lab"
        if inv.exists():
            return inv
        shutil.copytree(REPO / "inventories" / "lab", inv)
        fleet = (inv / "fleet.yml").read_text()
        profile = '    debian12:\n      family: debian\n      version: "12"\n'
        assert profile in fleet
        lines = f"      kernel: {url}\n      kernel_sha256: {sha}\n"
        (inv / "fleet.yml").write_text(fleet.replace(profile, profile + lines))
        return inv

    try:
        good = served.playbook("playbooks/provision.yml", limit="pxe", inventory=inventory(digest))
        assert good.rc == 0, good.failures()
        assert pxe(f"sha256sum {root}/http/os/debian12/Release.key").split()[0] == digest
        served_script = pxe(f"cat {script}")
        assert f"{HTTP}/os/debian12/Release.key " in served_script and url not in served_script, served_script
        again = served.playbook("playbooks/provision.yml", limit="pxe", inventory=inventory(digest))
        assert again.rc == 0 and not again.hosts_with("changed"), again.changed_tasks()

        wrong = served.playbook("playbooks/provision.yml", limit="pxe", inventory=inventory("f" * 64))
        assert wrong.rc != 0
        assert wrong.failed_tasks() == ["Fetch the kernels and initrds the profiles name by URL and sha256, and "
                                        "check them"], wrong.failures()
        # It stopped there, before the scripts are swapped in; the checked copy stays as it was.
        assert pxe(f"sha256sum {root}/http/os/debian12/Release.key").split()[0] == digest
    finally:
        back = served.playbook("playbooks/provision.yml", limit="pxe")
        assert back.rc == 0, back.failures()
        assert url not in pxe(f"cat {script}")


def _access(since: float) -> list[tuple[float, str]]:
    out = []
    for line in pxe(f"cat {ACCESS_LOG}").splitlines():
        m = re.match(rf"^{re.escape(GPU4.ip)} .*\[([^\]]+)\] \"GET (\S+)", line)
        if m:
            stamp = datetime.strptime(m.group(1), "%d/%b/%Y:%H:%M:%S %z").timestamp()
            if stamp >= since - 1:
                out.append((stamp, m.group(2)))
    return out


def _dhcp_acks(since: float) -> list[tuple[float, str]]:
    log = pxe(f"journalctl -u dnsmasq --no-pager -o short-unix --since @{int(since)}")
    acks, pending = [], {}
    for line in log.splitlines():
        stamp, _sep, text = line.partition(" ")
        m = re.search(rf" (\d+) DHCPACK\(eth0\) {re.escape(GPU4.ip)} " + GPU4_MAC, text)
        if m:
            pending[m.group(1)] = float(stamp)
        m = re.search(r" (\d+) (?:bootfile name: |sent size: +\d+ option: 67 bootfile-name +)(\S+)", text)
        if m and m.group(1) in pending:
            acks.append((pending.pop(m.group(1)), m.group(2)))
    return acks + [(t, "(none)") for t in pending.values()]


def _event_time(run, task: str, host: str) -> float:
    for event in run.events:
        data = event.get("event_data", {})
        if event.get("event") == "runner_on_ok" and data.get("task") == task and data.get("host") == host:
            return datetime.fromisoformat(event["created"]).timestamp()
    raise AssertionError(f"no result of {task!r} on {host}")


@pytest.mark.boot_chain
def test_boot_target_installs_from_our_server_up_to_the_preseed(lab: Lab, boot_chain: BootChain) -> None:
    """provision.yml drives gpu4 as a real server: one-time PXE boot + power cycle over Redfish, UEFI PXE
    (OVMF) DHCP from our dnsmasq, iPXE (snponly.efi) over TFTP, our iPXE script, kernel and initrd over HTTP, the Debian installer fetching its
    preseed. The lab has no package mirror, so the install stops there. The nspawn hosts, which
    answer SSH, are left alone. The chain was started when the lab came up (conftest) and booted
    while the converged-state tests ran; this collects it."""
    run, started = boot_chain.run, boot_chain.started
    assert run.rc == 0, run.failures()
    assert "Boot once from the network and power-cycle the node" in run.changed_tasks("gpu4")
    deadline = time.monotonic() + 900
    while not any(path.endswith("/preseed.cfg") for _stamp, path in _access(started)):
        assert time.monotonic() < deadline, "the installer never fetched its preseed"
        time.sleep(5)
    access, acks = _access(started), _dhcp_acks(started)
    first = {path: stamp for stamp, path in reversed(access)}
    # UEFI as on a GPU server: the firmware's own PXE client (no iPXE option ROM on the NIC) DHCPs as architecture
    # 7 and gets snponly.efi over TFTP; that iPXE DHCPs with option 175 and gets the node's script URL.
    firmware_ack = next((t for t, f in acks if f == "snponly.efi"), None)
    assert firmware_ack is not None, ("the UEFI firmware was never answered with snponly.efi", acks)
    ipxe_ack = next(t for t, f in acks if f.endswith("/hosts/gpu4.ipxe") and t >= firmware_ack)
    timings = {
        "power_cycled": _event_time(run, "Boot once from the network and power-cycle the node", "gpu4") - started,
        "dhcp_firmware": firmware_ack - started,
        "dhcp_ipxe": ipxe_ack - started,
        "ipxe_script": first["/hosts/gpu4.ipxe"] - started,
        "kernel": first["/os/debian12/linux"] - started,
        "initrd": first["/os/debian12/initrd.gz"] - started,
        "dhcp_installer": next(t for t, _file in acks if t > first["/os/debian12/initrd.gz"]) - started,
        "preseed": first["/hosts/gpu4/preseed.cfg"] - started,
    }
    TIMINGS.write_text(json.dumps({k: round(v, 1) for k, v in timings.items()}, indent=2) + "\n")
    print("boot chain (s after provision.yml started):", json.dumps({k: round(v, 1) for k, v in timings.items()}))
    order = ["power_cycled", "dhcp_firmware", "dhcp_ipxe", "ipxe_script", "kernel", "initrd", "dhcp_installer", "preseed"]
    steps = [timings[k] for k in order]
    assert all(b >= a - 1.0 for a, b in itertools.pairwise(steps)), timings  # nginx logs whole seconds
    serial = (config.LOG_DIR / "boot-target.serial.log").read_text(errors="replace")
    assert f"url={HTTP}/hosts/gpu4/preseed.cfg" in serial  # the installer kernel booted with our command line

    again = lab.playbook("playbooks/provision.yml", limit="pxe,gpu4")
    assert again.rc == 0 and not again.hosts_with("changed"), again.changed_tasks()

    # Without its install mark gpu4 is what a running node with a dead sshd looks like: on, silent on SSH. An
    # install nobody asked for would wipe it; provision.yml refuses it (check mode too) and changes nothing.
    mark = PXE_ROOT / "var/lib/gpucloud/provision/gpu4.installing"
    aside = mark.with_name("gpu4.installing.aside")
    mark.rename(aside)
    try:
        for check in (True, False):
            on_but_silent = lab.playbook("playbooks/provision.yml", limit="pxe,gpu4", check=check)
            assert on_but_silent.rc != 0 and on_but_silent.failed_tasks() == [RUNNING_REFUSED], on_but_silent.failures()
            message = on_but_silent.results(RUNNING_REFUSED)["gpu4"]["msg"]
            assert message.startswith("gpu4: its BMC says it is On") and "-e reinstall=gpu4 -e confirm=gpu4" in message
            assert not on_but_silent.hosts_with("changed").get("gpu4"), on_but_silent.changed_tasks("gpu4")
            assert not mark.exists()
    finally:
        aside.rename(mark)

    refused = lab.playbook("playbooks/node_decommission.yml", {"node": "gpu4"})
    assert refused.rc != 0 and refused.failed_tasks() == [
        "Check that the confirmation repeats what will be acted on"]
    gone = lab.playbook("playbooks/node_decommission.yml", {"node": "gpu4", "confirm": "gpu4"})
    assert gone.rc == 0, gone.failures()
    assert "Power the node off" in gone.changed_tasks("gpu4")
    assert pxe(f"ls {MARKS}").split().count("gpu4.decommissioned") == 1
    assert "gpu4.deployed" not in pxe(f"ls {MARKS}").split()
    assert "gpu4" not in (PXE_ROOT / DNSMASQ_CONF.lstrip("/")).read_text()
    assert not (PXE_ROOT / "srv/gpucloud/http/hosts/gpu4.ipxe").exists()
    assert not (PXE_ROOT / "srv/gpucloud/http/hosts/gpu4").exists()
    state = subprocess.run(["/usr/bin/python3", "-m", "gpucloud_lab.infra.boottarget", "state"], capture_output=True,
                           text=True, check=True, env={**os.environ, "PYTHONPATH": str(lab.repo / "lab")})
    assert state.stdout.strip() == "off"
    back = lab.playbook("playbooks/provision.yml", limit="pxe")  # the fleet still has gpu4: serve it again
    assert back.rc == 0, back.failures()


@pytest.mark.boot_chain
def test_boot_target_boots_by_uefi_http_when_the_fleet_says_so(lab: Lab, tmp_path: Path) -> None:
    """gpu4 with ``bmc.boot_target: UefiHttp``: provision.yml asks its BMC for a one-time UefiHttp boot, and the
    firmware (OVMF with its PXE clients off, as when a server's BMC selects HTTP boot) DHCPs as an HTTP boot
    client (vendor class HTTPClient, architecture 16), gets iPXE by URL from the boot server's nginx (no TFTP),
    and that iPXE gets the node's script, kernel and initrd. Collected up to the initrd (the installer's boot is
    the PXE test's); then gpu4 is powered off and its install mark taken back."""
    inv = tmp_path / "lab"
    shutil.copytree(REPO / "inventories" / "lab", inv)
    fleet = (inv / "fleet.yml").read_text()
    bmc = f'      address: "{config.bmc_address(config.BOOT_TARGET)}"\n'
    assert fleet.count(bmc) == 1
    (inv / "fleet.yml").write_text(fleet.replace(bmc, bmc + "      boot_target: UefiHttp\n"))
    assert power(lab, "off").rc == 0
    # gpu4's lifecycle record as the last test left it (the install below forgets it; it comes back at the end)
    records = {name: pxe(f"cat {MARKS}/{name}") for name in pxe(f"ls {MARKS}").split()
               if name in ("gpu4.deployed", "gpu4.decommissioned")}
    # A node installed again is gated again: its GPU gate verdict (role gpu_gate's record) goes, its reports stay.
    pxe(f"mkdir -p {MARKS}/gate/gpu4/reports && echo '{{}}' > {MARKS}/gate/gpu4/latest.json"
        f" && echo '{{}}' > {MARKS}/gate/gpu4/reports/2026-01-01T000000Z.json")
    started = time.time()
    try:
        run = lab.playbook("playbooks/provision.yml", {"reinstall": "gpu4", "confirm": "gpu4"}, limit="pxe,gpu4",
                           inventory=inv)
        assert run.rc == 0, run.failures()
        kept = [f"{MARKS}/gate/gpu4:", "reports", f"{MARKS}/gate/gpu4/reports:", "2026-01-01T000000Z.json"]
        assert pxe(f"ls -R {MARKS}/gate/gpu4").split() == kept, "the reinstall kept gpu4's gate verdict"
        sent = run.results("Boot once from the network and power-cycle the node")["gpu4"]
        assert sent["boot"]["target"] == "UefiHttp", sent["boot"]
        deadline = time.monotonic() + 300
        while "/os/debian12/initrd.gz" not in [path for _stamp, path in _access(started)]:
            assert time.monotonic() < deadline, ("gpu4 never fetched its initrd", _access(started), _dhcp_acks(started))
            time.sleep(3)
        access, acks = _access(started), _dhcp_acks(started)
        first = {path: stamp for stamp, path in reversed(access)}
        firmware = [t for t, f in acks if f == f"{HTTP}/ipxe/snponly.efi"]
        assert firmware and not [f for _t, f in acks if f == "snponly.efi"], ("no HTTP boot offer, or TFTP", acks)
        log = pxe(f"journalctl -u dnsmasq --no-pager --since @{int(started)}")
        assert "vendor class: HTTPClient:Arch:00016" in log, "the firmware did not DHCP as a UEFI HTTP boot client"
        order = [firmware[0], first["/ipxe/snponly.efi"], first["/hosts/gpu4.ipxe"], first["/os/debian12/linux"],
                 first["/os/debian12/initrd.gz"]]
        assert all(b >= a - 1.0 for a, b in itertools.pairwise(order)), order  # nginx logs whole seconds
        assert pxe(f"sha256sum {_pxe_root()}/http/ipxe/snponly.efi").split()[0] == sha(
            PXE_ROOT / "usr/lib/ipxe/snponly.efi")
        timings = json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
        timings["uefi_http"] = {"dhcp_firmware": round(firmware[0] - started, 1),
                                "ipxe_by_http": round(first["/ipxe/snponly.efi"] - started, 1),
                                "ipxe_script": round(first["/hosts/gpu4.ipxe"] - started, 1),
                                "initrd": round(first["/os/debian12/initrd.gz"] - started, 1)}
        TIMINGS.write_text(json.dumps(timings, indent=2) + "\n")
        print("UEFI HTTP boot (s after provision.yml started):", json.dumps(timings["uefi_http"]))
    finally:
        assert power(lab, "off").rc == 0
        pxe(f"rm -f {MARKS}/gpu4.installing {MARKS}/gpu4.token && rm -rf {MARKS}/gate/gpu4")
        for name, text in records.items():
            pxe(f"printf '%s' {shlex.quote(text)} > {MARKS}/{name}")
        # The boot server as the lab's own fleet has it (this test's fleet copy differs in gpu4's boot target).
        back = lab.playbook("playbooks/provision.yml", limit="pxe")
        assert back.rc == 0, back.failures()


IMAGE_TIMINGS = config.LOG_DIR / "image-deploy-timings.json"


def _utc(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def lab_debian_mirror() -> str:
    """The site Debian mirror the lab's boot server lists (lab/gpucloud_lab/infra/debian_mirror.py)."""
    return f"http://{config.CONTROLLER_IP}:{config.PKG_MIRROR_PORT}/debian"


def _host_key_answers(known_hosts: Path) -> subprocess.CompletedProcess:
    """What registration runs: gpu4's SSH host key against the managed known_hosts file, no credential offered."""
    return subprocess.run(["ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o",
                           f"UserKnownHostsFile={known_hosts}", "-o", "GlobalKnownHostsFile=/dev/null", "-o",
                           "ConnectTimeout=10", "-o", "PubkeyAuthentication=no", "-o", "PasswordAuthentication=no",
                           "-o", "KbdInteractiveAuthentication=no", f"gpucloud-registration@{GPU4.ip}", "true"],
                          capture_output=True, text=True, check=False, timeout=60)


def _gpu4_image_inventory(tmp_path: Path, image: Path, boot_target: str = "") -> Path:
    """A copy of the lab's inventory with gpu4 on an image profile (the lab's Debian 12 cloud image as a qcow2 from
    the lab's image mirror, with its digest; root disk by serial), booted by ``boot_target`` when given."""
    inv = tmp_path / "lab"
    shutil.copytree(REPO / "inventories" / "lab", inv)
    fleet = (inv / "fleet.yml").read_text()
    profiles = "  os_profiles:\n"
    assert fleet.count(profiles) == 1
    fleet = fleet.replace(profiles, profiles + (
        "    deb12cloud:\n      family: debian\n      version: \"12\"\n      kind: image\n"
        f"      image: {cloud_image.QCOW2_URL}\n      image_sha256: {cloud_image.sha256(image)}\n"))
    head, gpu4 = fleet.split("  - name: gpu4\n")
    gpu4 = re.sub(r"(?m)^    os: \S+$", "    os: deb12cloud", gpu4, count=1)
    assert "    os: deb12cloud\n" in gpu4.split("  - name:")[0]
    ip = f"    ip: {config.BOOT_TARGET.ip}\n"
    assert gpu4.split("  - name:")[0].count(ip) == 1
    gpu4 = gpu4.replace(ip, ip + f"    root_device: {{serial: {boottarget.DISK_SERIAL}}}\n", 1)
    if boot_target:
        bmc = f'      address: "{config.bmc_address(config.BOOT_TARGET)}"\n'
        assert gpu4.count(bmc) == 1
        gpu4 = gpu4.replace(bmc, bmc + f"      boot_target: {boot_target}\n")
    (inv / "fleet.yml").write_text(head + "  - name: gpu4\n" + gpu4)
    return inv


def _gpu4_off_with_its_records(lab: Lab) -> dict[str, str]:
    """gpu4 powered off, and its lifecycle records as the last test left them (a reinstall forgets them;
    ``_give_back_deployed_gpu4`` puts them back)."""
    assert power(lab, "off").rc == 0
    return {name: pxe(f"cat {MARKS}/{name}") for name in pxe(f"ls {MARKS}").split()
            if name in ("gpu4.deployed", "gpu4.decommissioned")}


def _deploy_gpu4(lab: Lab, inv: Path) -> tuple:
    """``provision.yml -e reinstall=gpu4 -e confirm=gpu4`` with inventory ``inv``, waiting for the deploy and the
    registration (the lab's group vars do not wait for gpu4: its installer profile stops at the preseed); the run
    and gpu4's serial console, which a failure shows."""
    run = lab.playbook("playbooks/provision.yml", {"reinstall": "gpu4", "confirm": "gpu4", "os_install_wait": True,
                                                   "os_install_wait_timeout": 1200}, limit="pxe,gpu4", inventory=inv)
    serial = (config.LOG_DIR / "boot-target.serial.log").read_text(errors="replace")
    assert run.rc == 0, (run.failures(), serial[-3000:])
    return run, serial


def _give_back_deployed_gpu4(lab: Lab, records: dict[str, str]) -> None:
    """After a deploy of gpu4: it is powered off; its marks, its lifecycle record and its phone-home record and step
    reports go (the next tests expect the boot server's records and the known_hosts file to hold none of gpu4's),
    and so do the lines registration wrote for it in the managed known_hosts file (other nodes' lines stay); the
    lifecycle records it had before (``records``) come back, and the boot server is as the lab's own fleet has it."""
    assert power(lab, "off").rc == 0
    pxe(f"rm -f {MARKS}/gpu4.installing {MARKS}/gpu4.token {MARKS}/gpu4.imaged {MARKS}/gpu4.deployed "
        f"{RECORDS}/gpu4.json {RECORDS}/gpu4.steps")
    if KNOWN_HOSTS.exists():
        kept = [line for line in KNOWN_HOSTS.read_text().splitlines() if not line.startswith(f"gpu4,{GPU4.ip} ")]
        KNOWN_HOSTS.write_text("".join(line + "\n" for line in kept))
    for name, text in records.items():
        pxe(f"printf '%s' {shlex.quote(text)} > {MARKS}/{name}")
    back = lab.playbook("playbooks/provision.yml", limit="pxe")
    assert back.rc == 0, back.failures()


@pytest.mark.boot_chain
def test_boot_target_deploys_a_cloud_image_and_registers_with_the_keys_it_posted(lab: Lab, tmp_path: Path) -> None:
    """gpu4 bare (an empty disk) to SSH, as a GPU server: gpu4 on an image profile (the lab's Debian 12 cloud image
    as a qcow2, as vendors publish theirs, served by the lab's image mirror, checked by the boot server against the
    fleet's digest and converted there to raw.zst; root disk by serial), provision.yml -e reinstall=gpu4 -e
    confirm=gpu4: the boot server builds the deploy ramdisk from the site's Debian mirror, a one-time network boot
    over Redfish, UEFI PXE, iPXE, the deploy ramdisk writing the image (its step reports on the boot server), the
    reboot (network first in the boot order: the boot server answers local-boot, the firmware boots the disk),
    cloud-init's phone-home with the host keys, and registration with StrictHostKeyChecking=yes against exactly
    those keys. Then a stray network boot of the deployed gpu4, by UEFI HTTP boot, boots its disk again. Stage times
    go to the lab's log folder (bench/bench_image_deploy.py reads them)."""
    image = cloud_image.ensure_qcow2()
    inv = _gpu4_image_inventory(tmp_path, image)
    records = _gpu4_off_with_its_records(lab)
    started = time.time()
    try:
        run, serial = _deploy_gpu4(lab, inv)
        # The deploy ramdisk the boot server built (this run or an earlier one) from the site's Debian mirror.
        version = pxe(f"cat {_pxe_root()}/http/deploy/version").split()
        assert version[0].startswith("linux-image-6.") and version[0].endswith("-amd64"), version
        assert pxe("apt-cache policy busybox-static").count(lab_debian_mirror()) >= 1
        assert REGISTRATION in [e["event_data"].get("task") for e in run.events if e["event"] == "runner_on_ok"
                                and e["event_data"].get("host") == "gpu4"]
        steps = [json.loads(line) for line in pxe(f"cat {RECORDS}/gpu4.steps").splitlines()]
        assert [x["step"] for x in steps] == ["started", "disk", "image", "written", "done"], steps
        assert steps[1]["detail"] == "/dev/vda" and all(x["source"] == GPU4.ip for x in steps)
        # The qcow2 (as vendors publish cloud images) was converted by the boot server; gpu4 got the raw.zst and
        # checked it against the digest the boot server wrote next to it.
        converted = f"{_pxe_root()}/http/os/deb12cloud/{cloud_image.QCOW2.removesuffix('.qcow2')}.raw.zst"
        assert steps[2]["detail"] == "SHA-256 checked: " + pxe(f"cut -c 1-64 {converted}.sha256").strip(), steps
        assert pxe(f"cut -c 1-64 {converted}.source").strip() == cloud_image.sha256(image)
        record = json.loads(pxe(f"cat {RECORDS}/gpu4.json"))
        assert record["source"] == GPU4.ip and record["hostname"] == "gpu4"
        lines = [line for line in KNOWN_HOSTS.read_text().splitlines() if line.startswith("gpu4,")]
        assert sorted(line.split(" ", 1)[1] for line in lines) == sorted(record["host_keys"])
        left = pxe(f"ls {MARKS}").split()
        assert "gpu4.deployed" in left and not {"gpu4.installing", "gpu4.token", "gpu4.imaged"} & set(left), left
        # The reboot after the deploy went to the network first and was handed to the disk.
        assert "is installed (nothing to install on the boot server): booting from its disk" in serial, serial[-3000:]
        access, acks = _access(started), _dhcp_acks(started)
        first = {path: stamp for stamp, path in reversed(access)}
        done = _utc(steps[-1]["time"])
        assert [t for t, path in access if path == "/hosts/gpu4.ipxe" and t >= done - 1], access
        timings = {
            "power_cycled": _event_time(run, "Boot once from the network and power-cycle the node", "gpu4"),
            "dhcp_firmware": next(t for t, f in acks if f == "snponly.efi"),
            "ipxe_script": first["/hosts/gpu4.ipxe"],
            "ramdisk_initrd": first["/deploy/initrd.gz"],
            "deploy_started": _utc(steps[0]["time"]),
            "image_checked": _utc(steps[2]["time"]),
            "image_written": _utc(steps[3]["time"]),
            "deploy_done": done,
            "phone_home": _utc(record["received"]),
            "registered": _event_time(run, REGISTRATION, "gpu4"),
        }
        timings = {k: round(v - started, 1) for k, v in timings.items()}
        assert all(b >= a - 1.0 for a, b in itertools.pairwise(timings.values())), timings  # whole seconds
        IMAGE_TIMINGS.write_text(json.dumps(timings, indent=2) + "\n")
        print("image deploy of gpu4 (s after provision.yml started):", json.dumps(timings))

        # The fleet's admin user logs in with the site's key (the lab's), against the posted host keys only.
        login = subprocess.run(["ssh", "-i", str(config.SSH_KEY), "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
                                "-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={KNOWN_HOSTS}", "-o",
                                "GlobalKnownHostsFile=/dev/null", f"gpucloud@{GPU4.ip}",
                                "hostname; sudo -n cat /var/lib/cloud/seed/nocloud/meta-data; cat /proc/swaps | wc -l"],
                               capture_output=True, text=True, check=False, timeout=60)
        assert login.returncode == 0, login.stderr
        out = login.stdout.splitlines()
        assert out[0] == "gpu4" and out[-1] == "1", out  # /proc/swaps: its header only
        assert "local-hostname" in login.stdout
        # A stray network boot of the deployed gpu4, by the second boot path (a one-time UEFI HTTP boot asked of
        # its BMC, and a hard power cycle): iPXE by URL, local-boot, its disk, the same host key (the seed's sync
        # put the keys on the disk before the post).
        stray = time.time()
        assert power(lab, "cycle", lab_boot_once="UefiHttp").rc == 0
        deadline = time.monotonic() + 600
        while not [t for t, path in _access(stray) if path == "/hosts/gpu4.ipxe"]:
            assert time.monotonic() < deadline, "gpu4 did not boot from the network"
            time.sleep(3)
        while (answer := _host_key_answers(KNOWN_HOSTS)).returncode != 0 and "Permission denied" not in answer.stderr:
            assert time.monotonic() < deadline, answer.stderr
            assert "Host key verification failed" not in answer.stderr, answer.stderr
            time.sleep(5)
        assert not [p for _t, p in _access(stray) if p.startswith(("/deploy/", "/os/", "/hosts/gpu4/"))]
        assert [f for _t, f in _dhcp_acks(stray) if f == f"{HTTP}/ipxe/snponly.efi"], _dhcp_acks(stray)
        assert pxe(f"cat {RECORDS}/gpu4.steps").count("\n") == 5  # no deploy ran
    finally:
        _give_back_deployed_gpu4(lab, records)


VMEDIA_TIMINGS = config.LOG_DIR / "vmedia-deploy-timings.json"
BOOT_ONCE = "Boot once from the network and power-cycle the node"
EJECT = "Eject the deploy ISO from the node's virtual drive (virtual media)"


@pytest.mark.boot_chain
def test_boot_target_deploys_from_virtual_media_without_dhcp_or_pxe(lab: Lab, tmp_path: Path) -> None:
    """gpu4 bare to SSH on a site without PXE: ``bmc.boot_target: Cd``. The boot server builds gpu4's deploy ISO
    (the deploy ramdisk and gpu4's kernel command line with its static address, as a UEFI program on the ISO's EFI
    boot image); provision.yml asks gpu4's BMC (sushy-tools' own VirtualMedia) to insert it from the boot server,
    then for a one-time Cd boot; the firmware boots the ISO, the ramdisk takes the fleet's address (no DHCP), writes
    the image and reboots; gpu4 boots its disk, phones home and is registered against the keys it posted; the ISO is
    ejected. Nothing on the provisioning network answers gpu4's DHCP, TFTP or iPXE: none is asked. Then the boot
    server as the lab's own fleet has it removes the ISO of a node no longer booted by virtual media."""
    image = cloud_image.ensure_qcow2()
    inv = _gpu4_image_inventory(tmp_path, image, boot_target="Cd")
    records = _gpu4_off_with_its_records(lab)
    iso = f"{_pxe_root()}/http/vmedia/gpu4.iso"
    started = time.time()
    try:
        run, serial = _deploy_gpu4(lab, inv)
        # The ISO the BMC was given is the one the boot server built, and the firmware booted its UEFI program.
        sent = run.results(BOOT_ONCE)["gpu4"]
        assert sent["boot"]["target"] == "Cd" and sent["media"] == {"image": f"{HTTP}/vmedia/gpu4.iso",
                                                                    "inserted": True}, sent
        assert pxe(f"test -s {iso} && echo built").strip() == "built"
        assert f"gpucloud: deploy ramdisk: address {GPU4_CIDR} on" in serial, serial[-3000:]
        command_line = re.search(r"Kernel command line: (.*)", serial)
        assert command_line and f"gpucloud.ip={GPU4_CIDR}" in command_line.group(1), serial[-3000:]
        assert "initrd=" not in command_line.group(1)
        steps = [json.loads(line) for line in pxe(f"cat {RECORDS}/gpu4.steps").splitlines()]
        assert [x["step"] for x in steps] == ["started", "disk", "image", "written", "done"], steps
        assert all(x["source"] == GPU4.ip for x in steps)
        assert REGISTRATION in [e["event_data"].get("task") for e in run.events if e["event"] == "runner_on_ok"
                                and e["event_data"].get("host") == "gpu4"]
        assert run.results(EJECT)["gpu4"]["media"] == {"image": "", "inserted": False}
        left = pxe(f"ls {MARKS}").split()
        assert "gpu4.deployed" in left and not {"gpu4.installing", "gpu4.token", "gpu4.imaged"} & set(left), left
        # No DHCP, TFTP or iPXE for gpu4 at any point: the ISO, the ramdisk's static address, the seed's.
        dhcp = pxe(f"journalctl -u dnsmasq --no-pager --since @{int(started)}")
        assert GPU4_MAC not in dhcp.lower(), dhcp
        fetched = [path for _t, path in _access(started)]
        assert not [p for p in fetched if p.endswith(".ipxe") or p.startswith("/ipxe/")], fetched
        assert "/hosts/gpu4/deploy.sh" in fetched and "/deploy/initrd.gz" not in fetched, fetched
        record = json.loads(pxe(f"cat {RECORDS}/gpu4.json"))
        assert record["source"] == GPU4.ip and record["hostname"] == "gpu4"
        timings = {"power_cycled": _event_time(run, BOOT_ONCE, "gpu4"), "deploy_started": _utc(steps[0]["time"]),
                   "image_written": _utc(steps[3]["time"]), "deploy_done": _utc(steps[-1]["time"]),
                   "phone_home": _utc(record["received"]), "registered": _event_time(run, REGISTRATION, "gpu4")}
        timings = {k: round(v - started, 1) for k, v in timings.items()}
        assert all(b >= a - 1.0 for a, b in itertools.pairwise(timings.values())), timings  # whole seconds
        VMEDIA_TIMINGS.write_text(json.dumps(timings, indent=2) + "\n")
        print("virtual media deploy of gpu4 (s after provision.yml started):", json.dumps(timings))
        # The ISO is built again only when a part of it changes: the boot server's second run changes nothing.
        built = pxe(f"stat -c %Y {iso}")
        again = lab.playbook("playbooks/provision.yml", limit="pxe", inventory=inv)
        assert again.rc == 0 and not again.hosts_with("changed"), again.changed_tasks()
        assert pxe(f"stat -c %Y {iso}") == built
    finally:
        _give_back_deployed_gpu4(lab, records)
    assert pxe(f"ls {_pxe_root()}/http/vmedia").split() == [], "the ISO of a node no longer booted by virtual media"


NODE_CHECK = "Refuse a node that is a working Node of its cluster"
GPU4_NODE = """apiVersion: v1
kind: Node
metadata: {name: gpu4, labels: {gpucloud.baremetal/test: node-check}}
"""
HELD_POD = """apiVersion: v1
kind: Pod
metadata: {name: held-by-gpu4, namespace: default}
spec:
  nodeName: gpu4
  containers: [{name: c, image: registry.k8s.io/pause:3.4}]
"""


def test_a_working_node_is_neither_reinstalled_nor_powered_off(lab: Lab) -> None:
    """A confirmed reinstall or decommission of a node that is a working Node of its cluster (schedulable, or with
    pods other than DaemonSet and static ones) is refused before any BMC request; a cordoned, drained one may go.
    gpu4 gets a Node object in the host cluster here (no kubelet: an API object), so the test needs no join."""
    kubectl("apply", "-f", "-", input=GPU4_NODE)
    try:
        reinstall = lab.playbook("playbooks/provision.yml", {"reinstall": "gpu4", "confirm": "gpu4"}, limit="pxe,gpu4")
        assert reinstall.rc != 0 and reinstall.failed_tasks() == [NODE_CHECK], reinstall.failures()
        message = reinstall.results(NODE_CHECK)["gpu4"]["msg"]
        assert message.startswith("gpu4: is a Node of the host cluster, schedulable"), message
        assert "kubectl drain gpu4" in message and message.endswith("Nothing was changed.")
        assert not reinstall.hosts_with("changed").get("gpu4"), reinstall.changed_tasks("gpu4")
        assert not [e for e in reinstall.events if e.get("event_data", {}).get("host") == "gpu4"
                    and e.get("event_data", {}).get("task_action", "").endswith("redfish_system")], "the BMC was asked"

        decommission = {"node": "gpu4", "confirm": "gpu4"}
        schedulable = lab.playbook("playbooks/node_decommission.yml", decommission, check=True)
        assert schedulable.rc != 0 and schedulable.failed_tasks() == [NODE_CHECK], schedulable.failures()
        assert "gpu4: is a Node of the host cluster, schedulable" in schedulable.results(NODE_CHECK)["gpu4"]["msg"]
        kubectl("cordon", "gpu4")
        kubectl("apply", "-f", "-", input=HELD_POD)
        busy = lab.playbook("playbooks/node_decommission.yml", decommission, check=True)
        assert busy.rc != 0 and busy.failed_tasks() == [NODE_CHECK], busy.failures()
        text = busy.results(NODE_CHECK)["gpu4"]["msg"]
        assert "gpu4: is a Node of the host cluster, with 1 pod(s) on it (default/held-by-gpu4)" in text, text
        kubectl("delete", "pod", "-n", "default", "held-by-gpu4", "--grace-period=0", "--force")
        drained = lab.playbook("playbooks/node_decommission.yml", decommission, check=True)
        assert drained.rc == 0, drained.failures()
        assert drained.results(NODE_CHECK)["gpu4"]["msg"] == "gpu4: not a working Node of the host cluster"
    finally:
        kubectl("delete", "pod", "-n", "default", "held-by-gpu4", "--ignore-not-found", "--grace-period=0", "--force")
        kubectl("delete", "node", "gpu4", "--ignore-not-found")


PROBE = Path(__file__).with_name("dhcp_probe.py")
SITE_NS, SITE_PORT = "gcl-sitedhcp", "gclsited0"


def probe(mac: str, *options: str, boot_server: str = "", ciaddr: str = "") -> list[dict]:
    """Every DHCPOFFER a DISCOVER from the test client's namespace gets (udhcpc would take one); with
    boot_server, every answer to the firmware's DHCPREQUEST from ciaddr to that server's port 4011."""
    env = {**os.environ, "PROBE_WAIT": "3"}
    if boot_server:
        env.update(PROBE_BOOT_SERVER=boot_server, PROBE_CIADDR=ciaddr)
    run = subprocess.run(["ip", "netns", "exec", "gcl-dhcptest", "/usr/bin/python3", str(PROBE), mac, "eth0",
                          *options], capture_output=True, text=True, check=True, timeout=30, env=env)
    return json.loads(run.stdout)


def test_proxy_dhcp_answers_pxe_only_and_the_sites_server_gives_the_address(
        served: Lab, client, tmp_path: Path) -> None:
    """pxe_server_dhcp_mode=proxy: a second dnsmasq (the site's, in its own namespace on the lab
    bridge, range .230-.239) hands out addresses; ours gives a fleet node's PXE firmware its boot file
    (no address) and its iPXE the script URL, and says nothing to a MAC in no fleet. The lab's normal
    (range) configuration comes back at the end."""
    dhcp = client[0]
    off = power(served, "off")
    assert off.rc == 0, off.failures()
    _remove_client(SITE_NS, SITE_PORT)
    site = None
    try:
        subprocess.run(["ip", "netns", "add", SITE_NS], check=True)
        subprocess.run(["ip", "link", "add", SITE_PORT, "netns", config.LAB_NETNS, "type", "veth", "peer", "name",
                        "eth0", "netns", SITE_NS], check=True)
        subprocess.run(["ip", "-n", config.LAB_NETNS, "link", "set", SITE_PORT, "master", config.BRIDGE, "up"],
                       check=True)
        subprocess.run(["ip", "-n", SITE_NS, "addr", "add", f"{SITE_IP}/{config.PREFIX_LEN}", "dev", "eth0"], check=True)
        subprocess.run(["ip", "-n", SITE_NS, "link", "set", "eth0", "up"], check=True)
        # --no-ping: the site server's ping check of a new address delays its offer by ~3 s (seen in CI), past
        # the probe's wait; that check is the site's business, not what is tested here.
        site = subprocess.Popen(["ip", "netns", "exec", SITE_NS, "dnsmasq", "--keep-in-foreground", "--port=0",
                                 "--interface=eth0", "--bind-interfaces", "--log-dhcp", "--no-ping",
                                 f"--dhcp-range={SITE_RANGE[0]},{SITE_RANGE[1]},{config.SUBNET.netmask},1h",
                                 f"--dhcp-leasefile={tmp_path / 'site.leases'}", f"--pid-file={tmp_path / 'site.pid'}",
                                 f"--log-facility={tmp_path / 'site.log'}"])
        proxy = served.playbook("playbooks/provision.yml", {"pxe_server_dhcp_mode": "proxy"}, limit="pxe")
        assert proxy.rc == 0, proxy.failures()
        conf = (PXE_ROOT / DNSMASQ_CONF.lstrip("/")).read_text()
        assert f"dhcp-range={config.SUBNET.network_address},proxy,{config.SUBNET.netmask}" in conf
        assert GPU4.ip not in conf

        lease = dhcp(GPU4_MAC, vendor="PXEClient")  # udhcpc: the address is the site's, not our reservation
        assert _in_range(lease["ip"], SITE_RANGE), lease
        firmware = probe(GPU4_MAC, "60=PXEClient:Arch:00000:UNDI:002001", "93=0000")
        ours = [o for o in firmware if o["server_id"] == PXE.ip]
        theirs = [o for o in firmware if o["server_id"] == SITE_IP]
        assert len(ours) == 1 and len(theirs) == 1, firmware
        assert (ours[0]["yiaddr"], ours[0]["vendor"], ours[0]["file"], ours[0]["siaddr"]) == (
            "0.0.0.0", "PXEClient", "undionly.kpxe", PXE.ip), ours
        assert _in_range(theirs[0]["yiaddr"], SITE_RANGE) and not theirs[0]["file"], theirs
        # UEFI firmware: dnsmasq's proxy offer names no file; the firmware asks the boot server on port 4011
        # (PXE 2.1 boot server discovery) and the ACK names snponly.efi. A MAC in no fleet gets no ACK.
        uefi = "60=PXEClient:Arch:00007:UNDI:003016", "93=0007"
        offer = [o for o in probe(GPU4_MAC, *uefi) if o["server_id"] == PXE.ip]
        assert [(o["yiaddr"], o["file"]) for o in offer] == [("0.0.0.0", "")], offer
        acks = probe(GPU4_MAC, *uefi, boot_server=PXE.ip, ciaddr=lease["ip"])
        assert [(o["type"], o["file"], o["siaddr"]) for o in acks] == [(5, "snponly.efi", PXE.ip)], acks
        assert probe(UNKNOWN_MAC, *uefi, boot_server=PXE.ip, ciaddr=lease["ip"]) == []
        ipxe = [o for o in probe(GPU4_MAC, "60=PXEClient", "93=0000", "175=0101") if o["server_id"] == PXE.ip]
        assert [(o["yiaddr"], o["file"]) for o in ipxe] == [("0.0.0.0", f"{HTTP}/hosts/gpu4.ipxe")], ipxe
        unknown = probe(UNKNOWN_MAC, "60=PXEClient", "93=0000")
        assert [o["server_id"] for o in unknown] == [SITE_IP], "a MAC in no fleet got a proxy answer: %s" % unknown
        plain = probe(GPU4_MAC)  # no option 60: not a PXE client, nothing from the proxy
        assert [o["server_id"] for o in plain] == [SITE_IP], plain
    finally:
        if site is not None:
            site.terminate()
            site.wait(timeout=10)
        _remove_client(SITE_NS, SITE_PORT)
        back = served.playbook("playbooks/provision.yml", limit="pxe")
    assert back.rc == 0, back.failures()
    conf = (PXE_ROOT / DNSMASQ_CONF.lstrip("/")).read_text()
    assert f"dhcp-range={FLEET_RANGE[0]},{FLEET_RANGE[1]}" in conf and "pxe-service" not in conf
