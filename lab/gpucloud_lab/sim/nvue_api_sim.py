# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVUE REST API **SIMULATION**: stands in for a Cumulus Linux switch, whose ASIC OS cannot run here.

It implements the NVUE revision flow the collection uses (``POST /nvue_v1/revision``, unset with
``DELETE /nvue_v1/PATH?rev=ID``, ``PATCH /nvue_v1/?rev=ID``, ``GET /nvue_v1/?rev=ID|applied``,
``PATCH /nvue_v1/revision/ID`` with ``state=apply`` then polling, ``DELETE /nvue_v1/revision/ID``,
``PATCH /nvue_v1/revision/applied`` with ``state=save``) with basic auth, and stores the applied
config. It is as strict as a switch where the collection depends on it (sources: NVIDIA's NVUE
API page for Cumulus Linux 5.12 and the NVUE command reference, CumulusNetworks/docs):

* the config schema: every PATCHed path and value and every DELETEd path is checked against
  NVIDIA's NVUE model of the simulated release (nvue_schema.py: PyPI nvueschema, generated from
  NVIDIA's NVUE OpenAPI specification); a path that release does not define answers 400;
* versions (``version``, default 5.12; the lab gives each switch its fleet ``os_version``): from
  5.9 a good revision ends ``applied_and_saved``; up to 5.8 it ends ``applied`` and the config is
  only saved by ``PATCH /revision/applied {"state": "save"}`` (``saved`` holds what a reboot
  would bring back); DELETE answers 204 from 5.10, 200 before;
* revision answers are nested under the revision id (``{"6": {"state": ...}}``), as documented;
* ``fail_state`` makes the next apply end in that failure state (``apply_error``, ``verify_error``, ...);
* from 5.6 every call answers 403 until the default password has been changed
  (``password_changed=False`` simulates a switch fresh from the box).

It configures no data plane: it proves the client's protocol, paths and idempotence, not forwarding.

Two uses, one implementation:

* tests: ``with NvueSimulation(password=...) as sim:`` serves on 127.0.0.1, a free port, in a thread;
* the lab: ``python -m gpucloud_lab.sim.nvue_api_sim --listen IP --port N --state FILE`` serves in the
  foreground (``lab/gpucloud-lab up`` runs one per NVUE switch of the lab fleet, in the switch's
  own network namespace); the applied config is written to FILE after every apply and read back
  at start, so it survives a restart of the simulation. Password from ``NVUE_SIM_PASSWORD``.

