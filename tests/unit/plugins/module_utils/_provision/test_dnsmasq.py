# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dnsmasq configuration: reservations, iPXE chain, unknown MACs; checked by dnsmasq itself."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._errors import ProblemsError
from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import tree
from tests.support.tools import require


def dnsmasq_test(text: str, tmp_path: Path) -> subprocess.CompletedProcess:
    conf = tmp_path / "dnsmasq.conf"
    conf.write_text(text)
    return subprocess.run([require("dnsmasq"), "--test", f"--conf-file={conf}"], capture_output=True, text=True,
                          check=False)


def lines(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(prefix)]


def test_one_reservation_and_one_ipxe_script_url_per_node(site, nodes, options, tmp_path) -> None:
    conf = tree.render(site, nodes, dict(options, dns_servers=["198.51.100.254"]))["dnsmasq"]
    assert "dhcp-option=option:dns-server,198.51.100.254" in conf  # else installers stop and ask
    # Without the option, the site's nameservers (the fleet's; its gateway when it names none).
    default = tree.render(site, nodes, options)["dnsmasq"]
    assert "dhcp-option=option:dns-server,%s" % site["management"]["gateway"] in default
    assert "dhcp-host=52:54:00:c6:33:63,set:fleet,set:n-gpu4,198.51.100.24,gpu4" in conf
    assert "dhcp-boot=tag:n-gpu4,tag:ipxe,http://198.51.100.10:8080/hosts/gpu4.ipxe" in conf
    assert len(lines(conf, "dhcp-host=")) == len(nodes) == 4
    # Firmware gets iPXE (BIOS or UEFI) only as a fleet node; iPXE itself (option 175) is told apart.
    boots = lines(conf, "dhcp-boot=")
    assert all("tag:fleet" in b or "tag:n-" in b for b in boots), "a boot file for a MAC in no fleet"
    assert "dhcp-match=set:ipxe,175" in conf
    assert "dhcp-range=198.51.100.100,198.51.100.199,255.255.255.0,12h" in conf
    run = dnsmasq_test(conf, tmp_path)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("mode, expected", [("static", "dhcp-range=198.51.100.0,static,255.255.255.0,12h"),
                                            ("proxy", "dhcp-range=198.51.100.0,proxy,255.255.255.0")])
def test_static_and_proxy_modes_pass_dnsmasq_test(site, nodes, options, tmp_path, mode, expected) -> None:
    conf = tree.render(site, nodes, dict(options, mode=mode))["dnsmasq"]
    assert expected in conf
    if mode == "proxy":  # addresses come from the site's DHCP server
        assert "dhcp-host=52:54:00:c6:33:63,set:fleet,set:n-gpu4\n" in conf
        # dnsmasq answers no proxy-DHCP client without a matching pxe-service (dhcp-boot alone: silence)
        services = [line for line in conf.splitlines() if line.startswith("pxe-service=")]
        assert services == ['pxe-service=tag:fleet,x86PC,"gpucloud",undionly.kpxe',
                            'pxe-service=tag:fleet,BC_EFI,"gpucloud",snponly.efi',
                            'pxe-service=tag:fleet,x86-64_EFI,"gpucloud",snponly.efi']
        # a MAC in no fleet gets no answer from us (else dnsmasq sends it an empty PXE menu)
        assert "dhcp-ignore=tag:!fleet\n" in conf
    else:
        assert "pxe-service" not in conf and "dhcp-ignore" not in conf
    run = dnsmasq_test(conf, tmp_path)
    assert run.returncode == 0, run.stderr


def test_absent_nodes_lose_their_reservation(site, nodes, options) -> None:
    out = tree.render(site, nodes, dict(options, absent=["gpu4"]))
    assert "gpu4" not in out["dnsmasq"] and "hosts/gpu4.ipxe" not in out["files"] and "gpu4" not in out["nodes"]


def test_an_option_that_dnsmasq_refuses_fails_its_test(site, nodes, options, tmp_path) -> None:
    conf = tree.render(site, nodes, dict(options, extra=["dhcp-range=garbage"]))["dnsmasq"]
    run = dnsmasq_test(conf, tmp_path)
    assert run.returncode != 0 and "dhcp-range" in run.stderr


