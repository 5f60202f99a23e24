# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""OS profiles: each family's defaults filled in with the profile's version, what is a URL for iPXE and what is a
controller file the boot server serves, a URL with a digest fetched by the boot server under its file name (its
query left out), an installer's package source passed on as given, an image profile's deploy ramdisk and its
qcow2 converted, every problem of a profile at once, each naming its key and what is allowed, and verify_copies
checking only the controller files that have a digest, all of them before it fails."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import profiles

BASE = "http://198.51.100.10:8080"
DIGEST = "ab" * 32


def problems(profile: dict) -> list[str]:
    with pytest.raises(ProblemsError) as err:
        profiles.boot_artifacts(profile, BASE)
    return err.value.problems


@pytest.mark.parametrize(("family", "version", "kernel", "initrd", "image"), [
    ("rocky", "8.10",
     "https://dl.rockylinux.org/pub/rocky/8/BaseOS/x86_64/os/images/pxeboot/vmlinuz",
     "https://dl.rockylinux.org/pub/rocky/8/BaseOS/x86_64/os/images/pxeboot/initrd.img",
     "https://dl.rockylinux.org/pub/rocky/8/BaseOS/x86_64/os/"),
    ("ubuntu", "22.04.5",
     "https://releases.ubuntu.com/22.04.5/netboot/amd64/linux",
     "https://releases.ubuntu.com/22.04.5/netboot/amd64/initrd",
     "https://releases.ubuntu.com/22.04.5/ubuntu-22.04.5-live-server-amd64.iso"),
])
def test_a_family_s_default_urls_take_the_profile_s_version(family, version, kernel, initrd, image) -> None:
    out = profiles.boot_artifacts({"name": "p", "family": family, "version": version}, BASE)
    assert (out["kernel"], out["initrd"], out["image"]) == (kernel, initrd, image)
    assert out["copies"] == [] and out["deploy_ramdisk"] is False and out["image_kind"] is False


def test_debian_s_default_is_the_netboot_package_on_the_controller_served_by_the_boot_server() -> None:
    out = profiles.boot_artifacts({"name": "deb", "family": "debian", "version": 13}, BASE)  # YAML gives an int
    di = "/usr/lib/debian-installer/images/13/amd64/text/debian-installer/amd64/"
    assert out["copies"] == [
        {"src": di + "linux", "path": "os/deb/linux", "sha256": "", "key": "site.os_profiles.deb.kernel"},
        {"src": di + "initrd.gz", "path": "os/deb/initrd.gz", "sha256": "", "key": "site.os_profiles.deb.initrd"}]
    assert (out["kernel"], out["initrd"]) == (BASE + "/os/deb/linux", BASE + "/os/deb/initrd.gz")
    assert out["image"] == "http://deb.debian.org/debian"  # the installer's mirror, never copied


@pytest.mark.parametrize("value", ["http://mirror.example/x", "https://mirror.example/x"])
def test_http_and_https_are_urls(value: str) -> None:
    assert profiles.is_url(value)


@pytest.mark.parametrize("value", ["ftp://mirror.example/x", "file:///srv/x", "/srv/x", "mirror.example/x", ""])
def test_other_schemes_and_paths_are_not_urls(value: str) -> None:
    assert not profiles.is_url(value)


def test_a_url_with_a_digest_is_fetched_under_its_file_name_without_the_query() -> None:
    url = "https://artifacts.example/rocky/initrd.img?X-Amz-Signature=abc&X-Amz-Expires=600"
    out = profiles.boot_artifacts({"name": "r9", "family": "rocky", "version": "9.4", "initrd": url,
                                   "initrd_sha256": DIGEST}, BASE)
    assert out["copies"] == [{"url": url, "path": "os/r9/initrd.img", "sha256": DIGEST,
                              "key": "site.os_profiles.r9.initrd"}]
    assert out["initrd"] == BASE + "/os/r9/initrd.img"
    assert out["kernel"].startswith("https://dl.rockylinux.org/")  # no digest: iPXE fetches it itself


def test_a_fleet_path_with_braces_is_used_as_given() -> None:
    out = profiles.boot_artifacts({"name": "r9", "family": "rocky", "version": "9.4", "kernel": "/srv/{b}/vmlinuz",
                                   "initrd": "/srv/{b}/initrd.img"}, BASE)
    assert [c["src"] for c in out["copies"]] == ["/srv/{b}/vmlinuz", "/srv/{b}/initrd.img"]


