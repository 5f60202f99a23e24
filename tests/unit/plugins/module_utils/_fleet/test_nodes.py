# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``nodes`` section on its own (``nodes``): a GPU server as people write it, normalised (MAC, IP, BMC URL,
GPU defaults, switch ports, tenant and isolation); every wrong field refused with its path and what is allowed;
duplicates named with the first place that used them, among thousands of nodes. Its parts: the switch ports
(``node_ports``), the GPU entry (``node_gpu``) and which GPU models sit on an NVSwitch fabric (``nvswitch_of``),
the BMC entry (``bmc``) and which BMC and system a node's power actions reach (``bmc_identity``)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, validate_fleet
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.checker import Checker, Unique
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.nodes import (
    bmc,
    bmc_identity,
    node_gpu,
    node_ports,
    nodes,
    nvswitch_of,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.site import management
from tests.support import inventory_yaml
from tests.support.fleet_data import node
from tests.support.fleetgen import generate

LAB = Path(__file__).resolve().parents[5] / "inventories" / "lab" / "fleet.yml"
MGMT = {"subnet": "192.0.2.0/24", "gateway": "192.0.2.1", "dhcp_range": ["192.0.2.200", "192.0.2.250"],
        "pxe_server": "192.0.2.10"}
PROFILES = {"ubuntu": {"name": "ubuntu", "family": "ubuntu", "version": "24.04"}}
SWITCHES = {"leaf1": {"name": "leaf1", "role": "leaf"}, "leaf2": {"name": "leaf2", "role": "leaf"},
            "spine1": {"name": "spine1", "role": "spine"}}
TENANTS = {"acme": {"name": "acme", "isolation": "private"}, "beta": {"name": "beta", "isolation": "shared"}}
NODE_KEYS = "name, mac, ip, bmc, os, gpu, switch_ports, tenant, wireguard_ip, root_device"
BMC_ACCOUNT = ("is required with bmc.%s (or leave both out and give every node's account with "
               "os_install_bmc_username/os_install_bmc_password, e.g. from an AWX credential)")


def load(raw, tenants: dict | None = None, switches: dict | None = None) -> tuple[list[dict], list[str]]:
    """The nodes section of ``raw`` checked against the site above (its management network checked first)."""
    c = Checker()
    mgmt = management(c, dict(MGMT))
    assert c.problems == []
    out = nodes(c, raw, mgmt, PROFILES, SWITCHES if switches is None else switches,
                TENANTS if tenants is None else tenants)
    return out, c.problems


def public(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if not k.startswith("_")}


# --- a node as written ------------------------------------------------------------------------------------------


def test_a_shared_node_as_written_is_normalised() -> None:
    raw = dict(node(1), mac="52-54-00-AB-CD-EF", bmc={"address": "bmc01.example:8443", "username": "admin",
                                                      "password": "secret", "system_id": "System.Embedded.1"},
               gpu={"model": "H100-SXM5-80GB", "count": 8},
               switch_ports=[{"switch": "leaf1", "port": "swp1"}, {"switch": "leaf2", "port": "Ethernet0"}])
    (entry,), problems = load([raw])
    assert problems == []
    assert public(entry) == {
        "name": "gpu01", "mac": "52:54:00:ab:cd:ef", "ip": "192.0.2.21",
        "bmc": {"address": "bmc01.example:8443", "url": "https://bmc01.example:8443", "username": "admin",
                "password": "secret", "system_id": "System.Embedded.1"},
        "os": "ubuntu",
        "gpu": {"model": "H100-SXM5-80GB", "count": 8, "driver": "operator", "nvswitch": True, "nvlink5": False},
        "switch_ports": [{"switch": "leaf1", "port": "swp1"}, {"switch": "leaf2", "port": "Ethernet0"}],
        "tenant": None, "isolation": "shared",
    }


def test_a_private_node_keeps_its_tenant() -> None:
    (entry,), problems = load([dict(node(1, tenant="acme"), wireguard_ip="10.201.0.5")])
    assert problems == []
    assert (entry["tenant"], entry["isolation"]) == ("acme", "private")


def test_the_labs_nodes_load_in_fleet_order_with_their_tenant() -> None:
    model = load_fleet(inventory_yaml.load(LAB))
    assert [(n["name"], n["tenant"], n["isolation"], n["bmc"]["url"]) for n in model["nodes"]] == [
        ("gpu1", "acme", "private", "https://198.51.100.1:8001"),
        ("gpu2", None, "shared", "https://198.51.100.1:8002"),
        ("gpu3", None, "shared", "https://198.51.100.1:8003"),
        ("gpu4", None, "shared", "https://198.51.100.1:8004"),
    ]


# --- each wrong field, with its path and what is allowed ------------------------------------------------------


@pytest.mark.parametrize(("keys", "tenants", "expected"), [
    ({"name": "gpu 01"}, None, ["nodes[0].name: 'gpu 01' is not a host name"]),
    ({"mac": "52:54:00:00:00"}, None, ["nodes[0].mac: '52:54:00:00:00' is not a MAC address (aa:bb:cc:dd:ee:ff)"]),
    ({"mac": "52:54-00:00:00:01"}, None,
     ["nodes[0].mac: '52:54-00:00:00:01' is not a MAC address (aa:bb:cc:dd:ee:ff)"]),
    ({"mac": "03:00:5E:00:00:01"}, None,
     ["nodes[0].mac: 03:00:5e:00:00:01 is a multicast MAC; a NIC has a unicast MAC"]),
    # what a BMC lists for a port without a MAC: as the node's identity it would match another server
    ({"mac": "00:00:00:00:00:00"}, None,
     ["nodes[0].mac: 00:00:00:00:00:00 is no NIC's MAC; give the node's boot NIC's MAC"]),
    ({"ip": "192.0.2.10"}, None, ["nodes[0].ip: IP 192.0.2.10 is already used by site.management.pxe_server"]),
    ({"ip": "192.0.2.1"}, None, ["nodes[0].ip: IP 192.0.2.1 is already used by site.management.gateway"]),
    ({"ip": "192.0.2.200"}, None, ["nodes[0].ip: 192.0.2.200 is inside the DHCP range 192.0.2.200-192.0.2.250; "
                                   "node addresses are static reservations outside it"]),
    ({"ip": "192.0.2.250"}, None, ["nodes[0].ip: 192.0.2.250 is inside the DHCP range 192.0.2.200-192.0.2.250; "
                                   "node addresses are static reservations outside it"]),
    ({"ip": 3221225985}, None, ["nodes[0].ip: must be an IPv4 address string, got an integer"]),
    ({"os": "rocky9"}, None, ["nodes[0].os: unknown OS profile 'rocky9'; known profiles: ubuntu"]),
    ({"tenant": "acme"}, {}, ["nodes[0].tenant: unknown tenant 'acme'; known tenants: none"]),
    ({"tenant": "cobalt"}, None, ["nodes[0].tenant: unknown tenant 'cobalt'; known tenants: acme, beta"]),
    ({"tenant": "beta"}, None, ["nodes[0].tenant: tenant 'beta' is shared; only private tenants have dedicated "
                                "nodes (remove 'tenant' to make this a shared node)"]),
    ({"wireguard_ip": "10.201.0.5"}, None,
     ["nodes[0].wireguard_ip: is only allowed on a private node (one with 'tenant')"]),
    ({"tenant": "acme", "wireguard_ip": "10.201.0.300"}, None,
     ["nodes[0].wireguard_ip: '10.201.0.300' is not a valid IPv4 address"]),
    ({"switchports": []}, None, ["nodes[0].switchports: unknown key; allowed keys here are " + NODE_KEYS]),
    ({"gpu": {"model": "H100", "count": "8"}}, None, ["nodes[0].gpu.count: must be an integer 0..64, got a string"]),
])
def test_a_wrong_field_is_refused_with_its_path_and_what_is_allowed(keys: dict, tenants, expected: list) -> None:
    _out, problems = load([dict(node(1), **keys)], tenants=tenants)
    assert problems == expected


def test_each_missing_key_is_named() -> None:
    (entry,), problems = load([{"name": "gpu01"}])
    assert problems == ["nodes[0].%s: is required" % k for k in ("mac", "ip", "bmc", "os", "gpu", "switch_ports")]
    assert (entry["name"], entry["switch_ports"], entry["isolation"]) == ("gpu01", [], "shared")


def test_what_is_not_a_node_is_refused_and_the_others_are_kept() -> None:
    out, problems = load(["gpu01", node(2)])
    assert problems == ["nodes[0]: must be a mapping with keys %s, got a string" % NODE_KEYS]
    assert [n["name"] for n in out] == ["gpu02"]
    assert load({"gpu01": node(1)}) == ([], ["nodes: must be a list, got a mapping"])


# --- duplicates -------------------------------------------------------------------------------------------------


def test_a_duplicate_name_mac_ip_or_port_names_the_node_that_had_it_first() -> None:
    second = dict(node(2), name="gpu01", mac="52-54-00-00-00-01", ip="192.0.2.21",
                  switch_ports=[{"switch": "leaf1", "port": "swp1"}])
    out, problems = load([node(1), second])
    assert problems == [
        "nodes[1].name: node name gpu01 is already used by nodes[0].name",
        "nodes[1].mac: MAC 52:54:00:00:00:01 is already used by nodes[0].mac",
        "nodes[1].ip: IP 192.0.2.21 is already used by nodes[0].ip",
        "nodes[1].switch_ports[0]: switch port leaf1 swp1 is already used by nodes[0].switch_ports[0]",
    ]
    assert "mac" not in out[1] and out[1]["switch_ports"] == []


def test_a_multicast_mac_is_refused_on_each_node_and_claims_nothing() -> None:
    mac = "01:00:5e:00:00:01"
    _out, problems = load([dict(node(1), mac=mac), dict(node(2), mac=mac)])
    assert problems == ["nodes[%d].mac: %s is a multicast MAC; a NIC has a unicast MAC" % (i, mac) for i in (0, 1)]


def test_among_two_thousand_nodes_one_copied_mac_is_the_one_problem() -> None:
    data = generate(nodes=2000, tenants=10, switches=10)
    assert validate_fleet(data) == []
    data["nodes"][-1]["mac"] = data["nodes"][0]["mac"].replace(":", "-")
    assert validate_fleet(data) == ["nodes[1999].mac: MAC 02:00:00:00:00:00 is already used by nodes[0].mac"]
    model = load_fleet(generate(nodes=2000, tenants=10, switches=10))
    assert len({n["mac"] for n in model["nodes"]}) == len({n["ip"] for n in model["nodes"]}) == 2000


# --- switch ports -------------------------------------------------------------------------------------------------


def ports(raw, switches: dict | None = None) -> tuple[list[dict], list[str]]:
    c = Checker()
    out = node_ports(c, {"switch_ports": raw}, "nodes[0]", SWITCHES if switches is None else switches,
                     Unique(c, "switch port"))
    return out, c.problems


def test_ports_on_leaves_are_kept_in_the_order_given() -> None:
    raw = [{"switch": "leaf2", "port": "Ethernet8"}, {"switch": "leaf1", "port": "swp1s0"}]
    assert ports(raw) == (raw, [])
    c = Checker()
    assert node_ports(c, {}, "nodes[0]", SWITCHES, Unique(c, "switch port")) == []
    assert c.problems == []


@pytest.mark.parametrize(("raw", "switches", "expected", "kept"), [
    ([{"switch": "leaf9", "port": "swp1"}], {},
     ["nodes[0].switch_ports[0].switch: unknown switch 'leaf9'; known switches: none"], 0),
    ([{"switch": "spine1", "port": "Ethernet1"}], None,
     ["nodes[0].switch_ports[0].switch: 'spine1' is a spine; nodes attach to leaf switches"], 0),
    ([{"switch": "leaf1", "port": "swp 1"}], None,
     ["nodes[0].switch_ports[0].port: 'swp 1' is not a port name (e.g. swp1, Ethernet0)"], 0),
    ([{"switch": "leaf1", "port": "1"}], None,
     ["nodes[0].switch_ports[0].port: '1' is not a port name (e.g. swp1, Ethernet0)"], 0),
    ([{"switch": "leaf1"}], None, ["nodes[0].switch_ports[0].port: is required"], 0),
    ([{"switch": "leaf1", "port": "swp1"}, {"switch": "leaf1", "port": "swp1"}], None,
     ["nodes[0].switch_ports[1]: switch port leaf1 swp1 is already used by nodes[0].switch_ports[0]"], 1),
    ({"switch": "leaf1", "port": "swp1"}, None, ["nodes[0].switch_ports: must be a list, got a mapping"], 0),
    (["leaf1:swp1"], None, ["nodes[0].switch_ports[0]: must be a mapping with keys switch, port, got a string"], 0),
])
def test_a_wrong_port_is_refused_and_not_kept(raw, switches, expected: list, kept: int) -> None:
    out, problems = ports(raw, switches)
    assert problems == expected
    assert out == [{"switch": "leaf1", "port": "swp1"}] * kept


# --- GPUs ---------------------------------------------------------------------------------------------------------


def test_a_gpu_entry_gets_the_operators_driver_and_its_derived_fabric() -> None:
    c = Checker()
    assert node_gpu(c, {"model": "L40S", "count": 4}, "nodes[0].gpu") == {
        "model": "L40S", "count": 4, "driver": "operator", "nvswitch": False, "nvlink5": False}
    assert node_gpu(c, {"model": "GB200", "count": 4, "driver": None}, "nodes[0].gpu") == {
        "model": "GB200", "count": 4, "driver": "operator", "nvswitch": True, "nvlink5": True}
    assert node_gpu(c, {"model": "B200", "count": 8, "driver": "host", "nvswitch": False}, "nodes[0].gpu") == {
        "model": "B200", "count": 8, "driver": "host", "nvswitch": False, "nvlink5": False}
    assert c.problems == []


def test_a_gpu_entry_that_is_not_a_mapping_is_refused_with_no_gpus() -> None:
    c = Checker()
    assert node_gpu(c, "8x H100", "nodes[0].gpu") == {
        "model": None, "count": None, "driver": "operator", "nvswitch": False, "nvlink5": False}
    assert c.problems == ["nodes[0].gpu: must be a mapping with keys model, count, driver, nvswitch, got a string"]


@pytest.mark.parametrize(("model", "count", "expected"), [
    (None, 8, False),
    ("H100-SXM5-80GB", None, False),
    ("H100-SXM5-80GB", 0, False),
    ("h100-sxm5-80gb", 8, True),   # the model as nvidia-smi may spell it
    ("H100-SXM5-80GB", 16, True),
    ("B200", 7, False),
    ("B300", 8, True),
    ("GB200", 1, True),            # an NVL rack's tray: on NVLink switch trays whatever its GPU count
    ("gb300-nvl72", 4, True),
    ("GB2000", 8, False),          # not a Grace-Blackwell name
    ("H100-PCIe-80GB", 8, False),
])
def test_which_gpus_sit_on_an_nvswitch_fabric(model, count, expected: bool) -> None:
    assert nvswitch_of(model, count) is expected


# --- BMC --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("address", "url"), [
    ("192.0.2.121", "https://192.0.2.121"),
    ("bmc01.example:8443", "https://bmc01.example:8443"),
    ("http://192.0.2.121:8000/", "http://192.0.2.121:8000"),
    ("https://bmc01.example/redfish/v1/", "https://bmc01.example/redfish/v1"),
])
def test_a_bmc_address_becomes_its_url(address: str, url: str) -> None:
    c = Checker()
    assert bmc(c, {"address": address}, "nodes[0].bmc") == {"address": address, "url": url}
    assert c.problems == []


