# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tenant view (``tenant_by_name``): one tenant of a loaded fleet with the names derived from it, and an
unknown name refused as a ``FleetError`` naming the tenants there are (or none)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import FleetError, load_fleet, tenant_by_name
from tests.support import inventory_yaml
from tests.support.fleetgen import generate

LAB = Path(__file__).resolve().parents[6] / "inventories" / "lab" / "fleet.yml"


def test_a_labs_tenant_comes_with_its_derived_names_and_nodes() -> None:
    model = load_fleet(inventory_yaml.load(LAB))
    acme = tenant_by_name(model, "acme")
    assert (acme["name"], acme["namespace"], acme["queue"], acme["vcluster_release"], acme["vcluster_secret"],
            acme["group"], acme["nodes"], acme["wireguard"]["interface"]) == (
        "acme", "tenant-acme", "tenant-acme", "acme", "vc-acme", "tenant_acme", ["gpu1"], "wg-acme")
    beta = tenant_by_name(model, "beta")
    assert (beta["name"], beta["isolation"], beta["nodes"], beta["cpu"]["quota"]) == ("beta", "shared", [], 4)


def test_the_last_of_a_thousand_tenants_is_found() -> None:
    model = load_fleet(generate(nodes=1000, tenants=1000, switches=10))
    assert tenant_by_name(model, "t0999")["vlan"] == 1099
    assert tenant_by_name(model, "t0000")["vlan"] == 100
    assert tenant_by_name(model, "t0199")["nodes"] == ["gpu00199"]  # the last private tenant


@pytest.mark.parametrize("name", ["Acme", "acme ", "cobalt", ""])
def test_an_unknown_tenant_is_refused_naming_the_known_ones(name: str) -> None:
    model = load_fleet(inventory_yaml.load(LAB))
    with pytest.raises(FleetError) as err:
        tenant_by_name(model, name)
    assert err.value.problems == ["tenant: unknown tenant %r; known tenants: acme, beta" % name]
    assert str(err.value) == "fleet is invalid (1 problem):\n  - tenant: unknown tenant %r; known tenants: acme, " \
                             "beta" % name


def test_a_fleet_without_tenants_says_so() -> None:
    with pytest.raises(FleetError) as err:
        tenant_by_name({"tenants": []}, "acme")
    assert err.value.problems == ["tenant: unknown tenant 'acme'; known tenants: none"]
