# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every lab component uses: the CLI, the lab's addresses and paths (config), helpers, the component framework."""
