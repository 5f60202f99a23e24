# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The root disk: hints checked by the fleet model, chosen on the node by the seeds' script, and the only
disk each installer partitions. The script runs here in the shells the installers run it in (busybox ash
for debian-installer, bash for anaconda and subiquity, and dash) against a sysfs tree laid out as the
kernel's (block/<disk>/{size,removable,ro,device/serial,device/model,wwid}, /dev/disk/by-path links)."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.errors import FleetError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import rootdisk, tree, validate
from tests.support import inventory_yaml
from tests.support.tools import require

from .conftest import FLEET

SHELLS = {"busybox": ["busybox", "sh"], "dash": ["dash"], "bash": ["bash"]}
GIB = 2097152  # 512-byte sectors


def _disk(root: Path, name: str, gib: int, serial: str = "", model: str = "", wwid: str = "",
          removable: int = 0, ro: int = 0, by_path: str = "") -> None:
    d = root / "sys" / "block" / name
    (d / "device").mkdir(parents=True)
    (d / "size").write_text("%d\n" % (gib * GIB))
    (d / "removable").write_text("%d\n" % removable)
    (d / "ro").write_text("%d\n" % ro)
    if serial:
        (d / "device" / "serial").write_text("  %s  \n" % serial)  # NVMe pads it with spaces
    if model:
        (d / "device" / "model").write_text("%-40s\n" % model)
    if wwid:
        (d / "wwid").write_text(wwid + "\n")
    (root / "dev").mkdir(exist_ok=True)
    (root / "dev" / name).write_text("")
    if by_path:
        links = root / "dev" / "disk" / "by-path"
        links.mkdir(parents=True, exist_ok=True)
        (links / by_path).symlink_to("../../%s" % name)
        (links / (by_path + "-part1")).symlink_to("../../%s" % name)


@pytest.fixture
def gpu_server(tmp_path: Path) -> Path:
    """A GPU server as shipped: a 447 GiB M.2 boot SSD, a 894 GiB SATA SSD, eight 3.5 TiB data NVMe, a
    USB stick and the installer's own loop and RAM disks."""
    _disk(tmp_path, "nvme8n1", 447, serial="S5GXNG0R1", model="SAMSUNG MZ1L2480HCHQ",
          wwid="eui.002538b121b1c2d3", by_path="pci-0000:c1:00.0-nvme-1")
    _disk(tmp_path, "sda", 894, serial="BTYF1234", model="INTEL SSDSC2KG96", by_path="pci-0000:00:17.0-ata-1")
    for i in range(8):
        _disk(tmp_path, "nvme%dn1" % i, 3576, serial="PHAB%04d" % i, model="Dell Ent NVMe CM6 RI 3.84TB",
              by_path="pci-0000:%02x:00.0-nvme-1" % (0x20 + i))
    _disk(tmp_path, "sdb", 29, serial="USB0001", model="Cruzer", removable=1)
    _disk(tmp_path, "loop0", 2, serial="", model="")
    _disk(tmp_path, "ram0", 64)
    return tmp_path


def run(root: Path, hints: dict[str, Any], shell: str = "busybox") -> tuple[int, str, str]:
    """(exit code, chosen disk, message) of the node's script under ``shell``."""
    cmd = SHELLS[shell]
    require(cmd[0])
    script = root / "root-disk.sh"
    script.write_text(rootdisk.script("gpu1", hints))
    out = root / "chosen"
    for f in (out, Path(str(out) + ".error")):
        f.unlink(missing_ok=True)
    env = dict(os.environ, GPUCLOUD_SYSFS=str(root / "sys"), GPUCLOUD_DEVDIR=str(root / "dev"))
    proc = subprocess.run([*cmd, str(script), str(out)], env=env, capture_output=True, text=True, check=False)
    return proc.returncode, out.read_text().strip() if out.exists() else "", proc.stderr


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_without_hints_the_smallest_disk_of_the_minimum_size_is_chosen_never_a_data_nvme(gpu_server, shell) -> None:
    rc, chosen, message = run(gpu_server, {}, shell)
    assert (rc, chosen) == (0, "/dev/nvme8n1"), message
    rc, chosen, message = run(gpu_server, {"min_size_gb": 500}, shell)
    assert (rc, chosen) == (0, "/dev/sda"), message


