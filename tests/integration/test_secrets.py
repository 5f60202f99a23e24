# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No secret in any output, and host keys checked (issue 21).

The secret scan runs last in the session (``@pytest.mark.secret_scan``). Every playbook the session ran
against the lab (``Lab.playbook``: ansible-runner at -vvv, the lab inventory's BMC and NVUE passwords
vault-encrypted) left its private data directory: job events, the callback's stdout, the command line and
environment. The scan reads every byte of them for

- the lab's secrets (``lab/gpucloud_lab/core/secrets.py``): the BMC/NVUE password (also as an HTTP basic
  auth header), the vault password, the vCluster Platform key in the host cluster, the NVUE switch's own
  secrets (SNMP community, BGP password, a user's password hash) in the config the fabric stage reads;
- the host cluster's credentials (its admin kubeconfig), the tenants' kubeconfig credentials and every
  bootstrap token the clusters held during the session (``SecretWatch``), plain and base64-encoded;
- anything shaped like a bootstrap token (``[a-z0-9]{6}.[a-z0-9]{16}``), live or long gone.

Day-2 playbooks that no other test of the session ran are run here once first, so that a session of this
file alone scans every playbook: the converged lab (site.yml, then each stage as an AWX job) and node_add, node_decommission
(--check), tenant_offboard then tenant_onboard, plan and validate.
"""
from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.integration.conftest import Converged
from tests.integration.lab import KUBECONFIG, LAB_INVENTORY, Lab, config, on, secrets

TOKEN = re.compile(rb"(?<![A-Za-z0-9])[a-z0-9]{6}\.[a-z0-9]{16}(?![A-Za-z0-9])")
SHARED_NODE = next(n["name"] for n in config.fleet()["nodes"]
                   if not n.get("tenant") and n["name"] != config.BOOT_TARGET.name)
MONITORING_CREDENTIALS = Path(yaml.safe_load((LAB_INVENTORY / "group_vars" / "gpu_monitoring.yml").read_text().replace(
    "!vault", ""))["gpu_monitoring_credentials_dir"])
SHARED_TENANT = next(t["name"] for t in config.fleet()["tenants"] if t["isolation"] == "shared")
# (playbook, extra vars, check mode): what the scan needs to have run once.
DAY2 = [
    ("playbooks/node_add.yml", {"node": SHARED_NODE}, False),
    ("playbooks/node_decommission.yml", {"node": SHARED_NODE, "confirm": SHARED_NODE}, True),
    ("playbooks/tenant_offboard.yml", {"tenant": SHARED_TENANT, "confirm": SHARED_TENANT}, False),
    ("playbooks/tenant_onboard.yml", {"tenant": SHARED_TENANT}, False),
    ("playbooks/plan.yml", {}, False),
    ("playbooks/validate.yml", {}, False),
]


@dataclass(frozen=True)
class Hit:
    secret: str
    path: Path
    context: str

    def __str__(self) -> str:
        return f"{self.secret} in {self.path}: ...{self.context}..."


def forms(name: str, value: str, users: Iterable[str] = ()) -> dict[str, bytes]:
    """A secret as output may carry it: as it is, base64-encoded (Kubernetes Secret data, PEM bodies) and
    as an HTTP basic auth header of each user."""
    raw = value.encode()
    found = {name: raw, f"{name} (base64)": base64.b64encode(raw)}
    found.update({f"{name} (basic auth of {u})": base64.b64encode(f"{u}:{value}".encode()) for u in users})
    return found


def kubeconfig_secrets(name: str, kubeconfig: str) -> dict[str, bytes]:
    """The credentials of a kubeconfig: client key data (and the key's first PEM line), tokens, passwords."""
    found: dict[str, bytes] = {}
    for user in (yaml.safe_load(kubeconfig) or {}).get("users") or []:
        for key, value in ((user or {}).get("user") or {}).items():
            if key in ("client-key-data", "token", "password") and value:
                found[f"{name} {key}"] = str(value).encode()
                if key == "client-key-data":
                    body = base64.b64decode(value).decode().splitlines()[1]
                    found[f"{name} client key (PEM)"] = body.encode()
    return found


def watched_secrets(lab: Lab) -> dict[str, bytes]:
    """What the clusters held during the session: bootstrap tokens, tenant kubeconfig credentials."""
    found: dict[str, bytes] = {}
    if lab.watch is None:
        return found
    for obj in lab.watch.secrets():
        data = {k: base64.b64decode(v).decode(errors="replace") for k, v in (obj.get("data") or {}).items()}
        name = f"{obj['metadata'].get('namespace')}/{obj['metadata']['name']}"
        if obj.get("type") == "bootstrap.kubernetes.io/token" and data.get("token-secret"):
            token = f"{data['token-id']}.{data['token-secret']}"
            found.update(forms(f"bootstrap token {name}", token))
            found.update(forms(f"bootstrap token secret {name}", data["token-secret"]))
        elif obj["metadata"]["name"].startswith("vc-") and "config" in data:
            found.update(kubeconfig_secrets(f"tenant kubeconfig {name}", data["config"]))
    return found


def lab_secrets(lab: Lab) -> dict[str, bytes]:
    """Every secret value the scan looks for, by what it is."""
    found: dict[str, bytes] = {}
    for name, value in secrets.scanned().items():
        found.update(forms(name, value, ("admin", "cumulus") if value == secrets.LAB_PASSWORD else ()))
    found.update(kubeconfig_secrets("host cluster kubeconfig", KUBECONFIG.read_text()))
    found.update(watched_secrets(lab))
    # The tenants' monitoring endpoint passwords (role gpu_monitoring makes them on the controller).
    for path in sorted(MONITORING_CREDENTIALS.glob("*-prometheus.password")):
        tenant = path.name.removesuffix("-prometheus.password")
        found.update(forms(f"monitoring password of {tenant}", path.read_text().strip(), (tenant,)))
    return found


def scan(folders: Iterable[Path], values: dict[str, bytes]) -> list[Hit]:
    """Every occurrence of a secret value, or of a bootstrap token's shape, in the files under ``folders``."""
    hits = []
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = path.read_bytes()
            for name, value in values.items():
                at = data.find(value)
                if at >= 0:
                    hits.append(Hit(name, path, _context(data, at, len(value), name)))
            for match in TOKEN.finditer(data):
                hits.append(Hit("a bootstrap token", path, _context(data, match.start(), len(match.group()), "token")))
    return hits


def _context(data: bytes, at: int, length: int, name: str) -> str:
    """Where a secret is, without the secret."""
    before = data[max(0, at - 80):at].decode(errors="replace")
    after = data[at + length:at + length + 40].decode(errors="replace")
    return f"{before}<{name}>{after}".replace("\n", "\\n")


def test_the_scan_finds_a_secret_in_each_form_it_may_take(tmp_path: Path) -> None:
    """The scanner itself, on planted output: a miss here would make the lab scan pass for nothing."""
    values = forms("pw", "s3cret-Value", ("admin",))
    (tmp_path / "stdout").write_text('ok: [gpu1] => {"password": "s3cret-Value"}\n')
    (tmp_path / "job_events").mkdir()
    (tmp_path / "job_events" / "1.json").write_text('{"data": {"p": "czNjcmV0LVZhbHVl"}}')  # base64
    (tmp_path / "job_events" / "2.json").write_text("Authorization: Basic YWRtaW46czNjcmV0LVZhbHVl")
    (tmp_path / "job_events" / "3.json").write_text("kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef")
    (tmp_path / "clean").write_text("s3cret-Valu ZXhhbXBsZQ== abcdef.0123456789abcdeF lab.gpucloud.example")
    hits = scan([tmp_path], values)
    assert sorted((h.secret, h.path.name) for h in hits) == [
        ("a bootstrap token", "3.json"), ("pw", "stdout"), ("pw (base64)", "1.json"),
        ("pw (base64)", "2.json"),  # "admin:" is 6 bytes: the header's base64 holds the password's
        ("pw (basic auth of admin)", "2.json")]
    assert all("s3cret-Value" not in h.context for h in hits)


@pytest.mark.secret_scan
def test_no_secret_in_any_output_of_the_session(lab: Lab, converged: Converged) -> None:
    for playbook, extravars, check in DAY2:
        if not lab.ran(playbook):
            run = lab.playbook(playbook, extravars, check=check)
            assert run.rc == 0, (playbook, run.failures())
    assert converged.first.rc == 0 and lab.ran("playbooks/site.yml")
    values = lab_secrets(lab)
    assert any(name.startswith("bootstrap token") for name in values), "no bootstrap token seen in the session"
    assert any(name.startswith("tenant kubeconfig") for name in values), "no tenant kubeconfig seen in the session"
    assert any(name.startswith("monitoring password") for name in values), "no tenant monitoring password made"
    folders = sorted({record.folder for record in lab.history})
    hits = scan(folders, values)
    assert not hits, f"{len(hits)} secrets in the output of {len(folders)} runs:\n" + "\n".join(map(str, hits[:60]))


# --- host keys -----------------------------------------------------------------------------------------------

RECORDS = "/var/lib/gpucloud/phone-home"
MARKS = "/var/lib/gpucloud/provision"  # os_install's install marks
PING = [{"name": "Reach the node over SSH", "hosts": "gpu1", "gather_facts": False,
         "tasks": [{"name": "Ping", "ansible.builtin.ping": {}}]}]


def _site_inventory(where: Path, known_hosts: Path) -> Path:
    """The lab inventory as a real site's: no known_hosts of the lab's own and no SSH options in group_vars;
    the fleet names the known_hosts file that phone-home fills (site.ssh_known_hosts)."""
    inv = where / "lab"
    shutil.copytree(LAB_INVENTORY, inv)
    fleet = config.read_fleet(inv / "fleet.yml")
    fleet["site"]["ssh_known_hosts"] = str(known_hosts)
    config.write_fleet(inv / "fleet.yml", fleet)
    lab_args = None
    for name, key in (("all.yml", "ansible_ssh_common_args"), ("gpu_nodes.yml", "os_install_known_hosts")):
        path = inv / "group_vars" / name
        data = yaml.safe_load(path.read_text())
        lab_args = lab_args or data[key]
        del data[key]
        path.write_text(yaml.safe_dump(data))
    # The PXE server is no fleet node: it keeps the lab's known_hosts (its host key is the lab's, made at `up`).
    path = inv / "group_vars" / "pxe_servers.yml"
    data = yaml.safe_load(path.read_text())
    data["ansible_ssh_common_args"] = lab_args
    path.write_text(yaml.safe_dump(data))
    return inv


def _post(key: str) -> None:
    """An install of gpu1 posts an ed25519 host key to the boot server as cloud-init's phone_home does: as os_install
    starts an install, the last record goes and gpu1 is marked installing (the receiver stores only an install's
    first post)."""
    token = hashlib.sha256(os.urandom(32)).hexdigest()[:40]  # the install's one-time token, as os_install makes it
    on("pxe", f"rm -f {RECORDS}/gpu1.json && mkdir -p {MARKS} && (umask 077 && echo 'node-gpu1 \"{token}\";' > "
              f"{MARKS}/gpu1.token) && echo 'gpu1: install' > {MARKS}/gpu1.installing")
    status = on("gpu1", f"curl -sS -o /dev/null -w '%{{http_code}}' -X POST --data-urlencode 'pub_key_ed25519={key}' "
                        f"'{config.PXE_HTTP_URL}/phone-home/gpu1?token={token}'").stdout
    assert status == "204", status


def test_a_node_whose_host_key_differs_from_its_phone_home_record_is_not_connected_to(
        lab: Lab, converged: Converged, tmp_path: Path) -> None:
    # converged: the PXE server's phone-home endpoint is up (provision.yml ran), whatever ran before this test
    known_hosts = tmp_path / "ssh" / "known_hosts"
    inv = _site_inventory(tmp_path, known_hosts)
    ping = tmp_path / "ping.yml"
    ping.write_text(yaml.safe_dump(PING))
    real = " ".join(on("gpu1", "cat /etc/ssh/ssh_host_ed25519_key.pub").stdout.split()[:2])
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
    other = " ".join((tmp_path / "other.pub").read_text().split()[:2])
    try:
        _post(real)
        registered = lab.playbook("playbooks/provision.yml", limit="gpu1", inventory=inv)
        assert registered.rc == 0, registered.failures()
        assert f"gpu1,{config.host('gpu1').ip} {real}" in known_hosts.read_text().splitlines()
        reached = lab.playbook(ping, inventory=inv)
        assert reached.rc == 0 and reached.results("Ping")["gpu1"].get("ping") == "pong", reached.failures()

        # gpu1 posts a key it does not have: its record and the managed known_hosts now differ from its key.
        _post(other)
        lab.playbook("playbooks/provision.yml", limit="gpu1", inventory=inv)  # registration fails, naming gpu1
        assert known_hosts.read_text().count("gpu1,") == 1 and other in known_hosts.read_text()
        # A new connection checks the host key; the previous ping's ControlPersist master (60 s, OpenSSH's
        # connection sharing) would be reused without one, so it is closed first.
        for sock in (Path.home() / ".ansible" / "cp").glob("*"):
            subprocess.run(["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "gpu1"], capture_output=True, check=False)
        refused = lab.playbook(ping, inventory=inv)
        assert refused.rc != 0 and refused.hosts_with("dark") == {"gpu1": 1}, refused.failures()
        # OpenSSH's refusal of a changed key (the message is long: failures() keeps its first 500 characters)
        assert any("REMOTE HOST IDENTIFICATION HAS CHANGED" in f for f in refused.failures()), refused.failures()
    finally:
        on("pxe", f"rm -f {RECORDS}/gpu1.json {MARKS}/gpu1.installing {MARKS}/gpu1.token")
