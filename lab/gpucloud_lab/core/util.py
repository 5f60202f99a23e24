# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Small helpers: commands, progress lines, cgroups and lab-owned processes."""
from __future__ import annotations

import contextlib
import functools
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from gpucloud_lab.core import config

_START = time.monotonic()


def say(message: str) -> None:
    """One progress line, with seconds since start."""
    print(f"[{time.monotonic() - _START:6.1f}s] {message}", file=sys.stderr, flush=True)


def run(cmd: Sequence[str], check: bool = True, quiet: bool = True,
        **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run a command; its output is captured unless quiet is False."""
    if quiet:
        kwargs.setdefault("capture_output", True)
    return subprocess.run(list(cmd), check=check, text=True, **kwargs)  # type: ignore[call-overload]


def write_file(path: Path, content: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(content)
    tmp.chmod(mode)
    tmp.replace(path)


def cgroup_dirs(unit: str) -> list[Path]:
    """The unit's cgroups: in the systemd and unified hierarchies always, in the controller hierarchies where it
    has one (a lab host: start_daemon(..., controllers=True))."""
    mine = [root / config.CGROUP_NAME / unit for root in config.CGROUP_ROOTS if root.is_dir()]
    return mine + [d for d in (root / config.CGROUP_NAME / unit for root in controller_roots()) if d.is_dir()]


@functools.lru_cache(maxsize=1)
def controller_roots() -> tuple[Path, ...]:
    """The machine's cgroup v1 controller hierarchies (cpu, memory, ...), each once (``cpu,cpuacct`` may be one
    hierarchy under two names). Read once: the machine's mounts do not change while the lab runs, and every
    daemon_pid() asks."""
    roots: dict[Path, Path] = {}
    for name in config.CGROUP_CONTROLLERS:
        path = Path("/sys/fs/cgroup") / name
        if path.is_dir() and (path / "cgroup.procs").exists():
            roots.setdefault(path.resolve(), path)
    return tuple(roots.values())


def _make_controller_cgroups(unit: str) -> None:
    """The unit's own cgroup in every controller hierarchy, a cpuset one with the machine's CPUs and memory nodes
    (a new cpuset cgroup has none, and no process can join it before they are set)."""
    for root in controller_roots():
        for directory in (root / config.CGROUP_NAME, root / config.CGROUP_NAME / unit):
            directory.mkdir(exist_ok=True)
            if (directory / "cpuset.cpus").exists():
                for key in ("cpuset.cpus", "cpuset.mems"):
                    if not (directory / key).read_text().strip():
                        (directory / key).write_text((directory.parent / key).read_text())


def _cgroup_tree(directory: Path) -> list[Path]:
    """The cgroup and its descendants, deepest first; tolerates cgroups vanishing meanwhile."""
    found = [Path(root) for root, _dirs, _files in os.walk(directory)]
    return sorted(found, key=lambda p: -len(p.parts))


def cgroup_pids(unit: str) -> set[int]:
    pids: set[int] = set()
    for directory in cgroup_dirs(unit):
        for sub in _cgroup_tree(directory):
            try:
                pids.update(int(p) for p in (sub / "cgroup.procs").read_text().split())
            except OSError:  # the cgroup went away while we walked (ENOENT, or ENODEV mid-removal)
                continue
    return pids


def _join_cgroups(unit: str) -> None:
    for directory in cgroup_dirs(unit):
        (directory / "cgroup.procs").write_text(str(os.getpid()))


def start_daemon(unit: str, cmd: Sequence[str], env: dict[str, str] | None = None, controllers: bool = False) -> int:
    """Start a long-running lab process in its own cgroup (v1 systemd + unified), logging to LOG_DIR. With
    ``controllers``, in a cgroup of its own in every controller hierarchy too: a lab host, whose cgroup namespace
    then shows that cgroup as its root, as a server's kernel shows it the whole tree (infra/hosts.py)."""
    for directory in cgroup_dirs(unit):
        directory.mkdir(parents=True, exist_ok=True)
    if controllers:
        _make_controller_cgroups(unit)
    config.LOG_DIR.mkdir(parents=True, exist_ok=True)
    with open(config.LOG_DIR / f"{unit}.log", "ab") as log, open(os.devnull, "rb") as null:
        proc = subprocess.Popen(  # pylint: disable=consider-using-with
            list(cmd), stdin=null, stdout=log, stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})}, preexec_fn=lambda: _join_cgroups(unit),
            start_new_session=True,
        )
    write_file(config.RUN_DIR / f"{unit}.pid", f"{proc.pid}\n")
    return proc.pid


def daemon_pid(unit: str) -> int | None:
    """The pid of a lab daemon if it is still alive."""
    pidfile = config.RUN_DIR / f"{unit}.pid"
    try:
        pid = int(pidfile.read_text())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    if pid not in cgroup_pids(unit):
        return None
    return pid


def _signal_all(pids: set[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def stop_unit(unit: str, timeout: float = 10.0) -> None:
    """SIGTERM the unit's main process, then SIGKILL whatever is left in its cgroup, then remove it."""
    pid = daemon_pid(unit)
    if pid:
        _signal_all({pid}, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while cgroup_pids(unit) and time.monotonic() < deadline:
        time.sleep(0.1)
    for _attempt in range(50):
        left = cgroup_pids(unit)
        if not left:
            break
        _signal_all(left, signal.SIGKILL)
        time.sleep(0.1)
    _remove_cgroups(unit)
    (config.RUN_DIR / f"{unit}.pid").unlink(missing_ok=True)


def _remove_cgroups(unit: str) -> None:
    for directory in cgroup_dirs(unit):
        for sub in _cgroup_tree(directory):
            with contextlib.suppress(FileNotFoundError):
                sub.rmdir()


def remove_lab_cgroup() -> None:
    for root in (*config.CGROUP_ROOTS, *controller_roots()):
        top = root / config.CGROUP_NAME
        if top.is_dir() and not any(p.is_dir() for p in top.iterdir()):
            top.rmdir()


def lab_units() -> list[str]:
    """Every unit that has a cgroup under the lab's, in any hierarchy."""
    units: set[str] = set()
    for root in config.CGROUP_ROOTS:
        top = root / config.CGROUP_NAME
        if top.is_dir():
            units.update(p.name for p in top.iterdir() if p.is_dir())
    return sorted(units)


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_for(predicate, what: str, timeout: float = 60.0, interval: float = 0.2) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)
