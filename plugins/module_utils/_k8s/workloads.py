# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which pods on a node hold work that a power-off or a reinstall of the node would kill.

As ``kubectl drain`` sees it: a DaemonSet's pods and static (mirror) pods stay on a drained node (drain skips
them: ``--ignore-daemonsets``; a mirror pod is the kubelet's, annotated ``kubernetes.io/config.mirror``), and a
finished pod (phase Succeeded or Failed) holds nothing. Every other pod bound to the node is work.
"""

from __future__ import annotations

from typing import Any

MIRROR = "kubernetes.io/config.mirror"
FINISHED = ("Succeeded", "Failed")


def workloads(pods: Any) -> list[str]:
    """``namespace/name`` of the pods that hold work, sorted; ``pods`` are Pod objects (k8s_info resources). What
    the API server answered is not trusted to be well formed: a malformed entry counts as work (refuse, not wipe)."""
    if not isinstance(pods, list):
        raise TypeError("expects a list of Pod objects (kubernetes.core.k8s_info resources)")
    found = []
    for pod in pods:
        meta = pod.get("metadata") if isinstance(pod, dict) else None
        if not isinstance(meta, dict):
            found.append("(a pod the API server answered without metadata)")
            continue
        status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
        if status.get("phase") in FINISHED:
            continue
        annotations = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
        if MIRROR in annotations:
            continue
        owners = meta.get("ownerReferences") if isinstance(meta.get("ownerReferences"), list) else []
        if any(isinstance(o, dict) and o.get("kind") == "DaemonSet" for o in owners):
            continue
        found.append("%s/%s" % (meta.get("namespace", ""), meta.get("name", "")))
    return sorted(found)
