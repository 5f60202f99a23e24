# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every test session shares: the collection made importable, and the one CI rule.

Importable: ``make setup`` links `.collections/ansible_collections/gpucloud/baremetal` to the
checkout (the repo's ansible.cfg resolves the collection there). Without that link, tests import
through a link of their own in a temporary folder, writing nothing into the checkout.

The CI rule lives in ``tests/support/ci.py`` (a pytest plugin, loaded here): any skip fails in CI.
"""

from __future__ import annotations

import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_COLLECTIONS = os.path.join(ROOT, ".collections")
if not os.path.exists(os.path.join(_COLLECTIONS, "ansible_collections", "gpucloud", "baremetal")):
    _COLLECTIONS = tempfile.mkdtemp(prefix="gpucloud-collections-")
    os.makedirs(os.path.join(_COLLECTIONS, "ansible_collections", "gpucloud"))
    os.symlink(ROOT, os.path.join(_COLLECTIONS, "ansible_collections", "gpucloud", "baremetal"))
if _COLLECTIONS not in sys.path:
    sys.path.insert(0, _COLLECTIONS)

pytest_plugins = ["tests.support.ci"]
