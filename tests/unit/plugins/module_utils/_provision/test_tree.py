# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A profile's kernel_sha256/initrd_sha256: a node boots only a kernel and an initrd of the digest the fleet names.
A file on the controller is checked before anything is copied; a URL is fetched and checked by the boot server,
and the node's iPXE script names the boot server's checked copy, never the URL."""
from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, pxe_nodes
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.errors import FleetError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import tree
from tests.support import inventory_yaml

FLEET = Path(__file__).resolve().parents[5] / "inventories" / "lab" / "fleet.yml"
BASE = "http://198.51.100.10:8080"


def _model(profile: dict[str, Any]) -> dict[str, Any]:
    """The lab fleet with gpu1 on an extra profile."""
    data = inventory_yaml.load(FLEET)
    data["site"]["os_profiles"]["checked"] = profile
    data["nodes"][0]["os"] = "checked"
    return load_fleet(data)


def _render(model: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    return tree.render(copy.deepcopy(model["site"]), pxe_nodes(model), options)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Any]:
    kernel, initrd = tmp_path / "vmlinuz", tmp_path / "initrd.img"
    kernel.write_bytes(b"a kernel" * 1000)
    initrd.write_bytes(b"an initrd" * 1000)
    return {"kernel": str(kernel), "initrd": str(initrd),
            "kernel_sha256": hashlib.sha256(kernel.read_bytes()).hexdigest(),
            "initrd_sha256": hashlib.sha256(initrd.read_bytes()).hexdigest()}


def test_a_digest_that_is_not_sha256_is_refused_naming_its_key() -> None:
    with pytest.raises(FleetError) as err:
        _model({"family": "rocky", "version": "9.4", "kernel_sha256": "d41d8cd98f00b204e9800998ecf8427e"})
    assert "site.os_profiles.checked.kernel_sha256: 'd41d8cd98f00b204e9800998ecf8427e' is not a SHA-256 digest" in str(
        err.value)


def test_controller_files_of_the_fleets_digests_are_copied(files: dict[str, Any], options: dict[str, Any]) -> None:
    upper = dict(files, kernel_sha256=files["kernel_sha256"].upper())  # case does not matter
    out = _render(_model({"family": "rocky", "version": "9.4", **upper}), options)
    checked = [c for c in out["copies"] if c["path"].startswith("os/checked/")]
    wanted = {(files["kernel"], files["kernel_sha256"]), (files["initrd"], files["initrd_sha256"])}
    assert {(c["src"], c["sha256"]) for c in checked} == wanted
    script = out["files"]["hosts/gpu1.ipxe"]
    assert f"kernel --name linux {BASE}/os/checked/vmlinuz " in script
    assert f"initrd --name initrd {BASE}/os/checked/initrd.img " in script


def test_a_controller_file_of_another_digest_stops_the_render_naming_both(
        files: dict[str, Any], options: dict[str, Any]) -> None:
    Path(files["initrd"]).write_bytes(b"a tampered initrd")
    with pytest.raises(ProblemsError) as err:
        _render(_model({"family": "rocky", "version": "9.4", **files}), options)
    found = hashlib.sha256(b"a tampered initrd").hexdigest()
    assert err.value.problems == [
        f"site.os_profiles.checked.initrd_sha256: {files['initrd']} on the controller has SHA-256 {found}, not "
        f"{files['initrd_sha256']} (the fleet's); nothing was copied"]


def test_a_missing_controller_file_with_a_digest_is_named(files: dict[str, Any], options: dict[str, Any]) -> None:
    Path(files["kernel"]).unlink()
    with pytest.raises(ProblemsError) as err:
        _render(_model({"family": "rocky", "version": "9.4", **files}), options)
    assert err.value.problems == [
        f"site.os_profiles.checked.kernel: {files['kernel']} on the controller cannot be read (No such file or "
        "directory)"]


def test_a_url_with_a_digest_is_fetched_by_the_boot_server_and_the_node_boots_its_copy(options: dict[str, Any]) -> None:
    digest = "ab" * 32
    url = "https://mirror.example/rocky/9/BaseOS/x86_64/os/images/pxeboot/vmlinuz"
    out = _render(_model({"family": "rocky", "version": "9.4", "kernel": url, "kernel_sha256": digest}), options)
    fetched = [c for c in out["copies"] if c["path"].startswith("os/checked/")]
    assert fetched == [{"url": url, "path": "os/checked/vmlinuz", "sha256": digest,
                        "key": "site.os_profiles.checked.kernel"}]
    script = out["files"]["hosts/gpu1.ipxe"]
    assert f"kernel --name linux {BASE}/os/checked/vmlinuz " in script and url not in script
    # The initrd has no digest: iPXE fetches it from its URL, as before.
    assert "initrd --name initrd https://dl.rockylinux.org/pub/rocky/9/BaseOS/x86_64/os/images/pxeboot/initrd.img " in script
