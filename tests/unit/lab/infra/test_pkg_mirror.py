# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's site mirror of the Kubernetes packages, held against apt itself: apt verifies its InRelease with
the exported key, lists and would install the two packages at the pinned version, and refuses the repository
when the key apt is given is another one or the Release file was altered after signing."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from gpucloud_lab.core import config
from gpucloud_lab.infra import kube, pkg_mirror

NEEDED = ("apt-get", "gpg", "gpgconf", "dpkg-deb", "dpkg-scanpackages")


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    missing = [tool for tool in NEEDED if not shutil.which(tool)]
    if missing:  # bindep.txt lists them (gpg, dpkg-dev); CI fails on any skip
        pytest.skip(f"NEEDED TOOLS MISSING: {', '.join(missing)}")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("kubeadm", "kubectl", "kubelet"):
        (bin_dir / tool).write_bytes(b"#!/bin/sh\necho '%s stand-in of this test'\n" % tool.encode())
    monkeypatch.setattr(kube, "BIN_DIR", bin_dir)
    monkeypatch.setattr(config, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.setattr(pkg_mirror, "KEY_HOME", tmp_path / "gnupg")
    fingerprint = pkg_mirror.ensure_key()
    assert pkg_mirror.ensure_key() == fingerprint  # made once
    top = pkg_mirror.build(fingerprint, _debian_with_cni(tmp_path))
    return top / pkg_mirror.REPO_PATH, fingerprint


def _debian_with_cni(tmp_path: Path) -> Path:
    """A Debian mirror's pool holding a containernetworking-plugins package as Debian lays it out (usr/lib/cni)."""
    tree = tmp_path / "cni-tree"
    (tree / "usr" / "lib" / "cni").mkdir(parents=True)
    (tree / "DEBIAN").mkdir()
    for plugin in ("bridge", "host-local", "loopback"):
        (tree / "usr" / "lib" / "cni" / plugin).write_bytes(b"#!/bin/sh\n")
    (tree / "DEBIAN" / "control").write_text(
        "Package: containernetworking-plugins\nVersion: 1.1.1+ds1-3+b4\nArchitecture: amd64\nMaintainer: test\n"
        "Description: test\n")
    pool = tmp_path / "debian" / "pool" / "main"
    pool.mkdir(parents=True)
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(tree),
                    str(pool / "containernetworking-plugins_1.1.1+ds1-3+b4_amd64.deb")], capture_output=True, check=True)
    return tmp_path / "debian"


def test_the_real_kubelet_repository_and_the_cni_plugins_where_kubernetes_puts_them(
        mirror: tuple[Path, str], tmp_path: Path) -> None:
    repo = mirror[0]
    real = repo.parents[3] / pkg_mirror.REAL_PATH
    work = tmp_path / "apt-real"
    update = _apt(work, real, real / "Release.key", "apt-get", "update")
    assert update.returncode == 0 and "InRelease" in update.stdout, update.stdout + update.stderr
    install = _apt(work, real, real / "Release.key", "apt-get", "-s", "install", f"kubelet={pkg_mirror.VERSION}",
                   f"kubernetes-cni={pkg_mirror.VERSION}")
    assert install.returncode == 0, install.stdout + install.stderr
    info = subprocess.run(["dpkg-deb", "-I", str(real / "amd64" / f"kubelet_{pkg_mirror.VERSION}_amd64.deb")],
                          capture_output=True, text=True, check=True).stdout
    assert "SIMULATION" not in info and "build of the kubelet" in info, info
    listed = subprocess.run(["dpkg-deb", "-c", str(real / "amd64" / f"kubelet_{pkg_mirror.VERSION}_amd64.deb")],
                            capture_output=True, text=True, check=True).stdout
    assert "./usr/bin/kubelet" in listed and "./usr/lib/systemd/system/kubelet.service" in listed, listed
    for folder in (repo, real):  # both mirrors carry the plugins, in /opt/cni/bin as upstream's package does
        cni = subprocess.run(["dpkg-deb", "-c", str(folder / "amd64" / f"kubernetes-cni_{pkg_mirror.VERSION}_amd64.deb")],
                             capture_output=True, text=True, check=True).stdout
        assert all(f"./opt/cni/bin/{plugin}" in cni for plugin in ("bridge", "host-local", "loopback")), cni
        assert "usr/lib/cni" not in cni


