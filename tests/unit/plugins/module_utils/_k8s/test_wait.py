# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``_k8s.wait.wait_for``: polls at its interval until the check gives something truthy, returns that value,
and on timeout fails naming what it awaited, the timeout and the last API error; other errors are not
swallowed. The clock is simulated (no real sleeps); test_tenants.py holds the error-text case of /readyz."""
from __future__ import annotations

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.errors import K8sError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.wait import wait_for


class Clock:
    """A clock that moves only when slept on."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def answers(*values):
    """A check that gives ``values`` in turn (an exception is raised), then the last one for ever."""
    calls = []

    def check():
        value = values[min(len(calls), len(values) - 1)]
        calls.append(value)
        if isinstance(value, Exception):
            raise value
        return value

    check.calls = calls
    return check


def test_returns_the_first_truthy_value_after_falsy_ones_and_errors() -> None:
    clock = Clock()
    check = answers(None, K8sError(["read secret: 503 ServiceUnavailable: etcd"]), {}, 0, "",
                    {"config": "ready"})
    assert wait_for("secret", check, 10, interval=0.25, clock=clock, sleep=clock.sleep) == {"config": "ready"}
    assert len(check.calls) == 6 and clock.slept == [0.25] * 5


def test_a_ready_check_is_called_once_without_sleeping() -> None:
    clock = Clock()
    check = answers(["item"])
    assert wait_for("x", check, 30, clock=clock, sleep=clock.sleep) == ["item"]
    assert len(check.calls) == 1 and clock.slept == []


def test_polls_until_the_deadline_then_says_not_yet_when_nothing_failed() -> None:
    clock = Clock()
    check = answers(False)
    with pytest.raises(K8sError) as err:
        wait_for("tenant control plane in tenant-a", check, 5, interval=0.5, clock=clock, sleep=clock.sleep)
    assert err.value.problems == ["tenant control plane in tenant-a: not ready after 5s (not yet)"]
    assert clock.slept == [0.5] * 10 and len(check.calls) == 11  # the last check is at the deadline
    assert clock.now == 105.0


def test_a_zero_timeout_checks_once() -> None:
    clock = Clock()
    check = answers(None)
    with pytest.raises(K8sError) as err:
        wait_for("x", check, 0, clock=clock, sleep=clock.sleep)
    assert err.value.problems == ["x: not ready after 0s (not yet)"]
    assert len(check.calls) == 1 and clock.slept == []


def test_the_timeout_error_carries_the_last_error_with_all_its_problems() -> None:
    clock = Clock()
    check = answers(K8sError(["first: 500"]), K8sError(["GET /readyz: 401 Unauthorized", "token expired"]), None)
    with pytest.raises(K8sError) as err:
        wait_for("tenant API server /readyz", check, 2.9, interval=1, clock=clock, sleep=clock.sleep)
    # The last check answered "not ready" without an error: the error is said as earlier, the timeout as given.
    assert err.value.problems == [
        "tenant API server /readyz: not ready after 2.9s (not yet; earlier: GET /readyz: 401 Unauthorized; token"
        " expired)"]
    failing = answers(K8sError(["first: 500"]), K8sError(["GET /readyz: 401 Unauthorized", "token expired"]))
    with pytest.raises(K8sError) as err:
        wait_for("tenant API server /readyz", failing, 2.9, interval=1, clock=clock, sleep=clock.sleep)
    assert err.value.problems == [
        "tenant API server /readyz: not ready after 2.9s (GET /readyz: 401 Unauthorized; token expired)"]


def test_errors_other_than_the_apis_are_not_swallowed() -> None:
    clock = Clock()
    check = answers(None, KeyError("clusters"))
    with pytest.raises(KeyError, match="clusters"):
        wait_for("x", check, 60, clock=clock, sleep=clock.sleep)
    assert len(check.calls) == 2


def test_a_failing_wait_is_a_k8s_error_with_the_kubernetes_heading() -> None:
    clock = Clock()
    with pytest.raises(K8sError) as err:
        wait_for("x", answers(None), 1, clock=clock, sleep=clock.sleep)
    assert str(err.value).startswith("Kubernetes API request failed (1 problem):\n  - x: not ready after 1s")
