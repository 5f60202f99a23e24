# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's Helm repository: the stand-in charts of lab/charts/, at the versions the roles pin."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from gpucloud_lab.core import config
from gpucloud_lab.core.components import Row
from gpucloud_lab.core.util import daemon_pid, port_open, run, say, start_daemon, stop_unit, wait_for
from gpucloud_lab.infra import tools

SOURCE = config.LAB_DIR / "charts"
REPO_DIR = config.RUN_DIR / "charts"
UNIT = "chart-repo"
URL = config.CHART_REPO_URL


def chart_dirs() -> list[Path]:
    return sorted(p for p in SOURCE.iterdir() if (p / "Chart.yaml").exists())


def versions(chart: Path) -> list[str]:
    listed = chart / "lab-versions"
    return [v.strip() for v in listed.read_text().splitlines() if v.strip()] if listed.exists() else []


def build_repo() -> None:
    """Package every chart at every listed version and index the result."""
    helm = str(tools.TOOLS_DIR / "helm")
    shutil.rmtree(REPO_DIR, ignore_errors=True)
    REPO_DIR.mkdir(parents=True)
    for chart in chart_dirs():
        for version in versions(chart) or [""]:
            extra = ["--version", version, "--app-version", version] if version else []
            run([helm, "package", str(chart), "--destination", str(REPO_DIR), *extra])
    run([helm, "repo", "index", str(REPO_DIR), "--url", URL])


def up() -> None:
    if daemon_pid(UNIT):
        return
    build_repo()
    start_daemon(UNIT, [sys.executable, "-m", "http.server", "--bind", config.CONTROLLER_IP,
                        "--directory", str(REPO_DIR), str(config.CHART_PORT)])
    wait_for(lambda: port_open(config.CONTROLLER_IP, config.CHART_PORT), "the lab chart repository", timeout=15)


def down() -> None:
    stop_unit(UNIT)
    shutil.rmtree(REPO_DIR, ignore_errors=True)


def state() -> str:
    if not daemon_pid(UNIT):
        return "stopped"
    return "running" if port_open(config.CONTROLLER_IP, config.CHART_PORT) else "starting"


class ChartRepo:
    """The lab component: the air-gapped site's Helm repository, serving the lab's stand-in charts."""

    def up(self) -> None:
        say(f"chart repository: stand-in charts at {URL}")
        up()

    def down(self) -> None:
        down()

    def rows(self) -> list[Row]:
        names = ", ".join(c.name for c in chart_dirs())
        return [Row("chart repo", state(), URL, f"lab stand-ins: {names}")]
