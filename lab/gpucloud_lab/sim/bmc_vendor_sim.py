# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Vendor BMC behaviours **SIMULATION**: a Redfish front that answers as a named vendor's BMC does.

sushy-tools (the lab's Redfish emulator, OpenStack's) answers as a generic, lenient service: no sessions, no
ETags, every reset type, a writable Boot. Real BMCs differ, and a client written against sushy-tools alone
fails on them. This front sits before a sushy-tools emulator (fake driver) and adds, per mode, what the vendor's
BMC does, each from a source:

* every mode - DSP0266 sessions: the service root links ``SessionService`` and ``Links.Sessions``;
  ``POST .../Sessions`` with ``UserName``/``Password`` answers 201 with ``X-Auth-Token``, ``Location`` and the
  session; ``DELETE`` of it logs out. A BMC holds few sessions: past ``SESSION_LIMIT`` a login answers 503
  ``Base.1.18.SessionLimitExceeded`` (the Base registry's message), so a client that never logs out is caught.
  A strong ``ETag`` on every system read, a hash of the body, as OpenBMC's bmcweb sends it
  (``http/http_response.hpp``), and 412 ``PreconditionFailed`` for an ``If-Match`` that does not match
  (bmcweb ``redfish-core/include/query.hpp``; AMI/Lenovo TSM "Data modification requests"). A reset type the
  system does not list answers 400 ``ActionParameterUnknown`` (bmcweb ``error_messages.cpp``).
* ``ami`` - AMI MegaRAC (Lenovo ThinkSystem System Manager from RTP 1.5): a PATCH without ``If-Match`` answers
  428 ``Ami.1.0.PreconditionHeaderMissing``; the ETag is in the body too (``@odata.etag``), where Lenovo's own
  scripts read it (pubs.lenovo.com/tsm/data_modification_requests, stmcginnis/gofish#171,
  lenovo/python-redfish-lenovo ``set_server_boot_once.py``).
* ``supermicro`` - a PATCH of the boot target that leaves ``BootSourceOverrideMode`` out resets the mode to the
  BMC's default instead of keeping it (DMTF/Redfishtool#106, "as per their design"; the default is Legacy
  here: metal-operator#607 has to force UEFI on Supermicro).
* ``idrac10`` - Dell iDRAC 10: the System's Boot is read-only (400 ``Base.1.18.GeneralError`` with
  ``PropertyNotWritable``), changes go to ``/redfish/v1/Systems/ID/Settings`` and apply at the next reset
  (dsx-ai-factory/libredfish#33, community.general#11297, dell/iDRAC-Redfish-Scripting
  ``SetNextOneTimeBootDeviceREDFISH.py``). The System names that object in ``@Redfish.Settings``, as DSP0266
  describes settings objects (not confirmed from an iDRAC 10 answer: see docs/provisioning.md).
