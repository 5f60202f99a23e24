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
MANAGER = "/redfish/v1/Managers/bmc"
ISO = "http://198.51.100.10:8080/vmedia/node1.iso"


class Bmc:
    """A scripted BMC: answers `failures` 503s first, then serves one system; records requests.

    Optional behaviours of real BMCs (each named where a test turns it on): a SessionService, ETags with
    `If-Match` required on PATCH, a settings object for the system's Boot, a reduced ResetType list, a
    reset that is applied but answered 503, and virtual media linked from the system or from its manager."""

    def __init__(self) -> None:
        self.failures = 0
        self.requests: list[tuple[str, str, dict]] = []
        self.headers: list[dict] = []
        boot = {"BootSourceOverrideTarget": "None", "BootSourceOverrideEnabled": "Disabled"}
        self.state = {"PowerState": "Off", "Boot": boot, "EthernetInterfaces": {"@odata.id": SYSTEM + "/EthernetInterfaces"}}
        # As sushy-tools lists a system's NICs (templates/ethernet_interface*.json): one member per NIC.
        self.nics = {"nic1": {"MACAddress": "52:54:00:C6:33:63", "PermanentMACAddress": "52:54:00:C6:33:63"},
                     "nic2": {"MACAddress": "B8-3F-D2-00-00-01"}}
        self.sessions_enabled = False
        self.sessions: dict[str, str] = {}  # token -> session path
        self.logins = 0
        self.changed_by_another = 0  # the next PATCHes find the system changed since it was read
        self.require_if_match = False
        self.settings: dict | None = None  # pending Boot of a settings object, when the system has one
        self.allowed: list[str] | None = None
        self.reset_answers_503 = 0  # the reset is applied, the answer is lost
        self.version = 1
        self.members: list | None = None  # what /redfish/v1/Systems lists, when not the one system
        self.redirect_system_to = ""  # a GET of the system is answered 302 to this address
        self.raw: dict[str, tuple[int, bytes]] = {}  # path -> (status, body as sent), whatever the request
        # Virtual media as sushy-tools 2.2.0 serves it (templates/virtual_media*.json, its default drives): linked
        # from the system ("system") or, as iDRAC, iLO and XCC have it, from the system's manager ("manager").
        self.media_under = ""
        self.managed_by = False  # the system links its manager even where the drive is the system's
        self.drives = {"Cd": {"MediaTypes": ["CD", "DVD"], "Image": "", "Inserted": False, "WriteProtected": False},
                       "Floppy": {"MediaTypes": ["Floppy", "USBStick"], "Image": "", "Inserted": False,
                                  "WriteProtected": False}}
        self.insert_answers_503 = 0  # an InsertMedia answered 503 ...
        self.insert_503_applied = True  # ... after it took effect (else it did not)

    def etag(self) -> str:
        return 'W/"%d"' % self.version

    def media_root(self) -> str:
        """The VirtualMedia collection's path, '' when the BMC links none."""
        owner = {"system": SYSTEM, "manager": MANAGER}.get(self.media_under)
        return owner + "/VirtualMedia" if owner else ""

    def drive(self, drive_id: str) -> dict:
        path = "%s/%s" % (self.media_root(), drive_id)
        actions = {"#VirtualMedia.%s" % a: {"target": "%s/Actions/VirtualMedia.%s" % (path, a)}
                   for a in ("EjectMedia", "InsertMedia")}
        return dict(self.drives[drive_id], **{"@odata.id": path, "Id": drive_id, "ConnectedVia": "URI",
                                              "Actions": actions})

    def posts(self) -> list[tuple[str, dict]]:
        return [(p.rsplit("/", 1)[-1], b) for m, p, b in self.requests if m == "POST"]


