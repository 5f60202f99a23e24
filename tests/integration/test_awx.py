# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every AWX job template of playbooks/vars/awx.yml, run the way AWX runs it, against the lab.

No AWX server runs here, so this does what AWX does at launch (awx/main/tasks/jobs.py, the credential
injectors of awx/main/models/credential): the inventory is what AWX stored from its inventory source
(`ansible-inventory --list --export` of the fleet, handed to the job as an inventory script), survey answers
are extra vars (strings), credentials are injected from the credential types' injector definitions (Jinja in
a sandbox; files of mode 0600, env vars, extra vars), the job runs through ansible-runner with nobody at the
terminal (no prompt is answered; one would hang the job until its timeout, as in AWX), with --check for job
type check and --diff for diff mode. The fleet is the lab's as an AWX site keeps it: no host-cluster
kubeconfig path, no NVUE account, placeholder BMC accounts - BMC, NVUE and Kubernetes access all go through
the credentials. HOME is the harness's own, empty at first and kept between its jobs: an AWX that keeps the
tenant kubeconfigs (tenants_kubeconfig_dir) on a persistent volume, which idempotent reports and
validate.yml's private-cluster check need (docs/awx.md); without one, each job exports them again into its
throwaway container and reports that as a change.

Destructive templates stay off the shared lab's tenants and nodes: tenant offboarding runs for real on a
throwaway tenant (awxtmp, shared, no nodes) that tenant onboarding brings up first, in a copy of the lab
inventory; node decommissioning is refused without its confirmation and runs in check mode (the boot
target gpu4) - test_provision.py decommissions gpu4 for real.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ansible_runner
import pytest
import yaml
from jinja2 import StrictUndefined, meta
from jinja2.sandbox import ImmutableSandboxedEnvironment
from packaging.specifiers import SpecifierSet

from tests.integration.conftest import Converged
from tests.integration.lab import KUBECONFIG, LAB_INVENTORY, Lab, PlaybookRun, config, secrets

REPO = Path(__file__).resolve().parents[2]
AWX_VARS = REPO / "playbooks" / "vars" / "awx.yml"
PXE_ROOT = config.STATE_DIR / "hosts" / config.PXE_SERVER.name / "root"
LAB_CA = config.PKI_DIR / "ca.crt"
# The lab's BMC emulators and NVUE simulation share one password (lab/gpucloud_lab/core/secrets.py).
LAB_PASSWORD = secrets.LAB_PASSWORD
THROWAWAY = "awxtmp"


class _AwxLoader(yaml.SafeLoader):
    """Reads playbooks/vars/awx.yml as Ansible does; !unsafe strings are AWX's templates, kept as they are."""


_AwxLoader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def awx_data() -> dict[str, Any]:
    return yaml.load(AWX_VARS.read_text(), Loader=_AwxLoader)["gpucloud_awx"]


AWX = awx_data()
TEMPLATES = {jt["key"]: jt for jt in AWX["job_templates"]}


# --- statically: the definitions against the playbooks and roles --------------------------------------------

def _words_in(paths: list[Path], name: str) -> list[Path]:
    word = re.compile(r"(?<![\w.])%s(?!\w)" % re.escape(name))
    return [p for p in paths if word.search(p.read_text(errors="replace"))]


def _readers() -> list[Path]:
    """Where the collection reads variables: its playbooks (not the AWX ones) and its roles."""
    found = [p for p in (REPO / "playbooks").glob("*.yml") if p.name != "awx_setup.yml"]
    return found + [p for p in (REPO / "roles").rglob("*") if p.is_file() and p.suffix in (".yml", ".j2")
                    and "molecule" not in p.parts]


def _kubernetes_readers() -> dict[str, list[Path]]:
    """Where the environment variables the host-cluster credential sets are read, beyond the roles: by the
    kubernetes client (the collection's Kubernetes modules) and kubernetes.core (the roles' helm tasks)."""
    import kubernetes.config

    import ansible_collections.kubernetes.core as kcore

    kcore_dir = Path(kcore.__path__[0])
    return {"KUBECONFIG": list(Path(kubernetes.config.__path__[0]).glob("*.py")),
            "K8S_AUTH_KUBECONFIG": list((kcore_dir / "plugins" / "module_utils").rglob("*.py"))}


