# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The redfish_system module's decisions: change only what differs, nothing sent in check mode."""
from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision.redfish import Redfish
from ansible_collections.gpucloud.baremetal.plugins.modules import redfish_system
from tests.support.module_args import patch_module_args

ISO = "http://192.0.2.10:8080/vmedia/gpu1.iso"
EMPTY = {"image": "", "inserted": False}
DRIVE = "/redfish/v1/Systems/1/VirtualMedia/Cd"


class FakeClient:
    """What redfish_system.run asks of the Redfish client: ``sent`` records what would change the BMC, ``checked``
    the boot targets asked about (a read). ``drive`` is the virtual CD drive, None for a BMC without one."""
    boot_mode = ""
    name = "gpu1"
    url = "https://192.0.2.11"

    def __init__(self, power: str = "Off", boot: dict | None = None, drive: Mapping | None = MappingProxyType(EMPTY),
                 refused: tuple[str, ...] = ()) -> None:
        self.power = power
        self.boot = boot or {"target": "None", "enabled": "Disabled"}
        self.drive = dict(drive) if drive is not None else None
        self.refused = refused
        self.sent: list[tuple] = []
        self.checked: list[str] = []

    def power_state(self) -> str:
        return self.power

    def boot_override(self) -> dict:
        return dict(self.boot)

    def require_boot_target(self, target: str) -> None:
        self.checked.append(target)  # a read: check mode asks too, so a target the BMC refuses fails there
        if target in self.refused:
            raise redfish_system.RedfishError("gpu1: BMC https://192.0.2.11: the system does not take boot target "
                                              "%s; it lists Pxe, Hdd (nothing was changed)" % target)

    def _where(self) -> str:
        return "%s: BMC %s" % (self.name, self.url)

    def check_media_image(self, image: str) -> None:
        Redfish.check_media_image(self, image)  # the client's own check (it reads only _where)

    def media(self) -> dict:
        if self.drive is None:
            raise redfish_system.RedfishError("gpu1: BMC https://192.0.2.11: lists no virtual CD/DVD drive")
        return dict(self.drive, path=DRIVE)

    def insert_media(self, image: str) -> bool:
        self.sent.append(("insert", image))
        self.drive = {"image": image, "inserted": True}
        return True

    def eject_media(self) -> bool:
        self.sent.append(("eject",))
        self.drive = dict(EMPTY)
        return True

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
    assert checked["changed"] and checked["power_state"] == "On" and fake.sent == []
    assert checked["diff"]["before"]["boot"] == {"target": "None", "enabled": "Disabled"}
    assert checked["diff"]["after"]["boot"] == {"target": "Pxe", "enabled": "Once"}
    assert fake.checked == ["Pxe"]  # check mode asks the BMC whether it takes the target too
    redfish_system.run(fake, "read", "Pxe", check=False, wait=True, wait_timeout=10)
    again = redfish_system.run(fake, "read", "Pxe", check=False, wait=True, wait_timeout=10)
    assert not again["changed"] and fake.sent == [("boot", "Pxe")]
    assert fake.checked == ["Pxe"] * 3  # asked on every run, also when nothing is to change
    assert "media" not in again and "media" not in again["diff"]["before"]


def test_a_boot_target_the_bmc_refuses_fails_before_anything_is_sent_in_check_mode_too() -> None:
    for check in (True, False):
        fake = FakeClient(power="On", refused=("Cd",))
        with pytest.raises(redfish_system.RedfishError, match="does not take boot target Cd"):
            redfish_system.run(fake, "cycle", "Cd", check=check, wait=True, wait_timeout=10, media_image=ISO)
        assert fake.sent == [] and fake.drive == EMPTY  # no ISO inserted into a system that cannot boot it


# --- virtual media --------------------------------------------------------------------------------------------

def test_an_image_is_inserted_once_then_nothing_changes() -> None:
    fake = FakeClient()
    first = redfish_system.run(fake, "read", None, check=False, wait=True, wait_timeout=10, media_image=ISO)
    assert first["changed"] is True and fake.sent == [("insert", ISO)]
    assert first["media"] == {"image": ISO, "inserted": True}
    assert first["diff"]["before"]["media"] == EMPTY and first["diff"]["after"]["media"] == first["media"]
    again = redfish_system.run(fake, "read", None, check=False, wait=True, wait_timeout=10, media_image=ISO)
    assert again["changed"] is False and fake.sent == [("insert", ISO)]
    assert again["diff"]["before"]["media"] == again["diff"]["after"]["media"] == {"image": ISO, "inserted": True}


