# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Image deploy (OS profile kind image): the fleet's checks, the rendered deploy.sh and seed, and deploy.sh
run for real: under busybox's sh with nothing on its PATH but busybox's applets, util-linux's sfdisk and zstd
(what the deploy ramdisk carries), against a disk here (a loop device), fetching a GPT cloud-image-shaped disk
image (mke2fs-made root file system) and the seed from an HTTP server on loopback, and reporting its steps to the
boot server's own phone-home receiver (role pxe_server's phone_home.py) on loopback. The disk is found through a
sysfs tree laid out as the kernel's (as in test_rootdisk), whose disk entry points at the loop device.
"""
from __future__ import annotations

import copy
import functools
import gzip
import hashlib
import http.server
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, pxe_nodes
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.errors import FleetError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import deploy, seeds, tree, validate
from tests.support import disk_images, inventory_yaml
from tests.support.disk_images import ESP_SECTORS, ESP_START, MIB, ROOT_START, SECTOR
from tests.support.tools import require

from .conftest import FLEET, KEY

REPO = Path(__file__).resolve().parents[5]
_spec = importlib.util.spec_from_file_location("phone_home", REPO / "roles/pxe_server/files/phone_home.py")
phone_home = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(phone_home)

DIGEST = "ab" * 32
TOKEN = "Zq3" * 13 + "x"  # 40 characters, as os_install makes one


def _image_profile(**extra: Any) -> dict[str, Any]:
    return dict({"family": "debian", "version": "12", "kind": "image",
                 "image": "http://mirror.example/debian-12-genericcloud-amd64.raw.gz", "image_sha256": DIGEST,
                 "kernel": "http://mirror.example/deploy/vmlinuz", "initrd": "http://mirror.example/deploy/initrd.gz"},
                **extra)


def _fleet(profile: dict[str, Any]) -> dict[str, Any]:
    data = inventory_yaml.load(FLEET)
    data["site"]["os_profiles"]["deb12img"] = profile
    data["nodes"][3]["os"] = "deb12img"
    return data


def _problems(profile: dict[str, Any]) -> str:
    with pytest.raises(FleetError) as err:
        load_fleet(_fleet(profile))
    return str(err.value)


# --- the fleet --------------------------------------------------------------------------------------------

def test_an_image_profile_takes_its_format_from_the_image_name() -> None:
    model = load_fleet(_fleet(_image_profile()))
    profile = model["site"]["os_profiles"]["deb12img"]
    assert (profile["kind"], profile["image_format"], profile["image_sha256"]) == ("image", "raw.gz", DIGEST)
    zst = load_fleet(_fleet(_image_profile(image="/srv/images/rocky-9.raw.zst")))
    assert zst["site"]["os_profiles"]["deb12img"]["image_format"] == "raw.zst"
    qcow2 = load_fleet(_fleet(_image_profile(image="http://mirror.example/debian-12-genericcloud-amd64.qcow2")))
    assert qcow2["site"]["os_profiles"]["deb12img"]["image_format"] == "qcow2"


@pytest.mark.parametrize(("change", "expected"), [
    ({"image_sha256": None}, "site.os_profiles.deb12img.image_sha256: required for kind image"),
    ({"kernel": None}, "site.os_profiles.deb12img.kernel: a deploy ramdisk of your own needs both kernel and initrd"),
    # Ubuntu's cloud images are qcow2 under this name: ".img" says nothing.
    ({"image": "https://cloud-images.ubuntu.com/noble/current/noble-server-cloudimg-amd64.img"},
     "site.os_profiles.deb12img.image_format: required: the image's name 'noble-server-cloudimg-amd64.img' "
     "does not say its format"),
    ({"image": "/srv/images/rocky-9.img.zst"}, "site.os_profiles.deb12img.image_format: required"),
    ({"image_format": "vmdk"},
     "site.os_profiles.deb12img.image_format: 'vmdk' is not one of raw, raw.gz, raw.zst, qcow2"),
    ({"kind": "golden"}, "site.os_profiles.deb12img.kind: 'golden' is not one of installer, image"),
    ({"image_sha256": "abc"}, "site.os_profiles.deb12img.image_sha256"),
])
def test_a_bad_image_profile_is_refused_naming_the_field(change: dict[str, Any], expected: str) -> None:
    profile = {k: v for k, v in dict(_image_profile(), **change).items() if v is not None}
    assert expected in _problems(profile)


def test_an_installer_profile_refuses_the_image_keys() -> None:
    profile = {"family": "debian", "version": "12", "image_sha256": DIGEST}
    assert ("site.os_profiles.deb12img.image_sha256: applies to kind image only" in _problems(profile))


# --- the render -----------------------------------------------------------------------------------------

@pytest.fixture
def image_model() -> dict[str, Any]:
    return load_fleet(_fleet(_image_profile()))


def _render(model: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    return tree.render(copy.deepcopy(model["site"]), pxe_nodes(model), options)


def test_an_image_node_boots_the_deploy_ramdisk_and_gets_a_seed_cloud_init_accepts(image_model, options) -> None:
    require("cloud-init")
    rendered = _render(image_model, options)
    files = rendered["files"]
    assert {p for p in files if p.startswith("hosts/gpu4")} == {
        "hosts/gpu4.ipxe", "hosts/gpu4/deploy.sh", "hosts/gpu4/meta-data", "hosts/gpu4/user-data",
        "hosts/gpu4/network-config"}
    assert ("kernel --name linux http://mirror.example/deploy/vmlinuz initrd=initrd "
            "gpucloud.deploy=http://198.51.100.10:8080/hosts/gpu4/deploy.sh gpucloud.mac=52:54:00:c6:33:63"
            ) in files["hosts/gpu4.ipxe"]
    assert rendered["deploy_ramdisk"] is False  # the profile brings its own
    # The image is served by the boot server after its check, never straight from the mirror to the node.
    assert {"url": "http://mirror.example/debian-12-genericcloud-amd64.raw.gz", "sha256": DIGEST,
            "path": "os/deb12img/debian-12-genericcloud-amd64.raw.gz",
            "key": "site.os_profiles.deb12img.image"} in rendered["copies"]
    assert ("image_url='http://198.51.100.10:8080/os/deb12img/debian-12-genericcloud-amd64.raw.gz'"
            in files["hosts/gpu4/deploy.sh"])
    assert rendered["seeds"]["hosts/gpu4/user-data"] == ("image", "12")
    assert validate.seeds(files, rendered["seeds"]) == []
    user_data = yaml.safe_load(files["hosts/gpu4/user-data"])
    assert user_data["phone_home"]["url"] == ("http://198.51.100.10:8080/phone-home/gpu4?token=%s"
                                              % seeds.TOKEN_SLOT)
    assert user_data["users"][0]["ssh_authorized_keys"] == [KEY]
    assert user_data["swap"] == {"size": 0}
    assert user_data["runcmd"] == [["sync"]]  # the host keys are on the disk before they are posted
    network = yaml.safe_load(files["hosts/gpu4/network-config"])
    assert network["ethernets"]["pxe"]["addresses"] == ["198.51.100.24/24"]
    assert network["ethernets"]["pxe"]["match"] == {"macaddress": "52:54:00:c6:33:63"}


def test_a_profile_without_a_ramdisk_of_its_own_boots_the_one_the_boot_server_builds(options) -> None:
    profile = {k: v for k, v in _image_profile().items() if k not in ("kernel", "initrd")}
    model = load_fleet(_fleet(profile))
    rendered = _render(model, options)
    assert rendered["deploy_ramdisk"] is True
    script = rendered["files"]["hosts/gpu4.ipxe"]
    assert "kernel --name linux http://198.51.100.10:8080/deploy/vmlinuz initrd=initrd gpucloud.deploy=" in script
    assert "initrd --name initrd http://198.51.100.10:8080/deploy/initrd.gz" in script
    # Nodes of installer profiles alone: nothing to build.
    data = inventory_yaml.load(FLEET)
    assert _render(load_fleet(data), options)["deploy_ramdisk"] is False


def test_a_qcow2_image_is_fetched_checked_and_converted_by_the_boot_server_and_the_node_gets_the_raw_zst(
        options) -> None:
    url = "https://cloud.debian.org/images/cloud/bookworm/latest/debian-12-genericcloud-amd64.qcow2"
    rendered = _render(load_fleet(_fleet(_image_profile(image=url))), options)
    image = [c for c in rendered["copies"] if c["key"] == "site.os_profiles.deb12img.image"]
    assert image == [{"url": url, "path": "os/deb12img/debian-12-genericcloud-amd64.qcow2", "sha256": DIGEST,
                      "key": "site.os_profiles.deb12img.image",
                      "convert": {"format": "qcow2", "path": "os/deb12img/debian-12-genericcloud-amd64.raw.zst"}}]
    script = rendered["files"]["hosts/gpu4/deploy.sh"]
    served = "http://198.51.100.10:8080/os/deb12img/debian-12-genericcloud-amd64.raw.zst"
    assert "image_url='%s'\n" % served in script and "image_sha256=''\n" in script
    assert "image_sha256_url='%s.sha256'\n" % served in script and "format='raw.zst'\n" in script
    assert url not in script  # the node never gets the mirror's URL
    # and it boots the deploy ramdisk to run it (not an installer's command line)
    assert "gpucloud.deploy=http://198.51.100.10:8080/hosts/gpu4/deploy.sh gpucloud.mac=" in rendered["files"][
        "hosts/gpu4.ipxe"]


def test_cloud_init_s_schema_refuses_a_broken_image_seed(image_model, options) -> None:
    require("cloud-init")
    rendered = _render(image_model, options)
    files = dict(rendered["files"])
    files["hosts/gpu4/user-data"] = files["hosts/gpu4/user-data"].replace('"mode": "auto"', '"mode": "sometimes"')
    problems = validate.seeds(files, rendered["seeds"])
    assert len(problems) == 1 and problems[0].startswith("hosts/gpu4/user-data: growpart.mode")


def test_a_controller_image_is_checked_against_its_digest_before_anything_is_copied(tmp_path, options) -> None:
    image = tmp_path / "debian-12.raw"
    image.write_bytes(b"not the image the fleet names")
    model = load_fleet(_fleet(_image_profile(image=str(image))))
    with pytest.raises(ProblemsError) as err:
        _render(model, options)
    assert ("site.os_profiles.deb12img.image_sha256: %s on the controller has SHA-256 %s, not %s"
            % (image, hashlib.sha256(image.read_bytes()).hexdigest(), DIGEST)) in str(err.value)


def test_deploy_sh_is_clean_under_shellcheck(image_model, options, tmp_path) -> None:
    shellcheck = require("shellcheck")
    path = tmp_path / "deploy.sh"
    path.write_text(_render(image_model, options)["files"]["hosts/gpu4/deploy.sh"])
    proc = subprocess.run([shellcheck, "-s", "sh", str(path)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout


# --- deploy.sh, run ---------------------------------------------------------------------------------------

DISK_MIB = 256


def _source_image(tmp_path: Path) -> Path:
    require("sfdisk")
    return disk_images.cloud_image(tmp_path, mke2fs=require("mke2fs"))


def _losetup(*args: str) -> str:
    for _attempt in range(5):  # another test may take the free device first
        run = subprocess.run(["losetup", "--find", "--show", *args], capture_output=True, text=True, check=False)
        if run.returncode == 0:
            return run.stdout.strip()
    pytest.fail("losetup: %s" % run.stderr)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def node_disk(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A 256 MiB disk (loop device) seen as nvme0n1 (serial S5GXNG0R1) through a kernel-shaped sysfs, the
    partition devices the kernel would make for it, and a loopback HTTP server for the image and the seed."""
    if os.geteuid() != 0:
        pytest.skip("deploy.sh writes a disk: the test needs root (losetup, mount)")
    require("losetup")
    backing = tmp_path / "disk"
    with backing.open("wb") as fh:
        fh.write(b"\xa5" * MIB)  # what was on the disk before: a failed deploy must leave it
        fh.truncate(DISK_MIB * MIB)
    loops = [_losetup(str(backing))]
    try:
        # This kernel makes no partition devices for loop devices: one loop device per partition, at its offset.
        for start in (ROOT_START, ESP_START):
            loops.append(_losetup("--offset", str(start * SECTOR), str(backing)))
        sysfs = tmp_path / "sys" / "block" / "nvme0n1"
        (sysfs / "device").mkdir(parents=True)
        (sysfs / "size").write_text("%d\n" % (447 * 2097152))  # a 447 GiB boot SSD, as test_rootdisk's
        (sysfs / "removable").write_text("0\n")
        (sysfs / "ro").write_text("0\n")
        (sysfs / "device" / "serial").write_text("S5GXNG0R1\n")
        devdir = tmp_path / "dev"
        devdir.mkdir()
        for name, loop in (("nvme0n1", loops[0]), ("nvme0n1p1", loops[1]), ("nvme0n1p15", loops[2])):
            (devdir / name).symlink_to(loop)
        served = tmp_path / "www"
        (served / "hosts" / "gpu4").mkdir(parents=True)
        handler = functools.partial(_Quiet, directory=str(served))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        # The boot server's receiver, gpu4 marked installing with this install's token (as role os_install does).
        marks, records = tmp_path / "marks", tmp_path / "records"
        marks.mkdir()
        (marks / "gpu4.installing").write_text("gpu4: install started by the os_install role\n")
        (marks / "gpu4.token").write_text('node-gpu4 "%s";\n' % TOKEN)
        (tmp_path / "nodes.json").write_text(json.dumps({"gpu4": "127.0.0.1"}))
        receiver = phone_home.Receiver(str(tmp_path / "nodes.json"), str(records), False, str(marks))
        quiet = type("H", (phone_home.Handler,), {"receiver": receiver, "log_message": lambda *_args: None})
        reports = http.server.ThreadingHTTPServer(("127.0.0.1", 0), quiet)
        threading.Thread(target=reports.serve_forever, daemon=True).start()
        yield {"tmp": tmp_path, "backing": backing, "loops": loops, "served": served,
               "base": "http://127.0.0.1:%d" % server.server_port, "sysfs": tmp_path / "sys", "devdir": devdir,
               "phone_home": "http://127.0.0.1:%d/phone-home/{name}" % reports.server_port, "marks": marks,
               "records": records}
        server.shutdown()
        reports.shutdown()
    finally:
        for loop in loops:
            subprocess.run(["losetup", "-d", loop], check=False)