def test_bad_input_is_refused_naming_the_field(site, nodes, options) -> None:
    with pytest.raises(ProblemsError) as err:
        tree.render(site, nodes, dict(options, mode="relay", extra=["log-dhcp\nport=53"], dns_servers=["dns.example"]))
    text = str(err.value)
    assert "dhcp_mode: 'relay' is not one of range, static, proxy" in text
    assert "dnsmasq_options[0]" in text
    assert "dns_servers[0]: 'dns.example' is not an IP address" in text
    bad = [dict(nodes[0], os="windows11")]
    with pytest.raises(ProblemsError, match=r"nodes\[0\]\.os: unknown OS profile 'windows11'"):
        tree.render(site, bad, options)


def test_dhcp_and_tftp_only_on_the_boot_servers_address(site, nodes, options, tmp_path) -> None:
    """listen_address (the role gives the site's management.pxe_server): dnsmasq serves only the interface that
    holds it; bind-dynamic so that an address appearing after dnsmasq started is served too."""
    conf = tree.render(site, nodes, dict(options, listen_address="198.51.100.10"))["dnsmasq"]
    assert lines(conf, "listen-address=") == ["listen-address=198.51.100.10"]
    assert lines(conf, "bind-") == ["bind-dynamic"] and "interface=" not in conf
    both = tree.render(site, nodes, dict(options, listen_address="198.51.100.10", interfaces=["eno2"]))["dnsmasq"]
    assert lines(both, "interface=") == ["interface=eno2"] and lines(both, "bind-") == ["bind-dynamic"]
    for text in (conf, both):
        run = dnsmasq_test(text, tmp_path)
        assert run.returncode == 0, run.stderr
    every = tree.render(site, nodes, options)["dnsmasq"]  # "*" in the role: every interface
    assert not lines(every, "listen-address=") and not lines(every, "bind-")
    for bad in ("198.51.100.300", "eth0", "198.51.100.10\nport=53", "2001:db8::1"):
        with pytest.raises(ProblemsError, match=r"listen_address: .* is not an IPv4 address"):
            tree.render(site, nodes, dict(options, listen_address=bad))


def test_uefi_http_boot_clients_get_ipxe_by_url_and_the_http_client_vendor_class(
        site, nodes, options, tmp_path) -> None:
    """UEFI HTTP boot (vendor class HTTPClient, arch 16): iPXE by URL from the HTTP server, and option 60 says
    HTTPClient (edk2 takes no HTTP offer without it); the TFTP lines exclude it, so no client matches two."""
    conf = tree.render(site, nodes, options)["dnsmasq"]
    assert "dhcp-vendorclass=set:httpboot,HTTPClient" in conf
    assert "dhcp-option-force=tag:fleet,tag:httpboot,tag:!ipxe,option:vendor-class,HTTPClient" in conf
    assert "dhcp-boot=tag:fleet,tag:httpboot,tag:!ipxe,http://198.51.100.10:8080/ipxe/snponly.efi" in conf
    firmware = [b for b in lines(conf, "dhcp-boot=") if "tag:!ipxe" in b]
    assert len(firmware) == 3 and sum("tag:httpboot" in b for b in firmware) == 1
    assert all("tag:!httpboot" in b for b in firmware if "tag:httpboot," not in b)
    run = dnsmasq_test(conf, tmp_path)
    assert run.returncode == 0, run.stderr


def test_proxy_dhcp_cannot_serve_uefi_http_boot_and_says_which_nodes_need_it(site, nodes, options) -> None:
    http = [dict(n, boot_target="UefiHttp") if n["name"] == "gpu4" else n for n in nodes]
    assert "httpboot" not in tree.render(site, nodes, dict(options, mode="proxy"))["dnsmasq"]
    with pytest.raises(ProblemsError, match=r"dhcp_mode: proxy answers PXE clients only, but gpu4 boot\(s\) by UEFI "
                                            r"HTTP \(bmc.boot_target UefiHttp in the fleet\)"):
        tree.render(site, http, dict(options, mode="proxy"))
    assert "httpboot" in tree.render(site, http, options)["dnsmasq"]


def test_the_http_boot_url_names_the_file_the_role_serves() -> None:
    """The URL dnsmasq gives HTTP boot firmware and the copy role pxe_server makes are the same path (two places
    say it: the rendered config and the role's task)."""
    from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import dnsmasq

    tasks = (Path(__file__).resolve().parents[5] / "roles/pxe_server/tasks/main.yml").read_text()
    assert 'dest: "{{ pxe_server_root }}/http/%s"' % dnsmasq.HTTP_BOOT_PATH in tasks
    assert 'src: "{{ pxe_server_ipxe_dir }}/%s"' % dnsmasq.UEFI_FILE in tasks