def test_another_image_or_one_not_inserted_is_replaced() -> None:
    for drive in ({"image": "http://192.0.2.10:8080/vmedia/old.iso", "inserted": True},
                  {"image": ISO, "inserted": False}):
        fake = FakeClient(drive=drive)
        result = redfish_system.run(fake, "read", None, check=False, wait=True, wait_timeout=10, media_image=ISO)
        assert result["changed"] is True and fake.sent == [("insert", ISO)]
        assert result["diff"]["before"]["media"] == drive


def test_the_image_goes_in_before_the_boot_override_and_the_power_cycle() -> None:
    fake = FakeClient(power="On")
    result = redfish_system.run(fake, "cycle", "Cd", check=False, wait=True, wait_timeout=10, media_image=ISO)
    assert result["changed"] is True
    assert fake.sent == [("insert", ISO), ("boot", "Cd"), ("reset", "ForceRestart")]


def test_check_mode_reports_the_insert_and_its_diff_and_sends_nothing() -> None:
    fake = FakeClient(power="On")
    result = redfish_system.run(fake, "cycle", "Cd", check=True, wait=True, wait_timeout=10, media_image=ISO)
    assert result["changed"] is True and fake.sent == [] and fake.drive == EMPTY
    assert result["media"] == {"image": ISO, "inserted": True}
    assert result["diff"]["before"]["media"] == EMPTY
    assert result["diff"]["after"]["media"] == {"image": ISO, "inserted": True}
    full = {"image": ISO, "inserted": True}
    ejecting = redfish_system.run(FakeClient(drive=full), "read", None, check=True, wait=True, wait_timeout=10,
                                  media_eject=True)
    assert ejecting["changed"] is True and ejecting["diff"]["before"]["media"] == full
    assert ejecting["diff"]["after"]["media"] == ejecting["media"] == EMPTY


def test_an_eject_of_an_empty_drive_changes_nothing_and_of_a_full_one_ejects() -> None:
    fake = FakeClient()
    result = redfish_system.run(fake, "read", None, check=False, wait=True, wait_timeout=10, media_eject=True)
    assert result["changed"] is False and fake.sent == [] and result["media"] == EMPTY
    fake = FakeClient(drive={"image": ISO, "inserted": True})
    result = redfish_system.run(fake, "read", None, check=False, wait=True, wait_timeout=10, media_eject=True)
    assert result["changed"] is True and fake.sent == [("eject",)] and result["media"] == EMPTY
    assert fake.drive == EMPTY


def test_a_bmc_without_a_cd_drive_fails_before_anything_is_sent() -> None:
    """No media option: the drive is never asked about (a BMC without one boots by PXE as before)."""
    assert "media" not in redfish_system.run(FakeClient(drive=None), "on", None, check=False, wait=True,
                                             wait_timeout=10)
    for media in ({"media_image": ISO}, {"media_eject": True}):
        fake = FakeClient(power="On", drive=None)
        with pytest.raises(redfish_system.RedfishError, match="lists no virtual CD/DVD drive"):
            redfish_system.run(fake, "cycle", "Cd", check=False, wait=True, wait_timeout=10, **media)
        assert fake.sent == []


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


def test_an_image_and_an_eject_together_are_refused_before_the_bmc_is_asked(capsys) -> None:
    result, printed = run_main(capsys, name="gpu1", retries=0, timeout=1, media_image=ISO, media_eject=True,
                               bmc={"address": "127.0.0.1:9", "username": "admin", "password": PASSWORD})
    assert result["failed"] and result["msg"] == ("gpu1: media_image and media_eject exclude each other; nothing "
                                                  "was changed"), result["msg"]
    assert PASSWORD not in printed


@pytest.mark.parametrize("check", [True, False])
def test_an_image_that_is_no_http_url_fails_in_check_mode_too_before_anything_is_read_or_sent(check: bool) -> None:
    fake = FakeClient()
    fake.drive = dict(EMPTY)
    with pytest.raises(redfish_system.RedfishError, match=r"virtual media image 'ftp://192\.0\.2\.10/gpu1\.iso' is "
                                                          r"not an http\(s\) URL; nothing was changed"):
        redfish_system.run(fake, "cycle", "Cd", check=check, wait=True, wait_timeout=10,
                           media_image="ftp://192.0.2.10/gpu1.iso")
    assert fake.sent == []
