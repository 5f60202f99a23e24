# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The real components the lab runs: network namespaces, nspawn hosts, the boot target, API servers, BMC emulators."""
