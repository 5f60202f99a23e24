# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-node boot files as one archive: deterministic on the controller; on the boot server,
compared by hash, mode and group, swapped in at once, files of nodes gone removed."""
from __future__ import annotations

import os
import stat
import tarfile
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import bootfiles

FILES = {"gpu1.ipxe": "#!ipxe\nchain a\n", "gpu1/preseed.cfg": "d-i secret string\n",
         "gpu2.ipxe": "#!ipxe\nchain b\n", "gpu2/user-data": "#cloud-config\n", "gpu2/meta-data": "id: gpu2\n"}
GID = os.getgid()


def serve(tmp: Path, files: dict[str, str]) -> tuple[dict, Path, Path]:
    archive = tmp / "boot-files.tar.gz"
    bootfiles.archive(files, str(archive))
    return bootfiles.manifest(files), archive, tmp / "http" / "hosts"


def test_archive_is_byte_identical_for_the_same_files_and_root_only(tmp_path: Path) -> None:
    first, second = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    assert bootfiles.archive(FILES, str(first)) and bootfiles.archive(dict(reversed(FILES.items())), str(second))
    assert first.read_bytes() == second.read_bytes()
    assert not bootfiles.archive(FILES, str(first))  # unchanged: not rewritten
    assert stat.S_IMODE(first.stat().st_mode) == 0o600
    assert bootfiles.archive(dict(FILES, **{"gpu1.ipxe": "#!ipxe\nchain c\n"}), str(first))
    with tarfile.open(first) as tar:
        assert sorted(tar.getnames()) == sorted(FILES)


def test_apply_serves_the_files_through_a_link_and_a_second_compare_is_clean(tmp_path: Path) -> None:
    (tmp_path / "http").mkdir()
    manifest, archive, link = serve(tmp_path, FILES)
    first = bootfiles.compare(str(link), manifest, 0o640, 0o750, GID)
    assert bootfiles.is_changed(first) and first["added"] == sorted(FILES) and first["nodes"] == ["gpu1", "gpu2"]
    version = bootfiles.apply(str(archive), str(link), str(tmp_path / "store"), manifest, 0o640, 0o750, GID)
    assert link.is_symlink() and not os.readlink(link).startswith("/")  # relative: resolves in a chroot too
    assert Path(version).resolve() == link.resolve()
    for path, text in FILES.items():
        assert (link / path).read_text() == text
        assert stat.S_IMODE((link / path).stat().st_mode) == 0o640  # not world-readable
    assert stat.S_IMODE((link / "gpu1").stat().st_mode) == 0o750
    again = bootfiles.compare(str(link), manifest, 0o640, 0o750, GID)
    assert not bootfiles.is_changed(again), again


def test_a_changed_seed_and_a_node_gone_are_named_and_the_old_version_goes(tmp_path: Path) -> None:
    (tmp_path / "http").mkdir()
    manifest, archive, link = serve(tmp_path, FILES)
    store = tmp_path / "store"
    old = bootfiles.apply(str(archive), str(link), str(store), manifest, 0o640, 0o750, GID)
    now = {k: v for k, v in FILES.items() if not k.startswith("gpu2")}
    now["gpu1/preseed.cfg"] = "d-i other string\n"
    now["gpu3.ipxe"] = "#!ipxe\n"
    manifest, archive, link = serve(tmp_path, now)
    result = bootfiles.compare(str(link), manifest, 0o640, 0o750, GID)
    assert result["changed"] == ["gpu1/preseed.cfg"] and result["added"] == ["gpu3.ipxe"]
    assert result["removed"] == ["gpu2.ipxe", "gpu2/meta-data", "gpu2/user-data", "gpu2/"]
    assert result["nodes"] == ["gpu1", "gpu2", "gpu3"]
    diff = bootfiles.diff(result, manifest, str(link))
    assert "gpu1/preseed.cfg" in diff["before"] and "gpu2.ipxe" in diff["before"] and "gpu3.ipxe" in diff["after"]
    assert "other" not in diff["before"] + diff["after"] and "nodes gpu1, gpu2, gpu3" in diff["before_header"]
    bootfiles.apply(str(archive), str(link), str(store), manifest, 0o640, 0o750, GID)
    assert not (link / "gpu2").exists() and not (link / "gpu2.ipxe").exists()
    assert (link / "gpu1/preseed.cfg").read_text() == "d-i other string\n"
    assert not Path(old).exists() and os.listdir(store) == [os.path.basename(os.readlink(link))]


def test_tampered_file_and_wrong_mode_are_found_by_hash_not_time(tmp_path: Path) -> None:
    (tmp_path / "http").mkdir()
    manifest, archive, link = serve(tmp_path, FILES)
    store = str(tmp_path / "store")
    bootfiles.apply(str(archive), str(link), store, manifest, 0o640, 0o750, GID)
    seed = link / "gpu1/preseed.cfg"
    mtime = seed.stat().st_mtime
    seed.write_text("d-i secreT string\n")  # same size
    os.utime(seed, (mtime, mtime))
    (link / "gpu2.ipxe").chmod(0o644)
    result = bootfiles.compare(str(link), manifest, 0o640, 0o750, GID)
    assert result["changed"] == ["gpu1/preseed.cfg"] and result["attributes"] == ["gpu2.ipxe"]
    bootfiles.apply(str(archive), str(link), store, manifest, 0o640, 0o750, GID)
    assert seed.read_text() == FILES["gpu1/preseed.cfg"] and stat.S_IMODE((link / "gpu2.ipxe").stat().st_mode) == 0o640
    assert not bootfiles.is_changed(bootfiles.compare(str(link), manifest, 0o640, 0o750, GID))


def test_a_plain_folder_of_an_older_release_is_replaced_by_the_link(tmp_path: Path) -> None:
    manifest, archive, link = serve(tmp_path, FILES)
    (link / "gone").mkdir(parents=True)
    (link / "gone.ipxe").write_text("#!ipxe\n")
    result = bootfiles.compare(str(link), manifest, 0o640, 0o750, GID)
    assert result["layout"] and "gone.ipxe" in result["removed"] and "gone" in result["nodes"]
    bootfiles.apply(str(archive), str(link), str(tmp_path / "store"), manifest, 0o640, 0o750, GID)
    assert link.is_symlink() and sorted(os.listdir(link)) == ["gpu1", "gpu1.ipxe", "gpu2", "gpu2.ipxe"]
    assert sorted(os.listdir(tmp_path / "http")) == ["hosts"]  # nothing left aside


def test_an_archive_that_does_not_match_the_manifest_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "http").mkdir()
    manifest, archive, link = serve(tmp_path, FILES)
    store = tmp_path / "store"
    bootfiles.apply(str(archive), str(link), str(store), manifest, 0o640, 0o750, GID)
    served = os.readlink(link)
    stale = dict(manifest, **{"gpu1.ipxe": bootfiles.digest(b"#!ipxe\nnew\n")})
    with pytest.raises(ValueError, match=r"gpu1\.ipxe' differs from the manifest"):
        bootfiles.apply(str(archive), str(link), str(store), stale, 0o640, 0o750, GID)
    with pytest.raises(ValueError, match="not a relative path"):
        bootfiles.apply(str(archive), str(link), str(store), {"../etc/passwd": "0"}, 0o640, 0o750, GID)
    assert os.readlink(link) == served and os.listdir(store) == [os.path.basename(served)]
