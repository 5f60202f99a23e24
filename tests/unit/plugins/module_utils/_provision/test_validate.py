# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The seed validators: debconf's line syntax and the answers an unattended debian-installer needs, pykickstart
with the grammar of the profile's RHEL version, cloud-init's own schema run by cloud-init's interpreter (found
from its shebang, a clear error when it is missing or broken), which seed goes to which validator, seeds of one
shape validated once with the count of the others, and the summary's cap."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import validate
from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision.errors import ValidatorMissing
from tests.support.tools import require

PRESEED = """\
# Managed by gpucloud.baremetal (role pxe_server): gpu4

d-i netcfg/get_hostname string gpu4
d-i mirror/http/hostname string deb.debian.org
d-i mirror/http/directory string /debian
d-i mirror/http/proxy string
d-i passwd/username string ops
d-i partman-auto/method string lvm
d-i partman/confirm boolean true
d-i grub-installer/bootdev string default
tasksel tasksel/first multiselect standard, ssh-server
d-i finish-install/reboot_in_progress note
"""
KICKSTART = "text\nlang en_US.UTF-8\nkeyboard us\ntimezone UTC\nrootpw --lock\nreboot\n"
CLOUD = "#cloud-config\nautoinstall:\n  version: 1\n  user-data:\n    hostname: gpu2\n"


def test_a_complete_preseed_passes() -> None:
    assert validate.preseed({"hosts/gpu4/preseed.cfg": PRESEED}) == []


@pytest.mark.parametrize(("line", "problem"), [
    ("d-i netcfg/get_domain", "p:13: not 'owner question type value'"),
    ("d-i netcfg/choose_interface select", "p:13: netcfg/choose_interface: a select needs a value"),
    ("d-i localechooser/supported-locales multiselect",
     "p:13: localechooser/supported-locales: a multiselect needs a value"),
    ("d-i passwd/username string root", "p:13: passwd/username is answered twice"),
    ("d-i netcfg/disable_autoconfig boolean 1", "p:13: netcfg/disable_autoconfig: a boolean is true or false, got '1'"),
    ("d-i time/zone strng UTC", "p:13: time/zone: unknown type 'strng'; allowed: string, boolean, select, multiselect, "
                                "password, note, text, title, error, seen"),
])
def test_a_preseed_line_an_installer_would_misread_is_named_by_file_and_line(line: str, problem: str) -> None:
    assert validate.preseed({"p": PRESEED + line + "\n"}) == [problem]


def test_a_line_continued_with_a_backslash_is_read_as_one_as_the_installer_reads_it() -> None:
    """Installation guide B.3: a line ending in a backslash continues on the next, leading and trailing whitespace
    condensed to one space; a problem is named by the line it starts on."""
    continued = "d-i partman-auto/expert_recipe \\\n    string boot-root :: \\\n      500 10000 1000000000 ext4 .\n"
    assert validate.preseed({"p": PRESEED + continued}) == []
    assert validate.preseed({"p": PRESEED + "d-i time/zone \\\n   strng UTC\n"}) == [
        "p:13: time/zone: unknown type 'strng'; allowed: string, boolean, select, multiselect, password, note, text,"
        " title, error, seen"]
    # a line that ends the file with a backslash is still read (as the installer reads what it has)
    assert validate.preseed({"p": PRESEED + "d-i netcfg/get_domain \\\n"}) == [
        "p:13: not 'owner question type value'"]


@pytest.mark.parametrize("text", [
    "d-i time/zone \\\n   string UTC\n",
    "d-i partman-auto/expert_recipe \\\n    string boot-root :: \\\n      500 ext4 .\n",
    "d-i time/zone\n",
    "d-i time/zone \\\n\n",
])
def test_the_line_format_is_read_as_debconf_set_selections_reads_it(text: str, tmp_path: Path) -> None:
    """Held against debconf's own parser (``debconf-set-selections -c``, what the installer's format is): a text it
    refuses has a format problem here, and one it takes has none."""
    tool = require("debconf-set-selections")
    path = tmp_path / "p.cfg"
    path.write_text("#_preseed_V1\n" + text)
    theirs = subprocess.run([tool, "-c", str(path)], capture_output=True, text=True, check=False)
    ours = [p for p in validate.preseed({"p": text}) if "not 'owner question type value'" in p]
    assert (theirs.returncode == 0) == (ours == []), (theirs.stdout + theirs.stderr, ours)


