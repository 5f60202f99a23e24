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
from pathlib import Path

import yaml
from jinja2 import meta
from jinja2.sandbox import ImmutableSandboxedEnvironment
from packaging.specifiers import SpecifierSet

from tests.integration.awx import (
    AWX,
    STAGES,
    TEMPLATES,
    THROWAWAY,
    TIMES,
    Awx,
    assert_clean,
    awx_fleet,
    changed,
    inject,
    lab_inputs,
    launch_clean,
    leaks,
    secret_values,
    stored_inventory,
)
from tests.integration.conftest import Converged
from tests.integration.lab import Lab, config

REPO = Path(__file__).resolve().parents[2]
PXE_ROOT = config.STATE_DIR / "hosts" / config.PXE_SERVER.name / "root"


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
    assert asked == {"reinstall", "wireguard_rotate", "tenant", "confirm", "node", "reason", "repair"}
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
    # The rollout's stages are site.yml's, in its order, then validate.
    site = yaml.safe_load((REPO / "playbooks" / "site.yml").read_text())
    stages = [Path(play["ansible.builtin.import_playbook"]).stem for play in site]
    assert stages[:4] == ["provision", "fabric", "gpu_hosts", "platform"] and "gpu_gate" in stages, stages
    assert rollout[-len(stages) - 1:] == [*stages, "validate"], rollout


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

HOME_WRITES = {"The tenant's kubeconfig, from its control plane's secret on the host cluster (0600)"}


def test_the_rollout_as_awx_changed_nothing_then_site_check_changes_nothing(awx: Awx, converged: Converged) -> None:
    """The session's idempotence run is the rollout workflow as AWX runs it, each stage template a job, on the lab
    the session converged with a direct site.yml (conftest): no stage job changed anything, and together they
    reached every host the direct run did. Then site in check mode (the workflow's review step) changes nothing.
    The BMCs, the NVUE leaf and the host cluster were reached through the injected credentials only; no secret is
    in any job's artifacts (launch_clean)."""
    assert list(converged.rollout) == STAGES
    assert not converged.changed(), converged.changed()
    reached = {host for run in converged.rollout.values() for host in run.stats.get("ok", {})}
    assert reached == set(converged.first.stats.get("ok", {}))
    run = launch_clean(awx, "site_check")
    assert not changed(run), ("site_check", run.changed_tasks())
    assert set(run.stats.get("ok", {})) == reached
    print("AWX-style job times (s):", json.dumps(TIMES))


def test_plan_and_validate_as_awx_match_direct_runs(awx: Awx, lab: Lab, tmp_path: Path) -> None:
    """plan (into the harness's HOME) renders what a direct run renders; validate (check job type) gives the
    same table, verdict and per-host stats as a direct run."""
    plan = launch_clean(awx, "plan")
    direct_plan = lab.playbook("playbooks/plan.yml", {"plan_output_dir": str(tmp_path / "plan")})
    assert direct_plan.rc == 0 and set(plan.hosts_with("ok")) == set(direct_plan.hosts_with("ok"))
    if not list(awx.home.rglob("*.kubeconfig")):  # run alone: the private_nodes job fills the kept folder first
        launch_clean(awx, "private_nodes")
    run, artifacts = awx.launch("validate")
    # The direct run reads the same tenant kubeconfigs: whatever the caller's own HOME holds (none on a fresh
    # machine, or a stale one from an earlier lab whose tenant port now serves another tenant) must not decide.
    kept = next(awx.home.rglob("*.kubeconfig")).parent
    direct = lab.playbook("playbooks/validate.yml", {"tenants_kubeconfig_dir": str(kept)}, check=True)
    assert not leaks(artifacts, secret_values()), artifacts
    task = "Compare fleet, NVML, the clusters and the KAI quotas"
    ours, theirs = run.results(task)["localhost"], direct.results(task)["localhost"]
    # The lab is shared: compare with the direct run, whatever state other tests left it in.
    assert (run.status, ours["ok"], ours["problems"]) == (direct.status, theirs["ok"], theirs["problems"])
    assert ours["table"] == theirs["table"] and run.stats == direct.stats and not changed(run)
    shutil.rmtree(artifacts, ignore_errors=True)