def _ramdisk_path(tmp_path: Path) -> str:
    """A PATH with busybox's applets, sfdisk and zstd only: what the deploy ramdisk has."""
    busybox = require("busybox")
    tools = tmp_path / "ramdisk-bin"
    if tools.is_dir():  # a second deploy in the same test
        return str(tools)
    tools.mkdir()
    applets = subprocess.run([busybox, "--list"], capture_output=True, text=True, check=True).stdout.split()
    for applet in applets:
        (tools / applet).symlink_to(busybox)
    for tool in ("sfdisk", "zstd"):
        (tools / tool).symlink_to(require(tool))
    return str(tools)


def _deploy(node_disk: dict[str, Any], model: dict[str, Any], options: dict[str, Any], image: Path, fmt: str,
            digest: str | None = None, token: bool = True,
            served_digest: bool = True) -> subprocess.CompletedProcess[str]:
    served, base = node_disk["served"], node_disk["base"]
    name = "image." + fmt
    # Where the boot server serves its checked copy (pxe_server fetches the profile's URL to os/<profile>/).
    (served / "os" / "deb12img").mkdir(parents=True, exist_ok=True)
    shutil.copy(image, served / "os" / "deb12img" / name)
    if fmt == "qcow2":  # converted there by the role's converter, as role pxe_server runs it
        _convert(served / "os" / "deb12img" / name, served / "os" / "deb12img" / "image.raw.zst")
        if not served_digest:
            (served / "os" / "deb12img" / "image.raw.zst.sha256").unlink()
    site = copy.deepcopy(model["site"])
    site["os_profiles"]["deb12img"].update(image="http://mirror.example/%s" % name, image_format=fmt,
                                           image_sha256=digest or hashlib.sha256(image.read_bytes()).hexdigest())
    nodes = [dict(n, root_device={"serial": "S5GXNG0R1"}) if n["name"] == "gpu4" else n for n in pxe_nodes(model)]
    opts = dict(options, http_base=base, phone_home_url=node_disk["phone_home"])
    files = tree.render(site, nodes, opts)["files"]
    for fname in deploy.SEED_FILES:
        text = files["hosts/gpu4/" + fname]
        (served / "hosts" / "gpu4" / fname).write_text(text.replace(seeds.TOKEN_SLOT, TOKEN) if token else text)
    script = node_disk["tmp"] / "deploy.sh"
    # Served as nginx serves everything under hosts/NAME/: the placeholder replaced wherever it is whole.
    script.write_text(files["hosts/gpu4/deploy.sh"].replace(seeds.TOKEN_SLOT, TOKEN if token else seeds.TOKEN_SLOT))
    env = {"PATH": _ramdisk_path(node_disk["tmp"]), "GPUCLOUD_SYSFS": str(node_disk["sysfs"]),
           "GPUCLOUD_DEVDIR": str(node_disk["devdir"]), "GPUCLOUD_WORK": str(node_disk["tmp"])}
    return subprocess.run([require("busybox"), "sh", str(script)], env=env, capture_output=True, text=True,
                          check=False, timeout=120)


