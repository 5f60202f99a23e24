# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``_runner.run_module``, the one main() of every module: what reaches the result, and what never does."""
from __future__ import annotations

import json

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._runner import run_module
from tests.support.module_args import patch_module_args

SPEC = {"name": {"type": "str", "required": True}, "password": {"type": "str", "default": ""}}
SECRET = "s3cret-Value-42"


class Failed(ProblemsError):
    HEAD = ""


def main(capsys: pytest.CaptureFixture, run, args: dict, **kwargs) -> tuple[int, dict]:
    with patch_module_args(args), pytest.raises(SystemExit) as exited:
        run_module(SPEC, run, **kwargs)
    return exited.value.code, json.loads(capsys.readouterr().out)


def test_the_result_is_what_run_returns(capsys) -> None:
    rc, out = main(capsys, lambda m: {"changed": True, "greeting": "hello " + m.params["name"]}, {"name": "gpu1"})
    assert rc == 0 and out["changed"] is True and out["greeting"] == "hello gpu1"


def test_a_problems_error_is_one_failure_with_every_problem_and_its_details(capsys) -> None:
    def run(_module):
        raise ProblemsError(["nodes[0].mac: 'zz' is not a MAC", "nodes[1].bmc: missing"], found=3)
    rc, out = main(capsys, run, {"name": "x"})
    assert rc == 1 and out["failed"] is True
    assert out["problems"] == ["nodes[0].mac: 'zz' is not a MAC", "nodes[1].bmc: missing"] and out["found"] == 3
    assert out["msg"].startswith("input is invalid (2 problems):\n  - nodes[0].mac")


def test_a_subclass_without_a_heading_reads_as_its_problem(capsys) -> None:
    def run(_module):
        raise Failed("PATCH /redfish/v1/Systems/1 failed with HTTP 428")
    rc, out = main(capsys, run, {"name": "x"})
    assert rc == 1 and out["msg"] == "PATCH /redfish/v1/Systems/1 failed with HTTP 428"


def test_any_other_exception_is_not_caught_it_is_a_bug(capsys) -> None:
    def run(_module):
        raise KeyError("spec")
    with patch_module_args({"name": "x"}), pytest.raises(KeyError):
        run_module(SPEC, run)


def test_a_result_that_says_failed_fails_with_its_own_keys(capsys) -> None:
    rc, out = main(capsys, lambda m: {"failed": True, "msg": "the gate failed", "report": {"passed": False}},
                   {"name": "x"})
    assert rc == 1 and out["failed"] is True and out["msg"] == "the gate failed" and out["report"] == {"passed": False}


DIFF_CASES = [(True, True, True), (True, False, False), (False, True, False), (False, False, False)]


@pytest.mark.parametrize(("diff_mode", "changed", "kept"), DIFF_CASES)
def test_a_diff_is_returned_only_in_diff_mode_and_only_for_a_change(capsys, diff_mode, changed, kept) -> None:
    result = {"changed": changed, "diff": {"before": "a\n", "after": "b\n"}}
    rc, out = main(capsys, lambda m: dict(result), {"name": "x", "_ansible_diff": diff_mode})
    assert rc == 0 and ("diff" in out) is kept


def test_secrets_are_hidden_in_every_output_even_in_a_failure(capsys) -> None:
    def run(module):
        raise ProblemsError("BMC login with %s refused" % module.params["password"], echoed=module.params["password"])
    rc, out = main(capsys, run, {"name": "x", "password": SECRET}, secrets=lambda p: [p["password"]])
    text = json.dumps(out)
    assert rc == 1 and SECRET not in text and "********" in out["msg"], out


def test_without_secrets_the_same_value_would_show(capsys) -> None:
    """The test above can fail: a value not named a secret is printed as given."""
    def run(module):
        raise ProblemsError("BMC login with %s refused" % module.params["password"])
    rc, out = main(capsys, run, {"name": "x", "password": SECRET})
    assert rc == 1 and SECRET in out["msg"]


def test_check_mode_is_always_supported(capsys) -> None:
    rc, out = main(capsys, lambda m: {"changed": False, "check": m.check_mode}, {"name": "x", "_ansible_check_mode": True})
    assert rc == 0 and out["check"] is True


def test_bad_arguments_fail_before_run_is_called(capsys) -> None:
    called = []
    rc, out = main(capsys, lambda m: called.append(1) or {}, {"name": "x", "nmae": "typo"})
    assert rc == 1 and not called and "nmae" in out["msg"], out
