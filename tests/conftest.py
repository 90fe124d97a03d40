"""The placement switch of the test suite: ``pytest --placement {cpu,gpu,fakegpu}``
(or the environment variable ``TENFERRO_TEST_PLACEMENT``).

* ``cpu`` (default): every test on the CPU; tests marked ``gpu`` are skipped.
* ``gpu``: the tenferro tests run with ``tenferro.set_default_placement(gpu(0))``,
  so every tensor a test makes from host data lives on the GPU and every
  primitive, einsum and linalg call runs there through CuPy; tests marked
  ``cpu_only`` (host-memory facts: zero-copy NumPy views, CPU-only errors) are
  skipped, and so are tests outside ``tests/tenferro``. Without CuPy or a
  device, every test is skipped with that reason.
* ``fakegpu``: as ``gpu``, with the CPU stand-in ``tests/_fake_cupy.py`` in
  place of CuPy: no GPU needed, and any implicit host/device mixing raises.
"""

from __future__ import annotations

import os
import sys

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ("cpu", "gpu", "fakegpu")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--placement",
        choices=MODES,
        default=os.environ.get("TENFERRO_TEST_PLACEMENT", "cpu"),
        help="where the tenferro tests put their tensors (default: cpu; env TENFERRO_TEST_PLACEMENT)",
    )


def _device_unavailable() -> str | None:
    """Why GPU tests cannot run here, or None."""
    try:
        import cupy
    except ImportError:
        return "needs CuPy (the 'gpu' extra) and a GPU"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "needs a GPU: CuPy sees no device"
    except Exception as exc:  # noqa: BLE001  (CUDA driver errors have many types)
        return f"needs a GPU: CuPy cannot reach a device ({type(exc).__name__}: {exc})"
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cpu_only: a fact about host memory; skipped under --placement gpu")
    config.addinivalue_line(
        "markers",
        "device_sweeps: tensor4all's sweeps on a device; run in every mode (the "
        "CPU stand-in for CuPy unless --placement gpu)",
    )
    mode = config.getoption("--placement")
    config._tenferro_placement = mode
    config._tenferro_no_device = None
    if mode == "cpu":
        return
    if mode == "fakegpu":
        sys.path.insert(0, _HERE)
        import _fake_cupy
        import _fake_cuda_capture

        _fake_cupy.install()
        _use_emulated_cublas(_fake_cuda_capture.emulated_gemm)
    reason = _device_unavailable()
    config._tenferro_no_device = reason
    if reason is None:
        import hypothesis

        import tenferro as tf

        tf.set_default_placement(tf.gpu(0))
        # the first call of each CuPy kernel compiles it: no per-example deadline on a device
        hypothesis.settings.register_profile("device", deadline=None)
        hypothesis.settings.load_profile("device")


def _use_emulated_cublas(gemm) -> None:
    """Under the CPU stand-in for CuPy, tenferro.jit's captures call an emulation of cuBLAS
    (``tests/_fake_cuda_capture.py``) where a GPU calls the library through ctypes."""
    from tenferro import _capture_blas
    from tenferro.jit import _cuda_graph

    def make(cp, stream_ptr, device):
        return _capture_blas.CaptureBlas(cp, stream_ptr, device, gemm=gemm)

    _cuda_graph.make_capture_blas = make


def pytest_report_header(config: pytest.Config) -> str:
    mode = config._tenferro_placement
    if mode == "cpu":
        return "tenferro placement: cpu"
    import importlib

    why = config._tenferro_no_device
    version = "-" if why else importlib.import_module("cupy").__version__
    return f"tenferro placement: {mode} (CuPy {version}){'; ' + why if why else ''}"


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    mode = config._tenferro_placement
    tenferro_dir = os.path.join(_HERE, "tenferro") + os.sep
    for item in items:
        on_device = mode != "cpu"
        if not on_device:
            if item.get_closest_marker("gpu"):
                item.add_marker(pytest.mark.skip(reason="needs --placement gpu (CuPy and a GPU)"))
            continue
        if config._tenferro_no_device:
            item.add_marker(pytest.mark.skip(reason=f"--placement {mode}: {config._tenferro_no_device}"))
        elif not str(item.path).startswith(tenferro_dir) and not item.get_closest_marker("device_sweeps"):
            item.add_marker(pytest.mark.skip(reason=f"--placement {mode} runs the tenferro tests only"))
        elif item.get_closest_marker("cpu_only"):
            item.add_marker(pytest.mark.skip(reason="a fact about host memory (cpu_only)"))
