#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: redfish_system
short_description: Power and one-time boot of a server through its BMC's Redfish API
version_added: 0.1.0
description:
  - Reads a server's power state and inventory, sets a one-time boot override (e.g. PXE for the next
    boot only) and powers it on, off or through a cycle, then polls until the BMC reports the power
    state asked for (BMCs take seconds to apply a power action).
  - Retries every read and change with exponential backoff when the BMC answers 5xx or does not answer,
    and then fails with a message naming the node and its BMC. Wrong credentials fail at once. The
    password and the session token are never printed.
  - A reset (a POST action, not idempotent) is never retried blindly. After a failed try the power state
    is read again and the reset is sent again only when the state shows it did not happen; a restart whose
    outcome the power state cannot tell is reported, not repeated.
  - Behaves as real BMCs need. It logs in with a session (C(X-Auth-Token)) where the service root links a
    C(SessionService), and deletes the session at the end; otherwise it uses HTTP Basic. A PATCH carries
    C(If-Match) with the resource's ETag (Lenovo XCC and AMI answer 428 without it), and a 412 is re-read
    and tried once more. A system with C(@Redfish.Settings) is changed through its settings object
    (iDRAC 10). C(BootSourceOverrideMode) goes with every boot target. The reset types come from
    C(ResetType@Redfish.AllowableValues), so a BMC without C(ForceRestart) gets C(ForceOff), then C(On).
  - Uses Ansible's own HTTP client. community.general's Redfish modules were not used because they
    neither poll for the power state to change nor retry on 5xx, and would add a dependency.
author:
  - gpucloud.baremetal contributors (@gpucloud)
options:
  name:
    description: Node name, used in messages.
    type: str
    default: ""
  bmc:
    description:
      - The node's BMC as the fleet gives it (the host variable C(gpucloud_bmc) of the
        C(gpucloud.baremetal.fleet) inventory).
      - The password is never returned, not even when the arguments are wrong.
    type: dict
    required: true
    suboptions:
      url:
        description: The BMC's URL (C(https://host[:port])); the fleet derives it from O(bmc.address).
        type: str
      address:
        description: Host, C(host:port) or URL of the BMC; used when O(bmc.url) is not given.
        type: str
      username:
        description: The BMC account.
        type: str
      password:
        description: The BMC account's password (a vault-encrypted value in the fleet).
        type: str
      system_id:
        description: The Redfish system to drive; empty for the BMC's only system.
        type: str
      validate_certs:
        description: Check the BMC's TLS certificate.
        type: bool
        default: true
      boot_mode:
        description:
          - C(BootSourceOverrideMode) sent with every boot override. Empty to send the mode the system reports
            (Supermicro BMCs reset the mode to V(Legacy) when a PATCH of the boot target leaves it out).
        type: str
        choices: [UEFI, Legacy]
      boot_target:
        description:
          - How the node boots to be installed (the fleet's C(bmc.boot_target)). Not used here (O(boot_once) is
            what is sent); taken so that the fleet's C(bmc) passes as it is. Role C(os_install) sends it as
            O(boot_once), with O(media_image) for V(Cd) (virtual media).
        type: str
        choices: [Pxe, UefiHttp, Cd]
  ca_path:
    description: PEM CA bundle that signed the BMC's certificate; empty for the system's trust store.
    type: path
  power:
    description:
      - V(on), V(off) (forced), V(graceful_off), V(cycle) (forced restart, or on when off) or V(read)
        (change nothing). V(on) and V(off) change nothing when the server already is so.
    type: str
    default: read
    choices: [read, "on", "off", graceful_off, cycle]
  expect_mac:
    description:
      - The MAC address of one of the node's network interfaces (the fleet's C(nodes[].mac), its boot NIC).
        Before anything is read or changed, the system the BMC drives must list it among its
        C(EthernetInterfaces) (C(MACAddress) or C(PermanentMACAddress)); otherwise the module fails and changes
        nothing - a BMC address copied or mistyped in the fleet would power-cycle another server.
      - Empty to skip the check (a BMC that lists no host interfaces).
    type: str
    default: ""
  boot_once:
    description: Boot override for the next boot only (C(BootSourceOverrideEnabled=Once)), e.g. V(Pxe).
    type: str
    choices: [Pxe, Hdd, Cd, UefiHttp, BiosSetup]
  media_image:
    description:
      - An ISO's URL (http or https) for the system's virtual CD/DVD drive, inserted write-protected before the
        boot override (DSP2046 C(VirtualMedia.InsertMedia); the BMC fetches it). Another image in the drive is
        ejected first; the same image already inserted changes nothing. With O(boot_once=Cd) the next boot runs
        it - a node's deploy ISO from the boot server (role C(pxe_server)) on a site without PXE.
      - The drive is the first C(VirtualMedia) member with C(MediaTypes) CD or DVD, under the system (Redfish
        2021.1 and later) or else under its manager (iDRAC, iLO, XCC). A BMC without one fails before any change.
    type: str
    default: ""
  media_eject:
    description: Eject whatever the virtual CD/DVD drive holds (C(VirtualMedia.EjectMedia)); not with O(media_image).
    type: bool
    default: false
  wait:
    description: Poll until the power state is the one asked for.
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait for the power state.
    type: int
    default: 120
  retries:
    description: Retries of a request that got 5xx or no answer (backoff 1, 2, 4 ... seconds).
    type: int
    default: 4
  timeout:
    description: Seconds per HTTP request.
    type: int
    default: 10