* ``openbmc-ibm`` - IBM's OpenBMC: ``ForceRestart`` is not among the system's reset types
  (ibm-openbmc/bmcweb#522) and is refused (#157).

Everything else goes to sushy-tools unchanged. Each request is logged as one JSON line (method, path, status,
how it authenticated, whether it carried If-Match); never a password or token.

``python -m gpucloud_lab.sim.bmc_vendor_sim --mode ami --listen IP --port N --backend URL --cert C --key K
--ca CA --log FILE`` serves in the foreground (the lab's ``redfish`` component runs one per mode); the BMC
password is ``BMC_SIM_PASSWORD``. Standard library only.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import ssl
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = tuple[int, dict[str, Any], dict[str, str]]  # status, body, extra headers

MODES = ("ami", "supermicro", "idrac10", "openbmc-ibm")
SESSION_LIMIT = 4
SESSIONS = "/redfish/v1/SessionService/Sessions"
SYSTEM_RE = re.compile(r"^/redfish/v1/Systems/([^/]+)$")
SETTINGS_RE = re.compile(r"^/redfish/v1/Systems/([^/]+)/Settings$")
RESET_RE = re.compile(r"^/redfish/v1/Systems/([^/]+)/Actions/ComputerSystem\.Reset$")
STARTS = ("On", "ForceOn", "ForceRestart", "GracefulRestart", "PowerCycle")
BOOT_KEYS = ("BootSourceOverrideTarget", "BootSourceOverrideEnabled", "BootSourceOverrideMode")
SUPERMICRO_DEFAULT_MODE = "Legacy"


def error_body(code: str, message: str, extended: str | None = None) -> dict[str, Any]:
    """A Redfish error as DSP0266 shapes it."""
    info = [{"MessageId": extended or code, "Message": message}]
    return {"error": {"code": code, "message": message, "@Message.ExtendedInfo": info}}


class VendorBmc:
    def __init__(self, mode: str, backend: str, username: str, password: str, ca: str | None, log: str | None):
        if mode not in MODES:
            raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
        self.mode, self.backend = mode, backend.rstrip("/")
        self.username, self._password = username, password
        self.context = ssl.create_default_context(cafile=ca) if ca else None
        self.log_path = log
        self.lock = threading.Lock()
        self.sessions: dict[str, str] = {}  # token -> session id
        self.next_session = 1
        self.pending: dict[str, dict[str, Any]] = {}  # idrac10: system id -> Boot waiting for the next reset
        # BootSourceOverrideEnabled per system: sushy-tools' fake driver ignores it and always says Continuous;
        # a BMC keeps what was set, and a "Once" override is used up by the next boot (DSP2046).
        self.enabled: dict[str, str] = {}

    # --- the backend (sushy-tools) -----------------------------------------------------------------------------

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.backend + path, data=data, method=method)
        token = base64.b64encode(f"{self.username}:{self._password}".encode()).decode()
        request.add_header("Authorization", "Basic " + token)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, context=self.context, timeout=30) as response:
                raw = response.read()
                return response.status, (json.loads(raw) if raw.strip() else {})
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                return exc.code, json.loads(raw) if raw.strip() else {}
            except ValueError:
                return exc.code, error_body("Base.1.18.GeneralError", raw.decode(errors="replace")[:300])

    # --- what the vendor adds ----------------------------------------------------------------------------------

    def system(self, ident: str) -> tuple[int, dict[str, Any]]:
        status, body = self.call("GET", f"/redfish/v1/Systems/{ident}")
        if status != 200:
            return status, body
        if isinstance(body.get("Boot"), dict):
            with self.lock:
                body["Boot"]["BootSourceOverrideEnabled"] = self.enabled.get(ident, "Disabled")
        if self.mode == "openbmc-ibm":
            reset = (body.get("Actions") or {}).get("#ComputerSystem.Reset") or {}
            values = reset.get("ResetType@Redfish.AllowableValues")
            if isinstance(values, list):
                reset["ResetType@Redfish.AllowableValues"] = [v for v in values if v != "ForceRestart"]
        if self.mode == "idrac10":
            body["@Redfish.Settings"] = {"@odata.type": "#Settings.v1_3_5.Settings",
                                         "SettingsObject": {"@odata.id": f"/redfish/v1/Systems/{ident}/Settings"}}
        if self.mode == "ami":
            body["@odata.etag"] = self.etag(body)
        return status, body

    @staticmethod
    def etag(body: dict[str, Any]) -> str:
        plain = {k: v for k, v in body.items() if k != "@odata.etag"}
        return '"%s"' % hashlib.sha256(json.dumps(plain, sort_keys=True).encode()).hexdigest()[:16]

    def allowed_resets(self, ident: str) -> list[str]:
        _status, body = self.system(ident)
        reset = (body.get("Actions") or {}).get("#ComputerSystem.Reset") or {}
        return list(reset.get("ResetType@Redfish.AllowableValues") or [])

    def handle(self, method: str, path: str, headers: Any, body: dict[str, Any]) -> Answer:
        path = path.split("?", 1)[0]
        if path in ("/redfish/v1", "/redfish/v1/") and method == "GET":
            status, root = self.call("GET", "/redfish/v1/")
            root.setdefault("Links", {})["Sessions"] = {"@odata.id": SESSIONS}
            root["SessionService"] = {"@odata.id": "/redfish/v1/SessionService"}
            return status, root, {}
        if path == SESSIONS and method == "POST":
            return self.login(body)
        auth = self.authenticated(headers)
        if not auth:
            return 401, error_body("Base.1.18.NoValidSession", "There is no valid session established with the "
                                   "implementation."), {"WWW-Authenticate": 'Basic realm="Redfish"'}
        if path == "/redfish/v1/SessionService" and method == "GET":
            return 200, {"@odata.id": path, "@odata.type": "#SessionService.v1_1_8.SessionService",
                         "Id": "SessionService", "Name": "Session Service", "ServiceEnabled": True,
                         "Sessions": {"@odata.id": SESSIONS}}, {}
        if path == SESSIONS and method == "GET":
            with self.lock:
                ids = sorted(self.sessions.values())
            return 200, {"@odata.id": SESSIONS, "@odata.type": "#SessionCollection.SessionCollection",
                         "Name": "Session Collection", "Members@odata.count": len(ids),
                         "Members": [{"@odata.id": f"{SESSIONS}/{i}"} for i in ids]}, {}
        if path.startswith(SESSIONS + "/") and method == "GET":
            ident = path.rsplit("/", 1)[1]
            with self.lock:
                known = ident in self.sessions.values()
            if not known:
                return 404, error_body("Base.1.18.ResourceNotFound", f"The requested resource of type Session "
                                       f"named {ident} was not found."), {}
            return 200, self.session_body(ident), {}
        if path.startswith(SESSIONS + "/") and method == "DELETE":
            return self.logout(path.rsplit("/", 1)[1])
        found = SYSTEM_RE.match(path)
        if found and method == "GET":
            status, system = self.system(found.group(1))
            return status, system, ({"ETag": self.etag(system)} if status == 200 else {})
        if found and method == "PATCH":
            return self.patch_system(found.group(1), headers, body)
        found = SETTINGS_RE.match(path)
        if found and self.mode == "idrac10":
            return self.settings(found.group(1), method, body)
        found = RESET_RE.match(path)
        if found and method == "POST":
            return self.reset(found.group(1), body)
        status, answer = self.call(method, path, body if method in ("POST", "PATCH") else None)
        return status, answer, {}

    def login(self, body: dict[str, Any]) -> Answer:
        user, password = body.get("UserName"), body.get("Password")
        if not (isinstance(user, str) and isinstance(password, str)):
            return 400, error_body("Base.1.18.PropertyMissing", "The create session request needs UserName and "
                                   "Password."), {}
        if not (hmac.compare_digest(user, self.username) and hmac.compare_digest(password, self._password)):
            return 401, error_body("Base.1.18.ResourceAtUriUnauthorized", "While accessing the resource at "
                                   f"{SESSIONS}, the service received an authorization error."), {}
        with self.lock:
            if len(self.sessions) >= SESSION_LIMIT:
                return 503, error_body("Base.1.18.SessionLimitExceeded", "The session establishment failed due "
                                       "to the number of simultaneous sessions exceeding the limit of the "
                                       "implementation."), {}
            ident = str(self.next_session)
            self.next_session += 1
            token = secrets.token_hex(16)
            self.sessions[token] = ident
        return 201, self.session_body(ident), {"X-Auth-Token": token, "Location": f"{SESSIONS}/{ident}"}

    def session_body(self, ident: str) -> dict[str, Any]:
        return {"@odata.id": f"{SESSIONS}/{ident}", "@odata.type": "#Session.v1_3_0.Session", "Id": ident,
                "Name": "User Session", "UserName": self.username}

    def logout(self, ident: str) -> Answer:
        with self.lock:
            token = next((t for t, i in self.sessions.items() if i == ident), None)
            if token is None:
                return 404, error_body("Base.1.18.ResourceNotFound", f"The requested resource of type Session "
                                       f"named {ident} was not found."), {}
            del self.sessions[token]
        return 204, {}, {}

    def authenticated(self, headers: Any) -> str:
        token = headers.get("X-Auth-Token")
        if token:
            with self.lock:
                return "session" if token in self.sessions else ""
        basic = headers.get("Authorization") or ""
        if basic.startswith("Basic "):
            try:
                user, _sep, password = base64.b64decode(basic[6:]).decode().partition(":")
            except ValueError:
                return ""
            if hmac.compare_digest(user, self.username) and hmac.compare_digest(password, self._password):
                return "basic"
        return ""

    def patch_system(self, ident: str, headers: Any, body: dict[str, Any]) -> Answer:
        status, system = self.system(ident)
        if status != 200:
            return status, system, {}
        if_match = headers.get("If-Match")
        if if_match is None and self.mode == "ami" and headers.get("If-None-Match") is None:
            return 428, error_body("Ami.1.0.PreconditionHeaderMissing", "The request did not provide the "
                                   "required precondition, such as an If-Match or If-None-Match header."), {}
        if if_match is not None and if_match != "*" and if_match != self.etag(system):
            return 412, error_body("Base.1.18.PreconditionFailed", "The ETag supplied did not match the ETag "
                                   "required to change this resource."), {}
        boot = body.get("Boot")
        if self.mode == "idrac10" and boot is not None:
            return 400, error_body("Base.1.18.GeneralError", "A general error has occurred. See ExtendedInfo for "
                                   "more information.", "Base.1.18.PropertyNotWritable"), {}
        status, answer = self.call("PATCH", f"/redfish/v1/Systems/{ident}", body)
        if status < 300 and isinstance(boot, dict):
            self.remember_enabled(ident, boot)
        if (self.mode == "supermicro" and status < 300 and isinstance(boot, dict)
                and "BootSourceOverrideTarget" in boot and "BootSourceOverrideMode" not in boot):
            self.call("PATCH", f"/redfish/v1/Systems/{ident}",
                      {"Boot": {"BootSourceOverrideMode": SUPERMICRO_DEFAULT_MODE}})
        return status, answer, {}

    def settings(self, ident: str, method: str, body: dict[str, Any]) -> Answer:
        path = f"/redfish/v1/Systems/{ident}/Settings"
        if method == "PATCH":
            boot = body.get("Boot")
            unknown = sorted(set(body) - {"Boot"}) + sorted(set(boot or {}) - set(BOOT_KEYS))
            if not isinstance(boot, dict) or unknown:
                return 400, error_body("Base.1.18.PropertyUnknown", "The property %s is not in the list of valid "
                                       "properties for the resource." % (unknown[0] if unknown else "Boot")), {}
            with self.lock:
                self.pending.setdefault(ident, {}).update(boot)
        elif method != "GET":
            return 405, error_body("Base.1.18.OperationNotAllowed", "The HTTP method is not allowed on this "
                                   "resource."), {}
        with self.lock:
            pending = dict(self.pending.get(ident, {}))
        return 200, {"@odata.id": path, "@odata.type": "#ComputerSystem.v1_20_0.ComputerSystem", "Id": "Settings",
                     "Boot": pending}, {}

    def reset(self, ident: str, body: dict[str, Any]) -> Answer:
        kind = body.get("ResetType")
        if kind not in self.allowed_resets(ident):
            return 400, error_body("Base.1.18.ActionParameterUnknown", f"The action ComputerSystem.Reset was "
                                   f"submitted with the invalid parameter ResetType {kind}."), {}
        if self.mode == "idrac10" and kind in STARTS:
            with self.lock:
                pending = self.pending.pop(ident, None)
            if pending:
                self.call("PATCH", f"/redfish/v1/Systems/{ident}", {"Boot": pending})
                self.remember_enabled(ident, pending)
        status, answer = self.call("POST", f"/redfish/v1/Systems/{ident}/Actions/ComputerSystem.Reset", body)
        if status < 300 and kind in STARTS:
            with self.lock:
                if self.enabled.get(ident) == "Once":
                    self.enabled[ident] = "Disabled"
        return status, answer, {}

    def remember_enabled(self, ident: str, boot: dict[str, Any]) -> None:
        value = boot.get("BootSourceOverrideEnabled")
        if value not in ("Once", "Continuous", "Disabled"):
            value = "Once" if boot.get("BootSourceOverrideTarget") else None
        if value:
            with self.lock:
                self.enabled[ident] = value

    def record(self, entry: dict[str, Any]) -> None:
        if self.log_path:
            with self.lock, open(self.log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps(entry, sort_keys=True) + "\n")


