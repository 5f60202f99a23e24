# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The KAI queue tree in a cluster: compare, apply, prune, remove (``scheduling.run.ai/v2`` Queue).

The desired tree comes from ``queue_tree``. One LIST reads every queue; only the
queues that differ are applied (server-side apply with our field manager, dry run in check
mode), so a second run makes no write at all. Queues this collection created carry the
labels below; ``prune`` and ``absent`` only ever remove those.
"""

from __future__ import annotations

from typing import Any

from .client import Client, object_path

API_VERSION = "scheduling.run.ai/v2"
PLURAL = "queues"
MANAGED_BY = ("app.kubernetes.io/managed-by", "gpucloud.baremetal")
TREE_LABEL = "gpucloud.baremetal/queue-tree"
TENANT_LABEL = "gpucloud.baremetal/tenant"


def queue_object(queue: dict, tree: str) -> dict:
    labels = {MANAGED_BY[0]: MANAGED_BY[1], TREE_LABEL: tree}
    if queue.get("tenant"):
        labels[TENANT_LABEL] = queue["tenant"]
    return {
        "apiVersion": API_VERSION,
        "kind": "Queue",
        "metadata": {"name": queue["name"], "labels": labels},
        "spec": queue["spec"],
    }


def _norm(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_norm(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def same(current: dict | None, desired: dict) -> bool:
    """Whether ``current`` already has everything ``desired`` sets (resources: exactly)."""
    if current is None:
        return False
    labels = current.get("metadata", {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in desired["metadata"]["labels"].items()):
        return False
    spec = _norm(current.get("spec") or {})
    return all(spec.get(k) == _norm(v) for k, v in desired["spec"].items())


def is_ours(obj: dict, tree: str) -> bool:
    labels = obj.get("metadata", {}).get("labels") or {}
    return labels.get(MANAGED_BY[0]) == MANAGED_BY[1] and labels.get(TREE_LABEL) == tree


class QueueTree:
    """The queue tree named after its parent queue, in the cluster ``client`` talks to."""

    def __init__(self, client: Client, queues: list[dict], check_mode: bool = False, force: bool = True):
        self.client = client
        self.queues = queues
        self.tree = queues[0]["name"]
        self.check_mode = check_mode
        self.force = force
        self.result: dict[str, Any] = {"created": [], "updated": [], "deleted": [], "unchanged": []}
        self.before: dict[str, Any] = {}
        self.after: dict[str, Any] = {}

    def _current(self) -> dict[str, dict]:
        items = self.client.list(object_path(API_VERSION, PLURAL), what="list KAI queues")
        return {q["metadata"]["name"]: q for q in items}

    def present(self, prune: bool = False) -> dict:
        current = self._current()
        for queue in self.queues:
            desired = queue_object(queue, self.tree)
            have = current.get(queue["name"])
            if same(have, desired):
                self.result["unchanged"].append(queue["name"])
                continue
            self.client.apply(
                object_path(API_VERSION, PLURAL, queue["name"]),
                desired,
                dry_run=self.check_mode,
                force=self.force,
                what="apply queue %s" % queue["name"],
            )
            self.result["updated" if have else "created"].append(queue["name"])
            self.before[queue["name"]] = _view(have)
            self.after[queue["name"]] = _view(desired)
        wanted = {q["name"] for q in self.queues}
        stale = [q for name, q in current.items() if name not in wanted and is_ours(q, self.tree)]
        self.result["stale"] = sorted(q["metadata"]["name"] for q in stale)
        self.result["stale_tenants"] = sorted({(q["metadata"].get("labels") or {}).get(TENANT_LABEL, "")
                                               for q in stale} - {""})
        if prune:
            self._delete(stale)
        return self._finish()

    def absent(self, tenants: list[str] | None) -> dict:
        """Remove the leaves of ``tenants`` (all of ours when None), then the parent if it has no child left."""
        current = self._current()
        ours = {name: q for name, q in current.items() if is_ours(q, self.tree)}
        leaves = [
            q
            for name, q in ours.items()
            if name != self.tree
            and (tenants is None or (q["metadata"].get("labels") or {}).get(TENANT_LABEL) in tenants)
        ]
        self._delete(leaves)
        removed = {q["metadata"]["name"] for q in leaves}
        children = [
            name
            for name, q in current.items()
            if (q.get("spec") or {}).get("parentQueue") == self.tree and name not in removed
        ]
        if self.tree in ours and not children:
            self._delete([ours[self.tree]])
        else:
            self.result["kept_parent_for"] = children
        return self._finish()

    def _delete(self, objs: list[dict]) -> None:
        for obj in objs:
            name = obj["metadata"]["name"]
            if self.client.delete(
                object_path(API_VERSION, PLURAL, name), dry_run=self.check_mode, what="delete queue %s" % name
            ):
                self.result["deleted"].append(name)
                self.before[name] = _view(obj)
                self.after[name] = None

    def _finish(self) -> dict:
        r = self.result
        r["changed"] = bool(r["created"] or r["updated"] or r["deleted"])
        r["queues"] = [q["name"] for q in self.queues]
        r["diff"] = {"before": self.before, "after": self.after}
        return r


def _view(obj: dict | None) -> dict | None:
    """What the diff shows of a queue: its labels of ours and its spec."""
    if obj is None:
        return None
    return {"labels": dict(obj.get("metadata", {}).get("labels") or {}), "spec": _norm(obj.get("spec") or {})}
