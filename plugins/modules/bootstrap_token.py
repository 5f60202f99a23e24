#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: bootstrap_token
short_description: Create or delete a short-lived node bootstrap token, with what a kubeadm join needs
version_added: 0.1.0
description:
  - With O(state=present), creates Secret C(kube-system/bootstrap-token-<id>) of type
    C(bootstrap.kubernetes.io/token) as C(kubeadm token create) and C(vcluster token create)
    do (C(token-id), C(token-secret), C(expiration) in RFC3339, C(description),
    C(usage-bootstrap-authentication), C(usage-bootstrap-signing), C(auth-extra-groups)), with a
    new random token C([a-z0-9]{6}.[a-z0-9]{16}) that expires after O(ttl). It returns the token
    and the join discovery data, the endpoint (C(controlPlaneEndpoint) of
    C(kube-system/kubeadm-config), else the kubeconfig's server) and the CA hash
    (sha256 of the public key of the CA in ConfigMap C(kube-system/kube-root-ca.crt)).
  - The token is a credential - register the result only on a task with C(no_log), and delete it
    (O(state=absent)) when the join is over; the API server also refuses it after its expiration
    and kube-controller-manager's token cleaner deletes it.
  - With O(state=absent), deletes the token O(token_id) (nothing when it is already gone).
  - Every error names its step - C(endpoint), C(CA hash) or C(token).
author:
  - gpucloud.baremetal contributors (@gpucloud)
extends_documentation_fragment:
  - gpucloud.baremetal.k8s_auth
options:
  state:
    description: V(present) creates a token; V(absent) deletes O(token_id).
    type: str
    choices: [present, absent]
    default: present
  token_id:
    description: The 6-character id of the token to delete (O(state=absent)).
    type: str
  ttl:
    description: How long the token is valid, like C(15m), C(1h) or C(90s) (or seconds).
    type: str
    default: 15m
  description:
    description: The token's C(description).
    type: str
    default: node join by gpucloud.baremetal
  groups:
    description: Extra groups of the token user (C(auth-extra-groups)); each starts with C(system:bootstrappers:).
    type: list
    elements: str
    default: [system:bootstrappers:kubeadm:default-node-token]
  usages:
    description: What the token may be used for (C(usage-bootstrap-<usage>=true)).
    type: list
    elements: str
    choices: [authentication, signing]
    default: [authentication, signing]
  labels:
    description: Labels of the Secret.
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
    description: Reads the endpoint and CA hash; no token is created (the API server's dry run checks the Secret).
  diff_mode:
    support: full
    description: The Secret's metadata and non-secret fields before and after.
"""

EXAMPLES = r"""
- name: Create a join token (the result holds a credential)
  gpucloud.baremetal.bootstrap_token:
    kubeconfig: /etc/gpucloud/host.kubeconfig
    ttl: 15m
    description: join gpu7
  register: join
  no_log: true

- name: Delete it
  gpucloud.baremetal.bootstrap_token:
    kubeconfig: /etc/gpucloud/host.kubeconfig
    state: absent
    token_id: "{{ join.token_id }}"
"""

RETURN = r"""
token:
  description: The bootstrap token C(<id>.<secret>); empty in check mode.
  returned: state is present
  type: str
token_id:
  description: The token's id (public; the Secret is C(bootstrap-token-<id>)).
  returned: always
  type: str
  sample: abcdef
expiration:
  description: When the token expires (RFC3339).
  returned: state is present
  type: str
  sample: "2026-12-02T18:00:00Z"
endpoint:
  description: The API endpoint to join (host and port).
  returned: state is present
  type: str
  sample: 198.51.100.11:6443
endpoint_source:
  description: Where the endpoint came from, C(kube-system/kubeadm-config) or C(kubeconfig).
  returned: state is present
  type: str
ca_cert:
  description:
    - The cluster CA certificate(s) (PEM, public) from ConfigMap C(kube-system/kube-root-ca.crt), to verify the
      endpoint with (for example when fetching a join script from it).
  returned: state is present
  type: str
ca_cert_hashes:
  description: C(sha256:<hex>) of each CA's public key, for C(--discovery-token-ca-cert-hash).
  returned: state is present
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s import bootstrap
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.args import AUTH_ARG_SPEC, run_module
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.client import Client


def _public(secret: dict) -> dict:
    data = dict(secret["stringData"])
    data["token-secret"] = "(secret)"
    return {"metadata": secret["metadata"], "type": secret["type"], "stringData": data}


def present(module: AnsibleModule, client: Client) -> dict:
    p = module.params
    problems = bootstrap.validate_groups(p["groups"])
    if problems:
        raise bootstrap.TokenError(problems)
    ttl = bootstrap.parse_ttl(p["ttl"])
    found = bootstrap.discover(client)
    token_id, token = bootstrap.generate_token()
    expires = bootstrap.expiration(ttl)
    secret = bootstrap.token_secret(token_id, token, expires, p["description"], p["groups"], p["usages"], p["labels"])
    bootstrap.create(client, secret, module.check_mode)
    result = dict(found, changed=True, token_id=token_id, expiration=expires,
                  token="" if module.check_mode else "%s.%s" % (token_id, token))
    if module._diff:
        result["diff"] = {"before": {}, "after": _public(secret)}
    return result


def absent(module: AnsibleModule, client: Client) -> dict:
    token_id = module.params["token_id"] or ""
    if not bootstrap.TOKEN_RE.match(token_id + ".0000000000000000"):
        raise bootstrap.TokenError(["token_id: %r is not a token id ([a-z0-9]{6})" % token_id])
    path = bootstrap.object_path("v1", "secrets", bootstrap.secret_name(token_id), bootstrap.NAMESPACE)
    existing = client.get(path, what="token: read %s" % bootstrap.secret_name(token_id))
    if existing is None:
        return {"changed": False, "token_id": token_id}
    bootstrap.delete(client, token_id, module.check_mode)
    result = {"changed": True, "token_id": token_id}
    if module._diff:
        result["diff"] = {"before": {"metadata": {"name": bootstrap.secret_name(token_id)}}, "after": {}}
    return result


def run(module: AnsibleModule) -> dict:
    client = Client(module.params)
    if module.params["state"] == "absent":
        return absent(module, client)
    return present(module, client)


def main() -> None:
    spec = dict(
        AUTH_ARG_SPEC,
        state={"type": "str", "choices": ["present", "absent"], "default": "present"},
        token_id={"type": "str", "no_log": False},
        ttl={"type": "str", "default": "15m"},
        description={"type": "str", "default": "node join by gpucloud.baremetal"},
        groups={"type": "list", "elements": "str", "default": [bootstrap.DEFAULT_GROUP]},
        usages={"type": "list", "elements": "str", "choices": ["authentication", "signing"],
                "default": ["authentication", "signing"]},
        labels={"type": "dict", "default": {}},
    )
    run_module(spec, run)


if __name__ == "__main__":
    main()
