# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Virtual media (fleet bmc.boot_target Cd): what the boot server builds a node's deploy ISO from (ipxe.vmedia) - the
kernel and initrd it serves, as paths under its HTTP root, and the iPXE script's kernel line less initrd= with the
node's static address - and the render's vmedia entries, refusing an installer profile and a kernel or initrd the
boot server does not serve, each naming its fleet key."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, pxe_nodes
from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import ipxe, tree
from tests.support import inventory_yaml

from .conftest import FLEET

BASE = "http://198.51.100.10:8080"
NODE = {"name": "gpu7", "mac": "02:c6:33:64:00:27", "ip": "198.51.100.27", "os": "prof"}
SITE = {"domain": "lab.gpucloud.example", "management": {"subnet": "198.51.100.0/24", "gateway": "198.51.100.254"}}
BOOT = {"kernel": BASE + "/deploy/vmlinuz", "initrd": BASE + "/deploy/initrd.gz", "image_kind": True}
CONSOLE = "console=tty0 console=ttyS0,115200n8"
DIGEST = "ab" * 32


# --- ipxe.vmedia ----------------------------------------------------------------------------------------------

def test_the_iso_holds_the_served_kernel_and_initrd_and_the_deploy_line_with_a_static_address() -> None:
    got = ipxe.vmedia(NODE, BOOT, SITE, BASE, CONSOLE)
    assert got == {
        "kernel": "deploy/vmlinuz", "initrd": "deploy/initrd.gz",
        "cmdline": "gpucloud.deploy=%s/hosts/gpu7/deploy.sh gpucloud.mac=02:c6:33:64:00:27 %s "
                   "gpucloud.ip=198.51.100.27/24 gpucloud.gw=198.51.100.254" % (BASE, CONSOLE)}
    # The ISO's boot program hands the kernel its initrd: no initrd= (iPXE's name for it) on the line.
    assert "initrd=" not in got["cmdline"]
    # The line is the iPXE script's otherwise.
    script_line = ipxe.kernel_args(NODE, "debian", BOOT, SITE, BASE, CONSOLE)
    assert got["cmdline"].startswith(script_line.removeprefix("initrd=initrd ") + " gpucloud.ip=")
    # Without a console, no empty word.
    assert ipxe.vmedia(NODE, BOOT, SITE, BASE, "")["cmdline"] == got["cmdline"].replace(" " + CONSOLE, "")


def test_the_prefix_length_is_the_management_subnet_s() -> None:
    site = copy.deepcopy(SITE)
    site["management"].update(subnet="10.20.0.0/22", gateway="10.20.0.1")
    node = dict(NODE, ip="10.20.3.7")
    words = ipxe.vmedia(node, BOOT, site, BASE, "")["cmdline"].split()
    assert words[-2:] == ["gpucloud.ip=10.20.3.7/22", "gpucloud.gw=10.20.0.1"]


@pytest.mark.parametrize(("key", "url"), [
    ("kernel", "http://mirror.example/deploy/vmlinuz"),
    ("initrd", "https://mirror.example/deploy/initrd.gz"),
    ("kernel", "http://198.51.100.10:80801/deploy/vmlinuz"),  # another port that starts like the boot server's
    ("initrd", "http://198.51.100.10:8080deploy/initrd.gz"),
])
def test_a_kernel_or_initrd_the_boot_server_does_not_serve_is_refused_naming_its_key(key: str, url: str) -> None:
    with pytest.raises(ValueError) as err:
        ipxe.vmedia(NODE, dict(BOOT, **{key: url}), SITE, BASE, "")
    assert str(err.value).startswith("site.os_profiles.prof.%s: %s is not served by the boot server (%s/), so it "
                                     "cannot go onto the node's virtual media ISO; give its %s_sha256"
                                     % (key, url, BASE, key)), str(err.value)


# --- tree.render ----------------------------------------------------------------------------------------------

def _fleet(profile: dict[str, Any] | None = None, cd: tuple[int, ...] = (3,)) -> dict[str, Any]:
    """The lab fleet with gpu4 on image profile deb12img (the boot server's deploy ramdisk unless `profile` says
    otherwise) and the nodes at `cd` booted by virtual media."""
    data = inventory_yaml.load(FLEET)
    data["site"]["os_profiles"]["deb12img"] = profile or {
        "family": "debian", "version": "12", "kind": "image", "image_sha256": DIGEST,
        "image": "http://mirror.example/debian-12-genericcloud-amd64.raw.gz"}
    data["nodes"][3]["os"] = "deb12img"
    for i in cd:
        data["nodes"][i]["bmc"]["boot_target"] = "Cd"
    return data


