# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Role gpu_monitoring's Prometheus configuration, held against Prometheus itself.

The scrape jobs go into a real Prometheus (Debian's package, bindep.txt) that scrapes exporters serving what a
hostile or careless exporter sends (a `tenant` label of its own, another node's `Hostname`); the series it stores
must carry the tenant from the fleet. A tenant's own Prometheus (the federation job) with its basic-auth web
configuration must hold that tenant's series alone and refuse a wrong password.
"""
from __future__ import annotations

import base64
import json
import socket
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu import monitoring
from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu.errors import MonitoringError
from tests.support.tools import require

TENANTS = [{"name": "acme", "isolation": "private", "namespace": "tenant-acme"},
           {"name": "beta", "isolation": "shared", "namespace": "tenant-beta"},
           {"name": "beta-2", "isolation": "shared", "namespace": "tenant-beta-2"}]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- the jobs as data -------------------------------------------------------------------------------------------
def test_shared_and_private_nodes_get_their_own_jobs() -> None:
    nodes = [{"name": "gpu2", "ip": "198.51.100.22", "isolation": "shared", "gpu": {"count": 8}},
             {"name": "gpu1", "ip": "198.51.100.21", "isolation": "private", "tenant": "acme", "gpu": {"count": 8}},
             {"name": "cpu1", "ip": "198.51.100.29", "isolation": "shared", "gpu": {"count": 0}},
             {"name": "gpu6", "address": "2001:db8::6", "isolation": "shared"}]
    jobs = {job["job_name"]: job for job in monitoring.scrape_configs(nodes, TENANTS, 9400)}
    assert sorted(jobs) == ["dcgm-private-acme", "dcgm-shared"]
    assert jobs["dcgm-shared"]["static_configs"] == [
        {"targets": ["198.51.100.22:9400"], "labels": {"node": "gpu2"}},
        {"targets": ["[2001:db8::6]:9400"], "labels": {"node": "gpu6"}}]
    stamps = [r for r in jobs["dcgm-shared"]["metric_relabel_configs"] if r.get("target_label") == "tenant"]
    assert [(r["regex"], r["replacement"]) for r in stamps] == [("tenant\\-beta", "beta"), ("tenant\\-beta\\-2", "beta-2")]


@pytest.mark.parametrize(("nodes", "problem"), [
    ([{"name": "gpu1", "ip": "198.51.100.21", "isolation": "private", "tenant": "beta"}],
     "node 'gpu1': private node of 'beta', which is not a private tenant"),
    ([{"name": "gpu1", "ip": "198.51.100.21"}, {"name": "gpu1", "ip": "198.51.100.22"}], "node 'gpu1': given twice"),
    ([{"name": "gpu1", "ip": "bad address!"}], "node 'gpu1': address 'bad address!' is not an IP address"),
    ([{"name": "gpu1", "ip": "198.51.100.21", "isolation": "dedicated"}], "isolation 'dedicated': allowed shared"),
])
def test_bad_input_names_the_node_and_what_is_allowed(nodes: list, problem: str) -> None:
    with pytest.raises(MonitoringError) as err:
        monitoring.scrape_configs(nodes, TENANTS)
    assert problem in str(err.value)


def test_a_tenant_password_hash_stays_while_the_password_does() -> None:
    first = monitoring.bcrypt_hash("a" * 20)
    assert monitoring.bcrypt_hash("a" * 20, first) == first
    assert monitoring.bcrypt_hash("b" * 20, first) != first
    with pytest.raises(MonitoringError, match="at least 16"):
        monitoring.bcrypt_hash("short")


# --- held against a real Prometheus -------------------------------------------------------------------------------
EXPOSITION = {
    # A shared node: GPU 0 held by a pod of beta (the exporter also sends a tenant of its own), GPU 1 idle (but
    # labelled beta by the exporter), GPU 2
    # held by a namespace that is no tenant's.
    "127.0.0.2": '''# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-0",Hostname="gpu2",namespace="tenant-beta",pod="p",container="c",tenant="acme"} 97
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-1",Hostname="gpu2",tenant="beta"} 0
DCGM_FI_DEV_GPU_UTIL{gpu="2",UUID="GPU-2",Hostname="gpu2",namespace="tenant-beta-extra",pod="q",container="c"} 50
''',
    # acme's private node: its root user runs the exporter and claims beta's namespace and another node's name.
    "127.0.0.3": '''# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-A0",Hostname="gpu2",namespace="tenant-beta",tenant="beta"} 88
''',
}


@pytest.fixture(name="exporters")
def fixture_exporters() -> Iterator[int]:
    port = free_port()
    servers = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = EXPOSITION[self.server.server_address[0]].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            return

    for address in EXPOSITION:
        server = ThreadingHTTPServer((address, port), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
    yield port
    for server in servers:
        server.shutdown()


def certificate(tmp: Path) -> tuple[Path, Path]:
    """A self-signed server certificate for 127.0.0.1 and its key (what a site's PKI would deliver)."""
    cert, key = tmp / "tls.crt", tmp / "tls.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=monitoring",
                    "-addext", "subjectAltName=IP:127.0.0.1"], capture_output=True, check=True)
    return cert, key


def start_prometheus(tmp: Path, name: str, config: dict, web: dict | None = None) -> tuple[subprocess.Popen, int]:
    port = free_port()
    folder = tmp / name
    folder.mkdir()
    (folder / "prometheus.yml").write_text(yaml.safe_dump(config))
    check = subprocess.run([require("promtool"), "check", "config", str(folder / "prometheus.yml")],
                           capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stdout + check.stderr
    args = [require("prometheus"), f"--config.file={folder / 'prometheus.yml'}", f"--storage.tsdb.path={folder / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}"]
    if web is not None:
        (folder / "web.yml").write_text(yaml.safe_dump(web))
        check = subprocess.run([require("promtool"), "check", "web-config", str(folder / "web.yml")],
                               capture_output=True, text=True, check=False)
        assert check.returncode == 0, check.stdout + check.stderr
        args.append(f"--web.config.file={folder / 'web.yml'}")
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=(folder / "log").open("w"))
    return proc, port


def query(port: int, expr: str, auth: tuple[str, str] | None = None, tls: ssl.SSLContext | None = None) -> list[dict]:
    scheme = "https" if tls else "http"
    request = urllib.request.Request(f"{scheme}://127.0.0.1:{port}/api/v1/query?query={urllib.request.quote(expr)}")
    if auth:
        request.add_header("Authorization", "Basic " + base64.b64encode(":".join(auth).encode()).decode())
    with urllib.request.urlopen(request, timeout=5, context=tls) as answer:
        return [item["metric"] for item in json.load(answer)["data"]["result"]]


def wait_for_series(port: int, expr: str, count: int, auth: tuple[str, str] | None = None,
                    tls: ssl.SSLContext | None = None) -> list[dict]:
    deadline = time.monotonic() + 90  # a wait, not a timing: the lab-free tier runs niced beside the lab
    found: list[dict] = []
    while time.monotonic() < deadline:
        try:
            found = query(port, expr, auth, tls)
        except (urllib.error.URLError, ConnectionError):
            found = []
        if len(found) >= count:
            return found
        time.sleep(0.3)
    raise AssertionError(f"{expr}: {len(found)} series after 90 s, wanted {count}: {found}")


def test_prometheus_stamps_the_tenant_from_the_fleet_and_a_tenant_sees_only_its_own(
        tmp_path: Path, exporters: int) -> None:
    nodes = [{"name": "gpu2", "ip": "127.0.0.2", "isolation": "shared"},
             {"name": "gpu1", "ip": "127.0.0.3", "isolation": "private", "tenant": "acme"}]
    operator_config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                       "scrape_configs": monitoring.scrape_configs(nodes, TENANTS, exporters)}
    procs = []
    try:
        proc, operator_port = start_prometheus(tmp_path, "operator", operator_config)
        procs.append(proc)
        series = wait_for_series(operator_port, "DCGM_FI_DEV_GPU_UTIL", 4)
        by_uuid = {s["UUID"]: s for s in series}
        # The tenant from the fleet: beta's pod on the shared node; no tenant for an idle GPU or another namespace;
        # acme on its private node whatever its exporter says. The exporter's own tenant label is gone.
        assert {uuid: s.get("tenant") for uuid, s in by_uuid.items()} == {
            "GPU-0": "beta", "GPU-1": None, "GPU-2": None, "GPU-A0": "acme"}
        assert not any("exported_tenant" in s for s in series)
        # Hostname is the fleet's node of the target: the private node cannot pass as gpu2.
        assert by_uuid["GPU-A0"]["Hostname"] == "gpu1" and by_uuid["GPU-0"]["Hostname"] == "gpu2"

        # Each tenant's own Prometheus: federated from the operator's, its series only, behind its password, over
        # HTTPS with the site's certificate (the web configuration role gpu_monitoring writes, tasks/tenants.yml).
        password = "p" * 24
        cert, key = certificate(tmp_path)
        web = {"basic_auth_users": {"beta": monitoring.bcrypt_hash(password)},
               "tls_server_config": {"cert_file": str(cert), "key_file": str(key), "min_version": "TLS12"}}
        proc, beta_port = start_prometheus(tmp_path, "beta", monitoring.tenant_federation(
            "beta", f"127.0.0.1:{operator_port}", "1s"), web)
        procs.append(proc)
        tls = ssl.create_default_context(cafile=str(cert))
        mine = wait_for_series(beta_port, '{__name__="DCGM_FI_DEV_GPU_UTIL"}', 1, ("beta", password), tls)
        time.sleep(2.5)  # more federation rounds: nothing else may arrive
        mine = query(beta_port, '{__name__=~"DCGM_.+"}', ("beta", password), tls)
        assert {(s["__name__"], s["UUID"], s["tenant"]) for s in mine} == {("DCGM_FI_DEV_GPU_UTIL", "GPU-0", "beta")}
        with pytest.raises(urllib.error.HTTPError) as denied:
            query(beta_port, "up", ("beta", "wrong-password-123456"), tls)
        assert denied.value.code == 401
        with pytest.raises(urllib.error.HTTPError) as denied:
            query(beta_port, "up", None, tls)
        assert denied.value.code == 401
        # No password in clear: plain HTTP gets Go's "HTTP request to an HTTPS server" answer, never the API.
        with pytest.raises(urllib.error.HTTPError) as plain:
            query(beta_port, "up", ("beta", password))
        assert plain.value.code == 400
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)


