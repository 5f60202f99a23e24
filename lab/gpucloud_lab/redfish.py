# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""BMCs: one Redfish emulator (sushy-tools, fake driver) per lab GPU node, one system each.

One emulator per node, each on its own port, so a node's BMC address names
exactly one system, as a real BMC does.
"""
from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

from gpucloud_lab import config, pki
from gpucloud_lab.config import Host
from gpucloud_lab.util import daemon_pid, port_open, say, start_daemon, stop_unit, wait_for, write_file

VENV = config.CACHE_DIR / f"sushy-tools-{config.SUSHY_VERSION}"
STAMP = VENV / ".complete"
USERNAME = "admin"
PASSWORD = "gpucloud-lab"  # lab only; real BMC credentials belong in a vault


def ensure_venv() -> None:
    if STAMP.exists():
        return
    say(f"installing sushy-tools {config.SUSHY_VERSION} (once; cached in {VENV})")
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--clear", str(VENV)], check=True)
    subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", f"sushy-tools=={config.SUSHY_VERSION}"],
                   check=True, capture_output=True)
    STAMP.touch()


def system_uuid(host: Host) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{host.name}.{config.DOMAIN}"))


def unit(host: Host) -> str:
    return f"redfish-{host.name}"


def state_dir(host: Host) -> Path:
    return config.RUN_DIR / "redfish" / host.name


def tls() -> tuple[Path, Path]:
    """Real BMCs speak HTTPS; the emulators' certificate comes from the lab CA."""
    pki.ensure_ca()
    return pki.issue("redfish", "/CN=gpucloud-lab-bmc", [f"IP:{config.CONTROLLER_IP}"], server=True)


def emulator_config(host: Host) -> str:
    cert, key = tls()
    system = {
        "uuid": system_uuid(host), "name": host.name, "power_state": "Off",
        "nics": [{"mac": host.mac, "ip": host.ip}],
    }
    return "\n".join([
        f"SUSHY_EMULATOR_LISTEN_IP = {config.CONTROLLER_IP!r}",
        f"SUSHY_EMULATOR_LISTEN_PORT = {config.bmc_port(host)}",
        "SUSHY_EMULATOR_FAKE_DRIVER = True",
        f"SUSHY_EMULATOR_FAKE_SYSTEMS = {json.dumps([system])}",
        f"SUSHY_EMULATOR_STATE_DIR = {str(state_dir(host))!r}",
        f"SUSHY_EMULATOR_AUTH_FILE = {str(state_dir(host) / 'htpasswd')!r}",
        f"SUSHY_EMULATOR_SSL_CERT = {str(cert)!r}",
        f"SUSHY_EMULATOR_SSL_KEY = {str(key)!r}",
        "",
    ])


def htpasswd() -> str:
    script = "import bcrypt,sys; print(bcrypt.hashpw(sys.argv[1].encode(), bcrypt.gensalt(rounds=4)).decode())"
    digest = subprocess.run([str(VENV / "bin" / "python"), "-c", script, PASSWORD],
                            check=True, capture_output=True, text=True).stdout.strip()
    return f"{USERNAME}:{digest}\n"


def start(host: Host, auth: str) -> None:
    if daemon_pid(unit(host)):
        return
    directory = state_dir(host)
    write_file(directory / "htpasswd", auth, mode=0o600)
    write_file(directory / "emulator.conf", emulator_config(host))
    start_daemon(unit(host), [str(VENV / "bin" / "sushy-emulator"), "--config", str(directory / "emulator.conf")],
                 env={"TMPDIR": str(directory)})


def up() -> None:
    ensure_venv()
    auth = htpasswd()
    for host in config.GPU_NODES:
        start(host, auth)
    for host in config.GPU_NODES:
        wait_for(lambda h=host: port_open(config.CONTROLLER_IP, config.bmc_port(h)),
                 f"Redfish emulator for {host.name}", timeout=30)


def down() -> None:
    for host in config.GPU_NODES:
        stop_unit(unit(host))


def state(host: Host) -> str:
    if not daemon_pid(unit(host)):
        return "stopped"
    return "running" if port_open(config.CONTROLLER_IP, config.bmc_port(host)) else "starting"
