# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_host role's repo_key entry point, run by ansible-playbook on this machine: a repository signing key
is written only when it is exactly the pinned key. Keys are real OpenPGP keys made with gpg, fetched over
real HTTP (or read from a path), and read by gpg as the role does on a node."""
from __future__ import annotations

import functools
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.skipif(shutil.which("gpg") is None, reason="gpg is not installed (the role needs it too)")


def _key(home: Path, uid: str) -> str:
    """A new ed25519 key; its fingerprint."""
    subprocess.run(["gpg", "--homedir", str(home), "--batch", "--passphrase", "", "--quick-gen-key", uid,
                    "ed25519", "sign", "never"], check=True, capture_output=True)
    out = subprocess.run(["gpg", "--homedir", str(home), "--with-colons", "--list-keys", uid],
                         check=True, capture_output=True, text=True).stdout
    return re.search(r"^fpr:+([0-9A-F]{40}):", out, re.M)[1]


def _export(home: Path, *fingerprints: str) -> str:
    return subprocess.run(["gpg", "--homedir", str(home), "--armor", "--export", *fingerprints],
                          check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> dict[str, object]:
    home = tmp_path_factory.mktemp("gnupg")
    home.chmod(0o700)
    pinned = _key(home, "Pinned Repository <repo@example.invalid>")
    other = _key(home, "Someone Else <other@example.invalid>")
    served = tmp_path_factory.mktemp("served")
    (served / "pinned.asc").write_text(_export(home, pinned))
    (served / "other.asc").write_text(_export(home, other))
    (served / "both.asc").write_text(_export(home, pinned, other))
    (served / "page.html").write_text("<html><body>Not found</body></html>\n")
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(served))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield {"pinned": pinned, "other": other, "dir": served, "url": f"http://127.0.0.1:{server.server_address[1]}"}
    server.shutdown()
    # gpg started an agent for this home (key generation, exports); it would outlive the session.
    subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "gpg-agent"], check=False, capture_output=True)


def play(tmp_path: Path, url: str, fingerprint: str, dest: Path, *extra: str) -> subprocess.CompletedProcess:
    playbook = tmp_path / "repo_key.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Check one repository key", "hosts": "localhost", "gather_facts": False, "connection": "local",
        "tasks": [{"name": "Repo key", "ansible.builtin.include_role": {
            "name": "gpucloud.baremetal.gpu_host", "tasks_from": "repo_key"}}],
    }]))
    extravars = {"gpu_host_repo_key_name": "test-repo", "gpu_host_repo_key_url": url,
                 "gpu_host_repo_key_fingerprint": fingerprint, "gpu_host_repo_key_dest": str(dest),
                 "ansible_python_interpreter": sys.executable}
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1", NO_PROXY="127.0.0.1",
               no_proxy="127.0.0.1", PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    return subprocess.run(["ansible-playbook", "-i", "localhost,", str(playbook), "-e", json.dumps(extravars),
                           *extra], env=env, capture_output=True, text=True, timeout=300, check=False)


def changed(proc: subprocess.CompletedProcess) -> int:
    return int(re.search(r"localhost\s*:.*changed=(\d+)", proc.stdout)[1])


def test_the_pinned_key_is_installed_once_and_then_left_alone(keys, tmp_path: Path) -> None:
    dest = tmp_path / "keyrings" / "test-repo.asc"
    first = play(tmp_path, f"{keys['url']}/pinned.asc", keys["pinned"], dest)
    assert first.returncode == 0, first.stdout
    assert dest.read_text() == (keys["dir"] / "pinned.asc").read_text()
    assert stat.S_IMODE(dest.stat().st_mode) == 0o644
    # Spaces and case of the pinned fingerprint do not matter; an unchanged key changes nothing.
    spaced = " ".join(keys["pinned"][i:i + 4] for i in range(0, 40, 4)).lower()
    again = play(tmp_path, f"{keys['url']}/pinned.asc", spaced, dest)
    assert again.returncode == 0, again.stdout
    assert changed(again) == 0, again.stdout


def test_a_key_read_from_a_path_on_the_node_in_check_mode_is_checked_and_not_written(keys, tmp_path: Path) -> None:
    dest = tmp_path / "test-repo.asc"
    proc = play(tmp_path, str(keys["dir"] / "pinned.asc"), keys["pinned"], dest, "--check")
    assert proc.returncode == 0, proc.stdout
    assert changed(proc) >= 1 and not dest.exists()


@pytest.mark.parametrize("served, found, mode", [
    ("other.asc", "found {other}", ["--check"]),
    ("both.asc", "found {pinned}, {other}", []),
    ("page.html", "it is no OpenPGP public key gpg can read", []),
], ids=["another-key-in-check-mode", "an-extra-key", "no-key"])
def test_any_other_key_file_is_refused_before_anything_is_written(keys, tmp_path: Path, served: str, found: str,
                                                                  mode: list[str]) -> None:
    dest = tmp_path / "keyrings" / "test-repo.asc"
    proc = play(tmp_path, f"{keys['url']}/{served}", keys["pinned"], dest, *mode)
    assert proc.returncode != 0
    message = " ".join(proc.stdout.split())
    assert f"test-repo: not trusting the signing key at {keys['url']}/{served}:" in message
    assert found.format(**keys) in message
    if served != "page.html":
        assert f"expected key {keys['pinned']}" in message
    assert not dest.parent.exists()


def play_docker_repo(tmp_path: Path, extravars: dict, *extra: str) -> subprocess.CompletedProcess:
    """The docker_repo entry point on this machine (Debian: the apt branch), always in check mode with diff: it
    would otherwise add a repository to this machine's apt sources."""
    playbook = tmp_path / "docker_repo.yml"
    playbook.write_text(yaml.safe_dump([{
        "name": "Add Docker's repository", "hosts": "localhost", "gather_facts": True, "connection": "local",
        "tasks": [{"name": "Docker repo", "ansible.builtin.include_role": {
            "name": "gpucloud.baremetal.gpu_host", "tasks_from": "docker_repo"}}],
    }]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1", NO_PROXY="127.0.0.1",
               no_proxy="127.0.0.1", PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    return subprocess.run(["ansible-playbook", "-i", "localhost,", str(playbook), "--check", "--diff",
                           "-e", json.dumps({"ansible_python_interpreter": sys.executable, **extravars}), *extra],
                          env=env, capture_output=True, text=True, timeout=300, check=False)


def test_dockers_repository_is_added_as_docker_documents_it_only_behind_its_pinned_key(keys, tmp_path: Path) -> None:
    """gpu_host_containerd_source docker (the RHEL family's default: RHEL and Rocky ship no containerd) adds Docker's
    repository for containerd.io: on apt, a deb822 file with the node's release as suite and Docker's `stable`
    component, signed by the checked key; a key other than the pinned one stops it before the repository."""
    release = subprocess.run(["sh", "-c", ". /etc/os-release && echo $VERSION_CODENAME"], capture_output=True,
                             text=True, check=True).stdout.strip()
    mirror = keys["url"] + "/linux/debian"
    good = play_docker_repo(tmp_path, {"gpu_host_docker_repo_url": mirror,
                                       "gpu_host_docker_key_url": f"{keys['url']}/pinned.asc",
                                       "gpu_host_docker_key_fingerprint": keys["pinned"]})
    assert good.returncode == 0, good.stdout
    out = good.stdout
    assert "+++ after: /etc/apt/sources.list.d/docker.sources" in out, out
    for line in (f"+URIs: {mirror}", f"+Suites: {release}", "+Components: stable",
                 "+Signed-By: /etc/apt/keyrings/docker.asc", "+Types: deb"):
        assert line in out, (line, out)
    assert not Path("/etc/apt/sources.list.d/docker.sources").exists()
    bad = play_docker_repo(tmp_path, {"gpu_host_docker_repo_url": mirror,
                                      "gpu_host_docker_key_url": f"{keys['url']}/other.asc",
                                      "gpu_host_docker_key_fingerprint": keys["pinned"]})
    assert bad.returncode != 0
    assert "docker: not trusting the signing key" in " ".join(bad.stdout.split())
    assert "docker.sources" not in bad.stdout


def test_dockers_documented_keys_are_the_defaults_and_containerd_io_its_package() -> None:
    """The defaults name Docker's own signing keys, as docs.docker.com gives their fingerprints (rpm: RHEL, CentOS,
    Fedora; deb: Debian, Ubuntu), and its package; the RHEL family, which ships no containerd, uses them."""
    defaults = (ROOT / "roles/gpu_host/defaults/main.yml").read_text()
    assert "060A61C51B558A7F742B77AAC52FEB6B621E9F35" in defaults
    assert "9DC858229FC7DD38854AE2D88D81803C0EBFCD88" in defaults
    source = yaml.safe_load(defaults)["gpu_host_containerd_source"]
    assert "'docker' if (ansible_os_family | default('')) == 'RedHat' else 'distribution'" in source
    assert "'containerd.io' if gpu_host_containerd_source == 'docker'" in (ROOT / "roles/gpu_host/vars/main.yml").read_text()
