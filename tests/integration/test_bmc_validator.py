# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's BMCs against DMTF's Redfish Service Validator (PyPI ``redfish-service-validator``), offline.

The validator walks a service from ``/redfish/v1/`` and checks every payload against DMTF's CSDL schemas; here it
reads them from tests/data/redfish_csdl (``--skipschema``: no download). It runs against gpu1's BMC (a sushy-tools
emulator, HTTP Basic as the collection's client uses it there) and against the ``ami`` vendor front
(lab/gpucloud_lab/sim/bmc_vendor_sim.py, with a Redfish session as the client logs in there). What must hold: no
FAIL in the resources the collection's client reads (``READ``), and every one of them schema-checked. sushy-tools'
own templates fail the validator in places, some of them in those very resources (``KNOWN``): those are tolerated
one by one, by property and message, and listed in a warning and in any failure message; the failures in resources
the client does not read are listed too, never asserted.

TLS: the validator has no CA option (its Redfish client sends ``verify=False``), so ``validate`` first checks the
BMC's certificate against the lab CA itself, then runs the validator, which does not check it again.

For a run outside the lab (no lab fixture), the targets can come from the environment:
``GPUCLOUD_BMC_VALIDATOR_TARGETS="gpu1=https://127.0.0.1:18200,ami=https://127.0.0.1:18201"`` with
``GPUCLOUD_BMC_VALIDATOR_CA`` and ``GPUCLOUD_BMC_VALIDATOR_PASSWORD``; ``python -m tests.integration.test_bmc_validator``
then validates each and exits 1 on an unexpected failure. ``GPUCLOUD_RF_VALIDATOR`` names another
``rf_service_validator`` than the one beside this Python.
"""
from __future__ import annotations

import base64
import json
import os
import re
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.integration.lab import Lab, config, secrets

SCHEMAS = Path(__file__).resolve().parents[1] / "data" / "redfish_csdl"
VALIDATOR = Path(os.environ.get("GPUCLOUD_RF_VALIDATOR") or Path(sys.executable).parent / "rf_service_validator")
USER = "admin"
TIMEOUT = 300

# The resources the collection's client reads (plugins/module_utils/_provision/redfish.py); each must be visited.
SYSTEM = r"/redfish/v1/Systems/[^/]+"
READ = {
    "service root": r"/redfish/v1/",
    "systems": r"/redfish/v1/Systems",
    "system": SYSTEM,
    "Ethernet interfaces": SYSTEM + r"/EthernetInterfaces",
    "an Ethernet interface": SYSTEM + r"/EthernetInterfaces/[^/]+",
}
SESSIONS = {  # only where the service root links a SessionService (the vendor fronts)
    "session service": r"/redfish/v1/SessionService",
    "sessions": r"/redfish/v1/SessionService/Sessions",
    "a session": r"/redfish/v1/SessionService/Sessions/[^/]+",  # the validator's own, as it logs in with one
}
SCHEMA_MISSING = "Unable to locate the schema definition"


@dataclass(frozen=True)
class Known:
    """A failure of sushy-tools' own templates, tolerated where the client reads: where, which property, why."""

    uri: str
    prop: str
    message: str
    why: str

    def matches(self, result: Result) -> bool:
        return (re.fullmatch(self.uri, result.uri) is not None and re.fullmatch(self.prop, result.prop) is not None
                and result.message.startswith(self.message))


KNOWN = (
    Known(r".*", r"@Redfish\.Copyright", "Copyright Annotation Error",
          "sushy-tools' templates keep the copyright annotation of DMTF's mockups"),
    Known(r"/redfish/v1/", r"Links", "Required Property Error: The property 'Links' is mandatory",
          "sushy-tools' service root has no Links (the vendor fronts add Links.Sessions)"),
    Known(SYSTEM, r"(MemorySummary/|ProcessorSummary/)?Status/HealthRollUp",
          "Unknown Property Error: The property 'HealthRollUp'",
          "sushy-tools' system template spells HealthRollup as HealthRollUp"),
    Known(SYSTEM, r"Memory", "Resource Error: Received HTTP 404",
          "the system links Memory, which the fake driver does not serve"),
    Known(SYSTEM, r"Storage", "Resource Error: Received HTTP 500",
          "the system links Storage, which the fake driver cannot answer"),
)


@dataclass(frozen=True)
class Result:
    """One row of the validator's results: a property (``-`` for the resource itself) of a resource."""

    uri: str
    status: str
    rtype: str
    prop: str
    value: str
    result: str  # PASS, WARN, FAIL, SKIP
    message: str

    def __str__(self) -> str:
        value = self.value if len(self.value) <= 60 else self.value[:57] + "..."
        return f"{self.result} {self.uri} [{self.rtype}, HTTP {self.status}] {self.prop} = {value!r}: {self.message}"


