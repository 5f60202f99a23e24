# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The checker that collects every problem of a fleet, each with its path.

Each check returns the cleaned value, or None after recording why the value is invalid.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


def is_vault_value(value: Any) -> bool:
    """True for a vault-encrypted scalar (``!vault``), whatever ansible-core version loaded it."""
    return type(value).__name__ in ("EncryptedString", "AnsibleVaultEncryptedUnicode")


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def plain(value: Any) -> Any:
    """Drop loader tags (ansible-core 2.19 tags strings with their origin)."""
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, str):
        return str(value)
    return value


def normalise_mac(mac: str) -> str:
    return mac.replace("-", ":").lower()


@dataclass(frozen=True)
class Subnet:
    """An IPv4 subnet as the model checks it: integer bounds (standard library ``ipaddress``, which
    modules shipped to managed hosts can rely on, unlike a third-party address library)."""

    first: int
    last: int
    prefixlen: int

    @classmethod
    def of(cls, net: ipaddress.IPv4Network) -> Subnet:
        return cls(int(net.network_address), int(net.broadcast_address), net.prefixlen)

    @property
    def size(self) -> int:
        return self.last - self.first + 1

    @property
    def cidr(self) -> str:
        return "%s/%d" % (ip_str(self.first), self.prefixlen)

    @property
    def netmask(self) -> str:
        return ip_str((0xFFFFFFFF << (32 - self.prefixlen)) & 0xFFFFFFFF)


class Checker:
    """Collects problems; each check returns the cleaned value or None when invalid."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.subnets: list[tuple[int, int, str]] = []  # (first, last, path) for the overlap rule

    def add(self, path: str, message: str) -> None:
        self.problems.append("%s: %s" % (path, message))

    # --- structure -----------------------------------------------------------------
    def mapping(self, value: Any, path: str, keys: dict[str, bool]) -> dict | None:
        if not isinstance(value, dict):
            self.add(path, "must be a mapping with keys %s, got %s" % (", ".join(keys), type_name(value)))
            return None
        for key in value:
            if key not in keys:
                self.add(
                    "%s.%s" % (path, key) if path else str(key),
                    "unknown key; allowed keys here are %s" % ", ".join(keys),
                )
        for key, required in keys.items():
            if required and key not in value:
                self.add("%s.%s" % (path, key) if path else key, "is required")
        return value

    def sequence(self, value: Any, path: str, allow_empty: bool = True) -> list:
        if not isinstance(value, list):
            self.add(path, "must be a list, got %s" % type_name(value))
            return []
        if not allow_empty and not value:
            self.add(path, "must not be empty")
        return value

    # --- scalars -------------------------------------------------------------------
    def string(self, value: Any, path: str, pattern: re.Pattern | None = None, what: str = "") -> str | None:
        if not isinstance(value, str) or not value:
            self.add(path, "must be a non-empty string, got %s" % type_name(value))
            return None
        if pattern is not None and not pattern.fullmatch(value):
            self.add(path, "%r is not %s" % (str(value), what))
            return None
        return str(value)

    def secret(self, value: Any, path: str) -> Any:
        if is_vault_value(value):
            return value
        if not isinstance(value, str) or not value:
            self.add(path, "must be a non-empty string or a vault-encrypted value (!vault), got %s" % type_name(value))
            return None
        return value

    def integer(self, value: Any, path: str, bounds: tuple[int, int], extra: Iterable[int] = ()) -> int | None:
        extra = tuple(extra)
        allowed = "%d..%d" % bounds + "".join(" or %d" % e for e in extra)
        if not is_int(value):
            self.add(path, "must be an integer %s, got %s" % (allowed, type_name(value)))
            return None
        if value in extra:
            return int(value)
        if not bounds[0] <= value <= bounds[1]:
            self.add(path, "%d is outside %s" % (value, allowed))
            return None
        return int(value)

    def choice(self, value: Any, path: str, choices: Iterable[str]) -> str | None:
        choices = tuple(choices)
        if value not in choices:
            self.add(path, "%r is not one of %s" % (plain(value), ", ".join(choices)))
            return None
        return str(value)

    def ip(self, value: Any, path: str) -> int | None:
        """An IPv4 address; returns it as an integer."""
        if not isinstance(value, str):
            self.add(path, "must be an IPv4 address string, got %s" % type_name(value))
            return None
        try:
            return int(ipaddress.IPv4Address(value))
        except ValueError:
            self.add(path, "%r is not a valid IPv4 address" % str(value))
            return None

    def network(self, value: Any, path: str, max_prefix: int = 30) -> Subnet | None:
        if not isinstance(value, str) or "/" not in value:
            self.add(path, "must be an IPv4 subnet in CIDR form (a.b.c.d/len), got %r" % plain(value))
            return None
        try:
            iface = ipaddress.IPv4Interface(value)
        except ValueError:
            self.add(path, "%r is not a valid IPv4 subnet" % str(value))
            return None
        net = Subnet.of(iface.network)
        if int(iface.ip) != net.first:
            self.add(path, "%r has host bits set; did you mean %s?" % (str(value), net.cidr))
            return None
        if net.prefixlen > max_prefix:
            self.add(path, "%r is too small; the prefix length must be at most /%d" % (str(value), max_prefix))
            return None
        return net

    def in_subnet(self, value: int, net: Subnet | None, path: str, what: str) -> bool:
        """``value`` is a usable host address of ``net`` (None: nothing to check against)."""
        if net is None:
            return True
        if not net.first <= value <= net.last:
            self.add(path, "%s is outside %s %s" % (ip_str(value), what, net.cidr))
            return False
        if net.prefixlen < 31 and value in (net.first, net.last):
            self.add(path, "%s is the network or broadcast address of %s" % (ip_str(value), net.cidr))
            return False
        return True

    def claim_subnet(self, net: Subnet, path: str) -> None:
        """Remember a subnet of the fleet; ``rules.check_overlaps`` holds them pairwise disjoint."""
        self.subnets.append((net.first, net.last, path))


def type_name(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


class Unique:
    """Remembers which path first used a value, to report duplicates with both places."""

    def __init__(self, checker: Checker, what: str) -> None:
        self.checker = checker
        self.what = what
        self.seen: dict[Any, str] = {}

    def claim(self, value: Any, path: str, shown: Any = None) -> bool:
        if value is None:
            return True
        first = self.seen.get(value)
        if first is not None:
            self.checker.add(
                path, "%s %s is already used by %s" % (self.what, shown if shown is not None else value, first)
            )
            return False
        self.seen[value] = path
        return True


def ip_str(value: int) -> str:
    return str(ipaddress.IPv4Address(value))


def cidr(item: tuple[int, int, str]) -> str:
    """The first CIDR block of a claimed range (a claimed subnet: the subnet itself)."""
    first, last = ipaddress.IPv4Address(item[0]), ipaddress.IPv4Address(item[1])
    return str(next(ipaddress.summarize_address_range(first, last)))
