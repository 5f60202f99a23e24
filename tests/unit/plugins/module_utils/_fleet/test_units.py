# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU and memory amounts (``units``): which fleet values are amounts, what they come to in bytes and cores,
and KAI's queue units (millicores, MB of 10^6 bytes), with -1 (unlimited) kept as it is."""

from __future__ import annotations

import math

import pytest

from ansible_collections.gpucloud.baremetal.plugins.module_utils._fleet.units import (
    CPU_WHAT,
    MEMORY_WHAT,
    UNLIMITED,
    cpu_cores,
    kai_cpu,
    kai_memory,
    memory_bytes,
)


@pytest.mark.parametrize(("value", "expected"), [
    ("512", 512), ("1k", 10 ** 3), ("1M", 10 ** 6), ("1G", 10 ** 9), ("1T", 10 ** 12), ("1P", 10 ** 15),
    ("1E", 10 ** 18), ("1Ki", 2 ** 10), ("1Mi", 2 ** 20), ("1Gi", 2 ** 30), ("512Gi", 512 * 2 ** 30),
    ("1Ti", 2 ** 40), ("1Pi", 2 ** 50), ("1Ei", 2 ** 60), ("1.5Gi", 1.5 * 2 ** 30), ("0", 0), ("0Gi", 0),
    (0, 0), (-1, -1),
])
def test_memory_quantities_in_bytes(value, expected) -> None:
    assert memory_bytes(value) == expected


@pytest.mark.parametrize("value", [
    "1Gb", "1gi", "1 Gi", "Gi", "1.Gi", ".5Gi", "-1", "-1Gi", "1e3", "1m", "", "lots", "1Gi\n", "9" * 400 + "Ei",
    512, -2, 1.5, -1.0, True, False, None, ["1Gi"],
])
def test_what_is_not_a_memory_quantity(value) -> None:
    assert memory_bytes(value) is None
    assert kai_memory(value) is None


@pytest.mark.parametrize(("value", "expected"), [(64, 64), (0.5, 0.5), (0, 0), (0.0, 0.0), (-1, -1), (-1.0, -1)])
def test_cpu_cores(value, expected) -> None:
    assert cpu_cores(value) == expected


@pytest.mark.parametrize("value", [-2, -0.5, "8", "500m", True, False, None, math.nan, [1], math.inf, -math.inf])
def test_what_is_not_a_cpu_amount(value) -> None:
    assert cpu_cores(value) is None
    assert kai_cpu(value) is None


@pytest.mark.parametrize(("value", "expected"), [
    ("1T", 10 ** 6), ("1Ti", 1099512), ("1Mi", 1), ("1400k", 1), ("1600k", 2), ("0.5G", 500), ("0", 0),
    (0, 0), (-1, UNLIMITED),
])
def test_kai_memory_is_megabytes_of_ten_to_the_six_rounded(value, expected: int) -> None:
    assert kai_memory(value) == expected
    assert isinstance(kai_memory(value), int)


@pytest.mark.parametrize(("value", "expected"), [
    (1, 1000), (0.25, 250), (1.0006, 1001), (128, 128000), (0, 0), (-1, UNLIMITED), (-1.0, UNLIMITED),
])
def test_kai_cpu_is_millicores_rounded(value, expected: int) -> None:
    assert kai_cpu(value) == expected
    assert isinstance(kai_cpu(value), int)


def test_the_examples_the_messages_give_are_accepted() -> None:
    """The texts that errors show users name forms the parsers take."""
    assert "512Gi" in MEMORY_WHAT and "1T" in MEMORY_WHAT and "-1 for unlimited" in MEMORY_WHAT
    assert None not in (memory_bytes("512Gi"), memory_bytes("1T"), memory_bytes(0), memory_bytes(-1))
    assert "64" in CPU_WHAT and "0.5" in CPU_WHAT and "-1 for unlimited" in CPU_WHAT
    assert None not in (cpu_cores(64), cpu_cores(0.5), cpu_cores(-1))
