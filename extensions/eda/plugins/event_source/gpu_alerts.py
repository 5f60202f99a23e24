# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_alerts: an ansible-rulebook event source that receives Alertmanager's webhook (payload version 4) for the
collection's GPU fault alerts (roles/gpu_operator/files/prometheus-rules-gpucloud-v1.yml) and puts one event per
alert on the rulebook's queue.

ansible-rulebook loads this file with runpy (not as a module of a package): it imports nothing but the standard
library and aiohttp (which ansible-rulebook itself requires), and its entry point is ``main(queue, args)``.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from aiohttp import web

DOCUMENTATION = r"""
---
short_description: Receive the GPU fault alerts of gpucloud.baremetal from Alertmanager's webhook.
description:
  - >-
    An ansible-rulebook event source that listens for Alertmanager's webhook notifications (webhook payload
    version 4, Alertmanager's C(webhook_config) receiver) and puts one event on the queue for each alert of the
    collection's GPU fault rules (role gpu_operator, C(prometheus-rules-gpucloud-v1.yml)).
  - >-
    Each event is C({"gpucloud": {...}, "meta": {...}}). C(gpucloud) holds C(alert) (the alertname),
    C(status) (C(firing) or C(resolved)), C(node) (the Kubernetes node name, from the exporter's C(Hostname)
    label, else C(hostname), else C(node)), C(action) (the rule's C(gpucloud_action) label, one of
    C(drain_reset_gpu), C(drain_reboot_node), C(investigate), or an empty string), C(severity), C(gpu), C(uuid),
    C(xid), C(summary) (the alert's summary annotation), C(starts_at) and C(fingerprint), all strings of bounded
    length (an absent value is an empty string). C(meta) holds C(source.type) C(gpucloud.baremetal.gpu_alerts)
    and C(received_at) (RFC 3339, UTC); ansible-rulebook adds the source's name and an uuid.
  - >-
    The payload is untrusted. A body over 1 MiB is refused (413); a body that is not a JSON object with
    C(version) C("4") and an C(alerts) list of at most 1000 alerts, each with C(status) C(firing) or
    C(resolved), C(labels) a mapping of strings to strings and a C(labels.alertname) string, is refused whole
    (400, with the field named) and nothing is queued. An alert whose node is missing or is not a valid
    Kubernetes node name (an RFC 1123 subdomain of at most 253 characters) is dropped, with a log line, and its
    siblings are kept. Accepted requests are answered 202 with C({"queued": n, "dropped": m}).
  - >-
    Alertmanager retries a notification that fails with a 5xx status, not one refused with a 4xx status.
options:
  host:
    description:
      - >-
        The address to listen on. Set C(0.0.0.0) to listen on all interfaces (then set I(token)).
    type: str
    default: "127.0.0.1"
  port:
    description:
      - >-
        The TCP port to listen on.
    type: int
    default: 5001
  path:
    description:
      - >-
        The URL path Alertmanager posts to. Any other path answers 404, any other method 405.
    type: str
    default: "/alerts"
  token:
    description:
      - >-
        When set, every request must carry C(Authorization: Bearer <token>) (Alertmanager's
        C(http_config.authorization) with its default type C(Bearer)), else it is answered 401 and nothing is
        queued. The token is compared in constant time and never logged.
      - >-
        Pass it from a vault or an environment variable, not in the rulebook's text. An empty string is the same
        as no token (a warning is logged when the source then listens on an address other than loopback).
    type: str
notes:
  - >-
    Alertmanager sends a group's firing and resolved alerts together; with C(send_resolved) (its default) a
    resolved alert arrives as an event with C(status) C(resolved).
  - >-
    Labels C(pod) and C(namespace) (a workload holding the GPU) and C(modelName) are not copied to the event.
"""

EXAMPLES = r"""
# Alertmanager (receiver of the GPU fault alerts):
#   receivers:
#     - name: gpucloud-eda
#       webhook_configs:
#         - url: http://eda.example.internal:5001/alerts
#           http_config:
#             authorization:
#               credentials_file: /etc/alertmanager/secrets/gpucloud-eda-token
- name: React to GPU faults
  hosts: all
  sources:
    - gpucloud.baremetal.gpu_alerts:
        host: 0.0.0.0
        port: 5001
        path: /alerts
        token: "{{ GPU_ALERTS_TOKEN }}"
  rules:
    - name: Drain the node and reset the GPU
      condition: >-
        event.gpucloud.status == "firing" and event.gpucloud.action == "drain_reset_gpu"
      action:
        run_job_template:
          name: gpu-reset
          organization: Default
          job_args:
            extra_vars:
              node: "{{ event.gpucloud.node }}"
              gpu_uuid: "{{ event.gpucloud.uuid }}"
"""

