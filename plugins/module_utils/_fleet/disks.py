# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Root device hints (``root_device`` of an OS profile or of a node): which disk an install may write."""

from __future__ import annotations

from typing import Any

from .checker import Checker
from .schema import ROOT_DEVICE_KEYS, ROOT_DEVICE_PATTERNS, ROOT_DEVICE_SIZE_RANGE


def root_device(c: Checker, raw: Any, path: str) -> dict[str, Any]:
    """The hints of ``raw`` (a mapping of ROOT_DEVICE_KEYS), each checked; an empty mapping is refused
    (it would select nothing: leave the key out for the default rule)."""
    m = c.mapping(raw, path, ROOT_DEVICE_KEYS)
    if m is None:
        return {}
    if not m:
        c.add(path, "is empty; give one of %s, or leave root_device out for the default rule "
                    "(the smallest non-removable disk of at least min_size_gb GiB)" % ", ".join(ROOT_DEVICE_KEYS))
        return {}
    out: dict[str, Any] = {}
    for key, (pattern, what) in ROOT_DEVICE_PATTERNS.items():
        if key in m:
            value = c.string(m[key], "%s.%s" % (path, key), pattern, what)
            if value is not None:
                out[key] = value
    for key in ("size_gb", "min_size_gb"):
        if key in m:
            value = c.integer(m[key], "%s.%s" % (path, key), ROOT_DEVICE_SIZE_RANGE)
            if value is not None:
                out[key] = value
    if "size_gb" in out and "min_size_gb" in out and out["size_gb"] < out["min_size_gb"]:
        c.add(path + ".size_gb",
              "%d is below min_size_gb %d: no disk could match" % (out["size_gb"], out["min_size_gb"]))
    return out