def _render(data: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    model = load_fleet(data)
    return tree.render(copy.deepcopy(model["site"]), pxe_nodes(model), options)


def test_a_virtual_media_node_gets_an_entry_for_its_iso_and_the_others_none(options: dict[str, Any]) -> None:
    out = _render(_fleet(), options)
    assert out["vmedia"] == [{
        "name": "gpu4", "kernel": "deploy/vmlinuz", "initrd": "deploy/initrd.gz",
        "cmdline": "gpucloud.deploy=%s/hosts/gpu4/deploy.sh gpucloud.mac=52:54:00:c6:33:63 "
                   "console=ttyS0,115200n8 gpucloud.ip=198.51.100.24/24 gpucloud.gw=198.51.100.254" % BASE}]
    assert out["deploy_ramdisk"] is True  # the ISO's kernel and initrd: the boot server builds them
    # What the ISO's command line fetches is rendered for the node.
    assert "hosts/gpu4/deploy.sh" in out["files"]
    assert [e["name"] for e in _render(_fleet(cd=()), options)["vmedia"]] == []


def test_a_profile_kernel_fetched_and_checked_by_the_boot_server_goes_onto_the_iso(options: dict[str, Any]) -> None:
    profile = {"family": "debian", "version": "12", "kind": "image", "image_sha256": DIGEST,
               "image": "http://mirror.example/debian-12-genericcloud-amd64.raw.gz",
               "kernel": "http://mirror.example/deploy/vmlinuz", "kernel_sha256": DIGEST,
               "initrd": "http://mirror.example/deploy/initrd.gz", "initrd_sha256": "cd" * 32}
    out = _render(_fleet(profile), options)
    entry = out["vmedia"][0]
    assert (entry["kernel"], entry["initrd"]) == ("os/deb12img/vmlinuz", "os/deb12img/initrd.gz")
    served = {c["path"] for c in out["copies"]}
    assert {entry["kernel"], entry["initrd"]} <= served  # the boot server has them where the ISO build reads them


def test_an_installer_profile_booted_by_virtual_media_is_refused_naming_the_node_s_boot_target(
        options: dict[str, Any]) -> None:
    with pytest.raises(ProblemsError) as err:
        _render(_fleet(cd=(2, 3)), options)  # gpu3: ubuntu2404, an installer profile
    assert err.value.problems == [
        "nodes.gpu3.bmc.boot_target: Cd (virtual media) boots the deploy ramdisk of an image profile, but OS profile "
        "ubuntu2404 is kind installer; give the node an image profile or boot it by Pxe or UefiHttp"]


def test_a_profile_kernel_not_served_by_the_boot_server_is_refused_naming_the_profile_key(
        options: dict[str, Any]) -> None:
    profile = {"family": "debian", "version": "12", "kind": "image", "image_sha256": DIGEST,
               "image": "http://mirror.example/debian-12-genericcloud-amd64.raw.gz",
               "kernel": "http://mirror.example/deploy/vmlinuz", "initrd": "http://mirror.example/deploy/initrd.gz"}
    _render(_fleet(profile, cd=()), options)  # by PXE, iPXE fetches them from the mirror: fine
    with pytest.raises(ProblemsError) as err:
        _render(_fleet(profile), options)
    assert len(err.value.problems) == 1
    assert err.value.problems[0].startswith(
        "site.os_profiles.deb12img.kernel: http://mirror.example/deploy/vmlinuz is not served by the boot server "
        "(%s/)" % BASE), err.value.problems


def test_every_refused_node_is_listed(options: dict[str, Any]) -> None:
    profile = {"family": "debian", "version": "12", "kind": "image", "image_sha256": DIGEST,
               "image": "http://mirror.example/debian-12-genericcloud-amd64.raw.gz",
               "kernel": "http://mirror.example/deploy/vmlinuz", "initrd": "http://mirror.example/deploy/initrd.gz"}
    with pytest.raises(ProblemsError) as err:
        _render(_fleet(profile, cd=(0, 3)), options)
    assert [p.split(":", 1)[0] for p in err.value.problems] == ["nodes.gpu1.bmc.boot_target",
                                                                "site.os_profiles.deb12img.kernel"]
