#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: plan_files
short_description: Write a plan folder, one file per object, and show what changed
version_added: 0.1.0
description:
  - Makes the layers of a plan folder (C(playbooks/plan.yml)) hold exactly the files of a new plan. A file is
    written only when its bytes differ, a file of an object gone from the plan is removed, and nothing outside
    O(layers) is touched.
  - Data is written as YAML with sorted keys, so the same fleet always gives the same bytes.
  - With C(--diff), one diff per file that is created, changed or removed, named by its path in the plan folder.
author:
  - gpucloud.baremetal contributors (@gpucloud)
options:
  dest:
    description: The plan folder; created when missing.
    type: path
    required: true
  layers:
    description:
      - The top-level folders of O(dest) that the plan owns (e.g. C(pxe), C(fabric)). Files under them that are
        not in the new plan are removed; a layer with no file left is emptied. Every file must be in one.
    type: list
    elements: str
    required: true
  data:
    description: Path in the plan folder (C(layer/...)) -> data, written as YAML with sorted keys.
    type: dict
    default: {}
  files:
    description: Path in the plan folder (C(layer/...)) -> text in the object's native format, written as it is.
    type: dict
    default: {}
  trees:
    description:
      - Files rendered elsewhere (by a renderer that writes files), taken into the plan as they are.
      - Each C(src), a file or a folder (all its files), goes to C(dest), a path in the plan folder.
    type: list
    elements: dict
    default: []
    suboptions:
      src:
        description: A file or a folder on the controller.
        type: path
        required: true
      dest:
        description: Where it goes in the plan folder (C(layer/...)).
        type: str
        required: true
attributes:
  check_mode:
    support: full
    description: Writes and removes nothing; the result and the diff say what would change.
  diff_mode:
    support: full
    description: Before and after of every file that changes, with its path as the header.
  platform:
    support: full
    platforms: posix
    description: Runs on the controller (delegated to C(localhost)).
"""

EXAMPLES = r"""
- name: Write the plan
  gpucloud.baremetal.plan_files:
    dest: ~/.cache/gpucloud/plan/fra1
    layers: [fabric, kai]
    data:
      kai/queues.yaml: "{{ queues }}"
    trees:
      - {src: /tmp/stage/fabric, dest: fabric}
  delegate_to: localhost
"""

RETURN = r"""
created:
  description: Files the plan has that the folder did not have.
  returned: always
  type: list
  elements: str
  sample: [vcluster/delta.values.yaml]
updated:
  description: Files whose bytes changed.
  returned: always
  type: list
  elements: str
  sample: [fabric/leaf-r1a.nvue.yaml]
removed:
  description: Files of objects gone from the plan.
  returned: always
  type: list
  elements: str
unchanged:
  description: Number of files already as planned.
  returned: always
  type: int
files:
  description: Number of files in the plan.
  returned: always
  type: int
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._plan.files import merge, read_tree, sync, yaml_text
from ansible_collections.gpucloud.baremetal.plugins.module_utils._runner import run_module

SPEC = {
    "dest": {"type": "path", "required": True},
    "layers": {"type": "list", "elements": "str", "required": True},
    "data": {"type": "dict", "default": {}},
    "files": {"type": "dict", "default": {}},
    "trees": {"type": "list", "elements": "dict", "default": [], "options": {
        "src": {"type": "path", "required": True},
        "dest": {"type": "str", "required": True},
    }},
}


def run(module: AnsibleModule) -> dict:
    p = module.params
    parts = [{path: yaml_text(value) for path, value in p["data"].items()}, p["files"]]
    parts += [read_tree(tree["src"], tree["dest"]) for tree in p["trees"]]
    return sync(p["dest"], p["layers"], merge(parts), check_mode=module.check_mode)


def main() -> None:
    run_module(SPEC, run)


if __name__ == "__main__":
    main()
