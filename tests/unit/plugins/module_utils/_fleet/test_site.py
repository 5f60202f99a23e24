# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``site`` section on its own (``site``, ``management``, ``os_profiles``, ``wireguard_gateway``): the lab's
site read as written, the defaults a site leaves out (known_hosts file, HTTP port, nameservers, host cluster),
the management network's rules (DHCP range, addresses in the subnet and outside the range, nameservers), an OS
profile's version and digests, an image profile's format from its image's name, and every wrong field refused
with its path and what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.checker import Checker
from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.site import (
    management,
    os_profiles,
    site,
    wireguard_gateway,
)
from tests.support import inventory_yaml

LAB = Path(__file__).resolve().parents[5] / "inventories" / "lab" / "fleet.yml"
MGMT = {"subnet": "192.0.2.0/24", "gateway": "192.0.2.1", "dhcp_range": ["192.0.2.200", "192.0.2.250"],
        "pxe_server": "192.0.2.10"}
DIGEST = "ab" * 32
PROFILE_KEYS = ("family, version, kernel, initrd, image, root_device, kernel_sha256, initrd_sha256, kind, "
                "image_sha256, image_format")


def checked(section, raw) -> tuple[dict, list[str]]:
    c = Checker()
    return section(c, raw), c.problems


def public(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if not k.startswith("_")}


def a_site(**keys) -> dict:
    raw = {"name": "fra1", "domain": "gpu.example.net", "management": dict(MGMT),
           "os_profiles": {"ubuntu": {"family": "ubuntu", "version": "24.04"}}}
    raw.update(keys)
    return raw


# --- the site as written ----------------------------------------------------------------------------------------


def test_the_labs_site_is_read_as_written() -> None:
    c = Checker()
    out = site(c, inventory_yaml.load(LAB)["site"])
    assert c.problems == []
    assert (out["name"], out["domain"], out["ssh_known_hosts"]) == (
        "lab", "lab.gpucloud.example", "/var/lib/gpucloud-lab/ssh/known_hosts")
    assert public(out["management"]) == {
        "subnet": "198.51.100.0/24", "netmask": "255.255.255.0", "prefixlen": 24,
        "gateway": "198.51.100.254", "pxe_server": "198.51.100.10",
        "dhcp_range": ["198.51.100.100", "198.51.100.199"], "pxe_server_name": "pxe", "http_port": 8080,
        "nameservers": ["198.51.100.254"]}
    assert out["os_profiles"] == {"ubuntu2404": {"name": "ubuntu2404", "family": "ubuntu", "version": "24.04"},
                                  "debian12": {"name": "debian12", "family": "debian", "version": "12"}}
    assert out["host_cluster"] == {"kubeconfig": "/var/lib/gpucloud-lab/kubeconfig", "context": "gpucloud-lab-host",
                                   "wireguard_gateway": {"name": "cp", "ip": "198.51.100.11"}}
    assert [path for _first, _last, path in c.subnets] == ["site.management.subnet"]


def test_what_a_site_leaves_out_gets_its_default() -> None:
    out, problems = checked(site, a_site(host_cluster=None))
    assert problems == []
    assert out["ssh_known_hosts"] == "~/.ansible/gpucloud/known_hosts"
    assert out["host_cluster"] == {}
    assert (out["management"]["http_port"], out["management"]["nameservers"]) == (8080, ["192.0.2.1"])
    assert "pxe_server_name" not in out["management"]  # the model names it <site>-pxe when the site is whole


