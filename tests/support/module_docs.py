# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Kubernetes module's DOCUMENTATION held against the argument spec its main() really passes to ``run_module``
(type, elements, default, choices and required, at every level of suboptions), and its auth options against the
``k8s_auth`` fragment."""
from __future__ import annotations

from types import ModuleType

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._k8s.args import AUTH_ARG_SPEC


def argument_spec(module: ModuleType, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The spec the module's main() hands to run_module (nothing is run)."""
    taken: dict = {}
    monkeypatch.setattr(module, "run_module", lambda spec, run: taken.update(spec))
    module.main()
    return taken


def same_options(doc: dict, spec: dict, where: str = "") -> None:
    assert set(doc) == set(spec), where
    for name, opt in doc.items():
        arg = spec[name]
        for key in ("type", "elements", "default", "choices"):
            assert opt.get(key) == arg.get(key), "%s%s: %s" % (where, name, key)
        assert bool(opt.get("required")) == bool(arg.get("required")), "%s%s: required" % (where, name)
        same_options(opt.get("suboptions") or {}, arg.get("options") or {}, "%s%s." % (where, name))


def assert_k8s_module_documented(module: ModuleType, monkeypatch: pytest.MonkeyPatch, returns: set[str]) -> None:
    """DOCUMENTATION's options are the spec's (less the auth options, which come from the fragment), and RETURN
    documents exactly ``returns``."""
    doc = yaml.safe_load(module.DOCUMENTATION)
    spec = argument_spec(module, monkeypatch)
    assert "gpucloud.baremetal.k8s_auth" in doc["extends_documentation_fragment"]
    assert not set(doc["options"]) & set(AUTH_ARG_SPEC)
    assert {k: v for k, v in spec.items() if k in AUTH_ARG_SPEC} == AUTH_ARG_SPEC
    same_options(doc["options"], {k: v for k, v in spec.items() if k not in AUTH_ARG_SPEC})
    assert set(yaml.safe_load(module.RETURN)) == returns
