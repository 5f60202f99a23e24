# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab network: a bridge inside a lab namespace, one namespace per host.

The machine's own network is never touched: the bridge lives in its own
namespace, which has no route anywhere and does not forward; the only link
into the root namespace is one veth carrying an address of the lab subnet.
"""
from __future__ import annotations

import ipaddress
from pathlib import Path

from gpucloud_lab.core import config
from gpucloud_lab.core.components import Row
from gpucloud_lab.core.config import Host
from gpucloud_lab.core.util import run, say


def netns_exists(name: str) -> bool:
    return Path("/run/netns", name).exists()


def link_exists(name: str, netns: str | None = None) -> bool:
    return run(_ip(netns, "link", "show", name), check=False).returncode == 0


def _ip(netns: str | None, *args: str) -> list[str]:
    return ["ip", *(["-n", netns] if netns else []), *args]


def ensure_netns(name: str) -> None:
    if not netns_exists(name):
        run(["ip", "netns", "add", name])
    run(_ip(name, "link", "set", "lo", "up"))


def subnet_taken() -> str | None:
    """A root-namespace interface other than ours that already uses the lab subnet."""
    out = run(["ip", "-o", "-4", "addr", "show"]).stdout
    for line in out.splitlines():
        fields = line.split()
        if fields[1] != config.ROOT_VETH and ipaddress.ip_interface(fields[3]).ip in config.SUBNET:
            return fields[1]
    return None


def ensure_lab_network() -> None:
    """Lab namespace with the bridge, and the controller's veth into it."""
    taken = subnet_taken()
    if taken:
        raise SystemExit(f"gpucloud-lab: {config.SUBNET} is already used by {taken}; "
                         "the lab will not touch the machine's own network")
    ns = config.LAB_NETNS
    ensure_netns(ns)
    run(["ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=0", "net.ipv6.conf.all.forwarding=0"])
    if not link_exists(config.BRIDGE, ns):
        run(_ip(ns, "link", "add", config.BRIDGE, "type", "bridge", "stp_state", "0", "forward_delay", "0"))
        run(_ip(ns, "addr", "add", f"{config.GATEWAY_IP}/{config.PREFIX_LEN}", "dev", config.BRIDGE))
    run(_ip(ns, "link", "set", config.BRIDGE, "up"))
    if not link_exists(config.ROOT_VETH):
        run(["ip", "link", "add", config.ROOT_VETH, "type", "veth", "peer", "name", config.ROOT_VETH_PEER, "netns", ns])
        run(["ip", "addr", "add", f"{config.CONTROLLER_IP}/{config.PREFIX_LEN}", "dev", config.ROOT_VETH])
        run(_ip(ns, "link", "set", config.ROOT_VETH_PEER, "master", config.BRIDGE, "up"))
    run(["ip", "link", "set", config.ROOT_VETH, "up"])


def ensure_host_network(host: Host) -> None:
    """The host's namespace: eth0 on the lab bridge, its address, a default route to the (dead-end) gateway."""
    ensure_netns(host.netns)
    if not link_exists("eth0", host.netns):
        run(["ip", "link", "del", host.bridge_port, "netns", config.LAB_NETNS], check=False)
        run(_ip(config.LAB_NETNS, "link", "add", host.bridge_port, "type", "veth", "peer", "name", "eth0",
                "netns", host.netns))
        run(_ip(config.LAB_NETNS, "link", "set", host.bridge_port, "master", config.BRIDGE, "up"))
        run(_ip(host.netns, "link", "set", "eth0", "address", host.mac))
        run(_ip(host.netns, "addr", "add", f"{host.ip}/{config.PREFIX_LEN}", "dev", "eth0"))
    run(_ip(host.netns, "link", "set", "eth0", "up"))
    run(_ip(host.netns, "route", "replace", "default", "via", config.GATEWAY_IP))


def remove_netns(name: str) -> None:
    if netns_exists(name):
        run(["ip", "netns", "del", name])


def remove_lab_network() -> None:
    """Deleting the namespaces deletes their veths and the bridge; the root veth goes with its peer."""
    for host in config.HOSTS:
        remove_netns(host.netns)
    for path in sorted(Path("/run/netns").glob("gcl-*")):  # e.g. a switch no longer in the fleet file
        if path.name != config.LAB_NETNS:
            remove_netns(path.name)
    remove_netns(config.LAB_NETNS)
    if link_exists(config.ROOT_VETH):
        run(["ip", "link", "del", config.ROOT_VETH])


class Network:
    """The lab component: the lab namespace with its bridge and the controller's veth."""

    def up(self) -> None:
        say("lab network: namespace, bridge, controller veth")
        ensure_lab_network()

    def down(self) -> None:
        remove_lab_network()

    def rows(self) -> list[Row]:
        state = "up" if netns_exists(config.LAB_NETNS) and link_exists(config.ROOT_VETH) else "down"
        return [Row("network", state, str(config.SUBNET),
                    f"bridge {config.BRIDGE} in netns {config.LAB_NETNS}; controller {config.CONTROLLER_IP}")]
