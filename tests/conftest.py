# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make the checkout importable as ansible_collections.gpucloud.baremetal."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_COLLECTIONS = os.path.join(ROOT, ".collections")
_LINK = os.path.join(_COLLECTIONS, "ansible_collections", "gpucloud", "baremetal")
if not os.path.exists(_LINK):
    os.makedirs(os.path.dirname(_LINK), exist_ok=True)
    os.symlink(ROOT, _LINK)
if _COLLECTIONS not in sys.path:
    sys.path.insert(0, _COLLECTIONS)