def test_day2_templates_with_survey_answers(awx: Awx, lab: Lab) -> None:
    """node_add of an installed node and private_nodes with the rotate question answered "false" change nothing;
    a survey answer that names nothing of the fleet is refused before anything runs."""
    for key, answers in (("node_add", {"node": "gpu2"}), ("private_nodes", {"wireguard_rotate": "false"})):
        run = launch_clean(awx, key, answers=answers)
        # run alone, this is the harness's first job: the tenant kubeconfig lands in its HOME
        assert set(run.changed_tasks()) <= HOME_WRITES and len(run.changed_tasks()) == sum(changed(run).values())
    # (node_add's guard is the first role of its first play, on the boot server; tenant_onboard checks on localhost)
    for key, answers, where in (("node_add", {"node": "gpu9"}, config.PXE_SERVER.name),
                                ("tenant_onboard", {"tenant": "nosuch"}, "localhost")):
        run, artifacts = awx.launch(key, answers)
        shutil.rmtree(artifacts, ignore_errors=True)
        assert run.status == "failed" and set(run.failed_hosts) == {where} and not changed(run), (key, run.failures())


def test_node_decommission_refuses_without_confirmation_and_checks_with_it(awx: Awx) -> None:
    """Decommissioning is refused unless the confirmation repeats the node; confirmed, its check job (the
    workflow's first node, here at -vvv) reads gpu4's power through its BMC and would drop its reservation,
    which stays."""
    for answers in ({"node": "gpu4", "confirm": "gpu3"}, {"node": "gpu4", "confirm": "GPU4"}):
        run, artifacts = awx.launch("node_decommission", answers)
        shutil.rmtree(artifacts, ignore_errors=True)
        assert run.status == "failed" and run.failed_tasks() == [
            "Check that the confirmation repeats what will be acted on"]
        assert not changed(run)
    run, artifacts = awx.launch("node_decommission", {"node": "gpu4", "confirm": "gpu4"}, job_type="check",
                                verbosity=3)
    assert_clean(run, artifacts, "node_decommission --check")
    power = run.results("Power the node off")["gpu4"]  # through the BMC, with the credential's account
    assert power["power_state"] and "pxe" in changed(run)
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
    assert not changed(run), run.changed_tasks()


def test_tenant_onboard_and_offboard_of_a_throwaway_tenant(lab: Lab, tmp_path: Path) -> None:
    """A tenant that exists for this test only (in a copy of the lab fleet): onboarded, onboarded again (no
    change), refused offboarding without its confirmation, offboarded, offboarded again (no change)."""
    fleet = awx_fleet(tmp_path, add_throwaway=True)
    (tmp_path / "home").mkdir()
    awx = Awx(stored_inventory(fleet, tmp_path), fleet, lab_inputs(), tmp_path / "home")
    tenant = {"tenant": THROWAWAY}
    try:
        up, artifacts = awx.launch("tenant_onboard", tenant)
        assert_clean(up, artifacts, "tenant_onboard")
        again, artifacts = awx.launch("tenant_onboard", tenant)
        assert_clean(again, artifacts, "tenant_onboard again")
        assert not changed(again), again.changed_tasks()
        refused, artifacts = awx.launch("tenant_offboard", {**tenant, "confirm": "beta"})
        shutil.rmtree(artifacts, ignore_errors=True)
        assert refused.status == "failed" and refused.failed_tasks() == ["Check that the confirmation repeats what will be acted on"]
    finally:
        off, artifacts = awx.launch("tenant_offboard", {**tenant, "confirm": THROWAWAY})
        assert_clean(off, artifacts, "tenant_offboard")
    gone, artifacts = awx.launch("tenant_offboard", {**tenant, "confirm": THROWAWAY})
    assert_clean(gone, artifacts, "tenant_offboard again")
    assert not changed(gone), gone.changed_tasks()


def test_injected_credential_files_are_private(tmp_path: Path) -> None:
    env, extra = inject(AWX["credential_types"]["host_cluster"], {"kubeconfig": "apiVersion: v1\n"}, tmp_path)
    assert env["KUBECONFIG"] == env["K8S_AUTH_KUBECONFIG"] and not extra
    assert stat.S_IMODE(os.stat(env["KUBECONFIG"]).st_mode) == 0o600
    env, extra = inject(AWX["credential_types"]["nvue"], {"username": "u", "password": "p"}, tmp_path)
    assert extra == {"switch_fabric_nvue_username": "u", "switch_fabric_nvue_password": "p",
                     "switch_fabric_nvue_ca_path": ""} and not env
