# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The redfish_system module's decisions: change only what differs, nothing sent in check mode."""
from __future__ import annotations

import pytest

from ansible_collections.gpucloud.baremetal.plugins.modules import redfish_system


class FakeClient:
    def __init__(self, power: str = "Off", boot: dict | None = None) -> None:
        self.power = power
        self.boot = boot or {"target": "None", "enabled": "Disabled"}
        self.sent: list[tuple] = []

    def power_state(self) -> str:
        return self.power

    def boot_override(self) -> dict:
        return dict(self.boot)

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


def test_boot_once_is_set_once_and_check_mode_sends_nothing() -> None:
    fake = FakeClient()
    checked = redfish_system.run(fake, "cycle", "Pxe", check=True, wait=True, wait_timeout=10)
    assert checked["changed"] and checked["power_state"] == "On" and fake.sent == []
    assert checked["diff"]["before"]["boot"] == {"target": "None", "enabled": "Disabled"}
    redfish_system.run(fake, "read", "Pxe", check=False, wait=True, wait_timeout=10)
    again = redfish_system.run(fake, "read", "Pxe", check=False, wait=True, wait_timeout=10)
    assert not again["changed"] and fake.sent == [("boot", "Pxe")]
