# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Image deploy on a machine, end to end except the lab's PXE and Redfish front (tested in test_provision):

- the deploy ramdisk, built by role pxe_server's own script (files/deploy-ramdisk/build.sh) from Debian's
  packages with the role's module list, booted for real: Debian's kernel on a QEMU machine (TCG) with a virtio
  disk of serial S5GXNG0R1 and a virtio NIC of gpu4's MAC;
- the lab's cloud image (lab/lib/build-cloud-image.sh: Debian 12 from Debian's packages, standalone GRUB on its
  EFI system partition), written by that ramdisk, then booted from the disk by UEFI firmware (OVMF): cloud-init
  reads the seed the deploy left, sets the fleet's static address, posts the host keys with the token, and the
  test logs in over SSH with StrictHostKeyChecking=yes against exactly the posted keys.

The machine's network is QEMU's user network with ``restrict=on`` (no way out), laid out as the lab fleet's
provisioning network (198.51.100.0/24, gateway .254), with one forward: 198.51.100.10:8080 (the fleet's boot
server) -> an HTTP server on this machine's loopback serving what the boot server would (the image's checked copy
under os/<profile>/, the node's deploy.sh and seed with the token in place) and taking the deploy's step reports
and the phone-home post with the boot server's own receiver (role pxe_server's phone_home.py); SSH comes in
through a forward from loopback. Not a lab test: it needs root only to mount a written root file system.
The ramdisk and the cloud image are built once per build inputs into ~/.cache/gpucloud-lab/.
"""
from __future__ import annotations

import contextlib
import copy
import fcntl
import functools
import gzip
import hashlib
import http.server
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ansible_runner
import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, pxe_nodes
from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import deploy, seeds, tree
from tests.support import disk_images, inventory_yaml
from tests.support.disk_images import ESP_SECTORS, ESP_START, MIB, ROOT_START, SECTOR
from tests.support.tools import require

_LAB = str(Path(__file__).resolve().parents[2] / "lab")
if _LAB not in sys.path:
    sys.path.insert(0, _LAB)
from gpucloud_lab.core import config  # noqa: E402
from gpucloud_lab.infra import cloud_image as lab_cloud_image  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
FLEET = REPO / "inventories" / "lab" / "fleet.yml"
ROLE = REPO / "roles" / "pxe_server"
CACHE = config.CACHE_DIR
TOKEN = "Rk7" * 13 + "q"
BOOT_SERVER = config.PXE_SERVER.ip
OVMF_CODE = Path("/usr/share/OVMF/OVMF_CODE_4M.fd")
OVMF_VARS = Path("/usr/share/OVMF/OVMF_VARS_4M.fd")
STAYED = "staying here (nothing more is done)"


@contextlib.contextmanager
def _build_lock() -> Iterator[None]:
    """One build at a time (the tests of this module may run in two pytest-xdist workers at once, and the lab's
    image-deploy test beside them): the lab's own build lock."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with lab_cloud_image.LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="module")
def ramdisk() -> Path:
    """vmlinuz and initrd.gz, as the role builds them on a Debian boot server."""
    for tool in ("apt-get", "dpkg-deb", "sfdisk", "zstd", "xz"):
        require(tool)
    defaults = yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())
    modules = " ".join(defaults["pxe_server_deploy_modules"])
    folder = ROLE / "files" / "deploy-ramdisk"
    digest = hashlib.sha256(b"".join((folder / f).read_bytes() for f in ("build.sh", "init", "udhcpc.script"))
                            + modules.encode()).hexdigest()[:16]
    out = CACHE / ("deploy-ramdisk-" + digest)
    with _build_lock():
        if not (out / "version").exists():
            build = subprocess.run(["bash", str(folder / "build.sh"), str(out),
                                    defaults["pxe_server_deploy_kernel_package"], modules],
                                   capture_output=True, text=True, check=False, timeout=900)
            assert build.returncode == 0, build.stdout + build.stderr
    return out


@pytest.fixture(scope="module")
def cloud_image() -> Path:
    """The lab's Debian 12 cloud image (raw.zst), built once per builder."""
    for tool in ("debootstrap", "sfdisk", "mke2fs", "zstd"):
        require(tool)
    return lab_cloud_image.ensure()


_spec = importlib.util.spec_from_file_location(
    "phone_home", Path(__file__).resolve().parents[2] / "roles/pxe_server/files/phone_home.py")
phone_home = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(phone_home)


