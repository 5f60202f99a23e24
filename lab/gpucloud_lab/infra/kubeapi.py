# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A minimal Kubernetes REST client (stdlib only) for the lab controller, with the lab's admin certificate."""
from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from typing import Any

from gpucloud_lab.infra import pki

JSON = dict[str, Any]
MERGE = "application/merge-patch+json"


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status


class Api:
    def __init__(self, server: str) -> None:
        self.server = server
        cert, key = pki.issue("admin", "/O=system:masters/CN=gpucloud-lab-admin")
        self.context = ssl.create_default_context(cafile=str(pki.CA_CERT))
        self.context.load_cert_chain(str(cert), str(key))

    def request(self, method: str, path: str, body: JSON | None = None, content_type: str = "application/json") -> JSON:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.server + path, data=data, method=method,
                                     headers={"Content-Type": content_type, "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, context=self.context, timeout=10) as response:
                payload = response.read()
        except urllib.error.HTTPError as err:
            raise ApiError(err.code, err.read().decode(errors="replace")[:300]) from err
        return json.loads(payload) if payload else {}

    def get(self, path: str) -> JSON | None:
        """The object, or None when it (or its kind) does not exist."""
        try:
            return self.request("GET", path)
        except ApiError as err:
            if err.status == 404:
                return None
            raise

    def items(self, path: str) -> list[JSON]:
        found = self.get(path)
        return list(found.get("items", [])) if found else []

    def patch(self, path: str, body: JSON) -> JSON:
        return self.request("PATCH", path, body, MERGE)

    def create(self, path: str, body: JSON) -> JSON | None:
        """Create, or None when it already exists."""
        try:
            return self.request("POST", path, body)
        except ApiError as err:
            if err.status == 409:
                return None
            raise


def is_ready(obj: JSON) -> bool:
    """A Node's or Pod's Ready condition is True."""
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in obj.get("status", {}).get("conditions", []))
