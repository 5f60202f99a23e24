# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""BMCs: one Redfish emulator (sushy-tools, fake driver) per lab GPU node, one system each.

One emulator per node, each on its own port, so a node's BMC address names
exactly one system, as a real BMC does. A lab GPU node's emulator plays one effect of a restart of the server
(SIMULATION, GPU_NODE_LAUNCHER): a power-on or restart starts a new kernel log, so the Xids injected into the
host's simulated GPUs (`gpucloud-lab fault NODE xid=N`) go, while GPUs taken away (`missing=N`) stay gone, as a
GPU fallen off the bus for good would; the lab host itself keeps running (the fake driver's systems are records).

The boot target (fleet node gpu4, a QEMU machine) has the same emulator with a driver that
really powers it: On / ForceOff / ForceRestart start and stop the QEMU process (power state is
whether it runs), and the boot override decides QEMU's boot device. BootSourceOverrideEnabled
is honoured (sushy-tools itself always reports Continuous): Once is consumed by the next power-on.
Virtual media is sushy-tools' own (VirtualMedia.InsertMedia fetches the image into the BMC's folder, as a BMC
fetches it over HTTP): a one-time Cd boot starts QEMU with that image in its CD drive (boottarget.py).
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import uuid
from pathlib import Path

from gpucloud_lab.core import config, secrets
from gpucloud_lab.core.components import Row
from gpucloud_lab.core.config import Host
from gpucloud_lab.core.util import daemon_pid, port_open, say, start_daemon, stop_unit, wait_for, write_file
from gpucloud_lab.infra import hosts, pki

VENV = config.CACHE_DIR / f"sushy-tools-{config.SUSHY_VERSION}"
STAMP = VENV / ".complete"
# sushy-tools and every dependency, pinned with their hashes (tools/lock.sh writes it from config.SUSHY_VERSION).
LOCK = Path(__file__).with_name("sushy-tools.lock")
USERNAME = "admin"
PASSWORD = secrets.LAB_PASSWORD  # lab only (vaulted in inventories/lab); real BMC credentials belong in a vault


def ensure_venv() -> None:
    """sushy-tools in a venv of its own, from LOCK in hash-checking mode, wheels only; again when LOCK changes."""
    lock = LOCK.read_text()
    if f"sushy-tools=={config.SUSHY_VERSION} " not in lock:
        raise RuntimeError(f"{LOCK} does not pin sushy-tools=={config.SUSHY_VERSION}: run tools/lock.sh")
    digest = hashlib.sha256(lock.encode()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == digest:
        return
    say(f"installing sushy-tools {config.SUSHY_VERSION} (once; cached in {VENV})")
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--clear", str(VENV)], check=True)
    proc = subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", "--require-hashes", "--only-binary", ":all:",
                           "-r", str(LOCK)], check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"installing sushy-tools from {LOCK} failed:\n{proc.stderr.strip()}")
    STAMP.write_text(digest)


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
    return _emulator_config(host.name, system_uuid(host), host.mac, host.ip, config.bmc_port(host), state_dir(host))


def _emulator_config(name: str, uuid_: str, mac: str, ip: str, port: int, directory: Path) -> str:
    cert, key = tls()
    system = {"uuid": uuid_, "name": name, "power_state": "Off", "nics": [{"mac": mac, "ip": ip}]}
    return "\n".join([
        f"SUSHY_EMULATOR_LISTEN_IP = {config.CONTROLLER_IP!r}",
        f"SUSHY_EMULATOR_LISTEN_PORT = {port}",
        "SUSHY_EMULATOR_FAKE_DRIVER = True",
        f"SUSHY_EMULATOR_FAKE_SYSTEMS = {json.dumps([system])}",
        f"SUSHY_EMULATOR_STATE_DIR = {str(directory)!r}",
        f"SUSHY_EMULATOR_AUTH_FILE = {str(directory / 'htpasswd')!r}",
        f"SUSHY_EMULATOR_SSL_CERT = {str(cert)!r}",
        f"SUSHY_EMULATOR_SSL_KEY = {str(key)!r}",
        "",
    ])


