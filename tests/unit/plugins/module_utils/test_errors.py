# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One error root: every domain error of every package derives from ``ProblemsError`` (``_errors.py``) and lives in
its package's ``errors.py``; the module runner catches that root and nothing else, so an error outside the tree
would escape as a traceback, and one defined elsewhere would not be found where a newcomer looks."""
from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError

ROOT = Path(__file__).resolve().parents[4]
UTILS = ROOT / "plugins" / "module_utils"
PACKAGE = "ansible_collections.gpucloud.baremetal.plugins.module_utils"
ERROR_FILES = sorted(UTILS.glob("*/errors.py"))


def test_every_package_has_its_errors_file() -> None:
    packages = sorted(p.name for p in UTILS.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert packages and [p.parent.name for p in ERROR_FILES] == packages


@pytest.mark.parametrize("path", ERROR_FILES, ids=lambda p: p.parent.name)
def test_every_error_class_derives_from_the_root(path: Path) -> None:
    module = importlib.import_module("%s.%s.errors" % (PACKAGE, path.parent.name))
    classes = [c for _n, c in inspect.getmembers(module, inspect.isclass) if c.__module__ == module.__name__]
    assert classes, path
    for cls in classes:
        where = "%s.%s" % (path.parent.name, cls.__name__)
        assert issubclass(cls, ProblemsError), "%s does not derive from ProblemsError" % where


def _exception_classes(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
            if any(b.endswith(("Error", "Exception")) for b in bases):
                names.append(node.name)
    return names


def test_no_public_error_is_defined_outside_an_errors_file() -> None:
    """Outside errors.py only private exceptions that never leave their file (a retry signal) are allowed."""
    outside = {}
    for path in sorted(UTILS.rglob("*.py")):
        if path.name in ("errors.py", "_errors.py"):
            continue
        public = [n for n in _exception_classes(ast.parse(path.read_text())) if not n.startswith("_")]
        if public:
            outside[str(path.relative_to(ROOT))] = public
    assert outside == {}


def test_the_scan_finds_an_error_class() -> None:
    """The scan above can fail: it sees a class derived from an error."""
    assert _exception_classes(ast.parse("class LeafError(FabricError):\n    pass\n")) == ["LeafError"]
