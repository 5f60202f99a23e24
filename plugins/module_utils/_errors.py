# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one domain error: invalid input, with every problem and its path.

Private to the collection. The fleet model and the fabric raise subclasses that only change
the heading; modules catch ProblemsError and turn it into one fail_json.
"""

from __future__ import annotations


class ProblemsError(Exception):
    """Invalid input. ``problems`` lists every problem, each with its path."""

    HEAD = "input is invalid"

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__(self.__str__())

    def __str__(self) -> str:
        count = len(self.problems)
        head = "%s (%d problem%s):" % (self.HEAD, count, "" if count == 1 else "s")
        return "\n".join([head] + ["  - " + p for p in self.problems])


class FleetError(ProblemsError):
    """The fleet is invalid."""

    HEAD = "fleet is invalid"
