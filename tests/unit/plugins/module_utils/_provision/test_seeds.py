# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Seeds per OS family, iPXE scripts and the validators that stand between them and a node."""
from __future__ import annotations

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.errors import FleetError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import profiles, tree, validate
from tests.support import inventory_yaml
from tests.support.tools import require

from .conftest import FLEET, KEY


@pytest.fixture
def rendered(site, nodes, options):
    return tree.render(site, nodes, options)


def test_every_family_renders_seeds_that_pass_the_real_validators(rendered) -> None:
    require("cloud-init")
    pytest.importorskip("pykickstart", reason="pykickstart is in tests/requirements.txt")
    files = rendered["files"]
    assert set(files) == {"hosts/gpu1.ipxe", "hosts/gpu1/ks.cfg", "hosts/gpu2.ipxe", "hosts/gpu2/user-data",
                          "hosts/gpu2/meta-data", "hosts/gpu3.ipxe", "hosts/gpu3/user-data", "hosts/gpu3/meta-data",
                          "hosts/gpu4.ipxe", "hosts/gpu4/preseed.cfg", "hosts/gpu4/root-disk.sh"}
    assert "hosts/gpu4/root-disk.sh" not in rendered["seeds"]  # a script, not a seed the preseed rules read
    assert validate.seeds(files, rendered["seeds"]) == []
    user_data = yaml.safe_load(files["hosts/gpu2/user-data"])["autoinstall"]
    assert user_data["network"]["ethernets"]["pxe"]["addresses"] == ["198.51.100.22/24"]
    assert user_data["ssh"]["authorized-keys"] == [KEY]
    assert user_data["user-data"]["phone_home"]["url"] == (
        "http://198.51.100.10:8080/phone-home/gpu2?token=__GPUCLOUD_PHONE_HOME_TOKEN__")
    assert "--ip=198.51.100.21 " in files["hosts/gpu1/ks.cfg"]
    assert "d-i netcfg/get_hostname string gpu4" in files["hosts/gpu4/preseed.cfg"]


def test_ipxe_script_boots_the_profile_kernel_with_the_seed_url(rendered) -> None:
    script = rendered["files"]["hosts/gpu4.ipxe"]
    assert script.startswith("#!ipxe\n")
    assert ("kernel --name linux http://198.51.100.10:8080/os/debian12/linux initrd=initrd auto=true "
            "priority=critical url=http://198.51.100.10:8080/hosts/gpu4/preseed.cfg") in script
    assert "console=ttyS0,115200n8" in script
    kernel = "/usr/lib/debian-installer/images/12/amd64/text/debian-installer/amd64/linux"
    assert rendered["copies"][1] == {"src": kernel, "path": "os/debian12/linux", "sha256": "",
                                     "key": "site.os_profiles.debian12.kernel"}
    assert "inst.ks=http://198.51.100.10:8080/hosts/gpu1/ks.cfg" in rendered["files"]["hosts/gpu1.ipxe"]


def test_cloud_init_schema_catches_a_bad_user_data() -> None:
    require("cloud-init")
    bad = "#cloud-config\nautoinstall:\n  version: 1\n  user-data:\n    users: 5\nruncmd: foo\n"
    problems = validate.cloud_config({"hosts/x/user-data": bad})
    assert any("runcmd: 'foo' is not of type 'array'" in p for p in problems), problems
    assert any("autoinstall.user-data.users" in p for p in problems), problems
    assert validate.cloud_config({"a": "hostname: x\n"}) == ["a: does not start with #cloud-config"]


def test_pykickstart_catches_a_bad_kickstart() -> None:
    pytest.importorskip("pykickstart", reason="pykickstart is in tests/requirements.txt")
    problems = validate.kickstart({"hosts/x/ks.cfg": ("text\nnetwork --bootproto=carrier-pigeon\n", "9.4")})
    assert problems and problems[0].startswith("hosts/x/ks.cfg:") and "carrier-pigeon" in problems[0]


def test_preseed_rules_catch_what_would_stop_an_install() -> None:
    text = "d-i netcfg/get_hostname strin gpu4\nd-i partman/confirm boolean yes\nd-i passwd/username string a\n"
    problems = validate.preseed({"p": text})
    assert "p:1: netcfg/get_hostname: unknown type 'strin'" in problems[0]
    assert any("boolean is true or false, got 'yes'" in p for p in problems)
    assert any("p: mirror/http/hostname is not answered" in p for p in problems)


def test_a_family_without_defaults_needs_its_kernel() -> None:
    with pytest.raises(ProblemsError) as err:
        profiles.boot_artifacts({"name": "rhel9", "family": "rhel", "version": "9"}, "http://x")
    assert "site.os_profiles.rhel9.kernel: required for family rhel" in str(err.value)


def test_an_unknown_os_family_is_rejected_by_the_model() -> None:
    data = inventory_yaml.load(FLEET)
    data["site"]["os_profiles"]["win"] = {"family": "windows", "version": "11"}
    with pytest.raises(FleetError, match=r"site\.os_profiles\.win\.family"):
        load_fleet(data)


def test_bad_seed_options_are_refused_naming_the_field(site, nodes, options) -> None:
    with pytest.raises(ProblemsError) as err:
        tree.render(site, nodes, dict(options, admin_user="root; rm", ssh_keys=["not-a-key"]))
    assert "admin_user: 'root; rm' is not a user name" in str(err.value)
    assert "ssh_keys[0]: not one public key line" in str(err.value)
