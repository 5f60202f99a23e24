# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Role pxe_server's virtual media ISO build (files/deploy-ramdisk/build-iso.sh), run for real here and read back
with the tools a firmware's view needs: the ISO's El Torito catalogue boots a UEFI image (xorriso), that FAT image
holds the removable-media boot loader \\EFI\\BOOT\\BOOTX64.EFI (mtools), and that program is systemd's EFI stub with
the kernel, the initrd and the command line as its .linux, .initrd and .cmdline sections, byte for byte, each
after the stub's own (objdump, objcopy). A missing input fails naming it and leaves no ISO behind.
The tools are bindep.txt's (xorriso, mtools, dosfstools, binutils, systemd-boot-efi): a skip here fails in CI."""
from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.tools import require

SCRIPT = Path(__file__).resolve().parents[5] / "roles" / "pxe_server" / "files" / "deploy-ramdisk" / "build-iso.sh"
STUB = Path("/usr/lib/systemd/boot/efi/linuxx64.efi.stub")  # what the script builds on
CMDLINE = ("gpucloud.deploy=http://198.51.100.10:8080/hosts/gpu4/deploy.sh gpucloud.mac=52:54:00:c6:33:63 "
           "console=ttyS0,115200n8 gpucloud.ip=198.51.100.24/24 gpucloud.gw=198.51.100.254")


@pytest.fixture
def tools() -> dict[str, str]:
    """The tools the script runs and those the test reads its ISO with; a stated skip (a failure in CI) without."""
    found = {name: require(name) for name in ("bash", "xorriso", "mkfs.fat", "mmd", "mcopy", "mdir", "objcopy",
                                              "objdump")}
    if not STUB.is_file():
        pytest.skip(f"{STUB} is not installed (bindep.txt: Debian's systemd-boot-efi package)")
    return found


def _build(tools: dict[str, str], out: Path, kernel: Path, initrd: Path,
           cmdline: str = CMDLINE) -> subprocess.CompletedProcess:
    folders = dict.fromkeys(os.path.dirname(path) for path in tools.values())  # mkfs.fat is in /usr/sbin
    env = dict(os.environ, PATH=os.pathsep.join([*folders, os.environ.get("PATH", "")]))
    return subprocess.run([tools["bash"], str(SCRIPT), str(out), str(kernel), str(initrd), cmdline],
                          capture_output=True, text=True, env=env, check=False, timeout=120)


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    """A 'kernel' and an 'initrd' of sizes that are no multiple of any alignment, of bytes no two alike."""
    kernel, initrd = tmp_path / "vmlinuz", tmp_path / "initrd.gz"
    kernel.write_bytes(os.urandom(300_001))
    initrd.write_bytes(os.urandom(1_048_583))
    return kernel, initrd


