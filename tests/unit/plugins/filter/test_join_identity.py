# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters kubeconfig_cluster and ca_pins, as a template calls them (role node_join)."""
from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpucloud.baremetal.plugins.filter.join_identity import FilterModule

FILTERS = FilterModule().filters()


def test_both_filters_are_there() -> None:
    assert set(FILTERS) == {"kubeconfig_cluster", "ca_pins"}


def test_a_file_that_is_no_kubeconfig_is_a_problem_not_an_error() -> None:
    found = FILTERS["kubeconfig_cluster"]("garbage: [")
    assert found["ca_pins"] == [] and found["problem"]


@pytest.mark.parametrize("value", [None, 3, ["a"], {"clusters": []}])
def test_what_is_no_text_is_refused_naming_the_filter(value: object) -> None:
    with pytest.raises(AnsibleFilterError, match="kubeconfig_cluster: expects"):
        FILTERS["kubeconfig_cluster"](value)
    with pytest.raises(AnsibleFilterError, match="ca_pins: expects"):
        FILTERS["ca_pins"](value)


def test_a_broken_certificate_is_an_error_naming_the_filter() -> None:
    with pytest.raises(AnsibleFilterError, match="ca_pins: CA hash"):
        FILTERS["ca_pins"]("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
