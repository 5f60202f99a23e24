# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NVUE API simulation answers as the release it simulates: 400 for a path that release does not have."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

import pytest
from gpucloud_lab.sim.nvue_api_sim import NvueSimulation

AUTH = "Basic " + base64.b64encode(b"cumulus:sim").decode()
L2_RT = {"evpn": {"vni": {"10101": {"route-target": {"both": {"64512:10101": {}}}}}}}


def call(sim: NvueSimulation, method: str, path: str, body: object = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"http://127.0.0.1:{sim.port}/nvue_v1{path}", data=data, method=method,
                                     headers={"Authorization": AUTH, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            text = response.read()
            return response.status, json.loads(text) if text else {}
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def revision(sim: NvueSimulation) -> str:
    status, body = call(sim, "POST", "/revision")
    assert status == 200
    return next(iter(body))


@pytest.mark.parametrize("release, code", [("5.3", 400), ("5.12", 200)])
def test_patch_of_a_path_the_release_lacks_answers_400(release, code):
    with NvueSimulation(version=release) as sim:
        status, body = call(sim, "PATCH", f"/?rev={revision(sim)}", L2_RT)
        assert status == code, body
        if code == 400:
            assert body == {"title": "Bad Request", "detail": "evpn vni: no such path in NVUE; valid here: dad, "
                                                              "enable, evi, multihoming, route-advertise"}


def test_delete_of_a_made_up_path_answers_400_and_of_a_real_one_204():
    with NvueSimulation(version="5.12") as sim:
        rev = revision(sim)
        status, body = call(sim, "DELETE", f"/interface/swp1/frobnicate?rev={rev}")
        assert status == 400 and body["detail"].startswith("interface swp1 frobnicate: no such path in NVUE")
        assert call(sim, "DELETE", f"/interface/swp1/link/mtu?rev={rev}")[0] == 204


def test_a_release_without_a_model_is_not_simulated():
    with pytest.raises(ValueError, match=r"no NVUE model of Cumulus Linux 6\.0"):
        NvueSimulation(version="6.0")
