# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small client of the NVUE REST API (Cumulus Linux 5.x), revision flow only.

Private to the collection. The flow: ``POST /nvue_v1/revision`` (new revision),
``DELETE /nvue_v1/<path>?rev=ID`` (unset), ``PATCH /nvue_v1/?rev=ID`` (set, JSON body),
compare ``GET /nvue_v1/?rev=ID`` with ``GET /nvue_v1/?rev=applied``, then either
``PATCH /nvue_v1/revision/ID`` ``{"state": "apply", "auto-prompt": {"ays": "ays_yes"}}`` and poll
``GET /nvue_v1/revision/ID`` until ``applied``, or ``DELETE /nvue_v1/revision/ID`` (check mode,
or nothing to change).
"""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import quote

from ansible.module_utils.urls import open_url

DONE = ("applied",)
FAILED = ("invalid", "ays_fail", "apply_fail", "failed", "conflict")


class NvueError(Exception):
    """The NVUE API refused or could not be reached; the message says what to do."""


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
        self.request(
            "PATCH", "/revision/" + quote(rev, safe=""), body={"state": "apply", "auto-prompt": {"ays": "ays_yes"}}
        )
        deadline = time.monotonic() + wait
        while True:
            status = self.request("GET", "/revision/" + quote(rev, safe=""))
            state = str(status.get("state", ""))
            if state in DONE:
                return status
            if state in FAILED:
                raise NvueError(
                    "NVUE revision %s: apply ended in state %s: %s" % (rev, state, status.get("transition"))
                )
            if time.monotonic() > deadline:
                raise NvueError("NVUE revision %s: still %r after %ss; see nv config history" % (rev, state, wait))
            time.sleep(interval)


def change(client: NvueClient, set_tree: dict, unset: list[str], check_mode: bool, wait: float = 120.0) -> dict:
    """Run the revision flow; returns ``changed``, ``revision``, ``before``, ``after``."""
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
        return {"changed": changed, "revision": None, "before": before, "after": after}
    client.apply(rev, wait=wait)
    return {"changed": True, "revision": rev, "before": before, "after": client.applied()}
