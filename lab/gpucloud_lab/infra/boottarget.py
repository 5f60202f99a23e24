# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A "bare-metal" boot target: a QEMU machine (TCG) on a tap in the PXE segment, with UEFI firmware.

GPU servers boot UEFI, so the target does too: OVMF (Debian package ``ovmf``) with its own NVRAM, and a
virtio NIC without QEMU's iPXE option ROM (``romfile=``), so that the firmware's own UEFI PXE client
DHCPs (client architecture 7), fetches iPXE (``snponly.efi``) over TFTP, and iPXE then fetches the
node's script, as on a real server whose NIC has no iPXE.

Powered on and off on demand (`gpucloud-lab boot-target on|off`, or `power_on()` from tests), and
by its BMC: the fleet node gpu4's Redfish emulator (redfish.py) runs
`python3 -m gpucloud_lab.infra.boottarget on network|http|disk|off|state` (http: UEFI HTTP boot), or
`on cd ISO` (virtual media: the image its BMC fetched, in an IDE CD drive, booted once; `run_cd`).

Its disk (``DISK``, a sparse 4 GiB file seen as a virtio disk of serial ``DISK_SERIAL``) is empty when the lab
comes up, as a new server's is, and kept across power cycles until `down`. A network boot puts the NIC first and
the disk second in the firmware's boot order, as a server provisioned over the network is set up; the machine
reboots as a server does (the deploy ramdisk's reboot, an installed OS's), so after a one-time network boot the
firmware tries the network again, and the boot server's local-boot answer (iPXE ``exit 1``) hands it on to the disk.
Its firmware's debug output and serial console go to the lab's log directory.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from gpucloud_lab.core import config
from gpucloud_lab.core.components import Row
from gpucloud_lab.core.util import daemon_pid, run, start_daemon, stop_unit
from gpucloud_lab.infra import net

UNIT = "boot-target"
RA_UNIT = "pxe-ra"
SERIAL_LOG = config.LOG_DIR / "boot-target.serial.log"
FIRMWARE_LOG = config.LOG_DIR / "boot-target.firmware.log"


def ensure_tap() -> None:
    ns, tap = config.LAB_NETNS, config.BOOT_TARGET_TAP
    if not net.link_exists(tap, ns):
        run(["ip", "-n", ns, "tuntap", "add", "dev", tap, "mode", "tap"])
    run(["ip", "-n", ns, "link", "set", tap, "master", config.BRIDGE, "up"])


BOOT_ORDER = {"network": "n", "http": "n", "disk": "c", "cd": "d"}
# UEFI HTTP boot (the BMC's one-time UefiHttp): OVMF with its PXE clients off (edk2 OvmfPkg reads these fw_cfg
# files at each boot, PcdIPv4PXESupport/PcdIPv6PXESupport), so the NIC's boot entry that runs is "UEFI HTTPv4",
# as a server's firmware does when its BMC selects HTTP boot.
NO_PXE = ["-fw_cfg", "name=opt/org.tianocore/IPv4PXESupport,string=n",
          "-fw_cfg", "name=opt/org.tianocore/IPv6PXESupport,string=n"]
# Debian 12's ovmf: the 4 MiB firmware build and its NVRAM template (the target's NVRAM is a copy, kept).
OVMF_CODE = Path("/usr/share/OVMF/OVMF_CODE_4M.fd")
OVMF_VARS = Path("/usr/share/OVMF/OVMF_VARS_4M.fd")
NVRAM = config.STATE_DIR / "boot-target.nvram.fd"
# An HTTP boot runs on a fresh copy of the template, thrown away at the next one: OVMF keeps the boot order it last
# used in NVRAM, and "UEFI HTTPv4" ahead of "UEFI PXEv4" would make the next one-time Pxe boot an HTTP boot (seen:
# the PXE test after an HTTP one got the HTTP offer). A server's BMC points BootNext at the entry asked for.
HTTP_NVRAM = config.STATE_DIR / "boot-target.http-nvram.fd"
DISK = config.STATE_DIR / "boot-target.disk.raw"
DISK_MIB = 4096
DISK_SERIAL = "GCLGPU4ROOT01"  # the fleet's root device hint for gpu4 can name it


