# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet model: parse, validate and derive, in one place.

Private to the collection (leading underscore). Used by the inventory plugin, the
modules and the tests, so that there is exactly one definition of a valid fleet.

``load_fleet(data)`` returns a normalised model (plain dicts and lists) or raises
``FleetError`` listing every problem found, each prefixed with its path, e.g.
``tenants[2].vlan: 4095 is outside 1..4094``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

try:
    import netaddr

    HAS_NETADDR = True
    NETADDR_IMPORT_ERROR = None
except ImportError as exc:  # pragma: no cover - exercised only without netaddr
    HAS_NETADDR = False
    NETADDR_IMPORT_ERROR = exc

PLUGIN_NAME = "gpucloud.baremetal.fleet"

ISOLATIONS = ("shared", "private")
PLATFORMS = ("nvue", "sonic", "eos")
SWITCH_ROLES = ("leaf", "spine")
OS_FAMILIES = ("ubuntu", "rocky", "rhel")
VLAN_RANGE = (1, 4094)
VNI_RANGE = (1, 16777214)
ASN_RANGE = (1, 4294967295)
PORT_RANGE = (1, 65535)
GPU_COUNT_RANGE = (0, 64)
UNLIMITED = -1

# Objects derived from a tenant name, with the length limit of each. The longest
# allowed tenant name is the one for which every derived name still fits.
TENANT_DERIVED_NAMES = {
    "namespace": ("tenant-{}", 63),  # Kubernetes namespace (DNS-1123 label)
    "vcluster_release": ("{}", 53),  # Helm release name limit
    "vcluster_secret": ("vc-{}", 63),  # kubeconfig secret the vCluster chart writes
    "queue": ("tenant-{}", 63),  # KAI leaf queue
}
TENANT_NAME_MAX = min(limit - len(fmt.format("")) for fmt, limit in TENANT_DERIVED_NAMES.values())
PARENT_QUEUE = "gpucloud"

_DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_HOSTNAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DOMAIN = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_VRF_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,14}$")
_RESERVED_VRFS = frozenset({"default", "mgmt", "management"})
_MAC = re.compile(r"^[0-9a-fA-F]{2}([:-])[0-9a-fA-F]{2}(\1[0-9a-fA-F]{2}){4}$")
_PORT_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9/._:-]*$")

TOP_KEYS = {"plugin": True, "site": True, "fabric": True, "nodes": True, "tenants": True}
# Options of Ansible's `constructed` feature, handled by the inventory plugin, not the model.
CONSTRUCTED_KEYS = ("compose", "groups", "keyed_groups", "strict", "leading_separator", "use_extra_vars")
SITE_KEYS = {"name": True, "domain": True, "management": True, "os_profiles": True, "host_cluster": False}
MGMT_KEYS = {
    "subnet": True,
    "gateway": True,
    "dhcp_range": True,
    "pxe_server": True,
    "pxe_server_name": False,
    "http_port": False,
}
OS_PROFILE_KEYS = {"family": True, "version": True, "kernel": False, "initrd": False, "image": False}
HOST_CLUSTER_KEYS = {"kubeconfig": False, "context": False}
FABRIC_KEYS = {"switches": True, "underlay": False}
UNDERLAY_KEYS = {"anycast_mac": False, "mtu": False}
SWITCH_KEYS = {"name": True, "platform": True, "mgmt_ip": True, "asn": True, "loopback": True, "role": True}
NODE_KEYS = {
    "name": True,
    "mac": True,
    "ip": True,
    "bmc": True,
    "os": True,
    "gpu": True,
    "switch_ports": True,
    "tenant": False,
    "wireguard_ip": False,
}
BMC_KEYS = {"address": True, "username": True, "password": True, "system_id": False, "validate_certs": False}
NODE_GPU_KEYS = {"model": True, "count": True}
PORT_KEYS = {"switch": True, "port": True}
TENANT_KEYS = {
    "name": True,
    "isolation": True,
    "vlan": True,
    "vni": True,
    "vrf": True,
    "subnet": True,
    "gpu": True,
    "vcluster": False,
    "wireguard": False,
}
VRF_KEYS = {"name": True, "l3vni": True}
TENANT_GPU_KEYS = {"quota": True, "limit": True, "over_quota_weight": True}
VCLUSTER_KEYS = {"chart_version": False, "values": False}
WIREGUARD_KEYS = {"subnet": True, "port": True}

DEFAULT_HTTP_PORT = 8080
DEFAULT_ANYCAST_MAC = "00:00:5e:00:01:01"
DEFAULT_MTU = 9216


class ProblemsError(Exception):
    """Invalid input. ``problems`` lists every problem, each with its path."""

    HEAD = "input is invalid"

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__(self.__str__())

    def __str__(self) -> str:
        count = len(self.problems)
        head = "%s (%d problem%s):" % (self.HEAD, count, "" if count == 1 else "s")
        return "\n".join([head] + ["  - " + p for p in self.problems])


class FleetError(ProblemsError):
    """The fleet is invalid."""

    HEAD = "fleet is invalid"


def is_vault_value(value: Any) -> bool:
    """True for a vault-encrypted scalar (``!vault``), whatever ansible-core version loaded it."""
    return type(value).__name__ in ("EncryptedString", "AnsibleVaultEncryptedUnicode")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _plain(value: Any) -> Any:
    """Drop loader tags (ansible-core 2.19 tags strings with their origin)."""
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, str):
        return str(value)
    return value