def test_an_installer_s_package_source_is_passed_on_as_given_and_never_copied() -> None:
    out = profiles.boot_artifacts({"name": "r9", "family": "rocky", "version": "9.4", "kernel": "/srv/r9/vmlinuz",
                                   "image": "http://mirror.internal/rocky/9.4/BaseOS/x86_64/os/"}, BASE)
    assert out["image"] == "http://mirror.internal/rocky/9.4/BaseOS/x86_64/os/"
    assert [c["key"] for c in out["copies"]] == ["site.os_profiles.r9.kernel"]
    assert out["copies"][0]["src"] == "/srv/r9/vmlinuz" and out["kernel"] == BASE + "/os/r9/vmlinuz"


def test_an_image_profile_boots_the_ramdisk_the_boot_server_builds_unless_it_brings_one() -> None:
    image = {"name": "img", "family": "ubuntu", "version": "24.04", "kind": "image",
             "image": "https://mirror.example/noble.raw.zst", "image_sha256": DIGEST, "image_format": "raw.zst"}
    built = profiles.boot_artifacts(image, BASE)
    assert built["deploy_ramdisk"] is True and built["image_kind"] is True
    assert (built["kernel"], built["initrd"]) == (BASE + "/deploy/vmlinuz", BASE + "/deploy/initrd.gz")
    assert (built["image"], built["image_sha256"], built["image_format"]) == (
        BASE + "/os/img/noble.raw.zst", DIGEST, "raw.zst")
    own = profiles.boot_artifacts(dict(image, kernel="https://m.example/k", initrd="https://m.example/i"), BASE)
    assert own["deploy_ramdisk"] is False and (own["kernel"], own["initrd"]) == ("https://m.example/k",
                                                                                 "https://m.example/i")


def test_a_qcow2_on_the_controller_is_converted_by_the_boot_server_and_the_node_checks_its_digest() -> None:
    out = profiles.boot_artifacts({"name": "img", "family": "debian", "version": "12", "kind": "image",
                                   "image": "/srv/images/debian-12.qcow2", "image_sha256": DIGEST,
                                   "image_format": "qcow2"}, BASE)
    assert out["copies"] == [{"src": "/srv/images/debian-12.qcow2", "path": "os/img/debian-12.qcow2",
                              "sha256": DIGEST, "key": "site.os_profiles.img.image",
                              "convert": {"format": "qcow2", "path": "os/img/debian-12.raw.zst"}}]
    assert out["image"] == BASE + "/os/img/debian-12.raw.zst" and out["image_format"] == "raw.zst"
    # The fleet's digest is the qcow2's; the node checks what the boot server wrote, by its own digest file.
    assert out["image_sha256"] == "" and out["image_sha256_url"] == BASE + "/os/img/debian-12.raw.zst.sha256"


def test_rhel_has_no_public_mirror_and_every_missing_key_is_named_at_once() -> None:
    assert problems({"name": "rhel9", "family": "rhel", "version": "9.4"}) == [
        "site.os_profiles.rhel9.%s: required for family rhel (no default); a URL or an absolute path on the "
        "controller" % key for key in ("kernel", "initrd", "image")]