def qemu_command(memory_mb: int = 1536, boot: str = "network", iso: str = "") -> list[str]:
    # OVMF boots by the devices' bootindex (QEMU's -boot order is for the BIOS): network first when asked, then
    # the disk. Memory: the deploy ramdisk holds an image in RAM before it writes it. A virtual media image (iso)
    # is an IDE CD drive, first for a one-time Cd boot, else after the disk (a BMC's media stays inserted until
    # ejected; the firmware's order puts the disk first). Two vCPUs on multi-threaded TCG: a single vCPU left one of
    # the machine's two cores idle while the guest booted (vmstat: ~45% idle); with two the virtual media deploy's
    # machine time went from 101 s to 88 s (ramdisk write 23 -> 18 s, reboot to phone-home 64 -> 55 s).
    network = BOOT_ORDER[boot] == "n"
    cd = BOOT_ORDER[boot] == "d"
    nic = f"virtio-net-pci,netdev=net0,mac={config.BOOT_TARGET.mac},romfile="
    media = ["-drive", f"file={iso},if=none,id=cd0,media=cdrom,readonly=on",
             "-device", f"ide-cd,drive=cd0,bootindex={1 if cd else 3}"] if iso else []
    return [
        "ip", "netns", "exec", config.LAB_NETNS,
        "qemu-system-x86_64", "-machine", "pc", "-accel", "tcg,thread=multi", "-m", str(memory_mb), "-smp", "2",
        "-nodefaults", "-display", "none", "-vga", "none",
        "-drive", f"if=pflash,format=raw,unit=0,readonly=on,file={OVMF_CODE}",
        "-drive", f"if=pflash,format=raw,unit=1,file={HTTP_NVRAM if boot == 'http' else NVRAM}",
        # appended to (power_on starts them empty): a virtual media boot's second QEMU (run_cd) keeps the first's lines
        "-chardev", f"file,id=console,path={SERIAL_LOG},append=on", "-serial", "chardev:console",
        "-chardev", f"file,id=fw,path={FIRMWARE_LOG},append=on", "-device", "isa-debugcon,iobase=0x402,chardev=fw",
        "-netdev", f"tap,id=net0,ifname={config.BOOT_TARGET_TAP},script=no,downscript=no",
        "-device", nic + (",bootindex=1" if network else ""),
        "-drive", f"file={DISK},if=none,id=disk0,format=raw",
        "-device", f"virtio-blk-pci,drive=disk0,serial={DISK_SERIAL},bootindex={2 if network or cd else 1}",
    ] + media + (NO_PXE if boot == "http" else [])


def run_cd(iso: str) -> int:
    """The machine while its BMC's one-time virtual media boot runs (the unit's process): QEMU booting ``iso``
    from its CD drive with ``-no-reboot``, so that the machine's first reboot (the deploy ramdisk's, once the
    image is written) ends it; then QEMU again in its place (same process, same unit), booting from the disk with
    the media still in the drive after it, as a server does once the one-time override is used. A stop (SIGTERM)
    in the first part stops QEMU. SIMULATION of one thing: QEMU cannot tell a reboot from a power-off here, so a
    guest power-off during the CD boot also boots the disk."""
    proc = subprocess.Popen([*qemu_command(boot="cd", iso=iso), "-no-reboot"])  # pylint: disable=consider-using-with

    def stop(_signum, _frame) -> None:
        proc.terminate()
        proc.wait()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    if proc.wait() != 0:
        return proc.returncode
    command = qemu_command(boot="disk", iso=iso)
    os.execvp(command[0], command)
    return 0


def ensure_disk() -> None:
    """The target's disk: empty (sparse) when made, kept until `down`."""
    if not DISK.exists():
        DISK.parent.mkdir(parents=True, exist_ok=True)
        with DISK.open("wb") as handle:
            handle.truncate(DISK_MIB * 1024 * 1024)


