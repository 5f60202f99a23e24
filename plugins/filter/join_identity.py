# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which cluster a node belongs to: filters kubeconfig_cluster and ca_pins (role node_join)."""

from __future__ import annotations

from typing import Any

from ansible.errors import AnsibleFilterError

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.bootstrap import (
    ca_cert_hashes,
    kubeconfig_cluster,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.errors import TokenError


def _kubeconfig_cluster(text: Any) -> dict:
    if not isinstance(text, str):
        raise AnsibleFilterError("kubeconfig_cluster: expects the kubeconfig's text, got %s" % type(text).__name__)
    return kubeconfig_cluster(text)


def _ca_pins(pem: Any) -> list:
    if not isinstance(pem, str):
        raise AnsibleFilterError("ca_pins: expects PEM text, got %s" % type(pem).__name__)
    try:
        return ca_cert_hashes(pem)
    except TokenError as exc:
        raise AnsibleFilterError("ca_pins: %s" % "; ".join(exc.problems)) from None


class FilterModule:
    def filters(self) -> dict:
        return {"kubeconfig_cluster": _kubeconfig_cluster, "ca_pins": _ca_pins}
