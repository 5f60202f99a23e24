# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dashboards of role gpu_monitoring (files/dashboards/): every query parses as Prometheus parses it (promtool,
each query as a recording rule, Grafana's variables as Grafana interpolates them), reads only series the
collection's counter profile collects (or the alerts Prometheus itself keeps), and never uses GPU utilisation,
which dcgm-exporter does not report for MIG instances."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import yaml

from tests.support.tools import require

ROLE = Path(__file__).parents[3] / "roles" / "gpu_monitoring"
DASHBOARDS = sorted((ROLE / "files" / "dashboards").glob("*.json"))
PROFILE = Path(__file__).parents[3] / "roles" / "gpu_operator" / "files" / "dcgm-metrics-gpucloud-v1.csv"
METRIC = re.compile(r"\b(DCGM_[A-Z0-9_]+|ALERTS)\b")


def queries(path: Path) -> list[str]:
    data = json.loads(path.read_text())
    found = [target["expr"] for panel in data["panels"] for target in panel.get("targets", [])]
    found += [v["query"]["query"] for v in data["templating"]["list"] if v["type"] == "query"]
    return found


def collected() -> set[str]:
    return {line.split(",")[0].strip() for line in PROFILE.read_text().splitlines()
            if line.strip() and not line.startswith("#")}


def test_both_dashboards_are_shipped_and_use_a_datasource_variable() -> None:
    assert [p.name for p in DASHBOARDS] == ["gpucloud-fleet-v1.json", "gpucloud-tenant-v1.json"]
    for path in DASHBOARDS:
        data = json.loads(path.read_text())
        assert data["uid"] == path.stem and data["panels"], path
        for panel in data["panels"]:
            assert panel["datasource"]["uid"] == "${datasource}", (path.name, panel["title"])
    tasks = yaml.safe_load((ROLE / "tasks" / "main.yml").read_text())
    shipped = next(t for t in tasks if t["name"].startswith("Put the dashboards"))
    assert shipped["loop"] == [p.name for p in DASHBOARDS]


def test_no_query_uses_gpu_utilisation_and_every_series_is_collected() -> None:
    for path in DASHBOARDS:
        for query in queries(path):
            assert "DCGM_FI_DEV_GPU_UTIL" not in query, (path.name, query)
            for metric in METRIC.findall(query):
                assert metric == "ALERTS" or metric in collected(), (path.name, metric)


def test_every_query_parses_as_prometheus_parses_it(tmp_path: Path) -> None:
    promtool = require("promtool")
    rules = []
    for path in DASHBOARDS:
        for n, query in enumerate(queries(path)):
            match = re.fullmatch(r"label_values\((.+), *([A-Za-z_]+)\)", query)
            expr = match.group(1) if match else query.replace("$node", ".*")
            rules.append({"record": f"dashboard:{path.stem.replace('-', '_')}:{n}", "expr": expr})
    (tmp_path / "rules.yml").write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    run = subprocess.run([promtool, "check", "rules", str(tmp_path / "rules.yml")], capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    (tmp_path / "broken.yml").write_text(yaml.safe_dump({"groups": [{"name": "d", "rules": [
        {"record": "x:y", "expr": "sum by (Hostname (DCGM_FI_DEV_GPU_TEMP)"}]}]}))
    assert subprocess.run([promtool, "check", "rules", str(tmp_path / "broken.yml")], capture_output=True,
                          check=False).returncode != 0
