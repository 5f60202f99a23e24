# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU monitoring and self-healing against the lab (issue 22, parts 2 and 3).

The monitoring stage of the session's rollout (site.yml) put Debian's Prometheus and Alertmanager on the lab's
monitoring host (cp, inventories/lab/monitoring.yml) with each tenant's own Prometheus; the GPU Operator's DCGM
exporter runs on each GPU node's address (its ClusterPolicy's hostNetwork), played by the lab controller
(lab/gpucloud_lab/sim/dcgm_exporter_sim.py, a SIMULATION: no GPU here) from the simulated GPUs and the pods that
hold them. Real: Prometheus, Alertmanager, ansible-rulebook with the collection's rulebook and event source, the
quarantine playbook, the API server.
"""
from __future__ import annotations

import base64
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.integration.conftest import Converged
from tests.integration.lab import KUBECONFIG, LAB_INVENTORY, Lab, config, kubectl, secrets, wait

REPO = Path(__file__).resolve().parents[2]
LAB_CMD = REPO / "lab" / "gpucloud-lab"
SETTINGS = yaml.safe_load((LAB_INVENTORY / "group_vars" / "gpu_monitoring.yml").read_text().replace("!vault", ""))
PROMETHEUS = "http://" + SETTINGS["gpu_monitoring_prometheus_listen"]
MONITOR_HOST = SETTINGS["gpu_monitoring_prometheus_listen"].rsplit(":", 1)[0]
CREDENTIALS = Path(SETTINGS["gpu_monitoring_credentials_dir"])
RULEBOOK = urllib.parse.urlsplit(SETTINGS["gpu_monitoring_rulebook_url"])
TENANTS = {t["name"]: t for t in config.fleet()["tenants"]}
SHARED_TENANT = next(name for name, t in TENANTS.items() if t["isolation"] == "shared")
PRIVATE = {n["name"]: n["tenant"] for n in config.fleet()["nodes"] if n.get("tenant")}
SHARED_NODES = sorted(h.name for h in config.GPU_NODES if h.name not in PRIVATE)
NODE, OTHER = SHARED_NODES[:2]
RULEBOOK_DIR = Path(os.environ.get("TMPDIR", "/tmp")) / "gpucloud-rulebook"


def query(base: str, expr: str, auth: tuple[str, str] | None = None) -> list[dict]:
    request = urllib.request.Request(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    if auth:
        request.add_header("Authorization", "Basic " + base64.b64encode(":".join(auth).encode()).decode())
    # A tenant's endpoint is checked as a tenant checks it: against the site's CA (the lab's), by the address.
    tls = ssl.create_default_context(cafile=str(config.PKI_DIR / "ca.crt")) if base.startswith("https:") else None
    with urllib.request.urlopen(request, timeout=10, context=tls) as answer:
        return json.load(answer)["data"]["result"]


def tenant_endpoint(tenant: str) -> tuple[str, tuple[str, str]]:
    password = CREDENTIALS / f"{tenant}-prometheus.password"
    assert password.stat().st_mode & 0o077 == 0, f"{password} is readable by others"
    return (f"https://{MONITOR_HOST}:{SETTINGS['gpu_monitoring_tenant_endpoints'][tenant]}",
            (tenant, password.read_text().strip()))


@pytest.fixture(name="gpu_pod")
def fixture_gpu_pod() -> Iterator[str]:
    """A pod of the shared tenant holding two GPUs of the first shared node (bound there, as a scheduler binds)."""
    namespace = TENANTS[SHARED_TENANT].get("namespace") or f"tenant-{SHARED_TENANT}"
    resources = {"nvidia.com/gpu": "2", "cpu": "1", "memory": "1Gi"}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpu-train", "namespace": namespace},
           "spec": {"nodeName": NODE, "terminationGracePeriodSeconds": 1, "containers": [{
               "name": "train", "image": "registry.k8s.io/pause:3.2",
               "resources": {"limits": resources, "requests": resources}}]}}
    # The last test's gpu-train is deleted without waiting: an apply while it still terminates would patch the
    # pod that is going away, and it would be gone a moment later. Wait for it to be gone first.
    kubectl("delete", "pod", "-n", namespace, "gpu-train", "--ignore-not-found", "--wait=true", "--timeout=60s",
            timeout=90)
    kubectl("apply", "-f", "-", input=json.dumps(pod))
    try:
        wait(lambda: kubectl("get", "pod", "-n", namespace, "gpu-train", "-o", "jsonpath={.status.phase}").stdout
             == "Running", "the GPU pod running")
        yield namespace
    finally:
        kubectl("delete", "pod", "-n", namespace, "gpu-train", "--ignore-not-found", "--wait=false")


def test_every_gpu_series_carries_its_tenant_and_each_tenant_sees_only_its_own(
        lab: Lab, converged: Converged, gpu_pod: str, tmp_path: Path) -> None:
    assert converged.first.rc == 0 and not converged.rollout["monitoring"].hosts_with("changed"), \
        converged.rollout["monitoring"].changed_tasks()
    # The operator's Prometheus: every GPU of every node, the tenant from the fleet (the pod's namespace on a shared
    # node, the owner on a private one), none on a GPU no tenant holds; Hostname is the fleet's node.
    want = {(node, PRIVATE.get(node)): 8 for node in (h.name for h in config.GPU_NODES)}
    want[(NODE, None)], want[(NODE, SHARED_TENANT)] = 6, 2

    def counted() -> dict:
        found = query(PROMETHEUS, "count by (Hostname, tenant) (DCGM_FI_DEV_GPU_UTIL)")
        return {(s["metric"]["Hostname"], s["metric"].get("tenant")): int(s["value"][1]) for s in found}

    wait(lambda: counted() == want, f"GPU series by node and tenant {want}", timeout=60)
    # The counter profile's fields are collected (the exporter reads the ConfigMap the role made).
    assert query(PROMETHEUS, f'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{{Hostname="{NODE}"}}'), "the gpucloud-v1 profile is not in use"

    # Each tenant's own Prometheus: its series and nothing else, only with its password.
    for tenant in SETTINGS["gpu_monitoring_tenant_endpoints"]:
        base, auth = tenant_endpoint(tenant)
        expected = {(n, t) for (n, t), count in want.items() if t == tenant and count}
        wait(lambda base=base, auth=auth, expected=expected: {  # type: ignore[misc]
            (s["metric"]["Hostname"], s["metric"].get("tenant"))
            for s in query(base, '{__name__=~"DCGM_.+"}', auth)} == expected,
            f"tenant {tenant}'s endpoint holding {expected} only", timeout=60)
        for wrong in ((tenant, "not-the-password-0123456789"), None):
            with pytest.raises(urllib.error.HTTPError) as denied:
                query(base, "up", wrong)
            assert denied.value.code == 401
        # HTTPS only: the password never crosses the network in clear (plain HTTP gets Go's 400, not the API).
        with pytest.raises(urllib.error.HTTPError) as plain:
            query(base.replace("https:", "http:", 1), "up", auth)
        assert plain.value.code == 400
    # Bad input is refused before anything changes, naming the field and what is allowed.
    for extra, field in (({"gpu_monitoring_tenant_endpoints": {"nobody": 9300}}, "gpu_monitoring_tenant_endpoints"),
                         ({"gpu_monitoring_rulebook_token": ""}, "gpu_monitoring_rulebook_token"),
                         ({"gpu_monitoring_tenant_tls_cert_file": ""}, "gpu_monitoring_tenant_plain_http")):
        refused = lab.playbook("playbooks/monitoring.yml", extra)
        message = " ".join(refused.failures())
        assert refused.rc != 0 and not refused.hosts_with("changed"), refused.changed_tasks()
        assert field in message and "Nothing was changed" in message, message
    # A first --check makes no password on the controller; it shows each endpoint restarting for its new web
    # configuration (the password task itself is no_log: its result is censored in the job events).
    fresh = tmp_path / "credentials"
    fresh.mkdir()
    checked = lab.playbook("playbooks/monitoring.yml", {"gpu_monitoring_credentials_dir": str(fresh)}, check=True)
    assert checked.rc == 0, checked.failures()
    assert list(fresh.iterdir()) == [], list(fresh.iterdir())
    assert "Run each tenant's Prometheus (restarted when its configuration changed)" in checked.changed_tasks(), \
        checked.changed_tasks()
    # A key Prometheus cannot read (root's only) is named on the host, before the endpoints change.
    refused = lab.playbook("playbooks/monitoring.yml", {"gpu_monitoring_tenant_tls_key_file": "/etc/shadow"})
    message = " ".join(refused.failures())
    assert refused.rc != 0 and not refused.hosts_with("changed"), refused.changed_tasks()
    assert "/etc/shadow" in message and "not readable by the prometheus user" in message, message
    other = next(t for t in SETTINGS["gpu_monitoring_tenant_endpoints"] if t != SHARED_TENANT)
    with pytest.raises(urllib.error.HTTPError) as denied:  # one tenant's password opens no other tenant's endpoint
        query(tenant_endpoint(SHARED_TENANT)[0], "up", (other, tenant_endpoint(other)[1][1]))
    assert denied.value.code == 401


def _rulebook() -> subprocess.Popen:
    """The collection's rulebook under ansible-rulebook on the controller (what EDA controller runs), listening
    where the monitoring host's Alertmanager sends (gpu_monitoring_rulebook_url), with the lab's token."""
    cli = Path(sys.executable).with_name("ansible-rulebook")
    collections = next(entry for entry in sys.path
                       if (Path(entry) / "ansible_collections" / "gpucloud" / "baremetal" / "extensions").is_dir())
    folder = RULEBOOK_DIR
    folder.mkdir(mode=0o700, exist_ok=True)
    settings = {"gpu_alerts_host": RULEBOOK.hostname, "gpu_alerts_port": RULEBOOK.port,
                "gpu_alerts_token": secrets.RULEBOOK_TOKEN}
    (folder / "vars.yml").write_text(yaml.safe_dump(settings))
    (folder / "vars.yml").chmod(0o600)
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": collections, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
           "ANSIBLE_VAULT_PASSWORD_FILE": str(secrets.VAULT_PASSWORD_FILE), "KUBECONFIG": str(KUBECONFIG)}
    return subprocess.Popen([str(cli), "-r", "gpucloud.baremetal.gpu_health", "-i", str(LAB_INVENTORY),
                             "--vars", str(folder / "vars.yml")], cwd=folder, env=env,
                            stdout=(folder / "out.log").open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def _healing_chain(node: str) -> str:
    """Where the chain from the fault to the cordon stands, for a failure message: the alerts Prometheus holds for
    the node, Alertmanager's groups of the node (a group an earlier fault left waits for its group_interval) and the
    rulebook's last lines."""
    def fetch(url: str) -> str:
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                return answer.read().decode()
        except (OSError, ValueError) as error:
            return f"({url}: {error})"
    alertmanager = "http://" + SETTINGS["gpu_monitoring_alertmanager_listen"]
    answer = fetch(f"{PROMETHEUS}/api/v1/alerts")
    try:
        alerts: object = [a for a in json.loads(answer)["data"]["alerts"] if a["labels"].get("Hostname") == node]
    except (ValueError, KeyError, TypeError):
        alerts = answer
    groups = fetch(f"{alertmanager}/api/v2/alerts/groups?" + urllib.parse.urlencode({"filter": f'Hostname="{node}"'}))
    # The groups API leaves resolved alerts out: a group held only by an undelivered resolved alert shows in these.
    counters = [line for line in fetch(f"{alertmanager}/metrics").splitlines()
                if line.startswith(("alertmanager_dispatcher_aggregation_groups ",
                                    'alertmanager_notification_requests_failed_total{integration="webhook"}'))]
    log = (RULEBOOK_DIR / "out.log").read_text(errors="replace").splitlines()[-15:]
    return (f"Prometheus alerts of {node}: {json.dumps(alerts)[:1500]}; Alertmanager groups: {groups[:1500]} "
            f"({'; '.join(counters)}); "
            "rulebook's last lines:\n" + "\n".join(log))


