# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan_tenants module end to end (main(), as Ansible runs it) on the lab fleet: every tenant layer from the
inventory's variables as playbooks/plan.yml passes them (the role's vcluster_tenant_* names, the WireGuard hosts'
tunnels, the gateway's name or ''), never a change, the same data in check mode, and every problem of every
tenant in one failure, as wrong arguments are."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet import load_fleet, wireguard_tunnels
from ansible_collections.gpucloud.baremetal.plugins.modules import plan_tenants
from tests.support import inventory_yaml
from tests.support.module_args import patch_module_args

FLEET = Path(__file__).resolve().parents[4] / "inventories" / "lab" / "fleet.yml"
ROLE_VARS = {"vcluster_tenant_pro_image": "ghcr.io/loft-sh/vcluster-pro:0.30.0",
             "vcluster_tenant_platform_secret": "vcluster-platform-api-key",
             "vcluster_tenant_api_server_cidrs": ["198.51.100.11/32"],
             "vcluster_tenant_kubeconfig": "/var/lib/gpucloud-lab/kubeconfig"}  # read by the role only: ignored


def main(capsys: pytest.CaptureFixture, **args) -> tuple[int, dict]:
    with patch_module_args(json.loads(json.dumps(args))), pytest.raises(SystemExit) as exited:
        plan_tenants.main()
    return exited.value.code, json.loads(capsys.readouterr().out)


@pytest.fixture
def args() -> dict[str, Any]:
    model = load_fleet(inventory_yaml.load(FLEET))
    return {"tenants": model["tenants"], "gpus": {n["name"]: n["gpu"]["count"] for n in model["nodes"]},
            "shared_nodes": [n["name"] for n in model["nodes"] if not n.get("tenant")],
            "vcluster_settings": ROLE_VARS, "wireguard_tunnels": wireguard_tunnels(model), "wireguard_gateway": "cp"}


def gpu(queues: list[dict]) -> dict[str, dict]:
    return {q["metadata"]["name"]: q["spec"]["resources"]["gpu"] for q in queues}


def test_every_tenant_layer_of_the_lab_fleet_and_no_change(capsys, args: dict[str, Any]) -> None:
    rc, out = main(capsys, **args)
    assert rc == 0 and out["changed"] is False, out
    data = out["data"]
    assert sorted(data) == ["kai/queues.yaml", "vcluster/acme.objects.yaml", "vcluster/acme.values.yaml",
                            "vcluster/beta.objects.yaml", "vcluster/beta.values.yaml", "wireguard/acme.yaml"]
    # The host tree schedules the shared nodes' GPUs (gpu2, gpu3: 8 each; gpu4 none), acme's its own gpu1's.
    trees = data["kai/queues.yaml"]
    assert gpu(trees["host_cluster"]) == {"gpucloud": {"quota": 16, "limit": 16, "overQuotaWeight": 1},
                                          "tenant-beta": {"quota": 8, "limit": 16, "overQuotaWeight": 2}}
    assert gpu(trees["tenant_clusters"]["acme"])["gpucloud"]["quota"] == 8
    wg = data["wireguard/acme.yaml"]
    assert wg["gateway"] == "cp" and sorted(wg["tunnels"]) == ["cp", "gpu1"]
    assert wg["tunnels"]["gpu1"]["peers"][0]["endpoint"] == "198.51.100.11:51820"


def test_the_role_s_variables_shape_the_values(capsys, args: dict[str, Any]) -> None:
    rc, out = main(capsys, **args)
    assert rc == 0, out
    values = out["data"]["vcluster/acme.values.yaml"]
    image = {"registry": "ghcr.io", "repository": "loft-sh/vcluster-pro", "tag": "0.30.0"}
    assert values["controlPlane"]["statefulSet"]["image"] == image
    assert values["platform"] == {"apiKey": {"secretName": "vcluster-platform-api-key"}}
    # No kubeconfig is read: the host cluster API's host is named, not guessed.
    assert values["exportKubeConfig"]["server"] == "https://<host cluster API host>:30101"
    pinned = dict(ROLE_VARS, vcluster_tenant_expose_host="192.0.2.10")
    rc, out = main(capsys, **dict(args, vcluster_settings=pinned))
    assert rc == 0, out
    assert out["data"]["vcluster/acme.values.yaml"]["exportKubeConfig"]["server"] == "https://192.0.2.10:30101"


def test_a_fleet_without_a_gateway_has_only_its_nodes_tunnels(capsys, args: dict[str, Any]) -> None:
    rc, out = main(capsys, **dict(args, wireguard_gateway=""))
    assert rc == 0, out
    wg = out["data"]["wireguard/acme.yaml"]
    assert wg["gateway"] is None and sorted(wg["tunnels"]) == ["gpu1"]


def test_check_mode_computes_the_same_data(capsys, args: dict[str, Any]) -> None:
    _rc, out = main(capsys, **args)
    rc, checked = main(capsys, **args, _ansible_check_mode=True)
    assert rc == 0 and checked["changed"] is False and checked["data"] == out["data"]


def test_every_problem_of_every_tenant_fails_the_module_at_once(capsys, args: dict[str, Any]) -> None:
    settings = {k: v for k, v in ROLE_VARS.items() if k != "vcluster_tenant_pro_image"}
    rc, out = main(capsys, **dict(args, vcluster_settings=settings, kai_parent={"gpu": {"quota": 64}}))
    assert rc == 1 and out["failed"] is True and "data" not in out
    pro_image = ("vcluster_tenant_pro_image: tenant acme (private) needs the vcluster-pro image (e.g. "
                 "ghcr.io/loft-sh/vcluster-pro:0.36.1); private nodes are a vCluster Pro feature and the open-source "
                 "image refuses them with a licence error")
    over = "gpucloud: GPU quota 64 exceeds the fleet's GPU capacity of 16 for this tree"  # the host tree's
    assert out["problems"][:2] == [pro_image, over]
    assert out["msg"].startswith("the plan cannot be made (%d problems):" % len(out["problems"]))


@pytest.mark.parametrize(("change", "msg"), [
    ({"tenants": None}, "missing required arguments: tenants"),
    ({"tenants": ["acme", "beta"]}, "Elements value for option 'tenants' is of type str and we were unable to "
                                    "convert to dict"),
    ({"shared_nodes": "gpu2,gpu3", "gpus": "gpu2"}, "argument 'gpus' is of type str and we were unable to convert "
                                                    "to dict"),
])
def test_arguments_of_the_wrong_shape_are_refused_naming_the_option(capsys, args, change, msg) -> None:
    given = {k: v for k, v in dict(args, **change).items() if v is not None}
    rc, out = main(capsys, **given)
    assert rc == 1 and out["msg"].startswith(msg), out["msg"]