SOURCE = "gpucloud.baremetal.gpu_alerts"
MAX_BODY_BYTES = 1024 * 1024
MAX_ALERTS = 1000
MAX_VALUE_CHARS = 256  # alert name, node, labels, timestamps, fingerprint on an event
MAX_SUMMARY_CHARS = 1024
STATUSES = ("firing", "resolved")
NODE_LABELS = ("Hostname", "hostname", "node")  # the DCGM exporter's label first
# A Kubernetes node name is an RFC 1123 subdomain (k8s.io/apimachinery IsDNS1123Subdomain): lowercase
# alphanumerics, '-' and '.', starting and ending with an alphanumeric, at most 253 characters.
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_NODE_NAME = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")
MAX_NODE_NAME = 253

log = logging.getLogger(SOURCE)  # not __name__: ansible-rulebook runs this file with runpy
QUEUE_KEY: web.AppKey[asyncio.Queue[Any]] = web.AppKey("queue", asyncio.Queue)
TOKEN_KEY: web.AppKey[str | None] = web.AppKey("token", str)


class PayloadError(ValueError):
    """The request's body is not an Alertmanager version 4 webhook payload; the message names the field."""


def valid_node_name(name: object) -> bool:
    return isinstance(name, str) and 0 < len(name) <= MAX_NODE_NAME and _NODE_NAME.fullmatch(name) is not None


def _bounded(value: object, limit: int = MAX_VALUE_CHARS) -> str:
    """A string of at most ``limit`` characters; anything that is not a string is an empty one."""
    return value[:limit] if isinstance(value, str) else ""


def _check_alert(index: int, alert: object) -> None:
    where = f"alerts[{index}]"
    if not isinstance(alert, Mapping):
        raise PayloadError(f"{where}: must be a JSON object")
    if alert.get("status") not in STATUSES:
        raise PayloadError(f"{where}.status: must be one of {', '.join(STATUSES)}")
    labels = alert.get("labels")
    if not isinstance(labels, Mapping) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in labels.items()
    ):
        raise PayloadError(f"{where}.labels: must be a JSON object of strings")
    if not isinstance(labels.get("alertname"), str) or not labels["alertname"]:
        raise PayloadError(f"{where}.labels.alertname: must be a non-empty string")


def parse_payload(body: bytes) -> list[Mapping[str, Any]]:
    """The alerts of a webhook body, all checked, or PayloadError naming the first field that is wrong."""
    try:
        payload = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise PayloadError(f"body: not JSON ({type(exc).__name__})") from None
    if not isinstance(payload, dict):
        raise PayloadError("body: must be a JSON object")
    if payload.get("version") != "4":
        raise PayloadError('version: must be "4" (Alertmanager webhook payload version 4)')
    alerts = payload.get("alerts")
    if not isinstance(alerts, list):
        raise PayloadError("alerts: must be a list")
    if len(alerts) > MAX_ALERTS:
        raise PayloadError(f"alerts: {len(alerts)} alerts, more than {MAX_ALERTS}")
    for index, alert in enumerate(alerts):
        _check_alert(index, alert)
    return alerts


def alert_node(labels: Mapping[str, str]) -> str | None:
    """The node an alert is about: the first of Hostname, hostname, node that it has, if a valid node name."""
    for key in NODE_LABELS:
        if key in labels:
            return labels[key] if valid_node_name(labels[key]) else None
    return None


def make_event(alert: Mapping[str, Any], node: str, received_at: str) -> dict[str, Any]:
    labels = alert["labels"]
    annotations = alert.get("annotations")
    summary = annotations.get("summary") if isinstance(annotations, Mapping) else None
    return {
        "gpucloud": {
            "alert": _bounded(labels["alertname"]),
            "status": alert["status"],
            "node": node,
            "action": _bounded(labels.get("gpucloud_action")),
            "severity": _bounded(labels.get("severity")),
            "gpu": _bounded(labels.get("gpu")),
            "uuid": _bounded(labels.get("UUID")),
            "xid": _bounded(labels.get("xid")),
            "summary": _bounded(summary, MAX_SUMMARY_CHARS),
            "starts_at": _bounded(alert.get("startsAt")),
            "fingerprint": _bounded(alert.get("fingerprint")),
        },
        # meta.source is a mapping: ansible-rulebook's insert_meta_info filter adds source.name to it.
        "meta": {"source": {"type": SOURCE}, "received_at": received_at},
    }