@pytest.fixture
def bmc() -> Iterator[tuple[Bmc, str]]:
    fake = Bmc()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def _answer(self, code: int, body: dict | None = None, headers: dict | None = None) -> None:
            data = json.dumps(body or {}).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else {}
            fake.requests.append((self.command, self.path, body))
            fake.headers.append(dict(self.headers))
            if self.path in fake.raw:
                code, data = fake.raw[self.path]
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return None
            sessions = "/redfish/v1/SessionService/Sessions"
            if fake.failures:
                fake.failures -= 1
                return self._answer(503, {"error": {"message": "busy"}})
            if self.path == "/redfish/v1/":
                root = {"Systems": {"@odata.id": "/redfish/v1/Systems"}}
                if fake.sessions_enabled:
                    root["Links"] = {"Sessions": {"@odata.id": sessions}}
                return self._answer(200, root)
            if fake.sessions_enabled and self.path == sessions and self.command == "POST":
                if body != {"UserName": "admin", "Password": PASSWORD}:
                    return self._answer(401, {"error": {"message": "login failed"}})
                fake.logins += 1
                token = "tok-%d" % fake.logins
                fake.sessions[token] = f"{sessions}/{fake.logins}"
                return self._answer(201, {}, {"X-Auth-Token": token, "Location": fake.sessions[token]})
            expected = "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()
            token = self.headers.get("X-Auth-Token")
            if not (token in fake.sessions or self.headers.get("Authorization") == expected):
                return self._answer(401, {"error": {"message": "unauthorized"}})
            if self.command == "DELETE" and token and fake.sessions.get(token) == self.path:
                del fake.sessions[token]
                return self._answer(204)
            if self.path == "/redfish/v1/Systems":
                return self._answer(200, {"Members": [{"@odata.id": SYSTEM}] if fake.members is None
                                          else fake.members})
            if self.path == SYSTEM and fake.redirect_system_to:
                return self._answer(302, {}, {"Location": fake.redirect_system_to + SYSTEM})
            if self.path == SYSTEM and self.command == "GET":
                state = dict(fake.state)
                if fake.settings is not None:
                    state["@Redfish.Settings"] = {"SettingsObject": {"@odata.id": SYSTEM + "/Settings"}}
                if fake.allowed is not None:
                    state["Actions"] = {"#ComputerSystem.Reset": {"ResetType@Redfish.AllowableValues": fake.allowed}}
                if fake.media_under == "system":
                    state["VirtualMedia"] = {"@odata.id": SYSTEM + "/VirtualMedia"}
                if fake.media_under == "manager" or fake.managed_by:
                    state["Links"] = {"ManagedBy": [{"@odata.id": MANAGER}]}
                return self._answer(200, state, {"ETag": fake.etag()})
            if self.path == SYSTEM + "/Settings" and fake.settings is not None:
                if self.command == "PATCH":
                    fake.settings.update(body["Boot"])
                return self._answer(200, {"Boot": fake.settings})
            if self.path == SYSTEM and self.command == "PATCH":
                if fake.settings is not None:
                    return self._answer(400, {"error": {"message": "PropertyNotWritable: Boot"}})
                if fake.changed_by_another:
                    fake.changed_by_another -= 1
                    fake.version += 1
                if fake.require_if_match and "If-Match" not in self.headers:
                    return self._answer(428, {"error": {"message": "If-Match required"}})
                if fake.require_if_match and self.headers["If-Match"] != fake.etag():
                    return self._answer(412, {"error": {"message": "ETag mismatch"}})
                fake.state["Boot"].update(body["Boot"])
                fake.version += 1
                return self._answer(200, fake.state)
            if self.path == SYSTEM + "/EthernetInterfaces":
                return self._answer(200, {"Members": [{"@odata.id": f"{SYSTEM}/EthernetInterfaces/{n}"}
                                                      for n in fake.nics]})
            if self.path.startswith(SYSTEM + "/EthernetInterfaces/") and self.path.rsplit("/", 1)[1] in fake.nics:
                return self._answer(200, fake.nics[self.path.rsplit("/", 1)[1]])
            if self.path == SYSTEM + "/Actions/ComputerSystem.Reset":
                if fake.allowed is not None and body["ResetType"] not in fake.allowed:
                    return self._answer(400, {"error": {"message": "ActionParameterNotSupported"}})
                fake.state["PowerState"] = "Off" if "Off" in body["ResetType"] else "On"
                fake.version += 1
                if fake.reset_answers_503:
                    fake.reset_answers_503 -= 1
                    return self._answer(503, {"error": {"message": "busy"}})
                return self._answer(204)
            if fake.media_under == "manager" and self.path == MANAGER and self.command == "GET":
                return self._answer(200, {"@odata.id": MANAGER, "Id": "bmc",
                                          "VirtualMedia": {"@odata.id": MANAGER + "/VirtualMedia"}})
            root = fake.media_root()
            if root and self.path == root and self.command == "GET":
                return self._answer(200, {"Members": [{"@odata.id": "%s/%s" % (root, d)} for d in fake.drives]})
            drive_id, _sep, action = self.path[len(root) + 1:].partition("/")
            if root and self.path.startswith(root + "/") and drive_id in fake.drives:
                drive = fake.drives[drive_id]
                if not action and self.command == "GET":
                    return self._answer(200, fake.drive(drive_id))
                if action == "Actions/VirtualMedia.InsertMedia" and self.command == "POST":
                    busy = fake.insert_answers_503 > 0
                    if busy:
                        fake.insert_answers_503 -= 1
                    if not busy or fake.insert_503_applied:
                        drive.update(Image=body["Image"], Inserted=body.get("Inserted", True),
                                     WriteProtected=body.get("WriteProtected", True))
                    return self._answer(503, {"error": {"message": "busy"}}) if busy else self._answer(204)
                if action == "Actions/VirtualMedia.EjectMedia" and self.command == "POST":
                    drive.update(Image="", Inserted=False)
                    return self._answer(204)
            return self._answer(404, {"error": {"message": "no such resource"}})

        do_GET = do_POST = do_PATCH = do_DELETE = _handle

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
    assert sleeps == [1.0, 2.0] and rf.requests == 5  # 2 x 503, then the service root, Systems, the system


