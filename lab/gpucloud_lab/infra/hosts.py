# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lab hosts: systemd booted by systemd-nspawn on an overlay of the base rootfs."""
from __future__ import annotations

import fcntl
import os
import shutil
import uuid
from pathlib import Path

from gpucloud_lab.core import config, secrets
from gpucloud_lab.core.components import Row
from gpucloud_lab.core.config import Host
from gpucloud_lab.core.util import daemon_pid, port_open, run, say, start_daemon, stop_unit, wait_for, write_file
from gpucloud_lab.infra import net, pki, rootfs


def host_dir(host: Host) -> Path:
    return config.STATE_DIR / "hosts" / host.name


def root_dir(host: Host) -> Path:
    return host_dir(host) / "root"


def unit(host: Host) -> str:
    return f"host-{host.name}"


def is_mounted(path: Path) -> bool:
    return run(["mountpoint", "-q", str(path)], check=False).returncode == 0


def write_known_hosts() -> None:
    """The lab's known_hosts file (config.KNOWN_HOSTS): every running host's own SSH host keys, by name and
    address, as an operator has them for installed machines. inventories/lab checks host keys against it
    (StrictHostKeyChecking=yes), so a lab host that answers with another key fails the run. Rewritten whole,
    atomically and under a lock, whenever a host starts."""
    config.KNOWN_HOSTS.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    with open(config.KNOWN_HOSTS.with_suffix(".lock"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lines = []
        for host in config.HOSTS:
            for pub in sorted((root_dir(host) / "etc" / "ssh").glob("ssh_host_*_key.pub")):
                kind, key = pub.read_text().split()[:2]
                lines.append(f"{host.name},{host.name}.{config.DOMAIN},{host.ip} {kind} {key}")
        write_file(config.KNOWN_HOSTS, "".join(line + "\n" for line in lines), mode=0o644)


def ensure_ssh_key() -> None:
    if not config.SSH_KEY.exists():
        config.SSH_KEY.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpucloud-lab", "-f", str(config.SSH_KEY)])
    config.SSH_KEY.chmod(0o600)


def mount_overlay(host: Host, base: Path) -> None:
    root = root_dir(host)
    if is_mounted(root):
        return
    for sub in ("upper", "work", "root"):
        (host_dir(host) / sub).mkdir(parents=True, exist_ok=True)
    options = f"lowerdir={base},upperdir={host_dir(host) / 'upper'},workdir={host_dir(host) / 'work'}"
    run(["mount", "-t", "overlay", f"gcl-{host.name}", "-o", options, str(root)])


def hosts_file() -> str:
    lines = ["127.0.0.1 localhost", "::1 localhost ip6-localhost ip6-loopback"]
    lines += [f"{h.ip} {h.name}.{config.DOMAIN} {h.name}" for h in config.HOSTS]
    lines.append(f"{config.CONTROLLER_IP} controller.{config.DOMAIN} controller")
    return "\n".join(lines) + "\n"


def write_identity(host: Host) -> None:
    """Per-host identity, written once into the host's overlay."""
    root = root_dir(host)
    if (root / "etc" / "machine-id").read_text().strip():
        return
    write_file(root / "etc" / "hostname", f"{host.name}\n")
    write_file(root / "etc" / "hosts", hosts_file())
    write_file(root / "etc" / "resolv.conf", f"search {config.DOMAIN}\n")
    # No Debian mirror is reachable from the lab (an air-gapped site's hosts list the site's mirrors): apt lists
    # only what the roles add, the lab's mirror of the Kubernetes packages.
    write_file(root / "etc" / "apt" / "sources.list", "# gpucloud-lab: no Debian mirror here; see lab/README.md\n")
    run(["ssh-keygen", "-A", "-f", str(root)])
    pub = config.SSH_KEY.with_suffix(".pub").read_text()
    ssh_dir = root / "root" / ".ssh"
    ssh_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_file(ssh_dir / "authorized_keys", pub, mode=0o600)
    write_host_certificate(host)
    write_file(root / "etc" / "machine-id", uuid.uuid4().hex + "\n", mode=0o444)


HOST_CERT_DIR = Path("etc/ssl/gpucloud-lab")  # on each lab host: host.crt, host.key


def write_host_certificate(host: Host) -> None:
    """The site PKI's part, which the collection leaves to the site: each server's own TLS certificate (its names
    and address, signed by the lab CA) and key, where a site's PKI agent would put them. The key is readable by
    group prometheus (the monitoring host's tenant endpoints serve HTTPS with it: role gpu_monitoring checks that
    Prometheus can read it and never copies it)."""
    pki.ensure_ca()
    cert, key = pki.issue(f"host-{host.name}", f"/CN={host.name}.{config.DOMAIN}",
                          [f"DNS:{host.name}", f"DNS:{host.name}.{config.DOMAIN}", f"IP:{host.ip}"], server=True)
    folder = root_dir(host) / HOST_CERT_DIR
    write_file(folder / "host.crt", cert.read_text())
    write_file(folder / "host.key", key.read_text(), mode=0o640)
    groups = (root_dir(host) / "etc" / "group").read_text().splitlines()
    gid = next((int(line.split(":")[2]) for line in groups if line.startswith("prometheus:")), 0)
    os.chown(folder / "host.key", 0, gid)


def containerd_disk(host: Host) -> Path:
    return host_dir(host) / "disk" / "containerd"


def nspawn_command(host: Host) -> list[str]:
    return [
        "systemd-nspawn", "--boot", "--register=no", "--keep-unit", "--quiet",
        f"--directory={root_dir(host)}", f"--machine={host.name}", f"--hostname={host.name}",
        f"--network-namespace-path=/run/netns/{host.netns}",
        "--capability=CAP_NET_ADMIN,CAP_SYSLOG,CAP_SYS_RESOURCE", "--bind=/dev/net/tun",
        # What a server's kernel gives its container runtime and kubelet: runc gives each container a session
        # keyring (keyctl, which nspawn filters by default), the kubelet's OOM watcher reads the kernel log
        # (/dev/kmsg: CAP_SYSLOG where kernel.dmesg_restrict is 1).
        "--system-call-filter=@keyring", "--bind-ro=/dev/kmsg",
        # containerd's image layers on a disk of the host's own (the machine's file system): overlayfs snapshots
        # cannot sit on the host's overlay root, as they sit on a server's disk.
        f"--bind={containerd_disk(host)}:/var/lib/containerd",
        "--resolv-conf=off", "--timezone=off", "--link-journal=no", "--console=read-only",
    ]


# Run by each host's systemd before anything else (gpucloud-lab-machine.service): the host's share of the machine.
# 1. Its cgroup controllers writable: nspawn mounts them read-only, but the host sits in cgroups of its own in
#    every controller hierarchy (start_daemon(..., controllers=True)) and its cgroup namespace shows those as the
#    root, so containerd, runc and the kubelet manage the host's own subtree as they would a server's whole tree.
# 2. SIMULATION of the kernel tunables a kubelet sets on its node (kubernetes 1.20
#    pkg/kubelet/cm/container_manager_linux.go setupKernelTunables: vm.overcommit_memory, vm.panic_on_oom,
#    kernel.panic, kernel.panic_on_oops, kernel.keys.root_maxkeys, kernel.keys.root_maxbytes). Lab hosts share
#    the machine's kernel, whose /proc/sys is read-only to them: each host gets a file of its own in each one's
#    place, holding the machine's value at boot, that reads and writes as the kernel's does for one value, so the
#    kubelet's writes stay on its host and the machine's kernel is never changed.
MACHINE_SCRIPT = """\
#!/bin/sh
# gpucloud-lab (lab/gpucloud_lab/infra/hosts.py): this host's share of the machine.
set -e
for c in /sys/fs/cgroup/*/; do
    case "$(findmnt -n -o FSTYPE "${c%/}" 2>/dev/null)" in
        cgroup) mount -o remount,bind,rw "$c" ;;
    esac
done
mkdir -p /run/gpucloud-lab/sysctl
for key in vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys \\
           kernel/keys/root_maxbytes; do
    [ -e "/proc/sys/$key" ] || continue
    file=/run/gpucloud-lab/sysctl/$(echo "$key" | tr / .)
    cat "/proc/sys/$key" >"$file"
    mount --bind "$file" "/proc/sys/$key"
done
"""

MACHINE_UNIT = """\
[Unit]
Description=gpucloud-lab: this host's share of the machine (its cgroups, its kernel tunables)
DefaultDependencies=no
Before=sysinit.target local-fs.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/lib/gpucloud-lab/machine.sh

[Install]
WantedBy=sysinit.target
"""


def write_machine(host: Host) -> None:
    root = root_dir(host)
    write_file(root / "usr" / "local" / "lib" / "gpucloud-lab" / "machine.sh", MACHINE_SCRIPT, mode=0o755)
    write_file(root / "etc" / "systemd" / "system" / "gpucloud-lab-machine.service", MACHINE_UNIT)
    wants = root / "etc" / "systemd" / "system" / "sysinit.target.wants"
    wants.mkdir(parents=True, exist_ok=True)
    link = wants / "gpucloud-lab-machine.service"
    if not link.is_symlink():
        link.symlink_to("/etc/systemd/system/gpucloud-lab-machine.service")


def is_running(host: Host) -> bool:
    return daemon_pid(unit(host)) is not None


def start(host: Host, base: Path) -> None:
    """Bring one host up to the point where its systemd is booting; idempotent."""
    if is_running(host):
        return
    # A host that is not running has no state to keep (stop() removes it): a disk left by a killed lab would
    # boot with old host keys and files no run of this lab wrote.
    root = root_dir(host)
    if is_mounted(root):
        run(["umount", str(root)])
    shutil.rmtree(host_dir(host), ignore_errors=True)
    net.ensure_host_network(host)
    mount_overlay(host, base)
    write_identity(host)
    write_machine(host)
    containerd_disk(host).mkdir(parents=True, exist_ok=True)
    write_known_hosts()
    # A server's network sysctls are its own to set (gpu_host sets ip_forward and bridge-nf-call-*): /proc/sys/net
    # writable, as in a host's own network namespace. The rest of /proc/sys stays read-only (the kernel is shared).
    start_daemon(unit(host), nspawn_command(host), env={"SYSTEMD_NSPAWN_API_VFS_WRITABLE": "network"},
                 controllers=True)


def ssh_ready(host: Host) -> bool:
    return port_open(host.ip, 22)


def stop(host: Host) -> None:
    """SIGTERM to nspawn (the container powers off), then unmount and forget the host's state."""
    stop_unit(unit(host), timeout=15.0)
    root = root_dir(host)
    if is_mounted(root):
        run(["umount", str(root)])
    shutil.rmtree(host_dir(host), ignore_errors=True)
    write_known_hosts()


def reimage(host: Host) -> None:
    """The host powered off and booted again from the base image, its disk forgotten: a server after a fresh OS
    install (no kubeadm, no kubelet, new host keys), as tests and benches that start from one need it."""
    stop(host)
    start(host, rootfs.ensure_base())
    wait_for(lambda: ssh_ready(host), f"sshd on {host.name}", timeout=60)


class Hosts:
    """The lab component: every lab host booted, with sshd answering."""

    def up(self) -> None:
        base = rootfs.ensure_base()
        ensure_ssh_key()
        secrets.write_vault_password_file()
        say(f"lab hosts: booting {', '.join(h.name for h in config.HOSTS)}")
        for host in config.HOSTS:
            start(host, base)
        for host in config.HOSTS:
            wait_for(lambda h=host: ssh_ready(h), f"sshd on {host.name}", timeout=60)
        say("lab hosts: sshd answers on all hosts")

    def down(self) -> None:
        for host in config.HOSTS:
            stop(host)

    def rows(self) -> list[Row]:
        rows = []
        for host in config.HOSTS:
            running = is_running(host)
            state = "running" if running and ssh_ready(host) else ("booting" if running else "stopped")
            rows.append(Row(f"host {host.name}", state, f"{host.ip}:22", f"{host.role}, mac {host.mac}"))
        return rows
