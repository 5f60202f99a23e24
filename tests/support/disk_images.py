# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Disk images for the image-deploy tests: one shaped as Debian's genericcloud image, made with util-linux's
sfdisk and e2fsprogs' mke2fs (no mount), and a reader of a disk's partition table."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

MIB = 1 << 20
SECTOR = 512
# The root partition (1) ends last, after the EFI system partition (15): Debian genericcloud's layout.
ROOT_START, ROOT_SECTORS = 18432, 45056
ESP_START, ESP_SECTORS = 2048, 16384
OS_RELEASE = 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n'


def cloud_image(folder: Path, sfdisk: str = "sfdisk", mke2fs: str = "mke2fs") -> Path:
    """A 32 MiB GPT disk image: partition 15 (EFI) first, partition 1 (ext4 root holding /etc/os-release)."""
    image = folder / "image.raw"
    with image.open("wb") as fh:
        fh.truncate(32 * MIB)
    table = ("label: gpt\nunit: sectors\n"
             "image.raw1 : start=%d, size=%d, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4\n"
             "image.raw15 : start=%d, size=%d, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B\n"
             % (ROOT_START, ROOT_SECTORS, ESP_START, ESP_SECTORS))
    subprocess.run([sfdisk, "-q", str(image)], input=table, text=True, check=True, capture_output=True)
    content = folder / "rootfs"
    (content / "etc").mkdir(parents=True)
    (content / "etc" / "os-release").write_text(OS_RELEASE)
    subprocess.run([mke2fs, "-q", "-F", "-t", "ext4", "-d", str(content), "-E", "offset=%d" % (ROOT_START * SECTOR),
                    str(image), "%dk" % (ROOT_SECTORS * SECTOR // 1024)], check=True, capture_output=True)
    return image


def partitions(disk: Path) -> dict[int, tuple[int, int]]:
    """Partition number -> (start, size) in sectors, as ``sfdisk -d`` reads the disk."""
    out = subprocess.run(["sfdisk", "-d", str(disk)], capture_output=True, text=True, check=True).stdout
    parts = {}
    for line in out.splitlines():
        if " : start=" in line:
            dev, rest = line.split(" : ", 1)
            fields = dict(f.strip().split("=", 1) for f in rest.split(",") if "=" in f)
            number = re.search(r"([0-9]+)$", dev)
            assert number, line
            parts[int(number.group(1))] = (int(fields["start"]), int(fields["size"]))
    return parts
