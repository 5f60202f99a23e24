# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SIMULATIONS of what cannot exist on this machine (switch ASICs, GPUs, pods): each one a file named `*_sim.py`.

Beside them: nvue_schema.py (the NVUE simulation's path table, NVIDIA's own model) and controller.py
(the lab controller's loop, which runs four of them).
"""
