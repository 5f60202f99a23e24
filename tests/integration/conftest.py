# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Integration tests: start the lab once per session, drive playbooks through ansible-runner, stop it.

Skipped, with the reason, only where the lab cannot run (not root, no systemd-nspawn); in CI
(``CI=true``) that is an error instead (tests/support/ci.py fails every skip there).
Set GPUCLOUD_LAB_KEEP=1 to leave the lab up afterwards; a lab that was already up when the
session started is left up (in CI it is taken down and started fresh instead).

What the lab tests share, so that the slow things happen once:
- ``converged``: ``site.yml`` run once on the fresh lab, then the rollout once more as AWX runs its
  workflow, stage template by stage template (the idempotence run, tests/integration/awx.py); tests
  that only read a converged lab use it and run first, before tests that change the lab.
- the boot chain: when the session holds the QEMU boot test (``@pytest.mark.boot_chain``), the
  boot target is powered on over Redfish as soon as the lab is up, and boots in the background
  while the converged-state tests run; the boot test collects it right after them.
- the secret scan (``@pytest.mark.secret_scan``, tests/integration/test_secrets.py) runs last: it reads
  the artifacts of every playbook run of the session (``Lab.runs``).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.awx import STAGES, TEMPLATES, TIMES, Awx, awx_fleet, lab_inputs, stored_inventory
from tests.integration.lab import VERBOSITY, Lab, PlaybookRun, RunRecord, config, leftovers
from tests.support.ci import IN_CI

REPO = Path(__file__).resolve().parents[2]
LAB_CMD = REPO / "lab" / "gpucloud-lab"
# Run order of the lab tests: converged-state readers, then the boot chain's collection, then the rest, then
# the secret scan (it reads every run of the session).
ORDER_CONVERGED, ORDER_BOOT_CHAIN, ORDER_REST, ORDER_SCAN = 0, 1, 2, 3


def lab_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "the lab needs root (network namespaces, mounts, cgroups): run as root"
    for tool in ("systemd-nspawn", "debootstrap", "ip", "qemu-system-x86_64"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (see bindep.txt)"
    if not Path("/sys/fs/cgroup/unified").is_dir() and not Path("/sys/fs/cgroup/cgroup.procs").exists():
        return "no cgroup hierarchy to launch lab hosts from"
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "lab: needs the embedded lab (root, namespaces); started once per session")
    config.addinivalue_line("markers", "boot_chain: collects the boot target's network boot, started at lab up")
    config.addinivalue_line("markers", "secret_scan: reads every playbook run of the session; runs after all others")


def _order(item: pytest.Item) -> int:
    if item.get_closest_marker("secret_scan"):
        return ORDER_SCAN
    if item.get_closest_marker("boot_chain"):
        return ORDER_BOOT_CHAIN
    return ORDER_CONVERGED if "converged" in item.fixturenames else ORDER_REST


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [item for item in items if "lab" in item.fixturenames]
    for item in ours:
        item.add_marker(pytest.mark.lab)
    # Stable: within each group the tests keep their file order.
    items.sort(key=lambda item: _order(item) if "lab" in item.fixturenames else ORDER_REST)
    reason = lab_unavailable()
    if reason is None or not ours:
        return
    for item in ours:  # an error in CI (tests/support/ci.py), a stated skip elsewhere
        item.add_marker(pytest.mark.skip(reason=f"LAB NOT AVAILABLE: {reason}"))


def _lab(command: str, check: bool = True) -> int:
    return subprocess.run([str(LAB_CMD), command], cwd=REPO, check=check, stdout=sys.stderr).returncode


@dataclass
class BootChain:
    """The boot target's network boot, started at lab up: when, and the playbook run that started it."""

    started: float
    run: PlaybookRun


def _start_boot_chain(lab: Lab) -> BootChain:
    """Power the boot target off, then ``provision.yml -e reinstall=<it>``: a one-time network boot and a
    power cycle over Redfish; the playbook returns once the BMC has powered it on (the lab's boot target
    is not waited for, inventories/lab/group_vars/boot_targets.yml), and the machine boots on its own."""
    target = lab.config.BOOT_TARGET.name
    off = lab.playbook("provision_bmc.yml", {"lab_power": "off", "lab_node": target})
    assert off.rc == 0, off.failures()
    started = time.time()
    run = lab.playbook("playbooks/provision.yml", {"reinstall": target, "confirm": target},
                       limit=f"{lab.config.PXE_SERVER.name},{target}")
    return BootChain(started, run)


