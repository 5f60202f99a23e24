# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Readiness waits: poll a condition until it holds or the timeout passes, then say what was awaited."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .errors import K8sError


def wait_for(
    what: str,
    check: Callable[[], Any],
    timeout: float,
    interval: float = 0.5,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Any:
    """``check()`` until it returns something truthy; K8sError naming ``what`` and the last error on timeout."""
    deadline = clock() + timeout
    last = "not yet"
    while True:
        try:
            value = check()
            if value:
                return value
        except K8sError as err:
            last = "; ".join(err.problems)
        if clock() >= deadline:
            raise K8sError(["%s: not ready after %ss (%s)" % (what, int(timeout), last)])
        sleep(interval)
