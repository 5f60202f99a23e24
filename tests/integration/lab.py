# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the integration tests drive the lab: ansible-runner's Python API, results read from its events,
and the helpers every lab test shares: ``kubectl``, ``on(host)`` and ``wait``.

Addresses, names and paths come from the lab's own config (``lab/gpucloud_lab/core/config.py``, derived
from the lab fleet), re-exported here as ``config``: no test writes an address of its own.
"""
from __future__ import annotations

import atexit
import base64
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ansible_runner

_LAB = str(Path(__file__).resolve().parents[2] / "lab")
if _LAB not in sys.path:
    sys.path.insert(0, _LAB)

from gpucloud_lab.core import config, secrets  # noqa: E402

PLAYBOOKS = Path(__file__).resolve().parent / "playbooks"
KUBECONFIG = config.KUBECONFIG
# Every SSH session of the tests checks the host's key against the lab's known_hosts, as the inventory does.
SSH = ["ssh", "-i", str(config.SSH_KEY), "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
       "-o", f"UserKnownHostsFile={config.KNOWN_HOSTS}", "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=10"]


REPO = Path(__file__).resolve().parents[2]
LAB_INVENTORY = REPO / "inventories" / "lab"


def _plain(value: Any) -> Any:
    """ansible-inventory --list marks strings as {"__ansible_unsafe": value}: the plain values."""
    if isinstance(value, dict):
        if set(value) == {"__ansible_unsafe"}:
            return value["__ansible_unsafe"]
        return {k: _plain(v) for k, v in value.items()}
    return [_plain(v) for v in value] if isinstance(value, list) else value


@functools.lru_cache(maxsize=1)
def hostvars() -> dict[str, dict[str, Any]]:
    """Every host's variables as the collection's inventory plugin derives them from the lab fleet."""
    listed = subprocess.run(["ansible-inventory", "-i", str(LAB_INVENTORY), "--list"], capture_output=True,
                            text=True, check=True, cwd=REPO,
                            env={**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg")}).stdout
    return dict(_plain(json.loads(listed)["_meta"]["hostvars"]))


def kubectl(*args: str, kubeconfig: Path | str = KUBECONFIG, check: bool = True, input: str | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """kubectl against the host cluster (or the given kubeconfig)."""
    return subprocess.run(["kubectl", f"--kubeconfig={kubeconfig}", *args], capture_output=True, text=True,
                          check=check, input=input, timeout=timeout)


def on(host: str, command: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """A shell command on a lab host, over SSH as root (its key checked)."""
    return subprocess.run([*SSH, f"root@{config.host(host).ip}", command], capture_output=True, text=True,
                          check=check, timeout=timeout)


def write_pod_network(host: str, subnet: str) -> None:
    """The node's CNI configuration as a site's network add-on (Calico, Cilium, Flannel) writes it once the node
    joins: a bridge with host-local addresses from ``subnet``. The pod network is the site's, not the collection's
    (which installs the plugins, kubernetes-cni in /opt/cni/bin); a real kubelet's Node turns Ready only with it."""
    network = json.dumps({
        "cniVersion": "0.4.0", "name": "gpucloud-lab-pod-network",
        "plugins": [{"type": "bridge", "bridge": "cni0", "isGateway": True, "ipMasq": False,
                     "ipam": {"type": "host-local", "ranges": [[{"subnet": subnet}]],
                              "routes": [{"dst": "0.0.0.0/0"}]}}],
    })
    on(host, f"mkdir -p /etc/cni/net.d && printf '%s\\n' '{network}' > /etc/cni/net.d/10-pod-network.conflist")


