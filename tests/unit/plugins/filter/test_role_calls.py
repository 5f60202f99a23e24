# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every filter the collection's roles and playbooks call (``| gpucloud.baremetal.<name>``, ``map('gpucloud.
baremetal.<name>')``) is served by exactly one FilterModule of plugins/filter/ (a missing name fails only when the
play reaches that task) and documented beside it (plugins/filter/<name>.yml, what ansible-doc reads)."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[4]
FILTER_DIR = ROOT / "plugins" / "filter"
CALL = re.compile(r"""(?:\|\s*|\bmap\(\s*['"])gpucloud\.baremetal\.(\w+)""")


def _calls() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for top in ("roles", "playbooks"):
        for path in sorted((ROOT / top).rglob("*")):
            if not path.is_file():
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            for name in CALL.findall(text):
                found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return found


def _served() -> dict[str, list[str]]:
    served: dict[str, list[str]] = {}
    for path in sorted(FILTER_DIR.glob("*.py")):
        module = importlib.import_module("ansible_collections.gpucloud.baremetal.plugins.filter." + path.stem)
        for name, function in module.FilterModule().filters().items():
            assert callable(function), (path.name, name)
            served.setdefault(name, []).append(path.name)
    return served


CALLS = _calls()
SERVED = _served()


def test_the_scan_finds_the_calls_the_roles_make() -> None:
    assert {"gpu_gate_report", "gpu_gate_check_line", "gpu_quarantine_breaker", "gpu_monitoring_scrape_configs",
            "node_workloads", "owned_config", "kubeconfig_cluster"} <= set(CALLS), sorted(CALLS)
    assert "roles/os_install/tasks/node_check.yml" in CALLS["node_workloads"]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_filter_a_role_calls_is_served_by_one_filter_plugin(name: str) -> None:
    assert len(SERVED.get(name, [])) == 1, "%s (called in %s) is served by %s" % (name, CALLS[name], SERVED.get(name))


@pytest.mark.parametrize("name", sorted(SERVED))
def test_every_filter_is_documented_under_its_own_name(name: str) -> None:
    doc = FILTER_DIR / (name + ".yml")
    assert doc.is_file(), "plugins/filter/%s.yml is missing" % name
    assert yaml.safe_load(doc.read_text(encoding="utf-8"))["DOCUMENTATION"]["name"] == name
