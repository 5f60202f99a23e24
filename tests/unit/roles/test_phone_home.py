# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pxe_server role's phone-home receiver: what it stores, what it refuses, and that what our
seeds post is what it reads."""
from __future__ import annotations

import importlib.util
import json
import re
import stat
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import seeds

REPO = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("phone_home", REPO / "roles/pxe_server/files/phone_home.py")
phone_home = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(phone_home)


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> dict[str, str]:
    """Real host keys of every type, as ssh-keygen writes their .pub files."""
    folder = tmp_path_factory.mktemp("keys")
    out = {}
    for kind, extra in (("ed25519", []), ("ecdsa", ["-b", "256"]), ("rsa", ["-b", "2048"])):
        subprocess.run(["ssh-keygen", "-q", "-t", kind, *extra, "-N", "", "-C", "root@node",
                        "-f", str(folder / kind)], check=True)
        out[kind] = (folder / f"{kind}.pub").read_text()
    return out


# Each install's one-time token, as role os_install writes it next to the install mark.
TOKENS = {"gpu1": "A" * 20 + "b1" * 10, "gpu2": "Z9" * 20}


@pytest.fixture
def receiver(tmp_path: Path):
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"gpu1": "127.0.0.1", "gpu2": "198.51.100.22"}))
    state = tmp_path / "records"
    marks = tmp_path / "marks"
    marks.mkdir()
    for name in ("gpu1", "gpu2"):  # both being installed (role os_install's marks and tokens)
        (marks / f"{name}.installing").write_text(f"{name}: install started by the os_install role\n")
        (marks / f"{name}.token").write_text(f'node-{name} "{TOKENS[name]}";\n')
    receiver = phone_home.Receiver(str(nodes), str(state), False, str(marks))
    handler = type("H", (phone_home.Handler,), {"receiver": receiver})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def post(name: str, fields: dict[str, str], ctype: str = "application/x-www-form-urlencoded",
             token: str | None = None) -> int:
        token = TOKENS.get(name, "") if token is None else token
        request = urllib.request.Request(f"http://127.0.0.1:{server.server_address[1]}/phone-home/{name}"
                                         f"?token={token}",
                                         data=urllib.parse.urlencode(fields).encode(), method="POST",
                                         headers={"Content-Type": ctype})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as err:
            return err.code

    try:
        yield post, state, marks
    finally:
        server.shutdown()


def test_a_cloud_init_post_is_stored_for_root_only(receiver, keys) -> None:
    post, state, _marks = receiver
    fields = {"pub_key_rsa": keys["rsa"], "pub_key_ecdsa": keys["ecdsa"], "pub_key_ed25519": keys["ed25519"],
              "instance_id": "gpu1-5254", "hostname": "gpu1", "fqdn": "gpu1.lab.example"}
    assert post("gpu1", fields) == 204
    record = json.loads((state / "gpu1.json").read_text())
    assert record["host_keys"] == sorted(" ".join(k.split()[:2]) for k in keys.values())
    assert (record["name"], record["source"], record["hostname"], record["instance_id"]) == (
        "gpu1", "127.0.0.1", "gpu1", "gpu1-5254")
    assert stat.S_IMODE((state / "gpu1.json").stat().st_mode) == 0o600
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    # cloud-init posts N/A for a key file it could not read; the others still count.
    assert post("gpu1", {"pub_key_rsa": "N/A", "pub_key_ed25519": keys["ed25519"]}) == 409  # first post wins
    (state / "gpu1.json").unlink()  # os_install forgets the last install's record before it marks the node
    assert post("gpu1", {"pub_key_rsa": "N/A", "pub_key_ed25519": keys["ed25519"]}) == 204
    assert json.loads((state / "gpu1.json").read_text())["host_keys"] == [" ".join(keys["ed25519"].split()[:2])]


def test_only_an_install_posts_and_its_first_post_wins(receiver, keys) -> None:
    """A post replaces nothing: a second post of the same install is refused (409), and so is a post from a node
    not being installed (no install mark), which is what a running node or anything that took its address sends.
    The stored keys stay those of the first post."""
    post, state, marks = receiver
    assert post("gpu1", {"pub_key_ed25519": keys["ed25519"]}) == 204
    first = (state / "gpu1.json").read_text()
    assert post("gpu1", {"pub_key_rsa": keys["rsa"]}) == 409
    (marks / "gpu1.installing").unlink()  # os_install clears the mark once the node answers with a posted key
    (state / "gpu1.json").unlink()
    assert post("gpu1", {"pub_key_rsa": keys["rsa"]}) == 409
    assert not (state / "gpu1.json").exists()
    (marks / "gpu1.installing").write_text("gpu1\n")
    assert post("gpu1", {"pub_key_rsa": keys["rsa"]}) == 204
    assert json.loads((state / "gpu1.json").read_text())["host_keys"] == [" ".join(keys["rsa"].split()[:2])]
    assert first != (state / "gpu1.json").read_text()
    assert sorted(p.name for p in state.iterdir()) == ["gpu1.json"]  # no temporary file left behind


def test_a_post_without_this_installs_token_is_refused_and_the_token_is_never_logged(receiver, keys,
                                                                                     capfd) -> None:
    """The token os_install wrote when it marked the node (and nginx put into the node's seed) must come with the
    post: none, another install's, or a node marked without one (by hand) is refused (403), nothing stored."""
    post, state, marks = receiver
    fields = {"pub_key_ed25519": keys["ed25519"]}
    assert post("gpu1", fields, token="") == 403
    assert post("gpu1", fields, token=TOKENS["gpu2"]) == 403
    assert post("gpu1", fields, token=TOKENS["gpu1"][:-1]) == 403
    assert not state.exists() or list(state.iterdir()) == []
    good = (marks / "gpu1.token").read_text()
    (marks / "gpu1.token").unlink()
    assert post("gpu1", fields) == 403
    (marks / "gpu1.token").write_text(f'node-gpu2 "{TOKENS["gpu1"]}";\n')  # another node's line
    assert post("gpu1", fields) == 403
    assert not state.exists() or list(state.iterdir()) == []
    (marks / "gpu1.token").write_text(good)
    assert post("gpu1", fields) == 204
    journal = capfd.readouterr().err
    assert "no phone-home token" in journal and "does not carry this install's phone-home token" in journal
    assert "is not one line 'node-gpu1" in journal
    assert '"POST /phone-home/gpu1" 204' in journal
    assert TOKENS["gpu1"] not in journal and TOKENS["gpu2"] not in journal


def test_of_two_posts_at_once_exactly_one_is_stored(receiver, keys) -> None:
    post, state, _marks = receiver
    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = sorted(pool.map(lambda kind: post("gpu1", {f"pub_key_{kind}": keys[kind]}),
                                ["ed25519", "rsa", "ecdsa"] * 4))
    assert codes == [204] + [409] * 11, codes
    assert sorted(p.name for p in state.iterdir()) == ["gpu1.json"]


@pytest.mark.parametrize("name, fields, status", [
    ("gpu1", {"pub_key_ed25519": "ssh-ed25519 bm90IGEga2V5"}, 400),          # base64, but no key
    ("gpu1", {"pub_key_ed25519": "ssh-ed25519 !!!"}, 400),                   # not base64
    ("gpu1", {"pub_key_ed25519": "RSA"}, 400),                                # type only, filled in below
    ("gpu1", {"pub_key_rsa": "N/A", "hostname": "gpu1"}, 400),               # no key at all
    ("gpu1", {"pub_key_ed25519": "ED", "hostname": "two words"}, 400),
    ("gpu2", {"pub_key_ed25519": "ED"}, 403),                                 # not from gpu2's address
    ("gpu9", {"pub_key_ed25519": "ED"}, 404),                                 # in no fleet
    ("../etc", {"pub_key_ed25519": "ED"}, 404),
])
def test_what_is_refused_is_not_stored(receiver, keys, name, fields, status) -> None:
    post, state, _marks = receiver
    fields = {k: {"ED": keys["ed25519"], "RSA": keys["rsa"]}.get(v, v) for k, v in fields.items()}
    assert post(name, fields) == status
    assert not state.exists() or list(state.iterdir()) == []


def test_a_key_in_another_fields_type_or_two_keys_are_refused(keys) -> None:
    with pytest.raises(ValueError, match="key type 'ssh-rsa' is not one of ssh-ed25519"):
        phone_home.parse_key("pub_key_ed25519", keys["rsa"])
    with pytest.raises(ValueError, match="not one public key line"):
        phone_home.parse_key("pub_key_ed25519", keys["ed25519"] + keys["ed25519"])
    assert phone_home.parse_key("pub_key_ecdsa", keys["ecdsa"]).startswith("ecdsa-sha2-nistp256 AAAA")


def test_a_post_that_is_not_a_form_is_refused(receiver, keys) -> None:
    post = receiver[0]
    assert post("gpu1", {"pub_key_ed25519": keys["ed25519"]}, ctype="application/json") == 415


def test_every_seed_posts_the_fields_the_receiver_reads() -> None:
    node, site = {"name": "gpu1", "mac": "02:00:00:00:00:01", "ip": "198.51.100.21"}, {
        "domain": "lab.example", "management": {"subnet": "198.51.100.0/24", "gateway": "198.51.100.254",
                                                "netmask": "255.255.255.0"}}
    options = {"admin_user": "gpucloud", "phone_home_url": "http://pxe/phone-home/{name}"}
    boot = {"image": "http://deb.debian.org/debian"}
    wanted = set(phone_home.KEY_FIELDS) | set(phone_home.INFO_FIELDS)
    for render, name in ((seeds.kickstart, "ks.cfg"), (seeds.preseed, "preseed.cfg")):
        text = render(node, site, boot, options)[name]
        assert set(re.findall(r'--data-urlencode "?(\w+)=', text)) == wanted, name
        assert '"http://pxe/phone-home/gpu1?token=%s"' % seeds.TOKEN_SLOT in text  # nginx fills in the token
    user_data = seeds.ubuntu(node, site, boot, options)["user-data"]
    phone = json.loads(user_data.split("\n", 1)[1])["autoinstall"]["user-data"]["phone_home"]
    assert set(phone["post"]) == wanted
    assert phone["url"] == "http://pxe/phone-home/gpu1?token=" + seeds.TOKEN_SLOT


def test_the_receiver_takes_the_names_the_fleet_takes() -> None:
    """A node the fleet accepts (uppercase, underscores, long names) must be able to post: one pattern."""
    from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.schema import HOSTNAME

    assert phone_home.NAME.pattern == HOSTNAME.pattern
    for name in ("GPU_node-01.rack7", "a" * 80, "gpu1"):
        assert phone_home.NAME.match(name) and HOSTNAME.match(name)
    for name in ("../etc", "-gpu", "gpu/1", "gpu1.", ""):
        assert not phone_home.NAME.match(name)


def test_nginx_fills_in_the_placeholder_the_seeds_carry() -> None:
    """The seeds' token placeholder is the one the boot server's nginx replaces (role pxe_server's template)."""
    template = (REPO / "roles/pxe_server/templates/nginx.conf.j2").read_text()
    assert "sub_filter %s $gpucloud_phone_home_token;" % seeds.TOKEN_SLOT in template
    assert "include {{ pxe_server_install_marks_dir }}/*.token;" in template


# --- the deploy ramdisk's step reports ------------------------------------------------------------------------

def test_deploy_steps_are_appended_for_root_only_and_done_makes_the_image_written_mark(receiver) -> None:
    """Each step report of deploy.sh is one JSON line of NAME.steps (0600); done makes NAME.imaged (0644, nginx
    reads it: the node's network boot is local-boot from then), and after done the install takes no step: a network
    boot that ran the deploy again would stop at its start."""
    post, state, marks = receiver
    for step in ("started", "disk", "image", "written"):
        assert post("gpu1", {"step": step, "detail": "/dev/nvme0n1 %s" % step}) == 204
    assert not (marks / "gpu1.imaged").exists()
    assert post("gpu1", {"step": "done", "detail": "image.raw.zst on /dev/nvme0n1"}) == 204
    lines = [json.loads(line) for line in (state / "gpu1.steps").read_text().splitlines()]
    assert [r["step"] for r in lines] == ["started", "disk", "image", "written", "done"]
    assert lines[0]["detail"] == "/dev/nvme0n1 started" and lines[0]["source"] == "127.0.0.1"
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", lines[-1]["time"])
    assert stat.S_IMODE((state / "gpu1.steps").stat().st_mode) == 0o600
    assert stat.S_IMODE((marks / "gpu1.imaged").stat().st_mode) == 0o644
    assert (marks / "gpu1.imaged").read_text().startswith("gpu1: image written at ")
    assert post("gpu1", {"step": "started"}) == 409
    assert post("gpu1", {"step": "failed", "detail": "late"}) == 409
    assert len((state / "gpu1.steps").read_text().splitlines()) == 5
    # The host keys are still taken: the deployed OS posts them on its first boot.
    assert not (state / "gpu1.json").exists()


@pytest.mark.parametrize(("name", "fields", "token", "status"), [
    ("gpu1", {"step": "rebooted"}, None, 400),                          # not a step of deploy.sh
    ("gpu1", {"step": "started", "extra": "x"}, None, 400),             # a field it does not send
    ("gpu1", {"step": "failed", "detail": "a\nb"}, None, 400),          # not one printable line
    ("gpu1", {"step": "failed", "detail": "a\n"}, None, 400),           # a line break at its end too
    ("gpu1", {"step": "failed", "detail": "x" * 513}, None, 400),       # too long
    ("gpu1", {"step": "started"}, "A" * 40, 403),                       # not this install's token
    ("gpu2", {"step": "started"}, None, 403),                           # not from gpu2's address
    ("gpu9", {"step": "started"}, None, 404),                           # not a node of the fleet
])
def test_a_bad_step_report_is_refused_and_not_stored(receiver, name, fields, token, status) -> None:
    post, state, marks = receiver
    assert post(name, fields, token=token) == status
    assert not (state / f"{name}.steps").exists() and not (marks / f"{name}.imaged").exists()


def test_a_step_report_of_a_node_not_being_installed_is_refused(receiver) -> None:
    post, state, marks = receiver
    (marks / "gpu1.installing").unlink()
    assert post("gpu1", {"step": "started"}) == 409
    assert not (state / "gpu1.steps").exists()


def test_an_install_takes_a_bounded_number_of_step_reports(receiver) -> None:
    post, state, _marks = receiver
    for _attempt in range(phone_home.MAX_STEPS):
        assert post("gpu1", {"step": "failed", "detail": "again"}) == 204
    assert post("gpu1", {"step": "started"}) == 409
    assert len((state / "gpu1.steps").read_text().splitlines()) == phone_home.MAX_STEPS


def test_deploy_sh_reports_the_steps_the_receiver_takes() -> None:
    """Every ``report STEP`` in deploy.sh is a step the receiver takes (the two files cannot import each other)."""
    from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import deploy

    reported = set(re.findall(r"\breport '?([a-z]+)", deploy._BODY))  # pylint: disable=protected-access
    assert reported == set(phone_home.STEPS) == set(deploy.STEPS)


def test_nginx_boots_the_disk_of_a_node_whose_image_is_written() -> None:
    template = (REPO / "roles/pxe_server/templates/nginx.conf.j2").read_text()
    assert ("if (-f {{ pxe_server_install_marks_dir }}/$gpucloud_node.imaged) {\n"
            "            rewrite ^ /local-boot.ipxe break;") in template