def test_a_bmc_that_stays_down_is_reported_by_name_without_the_password(bmc) -> None:
    fake, url = bmc
    fake.failures = 100
    rf, sleeps = client(url, retries=3)
    with pytest.raises(RedfishError) as err:
        rf.power_state()
    message = str(err.value)
    assert message.startswith(f"node1: BMC {url}: GET /redfish/v1/ failed 4 times, last with HTTP 503")
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
    assert "wrong-password-123" not in str(err.value) and not sleeps and len(fake.requests) == 2  # root, Systems


def test_boot_once_reset_and_wait(bmc) -> None:
    fake, url = bmc
    rf = client(url)[0]
    rf.set_boot_once("Pxe")
    assert fake.requests[-1] == ("PATCH", SYSTEM, {"Boot": {"BootSourceOverrideTarget": "Pxe",
                                                            "BootSourceOverrideEnabled": "Once"}})
    assert fake.headers[-1]["If-Match"] == 'W/"1"'  # the ETag of the system as read before
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


# --- as real BMCs behave: sessions, ETags, settings objects, reset types, no blind POST ------------------------

def test_a_session_is_used_where_the_service_root_offers_one_and_deleted_at_close(bmc) -> None:
    """DSP0266 "Session login": POST the credentials once, then X-Auth-Token; DELETE the session at the end."""
    fake, url = bmc
    fake.sessions_enabled = True
    with client(url)[0] as rf:
        assert rf.power_state() == "Off" and rf.auth == "session"
        assert fake.sessions == {"tok-1": "/redfish/v1/SessionService/Sessions/1"}
    assert fake.sessions == {}  # logged out
    assert fake.requests[1] == ("POST", "/redfish/v1/SessionService/Sessions", {"UserName": "admin", "Password": PASSWORD})
    after_login = fake.headers[2:]
    assert after_login and all(h.get("X-Auth-Token") == "tok-1" and "Authorization" not in h for h in after_login)
    assert fake.requests[-1] == ("DELETE", "/redfish/v1/SessionService/Sessions/1", {})


def test_an_expired_session_is_renewed_once(bmc) -> None:
    fake, url = bmc
    fake.sessions_enabled = True
    rf = client(url)[0]
    rf.power_state()
    fake.sessions.clear()  # the BMC dropped it
    assert rf.power_state() == "Off"
    assert list(fake.sessions) == ["tok-2"]


