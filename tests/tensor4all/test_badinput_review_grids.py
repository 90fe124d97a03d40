"""Bad-input review (/tmp/w/review_badinput.md), items 1.4, 1.6, 2.2-2.5 and the Section 3 type errors of
spectra: typed errors naming the function and the argument, before any expensive work."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all import models
from tensor4all.tools.checks import check_time_grid

H6 = models.heisenberg(6)
PSI6 = t4a.MPS.random(6, bond_dim=2, seed=1)


# ---- 1.4 a one-sample series ---------------------------------------------------------------
@pytest.mark.parametrize("series", [np.array([3.0]), np.ones((1, 2)), np.zeros(0)])
def test_linear_prediction_too_short(series):
    with pytest.raises(t4a.InvalidOptionError, match="linear_prediction: series has [01] samples?; at least 2"):
        t4a.linear_prediction(series, 2)
    np.testing.assert_allclose(t4a.linear_prediction(np.array([3.0, 3.0]), 2), [3.0, 3.0])


# ---- 1.6 window_resolution of a subnormal t_final --------------------------------------------
@pytest.mark.parametrize("window", ["gaussian", "hann", "none"])
def test_window_resolution_subnormal(window):
    with pytest.raises(t4a.InvalidOptionError, match="window_resolution: t_final = 1e-320 is too small"):
        t4a.window_resolution(window, 1e-320)
    assert np.isfinite(t4a.window_resolution(window, 1e-300))


# ---- 2.2 subnormal dt / dbeta; the ratio printed as a float ---------------------------------
TOO_SMALL = [
    ("dynamical_correlation", lambda d: t4a.dynamical_correlation(H6, PSI6, "Sz", "Sz", t_final=0.2, dt=d), "dt"),
    ("thermal_state", lambda d: t4a.thermal_state(models.xx(4), 0.2, dbeta=d), "dbeta"),
    ("thermodynamics", lambda d: t4a.thermodynamics(models.xx(4), 0.2, dbeta=d), "dbeta"),
    ("metts", lambda d: t4a.metts(models.xx(4), 0.2, 2, dbeta=d), "dbeta"),
]


@pytest.mark.parametrize("name, call, arg", TOO_SMALL, ids=[t[0] for t in TOO_SMALL])
@pytest.mark.parametrize("small, ratio", [(1e-320, "inf"), (1e-300, "2e+299")])
def test_step_too_small(name, call, arg, small, ratio):
    with pytest.raises(t4a.InvalidOptionError) as info:
        call(small)
    msg = str(info.value)
    assert msg.startswith(f"{name}: {arg} = {small!r} is too small for ")
    assert f"= {ratio} steps; give a larger {arg}" in msg
    assert len(msg) < 200  # no 300-digit integer


# ---- 2.3 itebd / itdvp: the shared cap on the number of steps ----------------------------------
@pytest.mark.parametrize("fn", ["itebd", "itdvp"])
@pytest.mark.parametrize("dt, ratio", [(1e-320, "inf"), (1e-300, "2e+299"), (1e-12, "2e+11"), (1e-9, "2e+08")])
def test_infinite_evolution_step_cap(fn, dt, ratio):
    H = t4a.infinite_model("xx", cell=2)
    psi = t4a.iMPS.product_state([0, 1])
    with pytest.raises(t4a.InvalidOptionError, match=rf"{fn}: dt = {dt!r} is too small for t_final = 0.2: "):
        getattr(t4a, fn)(H, psi, 0.2, dt)


def test_time_grid_cap_is_the_correlation_cap():
    from tensor4all.tools.checks import MAX_GRID_STEPS  # the one limit (dynamical_correlation's 1e7 steps)

    assert check_time_grid(0.2 * MAX_GRID_STEPS, 0.2, "x")[2] == MAX_GRID_STEPS
    with pytest.raises(t4a.InvalidOptionError, match="at most 1e\\+07 steps"):
        check_time_grid(0.2 * (MAX_GRID_STEPS + 1), 0.2, "x")
    with pytest.raises(t4a.InvalidOptionError, match="at most 1e\\+07 steps"):
        t4a.dynamical_correlation(H6, PSI6, "Sz", "Sz", t_final=0.2 * (MAX_GRID_STEPS + 1), dt=0.2)


# ---- 2.4 huge n_moments / n_predict: a memory error before allocating -------------------------
@pytest.mark.parametrize("n", [10**12, 10**17])
def test_chebyshev_huge_moments(n):
    with pytest.raises(t4a.Tensor4allMemoryError, match=f"spectral_function_chebyshev: n_moments = {n} .*needs"):
        t4a.spectral_function_chebyshev(H6, PSI6, "Sz", "Sz", n_moments=n)


@pytest.mark.parametrize("n", [10**15, 10**20])
def test_linear_prediction_huge_n_predict(n):
    with pytest.raises(t4a.Tensor4allMemoryError, match=f"linear_prediction: n_predict = {n} needs"):
        t4a.linear_prediction(np.ones(10), n)


# ---- Section 3: wrong types are Tensor4allTypeError ---------------------------------------------
@pytest.mark.parametrize("n", ["10", 10.0, True, np.bool_(True)])
def test_chebyshev_n_moments_type(n):
    with pytest.raises(t4a.Tensor4allTypeError, match="spectral_function_chebyshev: n_moments must be an integer"):
        t4a.spectral_function_chebyshev(H6, PSI6, "Sz", "Sz", n_moments=n)
    with pytest.raises(t4a.InvalidOptionError, match="n_moments must be an integer >= 2, got 1"):
        t4a.spectral_function_chebyshev(H6, PSI6, "Sz", "Sz", n_moments=1)


@pytest.mark.parametrize("n", [2.5, True, 2.0, "2"])
def test_linear_prediction_n_predict_type(n):
    with pytest.raises(t4a.Tensor4allTypeError, match="linear_prediction: n_predict must be an integer >= 0"):
        t4a.linear_prediction(np.ones(10), n)
    with pytest.raises(t4a.InvalidOptionError, match="n_predict must be an integer >= 0, got -1"):
        t4a.linear_prediction(np.ones(10), -1)


# ---- CLI: exit 2 with one line, before the ground state (2.2, 2.4, 2.5) ------------------------
CLI = [
    (["spectrum", "--L", "6", "--t-final", "0.2", "--dt", "1e-320"], "dt = 1e-320 is too small"),
    (["spectrum", "--L", "6", "--t-final", "0.2", "--extend", "1e300"], "argument --extend: 1e+300"),
    (["spectrum", "--L", "6", "--t-final", "0.2", "--extend", "101"], "at most 100 accepted"),
    (["spectrum", "--L", "6", "--method", "chebyshev", "--moments", "1000000000000"], "argument --moments: "),
    (["thermal", "--L", "4", "--beta-max", "0.2", "--dbeta", "1e-320"], "argument --dbeta: --dbeta = 1e-320 is too"),
]


@pytest.mark.parametrize("argv, fragment", CLI, ids=[" ".join(a[-2:]) for a, _ in CLI])
def test_cli_rejects_before_running(argv, fragment, tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "tensor4all", *argv], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and "SPECTRUM" not in out.stdout + out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert "error: " in last and fragment in last, last
    assert not list(tmp_path.iterdir())
