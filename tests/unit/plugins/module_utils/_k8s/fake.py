# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in for the API behind ``_k8s.client.Client``: objects by path, SSA merge, dry run."""
from __future__ import annotations

import copy
import json

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.client import Client


class FakeApi(Client):
    """Client whose HTTP layer is a dict of objects keyed by URL path (no network)."""

    def __init__(self, objects: dict | None = None, answers: list | None = None):
        self.field_manager = "gpucloud.baremetal"
        self.timeout = 1.0
        self.slept: list[float] = []
        self.sleep = self.slept.append
        self.requests = 0
        self.objects = objects if objects is not None else {}
        self.answers = list(answers or [])  # forced (status, body) answers, consumed first
        self.writes: list[tuple[str, str, str]] = []

    def _send(self, method, url, body, content_type):
        if self.answers:
            status, answer = self.answers.pop(0)
            return status, {}, json.dumps(answer).encode()
        path, query = [*url.split("?", 1), ""][:2]
        dry = "dryRun=All" in query or (isinstance(body, dict) and body.get("dryRun"))
        if method == "GET":
            if path in self.objects:
                return 200, {}, json.dumps(self.objects[path]).encode()
            items = [o for p, o in sorted(self.objects.items()) if p.rsplit("/", 1)[0] == path]
            if items or path.endswith("s"):
                return 200, {}, json.dumps({"items": items}).encode()
            return 404, {}, b'{"reason": "NotFound", "message": "not found"}'
        if method == "PATCH":
            obj = json.loads(body)
            self.writes.append((method, path, "dry" if dry else "real"))
            merged = copy.deepcopy(self.objects.get(path, {}))
            merged.setdefault("metadata", {}).setdefault("labels", {}).update(obj["metadata"].get("labels", {}))
            merged["metadata"]["name"] = obj["metadata"]["name"]
            merged["spec"] = obj.get("spec")
            merged.update({k: v for k, v in obj.items() if k not in ("metadata", "spec")})
            if not dry:
                self.objects[path] = merged
            return 200, {}, json.dumps(merged).encode()
        if method == "DELETE":
            if path not in self.objects:
                return 404, {}, b'{"reason": "NotFound", "message": "not found"}'
            self.writes.append((method, path, "dry" if dry else "real"))
            if not dry:
                del self.objects[path]
            return 200, {}, b"{}"
        raise AssertionError(method)
