# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's Redfish module against BMCs that behave as vendors' do (lab/gpucloud_lab/sim/bmc_vendor_sim.py,
a SIMULATION before a sushy-tools emulator whose system is no fleet node).

Each mode is first shown to refuse what the vendor's BMC refuses (so the simulation is not lenient), then driven
through the module as provisioning drives a node: a one-time PXE boot with power on, a restart, power off. The
module must log in with a session and log out, send If-Match, use the settings object, keep the boot mode and
restart with the reset types the BMC lists."""
from __future__ import annotations

import base64
import json
import ssl
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.integration.lab import Lab, config, secrets

MODES = config.VENDOR_BMC_MODES
BACKEND = f"https://{config.CONTROLLER_IP}:{config.VENDOR_BMC_PORT}"
CONTEXT = ssl.create_default_context(cafile=str(config.PKI_DIR / "ca.crt"))
AUTH = "Basic " + base64.b64encode(f"admin:{secrets.LAB_PASSWORD}".encode()).decode()
LOGS = config.RUN_DIR / "redfish" / "vendor"


def http(base: str, method: str, path: str, body: dict | None = None,
         headers: dict | None = None) -> tuple[int, dict[str, Any], Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Authorization": AUTH, "Content-Type": "application/json",
                                              **(headers or {})})
    try:
        with urllib.request.urlopen(request, context=CONTEXT, timeout=15) as response:
            raw = response.read()
            return response.status, (json.loads(raw) if raw.strip() else {}), response.headers
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        return exc.code, (json.loads(raw) if raw.strip() else {}), exc.headers


def front(mode: str) -> str:
    return "https://" + config.vendor_bmc_address(mode)


def system_path() -> str:
    return http(BACKEND, "GET", "/redfish/v1/Systems")[1]["Members"][0]["@odata.id"]


def message_id(body: dict) -> str:
    return body["error"]["@Message.ExtendedInfo"][0]["MessageId"]


def drive(lab: Lab, mode: str, **extra) -> dict[str, Any]:
    """The collection's redfish_system module through the lab's BMC playbook, the BMC swapped for the front."""
    run = lab.playbook("provision_bmc.yml", {"lab_bmc": {"url": front(mode)}, "lab_expect_mac": config.VENDOR_BMC_MAC,
                                             "lab_wait_timeout": 60, **extra})
    assert run.rc == 0, run.failures()
    return run.results("Power through Redfish")["gpu4"]


def vendor_log(mode: str, since: int) -> list[dict[str, Any]]:
    lines = (LOGS / f"{mode}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines[since:]]


def log_length(mode: str) -> int:
    path = LOGS / f"{mode}.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def settle_off(mode: str) -> None:
    """Start from a system that is off, its override cleared and its mode UEFI (sushy-tools' fake driver applies
    a power change 1-11 s after it is asked)."""
    path = system_path()
    http(BACKEND, "PATCH", path, {"Boot": {"BootSourceOverrideTarget": "Hdd", "BootSourceOverrideMode": "UEFI"}})
    if http(BACKEND, "GET", path)[1]["PowerState"] != "Off":
        http(BACKEND, "POST", path + "/Actions/ComputerSystem.Reset", {"ResetType": "ForceOff"})
    deadline = time.monotonic() + 30
    while http(BACKEND, "GET", path)[1]["PowerState"] != "Off":
        assert time.monotonic() < deadline, "the vendor box did not power off"
        time.sleep(0.5)


def test_each_front_refuses_what_its_vendor_refuses(lab: Lab) -> None:
    """The simulation is as strict as the BMCs it copies (sources in bmc_vendor_sim.py)."""
    path = system_path()
    pxe = {"Boot": {"BootSourceOverrideTarget": "Pxe", "BootSourceOverrideMode": "UEFI"}}
    for mode in MODES:
        status, _body, headers = http(front(mode), "GET", path)
        assert status == 200 and headers["ETag"].startswith('"'), mode
        stale = http(front(mode), "PATCH", path, pxe, {"If-Match": '"0123456789abcdef"'})
        assert stale[0] == 412 and message_id(stale[1]) == "Base.1.18.PreconditionFailed", (mode, stale)
        root = http(front(mode), "GET", "/redfish/v1/")[1]
        assert root["Links"]["Sessions"]["@odata.id"] == "/redfish/v1/SessionService/Sessions", mode
    missing = http(front("ami"), "PATCH", path, pxe)
    assert missing[0] == 428 and message_id(missing[1]) == "Ami.1.0.PreconditionHeaderMissing"
    etag = http(front("idrac10"), "GET", path)[2]["ETag"]
    read_only = http(front("idrac10"), "PATCH", path, pxe, {"If-Match": etag})
    assert read_only[0] == 400 and message_id(read_only[1]) == "Base.1.18.PropertyNotWritable"
    refused = http(front("openbmc-ibm"), "POST", path + "/Actions/ComputerSystem.Reset", {"ResetType": "ForceRestart"})
    assert refused[0] == 400 and message_id(refused[1]) == "Base.1.18.ActionParameterUnknown"
    listed = http(front("openbmc-ibm"), "GET", path)[1]["Actions"]["#ComputerSystem.Reset"]
    assert "ForceRestart" not in listed["ResetType@Redfish.AllowableValues"]
    http(front("supermicro"), "PATCH", path, {"Boot": {"BootSourceOverrideTarget": "Pxe"}})
    assert http(BACKEND, "GET", path)[1]["Boot"]["BootSourceOverrideMode"] == "Legacy"  # the mode was not kept
    http(BACKEND, "PATCH", path, {"Boot": {"BootSourceOverrideMode": "UEFI"}})
    # A BMC holds few sessions: past the limit a login is refused, so a client that never logs out is caught.
    sessions = "/redfish/v1/SessionService/Sessions"
    made = [http(front("ami"), "POST", sessions, {"UserName": "admin", "Password": secrets.LAB_PASSWORD})
            for _attempt in range(5)]
    assert [m[0] for m in made] == [201, 201, 201, 201, 503]
    assert message_id(made[-1][1]) == "Base.1.18.SessionLimitExceeded"
    for _status, session, _headers in made[:4]:
        assert http(front("ami"), "DELETE", session["@odata.id"])[0] == 204
    bad = http(front("ami"), "POST", sessions, {"UserName": "admin", "Password": "not-it"})
    assert bad[0] == 401


@pytest.mark.parametrize("mode", MODES)
def test_the_module_boots_and_restarts_a_node_through_each_vendor_s_bmc(lab: Lab, mode: str) -> None:
    settle_off(mode)
    path = system_path()
    start = log_length(mode)
    first = drive(lab, mode, lab_power="on", lab_boot_once="Pxe")
    assert first["changed"] and first["auth"] == "session" and first["resets"] == ["On"]
    assert first["power_state"] == "On" and first["mac_addresses"] == [config.VENDOR_BMC_MAC]
    after = http(BACKEND, "GET", path)[1]["Boot"]
    # The override reached the system (for iDRAC 10 through its settings object, applied at the power-on) with
    # the boot mode kept (Supermicro would have reset it).
    assert after["BootSourceOverrideTarget"] == "Pxe" and after["BootSourceOverrideMode"] == "UEFI", after
    restart = drive(lab, mode, lab_power="cycle")
    assert restart["power_state"] == "On"
    assert restart["resets"] == (["ForceOff", "On"] if mode == "openbmc-ibm" else ["ForceRestart"]), restart
    again = drive(lab, mode, lab_power="on")
    assert not again["changed"] and again["resets"] == []
    off = drive(lab, mode, lab_power="off")
    assert off["resets"] == ["ForceOff"] and off["power_state"] == "Off"
    log = vendor_log(mode, start)
    logins = [e for e in log if e["method"] == "POST" and e["path"].endswith("/Sessions")]
    logouts = [e for e in log if e["method"] == "DELETE"]
    assert len(logins) == 4 and [e["status"] for e in logouts] == [204] * 4, log  # one session per run, deleted
    assert all(e["auth"] == "session" for e in log if e not in logins and e["path"] != "/redfish/v1/"), log
    patches = [e for e in log if e["method"] == "PATCH"]
    assert len(patches) == 1 and "BootSourceOverrideMode" in patches[0]["body_keys"], patches
    if mode == "idrac10":
        assert patches[0]["path"] == path + "/Settings"
    else:
        assert patches[0]["path"] == path and patches[0]["if_match"] and patches[0]["status"] < 300
    sessions = http(front(mode), "GET", "/redfish/v1/SessionService/Sessions")[1]
    assert sessions["Members@odata.count"] == 0