@pytest.mark.parametrize(("keys", "expected"), [
    ({"name": "Fra1"}, ["site.name: 'Fra1' is not a DNS label (lowercase letters, digits, '-')"]),
    ({"name": "fra1.dc"}, ["site.name: 'fra1.dc' is not a DNS label (lowercase letters, digits, '-')"]),
    ({"domain": "GPU.example.net"}, ["site.domain: 'GPU.example.net' is not a DNS domain (lowercase)"]),
    ({"domain": "gpu..example"}, ["site.domain: 'gpu..example' is not a DNS domain (lowercase)"]),
    ({"ssh_known_hosts": "~/.ssh/"}, ["site.ssh_known_hosts: '~/.ssh/' is not a file on the controller: an absolute "
                                      "path or ~/PATH, without spaces or commas"]),
    ({"host_cluster": {"kube_config": "/etc/k.yml"}},
     ["site.host_cluster.kube_config: unknown key; allowed keys here are kubeconfig, context, wireguard_gateway"]),
    ({"host_cluster": {"context": 7}}, ["site.host_cluster.context: must be a non-empty string, got an integer"]),
    ({"host_cluster": {"wireguard_gateway": {"name": "cp"}}}, ["site.host_cluster.wireguard_gateway.ip: is required"]),
    ({"os_profile": {}}, ["site.os_profile: unknown key; allowed keys here are name, domain, management, "
                          "os_profiles, host_cluster, ssh_known_hosts"]),
])
def test_a_wrong_site_field_is_refused_with_its_path(keys: dict, expected: list) -> None:
    assert checked(site, a_site(**keys))[1] == expected


def test_a_site_that_is_not_a_mapping_names_its_keys() -> None:
    out, problems = checked(site, "fra1")
    assert problems == ["site: must be a mapping with keys name, domain, management, os_profiles, host_cluster, "
                        "ssh_known_hosts, got a string"]
    assert (out["name"], out["management"], out["os_profiles"]) == (None, {}, {})


# --- the management network ---------------------------------------------------------------------------------------


def test_the_management_network_is_read_with_its_derived_forms() -> None:
    c = Checker()
    raw = dict(MGMT, subnet="192.0.2.0/255.255.255.0", nameservers=["9.9.9.9", "192.0.2.1"], http_port=80,
               pxe_server_name="boot01")
    out = management(c, raw)
    assert c.problems == []
    assert public(out) == {"subnet": "192.0.2.0/24", "netmask": "255.255.255.0", "prefixlen": 24,
                           "gateway": "192.0.2.1", "pxe_server": "192.0.2.10",
                           "dhcp_range": ["192.0.2.200", "192.0.2.250"], "pxe_server_name": "boot01",
                           "http_port": 80, "nameservers": ["9.9.9.9", "192.0.2.1"]}
    assert c.subnets == [(0xC0000200, 0xC00002FF, "site.management.subnet")]


@pytest.mark.parametrize(("keys", "expected"), [
    ({"dhcp_range": "192.0.2.200-192.0.2.250"},
     ["site.management.dhcp_range: must be a list of two addresses [first, last]"]),
    ({"dhcp_range": ["192.0.2.200", "192.0.2.220", "192.0.2.250"]},
     ["site.management.dhcp_range: must be a list of two addresses [first, last]"]),
    ({"dhcp_range": ["192.0.2.2OO", "192.0.2.250"]},
     ["site.management.dhcp_range[0]: '192.0.2.2OO' is not a valid IPv4 address"]),
    ({"dhcp_range": ["192.0.2.200", "192.0.2.255"]},
     ["site.management.dhcp_range[1]: 192.0.2.255 is the network or broadcast address of 192.0.2.0/24"]),
    ({"gateway": "192.0.2.200"}, ["site.management.gateway: 192.0.2.200 is inside the DHCP range "
                                  "192.0.2.200-192.0.2.250"]),
    ({"pxe_server": "192.0.2.250"}, ["site.management.pxe_server: 192.0.2.250 is inside the DHCP range "
                                     "192.0.2.200-192.0.2.250"]),
    ({"pxe_server": "192.0.2.0"},
     ["site.management.pxe_server: 192.0.2.0 is the network or broadcast address of 192.0.2.0/24"]),
    ({"nameservers": ["192.0.2.1", "9.9.9.9", "1.1.1.1", "8.8.8.8"]},
     ["site.management.nameservers: must be a list of 1 to 3 IPv4 addresses"]),
    ({"nameservers": []}, ["site.management.nameservers: must be a list of 1 to 3 IPv4 addresses"]),
    ({"nameservers": "9.9.9.9"}, ["site.management.nameservers: must be a list of 1 to 3 IPv4 addresses"]),
    ({"nameservers": ["9.9.9.9", "dns.example"]},
     ["site.management.nameservers[1]: 'dns.example' is not a valid IPv4 address"]),
    ({"http_port": 0}, ["site.management.http_port: 0 is outside 1..65535"]),
    ({"http_port": "8080"}, ["site.management.http_port: must be an integer 1..65535, got a string"]),
    ({"pxe_server_name": "pxe server"}, ["site.management.pxe_server_name: 'pxe server' is not a host name"]),
    ({"subnet": "192.0.2.0/31"},
     ["site.management.subnet: '192.0.2.0/31' is too small; the prefix length must be at most /30"]),
    ({"netmask": "255.255.255.0"}, ["site.management.netmask: unknown key; allowed keys here are subnet, gateway, "
                                    "dhcp_range, pxe_server, pxe_server_name, http_port, nameservers"]),
])
def test_a_wrong_management_field_is_refused_with_its_path(keys: dict, expected: list) -> None:
    assert checked(management, dict(MGMT, **keys))[1] == expected


