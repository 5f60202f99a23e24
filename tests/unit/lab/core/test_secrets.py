# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's secrets (lab/gpucloud_lab/core/secrets.py) are what its inventory holds, vault-encrypted with the
lab's vault password, and the NVUE simulation's own config is one a real switch of that release accepts."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from ansible.parsing.vault import VaultLib, VaultSecret
from gpucloud_lab.core import config, secrets
from gpucloud_lab.sim.nvue_schema import check_tree

GROUP_VARS = config.FLEET.parent / "group_vars"


def _vaulted(path: Path) -> list[str]:
    """Every ``!vault`` value of a YAML file, as ciphertext."""
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, config.Vaulted):
            found.append(str(value))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(config.read_fleet(path))
    return found


def test_the_inventory_holds_the_lab_password_only_vaulted_with_the_lab_vault_password():
    vault = VaultLib([("default", VaultSecret(secrets.VAULT_PASSWORD.encode()))])
    fleet_values = _vaulted(config.FLEET)
    nvue_values = _vaulted(GROUP_VARS / "switches_nvue.yml")
    assert len(fleet_values) == len(config.fleet()["nodes"]) and len(nvue_values) == 1
    for ciphertext in fleet_values + nvue_values:
        assert vault.decrypt(ciphertext).decode() == secrets.LAB_PASSWORD
    for path in [config.FLEET, *GROUP_VARS.glob("*.yml")]:
        assert all(value not in path.read_text() for value in secrets.scanned().values()), path


def test_a_changed_copy_of_the_fleet_keeps_its_vaulted_values(tmp_path):
    fleet = config.fleet()
    fleet["tenants"].append({"name": "extra"})
    config.write_fleet(tmp_path / "fleet.yml", fleet)
    again = config.read_fleet(tmp_path / "fleet.yml")
    assert again == fleet
    assert [n["bmc"]["password"] for n in again["nodes"]] == [n["bmc"]["password"] for n in config.fleet()["nodes"]]
    assert (tmp_path / "fleet.yml").read_text().count("!vault |") == len(fleet["nodes"])


@pytest.mark.parametrize("release", sorted({s.os_version for s in config.SWITCHES if s.platform == "nvue"}))
def test_the_nvue_switch_starts_with_its_own_secrets_in_a_config_its_release_accepts(release):
    seed = secrets.nvue_seed()
    assert check_tree(seed, (), release) == []
    text = yaml.safe_dump(seed)
    assert all(value in text for value in secrets.NVUE_NATIVE_SECRETS.values())


def test_the_vault_password_file_is_the_lab_vault_password_and_private(tmp_path, monkeypatch):
    monkeypatch.setattr(secrets, "VAULT_PASSWORD_FILE", tmp_path / "vault-password")
    secrets.write_vault_password_file()
    assert (tmp_path / "vault-password").read_text().strip() == secrets.VAULT_PASSWORD
    assert (tmp_path / "vault-password").stat().st_mode & 0o777 == 0o600