CONVERTER = Path(__file__).resolve().parents[5] / "roles" / "pxe_server" / "files" / "convert-image.py"


def _convert(source: Path, dest: Path, digest: str | None = None) -> dict[str, Any]:
    """role pxe_server's convert-image.py, as the role runs it; its JSON line."""
    require("qemu-img")
    run = subprocess.run([sys.executable, str(CONVERTER), "--source", str(source), "--sha256",
                          digest or hashlib.sha256(source.read_bytes()).hexdigest(), "--dest", str(dest)],
                         capture_output=True, text=True, check=False, timeout=300)
    result = json.loads(run.stdout)
    assert (run.returncode == 0) == (not result["msg"].endswith("what was served before stays")), run.stdout
    return dict(result, rc=run.returncode)


def _qcow2(raw: Path, *options: str) -> Path:
    image = raw.with_name(raw.name + ".qcow2")
    subprocess.run([require("qemu-img"), "convert", "-q", "-f", "raw", "-O", "qcow2", *options, str(raw),
                    str(image)], check=True)
    return image


def _steps(node_disk: dict[str, Any]) -> list[dict[str, Any]]:
    """What the receiver stored of gpu4's step reports."""
    path = node_disk["records"] / "gpu4.steps"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _disk_untouched(node_disk: dict[str, Any]) -> bool:
    with node_disk["backing"].open("rb") as fh:
        return fh.read(MIB) == b"\xa5" * MIB