@pytest.mark.parametrize(("profile", "expected"), [
    ({"family": "windows", "version": "11"},
     ["site.os_profiles.bad.family: 'windows' is not supported; allowed: ubuntu, rocky, rhel, debian"]),
    ({"version": "9"}, ["site.os_profiles.bad.family: None is not supported; allowed: ubuntu, rocky, rhel, debian"]),
    ({"family": "rocky", "version": "9", "kernel": "files/vmlinuz", "initrd": "ftp://mirror.example/initrd.img"},
     ["site.os_profiles.bad.kernel: 'files/vmlinuz' is neither a URL nor an absolute path",
      "site.os_profiles.bad.initrd: 'ftp://mirror.example/initrd.img' is neither a URL nor an absolute path"]),
    ({"family": "debian", "version": "12", "kind": "image"},
     ["site.os_profiles.bad.image: required for the image to deploy (kind image); a URL or an absolute path on "
      "the controller"]),
    ({"family": "debian", "version": "12", "kind": "image", "image": "https://m.example/d.vmdk",
      "image_format": "vmdk"},
     ["site.os_profiles.bad.image_sha256: required for kind image (64 hex digits): a node writes only an image of "
      "the digest the fleet names",
      "site.os_profiles.bad.image_format: 'vmdk' is not one the deploy ramdisk writes; allowed: raw, raw.gz, "
      "raw.zst, qcow2"]),
    ({"family": "debian", "version": "12", "kind": "image", "image": "https://m.example/d.img",
      "image_sha256": DIGEST},
     ["site.os_profiles.bad.image_format: None is not one the deploy ramdisk writes; allowed: raw, raw.gz, "
      "raw.zst, qcow2"]),
    # two files served under one name: the second would overwrite the first, and its digest check with it
    ({"family": "rocky", "version": "9", "kernel": "https://a.example/dl?f=vmlinuz", "kernel_sha256": DIGEST,
      "initrd": "https://a.example/dl?f=initrd.img", "initrd_sha256": DIGEST},
     ["site.os_profiles.bad.initrd: served as os/bad/dl, as site.os_profiles.bad.kernel is: the two need file "
      "names of their own"]),
    # a fleet value is used as given: braces are not a template (they raised KeyError)
    ({"family": "rocky", "version": "9", "kernel": "/srv/{build}/vmlinuz", "initrd": "/srv/{build}/vmlinuz"},
     ["site.os_profiles.bad.initrd: served as os/bad/vmlinuz, as site.os_profiles.bad.kernel is: the two need "
      "file names of their own"]),
    # a line break (YAML's | and > add one) would split the boot loader's command line
    ({"family": "rocky", "version": "9", "kernel": "/srv/r9/vmlinuz\n"},
     ["site.os_profiles.bad.kernel: '/srv/r9/vmlinuz\\n' has a space or a control character; a URL or an absolute "
      "path goes onto the boot loader's command line as one word"]),
    ({"family": "rocky", "version": "9", "image": "mirror.example/rocky/9/BaseOS/x86_64/os"},
     ["site.os_profiles.bad.image: 'mirror.example/rocky/9/BaseOS/x86_64/os' is not a package source an installer "
      "fetches; give a URL (http://, https://, ftp://, nfs:)"]),
])
def test_a_bad_profile_is_refused_naming_each_key_and_what_is_allowed(profile: dict, expected: list[str]) -> None:
    assert problems(dict(profile, name="bad")) == expected


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    path = tmp_path / "vmlinuz"
    path.write_bytes(b"kernel" * 100)
    return path


def test_verify_copies_reads_only_controller_files_with_a_digest(kernel: Path, tmp_path: Path) -> None:
    good = hashlib.sha256(kernel.read_bytes()).hexdigest()
    with pytest.raises(ProblemsError) as err:
        profiles.verify_copies([
            {"src": str(kernel), "sha256": good, "key": "site.os_profiles.p.kernel"},
            {"src": str(tmp_path / "absent"), "sha256": "", "key": "site.os_profiles.p.initrd"},  # no digest
            {"url": "https://m.example/absent", "sha256": DIGEST, "key": "site.os_profiles.p.image"},  # fetched later
            {"src": str(tmp_path), "sha256": DIGEST, "key": "site.os_profiles.q.kernel"},
        ])
    assert err.value.problems == [
        "site.os_profiles.q.kernel: %s on the controller cannot be read (Is a directory)" % tmp_path]


def test_verify_copies_names_every_bad_file_at_once(kernel: Path, tmp_path: Path) -> None:
    with pytest.raises(ProblemsError) as err:
        profiles.verify_copies([
            {"src": str(kernel), "sha256": DIGEST, "key": "site.os_profiles.p.kernel"},
            {"src": str(tmp_path / "initrd.img"), "sha256": DIGEST, "key": "site.os_profiles.p.initrd"},
        ])
    found = hashlib.sha256(kernel.read_bytes()).hexdigest()
    assert err.value.problems == [
        "site.os_profiles.p.kernel_sha256: %s on the controller has SHA-256 %s, not %s (the fleet's); nothing was "
        "copied" % (kernel, found, DIGEST),
        "site.os_profiles.p.initrd: %s/initrd.img on the controller cannot be read (No such file or directory)"
        % tmp_path]
