# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NVUE config model the NVUE API SIMULATION enforces: NVIDIA's own, per Cumulus Linux release.

PyPI ``nvueschema`` carries Pydantic models generated from NVIDIA's published NVUE OpenAPI
specification, one module per release (``nvueschema.models.v5_0`` ... ``v5_18``, class
``NvueConfig``; no network access, no Go binary). Like any Pydantic model they drop keys they do
not define, so validating alone would let every path through. The path table is therefore read
from the model's own fields: each key of a PATCH body and each segment of a DELETE path must be a
field of the model at that point (by its NVUE name, the field's alias) or a key of a map
(``Dict[str, ...]``) the model has there. A path the simulated release does not define is
refused, as the real API refuses it (HTTP 400 on the PATCH or DELETE), so a renderer that writes
a path no switch of that release has fails the tests instead of a production change. Values are
then validated by the model itself (types, ranges, patterns, enums); ``null`` unsets, whatever
the type. Where the model has ``Dict[str, Any]`` it describes nothing below that key, and neither
does this table.

Notably (FACTS.md, NVIDIA's NVUE reference), under ``vrf <vrf-id> router bgp address-family
ipv4-unicast`` ``route-export to-evpn`` has no ``route-target``; the L3 VNI route-targets are
``vrf <vrf-id> router bgp route-export to-evpn route-target <rt>`` and ``... route-import
from-evpn route-target <rt>``.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
import types
import typing
from dataclasses import dataclass
from typing import Any, Union

import nvueschema.models
from pydantic import BaseModel, ValidationError

DEFAULT_RELEASE = "5.12"
LEAF = "leaf"       # a value: the model validates it
ANYTHING = "any"    # Dict[str, Any] below: the model describes nothing further


@dataclass(frozen=True)
class Map:
    """A map the model has at this point (``Dict[str, ...]``): any key, each one a ``value``."""

    value: Node
    key_name: str


Node = Union[type[BaseModel], Map, str]  # noqa: UP007 (a runtime alias: `|` needs every member to be a type)


def releases() -> list[str]:
    """The Cumulus Linux releases nvueschema has a model of, oldest first."""
    found = [m.name for m in pkgutil.iter_modules(nvueschema.models.__path__) if re.fullmatch(r"v\d+_\d+", m.name)]
    return sorted((n[1:].replace("_", ".") for n in found), key=lambda r: tuple(int(p) for p in r.split(".")))


@functools.cache
def model(release: str = DEFAULT_RELEASE) -> type[BaseModel]:
    """``NvueConfig`` of a release (``5.12``, or ``5.12.1`` for the same model)."""
    major_minor = ".".join(release.split(".")[:2])
    if major_minor not in releases():
        raise ValueError(f"no NVUE model of Cumulus Linux {release}; nvueschema has {', '.join(releases())}")
    return importlib.import_module(f"nvueschema.models.v{major_minor.replace('.', '_')}").NvueConfig


def _members(annotation: Any) -> list[Any]:
    """An annotation's types, with Optional, Union and Annotated taken apart and None left out."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return [t for arg in typing.get_args(annotation) for t in _members(arg)]
    return [] if annotation is type(None) else [annotation]


def _key_name(entry: Any) -> str:
    """The placeholder the specification gives a map's keys, from the entry model's ``Path: /a/{b-id}``."""
    match = re.search(r"Path: \S*\{([^}]+)\}\s*$", (getattr(entry, "__doc__", None) or "").strip().splitlines()[-1])
    return f"<{match.group(1)}>" if match else "<name>"


def _node(annotation: Any) -> Node:
    for member in _members(annotation):
        if isinstance(member, type) and issubclass(member, BaseModel):
            return member
        if typing.get_origin(member) is dict:
            value = typing.get_args(member)[1]
            inner = ANYTHING if value is Any else _node(value)
            return Map(inner, _key_name(inner) if inner not in (LEAF, ANYTHING) else "<name>")
    return LEAF


@functools.cache
def _fields(cls: type[BaseModel]) -> dict[str, Node]:
    return {field.alias or name: _node(field.annotation) for name, field in cls.model_fields.items()}


def _child(node: Node, key: str) -> Node | None:
    if isinstance(node, Map):
        return node.value
    if node == ANYTHING:
        return ANYTHING
    if isinstance(node, type):
        return _fields(node).get(key)
    return None


def _allowed(node: Node) -> str:
    if isinstance(node, Map):
        return node.key_name
    if isinstance(node, type):
        return ", ".join(sorted(_fields(node)))
    return "nothing (it takes a value)"


def _where(path: tuple[str, ...]) -> str:
    return " ".join(path) or "(root)"


def _unknown(value: Any, node: Node, path: tuple[str, ...]) -> list[str]:
    """Every key of ``value`` the model does not define, each with its path."""
    if value is None or node in (LEAF, ANYTHING):
        return []
    if not isinstance(value, dict):
        return [f"{_where(path)}: is an object, not {value!r}"]
    problems = []
    for key, sub in value.items():
        child = _child(node, str(key))
        if child is None:
            problems.append(f"{_where(path)} {key}: no such path in NVUE; valid here: {_allowed(node)}")
        else:
            problems.extend(_unknown(sub, child, (*path, str(key))))
    return problems


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return value


def _invalid_values(tree: dict, release: str) -> list[str]:
    """The model's own verdict on the values, each at the path of the input it refused."""
    try:
        model(release).model_validate(tree)
    except ValidationError as err:
        found: dict[str, list[str]] = {}
        for error in err.errors():
            path, node = [], tree
            for part in error["loc"]:
                if not isinstance(node, dict) or str(part) not in node:
                    break
                path.append(str(part))
                node = node[str(part)]
            key = f"{_where(tuple(path))} {node}" if not isinstance(node, dict) else _where(tuple(path))
            found.setdefault(key, []).append(error["msg"])
        return [f"{key}: {' or '.join(dict.fromkeys(msgs))}" for key, msgs in found.items()]
    return []


def check_path(parts: list[str], release: str = DEFAULT_RELEASE) -> str | None:
    """Why a path (``DELETE /nvue_v1/<parts>``) does not exist in the release's NVUE, or None when it does."""
    node: Node = model(release)
    for i, key in enumerate(parts):
        child = _child(node, key)
        if child is None:
            where = " ".join(parts[: i + 1])
            if node == LEAF:
                return f"{where}: no such path in NVUE"
            return f"{where}: no such path in NVUE; valid here: {_allowed(node)}"
        node = child
    return None


def check_tree(tree: Any, path: tuple[str, ...] = (), release: str = DEFAULT_RELEASE) -> list[str]:
    """Every problem of a PATCH body (an NVUE config tree) at ``path``, each with its path."""
    problem = check_path(list(path), release)
    if problem:
        return [problem]
    node: Node = model(release)
    for key in path:
        node = _child(node, key)  # type: ignore[arg-type]  # check_path found every one
    problems = _unknown(tree, node, path)
    if not isinstance(tree, dict):
        return problems
    nested: Any = _without_nulls(tree)
    for key in reversed(path):
        nested = {key: nested}
    return problems + _invalid_values(nested, release)