class _BootServer(phone_home.Handler, http.server.SimpleHTTPRequestHandler):
    """The boot server's part: files from its folder (GET, as nginx serves them) and posts taken by the boot
    server's own receiver (the deploy's step reports, the phone-home post), which nginx passes on."""

    do_GET = http.server.SimpleHTTPRequestHandler.do_GET
    do_HEAD = http.server.SimpleHTTPRequestHandler.do_HEAD

    def log_message(self, format: str, *args: Any) -> None:  # pylint: disable=redefined-builtin
        pass


class _Site:
    """The lab fleet with gpu4 on an image profile, what the boot server serves for it, and that server."""

    def __init__(self, tmp_path: Path, image: Path, fmt: str, ssh_keys: list[str]) -> None:
        data = inventory_yaml.load(FLEET)
        data["site"]["os_profiles"]["deb12img"] = {
            "family": "debian", "version": "12", "kind": "image", "image": "http://mirror.example/" + image.name,
            "image_sha256": "0" * 64, "image_format": fmt}
        data["nodes"][3]["os"] = "deb12img"
        data["nodes"][3]["root_device"] = {"serial": "S5GXNG0R1"}
        model = load_fleet(data)
        self.node = next(n for n in model["nodes"] if n["name"] == "gpu4")
        site = copy.deepcopy(model["site"])
        site["os_profiles"]["deb12img"]["image_sha256"] = lab_cloud_image.sha256(image)
        options = {"tftp_root": "/srv/gpucloud/tftp", "ssh_keys": ssh_keys, "admin_user": "ops",
                   "phone_home_url": "http://%s:8080/phone-home/{name}" % BOOT_SERVER}
        rendered = tree.render(site, pxe_nodes(model), options)
        self.base = "http://%s:8080" % BOOT_SERVER
        assert rendered["deploy_ramdisk"]
        self.served = tmp_path / "www"
        (self.served / "os" / "deb12img").mkdir(parents=True)
        (self.served / "os" / "deb12img" / image.name).symlink_to(image)
        (self.served / "hosts" / "gpu4").mkdir(parents=True)
        for name in (deploy.SCRIPT, *deploy.SEED_FILES):
            text = rendered["files"]["hosts/gpu4/" + name]
            (self.served / "hosts" / "gpu4" / name).write_text(text.replace(seeds.TOKEN_SLOT, TOKEN))
        # gpu4 marked installing with this install's token, as role os_install leaves it. QEMU's user network
        # brings every post from loopback: the receiver takes gpu4's from any address (--any-source).
        self.marks, self.records = tmp_path / "marks", tmp_path / "records"
        self.marks.mkdir()
        (self.marks / "gpu4.installing").write_text("gpu4: install started by the os_install role\n")
        (self.marks / "gpu4.token").write_text('node-gpu4 "%s";\n' % TOKEN)
        (tmp_path / "nodes.json").write_text(json.dumps({"gpu4": self.node["ip"]}))
        receiver = phone_home.Receiver(str(tmp_path / "nodes.json"), str(self.records), True, str(self.marks))
        handler = type("Handler", (_BootServer,), {"receiver": receiver})
        handler_at = functools.partial(handler, directory=str(self.served))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler_at)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def netdev(self, extra: str = "") -> list[str]:
        """The lab's provisioning network as QEMU's user network: nothing leaves it but the forwards."""
        return ["-netdev", "user,id=n0,restrict=on,net=198.51.100.0/24,host=198.51.100.254,dhcpstart=198.51.100.100,"
                "guestfwd=tcp:%s:8080-cmd:%s nc 127.0.0.1 %d%s"
                % (BOOT_SERVER, require("busybox"), self.server.server_port, extra),
                "-device", "virtio-net-pci,netdev=n0,mac=%s,romfile=" % self.node["mac"]]

    def steps(self) -> list[str]:
        """The steps the deploy reported to the receiver."""
        path = self.records / "gpu4.steps"
        return [json.loads(line)["step"] for line in path.read_text().splitlines()] if path.exists() else []

    def host_keys(self) -> list[str]:
        """The host keys the receiver stored from gpu4's phone-home post (none yet: [])."""
        path = self.records / "gpu4.json"
        return json.loads(path.read_text())["host_keys"] if path.exists() else []

    def close(self) -> None:
        self.server.shutdown()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _machine(disk: Path, serial: Path, memory_mb: int = 1536) -> list[str]:
    return [require("qemu-system-x86_64"), "-machine", "pc,accel=tcg", "-m", str(memory_mb), "-smp", "1",
            "-nodefaults", "-display", "none", "-no-reboot", "-serial", "file:%s" % serial,
            "-drive", "file=%s,if=none,id=d0,format=raw" % disk,
            "-device", "virtio-blk-pci,drive=d0,serial=S5GXNG0R1,bootindex=1"]