def test_every_answer_an_unattended_install_needs_is_named_when_missing() -> None:
    text = "\n".join(line for line in PRESEED.splitlines() if "partman" not in line and "grub" not in line)
    assert validate.preseed({"p": text}) == [
        "p: %s is not answered; an unattended install would stop and ask" % question
        for question in ("partman-auto/method", "partman/confirm", "grub-installer/bootdev")]


def test_a_kickstart_is_parsed_with_the_grammar_of_the_profile_s_rhel_version() -> None:
    pytest.importorskip("pykickstart", reason="pykickstart is in tests/requirements.txt")
    text = KICKSTART + "timesource --ntp-server=ntp.example\n"  # new in RHEL 9's kickstart syntax
    assert validate.kickstart({"ks9": (text, "9.4"), "ks8": (KICKSTART, "8.10")}) == []
    assert validate.kickstart({"hosts/gpu1/ks.cfg": (text, "8.10")}) == [
        "hosts/gpu1/ks.cfg: The following problem occurred on line 7 of the kickstart file: Unknown command: "
        "timesource"]
    # A version without a RHEL major (or one pykickstart does not know) gets the newest grammar.
    assert validate.kickstart({"k": (text, "stream"), "l": (text, "99")}) == []


def test_without_pykickstart_a_kickstart_is_never_passed_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validate, "HAS_PYKICKSTART", False)
    assert validate.kickstart({}) == []
    with pytest.raises(ValidatorMissing, match=r"pykickstart is not installed on the controller; it validates "
                                               r"kickstart seeds \(pip install pykickstart\)"):
        validate.kickstart({"hosts/gpu1/ks.cfg": (KICKSTART, "9.4")})


def test_cloud_init_s_schema_reads_the_document_and_autoinstall_s_user_data() -> None:
    require("cloud-init")
    problems = validate.cloud_config({
        "good": CLOUD,
        "top": "#cloud-config\npackage_upgrade: sometimes\n",
        "nested": CLOUD.replace("hostname: gpu2", "package_upgrade: sometimes"),
        "v2": "#cloud-config\nautoinstall:\n  version: 2\n",
        "list": "#cloud-config\n- hostname\n",
        "header": "autoinstall:\n  version: 1\n",
        "yaml": "#cloud-config\nhostname: [gpu2\n",
        # user-data that is no mapping was passed unchecked (the installed system's cloud-init would refuse it)
        "scalar": "#cloud-config\nautoinstall:\n  version: 1\n  user-data: hostname gpu2\n",
    })
    assert problems[:6] == [
        "header: does not start with #cloud-config",
        "list: is not a mapping",
        "nested: autoinstall.user-data.package_upgrade: 'sometimes' is not of type 'boolean'",
        "scalar: autoinstall.user-data: must be a mapping (cloud-config for the installed system)",
        "top: package_upgrade: 'sometimes' is not of type 'boolean'",
        "v2: autoinstall.version: must be 1"]
    assert len(problems) == 7 and problems[6].startswith("yaml: not YAML: ")


def fake_cloud_init(folder: Path, shebang: str) -> None:
    path = folder / "cloud-init"
    path.write_text(shebang + "\nraise SystemExit(1)\n")
    path.chmod(0o755)


def test_cloud_init_s_interpreter_is_read_from_its_shebang(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_cloud_init(tmp_path, "#!/opt/cloud-init/bin/python3.12 -I")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert validate.cloud_init_interpreter() == "/opt/cloud-init/bin/python3.12"


def test_an_env_shebang_gives_the_interpreter_env_would_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``#!/usr/bin/env python3`` (a pip-installed cloud-init): the python3 on PATH, not /usr/bin/env."""
    python = tmp_path / "bin" / "python3"
    python.parent.mkdir()
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    fake_cloud_init(tmp_path, "#!/usr/bin/env -S python3 -I")
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + str(python.parent))
    assert validate.cloud_init_interpreter() == str(python)