@pytest.mark.parametrize("fmt", ["raw", "raw.gz", "raw.zst"])
def test_deploy_writes_the_image_grows_the_root_partition_and_leaves_the_seed(node_disk, image_model, options,
                                                                              tmp_path, fmt) -> None:
    raw = _source_image(tmp_path)
    image = raw
    if fmt == "raw.gz":
        image = tmp_path / "image.gz"
        image.write_bytes(gzip.compress(raw.read_bytes()))
    elif fmt == "raw.zst":
        image = tmp_path / "image.zst"
        subprocess.run([require("zstd"), "-q", "-o", str(image), str(raw)], check=True)
    run = _deploy(node_disk, image_model, options, image, fmt)
    assert run.returncode == 0, run.stderr
    assert "gpucloud: deploy of gpu4: 5/5 writing the seed" in run.stderr
    # Each step reported to the receiver; done made the mark that turns gpu4's network boots into local-boot.
    steps = _steps(node_disk)
    assert [s["step"] for s in steps] == ["started", "disk", "image", "written", "done"], steps
    assert steps[1]["detail"] == str(node_disk["devdir"] / "nvme0n1")
    assert steps[2]["detail"] == "SHA-256 checked: %s" % hashlib.sha256(image.read_bytes()).hexdigest()
    assert steps[-1]["detail"] == "image.%s on %s" % (fmt, node_disk["devdir"] / "nvme0n1")
    assert (node_disk["marks"] / "gpu4.imaged").exists()
    # The image's table, its root partition (1, the last on the disk) grown to the disk's end; the backup GPT
    # moved to the end (sfdisk would warn otherwise).
    table = disk_images.partitions(node_disk["backing"])
    assert table[15] == (ESP_START, ESP_SECTORS)
    assert table[1][0] == ROOT_START
    # Up to the last usable sector: the disk's end less the backup GPT (32 sectors of entries and its header).
    assert table[1][0] + table[1][1] == DISK_MIB * MIB // SECTOR - 33
    verify = subprocess.run(["sfdisk", "--verify", str(node_disk["backing"])], capture_output=True, text=True,
                            check=False)
    assert verify.returncode == 0 and "The backup GPT table is not on the end" not in verify.stdout + verify.stderr
    # The root file system: the image's files, and the seed the node boots with, read by NoCloud alone.
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", "-o", "ro", node_disk["loops"][1], str(mnt)], check=True)
    try:
        assert "bookworm" in (mnt / "etc" / "os-release").read_text()
        seed = mnt / "var" / "lib" / "cloud" / "seed" / "nocloud"
        user_data = (seed / "user-data").read_text()
        assert "token=%s" % TOKEN in user_data and seeds.TOKEN_SLOT not in user_data
        assert (seed / "user-data").stat().st_mode & 0o077 == 0  # the token is root's alone
        assert yaml.safe_load((seed / "meta-data").read_text())["local-hostname"] == "gpu4"
        assert yaml.safe_load((seed / "network-config").read_text())["version"] == 2
        cfg = yaml.safe_load((mnt / "etc" / "cloud" / "cloud.cfg.d" / deploy.DATASOURCE_CFG).read_text())
        assert cfg == {"datasource_list": ["NoCloud", "None"]}
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_an_image_that_fails_its_checksum_writes_nothing(node_disk, image_model, options, tmp_path) -> None:
    image = _source_image(tmp_path)
    run = _deploy(node_disk, image_model, options, image, "raw", digest=DIGEST)
    assert run.returncode == 1
    got = hashlib.sha256(image.read_bytes()).hexdigest()
    assert "the image fetched has SHA-256 %s, not %s (the fleet's)" % (got, DIGEST) in run.stderr
    assert "4/5" not in run.stderr and _disk_untouched(node_disk)
    steps = _steps(node_disk)
    assert [s["step"] for s in steps] == ["started", "disk", "failed"], steps
    assert "the image fetched has SHA-256 %s, not %s" % (got, DIGEST) in steps[-1]["detail"]
    assert not (node_disk["marks"] / "gpu4.imaged").exists()


