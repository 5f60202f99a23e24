# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_operator's DCGM exporter counter profile, read the way dcgm-exporter reads its collectors file.

``extract_counters`` follows dcgm-exporter 4.5.3-4.8.2's ``internal/pkg/counters/counter_config.go``
(``ReadCSVFile``: Go's encoding/csv with ``Comment = '#'``, every record as many fields as the first;
``ExtractCounters``: fields trimmed of spaces, exactly 3, the first a DCGM field name or legacy name of go-dcgm
(``dcgm.GetFieldID``/``IsLegacyField``) or one of the exporter's own counters, the second a Prometheus type of
``promMetricType``). The field names are go-dcgm's own (tests/upstream/dcgm-exporter/4.5.3-4.8.2/, with
their source); upstream's own counter files pass the same reading, so the reading is not stricter than theirs.
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
PROFILES = REPO / "roles" / "gpu_operator" / "files"
UPSTREAM = REPO / "tests" / "upstream" / "dcgm-exporter" / "4.5.3-4.8.2"
# internal/pkg/counters/const.go and variables.go of dcgm-exporter 4.5.3-4.8.2
EXPORTER_COUNTERS = {"DCGM_EXP_XID_ERRORS_COUNT", "DCGM_EXP_CLOCK_EVENTS_COUNT", "DCGM_EXP_GPU_HEALTH_STATUS",
                     "DCGM_EXP_P2P_STATUS"}
PROM_TYPES = {"gauge", "counter", "histogram", "summary", "label"}


def go_dcgm_fields() -> dict[str, int]:
    fields = {}
    for line in (UPSTREAM / "go-dcgm-fields.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, number, _kind = line.split()
            fields[name] = int(number)
    return fields


FIELDS = go_dcgm_fields()


class CounterError(ValueError):
    pass


def read_csv(text: str) -> list[list[str]]:
    """Go's encoding/csv ReadAll with Comment '#': comment and empty lines skipped, a record with another field
    count than the first is an error ("wrong number of fields"), a stray quote is an error."""
    records: list[list[str]] = []
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    for line in lines:  # Go's reader (LazyQuotes off): a quote only around a whole field
        for raw in re.split(r',(?=(?:[^"]*"[^"]*")*[^"]*$)', line):
            if '"' in raw and not (raw.startswith('"') and raw.endswith('"') and len(raw) > 1):
                raise CounterError(f'line {line!r}: bare " in non-quoted-field')
    try:
        for record in csv.reader(io.StringIO("\n".join(lines)), strict=True):
            if records and len(record) != len(records[0]):
                raise CounterError(f"record {record}: wrong number of fields")
            records.append(record)
    except csv.Error as err:
        raise CounterError(str(err)) from err
    return records


def extract_counters(text: str) -> list[tuple[str, str]]:
    """dcgm-exporter's ExtractCounters: (field name, Prometheus type) of each record, or the error it stops with."""
    out = []
    for i, record in enumerate(read_csv(text)):
        record = [r.strip(" ") for r in record]
        if len(record) != 3:
            raise CounterError(f"malformed CSV record; failed to parse line {i} ({record}), expected 3 fields")
        name, prom_type = record[0], record[1]
        if name not in FIELDS and name not in EXPORTER_COUNTERS:
            raise CounterError(f"could not find DCGM field; unknown ExporterCounter field '{name}'")
        if name in FIELDS and prom_type not in PROM_TYPES:
            raise CounterError(f"could not find Prometheus metric type '{prom_type}'")
        out.append((name, prom_type))
    return out


@pytest.mark.parametrize("name", ["default-counters.csv", "dcp-metrics-included.csv"])
def test_upstreams_own_counter_files_read_as_dcgm_exporter_reads_them(name: str) -> None:
    counters = extract_counters((UPSTREAM / name).read_text())
    assert ("DCGM_FI_DEV_GPU_TEMP", "gauge") in counters and len(counters) > 20


def test_the_reading_refuses_what_dcgm_exporter_refuses() -> None:
    good = "DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).\n"
    for bad, says in ((good + "DCGM_FI_DEV_GPU_TEMPERATURE, gauge, typo.\n", "could not find DCGM field"),
                      (good + "DCGM_FI_DEV_GPU_TEMP, gauge, in C, or F.\n", "wrong number of fields"),
                      ("DCGM_FI_DEV_GPU_TEMP, gauge, in C, or F.\n", "expected 3 fields"),
                      (good + "DCGM_FI_DEV_SM_CLOCK, gage, SM clock.\n", "Prometheus metric type 'gage'"),
                      (good + 'DCGM_FI_DEV_SM_CLOCK, gauge, the "SM clock.\n', 'bare " in non-quoted-field')):
        with pytest.raises(CounterError, match=says):
            extract_counters(bad)


def _profiles() -> list[str]:
    spec = yaml.safe_load((REPO / "roles" / "gpu_operator" / "meta" / "argument_specs.yml").read_text())
    return [c for c in spec["argument_specs"]["main"]["options"]["gpu_operator_dcgm_metrics"]["choices"]
            if c != "upstream"]


def test_every_profile_the_role_offers_is_a_file_dcgm_exporter_reads() -> None:
    assert _profiles() == ["gpucloud-v1"]
    for profile in _profiles():
        counters = extract_counters((PROFILES / f"dcgm-metrics-{profile}.csv").read_text())
        names = [counter[0] for counter in counters]
        assert len(names) == len(set(names)), "a field listed twice"


def test_profile_v1_has_what_the_fault_alerts_and_the_gate_read() -> None:
    counters = dict(extract_counters((PROFILES / "dcgm-metrics-gpucloud-v1.csv").read_text()))
    wanted = {
        # ECC single/double bit, volatile and aggregate
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": "counter", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": "counter",
        "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL": "counter", "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL": "counter",
        # row remapping
        "DCGM_FI_DEV_ROW_REMAP_FAILURE": "gauge", "DCGM_FI_DEV_ROW_REMAP_PENDING": "gauge",
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": "counter",
        # NVLink CRC, replay, recovery
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": "counter",
        "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL": "counter",
        "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL": "counter",
        "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL": "counter",
        # XIDs, throttling
        "DCGM_FI_DEV_XID_ERRORS": "gauge", "DCGM_EXP_XID_ERRORS_COUNT": "gauge",
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": "gauge", "DCGM_EXP_CLOCK_EVENTS_COUNT": "gauge",
        "DCGM_FI_DEV_THERMAL_VIOLATION": "counter",
        # SM active and occupancy (profiling fields)
        "DCGM_FI_PROF_SM_ACTIVE": "gauge", "DCGM_FI_PROF_SM_OCCUPANCY": "gauge",
    }
    assert {k: counters.get(k) for k in wanted} == wanted
    # Everything upstream collects by default is still collected (their names; the throttle-reason field is
    # go-dcgm's current name for the id upstream's legacy name has).
    upstream = dict(extract_counters((UPSTREAM / "default-counters.csv").read_text()))
    assert set(upstream) - set(counters) == set()