attributes:
  check_mode:
    support: full
    description: Reads the BMC and reports what would change; sends no change.
  diff_mode:
    support: full
    description: Power state and boot override, before and after.
  platform:
    support: full
    platforms: posix
    description: Runs on the controller (delegated to C(localhost)) and talks to the BMC over HTTPS.
"""

EXAMPLES = r"""
- name: Next boot from the network, then power-cycle the node
  gpucloud.baremetal.redfish_system:
    name: "{{ inventory_hostname }}"
    bmc: "{{ gpucloud_bmc }}"
    boot_once: Pxe
    power: cycle
  delegate_to: localhost
"""

RETURN = r"""
power_state:
  description: Power state after the change (or now, with V(read) and in check mode).
  returned: always
  type: str
  sample: "On"
boot:
  description: The boot override after the change, C(target), C(enabled) and, where the BMC reports it, C(mode).
  returned: always
  type: dict
inventory:
  description: What the BMC reports of the system (model, serial, CPUs, memory, boot settings).
  returned: always
  type: dict
resets:
  description: The reset types sent, in order (empty when none was sent).
  returned: always
  type: list
  elements: str
  sample: ["ForceOff", "On"]
auth:
  description: How the module logged in to the BMC, V(session) or V(basic).
  returned: always
  type: str
  sample: session
media:
  description: The virtual CD/DVD drive after the change, C(image) (URL, empty when none) and C(inserted).
  returned: when O(media_image) or O(media_eject) is set
  type: dict
  sample: {"image": "http://192.0.2.10:8080/vmedia/gpu4.iso", "inserted": true}
mac_addresses:
  description: The system's MAC addresses, as its BMC lists them, when O(expect_mac) was given.
  returned: when O(expect_mac) is set
  type: list
  elements: str
  sample: ["52:54:00:c6:33:63"]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision.redfish import (
    RESET_TYPES,
    Redfish,
    RedfishError,
)
from ansible_collections.gpucloud.baremetal.plugins.module_utils._runner import run_module

WANT = {"on": "On", "off": "Off", "graceful_off": "Off", "cycle": "On"}