def test_every_playbook_has_a_job_template_and_none_prompts() -> None:
    playbooks = {p.relative_to(REPO).as_posix() for p in (REPO / "playbooks").glob("*.yml")}
    templated = {jt["playbook"] for jt in AWX["job_templates"]}
    assert templated <= playbooks, templated - playbooks
    assert playbooks - templated == {"playbooks/awx_setup.yml"}
    for path in playbooks:
        assert "vars_prompt" not in (REPO / path).read_text(), f"{path} prompts: AWX jobs cannot answer"
    for jt in AWX["job_templates"]:
        assert jt["job_type"] in ("run", "check") and set(jt["credentials"]) <= set(AWX["credential_types"])
    assert TEMPLATES["validate"]["job_type"] == "check" and TEMPLATES["site_check"]["job_type"] == "check"


def test_survey_and_injected_variables_are_read_by_a_role_or_playbook() -> None:
    readers = _readers()
    asked = {q["variable"] for jt in AWX["job_templates"] for q in jt.get("survey", [])}
    assert asked == {"reinstall", "wireguard_rotate", "tenant", "confirm", "node"}
    for variable in asked:
        assert _words_in(readers, variable), f"survey variable {variable} is read by no playbook or role"
    specs = list((REPO / "roles").glob("*/meta/argument_specs.yml"))
    env_readers = _kubernetes_readers()
    for key, ctype in AWX["credential_types"].items():
        for variable in ctype["injectors"].get("extra_vars", {}):
            assert _words_in(readers, variable), f"{key}: {variable} is read by no playbook or role"
            assert _words_in(specs, variable), f"{key}: {variable} is no role option (argument_specs)"
        for variable in ctype["injectors"].get("env", {}):
            assert _words_in(env_readers.get(variable, []), f"'{variable}'") or \
                _words_in(env_readers.get(variable, []), f'"{variable}"'), f"{key}: nothing reads {variable}"


def test_credential_types_mark_their_secrets_and_inject_only_their_inputs() -> None:
    for key, ctype in AWX["credential_types"].items():
        fields = {f["id"]: f for f in ctype["inputs"]["fields"]}
        assert set(ctype["inputs"]["required"]) <= set(fields), key
        for name, field in fields.items():
            if name in ("password", "kubeconfig"):
                assert field.get("secret") is True, f"{key}.{name} must be secret"
        names = set(fields) | {"tower", "awx"}
        for section in ("file", "env", "extra_vars"):
            for template in ctype["injectors"].get(section, {}).values():
                used = meta.find_undeclared_variables(ImmutableSandboxedEnvironment().parse(template))
                assert used <= names, f"{key}: {template} uses {used - names}"


def test_surveys_are_typed_and_workflows_approve_before_destructive_steps() -> None:
    for jt in AWX["job_templates"]:
        for q in jt.get("survey", []):
            assert q["type"] in ("text", "multiplechoice", "integer") and isinstance(q["required"], bool)
            if q["type"] == "multiplechoice":
                assert str(q["default"]) in q["choices"]
    confirmed = {k for k, jt in TEMPLATES.items() if any(q["variable"] == "confirm" for q in jt.get("survey", []))}
    # provision's confirm repeats its reinstall answer (a reinstall wipes the nodes)
    assert confirmed == {"tenant_offboard", "node_decommission", "provision"}
    for wf in AWX["workflows"]:
        approved = False
        for node in wf["nodes"]:
            if "approval" in node:
                approved = True
            elif TEMPLATES[node["template"]].get("destructive") and node.get("job_type") != "check":
                assert approved, f"{wf['name']}: {node['id']} runs before any approval"
        if "survey_from" in wf:
            assert wf["survey_from"] in TEMPLATES
    rollout = [n.get("template") for n in AWX["workflows"][0]["nodes"] if "template" in n]
    assert rollout[-7:] == ["provision", "fabric", "gpu_hosts", "platform", "tenants", "private_nodes", "validate"]


