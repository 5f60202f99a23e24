# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The root of every domain error of the collection: what went wrong, each problem with its path.

Private to the collection. Each package keeps its own errors in its ``errors.py`` (``_fleet``,
``_fabric``, ``_k8s``, ``_provision``, ``_gpu``), all derived from ``ProblemsError``; the one
module runner (``_runner.run_module``) catches ``ProblemsError`` and turns it into one
``fail_json``. Nothing else is caught there: any other exception is a bug and keeps its
traceback.
"""

from __future__ import annotations

from typing import Any


class ProblemsError(Exception):
    """A failure the user can act on. ``problems`` lists every problem, each with its path.

    ``details``: extra keys for the module result (what was found before the failure); never a
    secret. A subclass with an empty ``HEAD`` reads as its problems alone (one failed action,
    such as a rejected API call, is one problem and needs no heading).
    """

    HEAD = "input is invalid"

    def __init__(self, problems: list[str] | str, **details: Any) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        self.details = details
        super().__init__(self.__str__())

    def __str__(self) -> str:
        if not self.HEAD:
            return "; ".join(self.problems)
        count = len(self.problems)
        head = "%s (%d problem%s):" % (self.HEAD, count, "" if count == 1 else "s")
        return "\n".join([head] + ["  - " + p for p in self.problems])
