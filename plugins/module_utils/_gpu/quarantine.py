# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU health quarantine's record on a Node and its circuit breaker.

A Node quarantined because of a GPU fault carries the annotations ``gpucloud.baremetal/quarantined-by:
gpu-health``, ``-at`` (UTC, ``YYYY-MM-DDTHH:MM:SSZ``) and ``-reason``; a Node given back keeps when its last
quarantine began (``gpucloud.baremetal/last-quarantined-at``) and why. The breaker counts the Nodes quarantined
within the window, those given back since included (a node repaired at once still counts until the window has
passed: the healthy soak), and allows a new quarantine while there are fewer than ``max(1, floor(ratio x fleet))``
(anchors: NVIDIA NVSentinel stops at 50 % within 5 minutes and waits for a manual reset; EKS node auto repair
stops above 20 % unhealthy). A quarantine time that cannot be read counts as recent: the breaker errs on the side
of taking fewer nodes out.
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


def breaker(nodes: list[Any], window_s: int, ratio: float, fleet: int,
            now: datetime.datetime | None = None) -> dict:
    """Which Nodes were quarantined within ``window_s``, the limit, and whether the breaker is open."""
    now = now or datetime.datetime.now(datetime.UTC)
    recent = []
    for node in nodes or []:
        meta = node.get("metadata", {}) if isinstance(node, dict) else {}
        notes = meta.get("annotations") or {}
        times = ([notes.get(AT)] if notes.get(BY) == "gpu-health" else []) + \
            ([notes[LAST_AT]] if LAST_AT in notes else [])
        for text in times:
            try:
                at = datetime.datetime.strptime(str(text), STAMP).replace(tzinfo=datetime.UTC)
            except ValueError:
                at = now
            if (now - at).total_seconds() < window_s:
                recent.append(str(meta.get("name")))
                break
    limit = max(1, math.floor(fleet * ratio))
    return {"recent": sorted(recent), "limit": limit, "open": len(recent) >= limit, "now": stamp(now)}
