# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters gpu_monitoring_scrape_configs, gpu_monitoring_tenant_federation and gpu_monitoring_bcrypt, as role
gpu_monitoring calls them (vars/main.yml, tasks/tenants.yml).

Held at the filter layer (the jobs against a real Prometheus are held in module_utils/_gpu/test_monitoring.py):
the arguments as templating hands them (the port as text, no nodes, no interval), every refusal an
AnsibleFilterError that names what is wrong, a tenant name that would widen the federation's match refused, and
the password hash kept while the password is the same, whatever the web configuration read in place holds.
"""
from __future__ import annotations

import bcrypt
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucloud.baremetal.plugins.filter.gpu_monitoring import FilterModule

FILTERS = FilterModule().filters()
SCRAPE = FILTERS["gpu_monitoring_scrape_configs"]
FEDERATE = FILTERS["gpu_monitoring_tenant_federation"]
BCRYPT = FILTERS["gpu_monitoring_bcrypt"]
TENANTS = [{"name": "acme", "isolation": "private", "namespace": "tenant-acme"},
           {"name": "beta", "isolation": "shared", "namespace": "tenant-beta"}]
NODES = [{"name": "gpu1", "ip": "198.51.100.21", "isolation": "private", "tenant": "acme", "gpu": {"count": 8}},
         {"name": "gpu2", "ip": "198.51.100.22", "isolation": "shared", "gpu": {"count": 8}}]
PASSWORD = "s3cret-Password-0123456789abcdef"


def targets(jobs: list) -> dict:
    return {job["job_name"]: [t for c in job["static_configs"] for t in c["targets"]] for job in jobs}


def test_the_three_filters_are_there() -> None:
    assert set(FILTERS) == {"gpu_monitoring_scrape_configs", "gpu_monitoring_tenant_federation",
                            "gpu_monitoring_bcrypt"}


def test_scrape_jobs_with_the_default_port_and_no_interval() -> None:
    jobs = SCRAPE(NODES, TENANTS)
    assert targets(jobs) == {"dcgm-shared": ["198.51.100.22:9400"], "dcgm-private-acme": ["198.51.100.21:9400"]}
    assert not [job for job in jobs if "scrape_interval" in job]


@pytest.mark.parametrize("port", ["9500", 9500])
def test_the_port_may_come_as_text(port: object) -> None:
    """vars/main.yml passes gpu_monitoring_exporter_port, which an extra var makes text."""
    assert targets(SCRAPE(NODES, TENANTS, port))["dcgm-shared"] == ["198.51.100.22:9500"]


def test_an_interval_reaches_every_job_and_none_leaves_prometheus_default() -> None:
    assert {job["scrape_interval"] for job in SCRAPE(NODES, TENANTS, 9400, "30s")} == {"30s"}
    assert not [job for job in SCRAPE(NODES, TENANTS, 9400, None) if "scrape_interval" in job]


@pytest.mark.parametrize(("nodes", "tenants"), [(None, None), ([], []), (None, TENANTS)])
def test_no_nodes_make_no_jobs(nodes: object, tenants: object) -> None:
    assert SCRAPE(nodes, tenants) == []


@pytest.mark.parametrize(("port", "message"), [
    ("http", "invalid literal for int"), (None, "int() argument must be"), ([9400], "int() argument must be"),
    (0, "port 0: allowed 1-65535"), ("65536", "port 65536: allowed 1-65535"), (-1, "port -1: allowed 1-65535"),
    (9400.9, "the port a whole number (got list, list, 9400.9)"), (True, "the port a whole number (got list, list, True)"),
])
def test_a_port_that_is_no_port_is_a_filter_error(port: object, message: str) -> None:
    with pytest.raises(AnsibleFilterError) as err:
        SCRAPE(NODES, TENANTS, port)
    assert message in str(err.value)


@pytest.mark.parametrize(("nodes", "message"), [
    ([{"name": "gpu1", "ip": "198.51.100.21; rm -rf /"}], "node 'gpu1': address '198.51.100.21; rm -rf /' is not"),
    ([{"name": "gpu9", "ip": "198.51.100.29", "isolation": "private", "tenant": "beta"}],
     "node 'gpu9': private node of 'beta', which is not a private tenant of the fleet"),
    ([{"ip": "198.51.100.29"}], "node '': no name"),
])
def test_what_makes_no_configuration_is_a_filter_error_naming_the_node(nodes: list, message: str) -> None:
    with pytest.raises(AnsibleFilterError) as err:
        SCRAPE(nodes, TENANTS)
    assert str(err.value).startswith("gpu_monitoring (1 problem):\n  - ") and message in str(err.value)


@pytest.mark.parametrize(("nodes", "tenants", "message"), [
    (NODES, ["acme"], "tenants[0]: 'acme' is not a fleet tenant (a mapping with its name)"),
    (["gpu1"], TENANTS, "nodes[0]: 'gpu1' is not a node (a mapping with its name and address)"),
    ({"gpu1": {}}, TENANTS, "nodes and tenants are lists and the port a whole number (got dict, list, 9400)"),
])
def test_entries_that_are_no_mappings_are_a_filter_error(nodes: object, tenants: object, message: str) -> None:
    """Names where records are expected (a list of host names passed by mistake) are named, not an AttributeError."""
    with pytest.raises(AnsibleFilterError) as err:
        SCRAPE(nodes, tenants)
    assert message in str(err.value)


def test_every_problem_is_named_at_once() -> None:
    nodes = [{"name": "gpu1", "ip": "not an address!"}, {"name": "gpu2", "ip": "198.51.100.22", "isolation": "x"}]
    with pytest.raises(AnsibleFilterError) as err:
        SCRAPE(nodes, [*TENANTS, {"name": "Bad_Name"}], 0)
    assert str(err.value).splitlines() == [
        "gpu_monitoring (4 problems):", "  - port 0: allowed 1-65535",
        "  - tenant 'Bad_Name': not a fleet tenant name (lower case letters, digits, '-')",
        "  - node 'gpu1': address 'not an address!' is not an IP address or host name",
        "  - node 'gpu2': isolation 'x': allowed shared, private"]


def test_a_tenants_federation_matches_its_own_series_only() -> None:
    out = FEDERATE("acme", "127.0.0.1:9090", "30s")
    job = out["scrape_configs"][0]
    assert job["params"] == {"match[]": ['{tenant="acme"}']}
    assert job["static_configs"] == [{"targets": ["127.0.0.1:9090"]}]
    assert job["scrape_interval"] == "30s" and out["global"]["external_labels"] == {"gpucloud_view": "acme"}
    assert "scrape_interval" not in FEDERATE("acme", "127.0.0.1:9090", None)["scrape_configs"][0]


@pytest.mark.parametrize("tenant", ['acme"} or {tenant=~".*', 'acme",tenant!="', "acme|beta", "Acme", "", None])
def test_a_tenant_name_that_could_widen_the_match_is_a_filter_error(tenant: object) -> None:
    with pytest.raises(AnsibleFilterError, match="not a fleet tenant name"):
        FEDERATE(tenant, "127.0.0.1:9090")


def test_a_password_hashes_and_its_hash_stays_while_the_password_does() -> None:
    made = BCRYPT(PASSWORD)
    assert made.startswith("$2b$10$") and bcrypt.checkpw(PASSWORD.encode(), made.encode())
    assert BCRYPT(PASSWORD, made) == made
    other = BCRYPT(PASSWORD + "-changed", made)
    assert other != made and bcrypt.checkpw((PASSWORD + "-changed").encode(), other.encode())


@pytest.mark.parametrize("existing", [None, "", "not a hash", "$2b$10$short", 42, {"hash": "x"}, ["$2b$"]])
def test_whatever_the_web_configuration_holds_is_replaced_by_a_hash_of_the_password(existing: object) -> None:
    """tasks/tenants.yml reads the existing hash from web.yml in place (``from_yaml``): it may hold anything."""
    made = BCRYPT(PASSWORD, existing)
    assert made != existing and bcrypt.checkpw(PASSWORD.encode(), made.encode())


@pytest.mark.parametrize("password", ["x" * 73, "é" * 40])
def test_a_password_over_bcrypts_72_bytes_is_a_filter_error(password: str) -> None:
    """bcrypt 5 refuses a longer one with a bare ValueError (older ones cut it silently)."""
    with pytest.raises(AnsibleFilterError, match="must be at most 72 bytes"):
        BCRYPT(password)
    assert BCRYPT("x" * 72).startswith("$2b$")


@pytest.mark.parametrize("password", [None, "", "fifteen-chars!!", 1234567890123456789, ["x" * 20]])
def test_a_password_that_is_no_string_of_16_characters_is_a_filter_error(password: object) -> None:
    with pytest.raises(AnsibleFilterError, match="a tenant endpoint password must be a string of at least 16"):
        BCRYPT(password)