def test_a_wrong_password_at_session_login_fails_without_printing_it(bmc) -> None:
    fake, url = bmc
    fake.sessions_enabled = True
    with pytest.raises(RedfishError) as err:
        client(url, password="wrong-password-123")[0].power_state()
    assert "authentication failed (HTTP 401)" in str(err.value) and "wrong-password-123" not in str(err.value)


def test_a_bmc_that_requires_if_match_gets_the_etag_and_a_stale_one_is_read_again(bmc) -> None:
    """Lenovo XCC / AMI: 428 without If-Match, 412 for an ETag that no longer matches."""
    fake, url = bmc
    fake.require_if_match = True
    rf = client(url)[0]
    rf.set_boot_once("Pxe")
    assert fake.state["Boot"]["BootSourceOverrideTarget"] == "Pxe"
    fake.changed_by_another = 1  # between the client's read and its PATCH
    rf.set_boot_once("Hdd")
    tags = [h.get("If-Match") for (m, _p, _b), h in zip(fake.requests, fake.headers, strict=True) if m == "PATCH"]
    assert tags == ['W/"1"', 'W/"2"', 'W/"3"']  # the one that went stale (412), then the one read again
    assert fake.state["Boot"]["BootSourceOverrideTarget"] == "Hdd"


def test_a_system_with_a_settings_object_is_changed_there(bmc) -> None:
    """iDRAC 10: the System's Boot is read-only; changes go to @Redfish.Settings' SettingsObject."""
    fake, url = bmc
    fake.settings = {}
    rf = client(url)[0]
    rf.set_boot_once("Pxe")
    assert [p for m, p, _b in fake.requests if m == "PATCH"] == [SYSTEM + "/Settings"]
    assert fake.state["Boot"]["BootSourceOverrideTarget"] == "None"  # applied by the BMC at the next reset
    assert rf.boot_override() == {"target": "Pxe", "enabled": "Once"}  # the pending change counts


def test_the_boot_mode_goes_with_the_target(bmc) -> None:
    """Supermicro resets BootSourceOverrideMode when a PATCH leaves it out: send the system's, or the fleet's."""
    fake, url = bmc
    fake.state["Boot"]["BootSourceOverrideMode"] = "UEFI"
    client(url)[0].set_boot_once("Pxe")
    assert fake.requests[-1][2]["Boot"]["BootSourceOverrideMode"] == "UEFI"
    client(url, boot_mode="Legacy")[0].set_boot_once("Pxe")
    assert fake.requests[-1][2]["Boot"]["BootSourceOverrideMode"] == "Legacy"
    with pytest.raises(RedfishError, match="boot_mode 'uefi' is not one of UEFI, Legacy"):
        client(url, boot_mode="uefi")


def test_a_boot_target_the_system_does_not_list_is_refused_before_any_patch(bmc) -> None:
    """A BMC lists the targets it takes (e.g. no UefiHttp in Legacy mode): another one fails naming them."""
    fake, url = bmc
    fake.state["Boot"]["BootSourceOverrideTarget@Redfish.AllowableValues"] = ["Pxe", "Hdd", "Cd"]
    sent = len(fake.requests)
    with pytest.raises(RedfishError, match="does not take boot target UefiHttp; it lists Pxe, Hdd, Cd"):
        client(url)[0].set_boot_once("UefiHttp")
    assert not [r for r in fake.requests[sent:] if r[0] != "GET"]
    fake.state["Boot"]["BootSourceOverrideTarget@Redfish.AllowableValues"].append("UefiHttp")
    client(url)[0].set_boot_once("UefiHttp")
    assert fake.requests[-1][2]["Boot"]["BootSourceOverrideTarget"] == "UefiHttp"


def test_a_restart_without_force_restart_is_off_then_on(bmc) -> None:
    fake, url = bmc
    fake.allowed = ["On", "ForceOff", "GracefulShutdown"]
    fake.state["PowerState"] = "On"
    rf = client(url)[0]
    assert rf.reset("ForceRestart") == ["ForceOff", "On"]
    assert [b["ResetType"] for m, _p, b in fake.requests if m == "POST"] == ["ForceOff", "On"]
    assert fake.state["PowerState"] == "On"