@pytest.mark.parametrize("shell", sorted(SHELLS))
@pytest.mark.parametrize(("hints", "disk"), [
    ({"serial": "BTYF1234"}, "/dev/sda"),
    ({"serial": "PHAB0003"}, "/dev/nvme3n1"),
    ({"wwn": "eui.002538b121b1c2d3"}, "/dev/nvme8n1"),
    ({"model": "INTEL SSDSC2KG96"}, "/dev/sda"),
    ({"size_gb": 894}, "/dev/sda"),
    ({"by_path": "/dev/disk/by-path/pci-0000:23:00.0-nvme-1"}, "/dev/nvme3n1"),
    ({"model": "Dell Ent NVMe CM6 RI 3.84TB", "by_path": "/dev/disk/by-path/pci-0000:27:00.0-nvme-1"}, "/dev/nvme7n1"),
])
def test_hints_choose_exactly_the_disk_they_name(gpu_server, shell, hints, disk) -> None:
    rc, chosen, message = run(gpu_server, hints, shell)
    assert (rc, chosen) == (0, disk), message


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_two_matches_or_none_fail_naming_every_disk_and_choose_nothing(gpu_server, shell) -> None:
    rc, chosen, message = run(gpu_server, {"model": "Dell Ent NVMe CM6 RI 3.84TB"}, shell)
    assert rc == 1 and chosen == ""
    assert "8 disks match (nvme0n1 nvme1n1" in message and "refusing to partition anything" in message
    for disk in ("nvme8n1 (serial S5GXNG0R1, wwn eui.002538b121b1c2d3, model SAMSUNG MZ1L2480HCHQ, 447 GiB, "
                 "by-path /dev/disk/by-path/pci-0000:c1:00.0-nvme-1)", "sda (serial BTYF1234"):
        assert disk in message
    assert "sdb" not in message and "loop0" not in message and "ram0" not in message  # never candidates
    rc, chosen, message = run(gpu_server, {"serial": "USB0001"}, shell)  # the removable stick
    assert (rc, chosen) == (1, "") and "no disk matches hints serial=USB0001" in message
    # Two boot disks of one size and no hint: which one is not guessed.
    _disk(gpu_server, "nvme9n1", 447, serial="S5GXNG0R2")
    rc, chosen, message = run(gpu_server, {}, shell)
    assert (rc, chosen) == (1, "") and "2 disks match (nvme8n1 nvme9n1)" in message


def test_the_script_is_clean_under_shellcheck_for_sh_and_bash(tmp_path) -> None:
    shellcheck = require("shellcheck")
    for i, hints in enumerate([{}, {"serial": "A1"}, {"model": "A B", "size_gb": 10, "min_size_gb": 5}]):
        path = tmp_path / ("s%d.sh" % i)
        path.write_text(rootdisk.script("gpu1", hints))
        for shell in ("sh", "bash"):
            proc = subprocess.run([shellcheck, "-s", shell, str(path)], capture_output=True, text=True, check=False)
            assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize(("hints", "message"), [
    ({}, r"nodes\[0\]\.root_device: is empty"),
    ({"serial": "A1'; reboot #"}, r"nodes\[0\]\.root_device\.serial: .* is not a disk serial number"),
    ({"model": "$(reboot)"}, r"nodes\[0\]\.root_device\.model: .* is not a disk model"),
    ({"by_path": "/dev/sda"}, r"nodes\[0\]\.root_device\.by_path: '/dev/sda' is not a /dev/disk/by-path/"),
    ({"size_gb": 0}, r"nodes\[0\]\.root_device\.size_gb: 0 is outside 1\.\.1048576"),
    ({"size_gb": 100, "min_size_gb": 200}, r"nodes\[0\]\.root_device\.size_gb: 100 is below min_size_gb 200"),
    ({"hctl": "0:0:0:0"}, r"nodes\[0\]\.root_device.*hctl"),
])
def test_bad_hints_are_refused_naming_the_field(hints, message) -> None:
    data = inventory_yaml.load(FLEET)
    data["nodes"][0]["root_device"] = hints
    with pytest.raises(FleetError, match=message):
        load_fleet(data)


def test_bad_nameservers_are_refused_naming_the_field() -> None:
    data = inventory_yaml.load(FLEET)
    data["site"]["management"]["nameservers"] = ["192.0.2.53", "dns.example"]
    with pytest.raises(FleetError, match=r"site\.management\.nameservers\[1\]: 'dns\.example' is not a valid IPv4"):
        load_fleet(data)
    data["site"]["management"]["nameservers"] = ["192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"]
    with pytest.raises(FleetError, match=r"site\.management\.nameservers: must be a list of 1 to 3"):
        load_fleet(data)


@pytest.fixture
def hinted(site, nodes, options) -> dict[str, Any]:
    """The lab's nodes with the node's own hints on gpu1 (kickstart) and the profile's on the others."""
    site["management"]["nameservers"] = ["192.0.2.53", "192.0.2.54"]
    for profile in site["os_profiles"].values():
        profile["root_device"] = {"serial": "BTYF1234"}
    nodes[0]["root_device"] = {"wwn": "eui.002538b121b1c2d3"}
    return tree.render(site, nodes, options)


