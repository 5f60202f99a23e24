#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: pxe_boot_files
short_description: Serve the per-node boot files of a fleet from one archive, swapped in atomically
version_added: 0.1.0
description:
  - On the boot server, compares the served per-node boot files (iPXE scripts, seeds) with O(manifest)
    by content hash, mode and group, and, when anything differs, unpacks O(src) (the archive
    M(gpucloud.baremetal.pxe_render) wrote with O(gpucloud.baremetal.pxe_render#module:archive=true))
    into a new version folder under O(store), checks every file against O(manifest), and points the
    O(link) symlink at it with one rename. Files of nodes that are no longer in the manifest go with
    the old version.
  - A second run with the same files changes nothing (hashes are compared, not times).
author:
  - gpucloud.baremetal contributors (@gpucloud)
options:
  src:
    description: The archive (C(.tar.gz)) on the boot server. Not read in check mode, nor when nothing differs.
    type: path
    required: true
  link:
    description:
      - The served path (under the HTTP root), made a relative symlink to the current version folder.
        A plain folder there (an older release's) is replaced.
    type: path
    required: true
  store:
    description: Folder of the version folders (outside the HTTP root).
    type: path
    required: true
  manifest:
    description: Path (relative to O(link)) -> SHA-256 of every file to serve.
    type: dict
    required: true
  mode:
    description:
      - Mode of the files (seeds may hold secrets; not world-readable by default).
      - An octal string (C("0640")) or, as M(ansible.builtin.file) takes it, a number (an unquoted C(0640) in YAML
        is the number 416, which is mode 0640).
    type: raw
    default: "0640"
  directory_mode:
    description: Mode of the folders, as O(mode).
    type: raw
    default: "0750"
  group:
    description: Group of the files and folders (the web server's); unchanged when not given.
    type: str
attributes:
  check_mode:
    support: full
    description: Compares only; C(changed) and the diff say what would change.
  diff_mode:
    support: full
    description: One line per file that differs, with its node; hashes, never content.
  platform:
    support: full
    platforms: posix
    description: Runs on the boot server (Python's standard library only).
notes:
  - The role M(gpucloud.baremetal.pxe_server) copies the archive, then runs this module.
"""

EXAMPLES = r"""
- name: Serve the boot files
  gpucloud.baremetal.pxe_boot_files:
    src: /srv/gpucloud/boot-files.tar.gz
    link: /srv/gpucloud/http/hosts
    store: /srv/gpucloud/boot-files
    manifest: "{{ rendered.manifest }}"
    group: www-data
"""

RETURN = r"""
nodes:
  description: Nodes whose files were (or would be) added, changed or removed.
  returned: always
  type: list
  elements: str
added:
  description: Files new to the boot server.
  returned: always
  type: list
  elements: str
changed_files:
  description: Files whose content differs.
  returned: always
  type: list
  elements: str
removed:
  description: Files (and folders, ending in C(/)) of nodes no longer served.
  returned: always
  type: list
  elements: str
attributes:
  description: Files and folders whose mode or group was wrong.
  returned: always
  type: list
  elements: str
version:
  description: The version folder now served (not in check mode).
  returned: changed
  type: str
"""

import grp
import re
import tarfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import bootfiles
from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision.errors import BootFilesError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._runner import run_module

SPEC = {
    "src": {"type": "path", "required": True},
    "link": {"type": "path", "required": True},
    "store": {"type": "path", "required": True},
    "manifest": {"type": "dict", "required": True},
    "mode": {"type": "raw", "default": "0640"},
    "directory_mode": {"type": "raw", "default": "0750"},
    "group": {"type": "str"},
}


def file_mode(value: object, name: str) -> int:
    """A mode as ansible.builtin.file takes it: an octal string, or a number (YAML reads an unquoted 0640 as 416)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 0o7777:
        return value
    if isinstance(value, str) and re.fullmatch(r"[0-7]{3,4}", value):
        return int(value, 8)
    raise BootFilesError("%s: %r is not a mode; give an octal string such as '0640' (or the number YAML makes of an "
                         "unquoted 0640)" % (name, value))


def run(module: AnsibleModule) -> dict:
    p = module.params
    mode, dir_mode = file_mode(p["mode"], "mode"), file_mode(p["directory_mode"], "directory_mode")
    gid = None
    if p["group"]:
        try:
            gid = grp.getgrnam(p["group"]).gr_gid
        except KeyError:
            raise BootFilesError("group %r does not exist on %s" % (p["group"], p["link"])) from None
    files_manifest = {str(k): str(v) for k, v in p["manifest"].items()}
    result = bootfiles.compare(p["link"], files_manifest, mode, dir_mode, gid)
    changed = bootfiles.is_changed(result)
    out = {"changed": changed, "nodes": result["nodes"], "added": result["added"],
           "changed_files": result["changed"], "removed": result["removed"], "attributes": result["attributes"]}
    if changed and module._diff:
        out["diff"] = bootfiles.diff(result, files_manifest, p["link"])
    if changed and not module.check_mode:
        try:
            out["version"] = bootfiles.apply(p["src"], p["link"], p["store"], files_manifest, mode, dir_mode, gid)
        except (ValueError, OSError, EOFError, tarfile.TarError) as exc:
            # the served link moves only after a whole version is unpacked: nothing served changed
            out["changed"] = False
            raise BootFilesError("%s: boot files not changed: %s" % (p["link"], exc), **out) from None
    return out


def main() -> None:
    run_module(SPEC, run)


if __name__ == "__main__":
    main()