# --- the execution environment's build context --------------------------------------------------------------

def test_execution_environment_context_builds_offline(tmp_path: Path) -> None:
    """`ansible-builder create` of meta/execution-environment.yml, as in the repo (the collection tarball of
    `make build` beside it): the context exists and carries requirements.lock and bindep.txt unchanged."""
    tree = tmp_path / "repo"
    shutil.copytree(REPO / "meta", tree / "meta")
    for name in ("requirements.lock", "bindep.txt"):
        shutil.copy(REPO / name, tree / name)
    bin_dir = Path(os.environ.get("VIRTUAL_ENV", REPO / ".venv")) / "bin"
    galaxy = shutil.which("ansible-galaxy") or str(bin_dir / "ansible-galaxy")
    builder = shutil.which("ansible-builder") or str(bin_dir / "ansible-builder")
    subprocess.run([galaxy, "collection", "build", "--output-path", str(tree / "build"), str(REPO)],
                   check=True, capture_output=True, text=True)
    version = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
    wanted = yaml.safe_load((REPO / "meta" / "ee-requirements.yml").read_text())["collections"]
    assert wanted[0] == {"name": f"collections/gpucloud-baremetal-{version}.tar.gz", "type": "file"}
    deps = yaml.safe_load((REPO / "galaxy.yml").read_text())["dependencies"]
    pins = {c["name"]: c["version"] for c in wanted[1:]}
    # Exact versions, each within galaxy.yml's range (tests/unit/test_supply_chain.py checks more).
    assert set(deps) <= set(pins) and all(pin.startswith("==") for pin in pins.values())
    assert all(SpecifierSet(deps[name]).contains(pins[name][2:]) for name in deps)
    run = subprocess.run([builder, "create", "-f", str(tree / "meta" / "execution-environment.yml"),
                          "-c", str(tmp_path / "context"), "--output-filename", "Containerfile"],
                         capture_output=True, text=True, check=False, env={**os.environ, "HOME": str(tmp_path)})
    assert run.returncode == 0, run.stdout + run.stderr
    build = tmp_path / "context" / "_build"
    assert (tmp_path / "context" / "Containerfile").is_file()
    assert (build / "requirements.txt").read_text() == (REPO / "requirements.lock").read_text()
    assert (build / "bindep.txt").read_text() == (REPO / "bindep.txt").read_text()
    assert yaml.safe_load((build / "requirements.yml").read_text())["collections"] == wanted
    assert (build / "collections" / f"gpucloud-baremetal-{version}.tar.gz").is_file()
    containerfile = (tmp_path / "context" / "Containerfile").read_text()
    assert "ansible-galaxy collection install" in containerfile and "helm version" in containerfile
    assert "sha256sum --check" in containerfile
    assert "--require-hashes --build-constraint /tmp/requirements.lock -r /tmp/requirements.lock" in containerfile


# --- the lab: every job template as AWX runs it --------------------------------------------------------------

def _lab_inputs() -> dict[str, dict[str, str]]:
    return {"bmc": {"username": "admin", "password": LAB_PASSWORD},
            "nvue": {"username": "cumulus", "password": LAB_PASSWORD, "ca_cert": LAB_CA.read_text()},
            "host_cluster": {"kubeconfig": KUBECONFIG.read_text()}}


def secrets() -> list[str]:
    """What no artifact may contain: the kubeconfig's keys and the lab's passwords as values."""
    config = yaml.safe_load(KUBECONFIG.read_text())
    found = [v for u in config.get("users", []) for k, v in (u.get("user") or {}).items()
             if k in ("client-key-data", "token", "password")]
    return found