def _chosen_by(gpu_server: Path, script: str, tmp_path: Path) -> Path:
    """Run a seed's own script text (its /tmp files moved under tmp_path) with bash against the server."""
    body = script.replace("/tmp/", "%s/" % tmp_path)
    env = dict(os.environ, GPUCLOUD_SYSFS=str(gpu_server / "sys"), GPUCLOUD_DEVDIR=str(gpu_server / "dev"))
    proc = subprocess.run([require("bash"), "-c", body], env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return tmp_path


def test_kickstart_partitions_only_the_disk_pre_chose_without_swap(hinted, gpu_server, tmp_path) -> None:
    pytest.importorskip("pykickstart", reason="pykickstart is in tests/requirements.txt")
    from pykickstart.parser import KickstartParser
    from pykickstart.version import makeVersion

    ks = hinted["files"]["hosts/gpu1/ks.cfg"]
    assert "clearpart --all --initlabel\n" not in ks and "autopart --type=lvm --noswap" in ks
    assert "--nameserver=192.0.2.53,192.0.2.54 " in ks
    pre = re.search(r"^%pre --erroronfail[^\n]*\n(.*?)^%end$", ks, re.S | re.M).group(1)
    _chosen_by(gpu_server, pre, tmp_path)
    include = (tmp_path / "gpucloud-disk.ks").read_text()
    # anaconda reads the %include after %pre: the kickstart as it parses it then, with RHEL 9's grammar.
    handler = makeVersion("RHEL9")
    KickstartParser(handler).readKickstartFromString(ks.replace("%include /tmp/gpucloud-disk.ks", include))
    assert handler.ignoredisk.onlyuse == ["nvme8n1"]
    assert handler.clearpart.drives == ["nvme8n1"]
    assert handler.bootloader.bootDrive == "nvme8n1"
    assert handler.autopart.noswap is True
    assert validate.seeds(hinted["files"], hinted["seeds"]) == []


def test_autoinstall_matches_the_chosen_disk_and_makes_no_swapfile(hinted, gpu_server, tmp_path) -> None:
    doc = yaml.safe_load(hinted["files"]["hosts/gpu2/user-data"])
    auto = doc["autoinstall"]
    assert auto["storage"]["swap"] == {"size": 0}
    assert auto["network"]["ethernets"]["pxe"]["nameservers"]["addresses"] == ["192.0.2.53", "192.0.2.54"]
    select, rewrite = auto["early-commands"]
    _chosen_by(gpu_server, select, tmp_path)
    # subiquity re-reads /autoinstall.yaml after the early commands: the placeholder is the chosen disk then.
    (tmp_path / "autoinstall.yaml").write_text(yaml.safe_dump(auto))
    subprocess.run(["bash", "-c", rewrite.replace("/tmp/", "%s/" % tmp_path)
                    .replace("/autoinstall.yaml", "%s/autoinstall.yaml" % tmp_path)], check=True)
    after = yaml.safe_load((tmp_path / "autoinstall.yaml").read_text())
    assert after["storage"]["layout"] == {"name": "lvm", "match": {"path": "/dev/sda"}}


def test_preseed_fetches_the_script_sets_partmans_disk_and_a_static_address(hinted, gpu_server, tmp_path) -> None:
    text = hinted["files"]["hosts/gpu4/preseed.cfg"]
    answers = {line.split()[1]: line.split(None, 3)[3] if len(line.split(None, 3)) > 3 else ""
               for line in text.splitlines() if line and not line.startswith("#")}
    assert answers["partman/early_command"].startswith("preseed_fetch root-disk.sh /tmp/gpucloud-root-disk.sh && ")
    assert 'debconf-set partman-auto/disk "$(cat /tmp/gpucloud-root-disk)"' in answers["partman/early_command"]
    assert answers["partman-auto/choose_recipe"] == "gpucloud" and "swap" not in answers["partman-auto/expert_recipe"]
    assert "method{ efi }" in answers["partman-auto/expert_recipe"]
    assert answers["partman-basicfilesystems/no_swap"] == "false"
    assert answers["preseed/early_command"] == "kill-all-dhcp; netcfg"
    assert answers["netcfg/get_ipaddress"] == "198.51.100.24"
    assert answers["netcfg/get_nameservers"] == "192.0.2.53 192.0.2.54"
    script = hinted["files"]["hosts/gpu4/root-disk.sh"]
    assert "serial=BTYF1234" in script.splitlines()[1]
    _chosen_by(gpu_server, script, tmp_path)
    assert (tmp_path / "gpucloud-root-disk").read_text().strip() == "/dev/sda"
