# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a fleet file may contain: keys, ranges, formats and defaults (data only)."""

from __future__ import annotations

import re

PLUGIN_NAME = "gpucloud.baremetal.fleet"

ISOLATIONS = ("shared", "private")
# The switch platforms and the releases of each are the fabric's: _fabric/catalog.py (data only).
SWITCH_ROLES = ("leaf", "spine")
OS_FAMILIES = ("ubuntu", "rocky", "rhel", "debian")
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

DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
HOSTNAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
DOMAIN = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
VRF_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,14}$")
RESERVED_VRFS = frozenset({"default", "mgmt", "management"})
MAC = re.compile(r"^[0-9a-fA-F]{2}([:-])[0-9a-fA-F]{2}(\1[0-9a-fA-F]{2}){4}$")
PORT_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9/._:-]*$")

TOP_KEYS = {"plugin": True, "site": True, "fabric": True, "nodes": True, "tenants": True}
# Options of Ansible's `constructed` feature, handled by the inventory plugin, not the model.
CONSTRUCTED_KEYS = ("compose", "groups", "keyed_groups", "strict", "leading_separator", "use_extra_vars")
SITE_KEYS = {
    "name": True,
    "domain": True,
    "management": True,
    "os_profiles": True,
    "host_cluster": False,
    "ssh_known_hosts": False,
}
# The known_hosts file (on the controller) that the nodes' phone-home records fill (role os_install) and that
# every SSH connection to a node is checked against; `~` is the controller user's home at connection time.
DEFAULT_SSH_KNOWN_HOSTS = "~/.ansible/gpucloud/known_hosts"
KNOWN_HOSTS_PATH = re.compile(r"^(/|~/)[^\s,]*[^\s,/]$")
MGMT_KEYS = {
    "subnet": True,
    "gateway": True,
    "dhcp_range": True,
    "pxe_server": True,
    "pxe_server_name": False,
    "http_port": False,
    "nameservers": False,
}
# The DNS servers every installed node is given (its seed's static network); the gateway when left out.
NAMESERVERS_MAX = 3  # glibc's resolver reads at most three (MAXNS)
OS_PROFILE_KEYS = {
    "family": True,
    "version": True,
    "kernel": False,
    "initrd": False,
    "image": False,
    "root_device": False,
    # The SHA-256 of the kernel and the initrd: a file on the controller is checked before it is copied, a URL is
    # fetched by the boot server, checked, and served from there (never straight from the URL to the node).
    "kernel_sha256": False,
    "initrd_sha256": False,
    # installer (default): the family's installer runs on the node with a seed; image: the deploy ramdisk
    # (kernel, initrd) writes `image` to the root disk, checked against image_sha256, in image_format.
    "kind": False,
    "image_sha256": False,
    "image_format": False,
}
OS_PROFILE_KINDS = ("installer", "image")
# What the deploy ramdisk writes (module_utils/_provision/deploy.py FORMATS), and qcow2, which the boot server
# converts to raw.zst first (role pxe_server, files/convert-image.py).
OS_IMAGE_FORMATS = ("raw", "raw.gz", "raw.zst", "qcow2")
# How an image's name ends -> its format, when the profile does not say (image_format). Not ".img": Ubuntu's cloud
# images (*-cloudimg-amd64.img), CirrOS's and Flatcar's QEMU images are qcow2 under that name, others raw.
OS_IMAGE_SUFFIXES = ((".raw.gz", "raw.gz"), (".raw.zst", "raw.zst"), (".raw", "raw"), (".qcow2", "qcow2"))
SHA256 = re.compile(r"^[0-9A-Fa-f]{64}$")
# Root device hints, as Ironic has them (a disk must match every hint given; size_gb is the size in GiB,
# rounded down, as Ironic's ``size``). Without serial/wwn/model/size_gb/by_path, the root disk is the smallest
# non-removable disk of at least min_size_gb GiB, so the data NVMe of a GPU server are never chosen. More than
# one disk or none is a failure on the node, before anything is written, naming the disks found.
ROOT_DEVICE_KEYS = {"serial": False, "wwn": False, "model": False, "size_gb": False, "by_path": False,
                    "min_size_gb": False}