def test_a_reset_type_the_bmc_does_not_list_is_refused_before_anything_is_sent(bmc) -> None:
    fake, url = bmc
    fake.allowed = ["On", "ForceOff"]
    with pytest.raises(RedfishError, match=r"does not offer reset type GracefulShutdown .*it lists On, ForceOff\); "
                                           r"nothing was sent"):
        client(url)[0].reset("GracefulShutdown")
    assert not [m for m, _p, _b in fake.requests if m == "POST"]


def test_a_reset_whose_answer_is_lost_is_not_sent_again_once_the_state_shows_it(bmc) -> None:
    """The BMC powered the node on but answered 503: re-read PowerState, do not POST a second time."""
    fake, url = bmc
    fake.reset_answers_503 = 1
    rf, sleeps = client(url)
    assert rf.reset("On") == ["On"]
    assert [b["ResetType"] for m, _p, b in fake.requests if m == "POST"] == ["On"] and sleeps == [1.0]


def test_a_restart_whose_answer_is_lost_is_reported_not_repeated(bmc) -> None:
    fake, url = bmc
    fake.state["PowerState"] = "On"
    fake.reset_answers_503 = 5
    with pytest.raises(RedfishError, match=r"POST .*ComputerSystem.Reset \(ForceRestart\) failed with HTTP 503 and "
                                           r"the power state \(On\) cannot tell whether it happened; not sent again"):
        client(url)[0].reset("ForceRestart")
    assert len([m for m, _p, _b in fake.requests if m == "POST"]) == 1


# --- what a BMC answers is untrusted ------------------------------------------------------------------------------


@pytest.fixture
def elsewhere() -> Iterator[tuple[list, str]]:
    """Another host on loopback that records what reaches it (it must be nothing)."""
    seen: list = []

    class Record(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def _handle(self) -> None:
            seen.append((self.command, self.path, dict(self.headers)))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        do_GET = do_POST = do_PATCH = do_DELETE = _handle

    server = ThreadingHTTPServer(("127.0.0.1", 0), Record)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield seen, "127.0.0.1:%d" % server.server_address[1]
    server.shutdown()


@pytest.mark.parametrize("link", ["@{other}/redfish/v1/Systems/1", "/redfish/v1/Systems/../../x",
                                  "/redfish/v1/Systems/1?x=@{other}", "//{other}/redfish/v1/Systems/1", None, 7])
def test_a_system_link_that_is_no_system_path_is_refused_and_nothing_goes_elsewhere(bmc, elsewhere, link) -> None:
    """The system's path is appended to the BMC's URL: '@host/...' made it http://bmc:port@host/..., and the session
    token and the power action went there."""
    fake, url = bmc
    seen, other = elsewhere
    fake.sessions_enabled = True
    fake.members = [{"@odata.id": link.format(other=other) if isinstance(link, str) else link}]
    rf = client(url)[0]
    with pytest.raises(RedfishError, match="is not a /redfish/v1/Systems/<id> path; nothing was changed"):
        rf.power_state()
    rf.close()
    assert seen == [] and all(method in ("GET", "POST", "DELETE") for method, _p, _b in fake.requests)


def test_a_fleet_system_id_that_is_no_id_is_refused(bmc) -> None:
    rf = client(bmc[1], system_id="System 1")[0]
    with pytest.raises(RedfishError, match="system_id 'System 1' is not a Redfish system id"):
        rf.power_state()


def test_a_redirect_is_refused_and_the_credentials_never_follow_it(bmc, elsewhere) -> None:
    fake, url = bmc
    seen, other = elsewhere
    fake.redirect_system_to = "http://" + other
    rf = client(url)[0]
    with pytest.raises(RedfishError) as err:
        rf.power_state()
    assert "was redirected (HTTP 302) to 'http://%s%s'" % (other, SYSTEM) in str(err.value)
    assert seen == [] and PASSWORD not in str(err.value)


def test_a_zero_mac_identifies_nothing_on_either_side(bmc) -> None:
    """BMCs list 00:00:00:00:00:00 for a port without a MAC: it must never match the fleet's node."""
    fake, url = bmc
    fake.nics["nic3"] = {"MACAddress": "00:00:00:00:00:00"}
    rf = client(url)[0]
    assert "00:00:00:00:00:00" not in rf.mac_addresses()
    for mac in ("00:00:00:00:00:00", "01:00:5e:00:00:01"):
        with pytest.raises(RedfishError, match="is no MAC address to identify the node by"):
            rf.identify(mac)


def test_the_backoff_between_tries_is_capped(bmc) -> None:
    fake, url = bmc
    fake.failures = 8
    rf, sleeps = client(url, retries=8)
    assert rf.power_state() == "Off"
    assert sleeps == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]