@dataclass
class Awx:
    """AWX's view of the lab: the stored inventory (a script printing the export) and the credentials' inputs."""

    inventory: Path
    fleet_dir: Path
    inputs: dict[str, dict[str, str]]
    home: Path

    def launch(self, key: str, answers: dict[str, str] | None = None, job_type: str | None = None,
               workdir: Path | None = None, verbosity: int = 0) -> tuple[PlaybookRun, Path]:
        jt = TEMPLATES[key]
        with tempfile.TemporaryDirectory(prefix=f"awx-job-{key}-") as scratch:
            private = Path(workdir or scratch) / "job"
            private.mkdir(parents=True)
            extravars: dict[str, Any] = {}
            envvars = {"HOME": str(self.home), "ANSIBLE_HOME": str(private / "ansible-home"),
                       "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "KUBECONFIG": "", "ANSIBLE_FORCE_COLOR": "0"}
            for cred in jt["credentials"]:
                env, extra = inject(AWX["credential_types"][cred], self.inputs[cred], private / "credentials")
                envvars.update(env)
                extravars.update(extra)
            extravars.update(survey_answers(jt, answers or {}))
            check = (job_type or jt["job_type"]) == "check"
            cmdline = " ".join((["--check"] if check else []) + (["--diff"] if jt["diff_mode"] else []))
            result = ansible_runner.run(
                private_data_dir=str(private), project_dir=str(REPO), playbook=str(REPO / jt["playbook"]),
                inventory=str(self.inventory), extravars=extravars, envvars=envvars, cmdline=cmdline or None,
                quiet=True, passwords={}, timeout=1200, verbosity=verbosity or None)
            run = PlaybookRun(result.status, result.rc, result.stats or {}, list(result.events))
            kept = Path(tempfile.mkdtemp(prefix=f"awx-artifacts-{key}-"))
            shutil.copytree(private / "artifacts", kept / "artifacts")
            shutil.rmtree(private / "credentials", ignore_errors=True)
            return run, kept


def inject(ctype: dict, inputs: dict[str, str], where: Path) -> tuple[dict[str, str], dict[str, Any]]:
    """A credential type's injectors rendered as AWX renders them (a sandboxed Jinja, files 0600)."""
    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined)
    values = {f["id"]: inputs.get(f["id"], f.get("default", "")) for f in ctype["inputs"]["fields"]}
    files = {}
    where.mkdir(mode=0o700, exist_ok=True)
    for name, template in ctype["injectors"].get("file", {}).items():
        fd, path = tempfile.mkstemp(dir=where, prefix="cred-")
        with os.fdopen(fd, "w") as fh:
            fh.write(env.from_string(template).render(**values))
        os.chmod(path, 0o600)
        files[name.split(".", 1)[1] if "." in name else name] = path
    filename = files.get("template", files) if set(files) == {"template"} else files
    context = {**values, "tower": {"filename": filename}, "awx": {"filename": filename}}
    render = {section: {k: env.from_string(v).render(**context) for k, v in ctype["injectors"].get(section, {}).items()}
              for section in ("env", "extra_vars")}
    return render["env"], render["extra_vars"]


def survey_answers(jt: dict, answers: dict[str, str]) -> dict[str, str]:
    """What AWX passes for a survey: the answers (strings for text and multiplechoice), defaults where not answered."""
    out = {}
    for q in jt.get("survey", []):
        value = answers.get(q["variable"], q.get("default"))
        if value in (None, ""):
            continue  # an optional question without answer or default sets nothing
        assert isinstance(value, str)
        if q["type"] == "multiplechoice":
            assert value in q["choices"]
        out[q["variable"]] = value
    return out


def _awx_fleet(where: Path, add_throwaway: bool = False) -> Path:
    """The lab inventory as an AWX site keeps it: no host-cluster kubeconfig path, no NVUE account, no BMC accounts
    (each node's BMC address only: the BMC credential gives every node's account)."""
    inv = where / "lab"
    shutil.copytree(LAB_INVENTORY, inv)
    fleet = config.read_fleet(inv / "fleet.yml")
    del fleet["site"]["host_cluster"]["kubeconfig"]
    (inv / "group_vars" / "switches_nvue.yml").write_text("---\n# The NVUE account and CA: the AWX credential's.\n{}\n")
    for node in fleet["nodes"]:
        node["bmc"] = {k: v for k, v in node["bmc"].items() if k not in ("username", "password")}
    if add_throwaway:
        fleet["tenants"].append({"name": THROWAWAY, "isolation": "shared", "vlan": 119, "vni": 10119,
                                 "vrf": {"name": THROWAWAY, "l3vni": 50119}, "subnet": "10.119.0.0/24",
                                 "gpu": {"quota": 0, "limit": 4, "over_quota_weight": 1}})
    config.write_fleet(inv / "fleet.yml", fleet)
    return inv


