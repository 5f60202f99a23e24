# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Redfish client against a real HTTP server on loopback: retries, backoff, failures by name."""
from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision.redfish import Redfish, RedfishError

PASSWORD = "s3cret-bmc-pass"
SYSTEM = "/redfish/v1/Systems/node1"


class Bmc:
    """A scripted BMC: answers `failures` 503s first, then serves one system; records requests."""

    def __init__(self) -> None:
        self.failures = 0
        self.requests: list[tuple[str, str, dict]] = []
        boot = {"BootSourceOverrideTarget": "None", "BootSourceOverrideEnabled": "Disabled"}
        self.state = {"PowerState": "Off", "Boot": boot, "EthernetInterfaces": {"@odata.id": SYSTEM + "/EthernetInterfaces"}}
        # As sushy-tools lists a system's NICs (templates/ethernet_interface*.json): one member per NIC.
        self.nics = {"nic1": {"MACAddress": "52:54:00:C6:33:63", "PermanentMACAddress": "52:54:00:C6:33:63"},
                     "nic2": {"MACAddress": "B8-3F-D2-00-00-01"}}


@pytest.fixture
def bmc() -> Iterator[tuple[Bmc, str]]:
    fake = Bmc()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def _answer(self, code: int, body: dict | None = None) -> None:
            data = json.dumps(body or {}).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else {}
            fake.requests.append((self.command, self.path, body))
            expected = "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()
            if self.headers.get("Authorization") != expected:
                return self._answer(401, {"error": {"message": "unauthorized"}})
            if fake.failures:
                fake.failures -= 1
                return self._answer(503, {"error": {"message": "busy"}})
            if self.path == "/redfish/v1/Systems":
                return self._answer(200, {"Members": [{"@odata.id": SYSTEM}]})
            if self.path == SYSTEM and self.command == "GET":
                return self._answer(200, fake.state)
            if self.path == SYSTEM and self.command == "PATCH":
                fake.state["Boot"].update(body["Boot"])
                return self._answer(200, fake.state)
            if self.path == SYSTEM + "/EthernetInterfaces":
                return self._answer(200, {"Members": [{"@odata.id": f"{SYSTEM}/EthernetInterfaces/{n}"}
                                                      for n in fake.nics]})
            if self.path.startswith(SYSTEM + "/EthernetInterfaces/") and self.path.rsplit("/", 1)[1] in fake.nics:
                return self._answer(200, fake.nics[self.path.rsplit("/", 1)[1]])
            if self.path == SYSTEM + "/Actions/ComputerSystem.Reset":
                fake.state["PowerState"] = "Off" if "Off" in body["ResetType"] else "On"
                return self._answer(204)
            return self._answer(404, {"error": {"message": "no such resource"}})

        do_GET = do_POST = do_PATCH = _handle

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield fake, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def client(url: str, password: str = PASSWORD, **kwargs) -> tuple[Redfish, list[float]]:
    sleeps: list[float] = []
    return Redfish(url, "admin", password, name="node1", sleep=sleeps.append, **kwargs), sleeps


def test_5xx_is_retried_with_backoff_then_succeeds(bmc) -> None:
    fake, url = bmc
    fake.failures = 2
    rf, sleeps = client(url)
    assert rf.power_state() == "Off"
    assert sleeps == [1.0, 2.0] and rf.requests == 4  # 2 x 503, then Systems, then the system


def test_a_bmc_that_stays_down_is_reported_by_name_without_the_password(bmc) -> None:
    fake, url = bmc
    fake.failures = 100
    rf, sleeps = client(url, retries=3)
    with pytest.raises(RedfishError) as err:
        rf.power_state()
    message = str(err.value)
    assert message.startswith(f"node1: BMC {url}: GET /redfish/v1/Systems failed 4 times, last with HTTP 503")
    assert PASSWORD not in message and sleeps == [1.0, 2.0, 4.0]


def test_no_answer_at_all_is_retried_and_reported(bmc) -> None:
    rf, sleeps = client("http://127.0.0.1:9", retries=1, timeout=2)  # discard port: nothing listens
    with pytest.raises(RedfishError, match=r"node1: BMC http://127.0.0.1:9: .* failed 2 times, last with no answer"):
        rf.power_state()
    assert sleeps == [1.0]


def test_a_wrong_password_fails_at_once_without_printing_it(bmc) -> None:
    fake, url = bmc
    rf, sleeps = client(url, password="wrong-password-123")
    with pytest.raises(RedfishError) as err:
        rf.power_state()
    assert "authentication failed (HTTP 401) for user 'admin'" in str(err.value)
    assert "wrong-password-123" not in str(err.value) and not sleeps and len(fake.requests) == 1


def test_boot_once_reset_and_wait(bmc) -> None:
    fake, url = bmc
    rf = client(url)[0]
    rf.set_boot_once("Pxe")
    assert fake.requests[-1] == ("PATCH", SYSTEM, {"Boot": {"BootSourceOverrideTarget": "Pxe",
                                                            "BootSourceOverrideEnabled": "Once"}})
    assert rf.boot_override() == {"target": "Pxe", "enabled": "Once"}
    rf.reset("On")
    assert rf.wait_power("On", timeout=5) == "On"
    assert rf.inventory()["PowerState"] == "On"


def test_wait_power_gives_up_naming_the_state(bmc) -> None:
    url = bmc[1]
    rf = client(url)[0]
    ticks = iter(range(100))
    with pytest.raises(RedfishError, match=r"node1: BMC .*: power state is still Off after 3 s \(wanted On\)"):
        rf.wait_power("On", timeout=3, clock=lambda: float(next(ticks)))


# --- which server a BMC drives: the fleet's MAC must be one of its system's NICs -----------------------------

def test_the_node_is_identified_by_a_mac_of_its_system_in_any_spelling(bmc) -> None:
    url = bmc[1]
    rf = client(url)[0]
    assert rf.mac_addresses() == ["52:54:00:c6:33:63", "b8:3f:d2:00:00:01"]
    for spelling in ("52:54:00:c6:33:63", "52-54-00-C6-33-63", "b8:3f:d2:00:00:01"):
        assert rf.identify(spelling) == ["52:54:00:c6:33:63", "b8:3f:d2:00:00:01"]


def test_a_bmc_of_another_server_is_refused_before_any_change(bmc) -> None:
    fake, url = bmc
    rf = client(url)[0]
    with pytest.raises(RedfishError) as err:
        rf.identify("52:54:00:00:00:99")
    message = str(err.value)
    assert message.startswith(f"node1: BMC {url}: the system it drives ({SYSTEM}) has the network interfaces "
                              "52:54:00:c6:33:63, b8:3f:d2:00:00:01, not 52:54:00:00:00:99")
    assert "nothing was changed" in message and PASSWORD not in message
    assert all(method == "GET" for method, _path, _body in fake.requests)


def test_a_system_that_lists_no_nic_or_junk_identifies_nothing(bmc) -> None:
    fake, url = bmc
    fake.nics = {"nic1": {"MACAddress": "not-a-mac", "PermanentMACAddress": None}, "nic2": {}}
    with pytest.raises(RedfishError, match="has no network interface listed"):
        client(url)[0].identify("52:54:00:c6:33:63")
    del fake.state["EthernetInterfaces"]
    rf = client(url)[0]
    assert rf.mac_addresses() == []
    with pytest.raises(RedfishError, match="is no MAC address"):
        rf.identify("52:54:00")
