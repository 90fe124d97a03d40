"""Bad-input rows of tensor4all.spectra: dynamical correlations, spectral functions, linear prediction."""

from __future__ import annotations

import numpy as np

import tensor4all as t4a
from tensor4all import models

from .common import new_table
from .networks import NW_NAN

ROWS, row = new_table()


# ---- dynamical correlations and spectral functions (tensor4all.spectra) -------
SP_H, SP_PSI = models.heisenberg(6), t4a.MPS.random(6, bond_dim=2, seed=3)
SP_UP = t4a.MPS.product_state([0] * 6)
SP_FERMIONS = models.spinless_fermions(6, conserve=None)
SP_G = t4a.DynamicalCorrelation(np.linspace(0.0, 1.0, 11), np.ones((11, 6)), 3, ("Sz", "Sz"))
SP_T = dict(t_final=0.2, dt=0.1)
for label, args, kwargs, exc, fragment in (
    (
        "wrong-local-space",
        (SP_H, SP_PSI, "C", "Cdag"),
        SP_T,
        t4a.UnknownOperatorError,
        "not an operator of the Hamiltonian's local space 'spin-1/2'",
    ),
    ("matrix-dimension", (SP_H, SP_PSI, np.eye(3), "Sz"), SP_T, t4a.DimensionMismatchError, "must be 2x2"),
    ("parity-mismatch", (SP_FERMIONS, SP_PSI, "C", "N"), SP_T, t4a.InvalidOptionError, "odd under the fermion parity"),
    (
        "t_final-not-multiple",
        (SP_H, SP_PSI, "Sz", "Sz"),
        dict(t_final=0.25, dt=0.1),
        t4a.InvalidOptionError,
        "not a multiple of dt",
    ),
    ("dt-zero", (SP_H, SP_PSI, "Sz", "Sz"), dict(t_final=0.2, dt=0.0), t4a.InvalidOptionError, "dt must be positive"),
    ("t_final-nan", (SP_H, SP_PSI, "Sz", "Sz"), dict(t_final=NW_NAN, dt=0.1), t4a.InvalidOptionError, "finite"),
    (
        "method",
        (SP_H, SP_PSI, "Sz", "Sz"),
        dict(SP_T, method="rk4"),
        t4a.InvalidOptionError,
        "valid methods: tdvp, tebd",
    ),
    (
        "order-tdvp",
        (SP_H, SP_PSI, "Sz", "Sz"),
        dict(SP_T, order=4),
        t4a.InvalidOptionError,
        "order is the Trotter order",
    ),
    ("order-3", (SP_H, SP_PSI, "Sz", "Sz"), dict(SP_T, method="tebd", order=3), t4a.InvalidOptionError, "2 or 4"),
    ("center-range", (SP_H, SP_PSI, "Sz", "Sz"), dict(SP_T, center=9), t4a.SiteOutOfRangeError, "outside the chain"),
    ("center-str", (SP_H, SP_PSI, "Sz", "Sz"), dict(SP_T, center="3"), t4a.Tensor4allTypeError, "center must be"),
    ("max_bond-0", (SP_H, SP_PSI, "Sz", "Sz"), dict(SP_T, max_bond=0), t4a.BondDimensionError, "max_bond"),
    ("chi", (SP_H, SP_PSI, "Sz", "Sz"), dict(SP_T, chi=8), t4a.Tensor4allTypeError, "did you mean max_bond="),
    ("H-str", ("heisenberg", SP_PSI, "Sz", "Sz"), SP_T, t4a.Tensor4allTypeError, "H must be an MPO"),
    (
        "ground-result",
        (SP_H, type("Result", (), {"state": SP_PSI})(), "Sz", "Sz"),
        SP_T,
        t4a.Tensor4allTypeError,
        "pass its .state",
    ),
    ("sites-mismatch", (models.heisenberg(5), SP_PSI, "Sz", "Sz"), SP_T, t4a.DimensionMismatchError, "6 sites"),
    ("zero-ground", (SP_H, t4a.MPS([np.zeros((1, 2, 1))] * 6), "Sz", "Sz"), SP_T, t4a.ZeroNormError, "norm 0"),
    ("annihilated", (SP_H, SP_UP, "S-", "S+"), SP_T, t4a.ZeroNormError, "B_c|0> = 0"),
):
    row(f"dynamical_correlation-{label}", t4a.dynamical_correlation, args, exc, fragment, **kwargs)
for label, args, kwargs, exc, fragment in (
    ("G-array", (np.ones((3, 3)),), {}, t4a.Tensor4allTypeError, "must be a DynamicalCorrelation"),
    ("window", (SP_G,), dict(window="box"), t4a.InvalidOptionError, "valid windows: gaussian, hann, none"),
    ("omega-nyquist", (SP_G,), dict(omega=[0.0, 40.0]), t4a.WindowResolutionError, "Nyquist frequency"),
    ("omega-too-fine", (SP_G,), dict(omega=np.linspace(0.0, 1.0, 50)), t4a.WindowResolutionError, "coarser grid"),
    ("omega-nan", (SP_G,), dict(omega=[0.0, NW_NAN]), t4a.NonFiniteError, "NaN"),
    ("omega-2d", (SP_G,), dict(omega=np.ones((2, 2))), t4a.DimensionMismatchError, "1-D"),
    ("q-complex", (SP_G,), dict(q=[1j]), t4a.Tensor4allTypeError, "real numbers"),
    ("extend-below-1", (SP_G,), dict(extend=0.5), t4a.InvalidOptionError, ">= 1"),
    ("negative_times", (SP_G,), dict(negative_times="mirror"), t4a.InvalidOptionError, "'conjugate', 'zero'"),
    (
        "conjugate-non-hermitian",
        (t4a.DynamicalCorrelation([0.0, 0.1], np.ones((2, 6)), 3, ("Sz", "Sx"), hermitian_pair=False),),
        {},
        t4a.InvalidOptionError,
        "negative_times='zero'",
    ),
):
    row(f"spectral_function-{label}", t4a.spectral_function, args, exc, fragment, **kwargs)
