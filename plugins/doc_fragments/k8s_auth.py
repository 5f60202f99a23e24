# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:
    # How the collection's Kubernetes modules reach an API server (names as in kubernetes.core,
    # so that module_defaults for group/gpucloud.baremetal.k8s sets them once).
    DOCUMENTATION = r"""
attributes:
  platform:
    support: full
    platforms: [kubernetes]
    description: Runs on the controller and talks to the Kubernetes API.
  action_group:
    support: full
    membership: [gpucloud.baremetal.k8s]
    description: Use C(group/gpucloud.baremetal.k8s) in C(module_defaults) to set the connection.
options:
  kubeconfig:
    description:
      - Path to a kubeconfig file, or the kubeconfig itself as a mapping (for example a tenant
        kubeconfig read from its secret). Its credentials never appear in results or logs.
      - Without it and without O(host), C(KUBECONFIG) or C(~/.kube/config), then the in-cluster
        service account, are used.
    type: raw
  context:
    description:
      - Context of the kubeconfig to use; its current context when omitted.
    type: str
  host:
    description:
      - URL of the API server; overrides the kubeconfig's.
    type: str
  api_key:
    description:
      - Bearer token for O(host).
    type: str
  validate_certs:
    description:
      - Verify the API server's TLS certificate (the kubeconfig's setting when omitted).
    type: bool
    aliases: [verify_ssl]
  ca_cert:
    description:
      - CA bundle that signed the API server's certificate.
    type: path
    aliases: [ssl_ca_cert]
  client_cert:
    description:
      - Client certificate (PEM file).
    type: path
    aliases: [cert_file]
  client_key:
    description:
      - Key of O(client_cert) (PEM file).
    type: path
    aliases: [key_file]
  request_timeout:
    description:
      - Seconds one API request may take. Failed requests are retried with backoff on
        409, 429 and 5xx answers and on dropped connections.
    type: float
    default: 30
requirements:
  - kubernetes >= 28.1.0 (Python library, on the controller)
"""