def normalise_mac(mac: str) -> str:
    return mac.replace("-", ":").lower()


class _Checker:
    """Collects problems; each check returns the cleaned value or None when invalid."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append("%s: %s" % (path, message))

    # --- structure -----------------------------------------------------------------
    def mapping(self, value: Any, path: str, keys: dict[str, bool]) -> dict | None:
        if not isinstance(value, dict):
            self.add(path, "must be a mapping with keys %s, got %s" % (", ".join(keys), _type_name(value)))
            return None
        for key in value:
            if key not in keys:
                self.add(
                    "%s.%s" % (path, key) if path else str(key),
                    "unknown key; allowed keys here are %s" % ", ".join(keys),
                )
        for key, required in keys.items():
            if required and key not in value:
                self.add("%s.%s" % (path, key) if path else key, "is required")
        return value

    def sequence(self, value: Any, path: str, allow_empty: bool = True) -> list:
        if not isinstance(value, list):
            self.add(path, "must be a list, got %s" % _type_name(value))
            return []
        if not allow_empty and not value:
            self.add(path, "must not be empty")
        return value

    # --- scalars -------------------------------------------------------------------
    def string(self, value: Any, path: str, pattern: re.Pattern | None = None, what: str = "") -> str | None:
        if not isinstance(value, str) or not value:
            self.add(path, "must be a non-empty string, got %s" % _type_name(value))
            return None
        if pattern is not None and not pattern.match(value):
            self.add(path, "%r is not %s" % (str(value), what))
            return None
        return str(value)

    def secret(self, value: Any, path: str) -> Any:
        if is_vault_value(value):
            return value
        if not isinstance(value, str) or not value:
            self.add(path, "must be a non-empty string or a vault-encrypted value (!vault), got %s" % _type_name(value))
            return None
        return value

    def integer(self, value: Any, path: str, bounds: tuple[int, int], extra: Iterable[int] = ()) -> int | None:
        extra = tuple(extra)
        allowed = "%d..%d" % bounds + "".join(" or %d" % e for e in extra)
        if not _is_int(value):
            self.add(path, "must be an integer %s, got %s" % (allowed, _type_name(value)))
            return None
        if value in extra:
            return int(value)
        if not bounds[0] <= value <= bounds[1]:
            self.add(path, "%d is outside %s" % (value, allowed))
            return None
        return int(value)

    def choice(self, value: Any, path: str, choices: Iterable[str]) -> str | None:
        choices = tuple(choices)
        if value not in choices:
            self.add(path, "%r is not one of %s" % (_plain(value), ", ".join(choices)))
            return None
        return str(value)

    def ip(self, value: Any, path: str) -> int | None:
        """An IPv4 address; returns it as an integer."""
        if not isinstance(value, str):
            self.add(path, "must be an IPv4 address string, got %s" % _type_name(value))
            return None
        try:
            return int(netaddr.IPAddress(value, version=4, flags=netaddr.INET_PTON))
        except (netaddr.AddrFormatError, ValueError, TypeError):
            self.add(path, "%r is not a valid IPv4 address" % str(value))
            return None

    def network(self, value: Any, path: str, max_prefix: int = 30) -> netaddr.IPNetwork | None:
        if not isinstance(value, str) or "/" not in value:
            self.add(path, "must be an IPv4 subnet in CIDR form (a.b.c.d/len), got %r" % _plain(value))
            return None
        try:
            net = netaddr.IPNetwork(value, version=4)
        except (netaddr.AddrFormatError, ValueError, TypeError):
            self.add(path, "%r is not a valid IPv4 subnet" % str(value))
            return None
        if net.ip != net.network:
            self.add(path, "%r has host bits set; did you mean %s?" % (str(value), net.cidr))
            return None
        if net.prefixlen > max_prefix:
            self.add(path, "%r is too small; the prefix length must be at most /%d" % (str(value), max_prefix))
            return None
        return net


def _type_name(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


class _Unique:
    """Remembers which path first used a value, to report duplicates with both places."""

    def __init__(self, checker: _Checker, what: str) -> None:
        self.checker = checker
        self.what = what
        self.seen: dict[Any, str] = {}

    def claim(self, value: Any, path: str, shown: Any = None) -> bool:
        if value is None:
            return True
        first = self.seen.get(value)
        if first is not None:
            self.checker.add(
                path, "%s %s is already used by %s" % (self.what, shown if shown is not None else value, first)
            )
            return False
        self.seen[value] = path
        return True


def _ip_str(value: int) -> str:
    return str(netaddr.IPAddress(value, 4))


def _label(path: str, item: Any) -> str:
    name = item.get("name") if isinstance(item, dict) else None
    return "%s (%s)" % (path, name) if isinstance(name, str) else path


class _FleetLoader:
    def __init__(self, data: Any) -> None:
        self.c = _Checker()
        self.data = data
        self.subnets: list[tuple[int, int, str]] = []  # (first, last, path) for the overlap check

    # --- site ----------------------------------------------------------------------
    def site(self, raw: Any) -> dict:
        c = self.c
        site = c.mapping(raw, "site", SITE_KEYS) or {}
        out: dict[str, Any] = {
            "name": c.string(site.get("name"), "site.name", _DNS_LABEL, "a DNS label (lowercase letters, digits, '-')")
            if "name" in site
            else None,
            "domain": c.string(site.get("domain"), "site.domain", _DOMAIN, "a DNS domain (lowercase)")
            if "domain" in site
            else None,
        }
        out["management"] = self.management(site.get("management")) if "management" in site else {}
        out["os_profiles"] = self.os_profiles(site.get("os_profiles")) if "os_profiles" in site else {}
        host_cluster = site.get("host_cluster")
        out["host_cluster"] = {}
        if host_cluster is not None:
            hc = c.mapping(host_cluster, "site.host_cluster", HOST_CLUSTER_KEYS) or {}
            for key in HOST_CLUSTER_KEYS:
                if key in hc:
                    out["host_cluster"][key] = c.string(hc[key], "site.host_cluster." + key)
        return out

    def management(self, raw: Any) -> dict:
        c = self.c
        path = "site.management"
        mgmt = c.mapping(raw, path, MGMT_KEYS) or {}
        out: dict[str, Any] = {}
        net = c.network(mgmt.get("subnet"), path + ".subnet") if "subnet" in mgmt else None
        out["_net"] = net
        if net is not None:
            out["subnet"] = str(net.cidr)
            out["netmask"] = str(net.netmask)
            out["prefixlen"] = net.prefixlen
            self.subnets.append((net.first, net.last, path + ".subnet"))
        for key in ("gateway", "pxe_server"):
            if key in mgmt:
                value = c.ip(mgmt[key], "%s.%s" % (path, key))
                out["_" + key] = value
                if value is not None:
                    out[key] = _ip_str(value)
                    self._in_subnet(value, net, "%s.%s" % (path, key), "the management subnet")
        rng = mgmt.get("dhcp_range")
        out["_dhcp"] = None
        if "dhcp_range" in mgmt:
            if not isinstance(rng, list) or len(rng) != 2:
                c.add(path + ".dhcp_range", "must be a list of two addresses [first, last]")
            else:
                first = c.ip(rng[0], path + ".dhcp_range[0]")
                last = c.ip(rng[1], path + ".dhcp_range[1]")
                if first is not None and last is not None:
                    if first > last:
                        c.add(
                            path + ".dhcp_range", "first address %s is after last %s" % (_ip_str(first), _ip_str(last))
                        )
                    else:
                        self._in_subnet(first, net, path + ".dhcp_range[0]", "the management subnet")
                        self._in_subnet(last, net, path + ".dhcp_range[1]", "the management subnet")
                        out["_dhcp"] = (first, last)
                        out["dhcp_range"] = [_ip_str(first), _ip_str(last)]
        for key in ("gateway", "pxe_server"):
            value = out.get("_" + key)
            if value is not None and out["_dhcp"] and out["_dhcp"][0] <= value <= out["_dhcp"][1]:
                c.add("%s.%s" % (path, key), "%s is inside the DHCP range %s-%s" % (_ip_str(value), *out["dhcp_range"]))
        if "pxe_server_name" in mgmt:
            out["pxe_server_name"] = c.string(
                mgmt["pxe_server_name"], path + ".pxe_server_name", _HOSTNAME, "a host name"
            )
        out["http_port"] = (
            c.integer(mgmt["http_port"], path + ".http_port", PORT_RANGE) if "http_port" in mgmt else DEFAULT_HTTP_PORT
        )
        return out

    def _in_subnet(self, value: int, net: Any, path: str, what: str) -> bool:
        if net is None:
            return True
        if not net.first <= value <= net.last:
            self.c.add(path, "%s is outside %s %s" % (_ip_str(value), what, net.cidr))
            return False
        if net.prefixlen < 31 and value in (net.first, net.last):
            self.c.add(path, "%s is the network or broadcast address of %s" % (_ip_str(value), net.cidr))
            return False
        return True

    def os_profiles(self, raw: Any) -> dict:
        c = self.c
        out: dict[str, dict] = {}
        if not isinstance(raw, dict) or not raw:
            c.add("site.os_profiles", "must be a non-empty mapping of profile name to {family, version}")
            return out
        for name, prof in raw.items():
            path = "site.os_profiles.%s" % name
            p = c.mapping(prof, path, OS_PROFILE_KEYS)
            if p is None:
                continue
            entry: dict[str, Any] = {"name": str(name)}
            if "family" in p:
                entry["family"] = c.choice(p["family"], path + ".family", OS_FAMILIES)
            if "version" in p:
                version = p["version"]
                if _is_int(version) or isinstance(version, float):
                    version = str(version)
                entry["version"] = c.string(version, path + ".version")
            for key in ("kernel", "initrd", "image"):
                if key in p:
                    entry[key] = c.string(p[key], "%s.%s" % (path, key))
            out[str(name)] = entry
        return out

    # --- fabric --------------------------------------------------------------------
    def fabric(self, raw: Any) -> dict:
        c = self.c
        fab = c.mapping(raw, "fabric", FABRIC_KEYS) or {}
        underlay = fab.get("underlay") or {}
        u = c.mapping(underlay, "fabric.underlay", UNDERLAY_KEYS) or {}
        out_underlay = {"anycast_mac": DEFAULT_ANYCAST_MAC, "mtu": DEFAULT_MTU}
        if "anycast_mac" in u:
            mac = c.string(u["anycast_mac"], "fabric.underlay.anycast_mac", _MAC, "a MAC address (aa:bb:cc:dd:ee:ff)")
            if mac:
                out_underlay["anycast_mac"] = normalise_mac(mac)
        if "mtu" in u:
            out_underlay["mtu"] = c.integer(u["mtu"], "fabric.underlay.mtu", (1280, 9216))
        switches = []
        names = _Unique(c, "switch name")
        mgmt_ips = _Unique(c, "management address")
        loopbacks = _Unique(c, "loopback")
        for i, sw in enumerate(c.sequence(fab.get("switches"), "fabric.switches") if "switches" in fab else []):
            path = "fabric.switches[%d]" % i
            s = c.mapping(sw, path, SWITCH_KEYS)
            if s is None:
                continue
            entry: dict[str, Any] = {"_path": path}
            if "name" in s:
                entry["name"] = c.string(s["name"], path + ".name", _HOSTNAME, "a host name")
                names.claim(entry["name"], path + ".name")
            if "platform" in s:
                entry["platform"] = c.choice(s["platform"], path + ".platform", PLATFORMS)
            if "role" in s:
                entry["role"] = c.choice(s["role"], path + ".role", SWITCH_ROLES)
            if "asn" in s:
                entry["asn"] = c.integer(s["asn"], path + ".asn", ASN_RANGE)
            for key, uniq in (("mgmt_ip", mgmt_ips), ("loopback", loopbacks)):
                if key in s:
                    value = c.ip(s[key], "%s.%s" % (path, key))
                    if value is not None:
                        entry[key] = _ip_str(value)
                        uniq.claim(value, "%s.%s" % (path, key), entry[key])
            switches.append(entry)
        return {"switches": switches, "underlay": out_underlay}

    # --- tenants -------------------------------------------------------------------
    def tenants(self, raw: Any) -> list[dict]:
        c = self.c
        out = []
        names = _Unique(c, "tenant name")
        vlans = _Unique(c, "VLAN")
        vnis = _Unique(c, "L2 VNI")
        l3vnis = _Unique(c, "L3 VNI")
        vrfs = _Unique(c, "VRF name")
        for i, t in enumerate(c.sequence(raw, "tenants")):
            path = "tenants[%d]" % i
            m = c.mapping(t, path, TENANT_KEYS)
            if m is None:
                continue
            entry: dict[str, Any] = {"_path": path}
            if "name" in m:
                entry["name"] = self.tenant_name(m["name"], path + ".name")
                names.claim(entry["name"], path + ".name")
            if "isolation" in m:
                entry["isolation"] = c.choice(m["isolation"], path + ".isolation", ISOLATIONS)
            if "vlan" in m:
                entry["vlan"] = c.integer(m["vlan"], path + ".vlan", VLAN_RANGE)
                vlans.claim(entry["vlan"], path + ".vlan")
            if "vni" in m:
                entry["vni"] = c.integer(m["vni"], path + ".vni", VNI_RANGE)
                vnis.claim(entry["vni"], path + ".vni")
            if "vrf" in m:
                vrf = c.mapping(m["vrf"], path + ".vrf", VRF_KEYS) or {}
                if "name" in vrf:
                    vname = c.string(
                        vrf["name"],
                        path + ".vrf.name",
                        _VRF_NAME,
                        "a VRF name (a letter, then letters, digits, '_' or '-', 15 characters at most)",
                    )
                    if vname and vname.lower() in _RESERVED_VRFS:
                        c.add(path + ".vrf.name", "%r is reserved by the switch OS; pick another name" % vname)
                        vname = None
                    entry["vrf"] = vname
                    vrfs.claim(vname, path + ".vrf.name")
                if "l3vni" in vrf:
                    entry["l3vni"] = c.integer(vrf["l3vni"], path + ".vrf.l3vni", VNI_RANGE)
                    l3vnis.claim(entry["l3vni"], path + ".vrf.l3vni")
            if "subnet" in m:
                net = c.network(m["subnet"], path + ".subnet")
                if net is not None:
                    entry["_net"] = net
                    entry["subnet"] = str(net.cidr)
                    entry["gateway"] = str(netaddr.IPAddress(net.first + 1, 4))
                    entry["gateway_cidr"] = "%s/%d" % (entry["gateway"], net.prefixlen)
                    self.subnets.append((net.first, net.last, path + ".subnet"))
            if "gpu" in m:
                entry["gpu"] = self.tenant_gpu(m["gpu"], path + ".gpu")
            entry["vcluster"] = self.vcluster(m.get("vcluster"), path + ".vcluster")
            entry["wireguard"] = self.wireguard(m, entry, path)
            out.append(entry)
        # An L2 VNI may not equal any L3 VNI (one VNI namespace on the VTEP).
        for t in out:
            l2 = t.get("vni")
            if l2 is not None and l2 in l3vnis.seen:
                c.add(
                    "%s.vni" % t["_path"],
                    "L2 VNI %d equals the L3 VNI of %s; L2 and L3 VNIs must differ"
                    % (l2, l3vnis.seen[l2].rsplit(".vrf", 1)[0]),
                )
        return out

    def tenant_name(self, value: Any, path: str) -> str | None:
        c = self.c
        name = c.string(
            value, path, _DNS_LABEL, "a DNS-1123 label starting with a letter (lowercase letters, digits and '-')"
        )
        if name is not None and len(name) > TENANT_NAME_MAX:
            c.add(
                path,
                "%r is %d characters; at most %d are allowed so that the derived names (%s) fit"
                % (
                    name,
                    len(name),
                    TENANT_NAME_MAX,
                    ", ".join("%s %s" % (k, fmt.format(name)) for k, (fmt, _l) in TENANT_DERIVED_NAMES.items()),
                ),
            )
            return None
        return name

    def tenant_gpu(self, raw: Any, path: str) -> dict:
        c = self.c
        g = c.mapping(raw, path, TENANT_GPU_KEYS) or {}
        out: dict[str, Any] = {}
        if "quota" in g:
            out["quota"] = c.integer(g["quota"], path + ".quota", (0, 1000000))
        if "limit" in g:
            out["limit"] = c.integer(g["limit"], path + ".limit", (0, 1000000), extra=(UNLIMITED,))
        if "over_quota_weight" in g:
            out["over_quota_weight"] = c.integer(g["over_quota_weight"], path + ".over_quota_weight", (0, 1000000))
        quota, limit = out.get("quota"), out.get("limit")
        if quota is not None and limit is not None and limit != UNLIMITED and quota > limit:
            c.add(
                path + ".quota",
                "quota %d is above the limit %d; the limit must be at least the quota (or -1 for none)"
                % (quota, limit),
            )
        return out

    def vcluster(self, raw: Any, path: str) -> dict:
        c = self.c
        if raw is None:
            return {}
        v = c.mapping(raw, path, VCLUSTER_KEYS) or {}
        out: dict[str, Any] = {}
        if "chart_version" in v:
            out["chart_version"] = c.string(v["chart_version"], path + ".chart_version")
        if "values" in v:
            if isinstance(v["values"], dict):
                out["values"] = v["values"]
            else:
                c.add(path + ".values", "must be a mapping of vCluster chart values, got %s" % _type_name(v["values"]))
        return out

    def wireguard(self, raw_tenant: dict, entry: dict, path: str) -> dict:
        c = self.c
        raw = raw_tenant.get("wireguard")
        isolation = entry.get("isolation")
        if raw is None:
            if isolation == "private":
                c.add(path + ".wireguard", "is required for a private tenant ({subnet, port})")
            return {}
        if isolation == "shared":
            c.add(path + ".wireguard", "is only allowed for private tenants (shared tenants have no private nodes)")
            return {}
        w = c.mapping(raw, path + ".wireguard", WIREGUARD_KEYS) or {}
        out: dict[str, Any] = {}
        if "subnet" in w:
            net = c.network(w["subnet"], path + ".wireguard.subnet")
            if net is not None:
                out["_net"] = net
                out["subnet"] = str(net.cidr)
                out["hub_ip"] = str(netaddr.IPAddress(net.first + 1, 4))
                self.subnets.append((net.first, net.last, path + ".wireguard.subnet"))
        if "port" in w:
            out["port"] = c.integer(w["port"], path + ".wireguard.port", PORT_RANGE)
        return out

    # --- nodes ---------------------------------------------------------------------
    def nodes(self, raw: Any, mgmt: dict, profiles: dict, switches: dict, tenants: dict) -> list[dict]:
        c = self.c
        out = []
        names = _Unique(c, "node name")
        macs = _Unique(c, "MAC")
        ips = _Unique(c, "IP")
        ports = _Unique(c, "switch port")
        net, dhcp = mgmt.get("_net"), mgmt.get("_dhcp")
        for key in ("gateway", "pxe_server"):
            if mgmt.get("_" + key) is not None:
                ips.claim(mgmt["_" + key], "site.management." + key, mgmt[key])
        for i, n in enumerate(c.sequence(raw, "nodes")):
            path = "nodes[%d]" % i
            m = c.mapping(n, path, NODE_KEYS)
            if m is None:
                continue
            entry: dict[str, Any] = {"_path": path}
            if "name" in m:
                entry["name"] = c.string(m["name"], path + ".name", _HOSTNAME, "a host name")
                names.claim(entry["name"], path + ".name")
            if "mac" in m:
                mac = c.string(m["mac"], path + ".mac", _MAC, "a MAC address (aa:bb:cc:dd:ee:ff)")
                if mac:
                    mac = normalise_mac(mac)
                    if int(mac[:2], 16) & 1:
                        c.add(path + ".mac", "%s is a multicast MAC; a NIC has a unicast MAC" % mac)
                    elif macs.claim(mac, path + ".mac"):
                        entry["mac"] = mac
            if "ip" in m:
                value = c.ip(m["ip"], path + ".ip")
                if value is not None:
                    entry["_ip"] = value
                    entry["ip"] = _ip_str(value)
                    in_subnet = self._in_subnet(value, net, path + ".ip", "the management subnet")
                    if in_subnet and dhcp and dhcp[0] <= value <= dhcp[1]:
                        c.add(
                            path + ".ip",
                            "%s is inside the DHCP range %s-%s; node addresses are static "
                            "reservations outside it" % (entry["ip"], *mgmt["dhcp_range"]),
                        )
                    ips.claim(value, path + ".ip", entry["ip"])
            if "bmc" in m:
                entry["bmc"] = self.bmc(m["bmc"], path + ".bmc")
            if "os" in m:
                os_name = c.string(m["os"], path + ".os")
                if os_name is not None and profiles and os_name not in profiles:
                    c.add(
                        path + ".os",
                        "unknown OS profile %r; known profiles: %s" % (os_name, ", ".join(sorted(profiles))),
                    )
                entry["os"] = os_name
            if "gpu" in m:
                g = c.mapping(m["gpu"], path + ".gpu", NODE_GPU_KEYS) or {}
                entry["gpu"] = {
                    "model": c.string(g.get("model"), path + ".gpu.model") if "model" in g else None,
                    "count": c.integer(g.get("count"), path + ".gpu.count", GPU_COUNT_RANGE) if "count" in g else None,
                }
            entry["switch_ports"] = self.node_ports(m, path, switches, ports)
            entry["tenant"] = None
            if m.get("tenant") is not None:
                tname = c.string(m["tenant"], path + ".tenant")
                tenant = tenants.get(tname) if tname else None
                if tname and tenant is None:
                    c.add(
                        path + ".tenant",
                        "unknown tenant %r; known tenants: %s" % (tname, ", ".join(sorted(tenants)) or "none"),
                    )
                elif tenant is not None and tenant.get("isolation") == "shared":
                    c.add(
                        path + ".tenant",
                        "tenant %r is shared; only private tenants have dedicated nodes "
                        "(remove 'tenant' to make this a shared node)" % tname,
                    )
                elif tenant is not None:
                    entry["tenant"] = tname
            entry["isolation"] = "private" if m.get("tenant") is not None else "shared"
            if m.get("wireguard_ip") is not None:
                value = c.ip(m["wireguard_ip"], path + ".wireguard_ip")
                if m.get("tenant") is None:
                    c.add(path + ".wireguard_ip", "is only allowed on a private node (one with 'tenant')")
                elif value is not None:
                    entry["_wg_explicit"] = value
            out.append(entry)
        return out

    def bmc(self, raw: Any, path: str) -> dict:
        c = self.c
        b = c.mapping(raw, path, BMC_KEYS) or {}
        out: dict[str, Any] = {}
        if "address" in b:
            addr = c.string(b["address"], path + ".address")
            if addr:
                out["address"] = addr
                out["url"] = addr.rstrip("/") if "://" in addr else "https://" + addr
                if not re.match(r"^https?://[A-Za-z0-9.\-\[\]:]+(/.*)?$", out["url"]):
                    c.add(
                        path + ".address", "%r is not a BMC address (host, host:port or http(s)://host[:port])" % addr
                    )
        if "username" in b:
            out["username"] = c.string(b["username"], path + ".username")
        if "password" in b:
            out["password"] = c.secret(b["password"], path + ".password")
        if "system_id" in b:
            out["system_id"] = c.string(b["system_id"], path + ".system_id")
        if "validate_certs" in b:
            if not isinstance(b["validate_certs"], bool):
                c.add(path + ".validate_certs", "must be true or false")
            else:
                out["validate_certs"] = bool(b["validate_certs"])
        return out

    def node_ports(self, m: dict, path: str, switches: dict, ports: _Unique) -> list[dict]:
        c = self.c
        out = []
        if "switch_ports" not in m:
            return out
        for j, p in enumerate(c.sequence(m["switch_ports"], path + ".switch_ports")):
            ppath = "%s.switch_ports[%d]" % (path, j)
            pm = c.mapping(p, ppath, PORT_KEYS)
            if pm is None:
                continue
            sname = c.string(pm.get("switch"), ppath + ".switch") if "switch" in pm else None
            port = (
                c.string(pm.get("port"), ppath + ".port", _PORT_NAME, "a port name (e.g. swp1, Ethernet0)")
                if "port" in pm
                else None
            )
            if sname is not None and sname not in switches:
                c.add(
                    ppath + ".switch",
                    "unknown switch %r; known switches: %s" % (sname, ", ".join(sorted(switches)) or "none"),
                )
                continue
            if sname is not None and switches[sname].get("role") == "spine":
                c.add(ppath + ".switch", "%r is a spine; nodes attach to leaf switches" % sname)
                continue
            if sname is None or port is None:
                continue
            if ports.claim((sname, port), ppath, "%s %s" % (sname, port)):
                out.append({"switch": sname, "port": port})
        return out

    # --- cross-object rules --------------------------------------------------------
    def check_overlaps(self) -> None:
        ordered = sorted(self.subnets)
        widest: tuple[int, int, str] | None = None
        for current in ordered:
            if widest is not None and current[0] <= widest[1]:
                self.c.add(
                    current[2],
                    "%s overlaps %s (%s); management, tenant and WireGuard subnets must be disjoint"
                    % (_cidr(current), widest[2], _cidr(widest)),
                )
            if widest is None or current[1] > widest[1]:
                widest = current

    def check_capacity(self, nodes: list[dict], tenants: list[dict]) -> None:
        per_tenant: dict[str, int] = {}
        shared_gpus = 0
        for n in nodes:
            count = (n.get("gpu") or {}).get("count") or 0
            if n.get("tenant"):
                per_tenant[n["tenant"]] = per_tenant.get(n["tenant"], 0) + count
            elif n.get("isolation") == "shared":
                shared_gpus += count
        shared_quota = 0
        shared_names = []
        for t in tenants:
            quota = (t.get("gpu") or {}).get("quota")
            if quota is None or t.get("name") is None:
                continue
            if t.get("isolation") == "private":
                own = per_tenant.get(t["name"], 0)
                if quota > own:
                    self.c.add(
                        t["_path"] + ".gpu.quota",
                        "quota %d exceeds the %d GPUs of the own nodes of tenant %r" % (quota, own, t["name"]),
                    )
            elif t.get("isolation") == "shared":
                shared_quota += quota
                shared_names.append(t["name"])
        if shared_quota > shared_gpus:
            self.c.add(
                "tenants",
                "the quotas of the shared tenants (%s) add up to %d GPUs, more than the %d GPUs of the "
                "shared nodes (nodes without a tenant)" % (", ".join(shared_names), shared_quota, shared_gpus),
            )

    def assign_wireguard(self, nodes: list[dict], tenants: dict, mgmt: dict) -> None:
        """Give each private node its WireGuard address.

        Explicit ``wireguard_ip`` wins. Otherwise the node keeps the host offset it has in the
        management subnet (192.0.2.21 -> 10.99.0.21 in 10.99.0.0/24), so adding or removing a
        node never moves another node's address.
        """
        c = self.c
        mnet = mgmt.get("_net")
        used: dict[tuple[str, int], str] = {}
        pending = []
        for n in nodes:
            tenant = tenants.get(n.get("tenant") or "")
            wg = (tenant or {}).get("wireguard") or {}
            net = wg.get("_net")
            if net is None:
                continue
            hub = net.first + 1
            explicit = n.pop("_wg_explicit", None)
            if explicit is not None:
                path = n["_path"] + ".wireguard_ip"
                if self._in_subnet(explicit, net, path, "the WireGuard subnet of tenant %r" % tenant["name"]):
                    if explicit == hub:
                        c.add(path, "%s is the tenant's WireGuard hub address" % _ip_str(explicit))
                    else:
                        self._claim_wg(used, tenant["name"], explicit, path, n)
                continue
            pending.append((n, tenant, net, hub))
        for n, tenant, net, hub in pending:
            path = n["_path"] + ".wireguard_ip"
            if mnet is None or n.get("_ip") is None:
                continue
            offset = n["_ip"] - mnet.first
            value = net.first + offset
            if value >= net.last or value == hub:
                c.add(
                    path,
                    "cannot be derived: host offset %d of %s does not fit the WireGuard subnet of tenant %r (%s) "
                    "(clashes with the hub or outside it); set wireguard_ip"
                    % (offset, n["ip"], tenant["name"], net.cidr),
                )
                continue
            self._claim_wg(used, tenant["name"], value, path, n)

    def _claim_wg(self, used: dict, tenant: str, value: int, path: str, node: dict) -> None:
        key = (tenant, value)
        if key in used:
            self.c.add(path, "WireGuard address %s is already used by %s" % (_ip_str(value), used[key]))
            return
        used[key] = path
        node["wireguard_ip"] = _ip_str(value)

    # --- entry point ---------------------------------------------------------------
    def load(self) -> dict:
        c = self.c
        if not isinstance(self.data, dict):
            c.add(
                "(top level)",
                "a fleet file is a mapping with keys %s, got %s" % (", ".join(TOP_KEYS), _type_name(self.data)),
            )
            raise FleetError(c.problems)
        data = c.mapping(self.data, "", dict(TOP_KEYS, **dict.fromkeys(CONSTRUCTED_KEYS, False)))
        if data.get("plugin") not in (PLUGIN_NAME, None):
            c.add("plugin", "must be %s, got %r" % (PLUGIN_NAME, _plain(data.get("plugin"))))
        site = self.site(data.get("site")) if "site" in data else {"management": {}, "os_profiles": {}}
        fabric = self.fabric(data.get("fabric")) if "fabric" in data else {"switches": [], "underlay": {}}
        tenants = self.tenants(data.get("tenants")) if "tenants" in data else []
        switch_by_name = {s["name"]: s for s in fabric["switches"] if s.get("name")}
        tenant_by_name = {t["name"]: t for t in tenants if t.get("name")}
        nodes = (
            self.nodes(data.get("nodes"), site["management"], site["os_profiles"], switch_by_name, tenant_by_name)
            if "nodes" in data
            else []
        )
        self.check_overlaps()
        self.check_capacity(nodes, tenants)
        self.assign_wireguard(nodes, tenant_by_name, site["management"])
        if c.problems:
            raise FleetError(c.problems)
        return _finish(site, fabric, nodes, tenants)


def _cidr(item: tuple[int, int, str]) -> str:
    return str(netaddr.IPRange(item[0], item[1]).cidrs()[0])


def _strip_private(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_private(v) for k, v in value.items() if not str(k).startswith("_")}
    if isinstance(value, list):
        return [_strip_private(v) for v in value]
    return value


def _finish(site: dict, fabric: dict, nodes: list[dict], tenants: list[dict]) -> dict:
    """Add derived values and drop the loader's private keys."""
    site["management"].setdefault("pxe_server_name", "%s-pxe" % site["name"])
    by_tenant: dict[str, list[str]] = {}
    for n in nodes:
        n["os_profile"] = site["os_profiles"][n["os"]]
        if n.get("tenant"):
            by_tenant.setdefault(n["tenant"], []).append(n["name"])
    for t in tenants:
        for key, (fmt, _limit) in TENANT_DERIVED_NAMES.items():
            t[key] = fmt.format(t["name"])
        t["group"] = group_name("tenant_", t["name"])
        t["prefixlen"] = t["_net"].prefixlen
        t["nodes"] = by_tenant.get(t["name"], [])
    model = {
        "site": site,
        "fabric": fabric,
        "nodes": nodes,
        "tenants": tenants,
    }
    model = _strip_private(model)
    derive_switch_tenants(model)
    return model


