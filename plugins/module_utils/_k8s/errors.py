# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes package's errors, all ``ProblemsError`` (the collection's one error root)."""

from __future__ import annotations

from .._errors import ProblemsError


class K8sError(ProblemsError):
    HEAD = "Kubernetes API request failed"


class ApiStatus(K8sError):
    """The API answered with an error status."""

    def __init__(self, status: int, reason: str, message: str, what: str):
        self.status = status
        self.reason = reason
        super().__init__(["%s: %s %s: %s" % (what, status, reason, message)])


class TokenError(K8sError):
    HEAD = "bootstrap token"


class QueueTreeError(ProblemsError):
    """The KAI queue tree breaks a rule KAI itself does not check (``queue_tree``)."""

    HEAD = "the queue tree is refused"


class VclusterError(ProblemsError):
    """A tenant's vCluster settings cannot make a valid ``vcluster.yaml`` (``vcluster``)."""

    HEAD = "the tenant's vCluster settings are invalid"
