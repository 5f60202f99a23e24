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
    """``check()`` until it returns something truthy; K8sError naming ``what`` on timeout, with the last check's
    error, or "not yet" (and an earlier error, said as earlier) when the last check answered without one."""
    deadline = clock() + timeout
    error = ""
    while True:
        failed = False
        try:
            value = check()
            if value:
                return value
        except K8sError as err:
            error, failed = "; ".join(err.problems), True
        if clock() >= deadline:
            why = error if failed else ("not yet; earlier: %s" % error if error else "not yet")
            raise K8sError(["%s: not ready after %gs (%s)" % (what, timeout, why)])
        sleep(interval)
