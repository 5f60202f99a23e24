# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a test finds an upstream release's files (schemas, CRDs, values): ``../shared/upstream/<project>/<tag>/``
beside the checkout, else ``tests/upstream/<project>/<tag>/`` for a release not added there yet
(tests/upstream/README.md names each one's source). Test data only; nothing at run time reads either."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "upstream"
OURS = REPO / "tests" / "upstream"


def release(project: str, tag: str) -> Path:
    """The folder of ``project``'s release ``tag``; shared's when it has one (may not exist: callers say so)."""
    shared = SHARED / project / tag
    return shared if shared.is_dir() or not (OURS / project / tag).is_dir() else OURS / project / tag
