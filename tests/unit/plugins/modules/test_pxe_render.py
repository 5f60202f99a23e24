# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pxe_render module end to end (main(), as Ansible runs it) on the lab fleet: the files it writes and names,
a second run that changes nothing, check mode that writes nothing, the archive form, and a seed the validators
refuse, which fails with its problems before any file is written."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, pxe_nodes
from ansible_collections.gpucloud.baremetal.plugins.modules import pxe_render
from tests.support import inventory_yaml
from tests.support.module_args import patch_module_args

FLEET = Path(__file__).resolve().parents[4] / "inventories" / "lab" / "fleet.yml"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGpucloudtestkey ops@example"


def main(capsys: pytest.CaptureFixture, **args) -> tuple[int, dict]:
    with patch_module_args(json.loads(json.dumps(args))), pytest.raises(SystemExit) as exited:
        pxe_render.main()
    return exited.value.code, json.loads(capsys.readouterr().out)


def listing(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_bytes().hex() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def args(tmp_path: Path) -> dict[str, Any]:
    model = load_fleet(inventory_yaml.load(FLEET))
    return {"site": copy.deepcopy(model["site"]), "nodes": pxe_nodes(model), "dest": str(tmp_path / "out"),
            "ssh_authorized_keys": [KEY], "admin_user": "ops",
            "phone_home_url": "http://198.51.100.10:8080/phone-home/{name}"}


def test_renders_every_node_then_changes_nothing(capsys, args: dict[str, Any], tmp_path: Path) -> None:
    rc, out = main(capsys, **args)
    assert rc == 0 and out["changed"] is True, out
    names = sorted(n["name"] for n in args["nodes"])
    assert sorted(out["nodes"]) == names and out["seeds"] >= 1
    assert "dnsmasq.conf" in out["files"] and all("http/hosts/%s.ipxe" % n in out["files"] for n in names)
    written = listing(tmp_path / "out")
    assert sorted(written) == sorted(out["files"])
    conf = (tmp_path / "out" / "dnsmasq.conf").read_text()
    assert all(n["mac"].lower() in conf.lower() for n in args["nodes"])
    rc, again = main(capsys, **args)
    assert rc == 0 and again["changed"] is False and listing(tmp_path / "out") == written


def test_check_mode_writes_nothing_but_says_it_would_change(capsys, args: dict[str, Any], tmp_path: Path) -> None:
    rc, out = main(capsys, **args, _ansible_check_mode=True)
    assert rc == 0 and out["changed"] is True and not (tmp_path / "out").exists()


def test_the_archive_form_writes_the_dnsmasq_file_and_one_archive(capsys, args: dict[str, Any],
                                                                  tmp_path: Path) -> None:
    rc, out = main(capsys, **args, archive=True)
    assert rc == 0 and out["files"] == ["boot-files.tar.gz", "dnsmasq.conf"]
    assert sorted(listing(tmp_path / "out")) == ["boot-files.tar.gz", "dnsmasq.conf"]
    assert out["manifest"], out
    rc, again = main(capsys, **args, archive=True)
    assert rc == 0 and again["changed"] is False


def test_a_key_that_would_reach_every_seed_is_refused_before_anything_is_written(capsys, args, tmp_path) -> None:
    """A second line in an authorized key would become a line of its own in every seed (an injected directive)."""
    rc, out = main(capsys, **dict(args, ssh_authorized_keys=["not a key\nwith a second line"]))
    assert rc == 1 and out["problems"] == ["ssh_keys[0]: not one public key line ('type base64 [comment]')"], out
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("change", "problem"), [
    ({"console": "console=ttyS0,115200n8\n"},
     "console: 'console=ttyS0,115200n8\\n' is not kernel arguments on one line (e.g. console=ttyS0,115200n8)"),
    ({"ssh_authorized_keys": [KEY + "\r"]}, "ssh_keys[0]: not one public key line ('type base64 [comment]')"),
])
def test_a_line_break_that_would_split_every_node_s_script_is_refused(capsys, args, tmp_path, change, problem) -> None:
    """The console arguments end every node's kernel line: YAML's | and > block styles add a line break."""
    rc, out = main(capsys, **dict(args, **change))
    assert rc == 1 and out["problems"] == [problem], out
    assert not (tmp_path / "out").exists()


def test_console_arguments_end_every_kernel_line(capsys, args, tmp_path) -> None:
    rc, out = main(capsys, **dict(args, console="console=tty0 console=ttyS0,115200n8"))
    assert rc == 0, out
    script = (tmp_path / "out" / "http" / "hosts" / "gpu1.ipxe").read_text()
    kernel = [line for line in script.splitlines() if line.startswith("kernel ")]
    assert kernel and all(" console=tty0 console=ttyS0,115200n8" in line for line in kernel), script
