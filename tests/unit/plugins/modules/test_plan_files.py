# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan_files module end to end (main(), as Ansible runs it): data as sorted YAML, native files as given,
trees taken in, a file of a gone object removed, check mode writing nothing, the diff only in diff mode, and
a path outside the plan's layers refused before anything is written."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.modules import plan_files
from tests.support.module_args import patch_module_args


def main(capsys: pytest.CaptureFixture, **args) -> tuple[int, dict]:
    with patch_module_args(args), pytest.raises(SystemExit) as exited:
        plan_files.main()
    return exited.value.code, json.loads(capsys.readouterr().out)


def listing(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def stage(tmp_path: Path) -> Path:
    tree = tmp_path / "stage" / "fabric"
    tree.mkdir(parents=True)
    (tree / "leaf1.nvue.yaml").write_text("- set: {}\n")
    return tmp_path / "stage"


def test_writes_the_plan_then_changes_nothing(capsys, tmp_path: Path, stage: Path) -> None:
    dest = tmp_path / "plan"
    args = {"dest": str(dest), "layers": ["fabric", "kai"], "data": {"kai/queues.yaml": {"b": 2, "a": [1]}},
            "files": {"kai/README": "queues\n"}, "trees": [{"src": str(stage / "fabric"), "dest": "fabric"}]}
    rc, out = main(capsys, **args)
    assert rc == 0 and out["changed"] is True and out["files"] == 3
    assert out["created"] == ["fabric/leaf1.nvue.yaml", "kai/README", "kai/queues.yaml"] and "diff" not in out
    files = listing(dest)
    assert files["kai/queues.yaml"] == "a:\n- 1\nb: 2\n" and files["kai/README"] == "queues\n"
    assert yaml.safe_load(files["fabric/leaf1.nvue.yaml"]) == [{"set": {}}]
    rc, again = main(capsys, **args)
    assert rc == 0 and again["changed"] is False and again["unchanged"] == 3 and listing(dest) == files


def test_a_gone_object_s_file_goes_and_nothing_outside_the_layers_is_touched(capsys, tmp_path: Path) -> None:
    dest = tmp_path / "plan"
    (dest / "kai").mkdir(parents=True)
    (dest / "kai" / "old.yaml").write_text("x: 1\n")
    (dest / "notes.txt").write_text("mine\n")
    rc, out = main(capsys, dest=str(dest), layers=["kai"], data={"kai/queues.yaml": {"a": 1}})
    assert rc == 0 and out["removed"] == ["kai/old.yaml"] and out["created"] == ["kai/queues.yaml"]
    assert listing(dest) == {"kai/queues.yaml": "a: 1\n", "notes.txt": "mine\n"}


def test_check_mode_writes_nothing_and_diff_mode_shows_each_file(capsys, tmp_path: Path) -> None:
    dest = tmp_path / "plan"
    (dest / "kai").mkdir(parents=True)
    (dest / "kai" / "queues.yaml").write_text("a: 1\n")
    rc, out = main(capsys, dest=str(dest), layers=["kai"], data={"kai/queues.yaml": {"a": 2}},
                   _ansible_check_mode=True, _ansible_diff=True)
    assert rc == 0 and out["changed"] is True and out["updated"] == ["kai/queues.yaml"]
    assert out["diff"] == [{"before_header": "kai/queues.yaml", "after_header": "kai/queues.yaml",
                            "before": "a: 1\n", "after": "a: 2\n"}]
    assert listing(dest) == {"kai/queues.yaml": "a: 1\n"}


@pytest.mark.parametrize(("path", "problem"), [
    ("other/x.yaml", "other/x.yaml: not inside one of the plan's layers (kai)"),
    ("kai/../../etc/passwd", "kai/../../etc/passwd: not a normalised path relative to the plan folder"),
    ("/etc/passwd", "/etc/passwd: not a normalised path relative to the plan folder"),
])
def test_a_path_outside_the_layers_is_refused_before_anything_is_written(capsys, tmp_path, path, problem) -> None:
    dest = tmp_path / "plan"
    rc, out = main(capsys, dest=str(dest), layers=["kai"], data={"kai/ok.yaml": {}, path: {}})
    assert rc == 1 and out["problems"] == [problem], out
    assert not dest.exists() or listing(dest) == {}
