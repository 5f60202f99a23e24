# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small client of the NVUE REST API (Cumulus Linux 5.x), revision flow only.

Private to the collection (of the fabric it imports only its error). The flow:
``POST /nvue_v1/revision`` (new revision), ``DELETE /nvue_v1/<path>?rev=ID`` (unset),
``PATCH /nvue_v1/?rev=ID`` (set, JSON body), compare ``GET /nvue_v1/?rev=ID`` with
``GET /nvue_v1/?rev=applied``, then either ``PATCH /nvue_v1/revision/ID``
``{"state": "apply", "auto-prompt": {"ays": "ays_yes"}}`` and poll ``GET /nvue_v1/revision/ID``
until it is applied, or ``DELETE /nvue_v1/revision/ID`` (check mode, or nothing to change).

Cumulus Linux 5.9 and later save an applied revision themselves (state ``applied_and_saved``);
up to 5.8 a revision ends ``applied`` and is lost at reboot unless saved, so the client then
saves it (``PATCH /nvue_v1/revision/applied {"state": "save"}``). Answers may be nested under the
revision id (``{"6": {"state": ...}}``, as NVIDIA's API page shows). Any failure state, listed
or not (``..._fail``, ``..._error``, ``invalid``), ends the wait at once with that state named.
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import quote

from ansible.module_utils.urls import open_url

from .errors import NvueError

# The options that reach a switch's API, as the doc fragment gpucloud.baremetal.nvue documents them.
CONNECTION_SPEC = {
    "host": {"type": "str", "required": True},
    "port": {"type": "int", "default": 8765},
    "use_ssl": {"type": "bool", "default": True},
    "username": {"type": "str", "default": "cumulus"},
    "password": {"type": "str", "required": True, "no_log": True},
    "validate_certs": {"type": "bool", "default": True},
    "ca_path": {"type": "path"},
    "timeout": {"type": "int", "default": 30},
}
SAVED = "applied_and_saved"  # 5.9+: applied and saved by the switch
APPLIED = "applied"  # up to 5.8: applied, not saved
FAILED = (
    "invalid",
    "ays_fail",
    "apply_fail",
    "apply_error",
    "verify_error",
    "ready_error",
    "confirm_fail",
    "ignore_fail",
    "failed",
    "conflict",
)


def is_failure(state: str) -> bool:
    return state in FAILED or state.endswith(("_fail", "_error", "_failed"))


def revision_state(answer: Any, rev: str) -> dict:
    """The revision's status from an answer, flat (``{"state": ...}``) or nested under its id."""
    if isinstance(answer, dict) and "state" not in answer:
        nested = answer.get(str(rev))
        if nested is None and len(answer) == 1:
            nested = next(iter(answer.values()))
        if isinstance(nested, dict):
            return nested
    return answer if isinstance(answer, dict) else {}


class NvueClient:
    def __init__(
        self,
        base_url: str,
        username: str,
        password: str,
        validate_certs: bool = True,
        timeout: int = 30,
        ca_path: str | None = None,
    ) -> None:
        self.base = base_url.rstrip("/")
        self.username = username
        self.password = password
        self.validate_certs = validate_certs
        self.timeout = timeout
        self.ca_path = ca_path

    @classmethod
    def from_params(cls, params: dict) -> NvueClient:
        """A client from the options of ``CONNECTION_SPEC``."""
        base = "%s://%s:%d/nvue_v1" % ("https" if params["use_ssl"] else "http", params["host"], params["port"])
        return cls(base, params["username"], params["password"], params["validate_certs"], params["timeout"],
                   params["ca_path"])  # fmt: skip

    def request(self, method: str, path: str, body: Any = None, rev: str | None = None) -> Any:
        url = self.base + "/" + path.lstrip("/")
        if rev is not None:
            url += ("&" if "?" in url else "?") + "rev=" + quote(str(rev), safe="")
        data = json.dumps(body) if body is not None else None
        try:
            resp = open_url(
                url,
                method=method,
                data=data,
                headers={"Content-Type": "application/json", "Accept": "application/json"},
                url_username=self.username,
                url_password=self.password,
                force_basic_auth=True,
                validate_certs=self.validate_certs,
                timeout=self.timeout,
                ca_path=self.ca_path,
            )
            text = resp.read()
        except HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:500] if hasattr(exc, "read") else ""
            if exc.code == 401:
                raise NvueError("NVUE API %s: authentication failed; check username/password" % url) from exc
            if exc.code == 403:
                raise NvueError(
                    "NVUE API %s answered 403 (%s): from Cumulus Linux 5.6 the API refuses every call until the "
                    "default password of the user has been changed; change it on the switch first" % (url, detail)
                ) from exc
            raise NvueError("NVUE API %s %s answered %d: %s" % (method, url, exc.code, detail)) from exc
        except (URLError, OSError) as exc:
            raise NvueError(
                "NVUE API %s is unreachable (%s); check the address, port and that nvued/nginx listen" % (url, exc)
            ) from exc
        return json.loads(text) if text else {}

    # --- flow ------------------------------------------------------------------------
    def applied(self) -> dict:
        return self.request("GET", "/?filled=false", rev="applied")

    def create_revision(self) -> str:
        answer = self.request("POST", "/revision")
        if not isinstance(answer, dict) or len(answer) != 1:
            raise NvueError("NVUE API: unexpected answer to POST /revision: %r" % (answer,))
        return str(next(iter(answer)))

    def revision_config(self, rev: str) -> dict:
        return self.request("GET", "/?filled=false", rev=rev)

    def unset(self, rev: str, path: str) -> None:
        """``path``: ``/``-separated, each part URL-encoded (``interface/vlan101``)."""
        self.request("DELETE", "/" + path.lstrip("/"), rev=rev)

    def patch(self, rev: str, tree: dict) -> None:
        self.request("PATCH", "/", body=tree, rev=rev)

    def discard(self, rev: str) -> None:
        self.request("DELETE", "/revision/" + quote(rev, safe=""))

    def apply(self, rev: str, wait: float = 120.0, interval: float = 1.0) -> dict:
        """Apply and wait; returns the final status. Raises with the state named on any failure."""
        answer = self.request(
            "PATCH", "/revision/" + quote(rev, safe=""), body={"state": "apply", "auto-prompt": {"ays": "ays_yes"}}
        )
        deadline = time.monotonic() + wait
        status = revision_state(answer, rev)
        while True:
            state = str(status.get("state", ""))
            if state in (SAVED, APPLIED):
                return status
            if is_failure(state):
                raise NvueError(
                    "NVUE revision %s: apply ended in state %s: %s; the switch keeps its previous config "
                    "(see nv config history)" % (rev, state, status.get("transition"))
                )
            if time.monotonic() > deadline:
                raise NvueError("NVUE revision %s: still %r after %ss; see nv config history" % (rev, state, wait))
            time.sleep(interval)
            status = revision_state(self.request("GET", "/revision/" + quote(rev, safe="")), rev)

    def save(self) -> None:
        """Save the applied config to the startup config (what Cumulus Linux 5.9+ does itself)."""
        self.request("PATCH", "/revision/applied", body={"state": "save", "auto-prompt": {"ays": "ays_yes"}})


def change(
    client: NvueClient, set_tree: dict, unset: list[str], check_mode: bool, wait: float = 120.0, save: bool = True
) -> dict:
    """Run the revision flow; returns ``changed``, ``revision``, ``before``, ``after``, ``saved``.

    ``save``: where the switch applied without saving (up to 5.8), save the applied config.
    """
    before = client.applied()
    rev = client.create_revision()
    try:
        for path in unset:
            client.unset(rev, path)
        if set_tree:
            client.patch(rev, set_tree)
        after = client.revision_config(rev)
    except NvueError:
        client.discard(rev)
        raise
    changed = after != before
    if check_mode or not changed:
        client.discard(rev)
        return {"changed": changed, "revision": None, "before": before, "after": after, "saved": None}
    status = client.apply(rev, wait=wait)
    saved = status.get("state") == SAVED
    if not saved and save:
        client.save()
        saved = True
    return {"changed": True, "revision": rev, "before": before, "after": client.applied(), "saved": saved}