@pytest.mark.parametrize("answer, named", [
    (b"[1, 2]", "answered JSON that is no object (list)"),
    (b'"On"', "answered JSON that is no object (str)"),
    (b'{"PowerState": "' + b"x" * (5 * 1024 * 1024) + b'"}', "answered more than 4194304 bytes"),
])
def test_an_answer_that_is_no_object_or_too_large_is_a_named_error(bmc, answer: bytes, named: str) -> None:
    fake, url = bmc
    fake.raw[SYSTEM] = (200, answer)
    rf, sleeps = client(url)
    with pytest.raises(RedfishError) as err:
        rf.power_state()
    assert f"node1: BMC {url}: GET {SYSTEM} {named}" in str(err.value), str(err.value)
    assert sleeps == []  # not retried: the same BMC answers the same


def test_parts_of_the_system_that_are_no_objects_read_as_absent(bmc) -> None:
    """A BMC's Boot, Actions, settings link or NIC list of the wrong type: no AttributeError, read as absent."""
    fake, url = bmc
    system = {"PowerState": "On", "Boot": ["Pxe"], "Actions": "none", "@Redfish.Settings": 7,
              "EthernetInterfaces": {"@odata.id": SYSTEM + "/EthernetInterfaces"}}
    fake.raw[SYSTEM] = (200, json.dumps(system).encode())
    fake.raw[SYSTEM + "/EthernetInterfaces"] = (200, b'{"Members": {"@odata.id": "/redfish/v1/x"}}')
    rf = client(url)[0]
    assert rf.power_state() == "On"
    assert rf.boot_override() == {"target": "None", "enabled": "Disabled"}
    assert rf.allowed_resets() is None
    assert rf.mac_addresses() == []
    with pytest.raises(RedfishError, match="has no network interface listed"):
        rf.identify("52:54:00:c6:33:63")


def test_a_refusal_that_echoes_a_credential_is_printed_masked_and_printable(bmc) -> None:
    """A BMC may quote the request it refused (the session token, a login's password) and anything it likes."""
    fake, url = bmc
    fake.sessions_enabled = True
    echo = {"error": {"message": f"bad request from admin:{PASSWORD} with X-Auth-Token tok-1\x1b[2J\nroot# "}}
    fake.raw[SYSTEM + "/Actions/ComputerSystem.Reset"] = (400, json.dumps(echo).encode())
    rf = client(url)[0]
    with pytest.raises(RedfishError) as err:
        rf.reset("On")
    message = str(err.value)
    assert "was refused with HTTP 400: bad request from admin:******** with X-Auth-Token ********" in message, message
    assert PASSWORD not in message and "tok-1" not in message
    assert all(c.isprintable() for c in message), repr(message)


def test_a_bmc_url_with_credentials_is_refused_without_printing_them() -> None:
    with pytest.raises(RedfishError) as err:
        Redfish("https://admin:Hunter2-bmc@192.0.2.121", "admin", PASSWORD, name="node1")
    assert str(err.value).startswith("node1: bmc.url holds a user name or password (user@host)")
    assert "Hunter2" not in str(err.value)


# --- virtual media: the CD drive under the system or its manager, no blind POST -----------------------------------


def _posted(fake: Bmc) -> list[str]:
    return [p for m, p, _b in fake.requests if m != "GET"]