def test_a_seed_served_without_the_install_token_writes_nothing(node_disk, image_model, options, tmp_path) -> None:
    run = _deploy(node_disk, image_model, options, _source_image(tmp_path), "raw", token=False)
    assert run.returncode == 1
    # The script came without the token too: the receiver refuses its start, before any disk is chosen.
    assert "the boot server did not take this deploy's start" in run.stderr and "403 Forbidden" in run.stderr
    assert "1/5" not in run.stderr and _steps(node_disk) == []
    assert _disk_untouched(node_disk)


def test_a_network_boot_after_the_image_was_written_deploys_nothing(node_disk, image_model, options,
                                                                    tmp_path) -> None:
    """gpu4 is still marked installing until it is registered; if it boots the deploy ramdisk again (a boot order
    with the network first, before the boot server's local-boot answer reached it), the receiver refuses the second
    start and the disk the first deploy wrote is left as it is."""
    image = _source_image(tmp_path)
    assert _deploy(node_disk, image_model, options, image, "raw").returncode == 0
    written = hashlib.sha256(node_disk["backing"].read_bytes()).hexdigest()
    again = _deploy(node_disk, image_model, options, image, "raw")
    assert again.returncode == 1
    assert "the boot server did not take this deploy's start" in again.stderr and "409 Conflict" in again.stderr
    assert hashlib.sha256(node_disk["backing"].read_bytes()).hexdigest() == written
    assert [s["step"] for s in _steps(node_disk)] == ["started", "disk", "image", "written", "done"]