@pytest.fixture(scope="session")
def lab(request: pytest.FixtureRequest) -> Iterator[Lab]:
    """The running lab (started here unless it already was)."""
    was_up = _lab("status", check=False) == 0
    if IN_CI:
        # CI starts from a fresh lab: state left by an earlier run (a lab that is up, or half up after a killed
        # run, which `status` does not call running) must not decide any result. (On a fresh machine there is
        # nothing to take down; `up` below fails loudly if something is left that it cannot start over.)
        _lab("down", check=False)
        was_up = False
    _lab("up")
    the_lab = Lab(REPO)
    if any(item.get_closest_marker("boot_chain") for item in request.session.items):
        the_lab.boot_chain = _start_boot_chain(the_lab)
    yield the_lab
    if was_up or os.environ.get("GPUCLOUD_LAB_KEEP"):
        return
    _lab("down")
    left = leftovers()
    assert not left, f"`gpucloud-lab down` left things behind: {left}"


@dataclass
class Converged:
    """The rollout on the fresh lab: site.yml run directly (an operator's first rollout), then the rollout again
    as AWX runs its workflow, each stage template a job of its own (the idempotence run: nothing may change)."""

    first: PlaybookRun
    rollout: dict[str, PlaybookRun]

    def changed(self) -> dict[str, list[str]]:
        """The tasks each stage job of the second rollout changed (none on a converged lab)."""
        return {key: run.changed_tasks() for key, run in self.rollout.items() if run.changed_tasks()}


@pytest.fixture(scope="session")
def awx(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Awx:
    """AWX's view of the lab (tests/integration/awx.py): stored inventory, credentials, a HOME kept between jobs."""
    where = tmp_path_factory.mktemp("awx")
    fleet = awx_fleet(where)
    (where / "home").mkdir()
    return Awx(stored_inventory(fleet, where), fleet, lab_inputs(), where / "home")


@pytest.fixture(scope="session")
def converged(lab: Lab, awx: Awx) -> Converged:
    """The whole rollout converged once per session: site.yml, then each stage template as an AWX job."""
    first = lab.playbook("playbooks/site.yml")
    assert first.rc == 0, first.failures()
    # The direct run exported the tenants' kubeconfigs into root's ~/.kube/gpucloud/<site>; an AWX site keeps them
    # on a persistent volume between jobs (docs/awx.md), so the harness's HOME gets the same folder (else its
    # first job writes them: a change).
    exported = Path.home() / ".kube" / "gpucloud" / config.fleet()["site"]["name"]
    if exported.is_dir() and not (awx.home / ".kube" / "gpucloud").exists():
        shutil.copytree(exported, awx.home / ".kube" / "gpucloud" / exported.name)
    return Converged(first, {key: _rollout_job(lab, awx, key) for key in STAGES})


def _rollout_job(lab: Lab, awx: Awx, key: str) -> PlaybookRun:
    """One stage job of the second rollout, at -vvv as every lab run: it must succeed (that it changed nothing is
    the tests' to say), and its artifacts stay for the session's secret scan (test_secrets.py)."""
    start = time.monotonic()
    run, artifacts = awx.launch(key, verbosity=VERBOSITY)
    TIMES[key] = round(time.monotonic() - start)
    template = TEMPLATES[key]
    lab.history.append(RunRecord(template["playbook"], {}, template["job_type"] == "check", artifacts))
    assert run.status == "successful" and run.rc == 0, (key, run.failures())
    return run


@pytest.fixture
def boot_chain(lab: Lab) -> BootChain:
    """The boot target's network boot started at lab up (tests marked ``boot_chain`` get it)."""
    chain = getattr(lab, "boot_chain", None)
    assert chain is not None, "the boot chain starts at lab up only when a boot_chain test is selected"
    return chain