def test_the_range_first_after_last_is_refused_and_not_kept() -> None:
    out, problems = checked(management, dict(MGMT, dhcp_range=["192.0.2.250", "192.0.2.200"]))
    assert problems == ["site.management.dhcp_range: first address 192.0.2.250 is after last 192.0.2.200"]
    assert "dhcp_range" not in out


def test_without_a_subnet_the_addresses_are_read_but_not_placed() -> None:
    raw = {k: v for k, v in MGMT.items() if k != "subnet"}
    out, problems = checked(management, dict(raw, gateway="198.51.100.1"))
    assert problems == ["site.management.subnet: is required"]
    assert (out["gateway"], out["nameservers"], out["dhcp_range"]) == (
        "198.51.100.1", ["198.51.100.1"], ["192.0.2.200", "192.0.2.250"])


# --- OS profiles --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("raw", [None, {}, ["ubuntu"]])
def test_os_profiles_must_be_a_non_empty_mapping(raw) -> None:
    assert checked(os_profiles, raw) == (
        {}, ["site.os_profiles: must be a non-empty mapping of profile name to {family, version}"])


@pytest.mark.parametrize(("version", "expected"), [("24.04", "24.04"), ("24.10", "24.10"), (12, "12"), (9, "9")])
def test_a_version_written_as_a_string_or_a_whole_number_is_kept_as_its_text(version, expected: str) -> None:
    out, problems = checked(os_profiles, {"p": {"family": "ubuntu", "version": version}})
    assert (out["p"]["version"], problems) == (expected, [])


@pytest.mark.parametrize("text", ["24.10", "9.10", "24.04"])
def test_a_version_yaml_read_as_a_number_is_refused(text: str) -> None:
    """YAML reads an unquoted 24.10 as 24.1 (another release): the text the operator wrote is gone."""
    version = yaml.safe_load(text)
    assert isinstance(version, float)
    out, problems = checked(os_profiles, {"p": {"family": "ubuntu", "version": version}})
    assert "version" not in out["p"] and problems == [
        "site.os_profiles.p.version: %r is a number; write the release as a string (\"24.04\", \"9.4\"): YAML reads "
        "an unquoted 24.10 as 24.1" % version]


def test_an_installer_profile_keeps_its_files_and_lowercases_their_digests() -> None:
    raw = {"family": "rocky", "version": "9.4", "kernel": "https://mirror.example/vmlinuz",
           "initrd": "/srv/rocky/initrd.img", "kernel_sha256": DIGEST.upper(), "initrd_sha256": DIGEST,
           "image": "https://mirror.example/rocky/9.4/BaseOS/x86_64/os/", "root_device": {"min_size_gb": 400}}
    out, problems = checked(os_profiles, {"rocky9": raw})
    assert problems == []
    assert out == {"rocky9": dict(raw, name="rocky9", kernel_sha256=DIGEST)}  # no kind: an installer


