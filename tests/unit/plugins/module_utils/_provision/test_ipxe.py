# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The per-host iPXE script: each family's installer arguments pointing at the seed file that family reads (the one
profiles.SEED_FILES says is written), an image profile's deploy arguments whatever its family, the console last,
the initrd named as the kernel line asks for it, every step falling through to the retry, and a profile whose
kernel iPXE could not fetch refused before any script is made."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import ipxe, profiles, tree

BASE = "http://198.51.100.10:8080"
NODE = {"name": "gpu7", "mac": "02:c6:33:64:00:27", "os": "prof"}
SITE = {"domain": "lab.gpucloud.example"}
BOOT = {"kernel": "https://mirror.example/vmlinuz", "initrd": "https://mirror.example/initrd.img",
        "image": "https://mirror.example/os/"}
SEEDS = BASE + "/hosts/gpu7/"


@pytest.mark.parametrize(("family", "args"), [
    ("ubuntu", ["ip=dhcp", "url=https://mirror.example/os/", "autoinstall", "ds=nocloud-net;s=" + SEEDS,
                "cloud-config-url=/dev/null"]),
    ("rocky", ["ip=dhcp", "inst.repo=https://mirror.example/os/", "inst.ks=%sks.cfg" % SEEDS]),
    ("rhel", ["ip=dhcp", "inst.repo=https://mirror.example/os/", "inst.ks=%sks.cfg" % SEEDS]),
    ("debian", ["auto=true", "priority=critical", "url=%spreseed.cfg" % SEEDS, "interface=auto", "hostname=gpu7",
                "domain=lab.gpucloud.example"]),
])
def test_each_family_boots_its_installer_pointed_at_the_seed_it_reads(family: str, args: list[str]) -> None:
    line = ipxe.kernel_args(NODE, family, BOOT, SITE, BASE, "")
    assert line.split(" ") == ["initrd=initrd", *args]
    # The installer is pointed at a file the render writes for this family (NoCloud: at the folder of both).
    assert ipxe.seed_base(BASE, "gpu7") == SEEDS
    written = profiles.SEED_FILES[family]
    wanted = [SEEDS] if family == "ubuntu" else [SEEDS + name for name in written]
    assert [url for url in wanted if url + " " in line + " "] == wanted


@pytest.mark.parametrize("family", ["debian", "rocky", "ubuntu"])
def test_an_image_profile_boots_the_deploy_ramdisk_whatever_its_family(family: str) -> None:
    boot = dict(BOOT, image_kind=True)
    line = ipxe.kernel_args(NODE, family, boot, SITE, BASE, "")
    assert line == "initrd=initrd gpucloud.deploy=%sdeploy.sh gpucloud.mac=02:c6:33:64:00:27" % SEEDS
    script = ipxe.render(NODE, family, boot, SITE, BASE)
    assert "echo gpucloud: deploying gpu7 (prof)\n" in script
    assert "installing" not in script


def test_the_console_comes_last_and_only_when_given() -> None:
    console = "console=tty0 console=ttyS0,115200n8"
    with_console = ipxe.kernel_args(NODE, "rocky", BOOT, SITE, BASE, console)
    assert with_console.endswith("inst.ks=%sks.cfg %s" % (SEEDS, console))
    without = ipxe.render(NODE, "rocky", BOOT, SITE, BASE)
    kernel = next(line for line in without.splitlines() if line.startswith("kernel "))
    assert kernel.endswith("inst.ks=%sks.cfg || goto failed" % SEEDS)  # no empty argument, no double space
    assert "console=" not in without


def test_the_script_loads_the_initrd_under_the_name_the_kernel_line_gives_and_retries_any_failure() -> None:
    script = ipxe.render(NODE, "debian", BOOT, SITE, BASE, "console=ttyS0,115200n8")
    lines = script.split("\n")
    assert lines[0] == "#!ipxe" and script.endswith("reboot\n")
    assert lines[1] == "# Managed by gpucloud.baremetal (role pxe_server): gpu7, OS profile prof"
    assert lines[2] == "echo gpucloud: installing gpu7 (prof)"
    kernel, initrd, boot = lines[3:6]
    assert kernel.startswith("kernel --name linux https://mirror.example/vmlinuz initrd=")
    # UEFI iPXE hands the kernel its initrd by name: the name loaded is the one the command line asks for.
    name = initrd.split()[2]
    assert initrd == "initrd --name %s https://mirror.example/initrd.img || goto failed" % name
    assert " initrd=%s " % name in kernel
    assert kernel.endswith(" || goto failed") and boot == "boot || goto failed"
    assert lines[6:] == [":failed", "echo gpucloud: boot of gpu7 failed; retrying in 10 s", "sleep 10", "reboot", ""]


def test_every_lab_node_s_script_names_its_own_seeds_and_no_other_node(
        site: dict[str, Any], nodes: list[dict[str, Any]]) -> None:
    names = [n["name"] for n in nodes]
    for node in nodes:
        profile = dict(site["os_profiles"][node["os"]], name=node["os"])
        boot = profiles.boot_artifacts(profile, BASE)
        script = ipxe.render(node, profile["family"], boot, site, BASE)
        assert "%s/hosts/%s/" % (BASE, node["name"]) in script
        assert "initrd --name initrd %s || goto failed" % boot["initrd"] in script
        assert [n for n in names if "/hosts/%s/" % n in script] == [node["name"]]


def test_a_kernel_ipxe_could_not_fetch_is_refused_before_any_script_is_made(site, nodes, options) -> None:
    """An operator's path relative to the playbook: neither a URL for iPXE nor a controller file to copy."""
    site["os_profiles"]["rocky9"]["kernel"] = "files/vmlinuz"
    with pytest.raises(ProblemsError) as err:
        tree.render(site, nodes, options)
    assert err.value.problems == [
        "site.os_profiles.rocky9.kernel: 'files/vmlinuz' is neither a URL nor an absolute path"]
