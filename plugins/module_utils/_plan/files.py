# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan folder of ``playbooks/plan.yml``: every layer's desired state, one file per object.

``sync`` makes the layers of a plan folder hold exactly the files of the new plan: a file is
written only when its bytes differ, a file the plan no longer has is removed (so that the diff
shows it gone), and nothing outside the plan's layers is touched. Data becomes YAML with sorted
keys, so the same fleet gives the same bytes.
"""

from __future__ import annotations

import os
from typing import Any

from ansible.module_utils.common.yaml import HAS_YAML, yaml_dump

from .errors import PlanError


def yaml_text(data: Any) -> str:
    if not HAS_YAML:
        raise PlanError("PyYAML is not installed on the controller (it comes with ansible-core)")
    return yaml_dump(data, sort_keys=True, default_flow_style=False, allow_unicode=True, width=120)


def read_tree(src: str, dest: str) -> dict[str, str]:
    """Every file under ``src`` (a folder, or one file), keyed by its path under ``dest``."""
    if os.path.isfile(src):
        return {dest: _read(src)}
    if not os.path.isdir(src):
        raise PlanError("%s: no such file or folder to take into the plan" % src)
    out = {}
    for root, dirs, names in os.walk(src):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(root, name)
            out[os.path.join(dest, os.path.relpath(path, src))] = _read(path)
    return out


def merge(parts: list[dict[str, str]]) -> dict[str, str]:
    """One plan from its parts; a path given twice is a mistake, not an override."""
    out: dict[str, str] = {}
    twice = []
    for part in parts:
        twice += sorted(set(out) & set(part))
        out.update(part)
    if twice:
        raise PlanError(["%s: given twice" % path for path in twice])
    return out


def check_paths(paths: list[str], layers: list[str]) -> None:
    """Each path relative, normalised and inside one of the plan's layers."""
    problems = ["layers: %r is not one folder name" % layer for layer in layers if not _is_layer(layer)]
    for path in paths:
        if os.path.isabs(path) or os.path.normpath(path) != path or path.startswith(".."):
            problems.append("%s: not a normalised path relative to the plan folder" % path)
        elif path.split("/", 1)[0] not in layers or "/" not in path:
            problems.append("%s: not inside one of the plan's layers (%s)" % (path, ", ".join(layers)))
    if problems:
        raise PlanError(problems)


def sync(dest: str, layers: list[str], files: dict[str, str], check_mode: bool = False) -> dict:
    """Make ``dest``'s ``layers`` hold exactly ``files`` (path -> text); the result names what changed."""
    check_paths(sorted(files), layers)
    before = current(dest, layers)
    created = sorted(set(files) - set(before))
    removed = sorted(set(before) - set(files))
    updated = sorted(p for p in set(files) & set(before) if before[p] != files[p])
    if not check_mode:
        for path in created + updated:
            _write(os.path.join(dest, path), files[path])
        for path in removed:
            os.remove(os.path.join(dest, path))
        _remove_empty(dest, layers)
    diff = [{"before_header": p, "after_header": p, "before": before.get(p, ""), "after": files.get(p, "")}
            for p in sorted(created + updated + removed)]
    return {"changed": bool(created or updated or removed), "created": created, "updated": updated,
            "removed": removed, "unchanged": len(files) - len(created) - len(updated), "files": len(files),
            "diff": diff}


def current(dest: str, layers: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for layer in layers:
        if os.path.isdir(os.path.join(dest, layer)):
            out.update(read_tree(os.path.join(dest, layer), layer))
    return out


def _is_layer(name: str) -> bool:
    return bool(name) and "/" not in name and name not in (".", "..") and not name.startswith(".")


def _read(path: str) -> str:
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8", errors="replace")


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def _remove_empty(dest: str, layers: list[str]) -> None:
    for layer in layers:
        for root, _dirs, _names in sorted(os.walk(os.path.join(dest, layer)), reverse=True):
            if root != os.path.join(dest, layer) and not os.listdir(root):
                os.rmdir(root)
