# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read an inventory file (a fleet, group_vars) as plain data the way a test needs it: its ``!vault``
values (the lab's and the example's passwords are vault-encrypted, as at a site) become the string
``vaulted``, ``!unsafe`` values their text. For values a test must compare, use the lab's own secrets."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor("!vault", lambda loader, node: "vaulted")
_Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def load(path: str | Path) -> Any:
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_Loader)