def test_no_disk_matching_the_hints_writes_nothing(node_disk, image_model, options, tmp_path) -> None:
    (node_disk["sysfs"] / "block" / "nvme0n1" / "device" / "serial").write_text("OTHER\n")
    run = _deploy(node_disk, image_model, options, _source_image(tmp_path), "raw")
    assert run.returncode == 1
    assert "no root disk (gpucloud: root disk of gpu4: no disk matches hints serial=S5GXNG0R1" in run.stderr
    assert "nvme0n1 (serial OTHER" in run.stderr
    assert _disk_untouched(node_disk)


def test_an_image_that_does_not_unpack_fails_naming_it(node_disk, image_model, options, tmp_path) -> None:
    broken = tmp_path / "broken.gz"
    broken.write_bytes(gzip.compress(_source_image(tmp_path).read_bytes())[:4096])  # its digest is the fleet's
    run = _deploy(node_disk, image_model, options, broken, "raw.gz")
    assert run.returncode == 1
    assert "the raw.gz image does not unpack (gzip -dc)" in run.stderr
    assert "5/5" not in run.stderr


def test_a_qcow2_image_is_converted_by_the_boot_server_and_checked_against_the_digest_it_serves(
        node_disk, image_model, options, tmp_path) -> None:
    raw = _source_image(tmp_path)
    image = _qcow2(raw)
    run = _deploy(node_disk, image_model, options, image, "qcow2")
    assert run.returncode == 0, run.stderr
    converted = node_disk["served"] / "os" / "deb12img" / "image.raw.zst"
    steps = _steps(node_disk)
    assert [s["step"] for s in steps] == ["started", "disk", "image", "written", "done"], steps
    assert steps[2]["detail"] == "SHA-256 checked: %s" % hashlib.sha256(converted.read_bytes()).hexdigest()
    assert steps[-1]["detail"] == "image.raw.zst on %s" % (node_disk["devdir"] / "nvme0n1")
    # The disk holds the raw image's bytes (its ESP: the table and the root file system change after the write).
    with raw.open("rb") as want, node_disk["backing"].open("rb") as got:
        want.seek(ESP_START * SECTOR)
        got.seek(ESP_START * SECTOR)
        assert got.read(ESP_SECTORS * SECTOR) == want.read(ESP_SECTORS * SECTOR)
    assert disk_images.partitions(node_disk["backing"])[1][0] + disk_images.partitions(
        node_disk["backing"])[1][1] == DISK_MIB * MIB // SECTOR - 33