def _deploy(site: _Site, ramdisk: Path, disk: Path, serial: Path, limit: float) -> tuple[str, float]:
    """Boot the deploy ramdisk until it reboots (QEMU stops: -no-reboot); (what went wrong or '', seconds)."""
    cmd = [*_machine(disk, serial),
           "-kernel", str(ramdisk / "vmlinuz"), "-initrd", str(ramdisk / "initrd.gz"),
           "-append", "console=ttyS0 panic=-1 gpucloud.deploy=%s/hosts/gpu4/deploy.sh gpucloud.mac=%s"
           % (site.base, site.node["mac"]), *site.netdev()]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while proc.poll() is None:
            if time.monotonic() - start > limit:
                return "the machine did not reboot within %d s" % limit, limit
            if serial.exists() and STAYED in serial.read_text(errors="replace"):
                return "the deploy ramdisk stopped", time.monotonic() - start
            time.sleep(1)
        err = proc.stderr.read() if proc.stderr else ""
        return ("" if proc.returncode == 0 else "qemu: %s" % err), time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _console(serial: Path) -> str:
    return serial.read_text(errors="replace")[-4000:] if serial.exists() else "(no console output)"


def _empty_disk(path: Path, mib: int) -> Path:
    with path.open("wb") as fh:
        fh.truncate(mib * MIB)
    return path


