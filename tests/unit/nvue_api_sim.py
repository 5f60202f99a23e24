# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVUE REST API *simulation*: a test double for a Cumulus Linux switch we cannot run here.

It implements the revision flow the collection uses (create, unset, patch, read, apply with
polling, delete) over plain HTTP on 127.0.0.1 with basic auth, and stores the applied config.
It checks nothing of NVUE's schema: it proves the client's protocol, not the switch's behaviour.
"""

from __future__ import annotations

import base64
import copy
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

PREFIX = "/nvue_v1"


def merge(into: dict, patch: dict) -> None:
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        elif value is None:
            into.pop(key, None)
        else:
            into[key] = copy.deepcopy(value)


class NvueSimulation:
    def __init__(
        self, username: str = "cumulus", password: str = "sim", applied: dict | None = None, apply_polls: int = 2
    ) -> None:
        self.auth = "Basic " + base64.b64encode(("%s:%s" % (username, password)).encode()).decode()
        self.applied: dict = applied or {}
        self.revisions: dict[str, dict] = {}
        self.next_rev = 1
        self.apply_polls = apply_polls
        self.log: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> NvueSimulation:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self):
        sim = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _reply(self, code: int, body: object = None) -> None:
                data = json.dumps(body if body is not None else {}).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _route(self, method: str) -> None:
                if self.headers.get("Authorization") != sim.auth:
                    return self._reply(401, {"title": "unauthorized"})
                url = urlparse(self.path)
                if not url.path.startswith(PREFIX):
                    return self._reply(404, {"title": "not found"})
                parts = [unquote(p) for p in url.path[len(PREFIX) :].split("/") if p]
                rev = parse_qs(url.query).get("rev", [None])[0]
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                sim.log.append((method, self.path))
                with sim.lock:
                    return self._dispatch(method, parts, rev, body)

            def _dispatch(self, method: str, parts: list[str], rev: str | None, body: object) -> None:
                if parts[:1] == ["revision"]:
                    if method == "POST" and len(parts) == 1:
                        rid = str(sim.next_rev)
                        sim.next_rev += 1
                        sim.revisions[rid] = {"state": "pending", "config": copy.deepcopy(sim.applied), "polls": 0}
                        return self._reply(
                            200, {rid: {"state": "pending", "transition": {"issue": {}, "progress": ""}}}
                        )
                    rid = parts[1] if len(parts) > 1 else ""
                    r = sim.revisions.get(rid)
                    if r is None:
                        return self._reply(404, {"title": "no revision %s" % rid})
                    if method == "GET":
                        if r["state"] == "applying":
                            r["polls"] += 1
                            if r["polls"] >= sim.apply_polls:
                                sim.applied = copy.deepcopy(r["config"])
                                r["state"] = "applied"
                        return self._reply(200, {"state": r["state"], "transition": {"issue": {}, "progress": ""}})
                    if method == "PATCH":
                        if not isinstance(body, dict) or body.get("state") != "apply":
                            return self._reply(400, {"title": "only state=apply is simulated"})
                        if (body.get("auto-prompt") or {}).get("ays") != "ays_yes":
                            r["state"] = "ays_fail"
                        else:
                            r["state"] = "applying"
                        return self._reply(200, {"state": r["state"]})
                    if method == "DELETE":
                        sim.revisions.pop(rid)
                        return self._reply(200, {})
                    return self._reply(405)
                if rev is None:
                    return self._reply(400, {"title": "rev is required"})
                if rev == "applied":
                    config = sim.applied
                    if method != "GET":
                        return self._reply(400, {"title": "the applied revision is read-only"})
                elif rev in sim.revisions and sim.revisions[rev]["state"] == "pending":
                    config = sim.revisions[rev]["config"]
                else:
                    return self._reply(404, {"title": "no pending revision %s" % rev})
                node = config
                for p in parts[:-1] if method == "DELETE" else parts:
                    node = node.get(p) if isinstance(node, dict) else None
                    if node is None:
                        return self._reply(404, {"title": "no such path"}) if method == "GET" else self._reply(200, {})
                if method == "GET":
                    return self._reply(200, node)
                if method == "PATCH":
                    if not isinstance(body, dict):
                        return self._reply(400, {"title": "body must be an object"})
                    merge(node, body)
                    return self._reply(200, node)
                if method == "DELETE":
                    if parts and isinstance(node, dict):
                        node.pop(parts[-1], None)
                        _drop_empty_parents(config, parts[:-1])
                    return self._reply(200, {})
                return self._reply(405)

            def do_GET(self) -> None:
                self._route("GET")

            def do_POST(self) -> None:
                self._route("POST")

            def do_PATCH(self) -> None:
                self._route("PATCH")

            def do_DELETE(self) -> None:
                self._route("DELETE")

        return Handler


def _drop_empty_parents(config: dict, parts: list[str]) -> None:
    """After an unset, drop the containers it left empty (NVUE shows no empty parents)."""
    for depth in range(len(parts), 0, -1):
        parent = config
        for p in parts[: depth - 1]:
            parent = parent[p]
        if parent.get(parts[depth - 1]) == {}:
            parent.pop(parts[depth - 1])
        else:
            return