Standard library plus nvueschema (and its pydantic): the lab runs it with the repository's
virtualenv (tests/requirements.txt), as the tests do.
"""

from __future__ import annotations

import argparse
import base64
import copy
import json
import os
import signal
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

from gpucloud_lab.sim.nvue_schema import check_path, check_tree, model

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
    """The simulated switch: its applied config, pending revisions and the HTTP(S) server."""

    def __init__(
        self,
        username: str = "cumulus",
        password: str = "sim",
        applied: dict | None = None,
        apply_polls: int = 2,
        host: str = "127.0.0.1",
        port: int = 0,
        state_file: Path | None = None,
        tls: tuple[Path, Path] | None = None,
        verbose: bool = False,
        version: str = "5.12",
        password_changed: bool = True,
        fail_state: str | None = None,
    ) -> None:
        model(version)  # a release with no NVUE model cannot be simulated: refused here, not at the first PATCH
        self.release = version
        self.version = tuple(int(p) for p in version.split(".")[:2])
        self.password_changed = password_changed
        self.fail_state = fail_state
        self.saved: dict = {}
        self.auth = "Basic " + base64.b64encode(("%s:%s" % (username, password)).encode()).decode()
        self.state_file = state_file
        self.applied: dict = applied or {}
        self.next_rev = 1
        if applied is None and state_file is not None and state_file.exists():
            saved = json.loads(state_file.read_text(encoding="utf-8"))
            self.applied = saved.get("applied", {})
            self.saved = saved.get("saved", {})
            self.next_rev = int(saved.get("next_revision", 1))
        self.revisions: dict[str, dict] = {}
        self.apply_polls = apply_polls
        self.verbose = verbose
        self.log: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer((host, port), self._handler())
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.save()

    def __enter__(self) -> NvueSimulation:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def save(self) -> None:
        """Write the applied config (atomically) where the lab's status and tests read it."""
        if self.state_file is None:
            return
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_name(self.state_file.name + ".tmp")
        tmp.write_text(json.dumps({"applied": self.applied, "saved": self.saved, "next_revision": self.next_rev},
                                  indent=1, sort_keys=True), encoding="utf-8")
        tmp.replace(self.state_file)

    def _handler(self):
        sim = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                if sim.verbose:  # args: the base class's format string and its values
                    sys.stderr.write("%s %s\n" % (self.log_date_time_string(), str(args[0]) % args[1:]))
                    sys.stderr.flush()

            def _reply(self, code: int, body: object = None) -> None:
                data = b"" if code == 204 else json.dumps(body if body is not None else {}).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _route(self, method: str) -> None:
                if self.headers.get("Authorization") != sim.auth:
                    return self._reply(401, {"title": "unauthorized"})
                if not sim.password_changed and sim.version >= (5, 6):
                    return self._reply(403, {"title": "Forbidden",
                                             "detail": "Password change required for user cumulus"})
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
                    return self._revision(method, parts, body)
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
                if method == "DELETE":
                    problem = check_path(parts, sim.release)
                    if problem:
                        return self._reply(400, {"title": "Bad Request", "detail": problem})
                node = config
                for p in parts[:-1] if method == "DELETE" else parts:
                    node = node.get(p) if isinstance(node, dict) else None
                    if node is None:
                        if method == "GET":
                            return self._reply(404, {"title": "no such path"})
                        return self._reply(204) if sim.version >= (5, 10) else self._reply(200, {})
                if method == "GET":
                    return self._reply(200, node)
                if method == "PATCH":
                    if not isinstance(body, dict):
                        return self._reply(400, {"title": "body must be an object"})
                    problems = check_tree(body, tuple(parts), sim.release)
                    if problems:
                        return self._reply(400, {"title": "Bad Request", "detail": "; ".join(problems[:20])})
                    merge(node, body)
                    return self._reply(200, node)
                if method == "DELETE":
                    if parts and isinstance(node, dict):
                        node.pop(parts[-1], None)
                        _drop_empty_parents(config, parts[:-1])
                    return self._reply(204) if sim.version >= (5, 10) else self._reply(200, {})
                return self._reply(405)

            def _revision(self, method: str, parts: list[str], body: object) -> None:
                if method == "POST" and len(parts) == 1:
                    rid = str(sim.next_rev)
                    sim.next_rev += 1
                    sim.revisions[rid] = {"state": "pending", "config": copy.deepcopy(sim.applied), "polls": 0,
                                          "reads": 0}
                    return self._reply(200, {rid: {"state": "pending", "transition": {"issue": {}, "progress": ""}}})
                rid = parts[1] if len(parts) > 1 else ""
                if rid == "applied" and method == "PATCH":
                    if not isinstance(body, dict) or body.get("state") != "save":
                        return self._reply(400, {"title": "the applied revision takes only state=save"})
                    sim.saved = copy.deepcopy(sim.applied)
                    sim.save()
                    return self._reply(200, {"applied": {"state": "saved"}})
                r = sim.revisions.get(rid)
                if r is None:
                    return self._reply(404, {"title": "no revision %s" % rid})
                if method == "GET":
                    r["reads"] += 1  # every status read of the revision (a client that keeps polling shows here)
                    if r["state"] == "apply":
                        r["polls"] += 1
                        if r["polls"] >= sim.apply_polls:
                            if sim.fail_state:
                                r["state"], sim.fail_state = sim.fail_state, None
                            else:
                                sim.applied = copy.deepcopy(r["config"])
                                auto_save = sim.version >= (5, 9)
                                if auto_save:
                                    sim.saved = copy.deepcopy(sim.applied)
                                r["state"] = "applied_and_saved" if auto_save else "applied"
                                sim.save()
                    return self._reply(200, {rid: {"state": r["state"], "transition": {"issue": {}, "progress": ""}}})
                if method == "PATCH":
                    if not isinstance(body, dict) or body.get("state") != "apply":
                        return self._reply(400, {"title": "only state=apply is simulated for a revision"})
                    if (body.get("auto-prompt") or {}).get("ays") != "ays_yes":
                        r["state"] = "ays_fail"
                    else:
                        r["state"] = "apply"
                    return self._reply(200, {rid: {"state": r["state"]}})
                if method == "DELETE":
                    sim.revisions.pop(rid)
                    return self._reply(204) if sim.version >= (5, 10) else self._reply(200, {})
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


def main(argv: list[str] | None = None) -> int:
    """Serve in the foreground until SIGTERM/SIGINT (how the lab runs it)."""
    args = argparse.ArgumentParser(prog="nvue_api_sim", description=__doc__.splitlines()[0])
    args.add_argument("--listen", required=True, help="address to listen on (the switch's management address)")
    args.add_argument("--port", type=int, default=8765)
    args.add_argument("--state", type=Path, required=True, help="JSON file of the applied config")
    args.add_argument("--username", default="cumulus")
    args.add_argument("--apply-polls", type=int, default=1, help="status polls before a revision is applied")
    args.add_argument("--cert", type=Path, help="serve HTTPS with this certificate (and --key)")
    args.add_argument("--key", type=Path)
    args.add_argument("--version", default="5.12", help="the Cumulus Linux release to answer as (e.g. 5.8, 5.12)")
    opts = args.parse_args(argv)
    password = os.environ.get("NVUE_SIM_PASSWORD")
    if not password:
        args.error("NVUE_SIM_PASSWORD is not set")
    tls = (opts.cert, opts.key) if opts.cert and opts.key else None
    sim = NvueSimulation(opts.username, password, apply_polls=opts.apply_polls, host=opts.listen, port=opts.port,
                         state_file=opts.state, tls=tls, verbose=True, version=opts.version)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    scheme = "https" if tls else "http"
    print(f"NVUE API SIMULATION listening on {scheme}://{opts.listen}:{sim.port}{PREFIX}, "
          f"applied config in {opts.state}", file=sys.stderr, flush=True)
    try:
        sim.server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        sim.server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