@pytest.mark.parametrize(("under", "owner"), [("system", SYSTEM), ("manager", MANAGER)])
def test_the_virtual_cd_drive_is_found_under_the_system_or_its_manager(bmc, under: str, owner: str) -> None:
    """sushy-tools (Redfish 2021.1 and later) links VirtualMedia from the system; iDRAC, iLO and XCC from the
    system's manager (Links.ManagedBy). The drive is the one whose MediaTypes list CD or DVD, whatever its place."""
    fake, url = bmc
    fake.media_under = under
    fake.drives = dict(reversed(list(fake.drives.items())))  # Floppy first: the USB stick is no CD
    rf = client(url)[0]
    assert rf.virtual_media_path() == owner + "/VirtualMedia/Cd"
    assert rf.media() == {"image": "", "inserted": False, "path": owner + "/VirtualMedia/Cd"}
    assert rf.insert_media(ISO) is True
    assert fake.drives["Cd"]["Image"] == ISO and fake.drives["Cd"]["Inserted"] is True
    assert fake.drives["Cd"]["WriteProtected"] is True
    assert fake.drives["Floppy"]["Image"] == ""
    assert fake.posts() == [("VirtualMedia.InsertMedia", {"Image": ISO, "Inserted": True, "WriteProtected": True})]
    assert rf.media() == {"image": ISO, "inserted": True, "path": owner + "/VirtualMedia/Cd"}


def test_the_system_s_own_drive_is_used_without_reading_its_manager(bmc) -> None:
    """A system that has a drive and links a manager that answers badly: the manager is never read, and the drive
    is looked up once per client (a second media() reads only the drive)."""
    fake, url = bmc
    fake.media_under, fake.managed_by = "system", True
    fake.raw[MANAGER] = (500, b'{"error": {"message": "manager down"}}')
    rf = client(url)[0]
    assert rf.media()["path"] == SYSTEM + "/VirtualMedia/Cd"
    assert rf.media()["path"] == SYSTEM + "/VirtualMedia/Cd"
    assert not [path for _method, path, _body in fake.requests if path.startswith(MANAGER)]
    assert [path for _method, path, _body in fake.requests].count(SYSTEM + "/VirtualMedia") == 1


@pytest.mark.parametrize("drives", [
    {"Floppy": {"MediaTypes": ["Floppy", "USBStick"], "Image": "", "Inserted": False}},
    {},
    None,  # no VirtualMedia link at all
])
def test_a_bmc_without_a_virtual_cd_drive_is_refused_before_any_change(bmc, drives: dict | None) -> None:
    fake, url = bmc
    fake.media_under = "system" if drives is not None else ""
    fake.drives = drives or {}
    rf = client(url)[0]
    for act in (lambda: rf.insert_media(ISO), rf.eject_media, rf.media):
        with pytest.raises(RedfishError) as err:
            act()
        assert str(err.value).startswith(f"node1: BMC {url}: lists no virtual CD/DVD drive"), str(err.value)
        assert "nothing was changed" in str(err.value)
    assert _posted(fake) == []


def test_the_image_already_inserted_is_not_inserted_again(bmc) -> None:
    fake, url = bmc
    fake.media_under = "system"
    fake.drives["Cd"].update(Image=ISO, Inserted=True)
    assert client(url)[0].insert_media(ISO) is False
    assert _posted(fake) == []


def test_another_image_in_the_drive_is_ejected_before_the_insert(bmc) -> None:
    fake, url = bmc
    fake.media_under = "manager"
    fake.drives["Cd"].update(Image="http://198.51.100.10:8080/vmedia/old.iso", Inserted=True)
    assert client(url)[0].insert_media(ISO) is True
    assert fake.posts() == [("VirtualMedia.EjectMedia", {}),
                            ("VirtualMedia.InsertMedia", {"Image": ISO, "Inserted": True, "WriteProtected": True})]
    assert _posted(fake) == [MANAGER + "/VirtualMedia/Cd/Actions/VirtualMedia.EjectMedia",
                             MANAGER + "/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia"]
    assert (fake.drives["Cd"]["Image"], fake.drives["Cd"]["Inserted"]) == (ISO, True)


