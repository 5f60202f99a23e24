# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The operator-side Prometheus of role gpu_monitoring: scrape jobs with the tenant stamped from the fleet.

Every GPU node's DCGM exporter (the GPU Operator's, on the node's address with hostNetwork) is scraped; every
series gets its tenant from the fleet, never from what the exporter sends:
* a shared node serves several tenants: a series of a GPU that a pod holds gets the tenant whose namespace the
  pod runs in (the exporter's `namespace` label, matched exactly against each shared tenant's namespace); a GPU
  no tenant holds gets no tenant (the operator's series);
* a private node belongs to one tenant, who has root on it and so controls its exporter: every series of the
  node gets that tenant, whatever its labels say.
A `tenant` label sent by the exporter is dropped (with honor_labels off, Prometheus renames a clash with a
target label to `exported_tenant`: both go). `Hostname`, which the self-healing rulebook reads to pick the node
to quarantine, is overwritten with the fleet's node name of the target, so a tenant's exporter cannot name
another node. Relabelling as Prometheus documents it (`metric_relabel_configs`: replace, labeldrop; regexes are
anchored RE2).
"""
from __future__ import annotations

import ipaddress
import re

from ansible_collections.gpucloud.baremetal.plugins.module_utils._gpu.errors import MonitoringError

NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
HOSTNAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$")
DROP_SENT = {"action": "labeldrop", "regex": "tenant|exported_tenant"}


def _address(node: dict, port: int) -> str:
    address = str(node.get("address") or node.get("ip") or "")
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        if not HOSTNAME.fullmatch(address):
            raise MonitoringError([f"node {node.get('name')!r}: address {address!r} is not an IP address or host "
                                   "name"]) from None
        return f"{address}:{port}"
    return f"[{parsed}]:{port}" if parsed.version == 6 else f"{parsed}:{port}"


def scrape_configs(nodes: list, tenants: list, port: int = 9400, interval: str = "") -> list:
    """The DCGM exporter scrape jobs: `dcgm-shared` for the shared nodes, `dcgm-private-<tenant>` per private
    tenant. `nodes`: [{name, address (or ip: the fleet's node record), isolation (shared|private), tenant}];
    `tenants`: the fleet's tenants ({name, isolation, namespace})."""
    problems: list[str] = []
    if not isinstance(port, int) or not 0 < port < 65536:
        problems.append(f"port {port!r}: allowed 1-65535")
    by_name = {}
    problems += ["tenants[%d]: %r is not a fleet tenant (a mapping with its name)" % (i, t)
                 for i, t in enumerate(tenants or []) if not isinstance(t, dict)]
    problems += ["nodes[%d]: %r is not a node (a mapping with its name and address)" % (i, n)
                 for i, n in enumerate(nodes or []) if not isinstance(n, dict)]
    tenants = [t for t in tenants or [] if isinstance(t, dict)]
    nodes = [n for n in nodes or [] if isinstance(n, dict)]
    for tenant in tenants:
        name = str(tenant.get("name", ""))
        if not NAME.fullmatch(name):
            problems.append(f"tenant {name!r}: not a fleet tenant name (lower case letters, digits, '-')")
        by_name[name] = tenant
    seen: set[str] = set()
    shared, private = [], {}
    for node in nodes or []:
        name = str(node.get("name", ""))
        if not name or name in seen:
            problems.append(f"node {name!r}: {'given twice' if name else 'no name'}")
            continue
        seen.add(name)
        if isinstance(node.get("gpu"), dict) and not node["gpu"].get("count"):
            continue  # a node the fleet gives no GPU runs no exporter
        isolation = node.get("isolation", "shared")
        try:
            target = {"targets": [_address(node, port)], "labels": {"node": name}}
        except MonitoringError as err:
            problems += err.problems
            continue
        if isolation == "private":
            tenant = str(node.get("tenant") or "")
            if tenant not in by_name or by_name[tenant].get("isolation") != "private":
                problems.append(f"node {name!r}: private node of {tenant!r}, which is not a private tenant of the "
                                "fleet")
                continue
            private.setdefault(tenant, []).append(target)
        elif isolation == "shared":
            shared.append(target)
        else:
            problems.append(f"node {name!r}: isolation {isolation!r}: allowed shared, private")
    if problems:
        raise MonitoringError(problems)
    common = {"scrape_interval": interval} if interval else {}
    node_as_hostname = {"source_labels": ["node"], "target_label": "Hostname", "action": "replace"}
    jobs = []
    if shared:
        stamp = [{"source_labels": ["namespace"], "regex": re.escape(str(t.get("namespace") or f"tenant-{n}")),
                  "target_label": "tenant", "replacement": n, "action": "replace"}
                 for n, t in sorted(by_name.items()) if t.get("isolation") == "shared"]
        jobs.append({"job_name": "dcgm-shared", **common, "static_configs": shared,
                     "metric_relabel_configs": [DROP_SENT, node_as_hostname, *stamp]})
    for tenant, targets in sorted(private.items()):
        jobs.append({"job_name": f"dcgm-private-{tenant}", **common, "static_configs": targets,
                     "metric_relabel_configs": [DROP_SENT, node_as_hostname,
                                                {"target_label": "tenant", "replacement": tenant,
                                                 "action": "replace"}]})
    return jobs


def tenant_federation(tenant: str, source: str, interval: str = "") -> dict:
    """A tenant's own Prometheus: it federates from the operator's Prometheus only the series stamped with it."""
    if not NAME.fullmatch(str(tenant)):
        raise MonitoringError([f"tenant {tenant!r}: not a fleet tenant name"])
    job = {"job_name": "gpucloud-federate", "honor_labels": True, "metrics_path": "/federate",
           "params": {"match[]": [f'{{tenant="{tenant}"}}']}, "static_configs": [{"targets": [source]}]}
    if interval:
        job["scrape_interval"] = interval
    return {"global": {"external_labels": {"gpucloud_view": tenant}}, "scrape_configs": [job]}


def bcrypt_hash(password: str, existing: str = "") -> str:
    """A bcrypt hash of the password for Prometheus' web config (basic_auth_users); the existing hash when it
    still matches, so that a run that changes nothing writes nothing."""
    try:
        import bcrypt  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise MonitoringError(["the Python package bcrypt is missing on the controller (it comes with paramiko; "
                               "pip install bcrypt)"]) from None
    if not isinstance(password, str) or len(password) < 16:
        raise MonitoringError(["a tenant endpoint password must be a string of at least 16 characters"])
    secret = password.encode()
    if len(secret) > 72:  # bcrypt's limit (the bcrypt package refuses longer ones from 5.0)
        raise MonitoringError(["a tenant endpoint password must be at most 72 bytes (UTF-8), bcrypt's limit; this "
                               "one has %d" % len(secret)])
    if existing:
        try:
            if bcrypt.checkpw(secret, existing.encode()):
                return existing
        except ValueError:
            pass  # not a bcrypt hash: replaced
    return bcrypt.hashpw(secret, bcrypt.gensalt(rounds=10)).decode()
