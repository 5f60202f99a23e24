# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The provisioning stage's errors, all ``ProblemsError`` (the collection's one error root)."""

from __future__ import annotations

from .._errors import ProblemsError


class RedfishError(ProblemsError):
    """The BMC refused, failed or did not answer; the message names the node and the BMC."""

    HEAD = ""


class ValidatorMissing(ProblemsError):
    """A validator the seeds need is not installed; the message says how to get it."""

    HEAD = ""


class BootFilesError(ProblemsError):
    """The boot files cannot be served as asked (bad mode or group, a broken archive)."""

    HEAD = ""
