# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What on a switch is ours: the ownership marker, half tenants, and what every parser keeps.

Private to the collection. The collection writes ``gpucloud:<tenant>`` on one native object per
tenant (NVUE SVI description, SONiC VLAN description, EOS VLAN name); a parser reads the tenant's
other parts from there (``Found``). A tenant marked as ours that lacks a part (no L2 VNI, VRF,
L3 VNI or gateway) is half: every state refuses it but ``deleted``, which removes the parts it
has; the writers write a half tenant with stand-ins for what it lacks and leave out what holds one.
"""

from __future__ import annotations

import re
from typing import Any

from .._fleet.schema import DNS_LABEL
from .errors import IncompleteTenantError, NativeConfigError
from .model import normalise, port_key

MARKER = "gpucloud:"

# What a parsed tenant must have, and how the problem reads (the native path follows it).
PARSED_FIELDS = (
    ("vni", "no L2 VNI"),
    ("vrf", "no VRF"),
    ("l3vni", "no L3 VNI"),
    ("gateway", "no anycast gateway"),
)


def marker(tenant: str) -> str:
    """The ownership marker written on the objects this collection creates."""
    return MARKER + tenant


def owner(text: str | None) -> str | None:
    """The tenant named by an ownership marker, or None when the object is not ours."""
    if not isinstance(text, str) or not text.startswith(MARKER):
        return None
    name = text[len(MARKER) :].split(":", 1)[0]
    return name if DNS_LABEL.fullmatch(name) else None


def incomplete(where: str, tenant: dict, paths: dict[str, str]) -> list[str]:
    """What a parsed tenant (ours by its marker) lacks: one problem per missing field.

    ``where``: the native object that carries the marker; ``paths``: per field, where the
    platform keeps it (the problem names it, so the user knows what to add or remove). Without
    a VRF its L3 VNI cannot be looked up: only the VRF is reported.
    """
    return [
        "%s (%s): %s (%s)" % (where, marker(tenant["name"]), text, paths[key])
        for key, text in PARSED_FIELDS
        if not tenant.get(key) and not (key == "l3vni" and not tenant.get("vrf"))
    ]


def check_parsed(
    tenants: list[dict], gaps: list[str], conflicts: list[str] | None = None, half: list[str] | None = None
) -> list[dict]:
    """The parsed tenants (canonical order), or ``IncompleteTenantError`` naming every problem.

    A half tenant is never returned: planning on it would re-create it on top of what is there
    or unset what it cannot name. ``gaps`` (missing parts) leave the tenants on the error for
    ``state=deleted``, which removes the parts a half tenant has (``stand_in``); ``conflicts``
    (a second value where the collection writes one) leave none: nothing may be removed then.
    ``half``: the names of the tenants with gaps.
    """
    if gaps or conflicts:
        raise IncompleteTenantError([*gaps, *(conflicts or ())], None if conflicts else normalise(tenants), half)
    return normalise(tenants)


class Found:
    """What a parser found: the tenants marked as ours, each checked for its parts as it is added.

    ``conflicts``: the parser's own problems of a second value where the collection writes one.
    """

    def __init__(self) -> None:
        self.tenants: list[dict] = []
        self.gaps: list[str] = []
        self.conflicts: list[str] = []
        self.half: list[str] = []

    def add(self, where: str, paths: dict[str, str], **fields: object) -> dict:
        """One tenant found at ``where`` (the object with its marker): ``name``, ``vlan``, ``vni``,
        ``vrf``, ``l3vni``, ``gateway``, ``ports`` (any order) and, where the platform has one,
        ``address``; a part it lacks is empty (0 or ""). ``paths``: where each part lives."""
        t = dict(fields, subnet="")
        t["ports"] = sorted(t["ports"], key=lambda p: port_key(p["port"]))
        gaps = incomplete(where, t, paths)
        if gaps:
            self.gaps.extend(gaps)
            self.half.append(str(t["name"]))
        self.tenants.append(t)
        return t

    def second_values(self, where: str, tenant: str, found: dict[str, list[str]], paths: dict[str, str]) -> None:
        """A conflict per part that has more than the one value the collection writes."""
        self.conflicts.extend(
            "%s (%s): %s has %s; the collection writes one" % (where, marker(tenant), paths[key], ", ".join(values))
            for key, values in found.items()
            if len(values) > 1
        )

    def result(self) -> list[dict]:
        """The whole tenants, canonical; ``IncompleteTenantError`` if any is half or doubled."""
        return check_parsed(self.tenants, self.gaps, self.conflicts, self.half)


def is_partial(t: dict) -> bool:
    """Whether a parsed tenant lacks a part (``PARSED_FIELDS``): a half tenant."""
    return not (t["vni"] and t["vrf"] and t["l3vni"] and t["gateway"])


def split_partial(tenants: list[dict]) -> tuple[list[dict], list[dict]]:
    """``(whole, half)`` tenants, in their order; ``(tenants, [])`` when none is half."""
    half = [t for t in tenants if is_partial(t)]
    if not half:
        return tenants, half
    return [t for t in tenants if not is_partial(t)], half


# What the writers get for a half tenant's missing fields; none is a value validation lets
# through (VNI 16777215/16777216 are outside 1..16777214, the VRF name is longer than 15
# characters, a gateway is at most a /30), so a native item holding one is exactly a part the
# tenant does not have.
_STAND_INS = {"vni": 16777215, "vrf": "gpucloud-no-vrf-found", "l3vni": 16777216, "gateway": "255.255.255.255/32"}


def stand_in(t: dict) -> tuple[dict, re.Pattern | None]:
    """A half tenant with stand-ins for what it lacks, and the pattern that finds them in text.

    The writers write a half tenant whole, with the stand-ins; what holds one (``pattern.search``
    on the item's ``repr``) is left out. For a whole tenant: ``(t, None)``.
    """
    missing = [key for key, unused in PARSED_FIELDS if not t[key]]
    if not missing:
        return t, None
    filled = dict(t, **{key: _STAND_INS[key] for key in missing})
    words = [re.escape(str(_STAND_INS[key])) for key in missing]
    return filled, re.compile(r"(?<![\d.])(?:%s)(?![\d])" % "|".join(words))


def without_stand_ins(items: list, missing: re.Pattern | None) -> list:
    """``items`` less those that hold a stand-in (``stand_in``'s pattern on their ``repr``);
    all of them for a whole tenant (``missing`` is None)."""
    return items if missing is None else [i for i in items if not missing.search(repr(i))]


# --- reading a native config ---------------------------------------------------------


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def table(node: Any, path: str) -> dict:
    """A mapping of a native config (absent or empty: ``{}``); ``NativeConfigError`` naming
    ``path`` when the config holds something else there."""
    if not node:
        return {}
    if isinstance(node, dict):
        return node
    raise NativeConfigError(["%s: is %s, not a mapping" % (path, _shown(node))])


def at(node: Any, path: str, *keys: Any) -> dict:
    """The mapping under ``node`` at ``keys`` (absent: ``{}``); ``path`` names ``node`` in errors."""
    here = table(node, path)
    for key in keys:
        path = "%s %s" % (path, key) if path else str(key)
        here = table(here.get(key), path)
    return here


def number(value: Any, path: str) -> int:
    """A number of a native config (an int, or its digits); ``NativeConfigError`` naming ``path`` otherwise."""
    try:
        return int(value)
    except (TypeError, ValueError):
        raise NativeConfigError(["%s: %s is not a number" % (path, _shown(value))]) from None


def text_of(config: Any, platform: str) -> str:
    """A line-CLI config given as text or as a list of lines."""
    if isinstance(config, list):
        if not all(isinstance(line, str) for line in config):
            raise NativeConfigError(["running_config: a list must hold %s config lines (strings)" % platform])
        return "\n".join(config)
    return str(config or "")
