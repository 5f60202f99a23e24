# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric's errors are the collection's one error root, read as the module runner reports them."""

from __future__ import annotations

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.errors import (
    FabricError,
    IncompleteTenantError,
    NativeConfigError,
    NvueError,
)


def test_every_fabric_error_is_a_problems_error():
    for cls in (FabricError, IncompleteTenantError, NativeConfigError, NvueError):
        assert issubclass(cls, ProblemsError), cls


def test_problems_read_with_their_heading_and_one_failed_call_reads_alone():
    err = FabricError(["a.vlan: 0 is outside 1..4094", "b.vrf: '' is not a VRF name"])
    assert str(err).splitlines() == [
        "switch tenants are invalid (2 problems):", "  - a.vlan: 0 is outside 1..4094", "  - b.vrf: '' is not a VRF name"]
    assert str(NvueError("NVUE API x: authentication failed")) == "NVUE API x: authentication failed"
    assert str(NativeConfigError(["VLAN|Vlan5: is 'x', not a mapping"])).startswith("running_config cannot be read")


def test_an_incomplete_tenant_error_keeps_what_deleted_needs():
    err = IncompleteTenantError(["p1", "p2"], tenants=[{"name": "a"}], half=["b", "a", "b"])
    assert err.problems == ["p1", "p2"] and err.tenants == [{"name": "a"}] and err.half == ["a", "b"]
    assert IncompleteTenantError(["p"]).tenants is None