def wait(predicate: Callable[[], Any], what: str, timeout: float = 90, interval: float = 1.0) -> Any:
    """Poll until ``predicate()`` is true; its value, or an assertion error naming what never happened."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f}s waiting for {what}"
        time.sleep(interval)


OK_EVENTS = ("runner_on_ok", "runner_item_on_ok")


@dataclass
class PlaybookRun:
    """What automation sees of a playbook run: status, per-host stats and the events."""

    status: str
    rc: int
    stats: dict[str, dict[str, int]]
    events: list[dict[str, Any]] = field(repr=False)

    def hosts_with(self, stat: str) -> dict[str, int]:
        return dict(self.stats.get(stat, {}))

    @property
    def failed_hosts(self) -> set[str]:
        return set(self.hosts_with("failures")) | set(self.hosts_with("dark"))

    def changed_tasks(self, host: str | None = None) -> list[str]:
        """Names of the tasks that reported a change (on host, if given), in run order."""
        names = []
        for event in self.events:
            data = event.get("event_data", {})
            changed = event.get("event") in OK_EVENTS and data.get("res", {}).get("changed")
            if changed and host in (None, data.get("host")):
                names.append(data.get("task", ""))
        return names

    def failed_tasks(self, host: str | None = None) -> list[str]:
        """Names of the tasks that failed (including ignored failures), in run order."""
        return [e["event_data"].get("task", "") for e in self.events
                if e.get("event") == "runner_on_failed" and host in (None, e["event_data"].get("host"))]

    def failures(self) -> list[str]:
        """'host: task: message' for every failure (each failed item of a loop too) and unreachable host."""
        return [f"{e['event_data'].get('host')}: {e['event_data'].get('task')}: "
                f"{str(e['event_data'].get('res', {}).get('msg', ''))[:500]}"
                for e in self.events
                if e.get("event") in ("runner_on_failed", "runner_item_on_failed", "runner_on_unreachable")]

    def results(self, task: str) -> dict[str, dict[str, Any]]:
        """Host -> result of the named task (last one wins)."""
        found = {}
        for event in self.events:
            data = event.get("event_data", {})
            if data.get("task") == task and event.get("event", "").startswith("runner_on_"):
                found[data.get("host", "")] = data.get("res", {})
        return found


# Every lab run is kept, at -vvv, for the secret scan (test_secrets.py): ansible-runner's private data
# directory of each run (artifacts: job events, stdout, the command) under Lab.runs, one folder per run.
VERBOSITY = 3


@dataclass(frozen=True)
class RunRecord:
    """One playbook run of the session: what ran, how, and where its artifacts are."""

    playbook: str
    extravars: dict[str, Any]
    check: bool
    folder: Path


@dataclass
class Lab:
    repo: Path
    config: Any = field(default=config, repr=False)
    boot_chain: Any = field(default=None, repr=False)  # conftest.BootChain, when started at lab up
    runs: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="gpucloud-lab-runs-")), repr=False)
    history: list[RunRecord] = field(default_factory=list, repr=False)
    watch: Any = field(default=None, repr=False)  # SecretWatch, from the first run on

    @property
    def inventory(self) -> Path:
        return self.repo / "inventories" / "lab"

    def playbook(self, playbook: str | Path, extravars: dict[str, Any] | None = None, limit: str | None = None,
                 check: bool = False, inventory: Path | None = None, verbosity: int = VERBOSITY,
                 artifacts: Path | None = None) -> PlaybookRun:
        """Run a playbook against the lab inventory the way automation does (ansible-runner), with the lab's
        vault password file (the inventory's passwords are vault-encrypted).

        Its private data directory (events, stdout) is kept for the session's secret scan: in ``artifacts``
        where given, else in a folder of its own under ``runs``.
        """
        path = Path(playbook)
        if not path.is_absolute():
            path = PLAYBOOKS / path if (PLAYBOOKS / path).exists() else self.repo / path
        private = Path(artifacts or self.runs / f"{len(self.history):03d}-{path.stem}")
        private.mkdir(parents=True, exist_ok=True)
        self.history.append(RunRecord(str(path.relative_to(self.repo)) if path.is_relative_to(self.repo) else str(path),
                                      dict(extravars or {}), check, private))
        if self.watch is None:
            self.watch = SecretWatch(Path(tempfile.mkdtemp(prefix="gpucloud-lab-watch-")))
        self.watch.ensure()
        result = ansible_runner.run(
            private_data_dir=str(private), project_dir=str(self.repo), playbook=str(path),
            inventory=str(inventory or self.inventory), extravars=extravars or {}, limit=limit,
            cmdline="--check --diff" if check else None, quiet=True, verbosity=verbosity or None,
            envvars={"ANSIBLE_CONFIG": str(self.repo / "ansible.cfg"), "KUBECONFIG": str(KUBECONFIG),
                     "ANSIBLE_HOME": str(private / "ansible-home"),
                     "ANSIBLE_VAULT_PASSWORD_FILE": str(secrets.VAULT_PASSWORD_FILE)},
        )
        return PlaybookRun(result.status, result.rc, result.stats or {}, list(result.events))

    def ran(self, playbook: str) -> bool:
        """Whether this session ran ``playbook`` (e.g. ``playbooks/plan.yml``) against the lab."""
        return any(record.playbook == playbook for record in self.history)


class SecretWatch:
    """The secrets the clusters hold while the lab tests run, as they come and go: every Secret of the host
    cluster (the tenants' kubeconfigs ``vc-<tenant>``, bootstrap tokens) and the bootstrap tokens of each tenant
    cluster, through ``kubectl get --watch`` (a join's token lives for seconds). Kept apart from the runs."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        # A copy of the host kubeconfig: no watcher names a lab path (leftovers() looks for those after `down`).
        self.host = folder / "host.kubeconfig"
        shutil.copyfile(KUBECONFIG, self.host)
        self.host.chmod(0o600)
        atexit.register(self.stop)

    def _start(self, key: str, kubeconfig: Path, *selector: str) -> None:
        proc = self.procs.get(key)
        if proc is not None and proc.poll() is None:
            return
        out = open(self.folder / f"{len(list(self.folder.glob('*.json')))}-{key}.json", "wb")  # noqa: SIM115
        self.procs[key] = subprocess.Popen(
            ["kubectl", f"--kubeconfig={kubeconfig}", "get", "secrets", "--all-namespaces", "--watch", "-o", "json",
             *selector], stdout=out, stderr=subprocess.DEVNULL)
        out.close()

    def ensure(self) -> None:
        """Watch the host cluster, and every tenant cluster whose kubeconfig it holds now."""
        self._start("host", self.host)
        for name, kubeconfig in tenant_kubeconfigs().items():
            path = self.folder / f"{name}.kubeconfig"
            if not path.exists() or path.read_text() != kubeconfig:
                path.write_text(kubeconfig)
                path.chmod(0o600)
                self.procs.pop(name, None)
            self._start(name, path, "--field-selector=type=bootstrap.kubernetes.io/token")

    def secrets(self) -> list[dict[str, Any]]:
        """Every Secret object seen so far."""
        found = []
        decoder = json.JSONDecoder()
        for dump in sorted(self.folder.glob("*.json")):
            text, pos = dump.read_text(errors="replace"), 0
            while True:
                while pos < len(text) and text[pos].isspace():
                    pos += 1
                try:
                    obj, pos = decoder.raw_decode(text, pos)
                except ValueError:
                    break
                found.append(obj)
        return found

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=10)
        self.procs.clear()


def tenant_kubeconfigs() -> dict[str, str]:
    """The tenant clusters' admin kubeconfigs the host cluster holds now (Secret ``vc-<tenant>``, key ``config``)."""
    listed = kubectl("get", "secrets", "--all-namespaces", "-o", "json", check=False)
    if listed.returncode != 0:
        return {}
    found = {}
    for item in json.loads(listed.stdout).get("items", []):
        name, data = item["metadata"]["name"], item.get("data") or {}
        if name.startswith("vc-") and not name.startswith("vc-config-") and "config" in data:
            found[f"{item['metadata']['namespace']}-{name}"] = base64.b64decode(data["config"]).decode()
    return found


def leftovers() -> list[str]:
    """Anything of the lab's still present after `down`: namespaces, mounts, cgroups, links, processes."""
    found = [f"netns {n}" for n in _lines(["ip", "netns", "list"]) if n.startswith("gcl-")]
    found += [f"mount {m}" for m in _lines(["cat", "/proc/mounts"]) if "gpucloud-lab" in m or " gcl-" in m]
    found += [f"link {li}" for li in _lines(["ip", "-o", "link", "show"]) if ": gcl" in li]
    hierarchies = ("systemd", "unified", *config.CGROUP_CONTROLLERS)  # lab hosts have cgroups in the controllers'
    for root in (Path("/sys/fs/cgroup") / name for name in hierarchies):
        if (root / "gpucloud-lab").exists():
            found.append(f"cgroup {root / 'gpucloud-lab'}")
    found += [f"process {pid} {cmd}" for pid, cmd in _lab_processes()]
    return found


LAB_MARKS = ("/run/netns/gcl-", "netns exec gcl-", "/var/lib/gpucloud-lab", "/run/gpucloud-lab")


def _lab_processes() -> list[tuple[int, str]]:
    """Live (not zombie) processes whose command line points into the lab."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(mark in cmd for mark in LAB_MARKS):
            found.append((int(proc.name), cmd.strip()))
    return found


def _lines(cmd: list[str]) -> list[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.splitlines()
