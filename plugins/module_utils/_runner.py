# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one ``main()`` of every module of the collection.

Private to the collection. A module describes its options and hands a ``run(module) -> dict``
to ``run_module``: the argument spec is parsed, values that must never be printed are added to
``no_log_values`` before anything runs, ``ProblemsError`` (the root of every domain error)
becomes one ``fail_json`` with its ``problems``, a result that says ``failed`` fails with its
own keys, and a ``diff`` is returned only in diff mode and only for a change (what the default
callback shows).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ansible.module_utils.basic import AnsibleModule

from ._errors import ProblemsError


def run_module(
    spec: dict,
    run: Callable[[AnsibleModule], dict],
    secrets: Callable[[dict], Iterable[str]] | None = None,
    **module_options: Any,
) -> None:
    """Parse ``spec``, hide ``secrets(params)``, call ``run`` and exit with its result.

    ``module_options``: further ``AnsibleModule`` keywords (``mutually_exclusive``,
    ``required_if``...); check mode is always supported.
    """
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True, **module_options)
    if secrets is not None:
        module.no_log_values.update(str(v) for v in secrets(module.params) if v)
    try:
        result = run(module)
    except ProblemsError as err:
        module.fail_json(msg=str(err), problems=err.problems, **err.details)
    if "diff" in result and not (module._diff and result.get("changed")):
        result.pop("diff")
    if result.pop("failed", False):
        module.fail_json(**result)
    module.exit_json(**result)
