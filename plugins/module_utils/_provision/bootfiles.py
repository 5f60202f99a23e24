# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-node boot files (iPXE scripts, seeds) moved to the boot server as one archive.

On the controller, ``archive`` packs every file into one deterministic ``.tar.gz`` (same files,
same bytes: the copy of the archive is unchanged on a second run) and ``manifest`` gives each
file's SHA-256. On the boot server, ``compare`` checks the served tree against the manifest
(content hash, mode, group; files no longer in the manifest), and ``apply`` unpacks the archive
into a new version folder beside the old one, checks every file against the manifest, and
swaps the served link to it with one ``rename`` (a client reads the old tree or the new one,
never half of each), then removes older versions.

Layout: ``<link>`` (e.g. ``/srv/gpucloud/http/hosts``) is a relative symlink to
``<store>/<digest>/`` (e.g. ``/srv/gpucloud/boot-files/<digest>``), ``digest`` the manifest's.
Paths are relative to ``<link>``: ``NAME.ipxe`` and ``NAME/<seed>``; the node is their first part.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import stat
import tarfile
import tempfile
from typing import Any

TAR_MODE = 0o600  # inside the archive; the boot server sets its own modes


def digest(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()


def manifest(files: dict[str, str]) -> dict[str, str]:
    """path -> SHA-256 of the UTF-8 content."""
    return {path: digest(text.encode("utf-8")) for path, text in files.items()}


def manifest_digest(files_manifest: dict[str, str]) -> str:
    return digest(json.dumps(files_manifest, sort_keys=True, separators=(",", ":")).encode())[:16]


def node_of(path: str) -> str:
    first = path.split("/", 1)[0]
    return first[:-len(".ipxe")] if first.endswith(".ipxe") and "/" not in path else first


def check_path(path: str) -> str | None:
    """Why path may not be a boot file's relative path, or None."""
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\0" in path:
        return "%r is not a relative path inside the boot files' folder" % path
    return None


def archive(files: dict[str, str], dest: str) -> bool:
    """Write files into the gzip'd tar dest, byte-identical for the same files (sorted, mtime 0,
    owner 0, fixed mode). True when dest changed."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(files):
            data = files[path].encode("utf-8")
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), TAR_MODE, 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=0, compresslevel=6) as gz:
        gz.write(raw.getvalue())
    content = packed.getvalue()
    try:
        with open(dest, "rb") as fh:
            if fh.read() == content:
                return False
    except OSError:
        pass
    tmp = dest + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(content)
    os.replace(tmp, dest)
    return True


def served_dir(link: str) -> str | None:
    """The folder the link serves: its target, the folder itself (a plain folder of an older
    release), or None."""
    if os.path.islink(link):
        target = os.path.join(os.path.dirname(link), os.readlink(link))
        return target if os.path.isdir(target) else None
    return link if os.path.isdir(link) else None


def _tree(root: str) -> tuple[dict[str, os.stat_result], dict[str, os.stat_result]]:
    files, dirs = {}, {}
    for top, subdirs, names in os.walk(root):
        rel = os.path.relpath(top, root)
        for name in subdirs:
            path = name if rel == "." else rel + "/" + name
            dirs[path] = os.lstat(os.path.join(top, name))
        for name in names:
            path = name if rel == "." else rel + "/" + name
            files[path] = os.lstat(os.path.join(top, name))
    return files, dirs


def compare(link: str, files_manifest: dict[str, str], mode: int, dir_mode: int,
            gid: int | None) -> dict[str, Any]:
    """What differs between the served tree and the manifest: ``added``, ``changed`` (content),
    ``removed`` (paths), ``attributes`` (mode or group differs: paths), ``nodes`` (affected, sorted),
    ``layout`` (True when the link is not yet a link to a version folder)."""
    root = served_dir(link)
    found_files, found_dirs = _tree(root) if root else ({}, {})
    added, changed, attributes = [], [], []
    for path in sorted(files_manifest):
        st = found_files.get(path)
        if st is None or not stat.S_ISREG(st.st_mode):
            added.append(path)
            continue
        with open(os.path.join(root, path), "rb") as fh:
            if digest(fh.read()) != files_manifest[path]:
                changed.append(path)
                continue
        if stat.S_IMODE(st.st_mode) != mode or (gid is not None and st.st_gid != gid):
            attributes.append(path)
    removed = sorted(p for p in found_files if p not in files_manifest)
    wanted_dirs = {p.rsplit("/", 1)[0] for p in files_manifest if "/" in p}
    removed += sorted(p + "/" for p in found_dirs if p not in wanted_dirs)
    if root:
        for path in [*sorted(wanted_dirs & set(found_dirs)), "."]:
            st = os.lstat(os.path.join(root, path))
            if stat.S_IMODE(st.st_mode) != dir_mode or (gid is not None and st.st_gid != gid):
                attributes.append(path + "/")
    nodes = sorted({node_of(p.rstrip("/")) for p in added + changed + removed + attributes if p != "./"})
    layout = root is None or not os.path.islink(link)
    return {"added": added, "changed": changed, "removed": removed, "attributes": attributes,
            "nodes": nodes, "layout": layout}


def is_changed(result: dict[str, Any]) -> bool:
    return bool(result["added"] or result["changed"] or result["removed"] or result["attributes"]
                or result["layout"])


def diff(result: dict[str, Any], files_manifest: dict[str, str], link: str) -> dict[str, str]:
    """Ansible's diff: one line per file that differs, with its node and hash (no content:
    seeds may hold secrets)."""
    before, after = [], []
    for path in result["changed"]:
        before.append("%s  (content differs)" % path)
        after.append("%s  sha256:%s" % (path, files_manifest[path][:16]))
    for path in result["added"]:
        after.append("%s  sha256:%s (new)" % (path, files_manifest[path][:16]))
    for path in result["removed"]:
        before.append("%s  (removed: node %s)" % (path, node_of(path.rstrip("/"))))
    for path in result["attributes"]:
        before.append("%s  (mode or group)" % path)
        after.append("%s  (mode or group fixed)" % path)
    head = "%s: nodes %s" % (link, ", ".join(result["nodes"]) or "none")
    return {"before_header": head, "after_header": head,
            "before": "\n".join(before) + ("\n" if before else ""),
            "after": "\n".join(after) + ("\n" if after else "")}


def apply(src: str, link: str, store: str, files_manifest: dict[str, str], mode: int, dir_mode: int,
          gid: int | None) -> str:
    """Unpack src into a new version folder of store, check it against the manifest, point link at
    it atomically, remove older versions. Returns the version folder. Raises ValueError on an
    archive that does not match the manifest (nothing served changes then)."""
    bad = [reason for reason in map(check_path, files_manifest) if reason]
    if bad:
        raise ValueError("; ".join(bad))
    os.makedirs(store, mode=0o755, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".new-", dir=store)
    try:
        seen = set()
        with tarfile.open(src, "r:gz") as tar:
            for member in tar:
                if member.name not in files_manifest:
                    raise ValueError("%s: %r is not in the manifest (a stale archive?)" % (src, member.name))
                if not member.isfile():
                    raise ValueError("%s: %r is not a regular file" % (src, member.name))
                data = tar.extractfile(member).read()
                if digest(data) != files_manifest[member.name]:
                    raise ValueError("%s: %r differs from the manifest (a stale archive?)" % (src, member.name))
                path = os.path.join(work, member.name)
                parent = os.path.dirname(path)
                if not os.path.isdir(parent):
                    os.makedirs(parent)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                seen.add(member.name)
        missing = sorted(set(files_manifest) - seen)
        if missing:
            raise ValueError("%s lacks %d files of the manifest, e.g. %s" % (src, len(missing), missing[0]))
        for top, subdirs, names in os.walk(work):
            for name in names:
                _own(os.path.join(top, name), mode, gid)
            for name in subdirs:
                _own(os.path.join(top, name), dir_mode, gid)
        _own(work, dir_mode, gid)
        version = os.path.join(store, manifest_digest(files_manifest))
        if os.path.lexists(version):
            if served_dir(link) and os.path.realpath(served_dir(link)) == os.path.realpath(version):
                # Same content, attributes repaired: serve the new unpacking under another name.
                version = tempfile.mkdtemp(prefix=os.path.basename(version) + "-", dir=store)
                os.rmdir(version)
            else:
                shutil.rmtree(version)
        os.rename(work, version)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    _swap(link, version)
    for name in os.listdir(store):
        old = os.path.join(store, name)
        if old != version and os.path.isdir(old) and not os.path.islink(old):
            shutil.rmtree(old, ignore_errors=True)
    return version


def _own(path: str, mode: int, gid: int | None) -> None:
    if gid is not None:
        os.chown(path, -1, gid)
    os.chmod(path, mode)


def _swap(link: str, version: str) -> None:
    """Point link at version with one rename; a plain folder (older release) moves aside first."""
    aside = None
    if os.path.isdir(link) and not os.path.islink(link):
        aside = tempfile.mkdtemp(prefix=".old-", dir=os.path.dirname(link))
        os.rename(link, os.path.join(aside, "hosts"))
    tmp = link + ".tmp-link"
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(os.path.relpath(version, os.path.dirname(link)), tmp)
    os.replace(tmp, link)
    if aside:
        shutil.rmtree(aside, ignore_errors=True)
