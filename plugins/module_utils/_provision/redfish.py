# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small Redfish client: power state, reset, one-time boot override, inventory, the system's MACs.

Retries with exponential backoff on 5xx answers and on connection errors; after the last try it
raises RedfishError naming the node and its BMC. The password is never part of a message.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from ansible.module_utils.six.moves.urllib.error import HTTPError, URLError
from ansible.module_utils.urls import open_url

from .errors import RedfishError

# What a power request means, by the state we want.
RESET_TYPES = {"on": "On", "off": "ForceOff", "graceful_off": "GracefulShutdown", "cycle": "ForceRestart"}
BOOT_TARGETS = ("Pxe", "Hdd", "Cd", "UefiHttp", "BiosSetup", "None")
MAC_RE = re.compile(r"^[0-9a-f]{2}([:-][0-9a-f]{2}){5}$", re.IGNORECASE)
# A system lists a handful of interfaces; more is no real BMC's answer and is not followed.
MAX_INTERFACES = 64


def normalize_mac(mac: str) -> str:
    """``AA-BB-...`` or ``aa:bb:...`` -> ``aa:bb:...``; '' when it is no MAC address."""
    text = str(mac or "").strip()
    return text.lower().replace("-", ":") if MAC_RE.match(text) else ""


class Redfish:
    def __init__(self, url: str, username: str, password: str, name: str = "", system_id: str = "",
                 validate_certs: bool = True, ca_path: str | None = None, timeout: float = 10.0,
                 retries: int = 4, backoff: float = 1.0, sleep: Callable[[float], None] = time.sleep):
        self.url = url.rstrip("/") if "://" in url else "https://" + url.rstrip("/")
        self.username, self._password = username, password
        self.name = name or self.url
        self.system_id = system_id
        self.validate_certs, self.ca_path, self.timeout = validate_certs, ca_path, timeout
        self.retries, self.backoff, self.sleep = max(0, retries), backoff, sleep
        self._system: str | None = None
        self.requests = 0

    def _where(self) -> str:
        return "%s: BMC %s" % (self.name, self.url)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self.sleep(self.backoff * 2 ** (attempt - 1))
            self.requests += 1
            try:
                response = open_url(self.url + path, method=method, data=data, headers=headers,
                                    url_username=self.username, url_password=self._password,
                                    force_basic_auth=True, validate_certs=self.validate_certs,
                                    ca_path=self.ca_path, timeout=self.timeout, follow_redirects="safe")
                raw = response.read()
                return json.loads(raw) if raw.strip() else {}
            except HTTPError as exc:
                if exc.code in (401, 403):
                    raise RedfishError("%s: authentication failed (HTTP %d) for user %r; check the BMC "
                                       "username and password" % (self._where(), exc.code, self.username)) from None
                if exc.code < 500:
                    raise RedfishError("%s: %s %s was refused with HTTP %d: %s"
                                       % (self._where(), method, path, exc.code, _message(exc))) from None
                last = "HTTP %d" % exc.code
            except (URLError, OSError) as exc:
                last = "no answer (%s)" % getattr(exc, "reason", exc)
            except ValueError:
                raise RedfishError("%s: %s %s did not answer JSON" % (self._where(), method, path)) from None
        raise RedfishError("%s: %s %s failed %d times, last with %s (retried with backoff); check that the BMC is "
                           "up and reachable" % (self._where(), method, path, self.retries + 1, last))

    def system_path(self) -> str:
        if self._system is None:
            if self.system_id:
                self._system = "/redfish/v1/Systems/%s" % self.system_id
            else:
                members = self.request("GET", "/redfish/v1/Systems").get("Members") or []
                if len(members) != 1:
                    raise RedfishError("%s: has %d systems; set bmc.system_id in the fleet to choose one"
                                       % (self._where(), len(members)))
                self._system = members[0]["@odata.id"].rstrip("/")
        return self._system

    def system(self) -> dict[str, Any]:
        return self.request("GET", self.system_path())

    def power_state(self) -> str:
        return str(self.system().get("PowerState", "Unknown"))

    def reset(self, reset_type: str) -> None:
        self.request("POST", self.system_path() + "/Actions/ComputerSystem.Reset", {"ResetType": reset_type})

    def boot_override(self) -> dict[str, str]:
        boot = self.system().get("Boot") or {}
        return {"target": str(boot.get("BootSourceOverrideTarget", "None")),
                "enabled": str(boot.get("BootSourceOverrideEnabled", "Disabled"))}

    def set_boot_once(self, target: str) -> None:
        self.request("PATCH", self.system_path(),
                     {"Boot": {"BootSourceOverrideTarget": target, "BootSourceOverrideEnabled": "Once"}})

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
        link = (self.system().get("EthernetInterfaces") or {}).get("@odata.id")
        if not isinstance(link, str) or not link.startswith("/redfish/v1/"):
            return []
        members = self.request("GET", link).get("Members") or []
        found = set()
        for member in members[:MAX_INTERFACES]:
            path = member.get("@odata.id") if isinstance(member, dict) else None
            if not isinstance(path, str) or not path.startswith("/redfish/v1/"):
                continue
            nic = self.request("GET", path)
            for key in ("MACAddress", "PermanentMACAddress"):
                mac = normalize_mac(nic.get(key, ""))
                if mac:
                    found.add(mac)
        return sorted(found)

    def identify(self, mac: str) -> list[str]:
        """Fail unless the system this BMC drives has the network interface ``mac`` (the fleet's boot NIC of
        the node): a BMC address copied or mistyped in the fleet would power-cycle and wipe another server.
        Returns the system's MACs."""
        want = normalize_mac(mac)
        if not want:
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

    def inventory(self) -> dict[str, Any]:
        system = self.system()
        keys = ("Id", "Name", "Manufacturer", "Model", "SerialNumber", "UUID", "PowerState", "BiosVersion")
        out = {k: system[k] for k in keys if k in system}
        for key in ("ProcessorSummary", "MemorySummary", "Boot", "Status"):
            if isinstance(system.get(key), dict):
                out[key] = system[key]
        return out


def _message(exc: HTTPError) -> str:
    try:
        body = json.loads(exc.read() or b"{}")
        return str(body.get("error", {}).get("message") or body)[:300]
    except (ValueError, AttributeError, OSError):
        return str(exc.reason)