def _apt(tmp: Path, repo: Path, key: Path, *args: str) -> subprocess.CompletedProcess[str]:
    parts = tmp / "sources.list.d"
    for sub in ("lists/partial", "archives/partial"):
        (tmp / sub).mkdir(parents=True, exist_ok=True)
    parts.mkdir(exist_ok=True)
    (parts / "kubernetes.sources").write_text(f"Types: deb\nURIs: file://{repo}/\nSuites: /\nSigned-By: {key}\n")
    # This machine's packages (python3, openssl: what the simulated kubelet needs) less any Kubernetes package it
    # happens to have (a cloud SDK's kubectl): a node before the role runs.
    status = tmp / "status"
    stanzas = Path("/var/lib/dpkg/status").read_text().split("\n\n")
    kube = ("Package: kubeadm\n", "Package: kubelet\n", "Package: kubectl\n")
    status.write_text("\n\n".join(st for st in stanzas if not st.lstrip("\n").startswith(kube)))
    options = ["Dir::Etc::SourceList=/dev/null", f"Dir::Etc::SourceParts={parts}", f"Dir::State::Lists={tmp / 'lists'}",
               f"Dir::State::status={status}",
               f"Dir::Cache={tmp}", f"Dir::Cache::Archives={tmp / 'archives'}", "APT::Sandbox::User=root",
               "Debug::NoLocking=1"]
    command = [args[0]] + [arg for option in options for arg in ("-o", option)] + list(args[1:])
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_apt_verifies_the_mirror_and_finds_the_pinned_packages(mirror: tuple[Path, str], tmp_path: Path) -> None:
    repo, fingerprint = mirror
    listed = subprocess.run(["gpg", "--show-keys", "--with-colons", str(repo / "Release.key")],
                            capture_output=True, text=True, check=True).stdout
    assert f"fpr:::::::::{fingerprint}:" in listed
    work = tmp_path / "apt"
    update = _apt(work, repo, repo / "Release.key", "apt-get", "update")
    assert update.returncode == 0 and "InRelease" in update.stdout, update.stdout + update.stderr
    madison = _apt(work, repo, repo / "Release.key", "apt-cache", "madison", "kubeadm", "kubelet", "kubectl").stdout
    assert [line.split("|")[1].strip() for line in madison.splitlines()] == [pkg_mirror.VERSION] * 3, madison
    install = _apt(work, repo, repo / "Release.key", "apt-get", "-s", "install",
                   f"kubeadm={pkg_mirror.VERSION}", f"kubelet={pkg_mirror.VERSION}", f"kubectl={pkg_mirror.VERSION}")
    assert install.returncode == 0, install.stdout + install.stderr
    for name in ("kubeadm", "kubelet", "kubectl"):
        assert f"Inst {name} ({pkg_mirror.VERSION}" in install.stdout
    # kubeadm needs kubectl, as upstream's package does: without it apt would not install kubeadm alone.
    alone = _apt(work, repo, repo / "Release.key", "apt-cache", "depends", "kubeadm").stdout
    assert "Depends: kubectl" in alone and "Depends: kubelet" in alone, alone
    # The kubelet is the lab's simulation, and its package says so (the roles cannot tell; people can).
    info = subprocess.run(["dpkg-deb", "-I", str(repo / "amd64" / f"kubelet_{pkg_mirror.VERSION}_amd64.deb")],
                          capture_output=True, text=True, check=True).stdout
    assert "gpucloud-lab SIMULATION" in info


def test_apt_refuses_the_mirror_under_another_key_or_an_altered_release(
        mirror: tuple[Path, str], tmp_path: Path) -> None:
    repo, _fingerprint = mirror
    other = tmp_path / "other-gnupg"
    other.mkdir(mode=0o700)
    gpg = ["gpg", "--homedir", str(other), "--batch", "--pinentry-mode", "loopback", "--passphrase", ""]
    subprocess.run([*gpg, "--quick-gen-key", "someone else <x@example.invalid>", "rsa2048", "sign", "never"],
                   capture_output=True, check=True)
    (tmp_path / "other.asc").write_text(subprocess.run([*gpg, "--armor", "--export"], capture_output=True, text=True,
                                                       check=True).stdout)
    subprocess.run(["gpgconf", "--homedir", str(other), "--kill", "gpg-agent"], check=False)
    wrong = _apt(tmp_path / "apt-wrong", repo, tmp_path / "other.asc", "apt-get", "update")
    assert "NO_PUBKEY" in wrong.stdout + wrong.stderr or "not signed" in wrong.stdout + wrong.stderr, wrong
    assert _apt(tmp_path / "apt-wrong", repo, tmp_path / "other.asc", "apt-cache", "madison", "kubeadm").stdout == ""

    inrelease = repo / "InRelease"
    inrelease.write_text(inrelease.read_text().replace("Architectures: amd64", "Architectures: amd64 arm64"))
    altered = _apt(tmp_path / "apt-altered", repo, repo / "Release.key", "apt-get", "update")
    assert "BADSIG" in altered.stdout + altered.stderr or "invalid" in (altered.stdout + altered.stderr).lower(), altered
    assert _apt(tmp_path / "apt-altered", repo, repo / "Release.key", "apt-cache", "madison", "kubeadm").stdout == ""
