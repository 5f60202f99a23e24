# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fake NVML the unit tests use, held against the real nvidia-ml-py (a test requirement; no GPU needed:
importing pynvml does not load the driver library)."""
from __future__ import annotations

import inspect


def test_the_fake_nvml_matches_the_installed_library() -> None:
    """tests/support/fake_nvml.py keeps the real names, signatures and error values."""
    import pynvml

    from tests.support import fake_nvml

    for name, member in inspect.getmembers(fake_nvml.FakeNvml, inspect.isfunction):
        if not name.startswith("nvml"):
            continue
        real = getattr(pynvml, name, None)
        assert real is not None, "pynvml has no %s" % name
        fake_params = list(inspect.signature(member).parameters)[1:]  # without self
        assert fake_params == list(inspect.signature(real).parameters), name
    for name in dir(fake_nvml):
        if name.startswith("NVMLError_"):
            assert getattr(pynvml, name)().value == getattr(fake_nvml, name)().value, name
        elif name == "NVML_NVLINK_MAX_LINKS":  # 18 before nvidia-ml-py 12.550, 36 since
            assert getattr(pynvml, name) in (18, 36)
        elif name.startswith(("NVML_", "nvmlEventType", "nvmlClocksEventReason")) and hasattr(pynvml, name):
            assert getattr(pynvml, name) == getattr(fake_nvml, name), name
    assert str(pynvml.NVMLError(3)) == str(fake_nvml.NVMLError(3)) == "Not Supported"