def htpasswd() -> str:
    script = "import bcrypt,sys; print(bcrypt.hashpw(sys.argv[1].encode(), bcrypt.gensalt(rounds=4)).decode())"
    digest = subprocess.run([str(VENV / "bin" / "python"), "-c", script, PASSWORD],
                            check=True, capture_output=True, text=True).stdout.strip()
    return f"{USERNAME}:{digest}\n"


# Runs inside the sushy-tools venv: the fake driver, plus what a restart of a GPU server does to its kernel log.
GPU_NODE_LAUNCHER = r'''
import json, os, sys
from sushy_tools.emulator import main as emulator
from sushy_tools.emulator.resources.systems import fakedriver

FAULTS = os.environ["GPUCLOUD_HOST_FAULTS"]
STARTS = ("On", "ForceOn", "ForceRestart", "GracefulRestart", "PowerCycle")


class LabGpuNodeDriver(fakedriver.FakeDriver):
    def set_power_state(self, identity, state):
        super().set_power_state(identity, state)
        if state not in STARTS:
            return
        try:
            with open(FAULTS) as fh:
                faults = json.load(fh)
        except (OSError, ValueError):
            return
        if faults.pop("xid", None) is not None:  # a new boot, a new kernel log
            with open(FAULTS + ".tmp", "w") as fh:
                json.dump(faults, fh)
            os.replace(FAULTS + ".tmp", FAULTS)


fakedriver.FakeDriver = LabGpuNodeDriver
sys.argv = ["sushy-emulator", "--config", sys.argv[1]]
sys.exit(emulator.main())
'''


def start(host: Host, auth: str) -> None:
    if daemon_pid(unit(host)):
        return
    directory = state_dir(host)
    write_file(directory / "htpasswd", auth, mode=0o600)
    write_file(directory / "emulator.conf", emulator_config(host))
    write_file(directory / "gpu_node_bmc.py", GPU_NODE_LAUNCHER)
    faults = hosts.root_dir(host) / "etc" / "gpucloud-lab" / "gpu-faults.json"
    start_daemon(unit(host), [str(VENV / "bin" / "python"), str(directory / "gpu_node_bmc.py"),
                              str(directory / "emulator.conf")],
                 env={"TMPDIR": str(directory), "GPUCLOUD_HOST_FAULTS": str(faults)})


