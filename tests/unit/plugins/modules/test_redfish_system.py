# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The redfish_system module's decisions: change only what differs, nothing sent in check mode."""
from __future__ import annotations

import json

import pytest

from ansible_collections.gpucloud.baremetal.plugins.modules import redfish_system
from tests.support.module_args import patch_module_args


class FakeClient:
    boot_mode = ""
    name = "gpu1"
    url = "https://192.0.2.11"

    def __init__(self, power: str = "Off", boot: dict | None = None) -> None:
        self.power = power
        self.boot = boot or {"target": "None", "enabled": "Disabled"}
        self.sent: list[tuple] = []

    def power_state(self) -> str:
        return self.power

    def boot_override(self) -> dict:
        return dict(self.boot)

    def require_boot_target(self, target: str) -> None:
        self.sent.append(("checked", target))  # a read: check mode asks too, so a target the BMC refuses fails there

    def set_boot_once(self, target: str) -> None:
        self.sent.append(("boot", target))
        self.boot = {"target": target, "enabled": "Once"}

    def reset(self, reset_type: str) -> None:
        self.sent.append(("reset", reset_type))
        self.power = "Off" if "Off" in reset_type or "Shutdown" in reset_type else "On"

    def wait_power(self, want: str, timeout: float) -> str:
        assert self.power == want
        return want


@pytest.mark.parametrize("power, before, reset, changed", [
    ("on", "Off", "On", True), ("on", "On", None, False), ("off", "On", "ForceOff", True), ("off", "Off", None, False),
    ("cycle", "On", "ForceRestart", True), ("cycle", "Off", "On", True), ("read", "On", None, False),
])
def test_power_changes_only_what_differs(power, before, reset, changed) -> None:
    fake = FakeClient(power=before)
    result = redfish_system.run(fake, power, None, check=False, wait=True, wait_timeout=10)
    assert result["changed"] is changed
    assert fake.sent == ([("reset", reset)] if reset else [])


@pytest.mark.parametrize("state", ["PoweringOn", "PoweringOff", "Paused", "Unknown", "on"])
def test_a_cycle_from_a_state_neither_on_nor_off_is_refused_before_anything_is_sent(state: str) -> None:
    """'On' sent to a server that runs is a no-op: reported as a cycle, the install would never start."""
    fake = FakeClient(power=state)
    with pytest.raises(redfish_system.RedfishError) as err:
        redfish_system.run(fake, "cycle", "Pxe", check=False, wait=True, wait_timeout=10)
    assert str(err.value) == ("gpu1: BMC https://192.0.2.11: power state %r is neither On nor Off; a power cycle "
                              "needs one of them (try again once it settled); nothing was changed" % state)
    assert fake.sent == []


def test_boot_once_is_set_once_and_check_mode_sends_nothing() -> None:
    fake = FakeClient()
    checked = redfish_system.run(fake, "cycle", "Pxe", check=True, wait=True, wait_timeout=10)
    assert checked["changed"] and checked["power_state"] == "On" and fake.sent == [("checked", "Pxe")]
    assert checked["diff"]["before"]["boot"] == {"target": "None", "enabled": "Disabled"}
    fake.sent.clear()
    redfish_system.run(fake, "read", "Pxe", check=False, wait=True, wait_timeout=10)
    again = redfish_system.run(fake, "read", "Pxe", check=False, wait=True, wait_timeout=10)
    assert not again["changed"] and fake.sent == [("boot", "Pxe")]


PASSWORD = "bmc-Pa55-w0rd-unit"


def run_main(capsys: pytest.CaptureFixture, **args) -> tuple[dict, str]:
    with patch_module_args(args), pytest.raises(SystemExit):
        redfish_system.main()
    printed = capsys.readouterr().out
    return json.loads(printed), printed


@pytest.mark.parametrize("args, problem", [
    ({"power": "bogus"}, "value of power must be one of"),
    ({"bmc": {"address": "127.0.0.1:9", "username": "admin", "password": PASSWORD, "port": 623}},
     "Unsupported parameters for (basic.py) module: bmc.port"),
    ({"bmc": {"address": "127.0.0.1:9", "username": "admin", "password": PASSWORD, "validate_certs": "maybe"}},
     "validate_certs"),
    ({"wait_timeout": "soon"}, "wait_timeout"),
])
def test_a_wrong_argument_fails_without_returning_the_password(capsys, args, problem):
    """An argument error is answered before the module runs: the password must not be in it either
    (AnsibleModule returns the arguments it got as invocation.module_args)."""
    base = {"name": "gpu1", "bmc": {"address": "127.0.0.1:9", "username": "admin", "password": PASSWORD}}
    result, printed = run_main(capsys, **{**base, **args})
    assert result["failed"] and problem in result["msg"], result["msg"]
    assert PASSWORD not in printed
    assert result["invocation"]["module_args"]["bmc"]["password"] == "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"


def test_an_unreachable_bmc_fails_naming_it_without_the_password(capsys):
    result, printed = run_main(capsys, name="gpu1", retries=0, timeout=1,
                               bmc={"address": "127.0.0.1:9", "username": "admin", "password": PASSWORD})
    assert result["failed"] and "gpu1: BMC https://127.0.0.1:9" in result["msg"], result["msg"]
    assert PASSWORD not in printed
