# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`gpucloud-lab up|down|status|prepare|boot-target`."""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from gpucloud_lab.core import components, config
from gpucloud_lab.core.util import say
from gpucloud_lab.infra import (
    boottarget,
    charts,
    host_cluster,
    hosts,
    kube,
    net,
    pkg_mirror,
    redfish,
    registry,
    rootfs,
    tools,
)
from gpucloud_lab.sim import controller, nvue_switch_sim

# The lab's components in start order; `down` stops them in reverse.
ALL: list[components.Component] = [
    net.Network(), hosts.Hosts(), redfish.Redfish(), nvue_switch_sim.Switches(), host_cluster.Kubernetes(),
    pkg_mirror.PackageMirror(), registry.SiteRegistry(), charts.ChartRepo(), controller.LabController(),
    boottarget.BootTarget(),
]


@contextmanager
def lab_lock() -> Iterator[None]:
    """One `up` or `down` at a time."""
    config.RUN_DIR.mkdir(parents=True, exist_ok=True)
    with open(config.RUN_DIR / "lock", "w", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def leftovers() -> list[str]:
    """State a lab left behind without `down` (the machine rebooted or was copied while a lab ran, a killed
    run): hosts' disks, switches' applied configs, the host cluster's etcd, the registration known_hosts."""
    if net.netns_exists(config.LAB_NETNS):
        return []  # a running lab: `up` continues it
    return sorted(str(p) for p in components.state_paths() if p != config.RUN_DIR and p.exists() and any(p.iterdir()))


def cmd_up(_args: argparse.Namespace) -> int:
    start = time.monotonic()
    with lab_lock():
        stale = leftovers()
        if stale:
            # A host booted on an old overlay would answer with old host keys and old files (a phone-home
            # record, a join) that no run of this lab made: start from nothing, as `down` leaves it.
            say(f"state of a lab that was not stopped ({', '.join(stale)}): removing it first")
            for component in reversed(ALL):
                component.down()
            components.cleanup()
        for component in ALL:
            component.up()
    say(f"lab is up ({time.monotonic() - start:.1f}s)")
    print(components.status_table(ALL), flush=True)
    return 0


def _fetch_the_rest() -> None:
    """What `prepare` needs besides the Kubernetes build: mostly downloads and unpacking (debootstrap, a wheel, a
    venv), which wait on the network and the disk while the compiler keeps the CPUs busy."""
    rootfs.ensure_base()
    tools.ensure_tools()
    redfish.ensure_venv()
    pkg_mirror.ensure_debian()


def cmd_prepare(_args: argparse.Namespace) -> int:
    """Build and cache what `up` needs (base root filesystem, Kubernetes binaries, helm/kubectl, the BMC
    emulator), starting nothing: tools/test.sh runs it in the background while the lab-free tests run. The
    Kubernetes build (compiling, minutes) and the rest (fetching, about a minute and a half) run side by side."""
    start = time.monotonic()
    with lab_lock(), ThreadPoolExecutor(max_workers=1) as pool:
        rest = pool.submit(_fetch_the_rest)
        try:
            kube.ensure_binaries()
        finally:
            rest.result()  # waits, and raises what failed there
    say(f"lab is prepared ({time.monotonic() - start:.1f}s): `up` builds nothing more")
    return 0


def cmd_down(_args: argparse.Namespace) -> int:
    with lab_lock():
        for component in reversed(ALL):
            component.down()
        components.cleanup()
    say("lab is down")
    return 0


def cmd_status(_args: argparse.Namespace) -> int:
    print(components.status_table(ALL))
    return 0 if components.all_running(ALL) else 3


def cmd_boot_target(args: argparse.Namespace) -> int:
    with lab_lock():
        if args.power == "on":
            boottarget.power_on()
        else:
            boottarget.power_off()
    print(f"boot target: {boottarget.state()} (serial log {boottarget.SERIAL_LOG})")
    return 0


def cmd_reimage(args: argparse.Namespace) -> int:
    host = next((h for h in config.HOSTS if h.name == args.host), None)
    if host is None:
        print(f"gpucloud-lab reimage: {args.host!r} is not a lab host ({', '.join(h.name for h in config.HOSTS)})")
        return 2
    with lab_lock():
        hosts.reimage(host)
    print(f"{host.name}: booted from the base image (a fresh OS install: no kubeadm, no kubelet, new host keys)")
    return 0


FAULT_KEYS = {"xid": "an Xid in the kernel log (repeatable: xid=79 xid=48)", "missing": "GPUs gone from the host",
              "nccl_busbw": "NCCL all-reduce bus bandwidth, GB/s", "h2d": "host->device copy GB/s of GPU 0",
              "d2h": "device->host copy GB/s of GPU 0", "d2d": "GPU 0 -> others copy GB/s",
              "dcgm_fail": "a DCGM diag test that fails on GPU 0 (software, pcie, memory, diagnostic...)"}


def cmd_fault(args: argparse.Namespace) -> int:
    """Inject GPU faults into a lab host's simulated GPUs and tools (SIMULATION: the lab has no GPU)."""
    host = next((h for h in config.GPU_NODES if h.name == args.node), None)
    if host is None:
        print(f"gpucloud-lab fault: {args.node!r} is not a lab GPU host "
              f"({', '.join(h.name for h in config.GPU_NODES)})")
        return 2
    path = hosts.root_dir(host) / "etc/gpucloud-lab/gpu-faults.json"
    faults = {} if "clear" in args.faults or not path.exists() else json.loads(path.read_text())
    for item in args.faults:
        if item == "clear":
            continue
        key, _sep, value = item.partition("=")
        if key not in FAULT_KEYS or not value:
            print(f"gpucloud-lab fault: {item!r}: allowed: clear, " + ", ".join(
                f"{k}=VALUE ({what})" for k, what in FAULT_KEYS.items()))
            return 2
        try:
            if key == "xid":
                faults.setdefault("xid", []).append(int(value))
            elif key == "dcgm_fail":
                faults[key] = value
            else:
                faults[key] = int(value) if key == "missing" else float(value)
        except ValueError:
            kind = "a whole number" if key in ("xid", "missing") else "a number"
            print(f"gpucloud-lab fault: {item!r}: {key} takes {kind} ({FAULT_KEYS[key]}), not {value!r}")
            return 2
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(faults, sort_keys=True) + "\n")
    print(f"{host.name}: simulated GPU faults {faults or 'none'}")
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="gpucloud-lab", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)
    sub.add_parser("up", help="start the lab (builds and caches what is missing)").set_defaults(func=cmd_up)
    sub.add_parser("prepare", help="build and cache what `up` needs, start nothing").set_defaults(func=cmd_prepare)
    sub.add_parser("down", help="stop the lab and remove everything it created").set_defaults(func=cmd_down)
    sub.add_parser("status", help="print each component, its state and address").set_defaults(func=cmd_status)
    boot = sub.add_parser("boot-target", help="power the QEMU network-boot target on or off")
    boot.add_argument("power", choices=("on", "off"))
    boot.set_defaults(func=cmd_boot_target)
    reimage = sub.add_parser("reimage", help="boot a lab host again from the base image (a fresh OS install)")
    reimage.add_argument("host")
    reimage.set_defaults(func=cmd_reimage)
    fault = sub.add_parser("fault", help="inject GPU faults on a lab GPU host (simulated GPUs, tools), or clear them")
    fault.add_argument("node")
    fault.add_argument("faults", nargs="+", help="clear, xid=N, missing=N, nccl_busbw=GBPS, h2d=, d2h=, d2d=, "
                       "dcgm_fail=TEST")
    fault.set_defaults(func=cmd_fault)
    return top


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if os.geteuid() != 0:
        print("gpucloud-lab: must run as root (network namespaces, mounts, cgroups)")
        return 2
    return int(args.func(args))