@pytest.mark.parametrize("address", ["bmc 01", "ftp://bmc01.example", "https://", "bmc01.example;reboot"])
def test_what_is_not_a_bmc_address_is_refused_naming_the_forms(address: str) -> None:
    c = Checker()
    bmc(c, {"address": address}, "nodes[0].bmc")
    assert c.problems == ["nodes[0].bmc.address: %r is not a BMC address (host, host:port or http(s)://host[:port])"
                          % address]


@pytest.mark.parametrize("address", ["https://admin:Hunter2-bmc@bmc01.example", "admin:Hunter2-bmc@192.0.2.121",
                                     "http://Hunter2-bmc@bmc01.example:8000/redfish/v1"])
def test_a_bmc_address_with_credentials_is_refused_without_printing_them(address: str) -> None:
    """A password in the address would be printed with every message that names the BMC."""
    c = Checker()
    bmc(c, {"address": address}, "nodes[0].bmc")
    assert c.problems == ["nodes[0].bmc.address: holds a user name or password (user@host); give the BMC's address"
                          " only and the credentials as bmc.username and bmc.password"]
    assert "Hunter2" not in " ".join(c.problems)


def test_the_bmc_account_comes_as_a_pair() -> None:
    for given, missing in (("username", "password"), ("password", "username")):
        c = Checker()
        bmc(c, {"address": "bmc01", given: "x"}, "nodes[0].bmc")
        assert c.problems == ["nodes[0].bmc.%s: %s" % (missing, BMC_ACCOUNT % given)]


