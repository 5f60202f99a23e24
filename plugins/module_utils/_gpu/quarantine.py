# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU health quarantine's record and its circuit breakers.

A Node quarantined because of a GPU fault carries the annotations ``gpucloud.baremetal/quarantined-by:
gpu-health``, ``-at`` (UTC, ``YYYY-MM-DDTHH:MM:SSZ``) and ``-reason``; a Node given back keeps when its last
quarantine began (``gpucloud.baremetal/last-quarantined-at``) and why. A private node is a Node of its tenant's
cluster, where the tenant is cluster admin and may write any annotation: its quarantine is also recorded in the
host cluster (a ConfigMap ``gpucloud-quarantine-<node>`` with the same annotations and the label
``gpucloud.baremetal/node``), and the breakers read only the host cluster's records, which no tenant can write.

Two breakers, each counting the nodes quarantined within the window, those given back since included (a node
repaired at once still counts until the window has passed: the healthy soak): the node's group (a private
tenant's nodes, or the shared pool) and the fleet. A new quarantine is allowed while each holds fewer than
``max(1, floor(ratio x its nodes))`` (anchors: NVIDIA NVSentinel stops at 50 % within 5 minutes and waits for a
manual reset; EKS node auto repair stops above 20 % unhealthy). A quarantine time that cannot be read counts as
recent: the breakers err on the side of taking fewer nodes out.
"""

from __future__ import annotations

import datetime
import math
from typing import Any

BY = "gpucloud.baremetal/quarantined-by"
AT = "gpucloud.baremetal/quarantined-at"
REASON = "gpucloud.baremetal/quarantine-reason"
LAST_AT = "gpucloud.baremetal/last-quarantined-at"
STAMP = "%Y-%m-%dT%H:%M:%SZ"


def stamp(when: datetime.datetime | None = None) -> str:
    return (when or datetime.datetime.now(datetime.UTC)).strftime(STAMP)


NODE_LABEL = "gpucloud.baremetal/node"


def _mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _name(record: dict) -> str:
    meta = _mapping(record.get("metadata"))
    return str(_mapping(meta.get("labels")).get(NODE_LABEL) or meta.get("name"))


def _recent(records: list[Any], window_s: int, now: datetime.datetime) -> set[str]:
    recent = set()
    for record in records or []:
        meta = _mapping(record.get("metadata")) if isinstance(record, dict) else {}
        notes = _mapping(meta.get("annotations"))
        times = ([notes.get(AT)] if notes.get(BY) == "gpu-health" else []) + \
            ([notes[LAST_AT]] if LAST_AT in notes else [])
        for text in times:
            try:
                at = datetime.datetime.strptime(str(text), STAMP).replace(tzinfo=datetime.UTC)
            except ValueError:
                at = now
            if (now - at).total_seconds() < window_s:
                recent.add(_name(record))
                break
    return recent


def _scope(recent: set[str], members: list[str], ratio: float) -> dict:
    inside = sorted(recent & set(members))
    limit = max(1, math.floor(len(members) * ratio))
    return {"recent": inside, "limit": limit, "size": len(members), "open": len(inside) >= limit}


def breaker(records: list[Any], window_s: int, ratio: float, fleet: list[str], group: list[str] | None = None,
            group_name: str = "", now: datetime.datetime | None = None) -> dict:
    """The fleet's breaker and the node's group's (``group``: the node's private tenant's nodes, or the shared
    pool), from the records (host cluster Nodes and quarantine ConfigMaps) of the nodes quarantined within
    ``window_s``; ``open`` when either is. Only nodes of ``fleet`` count."""
    now = now or datetime.datetime.now(datetime.UTC)
    recent = _recent(records, window_s, now)
    scopes = {"fleet": _scope(recent, list(fleet), ratio)}
    if group is not None:
        scopes["group"] = dict(_scope(recent, list(group), ratio), name=group_name)
    opened = [key for key in ("group", "fleet") if key in scopes and scopes[key]["open"]]  # the narrower one first
    first = scopes[opened[0]] if opened else scopes.get("group", scopes["fleet"])
    return {**scopes, "open": bool(opened), "by": opened[0] if opened else "",
            "recent": first["recent"], "limit": first["limit"], "now": stamp(now)}