for label, kwargs, exc, fragment in (
    ("n_moments-1", dict(n_moments=1), t4a.InvalidOptionError, "n_moments must be an integer >= 2"),
    ("kernel", dict(n_moments=10, kernel="lorentz"), t4a.InvalidOptionError, "valid kernels: jackson, none"),
    ("bounds-order", dict(n_moments=10, bounds=(1.0, -1.0)), t4a.InvalidOptionError, "E_min < E_max"),
    ("bounds-str", dict(n_moments=10, bounds="auto"), t4a.Tensor4allTypeError, "bounds must be a pair"),
    ("omega-str", dict(n_moments=10, bounds=(-3.0, 3.0), omega="all"), t4a.Tensor4allTypeError, "omega"),
    ("threads-negative", dict(n_moments=10, threads=-1), t4a.InvalidOptionError, "threads must be None"),
    ("threads-float", dict(n_moments=10, threads=1.5), t4a.Tensor4allTypeError, "threads must be None"),
):
    row(
        f"spectral_function_chebyshev-{label}",
        t4a.spectral_function_chebyshev,
        (SP_H, SP_PSI, "Sz", "Sz"),
        exc,
        fragment,
        **kwargs,
    )
row(
    "spectral_function_chebyshev-wrong-local-space",
    t4a.spectral_function_chebyshev,
    (SP_H, SP_PSI, "Cdag", "C"),
    t4a.UnknownOperatorError,
    "local space 'spin-1/2'",
    n_moments=10,
)
for label, args, kwargs, exc, fragment in (
    ("3d", (np.ones((4, 2, 2)), 2), {}, t4a.DimensionMismatchError, "1-D (one series) or 2-D"),
    ("nan", (np.array([1.0, NW_NAN, 1.0, 1.0]), 2), {}, t4a.NonFiniteError, "NaN"),
    ("str", ("abc", 2), {}, t4a.Tensor4allTypeError, "series"),
    ("n_predict", (np.ones(10), -1), {}, t4a.InvalidOptionError, "n_predict must be an integer >= 0"),
    ("window", (np.ones(10), 2), dict(n_fit=8, n_coefficients=4), t4a.InvalidOptionError, "n_fit + n_coefficients"),
    ("rcond", (np.ones(10), 2), dict(rcond=2.0), t4a.InvalidOptionError, "rcond"),
):
    row(f"linear_prediction-{label}", t4a.linear_prediction, args, exc, fragment, **kwargs)
row("window_resolution-name", t4a.window_resolution, ("box", 1.0), t4a.InvalidOptionError, "valid windows")
row("window_resolution-zero", t4a.window_resolution, ("hann", 0.0), t4a.InvalidOptionError, "t_final must be positive")
row("window_resolution-str", t4a.window_resolution, ("hann", "1"), t4a.Tensor4allTypeError, "t_final")
for label, args, kwargs, exc, fragment in (
    ("times-uneven", ([0.0, 0.1, 0.3], np.ones((3, 2)), 0), {}, t4a.InvalidOptionError, "equal steps"),
    ("times-from-1", ([1.0, 1.1], np.ones((2, 2)), 0), {}, t4a.InvalidOptionError, "start at 0"),
    ("values-shape", ([0.0, 0.1], np.ones((3, 2)), 0), {}, t4a.DimensionMismatchError, "(len(times), L)"),
    ("values-nan", ([0.0, 0.1], np.full((2, 2), NW_NAN), 0), {}, t4a.NonFiniteError, "values holds NaN"),
    ("center", ([0.0, 0.1], np.ones((2, 2)), 2), {}, t4a.SiteOutOfRangeError, "outside the chain"),
    (
        "hermitian_pair",
        ([0.0, 0.1], np.ones((2, 2)), 0),
        dict(hermitian_pair="yes"),
        t4a.Tensor4allTypeError,
        "True or False",
    ),
):
    row(f"DynamicalCorrelation-{label}", t4a.DynamicalCorrelation, args, exc, fragment, **kwargs)
row(
    "DynamicalCorrelation.from_dict-missing",
    t4a.DynamicalCorrelation.from_dict,
    ({"times": [0.0, 0.1]},),
    t4a.InvalidOptionError,
    "lacks 'values', 'center'",
)
row(
    "DynamicalCorrelation.from_dict-as_dict-times",
    lambda: t4a.DynamicalCorrelation.from_dict({**SP_G.as_dict(), "times": [0.0] + [0.2] * 10}),
    (),
    t4a.InvalidOptionError,
    "equal steps",
)
