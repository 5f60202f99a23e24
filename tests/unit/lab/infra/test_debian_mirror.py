# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's site Debian mirror, held against apt and the role that uses it: apt verifies its InRelease with the
lab's key and installs the boot server's tools from it on a host that lacks them (this machine's package status
less those packages), and role pxe_server's deploy-ramdisk build script resolves the kernel it would fetch."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from gpucloud_lab.core import config
from gpucloud_lab.infra import debian_mirror, pkg_mirror

REPO = Path(__file__).resolve().parents[4]
NEEDED = ("apt-get", "apt-cache", "gpg", "gpgconf", "dpkg-scanpackages")


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The mirror as the lab builds it (Debian's packages fetched by apt-get download into a fresh cache) and its
    key, exported as the boot server gets it."""
    missing = [tool for tool in NEEDED if not shutil.which(tool)]
    if missing:  # bindep.txt lists them; CI fails on any skip
        pytest.skip(f"NEEDED TOOLS MISSING: {', '.join(missing)}")
    tmp = tmp_path_factory.mktemp("debian-mirror")
    patch = pytest.MonkeyPatch()
    patch.setattr(config, "CACHE_DIR", tmp / "cache")
    patch.setattr(pkg_mirror, "KEY_HOME", tmp / "gnupg")
    try:
        top = pkg_mirror.ensure_debian()
        key = tmp / "mirror.asc"
        key.write_text(pkg_mirror._gpg("--armor", "--export", pkg_mirror.ensure_key()))  # pylint: disable=W0212
        subprocess.run(["gpgconf", "--homedir", str(tmp / "gnupg"), "--kill", "gpg-agent"], check=False)
    finally:
        patch.undo()
    return top, key


def _apt_config(tmp: Path, top: Path, key: Path) -> Path:
    """An APT_CONFIG that lists this mirror only, with this machine's package status less the boot server's tools
    (a boot server before the role ran)."""
    parts = tmp / "sources.list.d"
    for sub in ("lists/partial", "archives/partial"):
        (tmp / sub).mkdir(parents=True, exist_ok=True)
    parts.mkdir(exist_ok=True)
    (parts / "debian.sources").write_text(f"Types: deb\nURIs: file://{top}\nSuites: {debian_mirror.SUITE}\n"
                                          f"Components: main\nSigned-By: {key}\n")
    tools = tuple(f"Package: {name}\n" for name in (*debian_mirror.INSTALLED, *debian_mirror.DOWNLOADED))
    stanzas = Path("/var/lib/dpkg/status").read_text().split("\n\n")
    (tmp / "status").write_text("\n\n".join(st for st in stanzas if not st.lstrip("\n").startswith(tools)))
    conf = tmp / "apt.conf"
    conf.write_text("".join(f'{k} "{v}";\n' for k, v in (
        ("Dir::Etc::SourceList", "/dev/null"), ("Dir::Etc::SourceParts", parts), ("Dir::Etc::Preferences", "/dev/null"),
        ("Dir::Etc::PreferencesParts", tmp / "none"), ("Dir::State::Lists", tmp / "lists"),
        ("Dir::State::status", tmp / "status"), ("Dir::Cache", tmp), ("Dir::Cache::Archives", tmp / "archives"),
        ("APT::Sandbox::User", "root"), ("Debug::NoLocking", "1"))))
    return conf


def test_the_boot_server_installs_its_tools_and_finds_its_kernel_in_the_mirror(mirror, tmp_path: Path) -> None:
    top, key = mirror
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "APT_CONFIG": str(_apt_config(tmp_path, top, key))}

    def apt(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(args), capture_output=True, text=True, check=False, env=env)

    update = apt("apt-get", "update")
    assert update.returncode == 0 and "InRelease" in update.stdout and "W:" not in update.stderr, update
    install = apt("apt-get", "-s", "install", *debian_mirror.INSTALLED)
    assert install.returncode == 0, install.stdout + install.stderr
    for name in debian_mirror.INSTALLED:
        assert f"Inst {name} (" in install.stdout, install.stdout
    # The role's build script: the kernel the metapackage points at, a version the mirror holds; busybox-static.
    resolved = apt("bash", str(REPO / "roles/pxe_server/files/deploy-ramdisk/build.sh"), "--resolve",
                   debian_mirror.KERNEL)
    assert resolved.returncode == 0, resolved.stderr
    kernel, version = resolved.stdout.split()
    assert kernel.startswith("linux-image-6.") and kernel.endswith("-amd64")
    pool = [p.name for p in (top / "pool" / "main").iterdir()]
    assert any(p.startswith(f"{kernel}_{version.replace(':', '%3a')}_") for p in pool), (kernel, version, pool)
    assert apt("apt-cache", "policy", "busybox-static").stdout.count("Candidate: (none)") == 0


def test_apt_refuses_the_mirror_when_its_release_was_altered(mirror, tmp_path: Path) -> None:
    top, key = mirror
    altered = tmp_path / "altered"
    shutil.copytree(top, altered, symlinks=True)
    inrelease = altered / "dists" / debian_mirror.SUITE / "InRelease"
    inrelease.write_text(inrelease.read_text().replace("Components: main", "Components: main contrib"))
    (altered / "dists" / debian_mirror.SUITE / "Release.gpg").unlink()
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "APT_CONFIG": str(_apt_config(tmp_path / "apt", altered, key))}
    update = subprocess.run(["apt-get", "update"], capture_output=True, text=True, check=False, env=env)
    text = update.stdout + update.stderr
    assert "BADSIG" in text or "invalid" in text.lower() or "not signed" in text, text
    policy = subprocess.run(["apt-cache", "policy", "fdisk"], capture_output=True, text=True, check=False, env=env)
    assert "file:" not in policy.stdout, policy.stdout
