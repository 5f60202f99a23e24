# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_alerts event source (extensions/eda/plugins/event_source/gpu_alerts.py), run as ansible-rulebook runs
it: the file is loaded with runpy and its ``main(queue, args)`` serves a real aiohttp server on a free port, which
the tests post Alertmanager's webhook payloads to (data/alertmanager-webhook-gpu-faults.json, held to the
documented format of data/alertmanager-webhook-v4-format.txt). The last test runs the ansible-rulebook CLI itself
on a rulebook that names the source by its FQCN."""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import runpy
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from tests.support import tools

REPO = Path(__file__).resolve().parents[3]
PLUGIN = REPO / "extensions" / "eda" / "plugins" / "event_source" / "gpu_alerts.py"
RULES = REPO / "roles" / "gpu_operator" / "files" / "prometheus-rules-gpucloud-v1.yml"
DATA = Path(__file__).parent / "data"
FORMAT = DATA / "alertmanager-webhook-v4-format.txt"
SAMPLE = DATA / "alertmanager-webhook-gpu-faults.json"
SOURCE = "gpucloud.baremetal.gpu_alerts"
TOKEN = "s3cret-t0ken-for-the-tests"

# ansible-rulebook loads a source with runpy.run_path, not as a module of a package: so do the tests.
GA = runpy.run_path(str(PLUGIN))


def sample() -> dict[str, Any]:
    return json.loads(SAMPLE.read_text())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def accepts(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


class Served:
    def __init__(self, queue: asyncio.Queue[Any], base: str) -> None:
        self.queue, self.base = queue, base

    def events(self) -> list[dict[str, Any]]:
        out = []
        while not self.queue.empty():
            out.append(self.queue.get_nowait())
        return out

    async def post(self, body: Any = None, *, raw: Any = None, token: str | None = None,
                   headers: dict[str, str] | None = None, path: str = "/alerts") -> tuple[int, Any]:
        headers = dict(headers or {})
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        data = raw if raw is not None else json.dumps(body).encode()
        async with aiohttp.ClientSession() as session, session.post(
            self.base + path, data=data, headers={"Content-Type": "application/json", **headers}
        ) as resp:
            text = await resp.text()
            try:
                return resp.status, json.loads(text)
            except ValueError:
                return resp.status, text


@contextlib.asynccontextmanager
async def serve(**args: Any) -> AsyncIterator[Served]:
    port = free_port()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    task = asyncio.create_task(GA["main"](queue, {"port": port, **args}))
    for _attempt in range(200):
        if task.done():
            task.result()  # raises what main raised
        if accepts(port):
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError(f"gpu_alerts did not listen on port {port}")
    try:
        yield Served(queue, f"http://127.0.0.1:{port}")
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# --- The sample: the documented format, the collection's rules, Alertmanager's fingerprints -----------------


def _documented_keys() -> tuple[set[str], set[str]]:
    text = "\n".join(line for line in FORMAT.read_text().splitlines() if not line.startswith("# "))
    top, _sep, alert = text.partition('"alerts": [')
    return set(re.findall(r'"(\w+)":', top)) | {"alerts"}, set(re.findall(r'"(\w+)":', alert))


def _fingerprint(labels: dict[str, str]) -> str:
    """prometheus/common model.LabelSet.Fingerprint: FNV-1a 64 over sorted names and values, 0xff after each."""
    value = 0xCBF29CE484222325
    for name in sorted(labels):
        for byte in name.encode() + b"\xff" + labels[name].encode() + b"\xff":
            value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def test_the_sample_is_a_documented_version_4_payload_of_the_collections_alerts() -> None:
    top, per_alert = _documented_keys()
    assert "truncatedAlerts" in top and "fingerprint" in per_alert  # the format file was read whole
    payload = sample()
    assert set(payload) == top and payload["version"] == "4"
    rules = {rule["alert"]: rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]}
    for alert in payload["alerts"]:
        assert set(alert) == per_alert
        assert alert["fingerprint"] == _fingerprint(alert["labels"])
        rule = rules[alert["labels"]["alertname"]]
        assert {k: alert["labels"][k] for k in rule["labels"]} == rule["labels"]
    common = set.intersection(*(set(a["labels"].items()) for a in payload["alerts"]))
    assert dict(common) == payload["commonLabels"]


# --- Events -----------------------------------------------------------------------------------------------------


def test_each_alert_of_the_sample_becomes_one_event() -> None:
    async def scenario() -> tuple[int, Any, list[dict[str, Any]]]:
        async with serve() as srv:
            status, body = await srv.post(sample())
            return status, body, srv.events()

    before = datetime.now(timezone.utc)  # noqa: UP017 - the plugin's own idiom
    status, body, events = run(scenario())
    assert (status, body) == (202, {"queued": 3, "dropped": 0})
    assert events[0]["gpucloud"] == {
        "alert": "GpuFatalXid",
        "status": "firing",
        "node": "gpu-node-01",
        "action": "drain_reset_gpu",
        "severity": "critical",
        "gpu": "3",
        "uuid": "GPU-5c1e2a9f-7b3d-4e60-9a1c-2f8d6b4e0a13",
        "xid": "48",
        "summary": "GPU 3 (GPU-5c1e2a9f-7b3d-4e60-9a1c-2f8d6b4e0a13) reported Xid 48",
        "starts_at": "2025-06-12T08:14:27.512Z",
        "fingerprint": sample()["alerts"][0]["fingerprint"],
    }
    assert [(e["gpucloud"]["alert"], e["gpucloud"]["node"], e["gpucloud"]["action"], e["gpucloud"]["xid"])
            for e in events] == [("GpuFatalXid", "gpu-node-01", "drain_reset_gpu", "48"),
                                 ("GpuDoubleBitEccError", "gpu-node-01", "drain_reset_gpu", ""),
                                 ("GpuFellOffTheBus", "gpu-node-02", "drain_reboot_node", "79")]
    for event in events:
        assert set(event) == {"gpucloud", "meta"}
        assert event["meta"]["source"] == {"type": SOURCE}
        received = event["meta"]["received_at"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", received), received
        at = datetime.fromisoformat(received.replace("Z", "+00:00"))
        assert before - timedelta(seconds=1) <= at <= datetime.now(timezone.utc)  # noqa: UP017
        assert all(isinstance(v, str) for v in event["gpucloud"].values())


def test_resolved_alerts_pass_through_as_resolved() -> None:
    payload = sample()
    payload["status"] = "resolved"
    for alert in payload["alerts"][:2]:
        alert["status"], alert["endsAt"] = "resolved", "2025-06-12T09:02:27.512Z"

    async def scenario() -> tuple[int, Any, list[dict[str, Any]]]:
        async with serve() as srv:
            status, body = await srv.post(payload)
            return status, body, srv.events()

    status, body, events = run(scenario())
    assert (status, body) == (202, {"queued": 3, "dropped": 0})
    assert [e["gpucloud"]["status"] for e in events] == ["resolved", "resolved", "firing"]


def test_an_alert_without_a_valid_node_is_dropped_and_its_sibling_kept(caplog: pytest.LogCaptureFixture) -> None:
    payload = sample()
    payload["alerts"][0]["labels"]["Hostname"] = "GPU_Node_01\ninjected"
    del payload["alerts"][1]["labels"]["Hostname"]  # and no hostname/node label either

    async def scenario() -> tuple[int, Any, list[dict[str, Any]]]:
        async with serve() as srv:
            status, body = await srv.post(payload)
            return status, body, srv.events()

    with caplog.at_level(logging.WARNING, logger=SOURCE):
        status, body, events = run(scenario())
    assert (status, body) == (202, {"queued": 1, "dropped": 2})
    assert [(e["gpucloud"]["alert"], e["gpucloud"]["node"]) for e in events] == [("GpuFellOffTheBus", "gpu-node-02")]
    dropped = [r.getMessage() for r in caplog.records if r.getMessage().startswith("dropped alert")]
    assert len(dropped) == 2 and "'GpuFatalXid'" in dropped[0] and "'GpuDoubleBitEccError'" in dropped[1]
    assert all("\n" not in line for line in dropped)  # the label's value is logged quoted, not raw


@pytest.mark.parametrize(("labels", "node"), [
    ({"hostname": "gpu-node-07"}, "gpu-node-07"),
    ({"node": "rack3.gpu-node-08"}, "rack3.gpu-node-08"),
    ({"Hostname": "gpu-node-09", "node": "other"}, "gpu-node-09"),
    ({"Hostname": "Gpu-Node-09", "node": "gpu-node-09"}, None),  # the first label present decides
    ({"Hostname": "a" * 253}, "a" * 253),
    ({"Hostname": "a" * 254}, None),
    ({"Hostname": "-gpu-node"}, None),
    ({"Hostname": "gpu-node-"}, None),
    ({"Hostname": "gpu..node"}, None),
    ({"Hostname": "gpu_node"}, None),
    ({"Hostname": ""}, None),
    ({"Hostname": "gpu-node-01\n"}, None),
    ({}, None),
])
def test_the_node_comes_from_hostname_then_node_and_must_be_a_kubernetes_node_name(
        labels: dict[str, str], node: str | None) -> None:
    assert GA["alert_node"]({"alertname": "GpuLost", **labels}) == node


def test_values_on_events_are_bounded_strings() -> None:
    payload = sample()
    alert = payload["alerts"][0]
    alert["labels"]["alertname"] = "A" * 100_000
    alert["labels"]["UUID"] = "U" * 100_000
    alert["annotations"]["summary"] = "S" * 500_000
    alert["startsAt"] = 12345
    del alert["fingerprint"]

    async def scenario() -> list[dict[str, Any]]:
        async with serve() as srv:
            assert (await srv.post(payload))[0] == 202
            return srv.events()

    event = run(scenario())[0]["gpucloud"]
    assert (len(event["alert"]), len(event["uuid"]), len(event["summary"])) == (256, 256, 1024)
    assert (event["starts_at"], event["fingerprint"]) == ("", "")


# --- The bearer token ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("headers", [
    {},
    {"Authorization": f"Bearer {TOKEN}x"},
    {"Authorization": f"Bearer {TOKEN[:-1]}"},
    {"Authorization": f"Basic {TOKEN}"},
    {"Authorization": TOKEN},
    {"Authorization": "Bearer"},
], ids=["missing", "longer", "shorter", "basic", "no-scheme", "empty"])
def test_a_missing_or_wrong_token_is_refused_and_nothing_queued(
        headers: dict[str, str], caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> tuple[int, Any, list[dict[str, Any]]]:
        async with serve(token=TOKEN) as srv:
            status, body = await srv.post(sample(), headers=headers)
            return status, body, srv.events()

    with caplog.at_level(logging.DEBUG):
        status, body, events = run(scenario())
    assert (status, body, events) == (401, {"error": "unauthorized"}, [])
    assert TOKEN not in caplog.text and TOKEN[:-1] not in caplog.text


def test_the_right_token_is_accepted_and_never_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> tuple[int, Any, list[dict[str, Any]]]:
        async with serve(token=TOKEN) as srv:
            status, body = await srv.post(sample(), headers={"Authorization": f"bearer {TOKEN}"})
            return status, body, srv.events()

    with caplog.at_level(logging.DEBUG):
        status, body, events = run(scenario())
    assert (status, body, len(events)) == (202, {"queued": 3, "dropped": 0}, 3)
    assert "required" in caplog.text  # the start-up line says a token is required ...
    assert TOKEN not in caplog.text  # ... and never what it is


@pytest.mark.parametrize("args", [{}, {"token": None}, {"token": ""}], ids=["absent", "null", "empty"])
def test_without_a_token_no_authorization_is_needed(args: dict[str, Any]) -> None:
    async def scenario() -> int:
        async with serve(**args) as srv:
            return (await srv.post(sample()))[0]

    assert run(scenario()) == 202


@pytest.mark.parametrize("args", [{"token": 42}, {"token": ["a"]}, {"port": "http"}, {"port": 70000}, {"path": "alerts"},
                                  {"host": ""}])
def test_bad_arguments_stop_the_source(args: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="gpu_alerts: "):
        run(GA["main"](asyncio.Queue(), {"port": free_port(), **args}))


# --- Untrusted payloads -------------------------------------------------------------------------------------------


def _bad(mutate: Any) -> bytes:
    payload = sample()
    out = mutate(payload)
    return json.dumps(payload if out is None else out).encode()


def _set(path: list[Any], value: Any) -> Any:
    def mutate(payload: dict[str, Any]) -> None:
        target = payload
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


SMALL = {"status": "firing", "labels": {"alertname": "GpuLost", "Hostname": "gpu-node-01"}}
BAD_PAYLOADS = {
    "not-json": (b'{"version": "4", "alerts": [', "body: not JSON"),
    "not-utf8": (b'{"version": "4", "alerts": ["\xff"]}', "body: not JSON"),
    "deeply-nested": (b"[" * 100_000 + b"]" * 100_000, "body: not JSON"),
    "a-list": (b"[]", "body: must be a JSON object"),
    "version-3": (_bad(_set(["version"], "3")), "version: must be \"4\""),
    "version-number": (_bad(_set(["version"], 4)), "version: must be \"4\""),
    "no-version": (_bad(lambda p: p.pop("version") and None), "version: must be \"4\""),
    "alerts-object": (_bad(_set(["alerts"], {"0": {}})), "alerts: must be a list"),
    "no-alerts": (_bad(lambda p: p.pop("alerts") and None), "alerts: must be a list"),
    "too-many-alerts": (_bad(lambda p: {**p, "alerts": [SMALL] * 1001}), "alerts: 1001 alerts, more than 1000"),
    "alert-not-object": (_bad(lambda p: p["alerts"].append("GpuLost")), "alerts[3]: must be a JSON object"),
    "bad-status": (_bad(_set(["alerts", 1, "status"], "pending")), "alerts[1].status: must be one of firing, resolved"),
    "labels-list": (_bad(_set(["alerts", 0, "labels"], ["a"])), "alerts[0].labels: must be a JSON object of strings"),
    "label-number": (_bad(_set(["alerts", 2, "labels", "gpu"], 5)), "alerts[2].labels: must be a JSON object of strings"),
    "no-alertname": (_bad(lambda p: p["alerts"][0]["labels"].pop("alertname") and None),
                     "alerts[0].labels.alertname: must be a non-empty string"),
}


@pytest.mark.parametrize("name", BAD_PAYLOADS)
def test_a_malformed_payload_is_refused_whole_naming_the_field(name: str) -> None:
    raw, reason = BAD_PAYLOADS[name]

    async def scenario() -> tuple[int, Any, list[dict[str, Any]]]:
        async with serve() as srv:
            status, body = await srv.post(raw=raw)
            return status, body, srv.events()

    status, body, events = run(scenario())
    assert status == 400 and body["error"].startswith(reason), body
    assert events == []  # the valid alerts of the same request are not queued either


def test_a_payload_of_1000_alerts_is_accepted() -> None:
    async def scenario() -> tuple[int, Any, int]:
        async with serve() as srv:
            status, body = await srv.post({**sample(), "alerts": [SMALL] * 1000})
            return status, body, len(srv.events())

    assert run(scenario()) == (202, {"queued": 1000, "dropped": 0}, 1000)


def test_the_largest_accepted_body_and_the_sizes_refused() -> None:
    limit = GA["MAX_BODY_BYTES"]
    assert limit == 1024 * 1024
    text = json.dumps(sample())
    fits = text[:-1] + " " * (limit - len(text)) + "}"  # padded with JSON whitespace to the limit exactly
    assert len(fits.encode()) == limit

    async def chunked(data: bytes) -> AsyncIterator[bytes]:  # no Content-Length: the limit holds while reading
        for start in range(0, len(data), 64 * 1024):
            yield data[start:start + 64 * 1024]

    async def scenario() -> list[tuple[int, Any]]:
        async with serve() as srv:
            out = [await srv.post(raw=fits.encode())]
            assert len(srv.events()) == 3
            out.append(await srv.post(raw=fits.encode() + b" "))
            out.append(await srv.post(raw=chunked(fits.encode() + b" " * 100_000)))
            assert srv.events() == []
            return out

    (ok, _body), (declared, body1), (streamed, body2) = run(scenario())
    assert (ok, declared, streamed) == (202, 413, 413)
    assert body1 == body2 == {"error": f"body: larger than {limit} bytes"}


def test_only_a_post_on_the_configured_path_is_served() -> None:
    async def scenario() -> list[int]:
        async with serve(path="/hooks/gpu") as srv, aiohttp.ClientSession() as session:
            out = []
            for method, path in (("GET", "/hooks/gpu"), ("PUT", "/hooks/gpu"), ("POST", "/alerts"), ("GET", "/")):
                async with session.request(method, srv.base + path, json=sample()) as resp:
                    out.append(resp.status)
            out.append((await srv.post(sample(), path="/hooks/gpu"))[0])
            assert len(srv.events()) == 3
            return out

    assert run(scenario()) == [405, 405, 404, 404, 202]


# --- Shutdown -----------------------------------------------------------------------------------------------------


def test_cancelling_the_source_closes_its_port() -> None:
    port = free_port()

    async def scenario() -> None:
        task = asyncio.create_task(GA["main"](asyncio.Queue(), {"port": port}))
        for _attempt in range(200):
            if accepts(port):
                break
            await asyncio.sleep(0.01)
        assert accepts(port)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not accepts(port)
        # and the port can be served again at once (the listener was closed, not left to the garbage collector)
        again = asyncio.create_task(GA["main"](asyncio.Queue(), {"port": port}))
        for _attempt in range(200):
            if accepts(port):
                break
            await asyncio.sleep(0.01)
        assert accepts(port) and not again.done()
        again.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await again

    run(scenario())


def test_the_plugin_documents_its_options() -> None:
    doc = yaml.safe_load(GA["DOCUMENTATION"])
    assert set(doc["options"]) == {"host", "port", "path", "token"}
    assert (doc["options"]["host"]["default"], doc["options"]["port"]["default"],
            doc["options"]["path"]["default"]) == ("127.0.0.1", 5001, "/alerts")
    examples = yaml.safe_load(GA["EXAMPLES"])
    assert SOURCE in examples[0]["sources"][0]


# --- ansible-rulebook itself --------------------------------------------------------------------------------------


def _rulebook_cli() -> str:
    tools.require("java")
    return tools.require("ansible-rulebook")


def _collections_path() -> str:
    for entry in sys.path:  # tests/conftest.py puts a folder holding ansible_collections/gpucloud/baremetal there
        if (Path(entry) / "ansible_collections" / "gpucloud" / "baremetal" / PLUGIN.relative_to(REPO)).exists():
            return entry
    raise AssertionError("the collection is not importable (tests/conftest.py)")


def test_ansible_rulebook_runs_the_source_by_its_fqcn(tmp_path: Path) -> None:
    cli = _rulebook_cli()
    port = free_port()
    rulebook = tmp_path / "rulebook.yml"
    rulebook.write_text(yaml.safe_dump([{
        "name": "gpu alerts",
        "hosts": "all",
        "sources": [{"name": "alertmanager", SOURCE: {"port": port, "token": TOKEN}}],
        "rules": [{
            "name": "reset",
            "condition": 'event.gpucloud.action == "drain_reset_gpu" and event.gpucloud.xid == "48"',
            "action": {"print_event": {"pretty": False}},
        }],
    }], sort_keys=False))
    (tmp_path / "inventory.yml").write_text("all:\n  hosts:\n    localhost:\n")
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": _collections_path(), "ANSIBLE_LOCAL_TEMP": str(tmp_path)}
    log = tmp_path / "rulebook.out"

    def printed_events() -> list[str]:
        return [line for line in log.read_text().splitlines() if line.startswith("{") and "gpucloud" in line]

    with log.open("w") as out:
        proc = subprocess.Popen([cli, "--rulebook", str(rulebook), "-i", str(tmp_path / "inventory.yml")],
                                cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while not accepts(port):
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "ansible-rulebook did not start the source"
            time.sleep(0.2)

        async def post() -> tuple[int, Any]:
            return await Served(asyncio.Queue(), f"http://127.0.0.1:{port}").post(sample(), token=TOKEN)

        assert run(post()) == (202, {"queued": 3, "dropped": 0})
        # The rule engine matches and prints: wait for the first event (a wait, not a timing: the machine may be
        # busy), then a little longer, for a second one that must not come.
        deadline = time.monotonic() + 60
        while not printed_events() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        time.sleep(2)
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    output = log.read_text()
    printed = printed_events()
    assert len(printed) == 1, output  # GpuFatalXid only: the ECC alert has no xid, Xid 79 asks a reboot
    event = json.loads(printed[0].replace("'", '"'))
    assert event["gpucloud"]["alert"] == "GpuFatalXid" and event["gpucloud"]["node"] == "gpu-node-01"
    # ansible-rulebook's insert_meta_info filter added the source's name beside the plugin's type
    assert event["meta"]["source"] == {"type": SOURCE, "name": "alertmanager"}
    assert TOKEN not in output


def test_the_shipped_rulebook_is_valid_and_names_what_the_collection_has(monkeypatch: pytest.MonkeyPatch) -> None:
    """extensions/eda/rulebooks/gpu_health.yml against ansible-rulebook's own schema and parser, and its source and
    playbook found as ansible-rulebook finds them in the installed collection."""
    _rulebook_cli()
    from ansible_rulebook import collection, rules_parser  # only where ansible-rulebook is installed
    from ansible_rulebook.validators import Validate

    data = yaml.safe_load((REPO / "extensions" / "eda" / "rulebooks" / "gpu_health.yml").read_text())
    Validate.rulebook(data)
    [rule_set] = rules_parser.parse_rule_sets(data, {})
    [source] = rule_set.sources
    assert source.source_name == SOURCE, source
    [rule] = rule_set.rules
    [action] = rule.actions
    assert action.action == "run_playbook" and action.action_args["name"] == "gpucloud.baremetal.gpu_quarantine"
    # ansible-rulebook passes the rule set's hosts as the playbook's --limit: the repair play runs on the node.
    assert rule_set.hosts == ["all"], rule_set.hosts
    assert set(action.action_args["extra_vars"]) == {"node", "reason", "repair"}
    assert action.action_args["extra_vars"]["repair"] is True
    monkeypatch.setenv("ANSIBLE_COLLECTIONS_PATH", _collections_path())
    monkeypatch.setattr(collection.settings, "ansible_galaxy_path",
                        shutil.which("ansible-galaxy", path=os.path.dirname(sys.executable)))
    assert collection.has_source("gpucloud.baremetal", "gpu_alerts")
    assert collection.has_playbook("gpucloud.baremetal", "gpu_quarantine")
    assert collection.has_rulebook("gpucloud.baremetal", "gpu_health")
