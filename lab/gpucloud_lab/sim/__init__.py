# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SIMULATIONS: what cannot exist on this machine (switch ASICs, GPUs, pods), one file each, named `*_sim.py`."""
