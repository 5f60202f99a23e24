# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan's errors, all ``ProblemsError`` (the collection's one error root)."""

from __future__ import annotations

from .._errors import ProblemsError


class PlanError(ProblemsError):
    """The plan cannot be computed or written; every problem is named."""

    HEAD = "the plan cannot be made"