# Runs inside the sushy-tools venv (no PyYAML there): the lab is reached through
# `python3 -m gpucloud_lab.infra.boottarget`, the system Python with the lab on its path.
QEMU_LAUNCHER = r'''
import json, os, subprocess, sys
import flask
from sushy_tools import error
from sushy_tools.emulator import main as emulator
from sushy_tools.emulator.resources.systems import fakedriver

STATE = os.path.join(os.environ["GPUCLOUD_BMC_STATE"], "boot-override.json")


def lab(*args):
    run = subprocess.run(["/usr/bin/python3", "-m", "gpucloud_lab.infra.boottarget", *args], capture_output=True,
                         text=True, check=True, env=dict(os.environ, PYTHONPATH=os.environ["GPUCLOUD_LAB_DIR"]))
    return run.stdout.strip().splitlines()[-1]


def saved():
    try:
        with open(STATE) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


def enabled():
    return saved().get("enabled", "Disabled")


def http():
    # sushy-tools keeps UefiHttp without an HttpBootUri as Pxe (its own note: "sort of a hack"); a server's
    # firmware boots differently for each, so the target asked for is kept here and the boot target told.
    return saved().get("http", False)


def set_enabled(value, http_boot=None):
    state = dict(saved(), enabled=value)
    if http_boot is not None:
        state["http"] = http_boot
    with open(STATE + ".tmp", "w") as fh:
        json.dump(state, fh)
    os.replace(STATE + ".tmp", STATE)


class QemuDriver(fakedriver.FakeDriver):
    def get_power_state(self, identity):
        self._get(identity)
        return "On" if lab("state") == "on" else "Off"

    def set_power_state(self, identity, state):
        system = self._get(identity)
        if state in ("On", "ForceOn"):
            if lab("state") != "on":
                self._boot(system)
        elif state in ("ForceOff", "GracefulShutdown"):
            lab("off")
        elif state in ("ForceRestart", "GracefulRestart", "PowerCycle"):
            lab("off")
            self._boot(system)
        else:
            raise error.NotSupportedError(f"Power state {state} is not supported")

    def _boot(self, system):
        override = enabled() in ("Once", "Continuous")
        device = system.get("boot_device")
        # sushy-tools' InsertMedia fetched the image into this BMC's folder and recorded it as the system's
        # boot_image: [path, write_protected, inserted] per device (fakedriver.set_boot_image).
        cd = (system.get("boot_image") or {}).get("Cd") or [None, True, False]
        if override and device == "Cd" and cd[0] and cd[2]:
            lab("on", "cd", cd[0])
        elif override and device == "Pxe":
            lab("on", "http" if http() else "network")
        else:  # no override, or a CD override with no media: the firmware goes on to the disk
            lab("on", "disk")
        if enabled() == "Once":
            set_enabled("Disabled")


fakedriver.FakeDriver = QemuDriver


@emulator.app.before_request
def remember_override():
    if flask.request.method == "PATCH" and "/Systems/" in flask.request.path:
        boot = (flask.request.get_json(silent=True) or {}).get("Boot") or {}
        target = boot.get("BootSourceOverrideTarget")
        http_boot = target == "UefiHttp" if target else None
        if boot.get("BootSourceOverrideEnabled") in ("Once", "Continuous", "Disabled"):
            set_enabled(boot["BootSourceOverrideEnabled"], http_boot)
        elif target:
            set_enabled("Once", http_boot)


@emulator.app.after_request
def report_override(response):
    if flask.request.method == "GET" and "/Systems/" in flask.request.path and response.is_json:
        body = response.get_json()
        if isinstance(body, dict) and isinstance(body.get("Boot"), dict):
            body["Boot"]["BootSourceOverrideEnabled"] = enabled()
            if http() and body["Boot"].get("BootSourceOverrideTarget") == "Pxe":
                body["Boot"]["BootSourceOverrideTarget"] = "UefiHttp"
            response.set_data(json.dumps(body))
    return response


sys.argv = ["sushy-emulator", "--config", sys.argv[1]]
sys.exit(emulator.main())
'''


def start_boot_target_bmc(auth: str) -> None:
    host = config.BOOT_TARGET
    if daemon_pid(unit(host)):
        return
    directory = state_dir(host)
    write_file(directory / "htpasswd", auth, mode=0o600)
    write_file(directory / "emulator.conf", emulator_config(host))
    write_file(directory / "qemu_bmc.py", QEMU_LAUNCHER)
    start_daemon(unit(host), [str(VENV / "bin" / "python"), str(directory / "qemu_bmc.py"),
                              str(directory / "emulator.conf")],
                 env={"TMPDIR": str(directory), "GPUCLOUD_BMC_STATE": str(directory),
                      "GPUCLOUD_LAB_DIR": str(config.LAB_DIR)})


VENDOR_DIR = config.RUN_DIR / "redfish" / "vendor"


def vendor_unit(mode: str = "") -> str:
    return f"redfish-vendor-{mode}" if mode else "redfish-vendor"


def vendor_log(mode: str) -> Path:
    """What the `mode` front was asked and answered, one JSON object per line (sim/bmc_vendor_sim.py)."""
    return VENDOR_DIR / f"{mode}.jsonl"


