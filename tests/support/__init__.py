# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers and data shared by tests and benchmarks (fleet generators, fixtures, simulations)."""
