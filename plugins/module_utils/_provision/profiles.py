# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OS profiles: which kernel, initrd and installer source a node of each family boots.

A profile's ``kernel``/``initrd`` is a URL (iPXE fetches it from there) or an absolute path on
the controller (the PXE server role copies it to the boot server and serves it over HTTP).
Without them, each family has a default; a family without one (RHEL: no public mirror) must
set them. With ``kernel_sha256``/``initrd_sha256`` a file on the controller is checked before
anything is copied (``verify_copies``), and a URL is not given to iPXE: the boot server fetches
it, checks it and serves it (the role's ``get_url`` with the checksum), so a node only ever boots
a kernel and an initrd of the digest the fleet names.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .._errors import ProblemsError
from . import deploy

FAMILIES = ("ubuntu", "rocky", "rhel", "debian")
SEED_FILES = {
    "ubuntu": ("user-data", "meta-data"),
    "rocky": ("ks.cfg",),
    "rhel": ("ks.cfg",),
    "debian": ("preseed.cfg",),
}
_DI = "/usr/lib/debian-installer/images/{version}/amd64/text/debian-installer/amd64/"
DEFAULTS: dict[str, dict[str, str]] = {
    # Debian's debian-installer-<N>-netboot-amd64 package: a real installer, served offline.
    "debian": {"kernel": _DI + "linux", "initrd": _DI + "initrd.gz", "image": "http://deb.debian.org/debian"},
    "ubuntu": {
        "kernel": "https://releases.ubuntu.com/{version}/netboot/amd64/linux",
        "initrd": "https://releases.ubuntu.com/{version}/netboot/amd64/initrd",
        "image": "https://releases.ubuntu.com/{version}/ubuntu-{version}-live-server-amd64.iso",
    },
    "rocky": {
        "kernel": "https://dl.rockylinux.org/pub/rocky/{major}/BaseOS/x86_64/os/images/pxeboot/vmlinuz",
        "initrd": "https://dl.rockylinux.org/pub/rocky/{major}/BaseOS/x86_64/os/images/pxeboot/initrd.img",
        "image": "https://dl.rockylinux.org/pub/rocky/{major}/BaseOS/x86_64/os/",
    },
    "rhel": {},
}


# Where role pxe_server serves the deploy ramdisk it builds (under its HTTP root).
DEPLOY_RAMDISK_PATH = "deploy"
# An image of this format is converted by the boot server to CONVERTED_TO before it is served (_converted).
CONVERTED_FORMAT, CONVERTED_TO = "qcow2", "raw.zst"


# An installer profile's package source (inst.repo, the preseed mirror, autoinstall's): fetched by the installer.
INSTALLER_SOURCES = ("http://", "https://", "ftp://", "nfs:")


def is_url(value: str) -> bool:
    return value.startswith(("http://", "https://"))


def boot_artifacts(profile: dict[str, Any], http_base: str) -> dict[str, Any]:
    """``kernel``/``initrd`` URLs for iPXE, ``image`` (installer source) and the files to copy.

    ``copies`` lists ``{"src": controller path, "path": path under the HTTP root}``.
    Raises ProblemsError naming the profile key when a family has no default for a missing key.
    """
    name, family = profile["name"], profile.get("family")
    version = str(profile.get("version", ""))
    if family not in FAMILIES:
        raise ProblemsError(
            ["site.os_profiles.%s.family: %r is not supported; allowed: %s" % (name, family, ", ".join(FAMILIES))]
        )
    image_kind = profile.get("kind") == "image"
    # An image profile's kernel and initrd are the deploy ramdisk's (by default the one role pxe_server builds),
    # and its image is always served by the boot server after the check against image_sha256.
    defaults = DEFAULTS[family]
    if image_kind:
        defaults = {"kernel": "%s/%s/vmlinuz" % (http_base, DEPLOY_RAMDISK_PATH),
                    "initrd": "%s/%s/initrd.gz" % (http_base, DEPLOY_RAMDISK_PATH)}
    out: dict[str, Any] = {"copies": [], "deploy_ramdisk": image_kind and not profile.get("kernel"),
                           "image_kind": image_kind}
    problems = []
    for key in ("kernel", "initrd", "image"):
        value = profile.get(key) or defaults.get(key, "")
        if not value:
            what = "the image to deploy (kind image)" if image_kind else "family %s (no default)" % family
            problems.append("site.os_profiles.%s.%s: required for %s; a URL or an absolute path on the controller"
                            % (name, key, what))
            continue
        if not profile.get(key):  # only the family's defaults have {version} and {major}; a fleet value is as given
            value = value.format(version=version, major=version.split(".", maxsplit=1)[0])
        elif any(ch.isspace() for ch in value) or not value.isprintable():
            problems.append("site.os_profiles.%s.%s: %r has a space or a control character; a URL or an absolute path "
                            "goes onto the boot loader's command line as one word" % (name, key, value))
            continue
        elif key == "image" and not image_kind and not value.startswith(INSTALLER_SOURCES):
            problems.append("site.os_profiles.%s.image: %r is not a package source an installer fetches; give a URL "
                            "(%s)" % (name, value, ", ".join(INSTALLER_SOURCES)))
            continue
        digest = profile.get(key + "_sha256") if key != "image" or image_kind else None
        if image_kind and key == "image":
            fmt = str(profile.get("image_format") or "")
            if not digest:
                problems.append("site.os_profiles.%s.image_sha256: required for kind image (64 hex digits): a node "
                                "writes only an image of the digest the fleet names" % name)
            if fmt not in deploy.FORMATS and fmt != CONVERTED_FORMAT:
                problems.append("site.os_profiles.%s.image_format: %r is not one the deploy ramdisk writes; allowed: "
                                "%s"
                                % (name, fmt or None, ", ".join([*sorted(deploy.FORMATS), CONVERTED_FORMAT])))
            if problems:
                continue
            out.update(image_sha256=digest, image_format=fmt)
        if (key != "image" or image_kind) and not is_url(value):
            if not value.startswith("/"):
                problems.append("site.os_profiles.%s.%s: %r is neither a URL nor an absolute path" % (name, key, value))
                continue
            path = "os/%s/%s" % (name, value.rsplit("/", 1)[-1])
            out["copies"].append({"src": value, "path": path, "sha256": digest or "",
                                  "key": "site.os_profiles.%s.%s" % (name, key)})
            value = "%s/%s" % (http_base, path)
        elif digest:
            # Fetched by the boot server and checked there; the node boots the checked copy.
            path = "os/%s/%s" % (name, value.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] or key)
            out["copies"].append({"url": value, "path": path, "sha256": digest,
                                  "key": "site.os_profiles.%s.%s" % (name, key)})
            value = "%s/%s" % (http_base, path)
        out[key] = value
        if image_kind and key == "image" and out["image_format"] == CONVERTED_FORMAT:
            _converted(out)
    served: dict[str, str] = {}
    for item in out["copies"]:
        first = served.setdefault(item["path"], item["key"])
        if first != item["key"]:  # one file would overwrite the other (and its digest check with it)
            problems.append("%s: served as %s, as %s is: the two need file names of their own"
                            % (item["key"], item["path"], first))
    if problems:
        raise ProblemsError(problems)
    return out


