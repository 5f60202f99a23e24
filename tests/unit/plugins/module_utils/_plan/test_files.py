# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan folder: a file written only when its bytes differ, files of objects gone removed, nothing
outside the plan's layers touched, the same data always the same bytes."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._plan.files import merge, read_tree, sync, yaml_text

LAYERS = ["pxe", "kai"]


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_first_plan_creates_every_file_and_a_second_changes_nothing(tmp_path: Path) -> None:
    files = {"pxe/dnsmasq.conf": "port=0\n", "pxe/hosts/n1/user-data": "#cloud-config\n", "kai/queues.yaml": "a: 1\n"}
    first = sync(str(tmp_path), LAYERS, files)
    assert first["changed"] and first["created"] == sorted(files) and first["unchanged"] == 0
    assert tree(tmp_path) == {path: text.encode() for path, text in files.items()}
    stamps = {p: os.stat(tmp_path / p).st_mtime_ns for p in files}
    again = sync(str(tmp_path), LAYERS, files)
    assert not again["changed"] and again["unchanged"] == 3 and again["diff"] == []
    assert {p: os.stat(tmp_path / p).st_mtime_ns for p in files} == stamps  # not even rewritten


def test_a_changed_file_is_updated_with_its_diff_and_the_others_are_left(tmp_path: Path) -> None:
    sync(str(tmp_path), LAYERS, {"pxe/dnsmasq.conf": "port=0\n", "kai/queues.yaml": "a: 1\n"})
    result = sync(str(tmp_path), LAYERS, {"pxe/dnsmasq.conf": "port=0\n", "kai/queues.yaml": "a: 2\n"})
    assert (result["created"], result["updated"], result["removed"]) == ([], ["kai/queues.yaml"], [])
    assert result["diff"] == [{"before_header": "kai/queues.yaml", "after_header": "kai/queues.yaml",
                               "before": "a: 1\n", "after": "a: 2\n"}]
    assert (tmp_path / "kai" / "queues.yaml").read_text() == "a: 2\n"


def test_files_of_objects_gone_are_removed_with_their_empty_folders(tmp_path: Path) -> None:
    sync(str(tmp_path), LAYERS, {"pxe/hosts/n1.ipxe": "#!ipxe\n", "pxe/hosts/n1/user-data": "x\n",
                                 "pxe/hosts/n2.ipxe": "#!ipxe\n"})
    result = sync(str(tmp_path), LAYERS, {"pxe/hosts/n2.ipxe": "#!ipxe\n"})
    assert result["removed"] == ["pxe/hosts/n1.ipxe", "pxe/hosts/n1/user-data"]
    assert [d["after"] for d in result["diff"]] == ["", ""]
    assert tree(tmp_path) == {"pxe/hosts/n2.ipxe": b"#!ipxe\n"} and not (tmp_path / "pxe" / "hosts" / "n1").exists()


def test_a_layer_with_no_file_left_is_emptied(tmp_path: Path) -> None:
    sync(str(tmp_path), LAYERS, {"kai/queues.yaml": "a: 1\n", "pxe/dnsmasq.conf": "x\n"})
    assert sync(str(tmp_path), LAYERS, {"pxe/dnsmasq.conf": "x\n"})["removed"] == ["kai/queues.yaml"]
    assert tree(tmp_path) == {"pxe/dnsmasq.conf": b"x\n"}


def test_nothing_outside_the_layers_is_touched(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.yaml").write_text("mine\n")
    (tmp_path / ".staging").mkdir()
    (tmp_path / ".staging" / "x").write_text("scratch\n")
    result = sync(str(tmp_path), LAYERS, {"kai/queues.yaml": "a: 1\n"})
    assert result["created"] == ["kai/queues.yaml"] and result["removed"] == []
    assert tree(tmp_path) == {"notes.txt": b"mine\n", "other/keep.yaml": b"mine\n", ".staging/x": b"scratch\n",
                              "kai/queues.yaml": b"a: 1\n"}


def test_check_mode_writes_and_removes_nothing_but_says_what_would_change(tmp_path: Path) -> None:
    sync(str(tmp_path), LAYERS, {"kai/queues.yaml": "a: 1\n", "pxe/dnsmasq.conf": "x\n"})
    before = tree(tmp_path)
    result = sync(str(tmp_path), LAYERS, {"kai/queues.yaml": "a: 2\n", "pxe/new.ipxe": "y\n"}, check_mode=True)
    assert (result["created"], result["updated"], result["removed"]) == (
        ["pxe/new.ipxe"], ["kai/queues.yaml"], ["pxe/dnsmasq.conf"])
    assert result["changed"] and tree(tmp_path) == before


@pytest.mark.parametrize("path", ["/etc/passwd", "kai/../../x", "fabric/leaf.cfg", "kai", "kai//q.yaml", "../kai/q"])
def test_paths_outside_the_layers_are_refused_before_anything_is_written(tmp_path: Path, path: str) -> None:
    with pytest.raises(ProblemsError, match="the plan cannot be made"):
        sync(str(tmp_path), LAYERS, {"kai/queues.yaml": "a: 1\n", path: "x"})
    assert tree(tmp_path) == {}


def test_a_path_given_twice_is_refused() -> None:
    with pytest.raises(ProblemsError, match=r"kai/queues\.yaml: given twice"):
        merge([{"kai/queues.yaml": "a"}, {"kai/queues.yaml": "b"}])


def test_yaml_is_sorted_block_style_and_reads_back_the_same() -> None:
    data = {"b": [{"z": 1, "a": "x: y"}], "a": {"version": "24.04", "on": True}}
    text = yaml_text(data)
    assert text == yaml_text({"a": {"on": True, "version": "24.04"}, "b": [{"a": "x: y", "z": 1}]})
    assert text.splitlines()[0] == "a:" and "{" not in text
    assert yaml.safe_load(text) == data


def test_a_rendered_tree_is_taken_in_under_its_new_path(tmp_path: Path) -> None:
    (tmp_path / "http" / "hosts" / "n1").mkdir(parents=True)
    (tmp_path / "http" / "hosts" / "n1.ipxe").write_text("#!ipxe\n")
    (tmp_path / "http" / "hosts" / "n1" / "user-data").write_text("#cloud-config\n")
    (tmp_path / "dnsmasq.conf").write_text("port=0\n")
    assert read_tree(str(tmp_path / "http" / "hosts"), "pxe/hosts") == {
        "pxe/hosts/n1.ipxe": "#!ipxe\n", "pxe/hosts/n1/user-data": "#cloud-config\n"}
    assert read_tree(str(tmp_path / "dnsmasq.conf"), "pxe/dnsmasq.conf") == {"pxe/dnsmasq.conf": "port=0\n"}
    with pytest.raises(ProblemsError, match="no such file or folder"):
        read_tree(str(tmp_path / "missing"), "pxe/x")