def test_amtool_accepts_the_alertmanager_configuration_the_role_writes(tmp_path: Path) -> None:
    """The role's Alertmanager configuration (vars/main.yml, rendered as the role renders it) passes amtool."""
    config = {"route": {"receiver": "gpucloud-none", "group_by": ["alertname", "Hostname"],
                        "routes": [{"receiver": "gpucloud-healing",
                                    "matchers": ['gpucloud_action=~"drain_reset_gpu|drain_reboot_node"'],
                                    "group_by": ["alertname", "Hostname"], "group_wait": "5s",
                                    "group_interval": "1m", "repeat_interval": "1h"}]},
              "receivers": [{"name": "gpucloud-none"},
                            {"name": "gpucloud-healing", "webhook_configs": [{
                                "url": "http://198.51.100.1:5001/alerts", "send_resolved": True,
                                "http_config": {"authorization": {"type": "Bearer",
                                                                  "credentials_file": str(tmp_path / "token")}}}]}]}
    role_vars = yaml.safe_load((Path(__file__).parents[5] / "roles/gpu_monitoring/vars/main.yml").read_text())
    assert role_vars["gpu_monitoring__healing_route"]["matchers"] == config["route"]["routes"][0]["matchers"]
    (tmp_path / "token").write_text("t")
    (tmp_path / "alertmanager.yml").write_text(yaml.safe_dump(config))
    run = subprocess.run([require("amtool"), "check-config", str(tmp_path / "alertmanager.yml")],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    config["route"]["routes"][0]["matchers"] = ["gpucloud_action=~drain_reset_gpu|("]
    (tmp_path / "alertmanager.yml").write_text(yaml.safe_dump(config))
    run = subprocess.run([require("amtool"), "check-config", str(tmp_path / "alertmanager.yml")],
                         capture_output=True, text=True, check=False)
    assert run.returncode != 0