def _converted(out: dict[str, Any]) -> None:
    """A qcow2 image: the boot server converts its checked copy to ``raw.zst`` next to it (role pxe_server,
    ``files/convert-image.py``) and serves that with ``<path>.sha256``, the digest of what it wrote, which the
    deploy ramdisk fetches instead of the fleet's (the fleet's is the qcow2's; the boot server checked it)."""
    source = out["copies"][-1]
    stem = source["path"][:-len(".qcow2")] if source["path"].endswith(".qcow2") else source["path"]
    target = stem + "." + CONVERTED_TO
    source["convert"] = {"format": CONVERTED_FORMAT, "path": target}
    url = "%s/%s" % (out["image"].rsplit("/", 1)[0], target.rsplit("/", 1)[-1])
    out.update(image=url, image_format=CONVERTED_TO, image_sha256="", image_sha256_url=url + ".sha256")


def verify_copies(copies: list[dict[str, Any]]) -> None:
    """Check every controller file that has a ``sha256`` against it, before anything is copied.

    Raises ProblemsError naming the profile key (``site.os_profiles.NAME.kernel``), the file, the digest
    the fleet names and the one found."""
    problems = []
    for copy in copies:
        if not copy.get("src") or not copy.get("sha256"):
            continue
        digest = hashlib.sha256()
        try:
            with open(copy["src"], "rb") as handle:
                for block in iter(lambda h=handle: h.read(1 << 20), b""):
                    digest.update(block)
        except OSError as exc:
            problems.append("%s: %s on the controller cannot be read (%s)" % (copy["key"], copy["src"], exc.strerror))
            continue
        if digest.hexdigest() != copy["sha256"]:
            problems.append("%s_sha256: %s on the controller has SHA-256 %s, not %s (the fleet's); nothing was "
                            "copied" % (copy["key"], copy["src"], digest.hexdigest(), copy["sha256"]))
    if problems:
        raise ProblemsError(problems)