def run(client: Redfish, power: str, boot_once: str | None, check: bool, wait: bool, wait_timeout: int,
        media_image: str = "", media_eject: bool = False) -> dict:
    before_state = client.power_state()
    if power == "cycle" and before_state not in ("On", "Off"):
        # 'On' sent to a server that runs would be a no-op reported as a cycle: the install would never start
        raise RedfishError("%s: BMC %s: power state %r is neither On nor Off; a power cycle needs one of them (try "
                           "again once it settled); nothing was changed" % (client.name, client.url, before_state[:40]))
    if boot_once:
        client.require_boot_target(boot_once)  # before the media: a system that cannot boot it gets nothing
    media = None
    before_media = None
    if media_image:
        client.check_media_image(media_image)  # check mode too: a URL the BMC cannot be given fails there
    if media_image or media_eject:
        now = client.media()
        before_media = {"image": now["image"], "inserted": now["inserted"]}
        media = {"image": media_image, "inserted": True} if media_image else {"image": "", "inserted": False}
    changed = False
    if media is not None and before_media != media:
        changed = True
        if not check:
            if media_image:
                client.insert_media(media_image)
            else:
                client.eject_media()
    before_boot = client.boot_override()
    boot = before_boot
    want_boot = {"target": boot_once, "enabled": "Once"}
    if client.boot_mode:
        want_boot["mode"] = client.boot_mode
    if boot_once and any(before_boot.get(k) != v for k, v in want_boot.items()):
        changed = True
        boot = dict(before_boot, **want_boot)
        if not check:
            client.set_boot_once(boot_once)
    state = before_state
    sent: list[str] = []
    if power != "read":
        want = WANT[power]
        reset = None
        if power == "cycle":
            reset = RESET_TYPES["cycle"] if before_state == "On" else RESET_TYPES["on"]
        elif before_state != want:
            reset = RESET_TYPES[power]
        if reset:
            changed = True
            state = want
            if not check:
                sent = client.reset(reset) or [reset]
                if wait:
                    state = client.wait_power(want, wait_timeout)
    out = {
        "changed": changed, "power_state": state, "boot": boot, "resets": sent,
        "diff": {"before": {"power_state": before_state, "boot": before_boot},
                 "after": {"power_state": state, "boot": boot}},
    }
    if media is not None:
        out["media"] = media
        out["diff"]["before"]["media"] = before_media
        out["diff"]["after"]["media"] = media
    return out


SPEC = {
    "name": {"type": "str", "default": ""},
    "bmc": {
        "type": "dict",
        "required": True,
        "options": {
            "url": {"type": "str"},
            "address": {"type": "str"},
            "username": {"type": "str"},
            "password": {"type": "str", "no_log": True},
            "system_id": {"type": "str"},
            "validate_certs": {"type": "bool", "default": True},
            "boot_mode": {"type": "str", "choices": ["UEFI", "Legacy"]},
            "boot_target": {"type": "str", "choices": ["Pxe", "UefiHttp", "Cd"]},
        },
    },
    "ca_path": {"type": "path"},
    "power": {"type": "str", "default": "read", "choices": ["read", "on", "off", "graceful_off", "cycle"]},
    "expect_mac": {"type": "str", "default": ""},
    "boot_once": {"type": "str", "choices": ["Pxe", "Hdd", "Cd", "UefiHttp", "BiosSetup"]},
    "media_image": {"type": "str", "default": ""},
    "media_eject": {"type": "bool", "default": False},
    "wait": {"type": "bool", "default": True},
    "wait_timeout": {"type": "int", "default": 120},
    "retries": {"type": "int", "default": 4},
    "timeout": {"type": "int", "default": 10},
}


def _module_run(module: AnsibleModule) -> dict:
    p = module.params
    bmc = p["bmc"]
    if p["media_image"] and p["media_eject"]:
        raise RedfishError("%s: media_image and media_eject exclude each other; nothing was changed"
                           % (p["name"] or "node"))
    missing = [k for k in ("username", "password") if not bmc.get(k)]
    if not (bmc.get("url") or bmc.get("address")):
        missing.insert(0, "url (or address)")
    if missing:
        raise RedfishError("%s: bmc needs %s" % (p["name"] or "node", ", ".join(missing)))
    client = Redfish(str(bmc.get("url") or bmc["address"]), str(bmc["username"]), str(bmc["password"]),
                     name=p["name"], system_id=str(bmc.get("system_id") or ""),
                     validate_certs=bmc["validate_certs"], ca_path=p["ca_path"], timeout=p["timeout"],
                     retries=p["retries"], boot_mode=str(bmc.get("boot_mode") or ""))
    with client:  # a session, where the BMC offers them, is deleted however this ends
        macs = client.identify(p["expect_mac"]) if p["expect_mac"] else None
        result = run(client, p["power"], p["boot_once"], module.check_mode, p["wait"], p["wait_timeout"],
                     p["media_image"], p["media_eject"])
        result["inventory"] = client.inventory()
        result["auth"] = client.auth
    if macs is not None:
        result["mac_addresses"] = macs
    return result


def main() -> None:
    run_module(SPEC, _module_run)


if __name__ == "__main__":
    main()