def stored_inventory(fleet_dir: Path, where: Path) -> Path:
    """What AWX stores from the inventory source and hands to each job: the export, as an inventory script."""
    export = subprocess.run(["ansible-inventory", "-i", str(fleet_dir), "--list", "--export"], cwd=REPO,
                            capture_output=True, text=True, check=True,
                            env={**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg")}).stdout
    data = json.loads(export)
    assert "gpucloud_node" in data["_meta"]["hostvars"]["gpu1"] and "gpucloud_site" in data["all"]["vars"]
    (where / "inventory.json").write_text(json.dumps(data))
    script = where / "hosts"
    script.write_text("#!/bin/sh\n# AWX's stored inventory of this job\n"
                      f"if [ \"$1\" = --host ]; then echo '{{}}'; else cat '{where / 'inventory.json'}'; fi\n")
    script.chmod(0o700)
    return script


@pytest.fixture(scope="module")
def awx(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Awx:
    where = tmp_path_factory.mktemp("awx")
    fleet = _awx_fleet(where)
    (where / "home").mkdir()
    return Awx(stored_inventory(fleet, where), fleet, _lab_inputs(), where / "home")


def _changed(run: PlaybookRun) -> dict[str, int]:
    return {h: n for h, n in run.hosts_with("changed").items() if n}


def _leaks(artifacts: Path, values: list[str]) -> list[str]:
    """Files of the runner artifacts that hold a secret value (a lab password only as a whole word)."""
    found = []
    patterns = [re.compile(re.escape(v)) for v in values]
    # the lab's passwords as the value of a password key: the same word names lab paths, key comments, managers
    patterns.append(re.compile(r"password[\"']?\s*[:=]\s*[\"']?%s\b" % re.escape(LAB_PASSWORD), re.IGNORECASE))
    for path in artifacts.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            found += [f"{path.relative_to(artifacts)}: {p.pattern[:30]}" for p in patterns if p.search(text)]
    return found


def _assert_clean(run: PlaybookRun, artifacts: Path, what: str) -> None:
    assert run.status == "successful" and run.rc == 0, (what, run.failures())
    leaks = _leaks(artifacts, secrets())
    assert not leaks, f"{what}: secrets in the runner artifacts (kept in {artifacts}): {leaks}"
    shutil.rmtree(artifacts, ignore_errors=True)


STAGES = ["provision", "fabric", "gpu_hosts", "platform", "tenants", "private_nodes"]
TIMES: dict[str, float] = {}
HOME_WRITES = {"The tenant's kubeconfig, from its control plane's secret on the host cluster (0600)"}


def _launch_clean(awx: Awx, key: str, **kwargs) -> PlaybookRun:
    start = time.monotonic()
    run, artifacts = awx.launch(key, **kwargs)
    TIMES[key] = round(time.monotonic() - start)
    _assert_clean(run, artifacts, key)
    return run


def test_site_then_every_stage_then_site_check_as_awx(awx: Awx, converged: Converged) -> None:
    """The rollout as AWX runs it, on the lab the session converged with direct runs (conftest): the site job
    changes nothing and gives the same per-host stats as the direct idempotence run of site.yml; then each stage
    template of the rollout workflow changes nothing; then site in check mode (the workflow's review step)
    changes nothing. The BMCs, the NVUE leaf and the host cluster were reached through the injected credentials
    only; no secret is in any job's artifacts."""
    # The direct runs exported the tenants' kubeconfigs into root's ~/.kube/gpucloud/<site>; the job's HOME gets
    # the same folder (what a project volume keeps between AWX jobs), else its first run writes them: a change.
    exported = Path.home() / ".kube" / "gpucloud" / config.fleet()["site"]["name"]
    if exported.is_dir() and not (awx.home / ".kube" / "gpucloud").exists():
        shutil.copytree(exported, awx.home / ".kube" / "gpucloud" / exported.name)
    site = _launch_clean(awx, "site")
    assert not _changed(site), ("site", site.changed_tasks())
    assert site.stats == converged.second.stats
    for key in STAGES:
        run = _launch_clean(awx, key)
        assert not _changed(run), (key, run.changed_tasks())
    run = _launch_clean(awx, "site_check")
    assert not _changed(run), ("site_check", run.changed_tasks())
    print("AWX-style job times (s):", json.dumps(TIMES))


def test_plan_and_validate_as_awx_match_direct_runs(awx: Awx, lab: Lab, tmp_path: Path) -> None:
    """plan (into the harness's HOME) renders what a direct run renders; validate (check job type) gives the
    same table, verdict and per-host stats as a direct run."""
    plan = _launch_clean(awx, "plan")
    direct_plan = lab.playbook("playbooks/plan.yml", {"plan_output_dir": str(tmp_path / "plan")})
    assert direct_plan.rc == 0 and set(plan.hosts_with("ok")) == set(direct_plan.hosts_with("ok"))
    if not list(awx.home.rglob("*.kubeconfig")):  # run alone: the private_nodes job fills the kept folder first
        _launch_clean(awx, "private_nodes")
    run, artifacts = awx.launch("validate")
    # The direct run reads the same tenant kubeconfigs: whatever the caller's own HOME holds (none on a fresh
    # machine, or a stale one from an earlier lab whose tenant port now serves another tenant) must not decide.
    kept = next(awx.home.rglob("*.kubeconfig")).parent
    direct = lab.playbook("playbooks/validate.yml", {"tenants_kubeconfig_dir": str(kept)}, check=True)
    assert not _leaks(artifacts, secrets()), artifacts
    task = "Compare fleet, NVML, the clusters and the KAI quotas"
    ours, theirs = run.results(task)["localhost"], direct.results(task)["localhost"]
    # The lab is shared: compare with the direct run, whatever state other tests left it in.
    assert (run.status, ours["ok"], ours["problems"]) == (direct.status, theirs["ok"], theirs["problems"])
    assert ours["table"] == theirs["table"] and run.stats == direct.stats and not _changed(run)
    shutil.rmtree(artifacts, ignore_errors=True)


def test_day2_templates_with_survey_answers(awx: Awx, lab: Lab) -> None:
    """node_add of an installed node and private_nodes with the rotate question answered "false" change nothing;
    a survey answer that names nothing of the fleet is refused before anything runs."""
    for key, answers in (("node_add", {"node": "gpu2"}), ("private_nodes", {"wireguard_rotate": "false"})):
        run = _launch_clean(awx, key, answers=answers)
        # run alone, this is the harness's first job: the tenant kubeconfig lands in its HOME
        assert set(run.changed_tasks()) <= HOME_WRITES and len(run.changed_tasks()) == sum(_changed(run).values())
    # (node_add's guard is the first role of its first play, on the boot server; tenant_onboard checks on localhost)
    for key, answers, where in (("node_add", {"node": "gpu9"}, config.PXE_SERVER.name),
                                ("tenant_onboard", {"tenant": "nosuch"}, "localhost")):
        run, artifacts = awx.launch(key, answers)
        shutil.rmtree(artifacts, ignore_errors=True)
        assert run.status == "failed" and set(run.failed_hosts) == {where} and not _changed(run), (key, run.failures())


def test_node_decommission_refuses_without_confirmation_and_checks_with_it(awx: Awx) -> None:
    """Decommissioning is refused unless the confirmation repeats the node; confirmed, its check job (the
    workflow's first node, here at -vvv) reads gpu4's power through its BMC and would drop its reservation,
    which stays."""
    for answers in ({"node": "gpu4", "confirm": "gpu3"}, {"node": "gpu4", "confirm": "GPU4"}):
        run, artifacts = awx.launch("node_decommission", answers)
        shutil.rmtree(artifacts, ignore_errors=True)
        assert run.status == "failed" and run.failed_tasks() == [
            "Check that the confirmation repeats what will be acted on"]
        assert not _changed(run)
    run, artifacts = awx.launch("node_decommission", {"node": "gpu4", "confirm": "gpu4"}, job_type="check",
                                verbosity=3)
    _assert_clean(run, artifacts, "node_decommission --check")
    power = run.results("Power the node off")["gpu4"]  # through the BMC, with the credential's account
    assert power["power_state"] and "pxe" in _changed(run)
    assert "gpu4" in (PXE_ROOT / "etc/dnsmasq.d/gpucloud-pxe.conf").read_text()  # still served


def test_install_without_a_bmc_account_stops_before_anything_changes(awx: Awx) -> None:
    """The fleet names no BMC accounts; a provision job whose BMC credential is empty, asked to reinstall gpu4
    (check job type), stops at the role's check, naming the node and both places an account can come from."""
    empty = Awx(awx.inventory, awx.fleet_dir, {**awx.inputs, "bmc": {"username": "", "password": ""}}, awx.home)
    run, artifacts = empty.launch("provision", {"reinstall": "gpu4", "confirm": "gpu4"}, job_type="check")
    shutil.rmtree(artifacts, ignore_errors=True)
    task = "Check that the node has a BMC account, from the fleet or for every node, before anything changes"
    assert run.status == "failed" and run.failed_tasks() == [task] and set(run.failed_hosts) == {"gpu4"}
    msg = run.results(task)["gpu4"]["msg"]
    assert msg.startswith("gpu4: no BMC account") and "os_install_bmc_username" in msg and "bmc.username" in msg
    assert not _changed(run), run.changed_tasks()


def test_tenant_onboard_and_offboard_of_a_throwaway_tenant(lab: Lab, tmp_path: Path) -> None:
    """A tenant that exists for this test only (in a copy of the lab fleet): onboarded, onboarded again (no
    change), refused offboarding without its confirmation, offboarded, offboarded again (no change)."""
    fleet = _awx_fleet(tmp_path, add_throwaway=True)
    (tmp_path / "home").mkdir()
    awx = Awx(stored_inventory(fleet, tmp_path), fleet, _lab_inputs(), tmp_path / "home")
    tenant = {"tenant": THROWAWAY}
    try:
        up, artifacts = awx.launch("tenant_onboard", tenant)
        _assert_clean(up, artifacts, "tenant_onboard")
        again, artifacts = awx.launch("tenant_onboard", tenant)
        _assert_clean(again, artifacts, "tenant_onboard again")
        assert not _changed(again), again.changed_tasks()
        refused, artifacts = awx.launch("tenant_offboard", {**tenant, "confirm": "beta"})
        shutil.rmtree(artifacts, ignore_errors=True)
        assert refused.status == "failed" and refused.failed_tasks() == ["Check that the confirmation repeats what will be acted on"]
    finally:
        off, artifacts = awx.launch("tenant_offboard", {**tenant, "confirm": THROWAWAY})
        _assert_clean(off, artifacts, "tenant_offboard")
    gone, artifacts = awx.launch("tenant_offboard", {**tenant, "confirm": THROWAWAY})
    _assert_clean(gone, artifacts, "tenant_offboard again")
    assert not _changed(gone), gone.changed_tasks()


def test_injected_credential_files_are_private(tmp_path: Path) -> None:
    env, extra = inject(AWX["credential_types"]["host_cluster"], {"kubeconfig": "apiVersion: v1\n"}, tmp_path)
    assert env["KUBECONFIG"] == env["K8S_AUTH_KUBECONFIG"] and not extra
    assert stat.S_IMODE(os.stat(env["KUBECONFIG"]).st_mode) == 0o600
    env, extra = inject(AWX["credential_types"]["nvue"], {"username": "u", "password": "p"}, tmp_path)
    assert extra == {"switch_fabric_nvue_username": "u", "switch_fabric_nvue_password": "p",
                     "switch_fabric_nvue_ca_path": ""} and not env
