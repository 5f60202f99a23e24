# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Validate a SONiC config_db render against SONiC's own YANG models with `yanglint`.

The models are sonic-buildimage's (copies in ../shared/upstream/sonic-yang/<release>/, test
data only). config_db JSON is mapped to YANG JSON the way sonic-buildimage's
`src/sonic-yang-mgmt/sonic_yang_ext.py` does: each table goes to the container of that name
in its module, a table key is split on `|` onto the keys of the table's list with that many
keys (VLAN_INTERFACE|Vlan101 -> VLAN_INTERFACE_LIST, VLAN_INTERFACE|Vlan101|10.0.0.1/24 ->
VLAN_INTERFACE_IPPREFIX_LIST), and a table without lists (DEVICE_METADATA) maps its key to a
container. Ports referenced by a render get stub PORT entries (lanes, speed) for the leafrefs.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT.parent / "shared" / "upstream" / "sonic-yang"


def models_dir(release: str) -> Path:
    """The YANG models of a release: master, or the newest release branch copy at or below it."""
    if not UPSTREAM.is_dir():
        pytest.skip("SONiC YANG models not available (../shared/upstream/sonic-yang is missing)")
    if shutil.which("yanglint") is None:
        pytest.skip("yanglint is not installed (Debian package libyang2-tools)")
    if release == "master":
        return UPSTREAM / "master"
    branches = sorted(p.name for p in UPSTREAM.iterdir() if p.name.isdigit() and p.name <= release)
    if not branches:
        pytest.fail("no SONiC YANG models for release %s in %s" % (release, UPSTREAM))
    return UPSTREAM / branches[-1]


@lru_cache(maxsize=4)
def table_index(directory: str) -> dict:
    """TABLE -> (module, top container, [(list name, [keys], {leaf: type})], {leaf: type} of a container table)."""
    index: dict = {}
    typedefs: dict[str, str] = {}
    for path in sorted(Path(directory).glob("*.yang")):
        raw = path.read_text()
        for name, typ in re.findall(r"typedef\s+(\S+)\s*\{\s*type\s+([^\s;{]+)", raw):
            typedefs[name] = typ.split(":")[-1]
        text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', raw)  # strings may hold braces
        module = re.search(r"^\s*module\s+(\S+)\s*\{", text, re.M)
        if not module:
            continue
        depth = 0
        top = table = None
        lists: list = []
        leaves: dict = {}
        leaf = None
        for line in text.splitlines():
            opened = re.match(r"\s*(container|list|leaf)\s+(\S+)\s*\{", line)
            if opened:
                kind, name = opened.groups()
                if kind == "container" and depth == 1:
                    top = name
                elif kind == "container" and depth == 2 and top:
                    table, lists, leaves = name, [], {}
                    index[table] = (module.group(1), top, lists, leaves)
                elif kind == "list" and depth == 3 and table:
                    key = re.search(r"list\s+%s\s*\{.*?key\s+\"([^\"]+)\"" % re.escape(name), raw, re.S)
                    leaves = {}
                    lists.append((name, key.group(1).split() if key else [], leaves))
                elif kind == "leaf" and table:
                    leaf = (name, depth)
            typed = re.match(r"\s*type\s+([^\s;{]+)", line)
            if typed and leaf and depth == leaf[1] + 1 and leaf[0] not in leaves:
                leaves[leaf[0]] = typed.group(1).split(":")[-1]
            depth += line.count("{") - line.count("}")
            if leaf and depth <= leaf[1]:
                leaf = None
    for entry in index.values():
        for leaves in [entry[3]] + [lst[2] for lst in entry[2]]:
            for name, typ in list(leaves.items()):
                seen = 0
                while typ in typedefs and seen < 10:
                    typ, seen = typedefs[typ], seen + 1
                leaves[name] = typ
    return index


_NUMBERS = {"int8", "int16", "int32", "uint8", "uint16", "uint32"}  # JSON numbers in YANG JSON


def _typed(fields: dict, leaves: dict) -> dict:
    """config_db holds strings; YANG JSON encodes 32-bit-or-smaller integers as numbers."""
    return {k: int(v) if leaves.get(k) in _NUMBERS and isinstance(v, str) and v.isdigit() else v
            for k, v in fields.items()}


def to_yang(db: dict, directory: Path) -> dict:
    index = table_index(str(directory))
    out: dict = {}
    for table, entries in db.items():
        if table not in index:
            raise AssertionError("config_db table %s is in no YANG model of %s" % (table, directory.name))
        module, top, lists, leaves = index[table]
        container = out.setdefault("%s:%s" % (module, top), {}).setdefault("%s:%s" % (module, table), {})
        for key, fields in entries.items():
            fields = fields or {}
            if not lists:
                container[key] = _typed(fields, leaves)
                continue
            parts = key.split("|")
            match = [entry for entry in lists if len(entry[1]) == len(parts)]
            if not match:
                raise AssertionError("%s|%s: no list of %s has %d keys" % (table, key, table, len(parts)))
            name, keys, list_leaves = match[0]
            container.setdefault(name, []).append(dict(zip(keys, parts, strict=True), **_typed(fields, list_leaves)))
    return out


def port_stubs(db: dict) -> dict:
    ports = sorted({key.split("|")[1] for key in db.get("VLAN_MEMBER", {})})
    return {p: {"lanes": str(100 + i), "speed": "100000"} for i, p in enumerate(ports)}


def yanglint(db: dict, release: str) -> tuple[int, str]:
    """(exit code, message) of `yanglint -t config` on a config_db dict for a release."""
    directory = models_dir(release)
    unknown = sorted(set(db) - set(table_index(str(directory))))
    if unknown:  # sonic_yang_ext refuses a config_db with tables no model of the release has
        return 1, "tables in no YANG model of %s: %s" % (directory.name, ", ".join(unknown))
    data = dict(db)
    stubs = port_stubs(db)
    if stubs:
        data = {"PORT": stubs, **data}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.json"
        path.write_text(json.dumps(to_yang(data, directory), indent=1))
        proc = subprocess.run(
            ["yanglint", "-t", "config", "-p", str(directory), *map(str, sorted(directory.glob("*.yang"))), str(path)],
            capture_output=True, text=True, check=False,
        )
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if "libyang warn" not in line]
    return proc.returncode, "\n".join(lines).strip()
