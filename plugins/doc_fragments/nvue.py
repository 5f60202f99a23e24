# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:
    # How to reach a switch's NVUE REST API (Cumulus Linux 5.x).
    DOCUMENTATION = r"""
options:
  host:
    description:
      - Address of the switch's NVUE REST API (its management address, C(ansible_host)).
    type: str
    required: true
  port:
    description:
      - TCP port of the NVUE REST API.
    type: int
    default: 8765
  use_ssl:
    description:
      - Use HTTPS. Cumulus Linux serves the API over HTTPS only; V(false) is for test doubles.
    type: bool
    default: true
  username:
    description:
      - NVUE user (a member of C(nvset)/C(nvapply)).
    type: str
    default: cumulus
  password:
    description:
      - Password of O(username).
    type: str
    required: true
  validate_certs:
    description:
      - Verify the API's TLS certificate. Switches ship a self-signed one; set O(ca_path) to its CA.
    type: bool
    default: true
  ca_path:
    description:
      - CA bundle used to verify the API's certificate.
    type: path
  timeout:
    description:
      - Seconds to wait for each HTTP request.
    type: int
    default: 30
"""