def start_vendor_bmcs(auth: str) -> None:
    """The vendor-behaviour fronts (SIMULATION, sim/bmc_vendor_sim.py), one per mode, before one more fake-driver
    emulator whose system is no fleet node: what they do to it touches no lab host."""
    cert, key = tls()
    if not daemon_pid(vendor_unit()):
        write_file(VENDOR_DIR / "htpasswd", auth, mode=0o600)
        uuid_ = str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{config.VENDOR_BMC_SYSTEM}.{config.DOMAIN}"))
        write_file(VENDOR_DIR / "emulator.conf", _emulator_config(
            config.VENDOR_BMC_SYSTEM, uuid_, config.VENDOR_BMC_MAC, "192.0.2.250", config.VENDOR_BMC_PORT, VENDOR_DIR))
        start_daemon(vendor_unit(),
                     [str(VENV / "bin" / "sushy-emulator"), "--config", str(VENDOR_DIR / "emulator.conf")],
                     env={"TMPDIR": str(VENDOR_DIR)})
    for mode in config.VENDOR_BMC_MODES:
        if daemon_pid(vendor_unit(mode)):
            continue
        address, port = config.vendor_bmc_address(mode).rsplit(":", 1)
        start_daemon(vendor_unit(mode), [
            "/usr/bin/python3", "-m", "gpucloud_lab.sim.bmc_vendor_sim", "--mode", mode, "--listen", address,
            "--port", port, "--backend", f"https://{config.CONTROLLER_IP}:{config.VENDOR_BMC_PORT}",
            "--username", USERNAME, "--cert", str(cert), "--key", str(key), "--ca", str(pki.CA_CERT),
            "--log", str(vendor_log(mode))], env={"PYTHONPATH": str(config.LAB_DIR), "BMC_SIM_PASSWORD": PASSWORD})


def up() -> None:
    ensure_venv()
    auth = htpasswd()
    for host in config.GPU_NODES:
        start(host, auth)
    start_boot_target_bmc(auth)
    start_vendor_bmcs(auth)
    for host in config.GPU_NODES:
        wait_for(lambda h=host: port_open(config.CONTROLLER_IP, config.bmc_port(h)),
                 f"Redfish emulator for {host.name}", timeout=30)
    wait_for(lambda: port_open(config.CONTROLLER_IP, config.bmc_port(config.BOOT_TARGET)),
             f"Redfish emulator for {config.BOOT_TARGET.name}", timeout=30)
    for mode in config.VENDOR_BMC_MODES:
        port = int(config.vendor_bmc_address(mode).rsplit(":", 1)[1])
        wait_for(lambda p=port: port_open(config.CONTROLLER_IP, p), f"vendor BMC front {mode}", timeout=30)
    wait_for(lambda: port_open(config.CONTROLLER_IP, config.VENDOR_BMC_PORT), "vendor BMC emulator", timeout=30)


def down() -> None:
    for mode in config.VENDOR_BMC_MODES:
        stop_unit(vendor_unit(mode))
    stop_unit(vendor_unit())
    for host in (*config.GPU_NODES, config.BOOT_TARGET):
        stop_unit(unit(host))


def state(host: Host) -> str:
    if not daemon_pid(unit(host)):
        return "stopped"
    return "running" if port_open(config.CONTROLLER_IP, config.bmc_port(host)) else "starting"


class Redfish:
    """The lab component: BMC stand-ins, sushy-tools' Redfish emulator, one system per GPU node."""

    def up(self) -> None:
        say("Redfish BMC emulators: " + ", ".join(config.bmc_address(h) for h in config.GPU_NODES))
        up()

    def down(self) -> None:
        down()

    def rows(self) -> list[Row]:
        rows = [Row(f"bmc {h.name}", state(h), f"https://{config.bmc_address(h)}",
                    f"sushy-tools fake driver, system {h.name}, user {USERNAME}")
                for h in config.GPU_NODES]
        for mode in config.VENDOR_BMC_MODES:
            address = config.vendor_bmc_address(mode)
            running = daemon_pid(vendor_unit(mode)) and port_open(config.CONTROLLER_IP, int(address.rsplit(":", 1)[1]))
            rows.append(Row(f"bmc vendor {mode}", "running" if running else "stopped", f"https://{address}",
                            f"SIMULATION of {mode}'s Redfish behaviours before system {config.VENDOR_BMC_SYSTEM}"))
        return rows