def test_a_converted_image_without_the_boot_server_s_digest_writes_nothing(node_disk, image_model, options,
                                                                           tmp_path) -> None:
    run = _deploy(node_disk, image_model, options, _qcow2(_source_image(tmp_path)), "qcow2", served_digest=False)
    assert run.returncode == 1
    assert "the boot server serves no digest of the converted image at %s/os/deb12img/image.raw.zst.sha256" % (
        node_disk["base"]) in run.stderr
    assert "4/5" not in run.stderr and _disk_untouched(node_disk)


def test_a_qcow2_named_raw_writes_nothing(node_disk, image_model, options, tmp_path) -> None:
    run = _deploy(node_disk, image_model, options, _qcow2(_source_image(tmp_path)), "raw")
    assert run.returncode == 1
    assert ("the image is a qcow2 (it begins with QFI\\373), not raw: set the profile's image_format: qcow2"
            in run.stderr), run.stderr
    assert "4/5" not in run.stderr and _disk_untouched(node_disk)
    assert [s["step"] for s in _steps(node_disk)] == ["started", "disk", "failed"]


def test_the_converter_refuses_a_qcow2_that_does_not_stand_alone_and_is_idempotent(tmp_path) -> None:
    raw = _source_image(tmp_path)
    good = _qcow2(raw)
    dest = tmp_path / "out" / "image.raw.zst"
    dest.parent.mkdir()
    first = _convert(good, dest)
    assert (first["rc"], first["changed"]) == (0, True)
    unpacked = subprocess.run([require("zstd"), "-dc", str(dest)], capture_output=True, check=True).stdout
    assert unpacked == raw.read_bytes()
    assert (dest.parent / "image.raw.zst.sha256").read_text() == "%s  image.raw.zst\n" % first["sha256"]
    assert first["sha256"] == hashlib.sha256(dest.read_bytes()).hexdigest()
    again = _convert(good, dest)
    assert (again["rc"], again["changed"], again["sha256"]) == (0, False, first["sha256"])
    # What is served no longer matches its digest: converted again.
    dest.write_bytes(b"tampered")
    assert _convert(good, dest)["changed"] is True
    before = dest.read_bytes()
    # A qcow2 over another file of the boot server (a backing file, an external data file), an image whose digest
    # is not the fleet's, a raw file: refused, and what was served stays.
    backing = tmp_path / "backing.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-b", str(raw), "-F", "raw", str(backing)],
                   check=True)
    datafile = tmp_path / "datafile.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-o", "data_file=%s" % (tmp_path / "data.raw"),
                    str(datafile), "64M"], check=True)
    for source, digest, expected in (
            (backing, None, "it names a backing file (%s)" % raw),
            (datafile, None, "it names an external data file (%s)" % (tmp_path / "data.raw")),
            (good, DIGEST, "it has SHA-256 %s, not %s (the fleet's)"
             % (hashlib.sha256(good.read_bytes()).hexdigest(), DIGEST)),
            (raw, None, "Image is not in qcow2 format")):
        refused = _convert(source, dest, digest)
        assert refused["rc"] == 1 and expected in refused["msg"], refused
        assert dest.read_bytes() == before
    assert sorted(p.name for p in dest.parent.iterdir()) == ["image.raw.zst", "image.raw.zst.sha256",
                                                             "image.raw.zst.source"]


RAMDISK_FILES = Path(__file__).resolve().parents[5] / "roles" / "pxe_server" / "files" / "deploy-ramdisk"
CLOUD_IMAGE_BUILDER = Path(__file__).resolve().parents[5] / "lab" / "lib" / "build-cloud-image.sh"


@pytest.mark.parametrize(("script", "shell"), [(RAMDISK_FILES / "build.sh", "bash"), (RAMDISK_FILES / "init", "sh"),
                                               (RAMDISK_FILES / "udhcpc.script", "sh"), (CLOUD_IMAGE_BUILDER, "bash")])
def test_the_ramdisk_and_image_build_scripts_are_clean_under_shellcheck(script: Path, shell: str) -> None:
    shellcheck = require("shellcheck")
    proc = subprocess.run([shellcheck, "-s", shell, str(script)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout
