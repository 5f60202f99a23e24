# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One place that talks to the Kubernetes API, on the ``kubernetes`` Python client.

Requests go through the client's ``ApiClient`` (its authentication, TLS and kubeconfig
handling) by path, without per-kind API classes or discovery: fast for many objects.
Server-side apply (``application/apply-patch+yaml``) with a field manager; server-side dry
run for check mode; retries with backoff on 409 (except apply conflicts), 429 and 5xx.
Every failure is a ``K8sError`` (the collection's ``ProblemsError``) with one line.
"""

from __future__ import annotations

import json
import time
import traceback
from typing import Any
from urllib.parse import quote, urlencode

from .args import FIELD_MANAGER
from .errors import ApiStatus, K8sError

try:
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config
    from kubernetes.config.config_exception import ConfigException
    from urllib3.exceptions import HTTPError

    HAS_KUBERNETES = True
    KUBERNETES_IMPORT_ERROR = None
except ImportError:
    HAS_KUBERNETES = False
    KUBERNETES_IMPORT_ERROR = traceback.format_exc()
    ConfigException = Exception
    HTTPError = OSError

RETRY_STATUS = (409, 429, 500, 502, 503, 504)
RETRY_DELAYS = (0.2, 0.5, 1.0, 2.0, 4.0)


def _connection_problem(what: str, err: Exception) -> K8sError:
    return K8sError(["%s: cannot reach the Kubernetes API (%s); check kubeconfig/host and the network" % (what, err)])


class Client:
    """A Kubernetes API connection. ``params``: the module's AUTH_ARG_SPEC values."""

    def __init__(self, params: dict, field_manager: str = FIELD_MANAGER, sleep=time.sleep):
        if not HAS_KUBERNETES:
            raise K8sError(["the Python library kubernetes is required on the controller: pip install kubernetes"])
        self.field_manager = field_manager
        self.timeout = params.get("request_timeout") or 30.0
        self.sleep = sleep
        self.requests = 0
        self.api = self._api_client(params)

    @staticmethod
    def _api_client(params: dict):
        kubeconfig, context = params.get("kubeconfig"), params.get("context")
        try:
            if params.get("host") and not kubeconfig:
                cfg = k8s_client.Configuration()
                cfg.host = params["host"]
                if params.get("api_key"):
                    cfg.api_key = {"authorization": "Bearer " + params["api_key"]}
            elif isinstance(kubeconfig, dict):
                cfg = k8s_client.Configuration()
                k8s_config.load_kube_config_from_dict(kubeconfig, context=context, client_configuration=cfg)
            else:
                cfg = k8s_client.Configuration()
                try:
                    k8s_config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
                except (ConfigException, OSError):
                    if kubeconfig:
                        raise
                    k8s_config.load_incluster_config(client_configuration=cfg)
        except (ConfigException, OSError, TypeError, ValueError) as err:
            problem = "kubeconfig: cannot load it (%s); give kubeconfig (path or mapping) or host" % err
            raise K8sError([problem]) from None
        for key, attr in (("ca_cert", "ssl_ca_cert"), ("client_cert", "cert_file"), ("client_key", "key_file")):
            if params.get(key):
                setattr(cfg, attr, params[key])
        if params.get("validate_certs") is not None:
            cfg.verify_ssl = params["validate_certs"]
        if params.get("host") and kubeconfig:
            cfg.host = params["host"]
        return k8s_client.ApiClient(cfg)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: dict | None = None,
        content_type: str = "application/json",
        what: str = "",
        ok: tuple[int, ...] = (),
        text: bool = False,
    ) -> Any:
        """One API call with retries; the decoded JSON answer (``text``: the body), None for a status in ``ok``."""
        what = what or "%s %s" % (method, path)
        url = path + ("?" + urlencode(query, doseq=True) if query else "")
        # JSON bodies are serialised by the client; an apply patch goes as a string (JSON is YAML).
        data = json.dumps(body) if body is not None and content_type.endswith("yaml") else body
        retry = RETRY_STATUS if content_type != "application/apply-patch+yaml" else RETRY_STATUS[1:]
        for attempt in range(len(RETRY_DELAYS) + 1):
            self.requests += 1
            try:
                status, headers, raw = self._send(method, url, data, content_type)
            except HTTPError as err:  # connection refused, TLS, timeouts (urllib3)
                if attempt < len(RETRY_DELAYS) and "refused" not in str(err):
                    self.sleep(RETRY_DELAYS[attempt])
                    continue
                raise _connection_problem(what, err) from None
            if 200 <= status < 300:
                if text:
                    return raw.decode(errors="replace")
                return json.loads(raw) if raw else {}
            if status in ok:
                return None
            if status == 0:
                raise _connection_problem(what, Exception(raw.decode(errors="replace")[:300]))
            if status in retry and attempt < len(RETRY_DELAYS):
                self.sleep(_retry_after(headers) or RETRY_DELAYS[attempt])
                continue
            raise ApiStatus(status, _reason(status, raw), _message(raw), what)
        raise K8sError(["%s: gave up after retries" % what])  # pragma: no cover

    def _send(self, method: str, url: str, body: Any, content_type: str) -> tuple[int, dict, bytes]:
        """One HTTP exchange through the client's REST layer (same code path in every client version)."""
        cfg = self.api.configuration
        headers = {"Content-Type": content_type, "Accept": "application/json"}
        headers.update(self.api.default_headers or {})
        for auth in (cfg.auth_settings() or {}).values():
            if auth.get("in") == "header" and auth.get("value"):
                headers[auth["key"]] = auth["value"]
        try:
            resp = self.api.rest_client.request(
                method, cfg.host + url, headers=headers, body=body, _request_timeout=self.timeout
            )
        except k8s_client.ApiException as err:  # older clients raise on every non-2xx answer
            return err.status or 0, dict(err.headers or {}), _bytes(err.body)
        data = resp.data if getattr(resp, "data", None) is not None else resp.read()
        return resp.status, dict(resp.getheaders() or {}), _bytes(data)

    # --- verbs -------------------------------------------------------------------

    def get(self, path: str, what: str = "") -> dict | None:
        return self.request("GET", path, what=what, ok=(404,))

    def list(self, path: str, label_selector: str = "", what: str = "") -> list[dict]:
        query = {"labelSelector": label_selector} if label_selector else None
        return (self.request("GET", path, query=query, what=what) or {}).get("items") or []

    def apply(self, path: str, obj: dict, dry_run: bool = False, force: bool = True, what: str = "") -> dict:
        """Server-side apply of ``obj`` at ``path`` (the object's own URL) with our field manager."""
        query = {"fieldManager": self.field_manager}
        if force:
            query["force"] = "true"
        if dry_run:
            query["dryRun"] = "All"
        return self.request(
            "PATCH", path, body=obj, query=query, content_type="application/apply-patch+yaml", what=what
        ) or {}

    def delete(self, path: str, dry_run: bool = False, what: str = "", propagation: str = "Background") -> bool:
        """Delete; False when it was already gone."""
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation}
        if dry_run:
            body["dryRun"] = ["All"]
        return self.request("DELETE", path, body=body, what=what, ok=(404,)) is not None


def object_path(api_version: str, plural: str, name: str = "", namespace: str = "") -> str:
    base = "/api/v1" if api_version == "v1" else "/apis/" + api_version
    if namespace:
        base += "/namespaces/" + quote(namespace, safe="")
    base += "/" + plural
    return base + ("/" + quote(name, safe="") if name else "")


def _bytes(value: Any) -> bytes:
    if value is None:
        return b""
    return value if isinstance(value, bytes) else str(value).encode()


def _retry_after(headers: dict) -> float | None:
    try:
        return min(float(headers.get("Retry-After")), 10.0)
    except (TypeError, ValueError):
        return None


def _status(raw: bytes) -> dict:
    try:
        answer = json.loads(raw)
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}


def _reason(status: int, raw: bytes) -> str:
    return str(_status(raw).get("reason") or "")


def _message(raw: bytes) -> str:
    return str(_status(raw).get("message") or raw.decode(errors="replace")[:500])