def derive_switch_tenants(model: dict) -> None:
    """Per leaf switch: which tenants it carries, on which ports, tagged or not.

    A private tenant's VLAN is the untagged (access) VLAN of its own nodes' ports. Shared
    nodes carry every shared tenant's VLAN tagged. A leaf carries a tenant's VLAN, SVI
    (anycast gateway), VRF and VNIs exactly when one of its ports does.

    Cost stays linear in nodes + tenants x switches: all shared tenants of a switch refer to
    one list of that switch's trunk ports (``trunk_ports``) instead of a copy each.
    """
    tenants = {t["name"]: t for t in model["tenants"]}
    shared = [t["name"] for t in sorted(model["tenants"], key=lambda t: t["vlan"]) if t["isolation"] == "shared"]
    access: dict[str, dict[str, list[dict]]] = {s["name"]: {} for s in model["fabric"]["switches"]}
    trunks: dict[str, list[dict]] = {s["name"]: [] for s in model["fabric"]["switches"]}
    for n in model["nodes"]:
        for sp in n["switch_ports"]:
            if n["tenant"]:
                access[sp["switch"]].setdefault(n["tenant"], []).append(
                    {"port": sp["port"], "node": n["name"], "mode": "access"}
                )
            else:
                trunks[sp["switch"]].append({"port": sp["port"], "node": n["name"], "mode": "trunk"})
    for s in model["fabric"]["switches"]:
        trunk_ports = sorted(trunks[s["name"]], key=lambda p: _port_key(p["port"]))
        carried = {name: sorted(ports, key=lambda p: _port_key(p["port"])) for name, ports in access[s["name"]].items()}
        if trunk_ports:
            carried.update((name, trunk_ports) for name in shared)
        s["trunk_ports"] = trunk_ports
        s["tenants"] = [_switch_tenant(tenants[name], ports) for name, ports in carried.items()]
        s["tenants"].sort(key=lambda t: t["vlan"])


