# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Line-CLI configs (EOS, FRR): each line's writer and reader in one entry, and blocks of lines.

Private to the collection. As ansible.netcommon's ``rm_templates`` keep a line's parser and
renderer in one entry (``getval`` + ``setval``), a ``Line`` holds how a line is written (a
%-format of named values) and how it is read back (a regex whose named groups are those values;
by default derived from the format, so the two cannot drift apart). A platform writes its text
from templates joined from its entries once, at import, and parses with the same entries.
"""

from __future__ import annotations

import re

INDENT = "   "
_FIELD = re.compile(r"%\((\w+)\)([ds])")
Item = tuple[str, ...]


def _pattern(setval: str) -> str:
    """The regex that reads what ``setval`` writes: ``%(x)d`` a number, ``%(x)s`` a word."""
    out, pos = ["^"], 0
    for m in _FIELD.finditer(setval):
        out.append(re.escape(setval[pos : m.start()]))
        out.append("(?P<%s>%s)" % (m.group(1), r"\d+" if m.group(2) == "d" else r"\S+"))
        pos = m.end()
    out.append(re.escape(setval[pos:]) + "$")
    return "".join(out)


class Line:
    """One line: ``setval`` writes it from values, ``getval`` reads them back (a line, stripped).

    ``getval`` is given only where the platform's own text is broader than what we write (EOS
    shows ``vlan 10-12,20`` where we write ``vlan 10``).
    """

    __slots__ = ("fields", "fmt", "getval", "name", "setval")

    def __init__(self, name: str, setval: str, getval: str | None = None) -> None:
        self.name = name
        self.setval = setval
        self.getval = re.compile(getval or _pattern(setval))
        # The same format with positional fields (``fmt % (v1, v2)``), for writers' hot loops.
        self.fields = tuple(m.group(1) for m in _FIELD.finditer(setval))
        self.fmt = _FIELD.sub(r"%\2", setval)

    def set(self, values: dict) -> str:
        return self.setval % values

    def get(self, line: str) -> dict | None:
        m = self.getval.match(line)
        return m.groupdict() if m else None

    def __repr__(self) -> str:
        return "Line(%r)" % self.name


def block(head: Line, children: tuple[Line, ...], depth: int = 0, end: str = "!") -> str:
    """The template of a block: ``head`` and its ``children`` one level deeper, then ``end``."""
    lines = [INDENT * depth + head.setval, *(INDENT * (depth + 1) + c.setval for c in children)]
    return "\n".join(lines) + "\n" + (INDENT * depth + end + "\n" if end else "")


def first(line: str, entries: tuple[Line, ...]) -> tuple[Line | None, dict]:
    """The first entry that reads ``line``, and the values it reads; ``(None, {})`` if none does."""
    for entry in entries:
        values = entry.get(line)
        if values is not None:
            return entry, values
    return None, {}


def blocks(text: str) -> list[tuple[str, list]]:
    """Running-config text to a tree of (line, children) by indentation (``!`` lines dropped)."""
    root: list[tuple[str, list]] = []
    stack: list[tuple[int, list]] = [(-1, root)]
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("!"):
            continue
        depth = len(raw) - len(raw.lstrip(" "))
        while stack[-1][0] >= depth:
            stack.pop()
        children: list = []
        stack[-1][1].append((stripped, children))
        stack.append((depth, children))
    return root


def items(text: str) -> list[Item]:
    """CLI text to items: each line as the tuple of lines from its top-level block down to it."""
    out: list[Item] = []

    def walk(prefix: Item, nodes: list) -> None:
        for line, children in nodes:
            if children:
                walk((*prefix, line), children)
            else:
                out.append((*prefix, line))

    walk((), blocks(text))
    return out
