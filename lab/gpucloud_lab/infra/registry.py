# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site's registry: the container images an air-gapped site keeps in a registry of its own, served by a
real registry (Debian's ``docker-registry``, CNCF Distribution 2.8) on the controller at ``REGISTRY``.

containerd on the lab's GPU nodes is pointed at it by the gpu_host role as at any site mirror
(``gpu_host_registry_mirrors``: ``hosts.toml`` per upstream registry, no fallback to the internet), and its
CRI sandbox image is the pause image here (``gpu_host_sandbox_image``). The registry serves both namespaces
the lab uses from one store, as a site's flat mirror does (containerd asks a mirror for ``/v2/<repository>/``
with ``?ns=<upstream host>``, which Distribution ignores):

* ``registry.k8s.io/pause:<TAG>``: the pause binary the lab builds from the ``kubernetes`` source it builds the
  control plane from (``build/pause``: gcc -static, the Makefile's TAG; lab/lib/build-kubernetes.sh), with
  upstream's entrypoint and user;
* ``docker.io/gpucloud-lab/hello:1.0``: the lab's test image, one static binary (lab/lib/hello.c) that prints
  a fixed line and its arguments.

The images are OCI image manifests (one gzip layer each) built here byte for byte the same on every run, and
pushed through the registry's own HTTP API (Docker Registry HTTP API V2: blob upload, manifest PUT), which
checks every digest. What was pushed is written to ``IMAGES`` (reference -> manifest digest) for the tests.
Nothing here is fetched from the network.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import tarfile
import urllib.error
import urllib.request
from pathlib import Path

from gpucloud_lab.core import config
from gpucloud_lab.core.components import Row
from gpucloud_lab.core.util import daemon_pid, run, say, start_daemon, stop_unit, wait_for, write_file
from gpucloud_lab.infra import kube

UNIT = "site-registry"
BINARY = Path("/usr/bin/docker-registry")
PORT = config.REGISTRY_PORT
REGISTRY = f"http://{config.CONTROLLER_IP}:{PORT}"
STATE = config.STATE_DIR / "registry"
IMAGES = STATE / "images.json"
HELLO_SOURCE = config.LAB_DIR / "lib" / "hello.c"
HELLO = ("docker.io", "gpucloud-lab/hello", "1.0")

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"

CONFIG = """\
# The lab's site registry (infra/registry.py); written by the lab on every `up`.
version: 0.1
log:
  level: info
  formatter: text
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: {root}
  delete:
    enabled: false
http:
  addr: {addr}
  headers:
    X-Content-Type-Options: [nosniff]
"""


def pause_reference() -> str:
    return f"registry.k8s.io/pause:{(kube.BIN_DIR / 'pause.tag').read_text().strip()}"


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _layer(files: dict[str, tuple[bytes, int]]) -> tuple[bytes, bytes]:
    """One image layer: (the tar, its gzip), both the same bytes on every run (no times, no owners)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, (data, mode) in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), mode, 0
            tar.addfile(info, io.BytesIO(data))
    tar_bytes = raw.getvalue()
    return tar_bytes, gzip.compress(tar_bytes, mtime=0)


def image(files: dict[str, tuple[bytes, int]], entrypoint: list[str], user: str = "") -> dict[str, bytes]:
    """An OCI image: its blobs by digest, and its manifest under the key ``manifest``."""
    tar_bytes, layer = _layer(files)
    runtime: dict[str, object] = {"Entrypoint": entrypoint, "Env": ["PATH=/"]}
    if user:
        runtime["User"] = user
    config_blob = json.dumps({
        "architecture": "amd64", "os": "linux", "created": "1970-01-01T00:00:00Z", "config": runtime,
        "rootfs": {"type": "layers", "diff_ids": [_digest(tar_bytes)]},
        "history": [{"created": "1970-01-01T00:00:00Z",
                     "created_by": "gpucloud-lab (lab/gpucloud_lab/infra/registry.py)"}],
    }, sort_keys=True, separators=(",", ":")).encode()
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": OCI_MANIFEST,
        "config": {"mediaType": OCI_CONFIG, "digest": _digest(config_blob), "size": len(config_blob)},
        "layers": [{"mediaType": OCI_LAYER, "digest": _digest(layer), "size": len(layer)}],
    }, sort_keys=True, separators=(",", ":")).encode()
    return {_digest(config_blob): config_blob, _digest(layer): layer, "manifest": manifest}


def _hello_binary() -> bytes:
    out = config.CACHE_DIR / f"hello-{hashlib.sha256(HELLO_SOURCE.read_bytes()).hexdigest()[:12]}"
    if not out.exists():
        tmp = out.with_name(out.name + ".tmp")
        run(["gcc", "-Os", "-Wall", "-Werror", "-static", "-o", str(tmp), str(HELLO_SOURCE)])
        run(["strip", str(tmp)])
        tmp.rename(out)
    return out.read_bytes()


def images() -> dict[str, tuple[str, dict[str, bytes]]]:
    """reference -> (repository, image) for everything the registry serves."""
    pause = (kube.BIN_DIR / "pause").read_bytes()
    host, repository, tag = HELLO
    return {
        pause_reference(): ("pause", image({"pause": (pause, 0o755)}, ["/pause"], user="65535:65535")),
        f"{host}/{repository}:{tag}": (repository, image({"hello": (_hello_binary(), 0o755)}, ["/hello"])),
    }


def _request(method: str, url: str, data: bytes | None = None, content_type: str = "") -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(url, data=data, method=method)
    if content_type:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers)
    except urllib.error.HTTPError as error:
        if method == "HEAD" and error.code == 404:
            return 404, {}
        raise RuntimeError(f"site registry: {method} {url}: {error.code} {error.read()[:300]!r}") from error


def push(repository: str, tag: str, blobs: dict[str, bytes]) -> str:
    """Upload the image's blobs (those the registry lacks), then its manifest under the tag; its digest."""
    for digest, data in blobs.items():
        if digest == "manifest":
            continue
        if _request("HEAD", f"{REGISTRY}/v2/{repository}/blobs/{digest}")[0] == 200:
            continue
        location = _request("POST", f"{REGISTRY}/v2/{repository}/blobs/uploads/", b"")[1]["Location"]
        location = location if location.startswith("http") else REGISTRY + location
        separator = "&" if "?" in location else "?"
        _request("PUT", f"{location}{separator}digest={digest}", data, "application/octet-stream")
    headers = _request("PUT", f"{REGISTRY}/v2/{repository}/manifests/{tag}", blobs["manifest"], OCI_MANIFEST)[1]
    digest = _digest(blobs["manifest"])
    if headers.get("Docker-Content-Digest") != digest:
        raise RuntimeError(f"site registry: {repository}:{tag} stored as {headers.get('Docker-Content-Digest')}, "
                           f"not {digest}")
    return digest


def _ready() -> bool:
    try:
        return _request("GET", f"{REGISTRY}/v2/")[0] == 200
    except (OSError, RuntimeError):
        return False


def up() -> None:
    kube.ensure_binaries()
    if not BINARY.exists():
        raise SystemExit(f"{BINARY} is missing: install Debian's docker-registry (bindep.txt; tools/setup.sh does)")
    STATE.mkdir(parents=True, exist_ok=True)
    cfg = STATE / "config.yml"
    write_file(cfg, CONFIG.format(root=STATE / "storage", addr=f"{config.CONTROLLER_IP}:{PORT}"))
    if not daemon_pid(UNIT):
        start_daemon(UNIT, [str(BINARY), "serve", str(cfg)])
    wait_for(_ready, "the lab's site registry", timeout=30)
    pushed = {}
    for reference, (repository, blobs) in images().items():
        pushed[reference] = push(repository, reference.rsplit(":", 1)[1], blobs)
    write_file(IMAGES, json.dumps(pushed, indent=1, sort_keys=True) + "\n")


def down() -> None:
    stop_unit(UNIT)
    shutil.rmtree(STATE, ignore_errors=True)


def state() -> str:
    if not daemon_pid(UNIT):
        return "stopped"
    return "running" if _ready() else "starting"


class SiteRegistry:
    """The lab component: the site's container registry (real Distribution), with the images the lab builds."""

    def up(self) -> None:
        say(f"site registry: {REGISTRY} (pause from the Kubernetes source, the lab's test image)")
        up()

    def down(self) -> None:
        down()

    def rows(self) -> list[Row]:
        return [Row("site registry", state(), REGISTRY,
                    "docker-registry (Distribution 2.8): registry.k8s.io/pause, docker.io/gpucloud-lab/hello")]
