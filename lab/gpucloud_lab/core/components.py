# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The component framework: what a lab component is, the status table, and what `down` leaves.

Each component (up, down, rows) lives beside what it runs, in infra/ or sim/; the CLI
(core/cli.py) holds them in start order.
"""
from __future__ import annotations

import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from gpucloud_lab.core import config
from gpucloud_lab.core.util import lab_units, remove_lab_cgroup, stop_unit


@dataclass(frozen=True)
class Row:
    component: str
    state: str
    address: str
    detail: str = ""


class Component(Protocol):
    def up(self) -> None: ...

    def down(self) -> None: ...

    def rows(self) -> list[Row]: ...


def stop_order(units: Iterable[str]) -> list[str]:
    """API servers before their etcd (an API server whose etcd is gone takes long to stop)."""
    return sorted(units, key=lambda unit: unit.startswith("etcd-"))


def status_table(components: Sequence[Component]) -> str:
    rows = [row for component in components for row in component.rows()]
    header = Row("COMPONENT", "STATE", "ADDRESS", "DETAIL")
    widths = [max(len(getattr(r, f)) for r in [header, *rows]) for f in ("component", "state", "address")]
    lines = []
    for r in [header, *rows]:
        cells = (f"{r.component:<{widths[0]}}", f"{r.state:<{widths[1]}}", f"{r.address:<{widths[2]}}", r.detail)
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def all_running(components: Sequence[Component]) -> bool:
    return all(row.state in ("up", "running", "ready", "on", "off") for c in components for row in c.rows())


def state_paths() -> tuple[Path, ...]:
    """The lab's run-time state: what `down` removes (caches, keys and the CA stay)."""
    return (config.RUN_DIR, config.STATE_DIR / "hosts", config.STATE_DIR / "kube", config.STATE_DIR / "controller",
            config.SWITCH_STATE_DIR, config.STATE_DIR / "provision", config.STATE_DIR / "registry")


def cleanup() -> None:
    """What `down` leaves after the components: nothing but caches, keys and the CA."""
    for unit in stop_order(lab_units()):  # anything still running, e.g. a crashed controller's tenants
        stop_unit(unit)
    remove_lab_cgroup()
    for path in state_paths():
        shutil.rmtree(path, ignore_errors=True)
    Path(config.STATE_DIR).mkdir(parents=True, exist_ok=True)
