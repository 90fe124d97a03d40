"""The traced TEBD's splits drop singular values below the SVD's resolution
(:func:`tensor4all.linalg.truncation.resolved_values`): with ``cutoff=0`` the second derivative of
``ln Z`` through a purification on charge sectors divided by the differences of rounding-level values
(C = 2e53, E off by 7e5); it now equals the dense run's, and both the exact value to the Trotter error.
Exact values by diagonalizing the explicit Hamiltonian here."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all.linalg.truncation import resolved_values


def heisenberg_matrix(L: int, h: float) -> np.ndarray:
    """``sum_i S_i . S_{i+1} - h sum_i Sz_i`` on ``L`` open sites, from Kronecker products."""
    sx = np.array([[0, 0.5], [0.5, 0]])
    sy = np.array([[0, -0.5j], [0.5j, 0]])
    sz = np.diag([0.5, -0.5])

    def site(op: np.ndarray, i: int) -> np.ndarray:
        return np.kron(np.kron(np.eye(2**i), op), np.eye(2 ** (L - i - 1)))

    H = sum(site(s, i) @ site(s, i + 1) for i in range(L - 1) for s in (sx, sy, sz))
    return np.real(H - h * sum(site(sz, i) for i in range(L)))


def test_log_z_second_derivative_at_cutoff_zero_on_sectors():
    L, h, beta = 6, 0.3, 1.0
    e = np.linalg.eigvalsh(heisenberg_matrix(L, h))
    p = np.exp(-beta * (e - e.min()))
    p /= p.sum()
    E, C = (p * e).sum(), beta**2 * ((p * e * e).sum() - (p * e).sum() ** 2)
    H = t4a.models.heisenberg(L, h=h)
    runs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the gauge warnings of reverse-mode checks do not apply here
        for conserve in ("Sz", "none"):
            runs[conserve] = t4a.thermodynamics(
                H, beta, dbeta=0.1, order=2, cutoff=0.0, every=10, conserve=conserve, differentiate="log_z"
            )
    sz, dense = runs["Sz"], runs["none"]
    assert abs(sz.specific_heat[-1] - dense.specific_heat[-1]) < 1e-8
    assert abs(sz.energy[-1] - dense.energy[-1]) < 1e-10
    # second-order Trotter at dbeta = 0.1: 6.6e-4 in C and 2.2e-4 in E
    assert abs(sz.specific_heat[-1] - C) < 1e-3 and abs(sz.energy[-1] - E) < 5e-4


def test_log_z_second_derivative_at_fourth_order_on_sectors():
    """Fourth-order Trotter, the Sz sectors: the null vectors of a split's SVD (values of 1e-19 to
    1e-24 beside 1e-3) rotate among themselves at rates 1/(s_j - s_i), and the second derivative took
    the kept vectors' null-space terms as sums over them (C 2.8e-6 off at beta = 0.1, 5.7e-4 at beta =
    2); tenferro's SVD rule now writes those terms through the range (docs/ad/gauge.md)."""
    L, h, beta = 6, 0.3, 0.1
    e = np.linalg.eigvalsh(heisenberg_matrix(L, h))
    p = np.exp(-beta * (e - e.min()))
    p /= p.sum()
    C = beta**2 * ((p * e * e).sum() - (p * e).sum() ** 2)
    H = t4a.models.heisenberg(L, h=h)
    runs = {
        conserve: t4a.thermodynamics(
            H, beta, dbeta=0.05, order=4, cutoff=1e-16, conserve=conserve, differentiate="log_z"
        ).specific_heat[-1]
        for conserve in ("Sz", "none")
    }
    assert abs(runs["Sz"] - runs["none"]) < 1e-12
    assert abs(runs["Sz"] - C) < 1e-8  # fourth-order Trotter at dbeta = 0.05: 4e-10


def test_resolved_values_drop_rounding_across_sectors():
    """The tolerance is the whole matrix's (``matrix_rank``'s), not each sector's own largest value."""
    values = {0: np.array([1.0, 1e-3]), 1: np.array([1e-15, 1e-40]), 2: np.array([1e-13])}
    out = resolved_values(values, 10, 12)  # tolerance 12 * eps = 2.7e-15
    np.testing.assert_array_equal(out[0], [1.0, 1e-3])
    np.testing.assert_array_equal(out[1], [0.0, 0.0])
    np.testing.assert_array_equal(out[2], [1e-13])
    assert resolved_values({}, 3, 3) == {}


@pytest.mark.parametrize("scale", [1e-30, 1.0, 1e30])
def test_resolved_values_are_relative(scale):
    out = resolved_values({0: scale * np.array([1.0, 1e-17]), 1: scale * np.array([1e-10])}, 4, 4)
    assert out[0][1] == 0.0 and out[1][0] == scale * 1e-10 and out[0][0] == scale
