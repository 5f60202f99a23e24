# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Connection options shared by the collection's Kubernetes modules (doc fragment ``k8s_auth``).

The names are kubernetes.core's, so that ``module_defaults`` for the ``k8s`` action group
sets the connection once for every Kubernetes module.
"""

from __future__ import annotations

from collections.abc import Callable

from ansible.module_utils.basic import AnsibleModule

from .._runner import run_module as _run_module

AUTH_ARG_SPEC = {
    "kubeconfig": {"type": "raw"},
    "context": {"type": "str"},
    "host": {"type": "str"},
    "api_key": {"type": "str", "no_log": True},
    "validate_certs": {"type": "bool", "aliases": ["verify_ssl"]},
    "ca_cert": {"type": "path", "aliases": ["ssl_ca_cert"]},
    "client_cert": {"type": "path", "aliases": ["cert_file"]},
    "client_key": {"type": "path", "aliases": ["key_file"], "no_log": False},
    "request_timeout": {"type": "float", "default": 30.0},
}

FIELD_MANAGER = "gpucloud.baremetal"


def secret_values(kubeconfig) -> set[str]:
    """Values of a kubeconfig given as a mapping that must never appear in output."""
    found: set[str] = set()
    if not isinstance(kubeconfig, dict):
        return found
    for user in kubeconfig.get("users") or []:
        for key, value in ((user or {}).get("user") or {}).items():
            if key in ("token", "client-key-data", "password") and isinstance(value, str) and value:
                found.add(value)
    return found


def run_module(spec: dict, run: Callable[[AnsibleModule], dict]) -> None:
    """The main() of every Kubernetes module: the collection's runner, kubeconfig secrets hidden."""
    _run_module(spec, run, secrets=lambda params: secret_values(params.get("kubeconfig")))
