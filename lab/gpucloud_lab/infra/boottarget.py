# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A "bare-metal" boot target: a QEMU machine (TCG) on a tap in the PXE segment, with UEFI firmware.

GPU servers boot UEFI, so the target does too: OVMF (Debian package ``ovmf``) with its own NVRAM, and a
virtio NIC without QEMU's iPXE option ROM (``romfile=``), so that the firmware's own UEFI PXE client
DHCPs (client architecture 7), fetches iPXE (``snponly.efi``) over TFTP, and iPXE then fetches the
node's script, as on a real server whose NIC has no iPXE.

Powered on and off on demand (`gpucloud-lab boot-target on|off`, or `power_on()` from tests), and
by its BMC: the fleet node gpu4's Redfish emulator (redfish.py) runs
`python3 -m gpucloud_lab.infra.boottarget on network|http|disk|off|state` (http: UEFI HTTP boot).

Its disk (``DISK``, a sparse 4 GiB file seen as a virtio disk of serial ``DISK_SERIAL``) is empty when the lab
comes up, as a new server's is, and kept across power cycles until `down`. A network boot puts the NIC first and
the disk second in the firmware's boot order, as a server provisioned over the network is set up; the machine
reboots as a server does (the deploy ramdisk's reboot, an installed OS's), so after a one-time network boot the
firmware tries the network again, and the boot server's local-boot answer (iPXE ``exit 1``) hands it on to the disk.
Its firmware's debug output and serial console go to the lab's log directory.
"""
from __future__ import annotations

import shutil
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


BOOT_ORDER = {"network": "n", "http": "n", "disk": "c"}
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


def qemu_command(memory_mb: int = 1536, boot: str = "network") -> list[str]:
    # OVMF boots by the devices' bootindex (QEMU's -boot order is for the BIOS): network first when asked, then
    # the disk. Memory: the deploy ramdisk holds an image in RAM before it writes it.
    network = BOOT_ORDER[boot] == "n"
    nic = f"virtio-net-pci,netdev=net0,mac={config.BOOT_TARGET.mac},romfile="
    return [
        "ip", "netns", "exec", config.LAB_NETNS,
        "qemu-system-x86_64", "-machine", "pc,accel=tcg", "-m", str(memory_mb), "-smp", "1",
        "-nodefaults", "-display", "none", "-vga", "none",
        "-drive", f"if=pflash,format=raw,unit=0,readonly=on,file={OVMF_CODE}",
        "-drive", f"if=pflash,format=raw,unit=1,file={HTTP_NVRAM if boot == 'http' else NVRAM}",
        "-serial", f"file:{SERIAL_LOG}",
        "-chardev", f"file,id=fw,path={FIRMWARE_LOG}", "-device", "isa-debugcon,iobase=0x402,chardev=fw",
        "-netdev", f"tap,id=net0,ifname={config.BOOT_TARGET_TAP},script=no,downscript=no",
        "-device", nic + (",bootindex=1" if network else ""),
        "-drive", f"file={DISK},if=none,id=disk0,format=raw",
        "-device", f"virtio-blk-pci,drive=disk0,serial={DISK_SERIAL},bootindex={2 if network else 1}",
    ] + (NO_PXE if boot == "http" else [])


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


def power_on(boot: str = "network") -> None:
    """Start the machine (booting from `boot`: network (PXE), http (UEFI HTTP boot) or disk); idempotent."""
    ensure_ra()
    if daemon_pid(UNIT):
        return
    ensure_tap()
    ensure_nvram()
    ensure_disk()
    config.LOG_DIR.mkdir(parents=True, exist_ok=True)
    for log in (SERIAL_LOG, FIRMWARE_LOG):
        log.unlink(missing_ok=True)
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
                    f"qemu TCG, UEFI (OVMF), mac {config.BOOT_TARGET.mac}, disk serial {DISK_SERIAL}, UEFI PXE "
                    f"or HTTP boot via the segment's DHCP; "
                    f"`gpucloud-lab boot-target on`"),
                Row("pxe ipv6 RA", ra, config.BRIDGE, "lifetime-0 RA: iPXE reaches DHCP in ~5 s")]


def main(argv: list[str]) -> int:
    """For the boot target's BMC: `on network|http|disk`, `off`, `state` (prints on or off)."""
    if argv[:1] == ["on"] and len(argv) == 2 and argv[1] in BOOT_ORDER:
        power_on(argv[1])
    elif argv == ["off"]:
        power_off()
    elif argv != ["state"]:
        print("usage: python3 -m gpucloud_lab.infra.boottarget on network|http|disk | off | state", file=sys.stderr)
        return 2
    print(state())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