def _switch_tenant(tenant: dict, ports: list[dict]) -> dict:
    return {
        "name": tenant["name"],
        "isolation": tenant["isolation"],
        "vlan": tenant["vlan"],
        "vni": tenant["vni"],
        "vrf": tenant["vrf"],
        "l3vni": tenant["l3vni"],
        "subnet": tenant["subnet"],
        "gateway": tenant["gateway_cidr"],
        "trunk": tenant["isolation"] == "shared",
        "ports": ports,
    }


def compact_switch(switch: dict) -> dict:
    """The switch as hostvars carry it: tenant details are not repeated per switch.

    A leaf carries every shared tenant on the same trunk ports, so per-switch copies of
    the tenants would make hostvars grow with tenants x switches. The compact form keeps
    ``access_ports`` (private tenant -> its ports), ``trunk_ports`` and ``shared_tenants``
    (whether the leaf carries the shared tenants); ``expand_switch`` rebuilds ``tenants``
    from it and the fleet's tenant list.
    """
    out = {k: v for k, v in switch.items() if k != "tenants"}
    out["access_ports"] = {t["name"]: t["ports"] for t in switch.get("tenants", []) if not t.get("trunk")}
    out["shared_tenants"] = bool(switch.get("trunk_ports"))
    return out


def expand_switch(switch: dict, tenants: list[dict]) -> dict:
    """Rebuild a compact switch's ``tenants`` (see ``compact_switch``); a full one is returned as is."""
    if "tenants" in switch:
        return switch
    out = {k: v for k, v in switch.items() if k not in ("access_ports", "shared_tenants")}
    access = switch.get("access_ports") or {}
    trunk_ports = switch.get("trunk_ports") or []
    carried = [
        _switch_tenant(t, access[t["name"]]) if t["name"] in access else _switch_tenant(t, trunk_ports)
        for t in tenants
        if t["name"] in access or (t["isolation"] == "shared" and switch.get("shared_tenants"))
    ]
    out["tenants"] = sorted(carried, key=lambda t: t["vlan"])
    return out


