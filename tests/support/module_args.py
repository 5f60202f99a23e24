# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``patch_module_args``: run a module's main() with the given arguments, on every ansible-core we test."""
from __future__ import annotations

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core before 2.19
    import json
    from contextlib import contextmanager
    from unittest import mock

    from ansible.module_utils import basic

    @contextmanager
    def patch_module_args(args):
        with mock.patch.object(basic, "_ANSIBLE_ARGS", json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode()):
            yield


__all__ = ["patch_module_args"]
