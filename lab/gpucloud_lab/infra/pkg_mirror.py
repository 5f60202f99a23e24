# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site's package mirror: an apt repository laid out as the Kubernetes project's (pkgs.k8s.io), signed
with a key of the lab's own, serving the node packages the gpu_host role installs, as an air-gapped site's
mirror of pkgs.k8s.io would. Lab hosts start without kubeadm or a kubelet; the roles install them from here.

Layout (pkgs.k8s.io's, one flat repository per minor release): ``core:/stable:/v1.20/deb/`` holding
``InRelease``, ``Release``, ``Release.gpg``, ``Release.key``, ``Packages(.gz)`` and ``amd64/*.deb``; apt's
sources line is ``deb [signed-by=KEY] URL/core:/stable:/v1.20/deb/ /``, as upstream documents it.

The packages, built here (versions ``<KUBERNETES_VERSION>-1.1``, upstream's revision scheme):

* ``kubeadm``: the real kubeadm the lab builds from Debian's ``kubernetes`` source (kube.py), with the
  kubelet drop-in ``10-kubeadm.conf`` where the upstream kubeadm package puts it;
* ``kubectl``: the real kubectl of the same source and version;
* ``kubelet``: the lab's SIMULATED kubelet (sim/kubelet_sim.py: the real TLS bootstrap and registration,
  no pods) with the upstream kubelet.service. Its package description says so; the roles cannot tell.
* ``kubernetes-cni``: the CNI plugins in ``/opt/cni/bin``, as upstream's package puts them, made of Debian's
  ``containernetworking-plugins`` (which puts the same plugins in ``/usr/lib/cni``), fetched with the Debian mirror.

A second repository, the same but for its ``kubelet``, under ``real-kubelet/`` (``REAL_URL``): the REAL kubelet,
built from the same source (kube.py). A lab host whose package source is that mirror runs pods with containerd
and runc (infra/hosts.py gives each host cgroups of its own); the lab's other hosts keep the simulated one, whose
Nodes the lab's GPU and KAI simulations serve (tests/integration/test_real_kubelet.py uses the real one).

Not in it: ``cri-tools`` (crictl is not in the kubernetes source, and Debian has no source of it; the lab
fetches nothing else). The lab inventory lists the three it installs; kubeadm's join skips its crictl check.

The lab's key fingerprint is written to ``FINGERPRINT`` for the lab inventory to pin (a site pins its
mirror's key the same way). Nothing here is fetched from the network.

The same server serves the site's Debian mirror under ``debian/`` (infra/debian_mirror.py: Debian's own packages
that role pxe_server installs and fetches on the boot server), signed with the same key, and the site's image
mirror under ``images/`` (infra/cloud_image.py: the lab's Debian 12 cloud image, once a test has built it).
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import shutil
import sys
import tempfile
from pathlib import Path

from gpucloud_lab.core import config
from gpucloud_lab.core.components import Row
from gpucloud_lab.core.util import daemon_pid, port_open, run, say, start_daemon, stop_unit, wait_for, write_file
from gpucloud_lab.infra import cloud_image, debian_mirror, hosts, kube

UNIT = "pkg-mirror"
PORT = config.PKG_MIRROR_PORT
MINOR = ".".join(config.KUBERNETES_VERSION.split(".")[:2])
VERSION = f"{config.KUBERNETES_VERSION}-1.1"
REPO_PATH = f"core:/stable:/v{MINOR}/deb/"
URL = f"http://{config.CONTROLLER_IP}:{PORT}/{REPO_PATH}"
REAL_PATH = "real-kubelet/" + REPO_PATH
REAL_URL = f"http://{config.CONTROLLER_IP}:{PORT}/{REAL_PATH}"
# The site's Debian mirror (infra/debian_mirror.py), served by the same server; the boot server lists it.
DEBIAN_URL = f"http://{config.CONTROLLER_IP}:{PORT}/debian"
KEY_HOME = config.CACHE_DIR / "pkg-mirror-gnupg"
FINGERPRINT = config.STATE_DIR / "pkg-mirror" / "fingerprint"
SIM_KUBELET = config.LAB_DIR / "gpucloud_lab" / "sim" / "kubelet_sim.py"
KEY_UID = "gpucloud-lab site package mirror <pkg-mirror@gpucloud-lab.invalid>"

# The unit of the upstream kubelet package (kubernetes/release, cmd/kubepkg/templates), as the lab had it before.
KUBELET_SERVICE = """\
[Unit]
Description=kubelet: The Kubernetes Node Agent
Documentation=https://kubernetes.io/docs/home/
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=/usr/bin/kubelet
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
"""

# The drop-in the upstream kubeadm package ships (kubernetes/release, cmd/kubepkg/templates).
KUBEADM_DROPIN = """\
# Note: This dropin only works with kubeadm and kubelet v1.11+
[Service]
Environment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf \
--kubeconfig=/etc/kubernetes/kubelet.conf"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
# This is a file that "kubeadm init" and "kubeadm join" generates at runtime, populating the KUBELET_KUBEADM_ARGS
# variable dynamically
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
# This is a file that the user can use for overrides of the kubelet args as a last resort. Preferably, the user
# should use the .NodeRegistration.KubeletExtraArgs object in the configuration files instead.
# KUBELET_EXTRA_ARGS should be sourced from this file.
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
"""


def _kubeadm() -> bytes:
    return (kube.BIN_DIR / "kubeadm").read_bytes()


def _kubectl() -> bytes:
    return (kube.BIN_DIR / "kubectl").read_bytes()


def _kubelet() -> bytes:
    return b"#!/usr/bin/python3\n" + SIM_KUBELET.read_bytes()


def _real_kubelet() -> bytes:
    return (kube.BIN_DIR / "kubelet").read_bytes()


def _cni_plugins(debian: Path) -> dict:
    """kubernetes-cni's files: each plugin of Debian's containernetworking-plugins package, in /opt/cni/bin."""
    debs = sorted((debian / "pool" / "main").glob("containernetworking-plugins_*.deb"))
    if not debs:
        raise RuntimeError(f"the package mirror: no containernetworking-plugins package in {debian} (lab prepare)")
    with tempfile.TemporaryDirectory(prefix="gcl-cni-") as tmp:
        run(["dpkg-deb", "-x", str(debs[-1]), tmp])
        plugins = sorted(p for p in (Path(tmp) / "usr" / "lib" / "cni").iterdir() if p.is_file())
        return {f"opt/cni/bin/{p.name}": (functools.partial(bytes, p.read_bytes()), 0o755) for p in plugins}


PACKAGES = {
    "kubeadm": {
        "files": {"usr/bin/kubeadm": (_kubeadm, 0o755),
                  "usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf": (KUBEADM_DROPIN.encode, 0o644)},
        # Upstream's kubeadm 1.20 package also depends on kubernetes-cni and cri-tools (kubernetes/release,
        # cmd/krel/templates/latest/metadata.yaml); the lab has neither package.
        "depends": "kubelet (>= 1.19.0), kubectl (>= 1.19.0)",
        "description": ("Command-line utility for administering a Kubernetes cluster\n"
                        f" gpucloud-lab build of kubeadm {config.KUBERNETES_VERSION} from Debian's kubernetes source."),
    },
    "kubectl": {
        "files": {"usr/bin/kubectl": (_kubectl, 0o755)},
        "depends": "",
        "description": ("Command-line utility for interacting with a Kubernetes cluster\n"
                        f" gpucloud-lab build of kubectl {config.KUBERNETES_VERSION} from Debian's kubernetes source."),
    },
    "kubelet": {
        "files": {"usr/bin/kubelet": (_kubelet, 0o755),
                  "usr/lib/systemd/system/kubelet.service": (KUBELET_SERVICE.encode, 0o644)},
        "depends": "python3, openssl",
        "description": ("Node agent for Kubernetes clusters\n"
                        " gpucloud-lab SIMULATION (lab/gpucloud_lab/sim/kubelet_sim.py): the real TLS bootstrap,\n"
                        " registration and Lease of a kubelet; runs no pods."),
    },
}


def _gpg(*args: str, **kwargs: object) -> str:
    return run(["gpg", "--homedir", str(KEY_HOME), "--batch", "--no-tty", "--pinentry-mode", "loopback",
                "--passphrase", "", *args], **kwargs).stdout


def ensure_key() -> str:
    """The mirror's signing key (made once, kept in the cache), by fingerprint."""
    KEY_HOME.mkdir(mode=0o700, parents=True, exist_ok=True)
    listed = _gpg("--with-colons", "--list-secret-keys", check=False)
    if "sec:" not in listed:
        _gpg("--quick-gen-key", KEY_UID, "rsa3072", "sign", "never")
        listed = _gpg("--with-colons", "--list-secret-keys")
    lines = listed.splitlines()
    return next(line.split(":")[9] for prev, line in itertools.pairwise(lines)
                if prev.startswith("sec:") and line.startswith("fpr:"))


def _build_deb(name: str, spec: dict, dest: Path) -> None:
    with tempfile.TemporaryDirectory(prefix=f"gcl-deb-{name}-") as tmp:
        root = Path(tmp)
        size = 0
        for rel, (content, mode) in spec["files"].items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            data = content()
            path.write_bytes(data)
            path.chmod(mode)
            size += len(data)
        (root / "DEBIAN").mkdir()
        (root / "DEBIAN" / "control").write_text(
            f"Package: {name}\nVersion: {VERSION}\nArchitecture: amd64\n"
            "Maintainer: gpucloud-lab <pkg-mirror@gpucloud-lab.invalid>\n"
            f"Installed-Size: {size // 1024 + 1}\n" + (f"Depends: {spec['depends']}\n" if spec["depends"] else "")
            + "Section: admin\nPriority: optional\n"
            f"Homepage: https://kubernetes.io\nDescription: {spec['description']}\n")
        run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(root), str(dest)])


REAL_KUBELET = {
    "files": {"usr/bin/kubelet": (_real_kubelet, 0o755),
              "usr/lib/systemd/system/kubelet.service": (KUBELET_SERVICE.encode, 0o644)},
    # Upstream's kubelet package (kubernetes/release, cmd/krel/templates/latest/kubelet): mount and util-linux.
    "depends": "mount, util-linux",
    "description": ("Node agent for Kubernetes clusters\n"
                    f" gpucloud-lab build of the kubelet {config.KUBERNETES_VERSION} from Debian's kubernetes source."),
}


def _content_key(debian: Path) -> str:
    binaries = b"".join((kube.BIN_DIR / name).read_bytes() for name in ("kubeadm", "kubectl", "kubelet"))
    cni = "".join(p.name for p in (debian / "pool" / "main").glob("containernetworking-*")).encode()
    digest = hashlib.sha256(Path(__file__).read_bytes() + SIM_KUBELET.read_bytes() + binaries + cni)
    return digest.hexdigest()[:12]


def build(fingerprint: str, debian: Path) -> Path:
    """The signed repository trees (cached by content and key), the simulated kubelet's and the real one's: the
    folder to serve."""
    top = config.CACHE_DIR / f"pkg-mirror-{_content_key(debian)}-{fingerprint[-8:]}"
    if all((top / path / "InRelease").exists() for path in (REPO_PATH, REAL_PATH)):
        return top
    shutil.rmtree(top, ignore_errors=True)
    cni = {"files": _cni_plugins(debian), "depends": "",
           "description": ("Binaries required to provision kubernetes container networking\n"
                           " gpucloud-lab package of Debian's containernetworking-plugins, in /opt/cni/bin.")}
    for path, kubelet in ((REPO_PATH, PACKAGES["kubelet"]), (REAL_PATH, REAL_KUBELET)):
        repo = top / path
        (repo / "amd64").mkdir(parents=True)
        for name, spec in {**PACKAGES, "kubelet": kubelet, "kubernetes-cni": cni}.items():
            _build_deb(name, spec, repo / "amd64" / f"{name}_{VERSION}_amd64.deb")
        debian_mirror.sign_release(repo, ["Origin: gpucloud-lab",
                                          f"Label: gpucloud-lab mirror of pkgs.k8s.io core:/stable:/v{MINOR}",
                                          "Architectures: amd64"],
                                   debian_mirror.write_index(repo, "amd64", repo), fingerprint, _gpg)
        (repo / "Release.key").write_text(_gpg("--armor", "--export", fingerprint))
    run(["gpgconf", "--homedir", str(KEY_HOME), "--kill", "gpg-agent"], check=False)
    return top


def ensure_debian() -> Path:
    """The Debian mirror's signed repository (fetched once: `lab prepare` calls this)."""
    debian = debian_mirror.build(ensure_key(), _gpg)
    run(["gpgconf", "--homedir", str(KEY_HOME), "--kill", "gpg-agent"], check=False)
    return debian


def up() -> None:
    kube.ensure_binaries()
    fingerprint = ensure_key()
    debian = ensure_debian()
    top = build(fingerprint, debian)
    # The Debian mirror under debian/, the site's image mirror (the lab's cloud image, once built) under images/.
    images = cloud_image.folder()
    images.mkdir(parents=True, exist_ok=True)
    for name, target in (("debian", debian), ("images", images)):
        link = top / name
        if not (link.is_symlink() and link.resolve() == target.resolve()):
            link.unlink(missing_ok=True)
            link.symlink_to(target, target_is_directory=True)
    debian_mirror.write_sources(hosts.root_dir(config.PXE_SERVER), DEBIAN_URL,
                                (top / REPO_PATH / "Release.key").read_text())
    write_file(FINGERPRINT, fingerprint + "\n")
    if daemon_pid(UNIT):
        return
    start_daemon(UNIT, [sys.executable, "-m", "http.server", "--bind", config.CONTROLLER_IP,
                        "--directory", str(top), str(PORT)])
    wait_for(lambda: port_open(config.CONTROLLER_IP, PORT), "the lab package mirror", timeout=15)


def down() -> None:
    stop_unit(UNIT)
    FINGERPRINT.unlink(missing_ok=True)


def state() -> str:
    if not daemon_pid(UNIT):
        return "stopped"
    return "running" if port_open(config.CONTROLLER_IP, PORT) else "starting"


class PackageMirror:
    """The lab component: the site's mirror of the Kubernetes package repository (kubeadm, SIMULATED kubelet)."""

    def up(self) -> None:
        say(f"package mirror: kubeadm and the simulated kubelet {VERSION} at {URL}, the real kubelet at {REAL_URL}")
        up()

    def down(self) -> None:
        down()

    def rows(self) -> list[Row]:
        return [Row("package mirror", state(), URL,
                    f"kubeadm {VERSION} (real), kubelet {VERSION} SIMULATION; signed with the lab's key"),
                Row("package mirror (real kubelet)", state(), REAL_URL, f"kubeadm and kubelet {VERSION}, both real"),
                Row("debian mirror", state(), f"{DEBIAN_URL} {debian_mirror.SUITE}",
                    "Debian's kernel, busybox-static and the deploy and ISO tools (the boot server's sources)")]