def serve(bmc: VendorBmc, listen: str, port: int, cert: str | None, key: str | None) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # the JSON log says what matters
            pass

        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw.strip() else {}
                if not isinstance(body, dict):
                    raise ValueError("not an object")
            except ValueError:
                status, answer, extra = 400, error_body("Base.1.18.MalformedJSON", "The request body submitted "
                                                        "was malformed JSON and could not be parsed."), {}
            else:
                status, answer, extra = bmc.handle(self.command, self.path, self.headers, body)
            data = json.dumps(answer).encode() if status != 204 else b""
            self.send_response(status)
            if data:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("OData-Version", "4.0")
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            how = "session" if self.headers.get("X-Auth-Token") else "basic" if self.headers.get(
                "Authorization") else ""
            bmc.record({"mode": bmc.mode, "method": self.command, "path": self.path.split("?", 1)[0],
                        "status": status, "auth": how, "if_match": self.headers.get("If-Match") is not None,
                        "body_keys": sorted((body.get("Boot") or {}) if isinstance(body, dict)
                                            and isinstance(body.get("Boot"), dict) else []),
                        "reset": body.get("ResetType") if isinstance(body, dict) else None})

        do_GET = do_POST = do_PATCH = do_DELETE = _any

    server = ThreadingHTTPServer((listen, port), Handler)
    server.daemon_threads = True
    if cert and key:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", required=True, choices=MODES)
    parser.add_argument("--listen", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--backend", required=True)
    parser.add_argument("--username", default="admin")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--ca")
    parser.add_argument("--log")
    args = parser.parse_args(argv)
    password = os.environ.get("BMC_SIM_PASSWORD")
    if not password:
        print("bmc_vendor_sim: BMC_SIM_PASSWORD is not set", file=sys.stderr)
        return 2
    bmc = VendorBmc(args.mode, args.backend, args.username, password, args.ca, args.log)
    serve(bmc, args.listen, args.port, args.cert, args.key).serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