ROOT_DEVICE_PATTERNS = {
    # What udev and sysfs show (ID_SERIAL_SHORT, ID_WWN, /sys/block/*/device/model, ID_PATH); nothing a shell
    # or a seed would read differently.
    "serial": (re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}$"), "a disk serial number (letters, digits, . _ : + -)"),
    "wwn": (re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{3,127}$"), "a WWN as udev shows it (e.g. 0x5000c500a1b2c3d4)"),
    "model": (re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+ -]{0,63}$"),
              "a disk model as /sys/block/<disk>/device/model shows it"),
    "by_path": (re.compile(r"^/dev/disk/by-path/[A-Za-z0-9][A-Za-z0-9:._+-]*$"), "a /dev/disk/by-path/... name"),
}
ROOT_DEVICE_SIZE_RANGE = (1, 1048576)  # GiB
DEFAULT_ROOT_MIN_SIZE_GB = 32
HOST_CLUSTER_KEYS = {"kubeconfig": False, "context": False, "wireguard_gateway": False}
# The host that terminates private tenants' WireGuard tunnels in front of their control planes.
WG_GATEWAY_KEYS = {"name": True, "ip": True}
FABRIC_KEYS = {"switches": True, "underlay": False}
UNDERLAY_KEYS = {"anycast_mac": False, "mtu": False}
SWITCH_KEYS = {
    "name": True,
    "platform": True,
    "mgmt_ip": True,
    "asn": True,
    "loopback": True,
    "role": True,
    "os_version": False,
}
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
    "root_device": False,
}
# username and password come as a pair, or neither: then one account for every node comes from the
# role (os_install_bmc_username/password, which an AWX/Tower BMC credential injects).
BMC_KEYS = {"address": True, "username": False, "password": False, "system_id": False, "validate_certs": False,
            "boot_mode": False, "boot_target": False}
# Redfish BootSourceOverrideMode (DSP2046 ComputerSystem.BootSourceOverrideMode).
BMC_BOOT_MODES = ("UEFI", "Legacy")
# How a node boots for an install (Redfish BootSourceOverrideTarget): Pxe (the firmware's PXE client, iPXE over
# TFTP), UefiHttp (UEFI HTTP boot: the firmware fetches iPXE by URL, no TFTP) or Cd (virtual media: the BMC
# inserts the node's deploy ISO from the boot server, for a site without PXE; image profiles, UEFI).
BMC_BOOT_TARGETS = ("Pxe", "UefiHttp", "Cd")
NODE_GPU_KEYS = {"model": True, "count": True, "driver": False, "nvswitch": False}
# Which GPUs sit on an NVSwitch fabric, so that the fabric manager must run (NVIDIA Fabric Manager user guide:
# HGX/DGX boards of 8 SXM GPUs - A100, H100, H200, B200 - and GB200/GB300 NVL systems, whose compute trays hold
# 4 GPUs on NVLink switch trays); 4-GPU SXM boards link their GPUs directly and have no NVSwitch. NVLink 5
# (Blackwell) fabrics also need NVIDIA's NVLink subnet manager (nvlsm) and the ib_umad module (FACTS.md). The
# fleet's gpu.nvswitch, when given, overrides the derived value.
NVSWITCH_SXM = re.compile(r"SXM", re.I)
NVSWITCH_MIN_SXM_GPUS = 8
NVL_SYSTEM_MODELS = re.compile(r"^GB[23]00\b", re.I)  # Grace-Blackwell NVL racks
NVLINK5_MODELS = re.compile(r"^G?B[23]00\b", re.I)  # Blackwell: B200, B300, GB200, GB300
# Where a node's NVIDIA driver comes from: `host` (packages installed by the role gpu_host, with
# nvidia-persistenced, the container toolkit and a CDI spec) or `operator` (the GPU Operator's
# driver and toolkit containers; the host gets no NVIDIA package). One cluster runs one mode.
GPU_DRIVER_MODES = ("host", "operator")
DEFAULT_GPU_DRIVER = "operator"
PORT_KEYS = {"switch": True, "port": True}
TENANT_KEYS = {
    "name": True,
    "isolation": True,
    "vlan": True,
    "vni": True,
    "vrf": True,
    "subnet": True,
    "gpu": True,
    "cpu": False,
    "memory": False,
    "vcluster": False,
    "wireguard": False,
}
VRF_KEYS = {"name": True, "l3vni": True}
TENANT_GPU_KEYS = {"quota": True, "limit": True, "over_quota_weight": True}
# A tenant's CPU (cores) and memory (Kubernetes quantities, e.g. 512Gi) in its KAI queue; each key optional:
# quota and limit -1 (unlimited: KAI meters GPUs, nodes bound CPU and memory) and the GPU's over_quota_weight
# when left out. A quota of 0 would refuse every non-preemptible pod that asks for CPU (KAI's quota check).
TENANT_RESOURCE_KEYS = {"quota": False, "limit": False, "over_quota_weight": False}
TENANT_RESOURCE_DEFAULTS = {"quota": -1, "limit": -1}
VCLUSTER_KEYS = {"chart_version": False, "values": False, "node_port": False}
# The tenant API's NodePort on the host cluster (vCluster Service, the Kubernetes default range); when
# not given it is NODE_PORT_BASE + the tenant's VLAN, which must then fit the range.
NODE_PORT_RANGE = (30000, 32767)
NODE_PORT_BASE = 30000
WIREGUARD_KEYS = {"subnet": True, "port": True}

DEFAULT_HTTP_PORT = 8080
DEFAULT_ANYCAST_MAC = "00:00:5e:00:01:01"
DEFAULT_MTU = 9216
