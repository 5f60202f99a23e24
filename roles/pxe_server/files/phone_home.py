# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The boot server's phone-home receiver (installed by the gpucloud.baremetal.pxe_server role).

An installed node posts its SSH host keys when its install is done (cloud-init's ``phone_home``,
the kickstart ``%post``, the preseed ``late_command``): an ``application/x-www-form-urlencoded``
POST of ``pub_key_rsa``, ``pub_key_ecdsa``, ``pub_key_ed25519`` (each the content of a host key's
``.pub`` file; empty or ``N/A`` for none), ``instance_id``, ``hostname`` and ``fqdn`` to
``/phone-home/<name>``. nginx passes it to this service on the loopback address, with the
client's address in ``X-Real-IP``.

The post is stored as ``<state-dir>/<name>.json`` (0600 in a 0700 folder, root's) only when
``<name>`` is a node of the nodes file (name -> address, written by the role), the post comes from
that node's address (unless ``--any-source``), the node is being installed (its install mark
``<marks-dir>/<name>.installing`` exists: role os_install makes it before the node's network boot and
removes it once the node answers with a posted key), the post carries this install's one-time token
(``?token=``: os_install writes ``<marks-dir>/<name>.token`` when it marks the node, root's only, and nginx
puts it into the node's seed; a seed fetched before the install started, or a guess, does not have it), no
post of this install was stored yet (the first post wins: os_install forgets the last install's record before
it marks the node), and every
host-key field holds one SSH public key of its field's type, at least one of them. Anything else is
refused (4xx; 409 for a node not being installed or already posted), nothing is stored, and the
journal says why. So a running node, or anything that takes its address after the install, cannot
replace the host keys the controller trusts.

The deploy ramdisk (an image profile's ``deploy.sh``) reports its steps to the same URL with the same token:
a form post of ``step`` (one of ``STEPS``) and an optional ``detail`` (printable, at most 512 characters),
appended to ``<state-dir>/<name>.steps`` (JSON lines, 0600) under the same checks (a fleet node, from its
address, marked installing, this install's token), at most ``MAX_STEPS`` per install. Its ``done`` (the image
and the seed are on the disk; the node reboots next) makes ``<marks-dir>/<name>.imaged``: from then on the
boot server answers the node's network boot with local-boot (role pxe_server's nginx), so a network boot
before the install is registered boots the new disk and never deploys it again. Role os_install waits for
``done`` or ``failed`` and removes both files when it marks a node for a new install. Standard library only
(Python 3.9+).
"""
from __future__ import annotations

import argparse
import base64
import binascii
import hmac
import json
import os
import re
import struct
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

KEY_FIELDS = {
    "pub_key_rsa": ("ssh-rsa",),
    "pub_key_ecdsa": ("ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521"),
    "pub_key_ed25519": ("ssh-ed25519",),
}
INFO_FIELDS = ("instance_id", "hostname", "fqdn")
ABSENT = ("", "N/A")
MAX_BODY = 64 * 1024
# The deploy ramdisk's steps, in order (plugins/module_utils/_provision/deploy.py reports them; a unit test holds
# them equal); ``failed`` may come after any of them, with the reason as its detail.
STEPS = ("started", "disk", "image", "written", "done", "failed")
MAX_STEPS = 64
DETAIL = re.compile(r"[\x20-\x7e]{1,512}")  # fullmatch: "$" would let a trailing newline in
# The fleet's hostname pattern (plugins/module_utils/_fleet/schema.py HOSTNAME; a unit test holds them equal): a
# node the fleet accepts can post. This file runs on the boot server alone, so it cannot import the collection.
NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
INFO = re.compile(r"^[\x21-\x7e]{1,255}$")
# The token file's one line, an nginx map entry (the seed's substitution reads the same file): node-NAME "TOKEN";
TOKEN_LINE = re.compile(r'^node-(?P<name>\S+) "(?P<token>[A-Za-z0-9]{32,128})";\s*$')


class Refused(Exception):
    """A post that is not stored: HTTP status and the reason (for the journal and the client)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def parse_key(field: str, value: str) -> str:
    """``type base64`` of the one SSH public key in value (a ``.pub`` line), or ValueError."""
    text = value.strip()
    parts = text.split()
    if "\n" in text or "\r" in text or len(parts) not in (2, 3):
        raise ValueError("%s: not one public key line" % field)
    kind, data = parts[0], parts[1]
    if kind not in KEY_FIELDS[field]:
        raise ValueError("%s: key type %r is not one of %s" % (field, kind[:40], ", ".join(KEY_FIELDS[field])))
    try:
        blob = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("%s: the key is not base64" % field) from None
    # RFC 4253 6.6: the blob starts with the key type as an SSH string.
    if len(blob) < 4 or blob[4:4 + struct.unpack(">I", blob[:4])[0]] != kind.encode():
        raise ValueError("%s: the key's data is not a %s key" % (field, kind))
    if kind == "ssh-ed25519" and len(blob) != 51:
        raise ValueError("%s: an ssh-ed25519 key has 32 bytes" % field)
    return "%s %s" % (kind, data)


def parse_post(body: bytes) -> dict:
    """The record of a form post: host keys and the node's own names; Refused if anything is wrong."""
    try:
        form = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=bool(body), max_num_fields=32)
    except (UnicodeDecodeError, ValueError) as exc:
        raise Refused(400, "not a form post: %s" % exc) from None
    record: dict = {"host_keys": []}
    for field, values in form.items():
        if len(values) != 1:
            raise Refused(400, "%s: given %d times" % (field, len(values)))
        value = values[0]
        if field in KEY_FIELDS:
            if value.strip() in ABSENT:
                continue
            try:
                record["host_keys"].append(parse_key(field, value))
            except ValueError as exc:
                raise Refused(400, str(exc)) from None
        elif field in INFO_FIELDS:
            if value.strip() in ABSENT:
                continue
            if not INFO.match(value.strip()):
                raise Refused(400, "%s: not a printable word of 1-255 characters" % field)
            record[field] = value.strip()
    if not record["host_keys"]:
        raise Refused(400, "no host key (%s)" % ", ".join(KEY_FIELDS))
    record["host_keys"].sort()
    return record