def _error(status: int, reason: str) -> web.Response:
    return web.json_response({"error": reason}, status=status)


def _authorized(request: web.Request, token: str) -> bool:
    scheme, _sep, credentials = request.headers.get("Authorization", "").partition(" ")
    # Both sides compared whole, as bytes, whatever the scheme: the time taken does not depend on the token.
    matches = hmac.compare_digest(credentials.strip().encode("utf-8"), token.encode("utf-8"))
    return scheme.lower() == "bearer" and matches


async def _receive(request: web.Request) -> web.Response:
    app = request.app
    token = app[TOKEN_KEY]
    if token is not None and not _authorized(request, token):
        log.warning("refused a request from %s: missing or wrong bearer token", request.remote)
        return web.json_response({"error": "unauthorized"}, status=401, headers={"WWW-Authenticate": "Bearer"})
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        return _error(413, f"body: larger than {MAX_BODY_BYTES} bytes")
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        return _error(413, f"body: larger than {MAX_BODY_BYTES} bytes")
    try:
        alerts = parse_payload(body)
    except PayloadError as exc:
        log.warning("refused a request from %s: %s", request.remote, exc)
        return _error(400, str(exc))

    # timezone.utc, not datetime.UTC (3.11+): ansible-rulebook 1.3 supports Python 3.9 and later.
    received_at = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")  # noqa: UP017
    events, dropped = [], 0
    for alert in alerts:
        node = alert_node(alert["labels"])
        if node is None:
            dropped += 1
            given = next((alert["labels"][key] for key in NODE_LABELS if key in alert["labels"]), None)
            log.warning("dropped alert %r (%s): no valid node name in labels %s (got %r)",
                        _bounded(alert["labels"]["alertname"], 64), alert["status"], "/".join(NODE_LABELS),
                        None if given is None else given[:64])
            continue
        events.append(make_event(alert, node, received_at))
    for event in events:
        await app[QUEUE_KEY].put(event)
    log.info("queued %d GPU alert events, dropped %d", len(events), dropped)
    return web.json_response({"queued": len(events), "dropped": dropped}, status=202)


def _settings(args: Mapping[str, Any]) -> tuple[str, int, str, str | None]:
    host = args.get("host", "127.0.0.1")
    if not isinstance(host, str) or not host:
        raise ValueError("gpu_alerts: host must be a non-empty string")
    try:
        port = int(args.get("port", 5001))
    except (TypeError, ValueError):
        raise ValueError("gpu_alerts: port must be an integer") from None
    if not 0 <= port <= 65535:
        raise ValueError("gpu_alerts: port must be between 0 and 65535")
    path = args.get("path", "/alerts")
    if not isinstance(path, str) or not path.startswith("/"):
        raise ValueError("gpu_alerts: path must be a string that starts with /")
    token = args.get("token")
    if token is not None and not isinstance(token, str):
        raise ValueError("gpu_alerts: token must be a string")  # its value is not shown
    # An empty token is no token: a rulebook passes "{{ gpu_alerts_token | default('') }}" when none is set.
    return host, port, path, token or None


def make_app(queue: asyncio.Queue[Any], path: str = "/alerts", token: str | None = None) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app[QUEUE_KEY] = queue
    app[TOKEN_KEY] = token
    app.router.add_post(path, _receive)  # any other method on the path: 405; any other path: 404
    return app


async def main(queue: asyncio.Queue[Any], args: dict[str, Any]) -> None:
    """Serve Alertmanager's webhook until cancelled, then close the listener and pending connections."""
    host, port, path, token = _settings(args)
    runner = web.AppRunner(make_app(queue, path, token), handle_signals=False)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        log.info("listening for Alertmanager webhooks on http://%s:%d%s (bearer token %s)", host, port, path,
                 "required" if token else "not required")
        if token is None and host not in ("127.0.0.1", "::1", "localhost"):
            log.warning("no token is set: anyone who reaches %s:%d can queue GPU alert events", host, port)
        await asyncio.Event().wait()  # until ansible-rulebook cancels the source's task
    finally:
        await runner.cleanup()
        log.info("stopped listening on %s:%d", host, port)


if __name__ == "__main__":
    # Run directly (python gpu_alerts.py), the events are printed instead of queued.

    class MockQueue(asyncio.Queue[Any]):
        async def put(self, event: Any) -> None:
            print(json.dumps(event))

    logging.basicConfig(level=logging.INFO)
    asyncio.run(main(MockQueue(), {}))
