# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small Redfish client: power state, reset, one-time boot override, virtual media, inventory, the system's MACs.

It behaves as real BMCs need (each from a vendor or DMTF source, see docs/provisioning.md):

- **Sessions.** When the service root links a ``SessionService`` (DSP0266 "Session login"), it logs in once
  (``POST .../Sessions``), sends ``X-Auth-Token`` and deletes the session at :meth:`close`; a BMC without one
  (sushy-tools) gets HTTP Basic on each request. An expired session is renewed once.
- **ETags.** A PATCH carries ``If-Match`` with the ETag of the resource as last read (Lenovo XCC and AMI
  MegaRAC answer 428 without it); a 412 (changed in between) re-reads the resource and tries once more.
- **Settings objects.** A system that carries ``@Redfish.Settings`` takes changes through its
  ``SettingsObject`` (iDRAC 10: the System's Boot is read-only); the pending values read back from there.
- **Boot mode with the target.** ``BootSourceOverrideMode`` is sent with every boot override, the one asked
  for or the one the system reports (Supermicro resets the mode to Legacy when a PATCH leaves it out).
- **Reset types the BMC lists.** ``ResetType@Redfish.AllowableValues`` (or the action's ``ActionInfo``) is
  read before a reset; a restart without ``ForceRestart`` is ``ForceOff``, then ``On``.
- **No blind POST.** GETs, PATCHes and DELETEs are retried with exponential backoff on 5xx answers and on
  connection errors. A reset is not: after a failed POST the power state is read again, and the POST is
  repeated only when the state shows it did not happen; a restart whose outcome cannot be told is reported.

After the last try it raises RedfishError naming the node and its BMC. The password and the session token
are never part of a message.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable
from typing import Any

from ansible.module_utils.six.moves import http_client
from ansible.module_utils.six.moves.urllib.error import HTTPError, URLError
from ansible.module_utils.six.moves.urllib.parse import urlsplit
from ansible.module_utils.urls import open_url

from .errors import RedfishError

# What a power request means, by the state we want.
RESET_TYPES = {"on": "On", "off": "ForceOff", "graceful_off": "GracefulShutdown", "cycle": "ForceRestart"}
# A reset type the BMC does not list, and what does the same (in order of preference). A restart becomes
# ForceOff then On: see Redfish.reset.
RESET_ALTERNATIVES = {"On": ("ForceOn",), "ForceOff": (), "GracefulShutdown": (),
                      "ForceRestart": ("PowerCycle",)}
# What PowerState shows once a reset took effect (DSP2046 PowerState: On, Off, PoweringOn, PoweringOff, Paused).
RESET_OUTCOME = {"On": ("On", "PoweringOn"), "ForceOn": ("On", "PoweringOn"), "ForceOff": ("Off", "PoweringOff"),
                 "GracefulShutdown": ("Off", "PoweringOff")}
BOOT_TARGETS = ("Pxe", "Hdd", "Cd", "UefiHttp", "BiosSetup", "None")
BOOT_MODES = ("UEFI", "Legacy")
MAC_RE = re.compile(r"^[0-9a-f]{2}([:-][0-9a-f]{2}){5}$", re.IGNORECASE)
# A system's path as the fleet's system_id or the BMC's Systems collection gives it: appended to the BMC's URL, so
# nothing that could change the host ('@', '//', '?', '#', spaces) gets through.
SYSTEM_PATH = re.compile(r"/redfish/v1/Systems/[A-Za-z0-9._~-]+")
MAX_BACKOFF = 30.0  # seconds between two tries, at most
# The largest answer read from a BMC: a Redfish resource is a few KiB (a large collection some hundred); more is no
# BMC's answer, and is not held in memory.
MAX_ANSWER = 4 * 1024 * 1024
# Of an error's body, only what its message needs.
MAX_ERROR_BODY = 64 * 1024
# An auth token is opaque printable text (DSP0266); anything else from the BMC is not sent back.
TOKEN_RE = re.compile(r"^[\x21-\x7e]{1,4096}$")
# A system lists a handful of interfaces; more is no real BMC's answer and is not followed.
MAX_INTERFACES = 64


def normalize_mac(mac: str) -> str:
    """``AA-BB-...`` or ``aa:bb:...`` -> ``aa:bb:...``; '' when it is no MAC address."""
    text = str(mac or "").strip()
    return text.lower().replace("-", ":") if MAC_RE.fullmatch(text) else ""


class _Transient(Exception):
    """One try failed in a way a retry may fix (5xx, no answer)."""


class Redfish:
    def __init__(self, url: str, username: str, password: str, name: str = "", system_id: str = "",
                 validate_certs: bool = True, ca_path: str | None = None, timeout: float = 10.0,
                 retries: int = 4, backoff: float = 1.0, sleep: Callable[[float], None] = time.sleep,
                 boot_mode: str = ""):
        self.url = url.rstrip("/") if "://" in url else "https://" + url.rstrip("/")
        if "@" in urlsplit(self.url).netloc:
            # a user and password in the address would be printed with every message naming the BMC
            raise RedfishError("%s: bmc.url holds a user name or password (user@host); give the BMC's address only "
                               "(https://host[:port]) and the credentials as bmc.username and bmc.password"
                               % (name or "BMC"))
        self.username, self._password = username, password
        self.name = name or self.url
        self.system_id = system_id
        self.validate_certs, self.ca_path, self.timeout = validate_certs, ca_path, timeout
        self.retries, self.backoff, self.sleep = max(0, retries), backoff, sleep
        if boot_mode and boot_mode not in BOOT_MODES:
            raise RedfishError("%s: boot_mode %r is not one of %s" % (self._where(), boot_mode, ", ".join(BOOT_MODES)))
        self.boot_mode = boot_mode
        self._system: str | None = None
        self._auth: str | None = None  # "basic" or "session", decided on the first request
        self._token: str | None = None
        self._session: str | None = None
        self._etags: dict[str, str] = {}
        self._media_path = ""
        self.requests = 0

    def _where(self) -> str:
        return "%s: BMC %s" % (self.name, self.url)

    # --- HTTP ---------------------------------------------------------------------------------------------

    def _send(self, method: str, path: str, body: dict[str, Any] | None, headers: dict[str, str] | None = None,
              auth: bool = True) -> tuple[dict[str, Any], Any]:
        """One try: (JSON body, response headers). Raises _Transient for 5xx or no answer, RedfishError for the
        rest; an HTTPError below 500 other than 401/403 comes back to the caller through ``exc.redfish_code``."""
        data = json.dumps(body).encode() if body is not None else None
        sent = {"Accept": "application/json", "OData-Version": "4.0"}
        if data is not None:
            sent["Content-Type"] = "application/json"
        sent.update(headers or {})
        basic = {}
        if auth and self._token:
            sent["X-Auth-Token"] = self._token
        elif auth:
            basic = {"url_username": self.username, "url_password": self._password, "force_basic_auth": True}
        self.requests += 1
        try:
            response = open_url(self.url + path, method=method, data=data, headers=sent,
                                validate_certs=self.validate_certs, ca_path=self.ca_path, timeout=self.timeout,
                                follow_redirects="none", **basic)
            raw = response.read(MAX_ANSWER + 1)
            if len(raw) > MAX_ANSWER:
                raise RedfishError("%s: %s %s answered more than %d bytes; no Redfish resource is that large"
                                   % (self._where(), method, path, MAX_ANSWER))
            answer = json.loads(raw) if raw.strip() else {}
            if not isinstance(answer, dict):
                raise RedfishError("%s: %s %s answered JSON that is no object (%s); a Redfish resource is one"
                                   % (self._where(), method, path, type(answer).__name__))
            return answer, response.headers
        except HTTPError as exc:
            if exc.code >= 500:
                raise _Transient("HTTP %d" % exc.code) from None
            if 300 <= exc.code < 400:
                # never followed: the credentials (basic auth, the session token) would go to wherever it points
                raise RedfishError("%s: %s %s was redirected (HTTP %d) to %r; give the BMC's final address (https, "
                                   "its own host) in the fleet; nothing was sent there"
                                   % (self._where(), method, path, exc.code, str(exc.headers.get("Location"))[:200])
                                   ) from None
            raise exc
        except (URLError, OSError, http_client.HTTPException) as exc:
            raise _Transient("no answer (%s)" % (getattr(exc, "reason", None) or type(exc).__name__)) from None
        except (ValueError, RecursionError):
            raise RedfishError("%s: %s %s did not answer JSON" % (self._where(), method, path)) from None

    def _refused(self, method: str, path: str, exc: HTTPError) -> RedfishError:
        if exc.code in (401, 403):
            error = RedfishError("%s: authentication failed (HTTP %d) for user %r; check the BMC username and "
                                 "password" % (self._where(), exc.code, self.username))
        else:
            error = RedfishError("%s: %s %s was refused with HTTP %d: %s"
                                 % (self._where(), method, path, exc.code,
                                    _message(exc, (self._password, self._token))))
        error.status = exc.code
        return error

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None,
              headers: dict[str, str] | None = None, retry: bool = True,
              login: bool = True) -> tuple[dict[str, Any], Any]:
        if login:
            self._login()
        last = ""
        renewed = False
        attempt = 0
        while True:
            if attempt:
                self.sleep(min(self.backoff * 2 ** (attempt - 1), MAX_BACKOFF))
            try:
                return self._send(method, path, body, headers)
            except _Transient as exc:
                last = str(exc)
                if not retry:
                    raise
            except HTTPError as exc:
                if exc.code == 401 and self._token and not renewed:  # the session expired: log in again, once
                    renewed = True
                    self._token = self._session = None
                    self._auth = None
                    self._login()
                    continue
                raise self._refused(method, path, exc) from None
            attempt += 1
            if attempt > self.retries:
                break
        raise RedfishError("%s: %s %s failed %d times, last with %s (retried with backoff); check that the BMC is "
                           "up and reachable" % (self._where(), method, path, self.retries + 1, last))

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return self._call(method, path, body)[0]

    def get(self, path: str) -> dict[str, Any]:
        """GET a resource and remember its ETag (header, or ``@odata.etag`` in the body) for a later PATCH."""
        body, headers = self._call("GET", path)
        etag = (headers.get("ETag") if headers is not None else None) or body.get("@odata.etag")
        if isinstance(etag, str) and etag and len(etag) <= 256 and "\n" not in etag and "\r" not in etag:
            self._etags[path] = etag
        return body

    def patch(self, path: str, body: dict[str, Any], current: Callable[[], bool] | None = None) -> None:
        """PATCH with ``If-Match`` when the resource gave an ETag. A 412 means the resource changed since it was
        read: read it again, stop if ``current()`` says it already holds what we want, else try once more."""
        for attempt in range(2):
            if path not in self._etags:
                self.get(path)
            headers = {"If-Match": self._etags[path]} if path in self._etags else {}
            try:
                self._call("PATCH", path, body, headers=headers)
                self._etags.pop(path, None)  # the resource changed: its ETag with it
                return
            except RedfishError as exc:
                if attempt or getattr(exc, "status", 0) != 412:
                    raise
                self._etags.pop(path, None)
                self.get(path)
                if current is not None and current():
                    return

    # --- sessions ---------------------------------------------------------------------------------------------

    def _login(self) -> None:
        if self._auth is not None:
            return
        self._auth = "basic"
        root = self._call_root()
        link = _obj(_obj(root.get("Links")).get("Sessions")).get("@odata.id")
        if not isinstance(link, str) or not link.startswith("/redfish/v1/"):
            return
        try:
            _body, headers = self._send("POST", link, {"UserName": self.username, "Password": self._password},
                                        auth=False)
        except _Transient as exc:
            self._auth = None
            raise RedfishError("%s: session login failed with %s; check that the BMC is up and reachable"
                               % (self._where(), exc)) from None
        except HTTPError as exc:
            self._auth = None
            raise self._refused("POST", link, exc) from None
        token = headers.get("X-Auth-Token") if headers is not None else None
        location = headers.get("Location") if headers is not None else None
        if not isinstance(token, str) or not TOKEN_RE.fullmatch(token):
            self._auth = None
            raise RedfishError("%s: session login answered no usable X-Auth-Token" % self._where())
        self._token, self._auth = token, "session"
        path = urlsplit(location).path if isinstance(location, str) else ""
        self._session = path if path.startswith(link.rstrip("/") + "/") else None

    def _call_root(self) -> dict[str, Any]:
        """The service root (DSP0266: readable without credentials; Basic is sent in case a BMC wants it). A BMC
        without one to read gets Basic, as before."""
        try:
            return self._call("GET", "/redfish/v1/", login=False)[0]
        except RedfishError as exc:
            if getattr(exc, "status", 0) in (0, 401, 403):
                self._auth = None
                raise
            return {}

    @property
    def auth(self) -> str:
        return self._auth or ""

    def close(self) -> None:
        """Log out (DELETE the session); a BMC holds only a few sessions per user. Best effort: a session that
        cannot be deleted times out on the BMC."""
        session, self._session = self._session, None
        if session and self._token:
            with contextlib.suppress(Exception):  # after the work is done, a broken logout is never the failure
                self._send("DELETE", session, None)
        self._token, self._auth = None, None

    def __enter__(self) -> Redfish:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the system -------------------------------------------------------------------------------------------

    def system_path(self) -> str:
        if self._system is None:
            if self.system_id:
                self._system = "/redfish/v1/Systems/%s" % self.system_id
                if not SYSTEM_PATH.fullmatch(self._system):
                    raise RedfishError("%s: system_id %r is not a Redfish system id (letters, digits, . _ ~ -)"
                                       % (self._where(), self.system_id))
            else:
                members = self.request("GET", "/redfish/v1/Systems").get("Members") or []
                if not isinstance(members, list) or len(members) != 1:
                    raise RedfishError("%s: has %s systems; set bmc.system_id in the fleet to choose one"
                                       % (self._where(), len(members) if isinstance(members, list) else "no list of"))
                link = members[0].get("@odata.id") if isinstance(members[0], dict) else None
                if not isinstance(link, str) or not SYSTEM_PATH.fullmatch(link.rstrip("/")):
                    # the path is appended to the BMC's URL: '@host/...' would send the session to another host
                    raise RedfishError("%s: its system's link %r is not a /redfish/v1/Systems/<id> path; nothing was "
                                       "changed" % (self._where(), str(link)[:200]))
                self._system = link.rstrip("/")
        return self._system

    def system(self) -> dict[str, Any]:
        return self.get(self.system_path())

    def power_state(self) -> str:
        return str(self.system().get("PowerState", "Unknown"))

    def settings_path(self, system: dict[str, Any] | None = None) -> str:
        """The system's settings object (``@Redfish.Settings``), or '' when changes go to the system itself."""
        system = self.system() if system is None else system
        link = _obj(_obj(system.get("@Redfish.Settings")).get("SettingsObject")).get("@odata.id")
        return link.rstrip("/") if isinstance(link, str) and link.startswith(self.system_path() + "/") else ""

    def boot_override(self) -> dict[str, str]:
        """The boot override as the next boot will see it: a change waiting in the settings object counts."""
        system = self.system()
        boot = dict(_obj(system.get("Boot")))
        settings = self.settings_path(system)
        if settings:
            pending = _obj(self.get(settings).get("Boot"))
            boot.update({k: v for k, v in pending.items() if k.startswith("BootSourceOverride")})
        out = {"target": str(boot.get("BootSourceOverrideTarget", "None")),
               "enabled": str(boot.get("BootSourceOverrideEnabled", "Disabled"))}
        if boot.get("BootSourceOverrideMode") in BOOT_MODES:
            out["mode"] = str(boot["BootSourceOverrideMode"])
        return out

    def require_boot_target(self, target: str, system: dict | None = None) -> None:
        """Fail before any change when the system lists the boot targets it takes and ``target`` is not one
        (``BootSourceOverrideTarget@Redfish.AllowableValues``; e.g. UefiHttp on a BMC in Legacy mode)."""
        if target not in BOOT_TARGETS:
            raise RedfishError("%s: boot target %r is not one of %s" % (self._where(), target, ", ".join(BOOT_TARGETS)))
        boot = _obj((self.system() if system is None else system).get("Boot"))
        allowed = boot.get("BootSourceOverrideTarget@Redfish.AllowableValues")
        if isinstance(allowed, list) and target not in allowed:
            raise RedfishError("%s: the system does not take boot target %s; it lists %s (nothing was changed)"
                               % (self._where(), target, ", ".join(str(v) for v in allowed) or "none"))

    def set_boot_once(self, target: str) -> None:
        system = self.system()
        self.require_boot_target(target, system)
        now = _obj(system.get("Boot"))
        boot = {"BootSourceOverrideTarget": target, "BootSourceOverrideEnabled": "Once"}
        mode = self.boot_mode or now.get("BootSourceOverrideMode")
        if mode in BOOT_MODES:
            boot["BootSourceOverrideMode"] = mode
        path = self.settings_path(system) or self.system_path()

        def done() -> bool:
            got = self.boot_override()
            return got["target"] == target and got["enabled"] == "Once" and got.get("mode", mode) == mode

        self.patch(path, {"Boot": boot}, current=done)

    def allowed_resets(self) -> list[str] | None:
        """The reset types the BMC lists for the system, or None when it lists none (then any is tried)."""
        action = _obj(_obj(self.system().get("Actions")).get("#ComputerSystem.Reset"))
        values = action.get("ResetType@Redfish.AllowableValues")
        info = action.get("@Redfish.ActionInfo")
        if values is None and isinstance(info, str) and info.startswith("/redfish/v1/"):
            for parameter in _items(self.request("GET", info).get("Parameters")):
                if isinstance(parameter, dict) and parameter.get("Name") == "ResetType":
                    values = parameter.get("AllowableValues")
        if not isinstance(values, list):
            return None
        return [str(v) for v in values if isinstance(v, str)]

    def reset(self, reset_type: str, wait_off: float = 120.0) -> list[str]:
        """Reset the system as ``reset_type`` asks, with the types the BMC lists; returns the types sent."""
        allowed = self.allowed_resets()
        if allowed is None or reset_type in allowed:
            self._post_reset(reset_type)
            return [reset_type]
        for other in RESET_ALTERNATIVES.get(reset_type, ()):
            if other in allowed:
                self._post_reset(other)
                return [other]
        if reset_type == "ForceRestart" and "ForceOff" in allowed:
            on = "On" if "On" in allowed else next((t for t in RESET_ALTERNATIVES["On"] if t in allowed), "")
            if on:
                self._post_reset("ForceOff")
                self.wait_power("Off", wait_off)
                self._post_reset(on)
                return ["ForceOff", on]
        raise RedfishError("%s: the BMC does not offer reset type %s for %s (it lists %s); nothing was sent"
                           % (self._where(), reset_type, self.system_path(), ", ".join(allowed) or "none"))

    def _post_reset(self, reset_type: str) -> None:
        """POST the reset. It is not idempotent, so a failed try is followed by a read of the power state: the
        POST is sent again only when the state shows it did not happen."""
        path = self.system_path() + "/Actions/ComputerSystem.Reset"
        outcome = RESET_OUTCOME.get(reset_type)
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self.sleep(self.backoff * 2 ** (attempt - 1))
                state = self.power_state()
                if outcome is None:
                    raise RedfishError(
                        "%s: POST %s (%s) failed with %s and the power state (%s) cannot tell whether it happened; "
                        "not sent again: check the node, then run again" % (self._where(), path, reset_type, last,
                                                                            state))
                if state in outcome:
                    return
            try:
                self._call("POST", path, {"ResetType": reset_type}, retry=False)
                return
            except _Transient as exc:
                last = str(exc)
        raise RedfishError("%s: POST %s (%s) failed %d times, last with %s, and the power state shows it did not "
                           "happen; check that the BMC is up and reachable"
                           % (self._where(), path, reset_type, self.retries + 1, last))

    def wait_power(self, want: str, timeout: float, interval: float = 1.0,
                   clock: Callable[[], float] = time.monotonic) -> str:
        deadline = clock() + timeout
        while True:
            state = self.power_state()
            if state == want:
                return state
            if clock() >= deadline:
                raise RedfishError("%s: power state is still %s after %.0f s (wanted %s)"
                                   % (self._where(), state, timeout, want))
            self.sleep(interval)

    def mac_addresses(self) -> list[str]:
        """The MAC addresses of the system's network interfaces (Redfish ``EthernetInterfaces``:
        ``MACAddress`` and ``PermanentMACAddress`` of each member), normalised, sorted; [] when it lists none.
        What the BMC answers is not trusted: anything that is no MAC address is left out."""
        link = _obj(self.system().get("EthernetInterfaces")).get("@odata.id")
        if not isinstance(link, str) or not link.startswith("/redfish/v1/"):
            return []
        members = _items(self.request("GET", link).get("Members"))
        found = set()
        for member in members[:MAX_INTERFACES]:
            path = member.get("@odata.id") if isinstance(member, dict) else None
            if not isinstance(path, str) or not path.startswith("/redfish/v1/"):
                continue
            nic = self.request("GET", path)
            for key in ("MACAddress", "PermanentMACAddress"):
                mac = normalize_mac(nic.get(key, "")) if isinstance(nic, dict) else ""
                if mac and mac != "00:00:00:00:00:00":
                    found.add(mac)
        return sorted(found)

    def identify(self, mac: str) -> list[str]:
        """Fail unless the system this BMC drives has the network interface ``mac`` (the fleet's boot NIC of
        the node): a BMC address copied or mistyped in the fleet would power-cycle and wipe another server.
        Returns the system's MACs."""
        want = normalize_mac(mac)
        if not want or want == "00:00:00:00:00:00" or int(want[:2], 16) & 1:
            # a zero MAC is what BMCs list for a port without one: it would match another server's BMC
            raise RedfishError("%s: %r is no MAC address to identify the node by" % (self._where(), mac))
        macs = self.mac_addresses()
        if want not in macs:
            raise RedfishError(
                "%s: the system it drives (%s) has %s, not %s, the node's MAC in the fleet: this BMC is not the "
                "node's (a copied or mistyped BMC address?); nothing was changed"
                % (self._where(), self.system_path(),
                   "the network interfaces " + ", ".join(macs) if macs else "no network interface listed "
                   "(EthernetInterfaces)", want))
        return macs

    # --- virtual media ----------------------------------------------------------------------------------------

    def virtual_media_path(self) -> str:
        """The system's virtual CD/DVD drive: the first member whose ``MediaTypes`` lists CD or DVD of the System's
        ``VirtualMedia`` collection (Redfish 2021.1 and later; sushy-tools) or else of its managers'
        (``Links.ManagedBy``: iDRAC, iLO and XCC keep it under the manager). What the BMC answers is not trusted:
        only /redfish/v1/ paths are followed, and only so many."""
        if self._media_path:
            return self._media_path
        system = self.system()
        found = self._cd_drive(_obj(system.get("VirtualMedia")).get("@odata.id"))
        # The managers are read only when the system has no drive of its own (a manager that answers badly then
        # does not stand in the way of the system's).
        for manager in _items(_obj(system.get("Links")).get("ManagedBy"))[:4]:
            path = _obj(manager).get("@odata.id")
            if found or not isinstance(path, str) or not path.startswith("/redfish/v1/Managers/"):
                continue
            found = self._cd_drive(_obj(self.request("GET", path).get("VirtualMedia")).get("@odata.id"))
        if found:
            self._media_path = found
            return found
        raise RedfishError("%s: lists no virtual CD/DVD drive (a VirtualMedia member with MediaTypes CD or DVD, under "
                           "%s or its manager), so it cannot boot the node from virtual media; boot it by Pxe or "
                           "UefiHttp (bmc.boot_target); nothing was changed" % (self._where(), self.system_path()))

    def _cd_drive(self, link: Any) -> str:
        """The first member of the VirtualMedia collection at link whose MediaTypes lists CD or DVD, or ''."""
        if not isinstance(link, str) or not link.startswith("/redfish/v1/"):
            return ""
        for member in _items(self.request("GET", link).get("Members"))[:MAX_INTERFACES]:
            path = _obj(member).get("@odata.id")
            if not isinstance(path, str) or not path.startswith("/redfish/v1/"):
                continue
            types = _items(self.request("GET", path).get("MediaTypes"))
            if "CD" in types or "DVD" in types:
                return path.rstrip("/")
        return ""

    def media(self) -> dict[str, Any]:
        """The virtual CD drive's state: ``image`` (URL, '' when none), ``inserted``, ``path``."""
        path = self.virtual_media_path()
        media = self.get(path)
        image = media.get("Image")
        return {"image": image if isinstance(image, str) else "", "inserted": media.get("Inserted") is True,
                "path": path}

    def insert_media(self, image: str) -> bool:
        """Insert ``image`` (a URL the BMC fetches) into the virtual CD drive, write-protected (DSP2046
        ``VirtualMedia.InsertMedia``); another image in the drive is ejected first. True when it changed."""
        self.check_media_image(image)
        now = self.media()
        if now["inserted"] and now["image"] == image:
            return False
        if now["inserted"] or now["image"]:
            self._media_action(now["path"], "EjectMedia", {}, lambda m: not m["inserted"])
        self._media_action(now["path"], "InsertMedia", {"Image": image, "Inserted": True, "WriteProtected": True},
                           lambda m: m["inserted"] and m["image"] == image)
        return True

    def check_media_image(self, image: str) -> None:
        """Fail unless image is an http(s) URL on one line (what the BMC is told to fetch)."""
        if not image or not image.startswith(("http://", "https://")) or not image.isprintable() or " " in image:
            raise RedfishError("%s: virtual media image %r is not an http(s) URL; nothing was changed"
                               % (self._where(), image))

    def eject_media(self) -> bool:
        """Eject whatever the virtual CD drive holds (``VirtualMedia.EjectMedia``). True when it changed."""
        now = self.media()
        if not now["inserted"] and not now["image"]:
            return False
        self._media_action(now["path"], "EjectMedia", {}, lambda m: not m["inserted"])
        return True

    def _media_action(self, path: str, action: str, body: dict[str, Any],
                      done: Callable[[dict[str, Any]], bool]) -> None:
        """POST a virtual media action at the target the drive advertises (else the standard one under its path).
        Not retried blindly: after a failed try the drive is read again, and the POST is sent again only when the
        drive shows it did not happen."""
        target = _obj(_obj(self.get(path).get("Actions")).get("#VirtualMedia.%s" % action)).get("target")
        if not isinstance(target, str) or not target.startswith("/redfish/v1/"):
            target = "%s/Actions/VirtualMedia.%s" % (path, action)
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self.sleep(self.backoff * 2 ** (attempt - 1))
                if done(self.media()):
                    return
            try:
                self._call("POST", target, body, retry=False)
                return
            except _Transient as exc:
                last = str(exc)
        self.sleep(self.backoff * 2 ** self.retries)  # the last try's effect too: read, not assumed
        if done(self.media()):
            return
        raise RedfishError("%s: POST %s failed %d times, last with %s, and the drive shows it did not happen; check "
                           "that the BMC is up and reachable" % (self._where(), target, self.retries + 1, last))

    def inventory(self) -> dict[str, Any]:
        system = self.system()
        keys = ("Id", "Name", "Manufacturer", "Model", "SerialNumber", "UUID", "PowerState", "BiosVersion")
        out = {k: system[k] for k in keys if k in system}
        for key in ("ProcessorSummary", "MemorySummary", "Boot", "Status"):
            if isinstance(system.get(key), dict):
                out[key] = system[key]
        return out


def _obj(value: Any) -> dict[str, Any]:
    """A nested part of a BMC's answer where the reader expects an object: anything else reads as empty."""
    return value if isinstance(value, dict) else {}


def _items(value: Any) -> list[Any]:
    """A nested list of a BMC's answer (Members, Parameters): anything else reads as empty."""
    return value if isinstance(value, list) else []


def _message(exc: HTTPError, secrets: tuple = ()) -> str:
    """The BMC's own words for a refusal, short and printable, with any credential it echoes masked (a BMC may quote
    the request it refused: the session token, the password of a login)."""
    try:
        body = json.loads(exc.read(MAX_ERROR_BODY) or b"{}")
        error = body.get("error") if isinstance(body, dict) else None
        text = str((error.get("message") if isinstance(error, dict) else None) or body)
    except (ValueError, AttributeError, OSError, RecursionError):
        text = str(exc.reason)
    for secret in secrets:
        if secret:
            text = text.replace(secret, "********")
    text = "".join(c if c.isprintable() else " " for c in text)
    return text[:300]
