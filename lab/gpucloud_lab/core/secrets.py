# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's secrets: what the lab's emulators and simulations accept, and what no playbook output may show.

They guard lab-only services on the lab's own network namespace, so they are written here on purpose; each
is distinctive, so that the secret scan (tests/integration/test_secrets.py) finds it wherever it leaks:

- ``LAB_PASSWORD``: the password of the BMC emulators (admin) and of the NVUE API simulation (cumulus).
  The lab inventory carries it only vault-encrypted (``!vault`` in ``inventories/lab/fleet.yml`` and
  ``group_vars/switches_nvue.yml``), with ``VAULT_PASSWORD``, which ``gpucloud-lab up`` writes to
  ``VAULT_PASSWORD_FILE`` for ``ansible-playbook --vault-password-file``.
- ``PLATFORM_KEY``: a vCluster Platform access key, in the host cluster's Secret ``PLATFORM_SECRET``
  (namespace ``PLATFORM_NAMESPACE``) that the lab inventory names for the private tier
  (``vcluster_tenant_platform_secret``).
- ``RULEBOOK_TOKEN``: the bearer token Alertmanager (role gpu_monitoring) sends to the self-healing rulebook's
  event source; vault-encrypted in ``inventories/lab/group_vars/gpu_monitoring.yml``, given to the rulebook by the
  tests that run it.
- ``NVUE_NATIVE_SECRETS``: secrets a real switch's own config holds (an SNMP community, a BGP session
  password, a local user's password hash), in the NVUE simulation's applied config from the start
  (``nvue_seed``): the collection reads that config, and must never print those parts of it.
"""
from __future__ import annotations

import json

from gpucloud_lab.core import config
from gpucloud_lab.core.util import write_file

LAB_PASSWORD = "lab-pw-7Kq2Vx9Rm4Tn"
VAULT_PASSWORD = "lab-vault-3Hn8Wc5Tz1Pb"
VAULT_PASSWORD_FILE = config.STATE_DIR / "vault-password"
PLATFORM_KEY = "lab-platform-key-9Jd4Ls6Pq2Wx"
PLATFORM_NAMESPACE = "vcluster-platform"
RULEBOOK_TOKEN = "lab-rulebook-token-6Gh3Kd9Mv2"
PLATFORM_SECRET = "vcluster-platform-api-key"
NVUE_NATIVE_SECRETS = {
    "snmp_community": "lab-snmp-community-2Fg7Yb3Nk8",
    "bgp_password": "lab-bgp-password-5Rt1Mz8Qw3",
    "user_hash": "$6$lab-salt$lab-hash-8Vc2Xn6Lp4Hs",
}


def scanned() -> dict[str, str]:
    """Every lab secret by name: what no artifact, job event or callback output of a playbook may contain."""
    return {"lab password (BMC, NVUE)": LAB_PASSWORD, "vault password": VAULT_PASSWORD,
            "vCluster Platform key": PLATFORM_KEY, "rulebook token": RULEBOOK_TOKEN,
            **{f"switch's own {name}": value for name, value in NVUE_NATIVE_SECRETS.items()}}


def write_vault_password_file() -> None:
    """The vault password of the lab inventory, for `--vault-password-file` (0600, root's)."""
    write_file(VAULT_PASSWORD_FILE, VAULT_PASSWORD + "\n", mode=0o600)


def nvue_seed() -> dict:
    """What an NVUE switch's applied config holds before the collection touches it: its own secrets
    (valid NVUE paths of every modelled release: the simulation's schema check accepts them)."""
    s = NVUE_NATIVE_SECRETS
    return {
        "system": {
            "snmp-server": {"readonly-community": {s["snmp_community"]: {"access": {"any": {}}}}},
            "aaa": {"user": {"netops": {"role": "system-admin", "hashed-password": s["user_hash"]}}},
        },
        "vrf": {"default": {"router": {"bgp": {"neighbor": {"198.51.100.254": {
            "type": "numbered", "remote-as": "external", "password": s["bgp_password"]}}}}}},
    }


def platform_key_manifest() -> str:
    """The namespace and Secret of the vCluster Platform access key (kubectl apply input, JSON lines)."""
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": PLATFORM_NAMESPACE}}
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
              "metadata": {"name": PLATFORM_SECRET, "namespace": PLATFORM_NAMESPACE},
              "stringData": {"accessKey": PLATFORM_KEY, "host": "platform.lab.invalid"}}
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [namespace, secret]})
