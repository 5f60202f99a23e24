# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Switches: an NVUE REST API **SIMULATION** for each NVUE switch of the lab fleet.

A switch ASIC OS (Cumulus Linux) cannot run here, so each NVUE switch of
inventories/lab/fleet.yml is played by nvue_api_sim.py: its own network namespace
(``gcl-<name>``) plugged into the lab bridge with the switch's mgmt_ip, the
simulation listening there on the NVUE API port and answering as the switch's
release (the fleet's ``os_version``). The role switch_fabric pushes to it through
its normal revision flow; the applied config is kept in
STATE_DIR/switches/<name>.json (read back when the simulation restarts, shown
by `status`, removed by `down`).

HTTPS, as on a real switch, with a certificate for the switch's address signed by
the lab CA; the lab inventory gives the role that CA (switch_fabric_nvue_ca_path).
The simulation checks paths against NVIDIA's NVUE model of that release (PyPI
nvueschema), so it runs under the repository's virtualenv (config.VENV_DIR).
"""
from __future__ import annotations

import ipaddress
import json
from pathlib import Path

from gpucloud_lab.core import config, secrets
from gpucloud_lab.core.components import Row
from gpucloud_lab.core.config import Switch
from gpucloud_lab.core.util import daemon_pid, port_open, say, start_daemon, stop_unit, wait_for, write_file
from gpucloud_lab.infra import net, pki

USERNAME = "cumulus"         # the role's switch_fabric_nvue_username default
PASSWORD = secrets.LAB_PASSWORD  # lab only (vaulted in inventories/lab/group_vars/switches_nvue.yml)
MARKER = "gpucloud:"         # the ownership marker switch_fabric writes on a tenant's SVI


def unit(switch: Switch) -> str:
    return f"nvue-{switch.name}"


def state_file(switch: Switch) -> Path:
    return config.SWITCH_STATE_DIR / f"{switch.name}.json"


def nvue_switches() -> list[Switch]:
    """The fleet's NVUE switches (their mgmt_ip must be in the lab subnet)."""
    found = [s for s in config.SWITCHES if s.platform == "nvue"]
    for switch in found:
        if ipaddress.ip_address(switch.ip) not in config.SUBNET:
            raise SystemExit(f"gpucloud-lab: switch {switch.name}: mgmt_ip {switch.ip} is outside the lab subnet")
    return found


def python() -> str:
    """The virtualenv's Python (it has nvueschema); the lab runs under the machine's python3."""
    venv_python = config.VENV_DIR / "bin" / "python"
    if not venv_python.exists():
        raise SystemExit(f"gpucloud-lab: the NVUE API simulation needs {venv_python} with nvueschema "
                         "(tests/requirements.txt): run `make setup` first")
    return str(venv_python)


def start(switch: Switch) -> None:
    net.ensure_host_network(switch.host)
    if daemon_pid(unit(switch)):
        return
    config.SWITCH_STATE_DIR.mkdir(parents=True, exist_ok=True)
    if not state_file(switch).exists():  # a switch fresh from the rack: its own config, secrets included
        seed = secrets.nvue_seed()
        write_file(state_file(switch), json.dumps({"applied": seed, "saved": seed, "next_revision": 1}, indent=1))
    pki.ensure_ca()
    cert, key = pki.issue(f"switch-{switch.name}", f"/CN={switch.name}", [f"IP:{switch.ip}"], server=True)
    start_daemon(unit(switch),
                 ["ip", "netns", "exec", switch.host.netns, python(), "-m", "gpucloud_lab.sim.nvue_api_sim",
                  "--listen", switch.ip, "--port", str(config.NVUE_PORT), "--username", USERNAME,
                  "--state", str(state_file(switch)), "--cert", str(cert), "--key", str(key),
                  "--version", switch.os_version],
                 env={"PYTHONPATH": str(config.LAB_DIR), "NVUE_SIM_PASSWORD": PASSWORD})


def answering(switch: Switch) -> bool:
    """The simulation listens; one that exited (e.g. nvueschema missing) fails `up` at once, with its log."""
    if not daemon_pid(unit(switch)):
        log = config.LOG_DIR / f"{unit(switch)}.log"
        tail = log.read_text(errors="replace").splitlines()[-5:] if log.exists() else []
        raise SystemExit(f"gpucloud-lab: the NVUE API simulation of {switch.name} exited; {log}:\n" + "\n".join(tail))
    return port_open(switch.ip, config.NVUE_PORT)


def up() -> None:
    switches = nvue_switches()
    if not switches:
        return
    names = [f"{s.name} ({s.nvue_url}, release {s.os_version})" for s in switches]
    say("switches: NVUE API SIMULATION for " + ", ".join(names))
    for switch in switches:
        start(switch)
    for switch in switches:
        wait_for(lambda s=switch: answering(s), f"NVUE API simulation of {switch.name}", timeout=30)


def down() -> None:
    for switch in nvue_switches():
        stop_unit(unit(switch))
        net.remove_netns(switch.host.netns)
        state_file(switch).unlink(missing_ok=True)


def state(switch: Switch) -> str:
    if not daemon_pid(unit(switch)):
        return "stopped"
    return "running" if port_open(switch.ip, config.NVUE_PORT) else "starting"


def applied_tenants(switch: Switch) -> list[str]:
    """Tenants in the persisted applied config: SVIs carrying switch_fabric's ownership marker."""
    try:
        applied = json.loads(state_file(switch).read_text()).get("applied", {})
    except (OSError, ValueError):
        return []
    interfaces = applied.get("interface") or {}
    return sorted(str(i["description"])[len(MARKER):] for i in interfaces.values()
                  if isinstance(i, dict) and str(i.get("description", "")).startswith(MARKER))


class Switches:
    """The lab component: SIMULATION of the fleet's NVUE switches, the NVUE REST API on each one's mgmt_ip."""

    def up(self) -> None:
        up()

    def down(self) -> None:
        down()

    def rows(self) -> list[Row]:
        rows = []
        for switch in nvue_switches():
            tenants = applied_tenants(switch)
            rows.append(Row(f"switch {switch.name}", state(switch), switch.nvue_url,
                            f"NVUE API SIMULATION, {len(tenants)} tenants applied"
                            + (f" ({', '.join(tenants)})" if tenants else "")
                            + f"; netns {switch.host.netns}, log {config.LOG_DIR / (unit(switch) + '.log')}"))
        return rows
