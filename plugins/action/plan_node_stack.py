# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node stack of every GPU node, from role gpu_host's own files (documentation: the module
``plan_node_stack``). An action, because the role's values are Ansible templates: each node's are
templated here, on the controller, with the node's inventory over the role's defaults (the role's
precedence) and the facts its OS profile gives, in one task for the whole fleet."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._plan.nodes import (
    ROLE_PREFIX,
    node_facts,
    node_stack,
    vars_files,
)

ROLE_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "roles", "gpu_host")
ROLE_VAR = re.compile("^%s[a-z]" % ROLE_PREFIX)  # the role's public variables, not its internal gpu_host__*


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("nodes", "role_path"))
    _requires_connection = False

    def run(self, tmp: str | None = None, task_vars: dict | None = None) -> dict:
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        args = self._task.args
        role = args.get("role_path") or ROLE_PATH
        nodes = args.get("nodes")
        gpu_nodes = list(task_vars.get("groups", {}).get("gpu_nodes", []))
        if nodes is None:
            nodes = gpu_nodes
        elif not isinstance(nodes, list) or not all(isinstance(n, str) for n in nodes):
            return dict(result, failed=True, msg="nodes: must be a list of node names (hosts of group gpu_nodes);"
                                                 " nothing was planned")
        unknown = [n for n in nodes if n not in gpu_nodes]
        if unknown:
            return dict(result, failed=True, msg="nodes: %s %s not a GPU node of the inventory (group gpu_nodes); "
                        "nothing was planned" % (", ".join(unknown), "is" if len(unknown) == 1 else "are"))
        try:
            defaults = self._load(os.path.join(role, "defaults", "main.yml"))
            cache: dict[str, tuple[dict, dict]] = {}
            data = {"nodes/%s.yaml" % name: self._node(name, task_vars["hostvars"], role, defaults, cache)
                    for name in nodes}
        except ProblemsError as err:
            return dict(result, failed=True, msg=str(err), problems=err.problems)
        return dict(result, changed=False, data=data)

    def _node(self, name: str, hostvars: Any, role: str, defaults: dict, cache: dict) -> dict:
        # The fleet's node as the inventory plugin made it (data, no template), and only what the role
        # reads of it: never the BMC account, whose vaulted password is neither needed nor decrypted.
        raw = hostvars.raw_get(name)
        fleet = raw["gpucloud_node"]
        node = {"gpu": dict(fleet["gpu"]), "os_profile": dict(fleet["os_profile"])}
        facts = node_facts(node["os_profile"])
        keys = [key for key in raw if ROLE_VAR.match(key)]
        own = {key: hostvars[name][key] for key in keys}  # templated in the node's context
        # Nodes alike (the same OS, GPUs and settings) have the same values: template them once.
        key = json.dumps([node, own], sort_keys=True, default=str)
        if key not in cache:
            variables = dict(defaults, gpucloud_node=node, **facts, **own)
            templar = self._templar.copy_with_new_env(available_variables=variables)
            settings = {k: templar.template(v) for k, v in dict(defaults, **own).items() if ROLE_VAR.match(k)}
            cache[key] = settings, templar.template(self._load(self._first_found(role, facts)))
        settings, family = cache[key]
        return node_stack(name, node, facts, settings, family)

    @staticmethod
    def _first_found(role: str, facts: dict[str, str]) -> str:
        for name in vars_files(facts):
            path = os.path.join(role, "vars", name)
            if os.path.exists(path):
                return path
        raise AnsibleError("%s: none of the vars files %s" % (role, ", ".join(vars_files(facts))))

    def _load(self, path: str) -> dict:
        try:  # ansible-core >= 2.19 loads templates as untrusted unless asked; the role's own files are trusted
            data = self._loader.load_from_file(path, trusted_as_template=True)
        except TypeError:
            data = self._loader.load_from_file(path)
        return dict(data or {})
