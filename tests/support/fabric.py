# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared by the fabric tests: the example fleet's model, and file names per switch."""

from __future__ import annotations

import os

import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE_FLEET = os.path.join(ROOT, "inventories", "example", "fleet.yml")
GOLDEN = os.path.join(ROOT, "tests", "support", "golden", "fabric")


class _Loader(yaml.SafeLoader):
    pass


# The example's BMC passwords are vault-encrypted; the fabric does not need them.
_Loader.add_constructor("!vault", lambda loader, node: "vaulted")


def example_model() -> dict:
    with open(EXAMPLE_FLEET, encoding="utf-8") as fh:
        return load_fleet(yaml.load(fh, Loader=_Loader))


def file_name(switch: str, ext: str) -> str:
    """``leaf1.nvue.yaml``; FRR files are ``leaf1-frr.conf``."""
    return "%s-frr.conf" % switch if ext == "frr.conf" else "%s.%s" % (switch, ext)
