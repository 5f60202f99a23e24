# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Running a module in a test: ``patch_module_args`` (its main() with the given arguments, on every ansible-core we
test), ``ModuleStub`` (the module object a ``run(module)`` function reads: params, check_mode, fail_json) and
``run_unreachable`` (main() against an API that refuses every connection)."""
from __future__ import annotations

import json
from collections.abc import Callable
from types import SimpleNamespace

import pytest

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core before 2.19
    from contextlib import contextmanager
    from unittest import mock

    from ansible.module_utils import basic

    @contextmanager
    def patch_module_args(args):
        with mock.patch.object(basic, "_ANSIBLE_ARGS", json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode()):
            yield


class Failed(Exception):
    """What ``ModuleStub.fail_json`` raises: the result the module failed with."""

    def __init__(self, result: dict):
        super().__init__(result.get("msg"))
        self.result = result


class ModuleStub(SimpleNamespace):
    """``params`` and ``check_mode`` as given; ``fail_json`` raises ``Failed`` with the result."""

    def fail_json(self, **result):
        raise Failed(result)


def run_unreachable(capsys: pytest.CaptureFixture, main: Callable[[], None], **args) -> dict:
    """A Kubernetes module's main() against an unreachable API (a module that got past its arguments fails on the
    connection instead); its printed result."""
    base = {"host": "https://127.0.0.1:9", "request_timeout": 1}
    with patch_module_args({**base, **args}), pytest.raises(SystemExit):
        main()
    return json.loads(capsys.readouterr().out)


__all__ = ["Failed", "ModuleStub", "patch_module_args", "run_unreachable"]
