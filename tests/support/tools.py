# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the tests find the real tools they hold outputs against (promtool, amtool, prometheus, ansible-rulebook
and the Java it runs on)."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

# Where each tool comes from (bindep.txt lists the Debian packages for CI, tests/requirements.txt the Python ones).
SOURCES = {
    "promtool": "bindep.txt: Debian's prometheus package",
    "prometheus": "bindep.txt: Debian's prometheus package",
    "amtool": "bindep.txt: Debian's prometheus-alertmanager package",
    "java": "bindep.txt: Debian's openjdk-17-jre-headless package, which ansible-rulebook runs on",
    "ansible-rulebook": "tests/requirements.txt",
}


def require(name: str) -> str:
    """The path of ``name`` (the test environment's own bin folder first, then PATH, then /usr/sbin); a stated skip where it is not
    installed, which is a failure in CI (tests/support/ci.py)."""
    path = (shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
            or shutil.which(name, path="/usr/sbin:/sbin"))  # losetup, mke2fs, sfdisk off a non-root PATH
    if path is None:
        pytest.skip(f"{name} is not installed ({SOURCES.get(name, 'see bindep.txt')})")
    return str(path)
