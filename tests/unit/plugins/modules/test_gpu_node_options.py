# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_operator_status and gpu_consistency take of a node only the fields they compare: a node entry that
carries anything else (a MAC, a BMC) is refused before the module talks to any cluster."""

from __future__ import annotations

import json

import pytest

from ansible_collections.gpucloud.baremetal.plugins.modules import gpu_consistency, gpu_operator_status
from tests.support.module_args import patch_module_args


def run_main(capsys: pytest.CaptureFixture, main, **args) -> dict:
    # An unreachable API: a module that got past its arguments would fail on the connection instead.
    base = {"host": "https://127.0.0.1:9", "request_timeout": 1}
    with patch_module_args({**base, **args}), pytest.raises(SystemExit):
        main()
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("main, node", [
    (gpu_operator_status.main, {"name": "gpu2", "count": 8, "mac": "52:54:00:00:00:02"}),
    (gpu_operator_status.main, {"name": "gpu2", "gpu": {"count": 8}, "bmc": {"address": "10.0.2.22"}}),
    (gpu_consistency.main, {"name": "gpu2", "gpu": {"count": 8}, "tenant": None, "bmc": {"address": "10.0.2.22"}}),
    (gpu_consistency.main, {"name": "gpu2", "gpu": {"count": 8, "model": "H100"}}),
])
def test_a_node_with_fields_the_module_does_not_compare_is_refused(capsys, main, node):
    result = run_main(capsys, main, nodes=[node])
    assert result["failed"] and result["msg"].startswith("Unsupported parameters"), result["msg"]


@pytest.mark.parametrize("main, node", [
    (gpu_operator_status.main, {"name": "gpu2", "count": 8}),
    (gpu_operator_status.main, {"name": "gpu2", "gpu": {"count": 8, "model": "H100", "driver": "operator"}}),
    (gpu_consistency.main, {"name": "gpu1", "gpu": {"count": 8}, "tenant": "acme"}),
])
def test_the_fields_a_module_compares_are_taken(capsys, main, node):
    result = run_main(capsys, main, nodes=[node], wait=False) if main is gpu_operator_status.main else \
        run_main(capsys, main, nodes=[node])
    assert result["failed"] and "Unsupported parameters" not in result["msg"], result["msg"]