@pytest.mark.parametrize(("profile", "expected"), [
    ({"family": "ubuntu", "version": "24.04", "kernel_sha256": "abc"},
     ["site.os_profiles.p.kernel_sha256: 'abc' is not a SHA-256 digest (64 hex digits)"]),
    ({"family": "ubuntu", "version": "24.04", "kind": "disk"},
     ["site.os_profiles.p.kind: 'disk' is not one of installer, image"]),
    ({"family": "ubuntu", "version": "24.04", "image_sha256": DIGEST},
     ["site.os_profiles.p.image_sha256: applies to kind image only (an installer profile's image is its "
      "installer's package source); set kind: image, or remove it"]),
    ({"family": "ubuntu", "version": "24.04", "kind": "image"},
     ["site.os_profiles.p.image: required for kind image: the image to write (a URL, or an absolute path on the "
      "controller)", "site.os_profiles.p.image_sha256: required for kind image: the image's SHA-256 (64 hex digits)"]),
    ({"family": "ubuntu", "version": "24.04", "kind": "image", "image": "/srv/noble.raw", "image_sha256": DIGEST,
      "kernel": "/srv/deploy/vmlinuz"},
     ["site.os_profiles.p.initrd: a deploy ramdisk of your own needs both kernel and initrd; without both, the boot "
      "server builds one"]),
    ({"family": "ubuntu", "version": "24.04", "kind": "image", "image": "https://m.example/noble.img",
      "image_sha256": DIGEST},
     ["site.os_profiles.p.image_format: required: the image's name 'noble.img' does not say its format (a name "
      "ending in .raw, .raw.gz, .raw.zst or .qcow2 does; an .img is raw or qcow2: Ubuntu's cloud images are qcow2, "
      "`qemu-img info` tells); allowed: raw, raw.gz, raw.zst, qcow2"]),
    ({"family": "ubuntu", "version": None},
     ["site.os_profiles.p.version: must be a non-empty string, got nothing (null)"]),
    ({"family": "ubuntu", "version": "24.04", "arch": "arm64"},
     ["site.os_profiles.p.arch: unknown key; allowed keys here are " + PROFILE_KEYS]),
])
def test_a_wrong_profile_field_is_refused_with_its_path_and_what_is_allowed(profile: dict, expected: list) -> None:
    assert checked(os_profiles, {"p": profile})[1] == expected


def test_a_profile_that_is_not_a_mapping_is_refused_and_left_out() -> None:
    out, problems = checked(os_profiles, {"ubuntu": "24.04", "rocky": {"family": "rocky", "version": "9"}})
    assert problems == ["site.os_profiles.ubuntu: must be a mapping with keys %s, got a string" % PROFILE_KEYS]
    assert list(out) == ["rocky"]


@pytest.mark.parametrize(("image", "fmt"), [
    ("https://mirror.example/noble.raw.zst?X-Signature=abc.qcow2", "raw.zst"),
    ("/srv/images/Rocky-9.RAW.GZ", "raw.gz"),
    ("/srv/images/debian-12.raw", "raw"),
    ("http://mirror.example/debian-12-genericcloud-amd64.qcow2", "qcow2"),
])
def test_an_image_profile_takes_its_format_from_the_images_name(image: str, fmt: str) -> None:
    out, problems = checked(os_profiles, {"img": {"family": "debian", "version": "12", "kind": "image",
                                                  "image": image, "image_sha256": DIGEST}})
    assert problems == []
    assert out["img"] == {"name": "img", "family": "debian", "version": "12", "image": image,
                          "image_sha256": DIGEST, "kind": "image", "image_format": fmt}


def test_an_image_profiles_given_format_wins_over_its_name() -> None:
    out, problems = checked(os_profiles, {"img": {"family": "debian", "version": "12", "kind": "image",
                                                  "image": "/srv/disk.qcow2", "image_sha256": DIGEST,
                                                  "image_format": "raw", "kernel": "/srv/vmlinuz",
                                                  "initrd": "/srv/initrd"}})
    assert problems == []
    assert (out["img"]["image_format"], out["img"]["kernel"], out["img"]["initrd"]) == (
        "raw", "/srv/vmlinuz", "/srv/initrd")


# --- the WireGuard gateway ----------------------------------------------------------------------------------------


def test_the_wireguard_gateway_is_a_name_and_an_address() -> None:
    assert checked(wireguard_gateway, {"name": "cp", "ip": "198.51.100.11"}) == (
        {"name": "cp", "ip": "198.51.100.11"}, [])
    out, problems = checked(wireguard_gateway, {"name": "CP_1", "ip": "198.51.100.11/24"})
    assert out == {"name": None}
    assert problems == [
        "site.host_cluster.wireguard_gateway.name: 'CP_1' is not a DNS label (lowercase letters, digits, '-')",
        "site.host_cluster.wireguard_gateway.ip: '198.51.100.11/24' is not a valid IPv4 address"]
