# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""AWX's way of running a job template, against the lab (tests/integration/test_awx.py says what it does).

Shared by test_awx.py and the session's ``converged`` fixture (conftest.py), whose idempotence run is the
rollout workflow's stage templates run as AWX runs them.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ansible_runner
import yaml
from jinja2 import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from tests.integration.lab import KUBECONFIG, LAB_INVENTORY, PlaybookRun, config, secrets

REPO = Path(__file__).resolve().parents[2]
AWX_VARS = REPO / "playbooks" / "vars" / "awx.yml"
LAB_CA = config.PKI_DIR / "ca.crt"
# The lab's BMC emulators and NVUE simulation share one password (lab/gpucloud_lab/core/secrets.py).
LAB_PASSWORD = secrets.LAB_PASSWORD
RULEBOOK_TOKEN = secrets.RULEBOOK_TOKEN
THROWAWAY = "awxtmp"


class _AwxLoader(yaml.SafeLoader):
    """Reads playbooks/vars/awx.yml as Ansible does; !unsafe strings are AWX's templates, kept as they are."""


_AwxLoader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def awx_data() -> dict[str, Any]:
    return yaml.load(AWX_VARS.read_text(), Loader=_AwxLoader)["gpucloud_awx"]


AWX = awx_data()
TEMPLATES = {jt["key"]: jt for jt in AWX["job_templates"]}


def lab_inputs() -> dict[str, dict[str, str]]:
    return {"bmc": {"username": "admin", "password": LAB_PASSWORD},
            "nvue": {"username": "cumulus", "password": LAB_PASSWORD, "ca_cert": LAB_CA.read_text()},
            "host_cluster": {"kubeconfig": KUBECONFIG.read_text()},
            "rulebook": {"token": RULEBOOK_TOKEN}}


def secret_values() -> list[str]:
    """What no artifact may contain: the kubeconfig's keys and the lab's passwords as values."""
    config = yaml.safe_load(KUBECONFIG.read_text())
    found = [v for u in config.get("users", []) for k, v in (u.get("user") or {}).items()
             if k in ("client-key-data", "token", "password")]
    return [*found, RULEBOOK_TOKEN]


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


class _VaultTagged(yaml.SafeLoader):
    """YAML with Ansible's !vault values read as their ciphertext."""


_VaultTagged.add_constructor("!vault", lambda loader, node: loader.construct_scalar(node))


def awx_fleet(where: Path, add_throwaway: bool = False) -> Path:
    """The lab inventory as an AWX site keeps it: no host-cluster kubeconfig path, no NVUE account, no BMC accounts
    (each node's BMC address only: the BMC credential gives every node's account)."""
    inv = where / "lab"
    shutil.copytree(LAB_INVENTORY, inv)
    fleet = config.read_fleet(inv / "fleet.yml")
    del fleet["site"]["host_cluster"]["kubeconfig"]
    (inv / "group_vars" / "switches_nvue.yml").write_text("---\n# The NVUE account and CA: the AWX credential's.\n{}\n")
    monitoring = inv / "group_vars" / "gpu_monitoring.yml"
    settings = yaml.load(monitoring.read_text(), Loader=_VaultTagged)
    del settings["gpu_monitoring_rulebook_token"]
    monitoring.write_text("---\n# The rulebook's token: the AWX credential's.\n" + yaml.safe_dump(settings))
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


def changed(run: PlaybookRun) -> dict[str, int]:
    return {h: n for h, n in run.hosts_with("changed").items() if n}


def leaks(artifacts: Path, values: list[str]) -> list[str]:
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


def assert_clean(run: PlaybookRun, artifacts: Path, what: str) -> None:
    assert run.status == "successful" and run.rc == 0, (what, run.failures())
    found = leaks(artifacts, secret_values())
    assert not found, f"{what}: secrets in the runner artifacts (kept in {artifacts}): {found}"
    shutil.rmtree(artifacts, ignore_errors=True)


# The rollout workflow's stage templates, in its order, as playbooks/vars/awx.yml has them (less the plan, the
# check run, the approval and validate, which are not stages of site.yml).
STAGES = [n["template"] for n in next(w for w in awx_data()["workflows"] if w["key"] == "rollout")["nodes"]
          if n.get("template") not in (None, "plan", "site_check", "validate")]


# How long each AWX-style job took (seconds), by template key; test_awx.py prints them.
TIMES: dict[str, float] = {}


def launch_clean(awx: Awx, key: str, **kwargs) -> PlaybookRun:
    """Launch a job template; it must succeed and leave no secret in its artifacts."""
    start = time.monotonic()
    run, artifacts = awx.launch(key, **kwargs)
    TIMES[key] = round(time.monotonic() - start)
    assert_clean(run, artifacts, key)
    return run