@pytest.mark.parametrize("image", ["", "ftp://198.51.100.10/node1.iso", "file:///srv/node1.iso", "/srv/node1.iso",
                                   "http://198.51.100.10/a b.iso", "http://198.51.100.10/a.iso\nX-Evil: 1",
                                   "nfs://198.51.100.10/node1.iso"])
def test_an_image_that_is_no_http_url_is_refused_before_any_change(bmc, image: str) -> None:
    fake, url = bmc
    fake.media_under = "system"
    with pytest.raises(RedfishError) as err:
        client(url)[0].insert_media(image)
    assert str(err.value) == (f"node1: BMC {url}: virtual media image {image!r} is not an http(s) URL; nothing was "
                              "changed")
    assert _posted(fake) == [] and fake.drives["Cd"]["Image"] == ""


def test_an_insert_whose_answer_is_lost_is_not_sent_again_once_the_drive_shows_it(bmc) -> None:
    """InsertMedia is a POST: after a 503 the drive is read again; it holds the image, so it is not sent twice."""
    fake, url = bmc
    fake.media_under = "system"
    fake.insert_answers_503 = 1
    rf, sleeps = client(url)
    assert rf.insert_media(ISO) is True
    assert [a for a, _b in fake.posts()] == ["VirtualMedia.InsertMedia"] and sleeps == [1.0]
    assert fake.drives["Cd"]["Image"] == ISO


def test_an_insert_that_did_not_happen_is_sent_again_and_reported_when_it_never_does(bmc) -> None:
    fake, url = bmc
    fake.media_under = "system"
    fake.insert_answers_503, fake.insert_503_applied = 1, False
    rf, sleeps = client(url)
    assert rf.insert_media(ISO) is True
    assert [a for a, _b in fake.posts()] == ["VirtualMedia.InsertMedia"] * 2 and sleeps == [1.0]
    fake.drives["Cd"].update(Image="", Inserted=False)
    fake.requests.clear()
    fake.insert_answers_503 = 100
    rf, sleeps = client(url, retries=2)
    with pytest.raises(RedfishError, match=r"POST .*/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia failed 3 times, "
                                           r"last with HTTP 503, and the drive shows it did not happen"):
        rf.insert_media(ISO)
    assert len(fake.posts()) == 3 and sleeps == [1.0, 2.0, 4.0]  # and the drive read after the last


def test_an_eject_of_an_empty_drive_sends_nothing_and_of_a_full_one_empties_it(bmc) -> None:
    fake, url = bmc
    fake.media_under = "system"
    rf = client(url)[0]
    assert rf.eject_media() is False
    assert _posted(fake) == []
    fake.drives["Cd"].update(Image=ISO, Inserted=True)
    assert rf.eject_media() is True
    assert _posted(fake) == [SYSTEM + "/VirtualMedia/Cd/Actions/VirtualMedia.EjectMedia"]
    assert rf.media() == {"image": "", "inserted": False, "path": SYSTEM + "/VirtualMedia/Cd"}


def test_virtual_media_links_that_are_no_redfish_paths_are_not_followed(bmc, elsewhere) -> None:
    fake, url = bmc
    seen, other = elsewhere
    fake.media_under = "system"
    junk = json.dumps({"Members": [7, {"@odata.id": "//%s/redfish/v1/x" % other}, {"@odata.id": "http://%s/" % other},
                                   {"@odata.id": SYSTEM + "/VirtualMedia/Cd"}]})
    fake.raw[SYSTEM + "/VirtualMedia"] = (200, junk.encode())
    assert client(url)[0].virtual_media_path() == SYSTEM + "/VirtualMedia/Cd"
    assert seen == []


def test_the_last_insert_whose_answer_is_lost_is_read_back_before_it_is_reported(bmc) -> None:
    """Also the last try's 503 may have been applied: the drive is read once more, not reported as not happened."""
    fake, url = bmc
    fake.media_under = "system"
    fake.insert_answers_503 = 1
    rf, sleeps = client(url, retries=0)
    assert rf.insert_media(ISO) is True
    assert len(fake.posts()) == 1 and sleeps == [1.0]
    assert (fake.drives["Cd"]["Image"], fake.drives["Cd"]["Inserted"]) == (ISO, True)
