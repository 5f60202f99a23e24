# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Day 2 of the fabric on the lab: onboarding and offboarding one tenant, and what
`fabric.yml --check --diff` shows a reviewer. leaf1 is pushed to (the lab's NVUE API
simulation); leaf2 is render-only (switch_fabric_push=false in the lab inventory): its kept
native files are its config."""
from __future__ import annotations

import json

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fabric.nvue_api import NvueClient, change
from tests.integration.lab import Lab, config, hostvars, secrets

NVUE_STATE = config.SWITCH_STATE_DIR / "leaf1.json"
LEAF2_FILE = config.STATE_DIR / "fabric" / "leaf2.sonic.json"


def leaf1_tenants() -> set[str]:
    applied = json.loads(NVUE_STATE.read_text()).get("applied", {})
    return {i["description"].split(":", 1)[1] for i in (applied.get("interface") or {}).values()
            if str(i.get("description", "")).startswith("gpucloud:")}


def leaf2_vlans() -> set[str]:
    return set(json.loads(LEAF2_FILE.read_text()).get("VLAN", {})) if LEAF2_FILE.exists() else set()


def by_hand(switch: str) -> NvueClient:
    """The operator's own NVUE REST client on the switch (the collection's client, as any other would do)."""
    ip = config.switch(switch).ip
    return NvueClient.from_params({"host": ip, "port": int(config.switch(switch).nvue_url.rsplit(":", 1)[1]),
                                   "use_ssl": True, "username": hostvars()[switch]["switch_fabric_nvue_username"],
                                   "password": secrets.LAB_PASSWORD, "validate_certs": True, "timeout": 30,
                                   "ca_path": hostvars()[switch]["switch_fabric_nvue_ca_path"]})


def test_offboard_and_onboard_a_tenant_on_the_lab(lab: Lab) -> None:
    start = lab.playbook("playbooks/fabric.yml")
    assert start.rc == 0, start.failures()
    assert {"acme", "beta"} <= leaf1_tenants() and "Vlan102" in leaf2_vlans()

    refused = lab.playbook("playbooks/tenant_offboard.yml", {"tenant": "nosuch", "confirm": "nosuch"})
    assert refused.rc != 0 and leaf1_tenants() >= {"acme", "beta"}

    # The operator puts an SVI of their own (VLAN 999, no marker of ours) in beta's VRF: offboarding beta would
    # remove the VRF from under it. The plan fails naming the interface; leaf1 keeps beta and the operator's SVI.
    hand = by_hand("leaf1")
    change(hand, {"bridge": {"domain": {"br_default": {"vlan": {"999": {}}}}},
                  "interface": {"vlan999": {"type": "svi", "vlan": 999, "ip": {"vrf": "beta"}}}}, [], False)
    try:
        kept = lab.playbook("playbooks/tenant_offboard.yml", {"tenant": "beta", "confirm": "beta"})
        message = " ".join(kept.failures())
        assert kept.rc != 0 and "leaf1: tenant beta: its VRF beta is in use by interface vlan999" in message, message
        assert "beta" in leaf1_tenants() and kept.changed_tasks("leaf1") == []
        assert json.loads(NVUE_STATE.read_text())["applied"]["interface"]["vlan999"]["ip"]["vrf"] == "beta"
    finally:
        change(hand, {}, ["interface/vlan999", "bridge/domain/br_default/vlan/999"], False)

    off = lab.playbook("playbooks/tenant_offboard.yml", {"tenant": "beta", "confirm": "beta"})
    assert off.rc == 0, off.failures()
    assert "beta" not in leaf1_tenants() and "acme" in leaf1_tenants()
    assert "Vlan102" not in leaf2_vlans() and "Vlan101" in leaf2_vlans(), "leaf2's kept config still has beta"
    again = lab.playbook("playbooks/tenant_offboard.yml", {"tenant": "beta", "confirm": "beta"})
    assert again.rc == 0 and again.changed_tasks("leaf1") == [] and again.changed_tasks("leaf2") == []

    # What the fabric playbook would do now, touching nothing: the native NVUE change for leaf1.
    before = NVUE_STATE.read_text()
    check = lab.playbook("playbooks/fabric.yml", check=True)
    assert check.rc == 0, check.failures()
    assert NVUE_STATE.read_text() == before, "check mode changed the switch"
    diffs = [e["event_data"]["res"].get("diff") for e in check.events
             if e.get("event") == "runner_on_ok" and e["event_data"].get("host") == "leaf1"
             and e["event_data"].get("res", {}).get("changed")]
    text = json.dumps(diffs)
    assert "vlan102" in text and "64512:50102" in text, "--check --diff does not show leaf1's native change"

    # The operator makes bridge VLAN 102 on leaf1 by hand (no SVI of ours) while beta is out: onboarding beta,
    # whose VLAN it is, would rename it, carry beta on it and remove it with beta. The plan fails naming both, and
    # leaf1 keeps the operator's VLAN and gets no beta.
    change(hand, {"bridge": {"domain": {"br_default": {"vlan": {"102": {}}}}}}, [], False)
    try:
        taken = lab.playbook("playbooks/tenant_onboard.yml", {"tenant": "beta"})
        message = " ".join(taken.failures())
        assert taken.rc != 0 and "leaf1: tenant beta: its VLAN 102 is on the switch already and is not ours" \
            in message, message
        assert "beta" not in leaf1_tenants() and taken.changed_tasks("leaf1") == []
        assert "102" in json.loads(NVUE_STATE.read_text())["applied"]["bridge"]["domain"]["br_default"]["vlan"]
    finally:
        change(hand, {}, ["bridge/domain/br_default/vlan/102"], False)

    on = lab.playbook("playbooks/tenant_onboard.yml", {"tenant": "beta"})
    assert on.rc == 0, on.failures()
    assert {"acme", "beta"} <= leaf1_tenants() and "Vlan102" in leaf2_vlans()
    again = lab.playbook("playbooks/tenant_onboard.yml", {"tenant": "beta"})
    assert again.rc == 0 and again.changed_tasks("leaf1") == [] and again.changed_tasks("leaf2") == []
