# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The provisioning stage (private to the collection): what a PXE server serves, and BMC control.

- ``profiles``: an OS profile's boot artifacts (kernel, initrd, installer source) per family;
- ``dnsmasq``: the DHCP/TFTP configuration (a reservation per node, iPXE chainloading);
- ``ipxe``: the per-host iPXE script;
- ``seeds``: the unattended-install seed per family (autoinstall, kickstart, preseed);
- ``validate``: the seeds checked with the real validators (cloud-init, pykickstart) and
  preseed sanity rules;
- ``tree``: every file of the boot server for a fleet, rendered in one pass;
- ``redfish``: a Redfish client (power, one-time boot, inventory) with retries.

Imports point one way: tree -> dnsmasq/ipxe/seeds -> profiles -> _errors. Modules import
``tree``, ``validate`` and ``redfish``.
"""