def test_without_cloud_init_user_data_is_never_passed_unchecked(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert validate.cloud_config({}) == []  # nothing to validate: cloud-init is not needed
    with pytest.raises(ValidatorMissing, match=r"cloud-init is not installed on the controller; it validates "
                                               r"autoinstall user-data \(apt-get install cloud-init"):
        validate.cloud_config({"hosts/gpu2/user-data": CLOUD})


def test_a_validator_that_fails_to_run_fails_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    false = require("false")
    fake_cloud_init(tmp_path, "#!" + false)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    with pytest.raises(ValidatorMissing, match="cloud-init's schema validator failed to run"):
        validate.cloud_config({"hosts/gpu2/user-data": CLOUD})


def test_each_seed_goes_to_its_family_s_validator_and_meta_data_to_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pykickstart", reason="pykickstart is in tests/requirements.txt")
    monkeypatch.setenv("PATH", str(tmp_path))  # no cloud-init: no user-data may be among these
    files = {"hosts/a/preseed.cfg": "d-i x/y strin z\n", "hosts/b/ks.cfg": "network --bootproto=pigeon\n",
             "hosts/c/meta-data": "not: [yaml", "hosts/d/meta-data": "instance-id: d\n"}
    families = {"hosts/a/preseed.cfg": ("debian", "12"), "hosts/b/ks.cfg": ("rhel", "9.4"),
                "hosts/c/meta-data": ("ubuntu", "24.04"), "hosts/d/meta-data": ("image", "12")}
    problems = validate.seeds(files, families)
    assert {p.split(":", 1)[0] for p in problems} == {"hosts/a/preseed.cfg", "hosts/b/ks.cfg"}
    assert "hosts/a/preseed.cfg:1: x/y: unknown type 'strin'" in problems[1]
    assert problems[0].startswith("hosts/b/ks.cfg: ") and "pigeon" in problems[0]


def node_preseed(name: str, ip: str, extra: str = "") -> str:
    return PRESEED.replace("gpu4", name) + "d-i netcfg/get_ipaddress string %s\nd-i x/y boolean yes\n%s" % (ip, extra)


def test_seeds_of_one_shape_are_validated_once_and_the_problem_says_how_many_share_it() -> None:
    files = {"hosts/gpu4/preseed.cfg": node_preseed("gpu4", "198.51.100.24"),
             "hosts/gpu5/preseed.cfg": node_preseed("gpu5", "198.51.100.25"),
             "hosts/gpu6/preseed.cfg": node_preseed("gpu6", "198.51.100.26")}
    families = dict.fromkeys(files, ("debian", "12"))
    values = {"hosts/gpu%d/preseed.cfg" % i: ("198.51.100.2%d" % i, "gpu%d" % i) for i in (4, 5, 6)}
    assert validate.shapes(files, families, values) == {
        "hosts/gpu4/preseed.cfg": ["hosts/gpu5/preseed.cfg", "hosts/gpu6/preseed.cfg"]}
    assert validate.seeds(files, families, values) == [
        "hosts/gpu4/preseed.cfg:14: x/y: a boolean is true or false, got 'yes' (and 2 seeds of the same shape)"]
    # Without the nodes' values, each seed is validated alone.
    assert len(validate.seeds(files, families)) == 3


def test_a_seed_that_differs_in_more_than_its_node_s_values_is_validated_on_its_own() -> None:
    files = {"hosts/gpu4/preseed.cfg": node_preseed("gpu4", "198.51.100.24"),
             "hosts/gpu5/preseed.cfg": node_preseed("gpu5", "198.51.100.25", "d-i time/zone string UTC\n"),
             "hosts/gpu6/preseed.cfg": node_preseed("gpu6", "198.51.100.26")}
    families = {"hosts/gpu4/preseed.cfg": ("debian", "12"), "hosts/gpu5/preseed.cfg": ("debian", "12"),
                "hosts/gpu6/preseed.cfg": ("debian", "13")}  # another release: another installer
    values = {"hosts/gpu%d/preseed.cfg" % i: ("198.51.100.2%d" % i, "gpu%d" % i) for i in (4, 5, 6)}
    assert validate.shapes(files, families, values) == {path: [] for path in files}
    assert [p.split(":", 1)[0] for p in validate.seeds(files, families, values)] == sorted(files)


def test_the_summary_keeps_the_first_problems_and_counts_the_rest() -> None:
    problems = ["problem %d" % i for i in range(23)]
    assert validate.summary(problems) == [*problems[:20], "... and 3 more"]
    assert validate.summary(problems, limit=23) == problems
    assert validate.summary(problems[:2], limit=1) == ["problem 0", "... and 1 more"]
