# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the tests find the real tools they hold outputs against (promtool, amtool, prometheus)."""

from __future__ import annotations

import shutil

import pytest

# The Debian package each tool comes from (bindep.txt lists them for CI).
PACKAGES = {"promtool": "prometheus", "prometheus": "prometheus", "amtool": "prometheus-alertmanager"}


def require(name: str) -> str:
    """The path of ``name``; a stated skip where it is not installed, which is a failure in CI (tests/support/ci.py)."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (bindep.txt: Debian's {PACKAGES.get(name, name)} package)")
    return str(path)