def ensure_nvram() -> None:
    """The target's own NVRAM (boot entries, as a server keeps them), made once from OVMF's template."""
    if not OVMF_CODE.exists():
        raise RuntimeError(f"{OVMF_CODE} is missing: install Debian's ovmf package (bindep.txt) for the boot target")
    if not NVRAM.exists():
        NVRAM.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(OVMF_VARS, NVRAM)
    shutil.copyfile(OVMF_VARS, HTTP_NVRAM)


def power_on(boot: str = "network", iso: str = "") -> None:
    """Start the machine (booting from `boot`: network (PXE), http (UEFI HTTP boot), disk, or cd: the virtual
    media image ``iso`` once, then the disk); idempotent."""
    ensure_ra()
    if daemon_pid(UNIT):
        return
    ensure_tap()
    ensure_nvram()
    ensure_disk()
    config.LOG_DIR.mkdir(parents=True, exist_ok=True)
    for log in (SERIAL_LOG, FIRMWARE_LOG):
        log.unlink(missing_ok=True)
    if boot == "cd":
        if not Path(iso).is_file():
            raise RuntimeError(f"the boot target's virtual media image {iso} is missing")
        start_daemon(UNIT, [sys.executable, "-m", "gpucloud_lab.infra.boottarget", "run-cd", iso],
                     env={"PYTHONPATH": str(config.LAB_DIR)})
    else:
        start_daemon(UNIT, qemu_command(boot=boot))


def power_off() -> None:
    stop_unit(UNIT, timeout=5.0)


def ensure_ra() -> None:
    if not daemon_pid(RA_UNIT):
        start_daemon(RA_UNIT, ["ip", "netns", "exec", config.LAB_NETNS, sys.executable, "-m", "gpucloud_lab.infra.ra",
                               config.BRIDGE], env={"PYTHONPATH": str(config.LAB_DIR)})


def stop_ra() -> None:
    stop_unit(RA_UNIT)


def state() -> str:
    return "on" if daemon_pid(UNIT) else "off"


class BootTarget:
    """The lab component: the QEMU network-boot target, off after `up` (tests and users power it on)."""

    def up(self) -> None:
        ensure_ra()
        ensure_disk()

    def down(self) -> None:
        power_off()
        stop_ra()
        DISK.unlink(missing_ok=True)

    def rows(self) -> list[Row]:
        ra = "running" if daemon_pid(RA_UNIT) else "stopped"
        return [Row("boot target", state(), f"tap {config.BOOT_TARGET_TAP}",
                    f"qemu TCG (2 vCPUs, multi-threaded), UEFI (OVMF), mac {config.BOOT_TARGET.mac}, "
                    f"disk serial {DISK_SERIAL}, UEFI PXE or HTTP boot via the segment's DHCP; "
                    f"`gpucloud-lab boot-target on`"),
                Row("pxe ipv6 RA", ra, config.BRIDGE, "lifetime-0 RA: iPXE reaches DHCP in ~5 s")]


def main(argv: list[str]) -> int:
    """For the boot target's BMC: `on network|http|disk`, `on cd ISO`, `off`, `state` (prints on or off); and
    `run-cd ISO`, the unit's own process of a virtual media boot."""
    if argv[:1] == ["run-cd"] and len(argv) == 2:
        return run_cd(argv[1])
    if argv[:2] == ["on", "cd"] and len(argv) == 3:
        power_on("cd", argv[2])
    elif argv[:1] == ["on"] and len(argv) == 2 and argv[1] in BOOT_ORDER and argv[1] != "cd":
        power_on(argv[1])
    elif argv == ["off"]:
        power_off()
    elif argv != ["state"]:
        print("usage: python3 -m gpucloud_lab.infra.boottarget on network|http|disk | on cd ISO | off | state",
              file=sys.stderr)
        return 2
    print(state())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