class Receiver:
    """What the handler needs: the nodes file (re-read when it changes) and the state folder."""

    def __init__(self, nodes_file: str, state_dir: str, any_source: bool, marks_dir: str) -> None:
        self.nodes_file, self.state_dir, self.any_source = nodes_file, state_dir, any_source
        self.marks_dir = marks_dir
        self._nodes: dict = {}
        self._stamp = None
        self._lock = threading.Lock()

    def nodes(self) -> dict:
        with self._lock:
            stat = os.stat(self.nodes_file)
            stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
            if stamp != self._stamp:
                with open(self.nodes_file, encoding="utf-8") as handle:
                    self._nodes = json.load(handle)
                self._stamp = stamp
            return self._nodes

    def token(self, name: str) -> str:
        """This install's one-time token (os_install's ``NAME.token``), or Refused."""
        path = os.path.join(self.marks_dir, name + ".token")
        try:
            with open(path, encoding="utf-8") as handle:
                match = TOKEN_LINE.match(handle.read(4096))
        except FileNotFoundError:
            raise Refused(403, "this install has no phone-home token (%s): the node was not marked by role "
                          "os_install" % path) from None
        if not match or match.group("name") != name:
            raise Refused(403, "the phone-home token file %s is not one line 'node-%s \"TOKEN\";'" % (path, name))
        return match.group("token")

    def check(self, name: str, source: str, token: str) -> None:
        """Refused unless name is a fleet node posting from its address, marked installing, with this install's
        token: the checks every post passes."""
        if not NAME.match(name):
            raise Refused(404, "not a node name")
        nodes = self.nodes()
        if name not in nodes:
            raise Refused(404, "not a node of the fleet")
        if not self.any_source and source != nodes[name]:
            raise Refused(403, "posted from %s, not from the node's address %s" % (source, nodes[name]))
        if not os.path.exists(os.path.join(self.marks_dir, name + ".installing")):
            raise Refused(409, "not being installed (no install mark %s.installing): only an install posts"
                          % os.path.join(self.marks_dir, name))
        if not hmac.compare_digest(token.encode(), self.token(name).encode()):
            raise Refused(403, "the post does not carry this install's phone-home token (a seed of another install, "
                          "or no seed at all)")

    def store(self, name: str, source: str, body: bytes, token: str = "") -> dict:
        self.check(name, source, token)
        final = os.path.join(self.state_dir, name + ".json")
        if os.path.exists(final):
            raise Refused(409, "this install already posted its host keys (the first post wins)")
        record = parse_post(body)
        record.update(name=name, source=source,
                      received=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        os.makedirs(self.state_dir, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.state_dir, prefix=".%s." % name)  # 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(record, handle, indent=2, sort_keys=True)
                handle.write("\n")
                handle.flush()
                os.fsync(handle.fileno())
            # A hard link fails when the name exists: of two posts at once, exactly one is stored.
            os.link(tmp, final)
        except FileExistsError:
            raise Refused(409, "this install already posted its host keys (the first post wins)") from None
        finally:
            os.unlink(tmp)
        return record

    def step(self, name: str, source: str, body: bytes, token: str = "") -> dict:
        """Append the deploy ramdisk's step report to ``NAME.steps``; ``done`` also makes ``NAME.imaged``. Every
        step after ``done`` is refused (409): this install's image is on the disk, and deploy.sh stops at its start."""
        self.check(name, source, token)
        form = parse_step(body)
        record = dict(form, source=source, time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        os.makedirs(self.state_dir, mode=0o700, exist_ok=True)
        path = os.path.join(self.state_dir, name + ".steps")
        with self._lock:
            earlier = read_steps(path)
            if len(earlier) >= MAX_STEPS:
                raise Refused(409, "this install already reported %d steps" % MAX_STEPS)
            if any(s.get("step") == "done" for s in earlier):
                raise Refused(409, "this install already wrote its image (step done): the node boots its disk; "
                              "a new deploy needs a new install (role os_install)")
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record, sort_keys=True) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            if form["step"] == "done":
                # nginx reads the mark (0644 in the marks folder): the node's network boot is local-boot from now.
                fd, tmp = tempfile.mkstemp(dir=self.marks_dir, prefix=".%s." % name)
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write("%s: image written at %s (deploy ramdisk); a network boot boots the disk\n"
                                 % (name, record["time"]))
                os.chmod(tmp, 0o644)
                os.replace(tmp, os.path.join(self.marks_dir, name + ".imaged"))
        return record


def read_steps(path: str) -> list:
    """The step records of ``NAME.steps`` (none when there is no file)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except FileNotFoundError:
        return []


def parse_step(body: bytes) -> dict:
    """``{"step": ..., "detail": ...}`` of a deploy step report; Refused if anything is wrong."""
    try:
        form = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=True, max_num_fields=4)
    except (UnicodeDecodeError, ValueError) as exc:
        raise Refused(400, "not a form post: %s" % exc) from None
    unknown = sorted(set(form) - {"step", "detail"})
    if unknown:
        raise Refused(400, "a step report has step and detail only, not %s" % ", ".join(k[:40] for k in unknown))
    if any(len(values) != 1 for values in form.values()):
        raise Refused(400, "a field is given more than once")
    step = form.get("step", [""])[0]
    if step not in STEPS:
        raise Refused(400, "step: %r is not one of %s" % (step[:40], ", ".join(STEPS)))
    record = {"step": step}
    if "detail" in form:
        if not DETAIL.fullmatch(form["detail"][0]):
            raise Refused(400, "detail: not printable text of 1-512 characters")
        record["detail"] = form["detail"][0]
    return record


class Handler(BaseHTTPRequestHandler):
    receiver: Receiver
    server_version = "gpucloud-phone-home"

    def _answer(self, status: int, text: str = "") -> None:
        body = (text + "\n").encode() if text else b""
        self.send_response(status)
        if body:
            self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        source = self.headers.get("X-Real-IP") or self.client_address[0]
        name = self.path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
        try:
            if not self.path.startswith("/phone-home/"):
                raise Refused(404, "not a phone-home URL")
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if ctype != "application/x-www-form-urlencoded":
                raise Refused(415, "not a form post (Content-Type %r)" % ctype[:60])
            try:
                length = int(self.headers.get("Content-Length") or "0")
            except ValueError:
                raise Refused(400, "bad Content-Length") from None
            if length > MAX_BODY or length < 0:
                raise Refused(413, "post of %d bytes (at most %d)" % (length, MAX_BODY))
            try:
                query = parse_qs(urlsplit(self.path).query, max_num_fields=4)
            except ValueError:
                raise Refused(400, "too many query fields") from None
            token = (query.get("token") or [""])[0][:256]
            body = self.rfile.read(length)
            # A step report of the deploy ramdisk names its step first; a host-key post never has a step field.
            if body.startswith(b"step="):
                record = self.receiver.step(name, source, body, token=token)
                self.log_message("%s from %s: deploy step %s%s", name, source, record["step"],
                                 (": " + record["detail"]) if "detail" in record else "")
                self._answer(204)
                return
            record = self.receiver.store(name, source, body, token=token)
        except Refused as exc:
            self.log_message("%s from %s: refused (%d): %s", name[:64], source, exc.status, exc)
            self._answer(exc.status, str(exc))
            return
        self.log_message("%s from %s: stored %s", name, source, ", ".join(k.split()[0] for k in record["host_keys"]))
        self._answer(204)

    def do_GET(self) -> None:
        self._answer(405, "POST only")

    def log_request(self, code="-", size="-") -> None:
        # The request line without its query: the token never reaches the journal.
        self.log_message('"%s %s" %s', self.command, urlsplit(self.path).path[:200], code)

    def log_message(self, format, *args) -> None:  # pylint: disable=redefined-builtin
        sys.stderr.write((format % args) + "\n")
        sys.stderr.flush()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--listen", default="127.0.0.1:8081", help="address:port (loopback: nginx passes posts on)")
    parser.add_argument("--nodes", required=True, help="JSON file: node name -> address")
    parser.add_argument("--state-dir", required=True, help="folder of the stored records")
    parser.add_argument("--any-source", action="store_true", help="accept a node's post from any address")
    parser.add_argument("--marks-dir", required=True,
                        help="folder of the install marks (NAME.installing): only a node being installed posts")
    args = parser.parse_args(argv)
    os.umask(0o077)
    host, _sep, port = args.listen.rpartition(":")
    Handler.receiver = Receiver(args.nodes, args.state_dir, args.any_source, args.marks_dir)
    server = ThreadingHTTPServer((host, int(port)), Handler)
    server.serve_forever()


if __name__ == "__main__":
    main()