def test_the_bmc_options_are_kept_or_refused_naming_the_field() -> None:
    c = Checker()
    raw = {"address": "bmc01", "username": "admin", "password": "pw", "system_id": "Node1", "validate_certs": False,
           "boot_mode": "UEFI", "boot_target": "UefiHttp"}
    assert bmc(c, raw, "nodes[0].bmc") == dict(raw, url="https://bmc01")
    assert c.problems == []
    c = Checker()
    out = bmc(c, {"address": "bmc01", "validate_certs": "no", "extra": 1}, "nodes[0].bmc")
    assert "validate_certs" not in out
    assert c.problems == [
        "nodes[0].bmc.extra: unknown key; allowed keys here are address, username, password, system_id, "
        "validate_certs, boot_mode, boot_target",
        "nodes[0].bmc.validate_certs: must be true or false",
    ]


@pytest.mark.parametrize("system_id", ["System 1", "../Managers/1", "1?x", "@bmc02"])
def test_a_system_id_that_would_change_the_bmc_url_is_refused(system_id: str) -> None:
    """It is appended to /redfish/v1/Systems/: a space made every request fail, '@' or '..' another URL."""
    c = Checker()
    bmc(c, {"address": "bmc01", "system_id": system_id}, "nodes[0].bmc")
    assert c.problems == ["nodes[0].bmc.system_id: %r is not a Redfish system id (letters, digits, . _ ~ -, as in "
                          "/redfish/v1/Systems/<id>)" % system_id]