def _node(name: str) -> dict:
    return json.loads(kubectl("get", "node", name, "-o", "json").stdout)


LAST = ("gpucloud.baremetal/last-quarantined-at", "gpucloud.baremetal/last-quarantine-reason")


def _fault(node: str, *faults: str) -> None:
    subprocess.run([str(LAB_CMD), "fault", node, *faults], cwd=REPO, check=True, capture_output=True)


def _reset_breaker(*nodes: str) -> None:
    """The operator's manual reset of the circuit breaker: the record of the nodes' last quarantines goes."""
    for node in nodes:
        kubectl("annotate", "node", node, *(f"{key}-" for key in LAST))


def test_a_fatal_xid_gets_its_node_drained_within_60_s_repaired_and_back_through_the_rulebook_then_the_breaker(
        lab: Lab, converged: Converged, gpu_pod: str) -> None:
    """Xid 79 injected into the node's simulated GPUs: the exporter reports it, Prometheus fires GpuFellOffTheBus,
    Alertmanager sends it to the rulebook, which runs gpu_quarantine.yml with repair: cordoned, recorded, the pod
    drained, power-cycled over Redfish (the lab BMC's restart clears the kernel log's Xid), the quick gate passes and
    the node is back. A second node's fault right after stops at the circuit breaker (the repaired node still counts:
    the healthy soak). A fault a restart does not clear (a GPU gone) leaves the node out, marked for replacement."""
    assert converged.first.rc == 0
    proc = _rulebook()
    try:
        wait(lambda: subprocess.run(["ss", "-ltn", f"sport = :{RULEBOOK.port}"], capture_output=True, text=True,
                                    check=False).stdout.count("LISTEN") > 0 or proc.poll() is not None,
             "the rulebook's event source listening", timeout=120)
        assert proc.poll() is None, (RULEBOOK_DIR / "out.log").read_text()
        started = time.monotonic()
        _fault(NODE, "xid=79")
        try:
            wait(lambda: _node(NODE)["spec"].get("unschedulable") is True, f"{NODE} cordoned", timeout=60,
                 interval=0.5)
        except AssertionError as error:
            raise AssertionError(f"{error}; {_healing_chain(NODE)}") from None
        cordoned = time.monotonic() - started
        notes = _node(NODE)["metadata"]["annotations"]
        assert notes["gpucloud.baremetal/quarantined-by"] == "gpu-health", notes
        assert notes["gpucloud.baremetal/quarantine-reason"].startswith("GpuFellOffTheBus: GPU 0 "), notes
        wait(lambda: "gpu-train" not in kubectl("get", "pods", "-n", gpu_pod, "-o", "name").stdout,
             "the GPU pod drained", timeout=60, interval=0.5)
        drained = time.monotonic() - started
        assert drained < 60, f"{drained:.1f} s from the fault to the drained node"
        wait(lambda: not _node(NODE)["spec"].get("unschedulable"), f"{NODE} repaired and back", timeout=180)
        back = time.monotonic() - started
        node = _node(NODE)
        assert node["metadata"]["labels"]["gpucloud.baremetal/gpu-gate"] == "passed", node["metadata"]["labels"]
        notes = node["metadata"]["annotations"]
        assert not [k for k in notes if k.startswith("gpucloud.baremetal/quarantine")], notes
        assert notes[LAST[1]].startswith("GpuFellOffTheBus: GPU 0 "), notes
        print(f"fault -> cordon {cordoned:.1f} s, -> drained {drained:.1f} s, -> power-cycled, gated and back "
              f"{back:.1f} s (scrape and evaluation every {SETTINGS['gpu_monitoring_scrape_interval']}, "
              f"Alertmanager group_wait 5 s, group_interval {SETTINGS['gpu_monitoring_healing_group_interval']})")

        # A fault on the next shared node within the window: the breaker (max(1, 10 %) of the shared nodes per
        # 10 minutes; the repaired node counts until its window has passed) stops the rulebook's run, which says so
        # and leaves that node in service.
        _fault(OTHER, "xid=48")
        wait(lambda: "circuit breaker open" in (RULEBOOK_DIR / "out.log").read_text(),
             "the rulebook's quarantine run stopped by the circuit breaker", timeout=60, interval=0.5)
        assert "NOT quarantined" in (RULEBOOK_DIR / "out.log").read_text()
        assert not _node(OTHER)["spec"].get("unschedulable"), f"the open breaker let {OTHER} be cordoned"
    finally:
        _fault(NODE, "clear")
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    assert secrets.RULEBOOK_TOKEN not in (RULEBOOK_DIR / "out.log").read_text()

    # A GPU gone for good (a restart does not bring it back): the same playbook, as the rulebook runs it (a breaker
    # window of 1 s lets it past), quarantines, power-cycles and gates the node, which fails: it stays out, marked.
    _fault(OTHER, "missing=1")
    request = {"node": OTHER, "reason": "GpuFatalXid: GPU 0 reported Xid 48", "repair": True, "gpu_quarantine_window": 1}
    try:
        check = lab.playbook("playbooks/gpu_quarantine.yml", request, check=True)
        assert check.rc == 0 and check.changed_tasks(), check.failures()
        assert not _node(OTHER)["spec"].get("unschedulable"), "check mode cordoned the node"
        assert not [k for k in _node(OTHER)["metadata"]["annotations"] if "quarantine" in k], "check mode wrote a record"
        replace = lab.playbook("playbooks/gpu_quarantine.yml", request)
        message = " ".join(replace.failures())
        assert replace.rc != 0 and "failed the quick GPU gate after a power cycle" in message, message
        node = _node(OTHER)
        assert node["spec"].get("unschedulable") is True, "a node that failed its repair's gate came back"
        assert node["metadata"]["annotations"]["gpucloud.baremetal/quarantine-verdict"] == "replace"
        assert node["metadata"]["annotations"]["gpucloud.baremetal/quarantined-by"] == "gpu-health"
    finally:
        _fault(OTHER, "clear")
        regate = lab.playbook("playbooks/gpu_gate.yml", {"regate": OTHER, "confirm": OTHER})
        _reset_breaker(NODE, OTHER)
    assert regate.rc == 0 and not _node(OTHER)["spec"].get("unschedulable"), regate.failures()
    assert "gpucloud.baremetal/quarantine-verdict" not in _node(OTHER)["metadata"]["annotations"]
