# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The deploy ramdisk, built by role pxe_server's own script (files/deploy-ramdisk/build.sh) from Debian's
packages with the role's module list, booted for real: Debian's kernel on a QEMU machine (TCG) with a virtio disk
of serial S5GXNG0R1 and a virtio NIC of gpu4's MAC. Its NIC is QEMU's user network with ``restrict=on`` (no way
out) and one forward, 10.0.2.100:8080 -> an HTTP server on this machine's loopback, which serves what the boot
server would: the image (its checked copy under os/<profile>/) and the node's deploy.sh and seed, the token in
place. The ramdisk takes an address by DHCP, fetches deploy.sh, writes the image and reboots (QEMU stops on
reboot); the disk is then read here. Not a lab test: it needs root only to mount the written root file system.

The ramdisk is built once per build inputs (script, init, modules) into ~/.cache/gpucloud-lab/.
"""
from __future__ import annotations

import copy
import functools
import gzip
import hashlib
import http.server
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, pxe_nodes
from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import deploy, seeds, tree
from tests.support import disk_images, inventory_yaml
from tests.support.disk_images import ESP_SECTORS, ESP_START, MIB, ROOT_START, SECTOR

REPO = Path(__file__).resolve().parents[2]
FLEET = REPO / "inventories" / "lab" / "fleet.yml"
ROLE = REPO / "roles" / "pxe_server"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gpucloud-lab"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGpucloudtestkey ops@example"
TOKEN = "Rk7" * 13 + "q"
DISK_MIB = 256
BOOT_BASE = "http://10.0.2.100:8080"


def _require(tool: str) -> str:
    path = shutil.which(tool) or (f"/usr/sbin/{tool}" if os.path.exists(f"/usr/sbin/{tool}") else None)
    if path is None:
        pytest.skip(f"{tool} is not installed (bindep.txt)")
    return path


@pytest.fixture(scope="module")
def ramdisk() -> Path:
    """vmlinuz and initrd.gz, as the role builds them on a Debian boot server."""
    for tool in ("apt-get", "dpkg-deb", "sfdisk", "zstd", "xz"):
        _require(tool)
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    modules = " ".join(defaults["pxe_server_deploy_modules"])
    folder = ROLE / "files" / "deploy-ramdisk"
    digest = hashlib.sha256(b"".join((folder / f).read_bytes() for f in ("build.sh", "init", "udhcpc.script"))
                            + modules.encode()).hexdigest()[:16]
    out = CACHE / ("deploy-ramdisk-" + digest)
    if not (out / "version").exists():
        build = subprocess.run(["bash", str(folder / "build.sh"), str(out), defaults["pxe_server_deploy_kernel_package"],
                                modules], capture_output=True, text=True, check=False, timeout=900)
        assert build.returncode == 0, build.stdout + build.stderr
    return out


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def _boot(cmd: list[str], serial: Path, limit: float) -> str:
    """Run the machine until it reboots (QEMU stops: -no-reboot); what went wrong, or ''. A ramdisk that stays
    after a failure is stopped at once."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + limit
    try:
        while proc.poll() is None:
            if time.monotonic() > deadline:
                return "the machine did not reboot within %d s" % limit
            if serial.exists() and "staying here (nothing more is done)" in serial.read_text(errors="replace"):
                return "the deploy ramdisk stopped"
            time.sleep(1)
        return "" if proc.returncode == 0 else "qemu: %s" % proc.stderr.read() if proc.stderr else "qemu failed"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_deploy_ramdisk_deploys_an_image_on_a_machine(ramdisk: Path, tmp_path: Path) -> None:
    qemu = _require("qemu-system-x86_64")
    if os.geteuid() != 0:
        pytest.skip("reading the written root file system needs root (losetup, mount)")
    data = inventory_yaml.load(FLEET)
    data["site"]["os_profiles"]["deb12img"] = {
        "family": "debian", "version": "12", "kind": "image", "image": "http://mirror.example/debian-12.raw.gz",
        "image_sha256": "0" * 64, "kernel": "http://mirror.example/vmlinuz", "initrd": "http://mirror.example/initrd"}
    data["nodes"][3]["os"] = "deb12img"
    data["nodes"][3]["root_device"] = {"serial": "S5GXNG0R1"}
    model = load_fleet(data)
    image = tmp_path / "debian-12.raw.gz"
    image.write_bytes(gzip.compress(disk_images.cloud_image(tmp_path, sfdisk=_require("sfdisk"),
                                                            mke2fs=_require("mke2fs")).read_bytes()))
    site = copy.deepcopy(model["site"])
    site["os_profiles"]["deb12img"]["image_sha256"] = hashlib.sha256(image.read_bytes()).hexdigest()
    options = {"tftp_root": "/srv/gpucloud/tftp", "ssh_keys": [KEY], "admin_user": "ops", "http_base": BOOT_BASE,
               "phone_home_url": BOOT_BASE + "/phone-home/{name}"}
    files = tree.render(site, pxe_nodes(model), options)["files"]
    served = tmp_path / "www"
    (served / "os" / "deb12img").mkdir(parents=True)
    shutil.copy(image, served / "os" / "deb12img" / image.name)
    (served / "hosts" / "gpu4").mkdir(parents=True)
    for name in (deploy.SCRIPT, *deploy.SEED_FILES):
        (served / "hosts" / "gpu4" / name).write_text(files["hosts/gpu4/" + name].replace(seeds.TOKEN_SLOT, TOKEN))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(served)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    disk = tmp_path / "disk.raw"
    with disk.open("wb") as fh:
        fh.truncate(DISK_MIB * MIB)
    mac = next(n["mac"] for n in model["nodes"] if n["name"] == "gpu4")
    serial = tmp_path / "serial.log"
    cmd = [qemu, "-machine", "pc,accel=tcg", "-m", "768", "-smp", "1", "-nodefaults", "-display", "none",
           "-no-reboot", "-serial", "file:%s" % serial,
           "-kernel", str(ramdisk / "vmlinuz"), "-initrd", str(ramdisk / "initrd.gz"),
           "-append", "console=ttyS0 panic=-1 gpucloud.deploy=%s/hosts/gpu4/deploy.sh gpucloud.mac=%s"
           % (BOOT_BASE, mac),
           # guestfwd runs the command for each connection the machine opens to 10.0.2.100:8080.
           "-netdev", "user,id=n0,restrict=on,guestfwd=tcp:10.0.2.100:8080-cmd:%s nc 127.0.0.1 %d"
           % (_require("busybox"), server.server_port),
           "-device", "virtio-net-pci,netdev=n0,mac=%s,romfile=" % mac,
           "-drive", "file=%s,if=none,id=d0,format=raw" % disk,
           "-device", "virtio-blk-pci,drive=d0,serial=S5GXNG0R1"]
    failure = _boot(cmd, serial, 300)
    server.shutdown()
    console = serial.read_text(errors="replace") if serial.exists() else ""
    assert not failure, failure + "\n" + console[-3000:]
    assert "gpucloud: deploy ramdisk: deployed; rebooting" in console, console[-3000:]
    assert "gpucloud: root disk of gpu4: /dev/vda (hints serial=S5GXNG0R1)" in console
    table = disk_images.partitions(disk)
    assert table[15] == (ESP_START, ESP_SECTORS)
    assert table[1][0] == ROOT_START and table[1][0] + table[1][1] == DISK_MIB * MIB // SECTOR - 33
    loop = subprocess.run(["losetup", "--find", "--show", "--read-only", "--offset", str(ROOT_START * SECTOR),
                           str(disk)], capture_output=True, text=True, check=True).stdout.strip()
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        subprocess.run(["mount", "-o", "ro", loop, str(mnt)], check=True)
        try:
            assert (mnt / "etc" / "os-release").read_text() == disk_images.OS_RELEASE
            user_data = (mnt / "var" / "lib" / "cloud" / "seed" / "nocloud" / "user-data").read_text()
            assert "token=%s" % TOKEN in user_data
        finally:
            subprocess.run(["umount", str(mnt)], check=True)
    finally:
        subprocess.run(["losetup", "-d", loop], check=False)