@pytest.mark.parametrize(("entry", "identity"), [
    ({"url": "https://BMC01.Example"}, ("https://bmc01.example:443", "")),
    ({"url": "http://bmc01.example"}, ("http://bmc01.example:80", "")),
    ({"url": "https://bmc01.example:8443/redfish/v1", "system_id": "Node1"},
     ("https://bmc01.example:8443/redfish/v1", "Node1")),
    ({"url": "bmc01.example"}, None),
    ({}, None),
])
def test_a_bmcs_identity_makes_the_port_explicit_and_keeps_the_system(entry: dict, identity) -> None:
    assert bmc_identity(entry) == identity


def test_two_spellings_of_one_bmc_have_one_identity() -> None:
    c = Checker()
    spellings = ["BMC01.example", "https://bmc01.example:443/", "bmc01.example:443"]
    assert {bmc_identity(bmc(c, {"address": a}, "nodes[0].bmc")) for a in spellings} == {
        ("https://bmc01.example:443", "")}
    assert c.problems == []


def test_nodes_sharing_a_bmc_are_told_apart_only_by_system_id() -> None:
    raw = [dict(node(i), bmc={"address": "192.0.2.121", "username": "a", "password": "p"}) for i in (1, 2)]
    _out, problems = load(copy.deepcopy(raw))
    assert problems == [
        "nodes[1].bmc.address: BMC https://192.0.2.121:443 is already nodes[0] (gpu01)'s: a power cycle or boot "
        "override of one node would act on the other; give each node its own BMC, or each system of a multi-node "
        "chassis its system_id"]
    for i, n in enumerate(raw):
        n["bmc"]["system_id"] = "Node%d" % i
    assert load(raw)[1] == []