def _run(*argv: str) -> str:
    proc = subprocess.run(list(argv), capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode == 0, (argv, proc.stdout, proc.stderr)
    return proc.stdout


def _sections(tools: dict[str, str], program: Path) -> dict[str, tuple[int, int]]:
    """Section name -> (VMA, size), as objdump reads the PE file."""
    out = {}
    for line in _run(tools["objdump"], "-h", str(program)).splitlines():
        words = line.split()
        if len(words) == 7 and words[0].isdigit():
            out[words[1]] = (int(words[3], 16), int(words[2], 16))
    return out


def _boot_program(tools: dict[str, str], iso: Path, work: Path) -> Path:
    """\\EFI\\BOOT\\BOOTX64.EFI of the ISO's El Torito UEFI image, as a firmware finds it."""
    report = _run(tools["xorriso"], "-indev", str(iso), "-report_el_torito", "plain")
    images = [line.split(":", 1)[1].split() for line in report.splitlines() if line.startswith("El Torito boot img")]
    assert len(images) == 1 and images[0][1] == "UEFI" and images[0][3] == "none", report  # platform 0xef, no emul.
    paths = [line.split(":", 1)[1].split() for line in report.splitlines() if line.startswith("El Torito img path")]
    assert paths == [["1", "/efiboot.img"]], report
    image = work / "efiboot.img"
    _run(tools["xorriso"], "-osirrox", "on", "-indev", str(iso), "-extract", "/efiboot.img", str(image))
    listing = _run(tools["mdir"], "-i", str(image), "-b", "::/EFI/BOOT")
    assert listing.split() == ["::/EFI/BOOT/BOOTX64.EFI"], listing
    program = work / "BOOTX64.EFI"
    _run(tools["mcopy"], "-n", "-i", str(image), "::/EFI/BOOT/BOOTX64.EFI", str(program))
    return program


def test_the_iso_boots_by_uefi_the_stub_with_the_kernel_initrd_and_command_line(tools, tmp_path: Path) -> None:
    kernel, initrd = _inputs(tmp_path)
    out = tmp_path / "http" / "gpu4.iso"
    out.parent.mkdir()
    proc = _build(tools, out, kernel, initrd)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.parent.iterdir()) == ["gpu4.iso"]  # no .tmp left beside it
    assert out.stat().st_mode & 0o777 == 0o644  # the HTTP server serves it to the BMC
    program = _boot_program(tools, out, tmp_path)
    stub = _sections(tools, STUB)
    sections = _sections(tools, program)
    wanted = {".cmdline": CMDLINE.encode(), ".linux": kernel.read_bytes(), ".initrd": initrd.read_bytes()}
    for name, data in wanted.items():
        dump = tmp_path / name.lstrip(".")
        _run(tools["objcopy"], "-O", "binary", "--only-section=" + name, str(program), str(dump))
        assert dump.read_bytes() == data, name
        assert sections[name][1] == len(data), name
    # The stub's own sections are as they were, and each added one starts after everything before it: the stub
    # finds them by name, the firmware loads them where their VMAs say, so no two may overlap.
    assert {k: v for k, v in sections.items() if k in stub} == stub
    spans = sorted(sections.values())
    assert all(start + size <= after for (start, size), (after, _s) in itertools.pairwise(spans)), spans
    end_of_stub = max(start + size for start, size in stub.values())
    assert min(sections[name][0] for name in wanted) >= end_of_stub


def test_a_build_replaces_the_iso_whole(tools, tmp_path: Path) -> None:
    kernel, initrd = _inputs(tmp_path)
    out = tmp_path / "gpu4.iso"
    assert _build(tools, out, kernel, initrd).returncode == 0
    assert _build(tools, out, kernel, initrd, "gpucloud.deploy=http://192.0.2.1/x.sh").returncode == 0
    program = _boot_program(tools, out, tmp_path)
    dump = tmp_path / "cmdline"
    _run(tools["objcopy"], "-O", "binary", "--only-section=.cmdline", str(program), str(dump))
    assert dump.read_bytes() == b"gpucloud.deploy=http://192.0.2.1/x.sh"


@pytest.mark.parametrize("missing", ["kernel", "initrd", "empty initrd"])
def test_a_missing_input_fails_naming_it_and_leaves_no_iso(tools, tmp_path: Path, missing: str) -> None:
    kernel, initrd = _inputs(tmp_path)
    if missing == "kernel":
        kernel.unlink()
    elif missing == "initrd":
        initrd.unlink()
    else:
        initrd.write_bytes(b"")
    named = kernel if missing == "kernel" else initrd
    out = tmp_path / "out" / "gpu4.iso"
    out.parent.mkdir()
    proc = _build(tools, out, kernel, initrd)
    assert proc.returncode != 0
    assert f"gpucloud: {named} is missing or empty; the ISO needs it" in proc.stderr, proc.stderr
    assert list(out.parent.iterdir()) == []
    # An ISO built before stays as it was: OUT is replaced only once the new one is complete.
    out.write_bytes(b"the ISO built before")
    assert _build(tools, out, kernel, initrd).returncode != 0
    assert out.read_bytes() == b"the ISO built before" and list(out.parent.iterdir()) == [out]


def test_the_script_is_clean_under_shellcheck() -> None:
    shellcheck = require("shellcheck")
    proc = subprocess.run([shellcheck, "-s", "bash", str(SCRIPT)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout
