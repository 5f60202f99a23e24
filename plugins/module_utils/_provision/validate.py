# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Seeds checked before they are served, with the real validators where one exists.

- cloud-init user-data: cloud-init's own schema (the code ``cloud-init schema`` runs), for the
  whole document and for autoinstall's embedded ``user-data``; all seeds in one process of
  cloud-init's interpreter, with one validator (at 5,000 nodes a process per file is minutes);
- kickstart: pykickstart's parser for the profile's RHEL version (what ``ksvalidator`` runs);
- preseed: debconf syntax (``owner question type value``), known types, booleans, and the
  answers an unattended debian-installer run cannot do without.

Each function returns a list of problems, ``<file>: <what is wrong>``; empty when valid.

At scale, ``seeds`` runs the validators once per distinct seed *shape*: two seeds of a profile
whose texts are equal once each node's own values (name, FQDN, address, MAC; all checked by the
fleet model) are replaced by placeholders differ in nothing a validator looks at, so one of them is
validated for all. A value that YAML would read differently is quoted in the text, which changes
the shape; so does anything else that differs. A problem names the file that was validated and
how many other seeds share its shape.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

try:
    from pykickstart.errors import KickstartError
    from pykickstart.parser import KickstartParser
    from pykickstart.version import makeVersion

    HAS_PYKICKSTART = True
except ImportError:
    HAS_PYKICKSTART = False

from .errors import ValidatorMissing

_CLOUD_INIT_SCRIPT = r"""
import json, sys, yaml
from cloudinit.config.schema import get_jsonschema_validator, get_schema
cls, fmt = get_jsonschema_validator()
validator = cls(get_schema(), format_checker=fmt())
out = {}
for name, text in json.load(sys.stdin).items():
    errors = []
    if not text.startswith("#cloud-config"):
        errors.append("does not start with #cloud-config")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        out[name] = errors + ["not YAML: %s" % str(exc).replace(chr(10), " ")]
        continue
    if not isinstance(doc, dict):
        out[name] = errors + ["is not a mapping"]
        continue
    docs = [("", doc)]
    auto = doc.get("autoinstall")
    if auto is not None:
        if not isinstance(auto, dict) or auto.get("version") != 1:
            errors.append("autoinstall.version: must be 1")
        elif isinstance(auto.get("user-data"), dict):
            docs.append(("autoinstall.user-data.", auto["user-data"]))
        elif "user-data" in auto:
            errors.append("autoinstall.user-data: must be a mapping (cloud-config for the installed system)")
    for prefix, part in docs:
        for err in validator.iter_errors(part):
            path = ".".join(str(p) for p in err.path)
            errors.append("%s%s: %s" % (prefix, path or "(top)", err.message))
    if errors:
        out[name] = errors
json.dump(out, sys.stdout)
"""

PRESEED_TYPES = ("string", "boolean", "select", "multiselect", "password", "note", "text", "title", "error", "seen")
PRESEED_REQUIRED = (
    "netcfg/get_hostname",
    "mirror/http/hostname",
    "mirror/http/directory",
    "passwd/username",
    "partman-auto/method",
    "partman/confirm",
    "grub-installer/bootdev",
    "finish-install/reboot_in_progress",
)
_PRESEED_LINE = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)(?:\s(.*))?$")


def cloud_init_interpreter() -> str:
    """The Python that runs ``cloud-init`` (from its shebang), which can import cloudinit."""
    path = shutil.which("cloud-init")
    if path is None:
        raise ValidatorMissing("cloud-init is not installed on the controller; it validates autoinstall "
                               "user-data (apt-get install cloud-init; see bindep.txt)")
    with open(path, "rb") as fh:
        first = fh.readline().decode(errors="replace").strip()
    words = first[2:].split() if first.startswith("#!") else []
    if not words:
        return "/usr/bin/python3"
    if os.path.basename(words[0]) == "env":
        # ``#!/usr/bin/env python3`` (pip's and some distributions' cloud-init): the interpreter env finds on PATH
        name = next((w for w in words[1:] if not w.startswith("-") and "=" not in w), "python3")
        return shutil.which(name) or name
    return words[0]


def cloud_config(docs: dict[str, str]) -> list[str]:
    if not docs:
        return []
    run = subprocess.run([cloud_init_interpreter(), "-c", _CLOUD_INIT_SCRIPT], input=json.dumps(docs),
                         capture_output=True, text=True, check=False,
                         env=dict(os.environ, PYTHONPATH=""))
    if run.returncode != 0:
        raise ValidatorMissing("cloud-init's schema validator failed to run: %s" % run.stderr.strip()[-500:])
    found = json.loads(run.stdout)
    return ["%s: %s" % (name, err) for name in sorted(found) for err in found[name]]


def _ks_version(version: str) -> str:
    major = str(version).split(".", maxsplit=1)[0]
    return "RHEL%s" % major if major.isdigit() else "DEVEL"


def kickstart(docs: dict[str, tuple[str, str]]) -> list[str]:
    """``docs``: file -> (content, OS version)."""
    if not docs:
        return []
    if not HAS_PYKICKSTART:
        raise ValidatorMissing("pykickstart is not installed on the controller; it validates kickstart seeds "
                               "(pip install pykickstart)")
    problems = []
    for name, (text, version) in docs.items():
        try:
            handler = makeVersion(_ks_version(version))
        except KickstartError:
            handler = makeVersion()
        parser = KickstartParser(handler, missingIncludeIsFatal=False)
        try:
            parser.readKickstartFromString(text)
        except KickstartError as exc:
            problems.append("%s: %s" % (name, " ".join(str(exc).split())))
    return problems


def _preseed_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` as debian-installer reads a preconfiguration file: a line ending in a backslash
    continues on the next, joined "with all leading/trailing whitespace condensed to a single space" (installation
    guide, B.3 "Creating a preconfiguration file"); numbered by the line it starts on."""
    out: list[tuple[int, str]] = []
    held: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if held is not None:
            line = held[1] + " " + line.strip()
            number = held[0]
            held = None
        if line.rstrip().endswith("\\") and not line.lstrip().startswith("#"):
            held = (number, line.rstrip()[:-1].rstrip())
            continue
        out.append((number, line))
    if held is not None:
        out.append(held)
    return out


def preseed(docs: dict[str, str]) -> list[str]:
    problems = []
    for name, text in docs.items():
        seen = set()
        for number, line in _preseed_lines(text):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            m = _PRESEED_LINE.match(line)
            if m is None:
                problems.append("%s:%d: not 'owner question type value'" % (name, number))
                continue
            _owner, question, kind, value = m.groups()
            if kind not in PRESEED_TYPES:
                problems.append("%s:%d: %s: unknown type %r; allowed: %s"
                                % (name, number, question, kind, ", ".join(PRESEED_TYPES)))
            if kind == "boolean" and value not in ("true", "false"):
                problems.append("%s:%d: %s: a boolean is true or false, got %r" % (name, number, question, value))
            if kind in ("select", "multiselect") and not value:
                problems.append("%s:%d: %s: a %s needs a value" % (name, number, question, kind))
            if question in seen:
                problems.append("%s:%d: %s is answered twice" % (name, number, question))
            seen.add(question)
        for question in PRESEED_REQUIRED:
            if question not in seen:
                problems.append("%s: %s is not answered; an unattended install would stop and ask" % (name, question))
    return problems


def shapes(files: dict[str, str], families: dict[str, tuple[str, str]],
           values: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """One representative seed path per distinct shape -> the other seed paths of that shape."""
    seen: dict[tuple[str, str, str], str] = {}
    groups: dict[str, list[str]] = {}
    for path in sorted(families):
        text = files[path]
        for i, value in enumerate(values.get(path, ())):
            text = text.replace(value, "\x00%d\x00" % i)
        key = (families[path][0], families[path][1], path.rsplit("/", 1)[-1] + "\x00" + text)
        if key in seen:
            groups[seen[key]].append(path)
        else:
            seen[key] = path
            groups[path] = []
    return groups


def seeds(files: dict[str, str], families: dict[str, tuple[str, str]],
          values: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """Validate every seed of a rendered tree. ``families``: seed path -> (family, OS version);
    ``image`` is an image profile's NoCloud seed (cloud-init's schema);
    ``values``: seed path -> the node's own values (see ``shapes``); without it, each seed alone."""
    groups = shapes(files, families, values) if values else {path: [] for path in families}
    cloud, ks, pre = {}, {}, {}
    for path in groups:
        family, version = families[path]
        if family in ("ubuntu", "image") and path.endswith("/user-data"):
            cloud[path] = files[path]
        elif family in ("rocky", "rhel"):
            ks[path] = (files[path], version)
        elif family == "debian":
            pre[path] = files[path]
    problems = cloud_config(cloud) + kickstart(ks) + preseed(pre)
    out = []
    for problem in problems:
        path = problem.split(":", 1)[0]
        shared = len(groups.get(path, []))
        out.append(problem + (" (and %d seeds of the same shape)" % shared if shared else ""))
    return out


def summary(problems: list[str], limit: int = 20) -> list[str]:
    return problems[:limit] + (["... and %d more" % (len(problems) - limit)] if len(problems) > limit else [])
