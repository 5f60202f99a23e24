# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pxe_boot_files module end to end (main(), as Ansible runs it): the archive served through the link with the
modes and group asked for, a second run that changes nothing and reads no archive, check mode that writes and
reads nothing and says per file what would change (hashes, never a seed's content), a changed seed and a node gone
named, and a bad mode, an unknown group or an archive that does not match the manifest refused with the served
files left as they were."""
from __future__ import annotations

import grp
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import bootfiles
from ansible_collections.gpucloud.baremetal.plugins.modules import pxe_boot_files
from tests.support.module_args import patch_module_args

FILES = {"gpu1.ipxe": "#!ipxe\nchain gpu1\n", "gpu1/preseed.cfg": "d-i passwd/user-password-crypted password $6$x\n",
         "gpu2.ipxe": "#!ipxe\nchain gpu2\n", "gpu2/user-data": "#cloud-config\n", "gpu2/meta-data": "id: gpu2\n"}
GROUP = grp.getgrgid(os.getgid()).gr_name


def main(capsys: pytest.CaptureFixture, **args) -> tuple[int, dict]:
    with patch_module_args(json.loads(json.dumps(args))), pytest.raises(SystemExit) as exited:
        pxe_boot_files.main()
    return exited.value.code, json.loads(capsys.readouterr().out)


def served(link: Path) -> dict[str, str]:
    return {str(p.relative_to(link)): p.read_text() for p in sorted(link.rglob("*")) if p.is_file()}


@pytest.fixture
def args(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "http").mkdir()
    return pack(tmp_path, FILES)


def pack(tmp_path: Path, files: dict[str, str]) -> dict[str, Any]:
    src = tmp_path / "boot-files.tar.gz"
    bootfiles.archive(files, str(src))
    return {"src": str(src), "link": str(tmp_path / "http" / "hosts"), "store": str(tmp_path / "store"),
            "manifest": bootfiles.manifest(files), "group": GROUP}


def test_serves_the_archive_then_changes_nothing_without_reading_it(capsys, args: dict[str, Any]) -> None:
    rc, out = main(capsys, **args)
    assert rc == 0 and out["changed"] is True, out
    assert out["added"] == sorted(FILES) and out["nodes"] == ["gpu1", "gpu2"] and "diff" not in out
    link = Path(args["link"])
    assert link.is_symlink() and link.resolve() == Path(out["version"]).resolve()
    assert served(link) == FILES
    for path in FILES:
        st = (link / path).stat()
        assert stat.S_IMODE(st.st_mode) == 0o640 and st.st_gid == os.getgid()  # seeds: not world-readable
    assert stat.S_IMODE((link / "gpu2").stat().st_mode) == 0o750
    os.unlink(args["src"])  # nothing differs: the archive is not read
    rc, again = main(capsys, **args)
    assert rc == 0 and again["changed"] is False and "version" not in again
    assert (again["nodes"], again["added"], again["changed_files"], again["removed"], again["attributes"]) == (
        [], [], [], [], [])


def test_check_mode_reads_and_writes_nothing_and_the_diff_names_files_by_hash(capsys, args, tmp_path) -> None:
    os.unlink(args["src"])
    rc, out = main(capsys, **args, _ansible_check_mode=True, _ansible_diff=True)
    assert rc == 0 and out["changed"] is True and out["added"] == sorted(FILES) and "version" not in out
    assert not os.path.lexists(args["link"]) and not os.path.exists(args["store"])
    diff = out["diff"]
    assert diff["before_header"] == "%s: nodes gpu1, gpu2" % args["link"] and diff["before"] == ""
    assert diff["after"].splitlines()[1] == "gpu1/preseed.cfg  sha256:%s (new)" % (
        args["manifest"]["gpu1/preseed.cfg"][:16])
    assert "$6$" not in json.dumps(out)  # a seed's content (a password hash) is never shown


def test_a_changed_seed_and_a_node_gone_are_named_and_served_at_once(capsys, args, tmp_path: Path) -> None:
    rc, first = main(capsys, **args)
    assert rc == 0, first
    now = {k: v for k, v in FILES.items() if not k.startswith("gpu2")}
    now["gpu1/preseed.cfg"] = "d-i passwd/user-password-crypted password $6$y\n"
    rc, out = main(capsys, **pack(tmp_path, now), _ansible_diff=True)
    assert rc == 0 and out["changed"] is True, out
    assert out["changed_files"] == ["gpu1/preseed.cfg"] and out["added"] == []
    assert out["removed"] == ["gpu2.ipxe", "gpu2/meta-data", "gpu2/user-data", "gpu2/"]
    assert out["nodes"] == ["gpu1", "gpu2"]
    assert "gpu2.ipxe  (removed: node gpu2)" in out["diff"]["before"]
    assert served(Path(args["link"])) == now and out["version"] != first["version"]
    assert not os.path.exists(first["version"])


def test_the_modes_asked_for_are_read_as_octal(capsys, args: dict[str, Any]) -> None:
    rc, out = main(capsys, **args, mode="0600", directory_mode="0700")
    assert rc == 0, out
    link = Path(args["link"])
    assert stat.S_IMODE((link / "gpu1/preseed.cfg").stat().st_mode) == 0o600
    assert stat.S_IMODE((link / "gpu1").stat().st_mode) == 0o700
    rc, again = main(capsys, **args)  # the defaults again: only the attributes differ
    assert again["changed"] is True and again["added"] == again["changed_files"] == []
    assert "gpu1/preseed.cfg" in again["attributes"] and "gpu1/" in again["attributes"]
    assert stat.S_IMODE((link / "gpu1/preseed.cfg").stat().st_mode) == 0o640


def test_an_unquoted_mode_is_the_number_yaml_made_of_it(capsys, args: dict[str, Any]) -> None:
    """YAML reads an unquoted 0640 as the number 416: that is mode 0640, as ansible.builtin.file takes it, never
    the octal string '416' (r----xrw-: world-readable seeds)."""
    rc, out = main(capsys, **args, mode=0o640, directory_mode=0o750)
    assert rc == 0, out
    link = Path(args["link"])
    assert stat.S_IMODE((link / "gpu1/preseed.cfg").stat().st_mode) == 0o640
    assert stat.S_IMODE((link / "gpu1").stat().st_mode) == 0o750


BAD_MODE = "{name}: {value!r} is not a mode; give an octal string such as '0640' (or the number YAML makes of an " \
    "unquoted 0640)"


@pytest.mark.parametrize(("change", "problem"), [
    ({"mode": "rw-r-----"}, BAD_MODE.format(name="mode", value="rw-r-----")),
    ({"directory_mode": "u=rwx,g=rx"}, BAD_MODE.format(name="directory_mode", value="u=rwx,g=rx")),
    ({"mode": "0999"}, BAD_MODE.format(name="mode", value="0999")),
    ({"mode": True}, BAD_MODE.format(name="mode", value=True)),
    ({"mode": 0o17777}, BAD_MODE.format(name="mode", value=0o17777)),
    ({"group": "no-such-group"}, "group 'no-such-group' does not exist on {link}"),
])
def test_a_bad_mode_or_group_is_refused_before_anything_is_served(capsys, args, change, problem) -> None:
    rc, out = main(capsys, **dict(args, **change))
    assert rc == 1 and out["problems"] == [problem.format(link=args["link"])], out
    assert not os.path.lexists(args["link"]) and not os.path.exists(args["store"])


def test_a_missing_option_is_named(capsys, args: dict[str, Any]) -> None:
    rc, out = main(capsys, **{k: v for k, v in args.items() if k != "manifest"})
    assert rc == 1 and out["msg"] == "missing required arguments: manifest"


def test_an_archive_that_does_not_match_the_manifest_leaves_the_served_files(capsys, args, tmp_path) -> None:
    assert main(capsys, **args)[0] == 0
    target = os.readlink(args["link"])
    stale = dict(args, manifest=dict(args["manifest"], **{"gpu3.ipxe": bootfiles.digest(b"#!ipxe\n")}))
    rc, out = main(capsys, **stale)
    assert rc == 1 and out["problems"] == [
        "%s: boot files not changed: %s lacks 1 files of the manifest, e.g. gpu3.ipxe" % (args["link"], args["src"])]
    assert out["added"] == ["gpu3.ipxe"] and out["nodes"] == ["gpu3"]  # what was found, for the operator
    assert out["changed"] is False  # nothing served changed
    assert os.readlink(args["link"]) == target and served(Path(args["link"])) == FILES
    rc, out = main(capsys, **dict(stale, src=str(tmp_path / "absent.tar.gz")))
    assert rc == 1 and out["problems"][0].startswith("%s: boot files not changed: " % args["link"])
    assert "No such file or directory" in out["problems"][0]