@dataclass
class Validation:
    url: str
    results: list[Result]
    report: Path  # the validator's folder: HTML and XLSX reports, its log
    seconds: float

    def uris(self) -> set[str]:
        return {r.uri for r in self.results}


def check_tls(url: str, ca: Path | None, password: str) -> None:
    """The BMC's certificate must verify against ``ca`` (the validator itself never checks it)."""
    if not url.startswith("https://"):
        return
    context = ssl.create_default_context(cafile=str(ca)) if ca else ssl.create_default_context()
    token = base64.b64encode(f"{USER}:{password}".encode()).decode()
    request = urllib.request.Request(url.rstrip("/") + "/redfish/v1/", headers={"Authorization": "Basic " + token})
    try:
        with urllib.request.urlopen(request, context=context, timeout=15):
            pass
    except urllib.error.HTTPError:
        pass  # any HTTP answer came over a verified TLS session


def read_xlsx(path: Path) -> list[Result]:
    """The validator's Excel report, sheet ``Results``: one row per property, its columns found by their header."""
    import openpyxl  # the validator's own dependency (redfish-service-validator requires it)

    book = openpyxl.load_workbook(path, read_only=True)
    rows = book["Results"].iter_rows(values_only=True)
    header = [str(cell) for cell in next(rows)]
    column = {name: header.index(name) for name in
              ("URI", "HTTP Status", "Resource Type", "Property", "Value", "Result", "Message")}
    results = []
    for row in rows:
        if row[column["URI"]] is None:
            continue
        cell = {name: ("" if row[i] is None else str(row[i])) for name, i in column.items()}
        results.append(Result(cell["URI"], cell["HTTP Status"], cell["Resource Type"], cell["Property"],
                              cell["Value"], cell["Result"], cell["Message"]))
    book.close()
    return results


