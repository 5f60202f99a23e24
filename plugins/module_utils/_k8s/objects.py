# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Apply a batch of plain objects by server-side apply: only those that differ, dry run in check mode.

For the kinds the collection creates in the host cluster (``KINDS``), without discovery. An
object is left alone when everything we set is already there (labels and fields, recursively),
so a second run makes no write. In check mode, objects inside a namespace that does not exist
yet cannot be dry-run by the server (it answers 404); they are reported as to be created.
"""

from __future__ import annotations

from typing import Any

from .client import Client, object_path

# kind -> (plural, namespaced)
KINDS = {
    "Namespace": ("namespaces", False),
    "ResourceQuota": ("resourcequotas", True),
    "LimitRange": ("limitranges", True),
    "NetworkPolicy": ("networkpolicies", True),
    "ServiceAccount": ("serviceaccounts", True),
    "Role": ("roles", True),
    "RoleBinding": ("rolebindings", True),
    "Secret": ("secrets", True),
    "ConfigMap": ("configmaps", True),
    "ValidatingAdmissionPolicy": ("validatingadmissionpolicies", False),
    "ValidatingAdmissionPolicyBinding": ("validatingadmissionpolicybindings", False),
}
SKIP = ("apiVersion", "kind", "metadata", "status")


def path_of(obj: dict) -> str:
    kind = obj.get("kind")
    if kind not in KINDS:
        raise ValueError("kind %r is not one of %s" % (kind, ", ".join(sorted(KINDS))))
    plural, namespaced = KINDS[kind]
    meta = obj["metadata"]
    return object_path(obj["apiVersion"], plural, meta["name"], meta.get("namespace", "") if namespaced else "")


def contains(have: Any, want: Any) -> bool:
    """Whether ``have`` holds everything of ``want`` (mappings: recursively; lists: same length, item by item)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(k in have and contains(have[k], v) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(have, list) and len(have) == len(want) and all(map(contains, have, want))
    if isinstance(want, (int, float)) and isinstance(have, str):
        return str(want) == have
    return have == want


def same(have: dict | None, want: dict) -> bool:
    if have is None:
        return False
    labels = (have.get("metadata") or {}).get("labels") or {}
    annotations = (have.get("metadata") or {}).get("annotations") or {}
    meta = want.get("metadata") or {}
    return (
        contains(labels, meta.get("labels") or {})
        and contains(annotations, meta.get("annotations") or {})
        and all(contains(have.get(k), v) for k, v in want.items() if k not in SKIP)
    )


def _view(obj: dict | None) -> dict | None:
    if obj is None:
        return None
    meta = obj.get("metadata") or {}
    out = {"labels": meta.get("labels") or {}}
    out.update({k: v for k, v in obj.items() if k not in SKIP})
    return out


def _key(obj: dict) -> str:
    meta = obj["metadata"]
    return "%s %s%s" % (obj["kind"], meta.get("namespace", "") + "/" if meta.get("namespace") else "", meta["name"])


def apply_objects(client: Client, objs: list[dict], check_mode: bool = False, force: bool = True) -> dict:
    result: dict[str, Any] = {"created": [], "updated": [], "unchanged": []}
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    new_namespaces: set[str] = set()
    for obj in objs:
        path, key = path_of(obj), _key(obj)
        ns = obj["metadata"].get("namespace")
        have = None if (check_mode and ns in new_namespaces) else client.get(path, what="read %s" % key)
        if same(have, obj):
            result["unchanged"].append(key)
            continue
        if not (check_mode and ns in new_namespaces):
            client.apply(path, obj, dry_run=check_mode, force=force, what="apply %s" % key)
        if have is None and obj["kind"] == "Namespace":
            new_namespaces.add(obj["metadata"]["name"])
        result["updated" if have else "created"].append(key)
        before[key], after[key] = _view(have), _view(obj)
    result["changed"] = bool(result["created"] or result["updated"])
    result["diff"] = {"before": before, "after": after}
    return result