def test_the_deploy_ramdisk_deploys_an_image_on_a_machine(ramdisk: Path, tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("reading the written root file system needs root (losetup, mount)")
    image = tmp_path / "debian-12.raw.gz"
    image.write_bytes(gzip.compress(disk_images.cloud_image(tmp_path, sfdisk=require("sfdisk"),
                                                            mke2fs=require("mke2fs")).read_bytes()))
    site = _Site(tmp_path, image, "raw.gz", ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGpucloudtestkey ops@example"])
    disk, serial = _empty_disk(tmp_path / "disk.raw", 256), tmp_path / "serial.log"
    try:
        failure, _seconds = _deploy(site, ramdisk, disk, serial, 300)
    finally:
        site.close()
    console = _console(serial)
    assert not failure, failure + "\n" + console
    assert "gpucloud: deploy ramdisk: deployed; rebooting" in console, console
    assert "gpucloud: root disk of gpu4: /dev/vda (hints serial=S5GXNG0R1)" in console
    assert site.steps() == ["started", "disk", "image", "written", "done"]
    assert (site.marks / "gpu4.imaged").exists()  # the boot server answers gpu4's network boots with local-boot
    table = disk_images.partitions(disk)
    assert table[15] == (ESP_START, ESP_SECTORS)
    assert table[1][0] == ROOT_START and table[1][0] + table[1][1] == 256 * MIB // SECTOR - 33
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


def test_a_deployed_cloud_image_boots_by_uefi_phones_home_and_answers_ssh_with_its_keys(
        ramdisk: Path, cloud_image: Path, tmp_path: Path) -> None:
    if not OVMF_CODE.exists():
        pytest.skip("%s is missing: Debian's ovmf package (bindep.txt)" % OVMF_CODE)
    ssh_keygen, ssh = require("ssh-keygen"), require("ssh")
    key = tmp_path / "id_ed25519"
    subprocess.run([ssh_keygen, "-q", "-t", "ed25519", "-N", "", "-C", "ops@gpucloud-test", "-f", str(key)],
                   check=True)
    site = _Site(tmp_path, cloud_image, "raw.zst", [(tmp_path / "id_ed25519.pub").read_text().strip()])
    disk = _empty_disk(tmp_path / "disk.raw", 4096)
    timings: dict[str, float] = {}
    try:
        failure, timings["deploy"] = _deploy(site, ramdisk, disk, tmp_path / "deploy.log", 600)
        assert not failure, failure + "\n" + _console(tmp_path / "deploy.log")
        assert site.steps() == ["started", "disk", "image", "written", "done"]
        # First boot: UEFI firmware from the disk only (the NIC has no boot ROM and no boot index).
        vars_copy = tmp_path / "nvram.fd"
        shutil.copyfile(OVMF_VARS, vars_copy)
        port = _free_port()
        serial = tmp_path / "first-boot.log"
        cmd = [*_machine(disk, serial),
               "-drive", "if=pflash,format=raw,unit=0,readonly=on,file=%s" % OVMF_CODE,
               "-drive", "if=pflash,format=raw,unit=1,file=%s" % vars_copy,
               # To the node's own address (without one, QEMU forwards to its first DHCP address).
               *site.netdev(",hostfwd=tcp:127.0.0.1:%d-%s:22" % (port, site.node["ip"]))]
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while not site.host_keys() and proc.poll() is None and time.monotonic() - start < 900:
                time.sleep(2)
            timings["phone_home"] = time.monotonic() - start
            # Stored by the receiver: the post carried this install's token and host keys it could parse.
            keys = site.host_keys()
            assert keys, "no phone-home within %.0f s\n%s" % (timings["phone_home"], _console(serial))
            assert all(k.split()[0] in ("ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa") for k in keys)
            known = tmp_path / "known_hosts"
            known.write_text("".join("[127.0.0.1]:%d %s\n" % (port, " ".join(k.split()[:2])) for k in keys))
            login = [ssh, "-F", "/dev/null", "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=%s" % known,
                     "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20", "-i", str(key),
                     "-p", str(port), "ops@127.0.0.1"]
            out = ""
            for _attempt in range(12):
                run = subprocess.run([*login, "hostname; ip -4 -o addr show; cat /proc/swaps | wc -l; "
                                      "sudo -n cat /var/lib/cloud/seed/nocloud/meta-data"],
                                     capture_output=True, text=True, check=False, timeout=120)
                out = run.stdout + run.stderr
                if run.returncode == 0:
                    break
                time.sleep(5)
            timings["ssh"] = time.monotonic() - start
            assert run.returncode == 0, out + "\n" + _console(serial)
            lines = run.stdout.splitlines()
            assert lines[0] == "gpu4"
            assert any(f"{config.BOOT_TARGET.ip}/{config.PREFIX_LEN}" in line for line in lines), out
            assert "1" in lines, out  # /proc/swaps: its header line only
            # Another key is refused: the known_hosts file holds only what the node posted.
            other = tmp_path / "other_known_hosts"
            subprocess.run([ssh_keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
            other_key = (tmp_path / "other.pub").read_text().split()
            other.write_text("[127.0.0.1]:%d %s %s\n" % (port, other_key[0], other_key[1]))
            strange = [a if not a.startswith("UserKnownHostsFile=") else "UserKnownHostsFile=%s" % other for a in login]
            refused = subprocess.run([*strange, "true"], capture_output=True, text=True, check=False, timeout=60)
            assert refused.returncode != 0 and "Host key verification failed" in refused.stderr
        finally:
            proc.kill()
            proc.wait()
    finally:
        site.close()
        print("image deploy timings (s, TCG): %s" % timings)


def _role_tasks(tmp_path: Path, playbook: str, extravars: dict[str, Any], check: bool) -> tuple[int, list[str], str]:
    """One of role pxe_server's task files against this machine (tests/integration/playbooks/PLAYBOOK): the run's
    rc, the tasks that changed, and the stdout of what failed (the converter prints its reason there)."""
    private = tmp_path / ("run%d" % len(list(tmp_path.glob("run*"))))
    private.mkdir()
    run = ansible_runner.run(private_data_dir=str(private), project_dir=str(REPO), quiet=True,
                             playbook=str(REPO / "tests" / "integration" / "playbooks" / playbook),
                             inventory="localhost,", cmdline="--check" if check else None,
                             extravars=dict(extravars, ansible_python_interpreter="/usr/bin/python3"),
                             envvars={"ANSIBLE_CONFIG": str(REPO / "ansible.cfg")})
    changed = [e["event_data"]["task"] for e in run.events
               if e.get("event") == "runner_on_ok" and e["event_data"]["res"].get("changed")]
    failed = [str(e["event_data"]["res"].get("stdout", "")) for e in run.events
              if e.get("event") in ("runner_on_failed", "runner_item_on_failed")]
    return run.rc, changed, "".join(failed)


def test_the_role_builds_the_ramdisk_once_and_again_only_when_asked_for_other_modules(tmp_path: Path) -> None:
    """tasks/deploy_ramdisk.yml against this machine: check mode changes nothing, a run builds, a second run and
    a check-mode run report no change, and another module list builds again."""
    for tool in ("apt-get", "dpkg-deb", "sfdisk", "zstd", "xz"):
        require(tool)

    def play(check: bool, modules: list[str] | None = None) -> tuple[int, int, list[str]]:
        extravars: dict[str, Any] = {"pxe_server_root": str(tmp_path / "srv"),
                                     "pxe_server_deploy_ramdisk_dir": str(tmp_path / "lib")}
        if modules is not None:
            extravars["pxe_server_deploy_modules"] = modules
        rc, changed, _failed = _role_tasks(tmp_path, "deploy_ramdisk.yml", extravars, check)
        return rc, len(changed), changed

    built = tmp_path / "srv" / "http" / "deploy"
    assert play(check=True)[0] == 0 and not built.exists()
    rc, _count, changed = play(check=False)
    assert rc == 0 and "Build the deploy ramdisk" in changed
    assert (built / "vmlinuz").stat().st_size > 1 << 20 and (built / "initrd.gz").stat().st_size > 1 << 20
    stamp = (built / "version").stat().st_mtime
    assert play(check=False)[:2] == (0, 0)
    assert play(check=True)[:2] == (0, 0)
    assert (built / "version").stat().st_mtime == stamp
    rc, _count, changed = play(check=False, modules=["virtio_blk", "virtio_net", "ext4", "crc32c_generic"])
    assert rc == 0 and "Build the deploy ramdisk" in changed
    assert "virtio_blk" in (built / "version").read_text() and "mlx5_core" not in (built / "version").read_text()


def test_the_role_converts_a_qcow2_once_and_refuses_one_that_is_not_the_fleet_s(tmp_path: Path) -> None:
    """tasks/convert_images.yml against this machine, with what pxe_render returns for a qcow2 profile: check mode
    changes nothing, a run converts (the raw.zst unpacks to the image's bytes; its digest served next to it), a
    second run and a check-mode run report no change, and a qcow2 that is not the fleet's fails, leaving what was
    served."""
    for tool in ("qemu-img", "zstd"):
        require(tool)
    raw = tmp_path / "image.raw"
    with raw.open("wb") as handle:
        handle.truncate(64 << 20)
        handle.seek(1 << 20)
        handle.write(b"the image's bytes" * 4096)
    served = tmp_path / "srv" / "http" / "os" / "img"
    served.mkdir(parents=True)
    source = served / "genericcloud.qcow2"
    subprocess.run(["qemu-img", "convert", "-q", "-c", "-f", "raw", "-O", "qcow2", str(raw), str(source)], check=True)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    dest = served / "genericcloud.raw.zst"

    def play(check: bool, sha256: str = digest) -> tuple[int, list[str], str]:
        copies = [{"url": "http://mirror.example/genericcloud.qcow2", "path": "os/img/genericcloud.qcow2",
                   "sha256": sha256, "key": "site.os_profiles.img.image",
                   "convert": {"format": "qcow2", "path": "os/img/genericcloud.raw.zst"}}]
        return _role_tasks(tmp_path, "convert_images.yml", {
            "pxe_server_root": str(tmp_path / "srv"), "pxe_server__rendered": {"copies": copies},
            "pxe_server_image_convert_program": str(tmp_path / "lib" / "convert-image.py")}, check)

    convert = "Convert each qcow2 image to raw.zst (a backing file, an external data file or encryption is refused)"
    rc, changed, _failed = play(check=True)
    assert rc == 0 and not dest.exists()
    rc, changed, _failed = play(check=False)
    assert rc == 0 and convert in changed, changed
    unpacked = subprocess.run(["zstd", "-dc", str(dest)], capture_output=True, check=True).stdout
    assert unpacked == raw.read_bytes()
    assert (served / "genericcloud.raw.zst.sha256").read_text().split()[0] == hashlib.sha256(
        dest.read_bytes()).hexdigest()
    stamp = dest.stat().st_mtime
    assert play(check=False)[:2] == (0, [])
    assert play(check=True)[:2] == (0, [])
    assert dest.stat().st_mtime == stamp
    other = "0" * 64
    rc, changed, failed = play(check=False, sha256=other)
    assert rc != 0 and "it has SHA-256 %s, not %s (the fleet's); what was served before stays" % (
        digest, other) in failed, failed
    assert dest.stat().st_mtime == stamp
