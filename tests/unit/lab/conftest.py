# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's package (lab/gpucloud_lab) importable by its tests, as lab/gpucloud-lab runs it."""

import sys
from pathlib import Path

LAB = str(Path(__file__).resolve().parents[3] / "lab")
if LAB not in sys.path:
    sys.path.insert(0, LAB)
