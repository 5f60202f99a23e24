# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NVUE REST API simulation, imported from its one home: the lab (``lab/gpucloud_lab/sim/nvue_api_sim.py``).

The lab runs it as the lab's NVUE switch; tests start it in a thread on 127.0.0.1 (no root, no lab).
"""

from __future__ import annotations

import sys
from pathlib import Path

_LAB = str(Path(__file__).resolve().parents[2] / "lab")
if _LAB not in sys.path:
    sys.path.insert(0, _LAB)

from gpucloud_lab.sim.nvue_api_sim import NvueSimulation, merge  # noqa: E402
from gpucloud_lab.sim.nvue_schema import check_path, check_tree  # noqa: E402

__all__ = ["NvueSimulation", "check_path", "check_tree", "merge"]