def validate(url: str, password: str, ca: Path | None, workdir: Path, authtype: str = "Basic") -> Validation:
    """Run ``rf_service_validator`` against ``url`` offline (the CSDL of tests/data/redfish_csdl) and read its
    results. The password goes in a config file of the run's own (0600), not on the command line."""
    assert VALIDATOR.exists(), (f"{VALIDATOR} is missing: redfish-service-validator is in tests/requirements.txt "
                                "(make setup), or set GPUCLOUD_RF_VALIDATOR")
    check_tls(url, ca, password)
    workdir.mkdir(parents=True, exist_ok=True)
    logs = workdir / "logs"
    ini = workdir / "config.ini"
    ini.touch(mode=0o600)
    ini.write_text("\n".join([  # configparser reads it: a % is doubled
        "[Authentication]", f"user = {USER}", f"password = {password.replace('%', '%%')}", f"authtype = {authtype}",
        "[Connection]", f"rhost = {url.rstrip('/')}", "timeout = 30",
        "[Paths]", f"logdir = {logs}", f"schema_directory = {SCHEMAS}",
        "[Validation]", "skipschema = true", ""]))
    # No proxy of this machine stands between the validator and a lab address.
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env["PYTHONWARNINGS"] = "ignore:Unverified HTTPS request"
    start = time.monotonic()
    try:
        proc = subprocess.run([str(VALIDATOR), "--config", str(ini)], cwd=workdir, env=env, capture_output=True,
                              text=True, timeout=TIMEOUT, check=False)
    finally:
        ini.unlink()
    seconds = time.monotonic() - start
    reports = sorted(logs.glob("*/RedfishServiceValidatorReport_*.xlsx"))
    # Exit 1 means a FAIL somewhere, or no run at all: only a report says which.
    assert proc.returncode in (0, 1) and len(reports) == 1, (
        f"rf_service_validator against {url} exited {proc.returncode} with {len(reports)} reports:\n"
        f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return Validation(url, read_xlsx(reports[0]), reports[0].parent, seconds)


def grouped(results: list[Result], key: Callable[[Result], str]) -> dict[str, list[str]]:
    """key -> the failing properties (``URI#property``), so that one cause reads as one line."""
    groups: dict[str, list[str]] = {}
    for r in results:
        groups.setdefault(key(r), []).append(r.uri if r.prop == "-" else f"{r.uri}#{r.prop}")
    return groups


def verdict(validation: Validation, sessions: bool) -> tuple[list[str], list[str]]:
    """(problems, notes): problems fail the test; notes list what is tolerated or outside the client's reads."""
    wanted = READ | (SESSIONS if sessions else {})
    patterns = [re.compile(p) for p in wanted.values()]

    def read(uri: str) -> bool:
        return any(p.fullmatch(uri) for p in patterns)

    problems = [f"the validator did not visit the {what} ({pattern})" for what, pattern in wanted.items()
                if not any(re.fullmatch(pattern, uri) for uri in validation.uris())]
    ours = [r for r in validation.results if read(r.uri)]
    known = [r for r in ours if r.result == "FAIL" and any(k.matches(r) for k in KNOWN)]
    problems += [f"unexpected: {r}" for r in ours if r.result == "FAIL" and r not in known]
    problems += [f"not schema-checked (tests/data/redfish_csdl lacks it): {r}" for r in ours
                 if SCHEMA_MISSING in r.message]
    elsewhere = [r for r in validation.results if not read(r.uri) and r.result == "FAIL"]
    notes = [f"known sushy-tools failure, {why}: {', '.join(where)}"
             for why, where in grouped(known, lambda r: next(k.why for k in KNOWN if k.matches(r))).items()]
    notes += [f"elsewhere (not read by the client), {message}: {', '.join(where)}"
              for message, where in grouped(elsewhere, lambda r: r.message).items()]
    counts = {kind: sum(r.result == kind for r in validation.results) for kind in ("PASS", "WARN", "FAIL")}
    notes.append(f"{validation.url}: {len(validation.uris())} resources, {counts}, {validation.seconds:.1f} s; "
                 f"reports in {validation.report}")
    return problems, notes


def judge(validation: Validation, sessions: bool) -> list[str]:
    problems, notes = verdict(validation, sessions)
    assert not problems, "\n".join([*problems, "", "tolerated or outside the client's reads:", *notes])
    return notes


def targets() -> dict[str, tuple[str, Path | None, str]]:
    """name -> (URL, CA, password): gpu1's BMC and the ami front of the lab, or those of the environment."""
    override = os.environ.get("GPUCLOUD_BMC_VALIDATOR_TARGETS")
    if override:
        ca = os.environ.get("GPUCLOUD_BMC_VALIDATOR_CA")
        password = os.environ.get("GPUCLOUD_BMC_VALIDATOR_PASSWORD", "")
        pairs = (item.split("=", 1) for item in override.split(",") if item.strip())
        return {name.strip(): (url.strip(), Path(ca) if ca else None, password) for name, url in pairs}
    ca = config.PKI_DIR / "ca.crt"
    return {"gpu1": ("https://" + config.bmc_address("gpu1"), ca, secrets.LAB_PASSWORD),
            "ami": ("https://" + config.vendor_bmc_address("ami"), ca, secrets.LAB_PASSWORD)}


def run(name: str, workdir: Path) -> list[str]:
    """Validate target ``name``; a vendor front with a session (as the client logs in there), else HTTP Basic."""
    url, ca, password = targets()[name]
    front = name in config.VENDOR_BMC_MODES
    validation = validate(url, password, ca, workdir, "Session" if front else "Basic")
    return judge(validation, sessions=front)


def report(notes: list[str]) -> None:
    print("\n".join(notes))
    tolerated = sum(n.startswith("known") for n in notes)
    if tolerated:
        warnings.warn(f"{tolerated} kinds of known sushy-tools failure tolerated (the test's output lists them); "
                      f"{notes[-1]}", stacklevel=2)


def test_gpu1_bmc_passes_the_redfish_service_validator(lab: Lab, tmp_path: Path) -> None:
    report(run("gpu1", tmp_path))


def test_ami_front_passes_the_redfish_service_validator(lab: Lab, tmp_path: Path) -> None:
    """The front's own answers (SessionService, Sessions, a session, the system with @odata.etag) included."""
    report(run("ami", tmp_path))
    # The validator logged out: the front holds no session of it (a BMC holds few).
    url, ca, password = targets()["ami"]
    context = ssl.create_default_context(cafile=str(ca)) if ca else None
    token = base64.b64encode(f"{USER}:{password}".encode()).decode()
    request = urllib.request.Request(url + "/redfish/v1/SessionService/Sessions",
                                     headers={"Authorization": "Basic " + token})
    with urllib.request.urlopen(request, context=context, timeout=15) as response:
        assert json.load(response)["Members@odata.count"] == 0


def main() -> int:
    if not os.environ.get("GPUCLOUD_BMC_VALIDATOR_TARGETS"):
        print("set GPUCLOUD_BMC_VALIDATOR_TARGETS (and _CA, _PASSWORD): see this module's docstring", file=sys.stderr)
        return 2
    failed = False
    for name in targets():
        workdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"rf-validator-{name}-{os.getpid()}"
        try:
            print("\n".join(run(name, workdir)) + f"\n{name}: PASS\n")
        except AssertionError as exc:
            print(f"{name}: FAIL\n{exc}\n")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