def _port_key(port: str) -> tuple:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", port))


def group_name(prefix: str, name: str) -> str:
    """Ansible group names may not contain '-'."""
    return prefix + re.sub(r"[^A-Za-z0-9_]", "_", name)


def load_fleet(data: Any) -> dict:
    """Validate ``data`` (the parsed fleet file) and return the normalised model."""
    if not HAS_NETADDR:
        raise FleetError(
            [
                "the Python library netaddr is required on the controller: pip install netaddr (%s)"
                % NETADDR_IMPORT_ERROR
            ]
        )
    return _FleetLoader(data).load()


def validate_fleet(data: Any) -> list[str]:
    """Every problem of ``data``; an empty list when it is valid."""
    try:
        load_fleet(data)
    except FleetError as exc:
        return exc.problems
    return []


def tenant_by_name(model: dict, name: str) -> dict:
    for t in model["tenants"]:
        if t["name"] == name:
            return t
    raise FleetError(
        [
            "tenant: unknown tenant %r; known tenants: %s"
            % (name, ", ".join(t["name"] for t in model["tenants"]) or "none")
        ]
    )


__all__ = [
    "FleetError",
    "ProblemsError",
    "compact_switch",
    "derive_switch_tenants",
    "expand_switch",
    "group_name",
    "is_vault_value",
    "load_fleet",
    "tenant_by_name",
    "validate_fleet",
]
