# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Switches: an NVUE REST API **SIMULATION** for each NVUE switch of the lab fleet.

A switch ASIC OS (Cumulus Linux) cannot run here, so each NVUE switch of
inventories/lab/fleet.yml is played by nvue_api_sim.py: its own network namespace
(``gcl-<name>``) plugged into the lab bridge with the switch's mgmt_ip, the
simulation listening there on the NVUE API port. The role switch_fabric pushes
to it through its normal revision flow; the applied config is kept in
STATE_DIR/switches/<name>.json (read back when the simulation restarts, shown
by `status`, removed by `down`).

HTTPS, as on a real switch, with a certificate for the switch's address signed by
the lab CA; the lab inventory gives the role that CA (switch_fabric_nvue_ca_path).
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from gpucloud_lab.core import config
from gpucloud_lab.core.components import Row
from gpucloud_lab.core.util import daemon_pid, port_open, say, start_daemon, stop_unit, wait_for
from gpucloud_lab.infra import net, pki

STATE = config.SWITCH_STATE_DIR
NVUE_PORT = 8765             # the role's switch_fabric_nvue_port default
USERNAME = "cumulus"         # the role's switch_fabric_nvue_username default
PASSWORD = "gpucloud-lab"    # lab only (inventories/lab/group_vars/switches_nvue.yml); vault real ones
MARKER = "gpucloud:"         # the ownership marker switch_fabric writes on a tenant's SVI


@dataclass(frozen=True)
class Switch:
    name: str
    ip: str
    version: str = "5.12"  # the fleet's os_version: the simulation answers as that release

    @property
    def host(self) -> config.Host:
        """The switch as a lab network endpoint (namespace, bridge port, MAC), like a lab host."""
        return config.Host(self.name, int(self.ip.rsplit(".", 1)[1]), "switch")

    @property
    def unit(self) -> str:
        return f"nvue-{self.name}"

    @property
    def state_file(self) -> Path:
        return STATE / f"{self.name}.json"

    @property
    def url(self) -> str:
        return f"https://{self.ip}:{NVUE_PORT}"


def nvue_switches() -> list[Switch]:
    """The fleet's NVUE switches (their mgmt_ip must be in the lab subnet)."""
    found = []
    for switch in (config.fleet().get("fabric") or {}).get("switches") or []:
        if switch.get("platform") != "nvue":
            continue
        ip = str(switch["mgmt_ip"])
        if not ip.startswith(config.SUBNET_PREFIX + "."):
            raise SystemExit(f"gpucloud-lab: switch {switch['name']}: mgmt_ip {ip} is outside the lab subnet")
        found.append(Switch(str(switch["name"]), ip, str(switch.get("os_version") or "5.12")))
    return found


def start(switch: Switch) -> None:
    net.ensure_host_network(switch.host)
    if daemon_pid(switch.unit):
        return
    STATE.mkdir(parents=True, exist_ok=True)
    pki.ensure_ca()
    cert, key = pki.issue(f"switch-{switch.name}", f"/CN={switch.name}", [f"IP:{switch.ip}"], server=True)
    start_daemon(switch.unit,
                 ["ip", "netns", "exec", switch.host.netns, sys.executable, "-m", "gpucloud_lab.sim.nvue_api_sim",
                  "--listen", switch.ip, "--port", str(NVUE_PORT), "--username", USERNAME,
                  "--state", str(switch.state_file), "--cert", str(cert), "--key", str(key),
                  "--version", switch.version],
                 env={"PYTHONPATH": str(config.LAB_DIR), "NVUE_SIM_PASSWORD": PASSWORD})


def up() -> None:
    switches = nvue_switches()
    if not switches:
        return
    say("switches: NVUE API SIMULATION for " + ", ".join(f"{s.name} ({s.url})" for s in switches))
    for switch in switches:
        start(switch)
    for switch in switches:
        wait_for(lambda s=switch: port_open(s.ip, NVUE_PORT), f"NVUE API simulation of {switch.name}", timeout=30)


def down() -> None:
    for switch in nvue_switches():
        stop_unit(switch.unit)
        net.remove_netns(switch.host.netns)
        switch.state_file.unlink(missing_ok=True)


def state(switch: Switch) -> str:
    if not daemon_pid(switch.unit):
        return "stopped"
    return "running" if port_open(switch.ip, NVUE_PORT) else "starting"


def applied_tenants(switch: Switch) -> list[str]:
    """Tenants in the persisted applied config: SVIs carrying switch_fabric's ownership marker."""
    try:
        applied = json.loads(switch.state_file.read_text()).get("applied", {})
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
            rows.append(Row(f"switch {switch.name}", state(switch), switch.url,
                            f"NVUE API SIMULATION, {len(tenants)} tenants applied"
                            + (f" ({', '.join(tenants)})" if tenants else "")
                            + f"; netns {switch.host.netns}, log {config.LOG_DIR / (switch.unit + '.log')}"))
        return rows
