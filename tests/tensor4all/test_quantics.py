"""Quantics grids, quantics tensor trains and quantics operators (issue 26, part b), each
against an independent answer: bit arithmetic on integers, closed-form sums and
integrals, permutation matrices written out entry by entry, and NumPy's FFT."""

from __future__ import annotations

import doctest
import importlib
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all import quantics as Q
from tidu.testing import check_grads

UNFOLDINGS = ("fused", "interleaved")


def _bitrev(y: int, R: int) -> int:
    return int(format(y, f"0{R}b")[::-1], 2)


def _all_indices(g: Q.Grid) -> np.ndarray:
    return np.stack(np.meshgrid(*[np.arange(g.n_points)] * g.dims, indexing="ij"), -1).reshape(-1, g.dims)


def test_the_docstring_examples_run():
    for mod in (Q, importlib.import_module(Q.Grid.__module__)):
        assert doctest.testmod(mod).failed == 0


# ---- grids ------------------------------------------------------------------------------------
def test_grid_one_dimension_bits_and_coordinates():
    g = Q.Grid(3, 0.0, 1.0)
    assert [g.grididx_to_quantics(i) for i in (0, 5, 7)] == [(0, 0, 0), (1, 0, 1), (1, 1, 1)]
    assert g.quantics_to_grididx((1, 0, 1)) == 5
    assert g.grididx_to_origcoord(5) == 0.625 and g.step == (0.125,)
    assert g.origcoord_to_grididx(0.63) == 5 and g.origcoord_to_grididx(1.0) == 7  # nearest, clamped
    assert g.local_dims == [2, 2, 2] and g.n_points == 8
    ge = Q.Grid(3, -1.0, 1.0, include_endpoint=True)
    assert ge.grididx_to_origcoord(0) == -1.0 and ge.grididx_to_origcoord(7) == 1.0
    assert ge.step == (2.0 / 7,)


@pytest.mark.parametrize("unfolding", UNFOLDINGS)
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_grid_index_maps_against_integer_bits(unfolding, dims):
    R = 5
    g = Q.Grid(R, lower=[-1.0] * dims, upper=[2.0 + d for d in range(dims)], dims=dims, unfolding=unfolding)
    rng = np.random.default_rng(dims)
    idx = rng.integers(0, 2**R, size=(40, dims))
    q = g.grididx_to_quantics(idx if dims > 1 else idx[:, 0])
    assert q.shape == (40, g.n_sites) and g.n_sites == (R if unfolding == "fused" else R * dims)
    for row, digits in zip(idx, q):
        bits = [[(int(i) >> (R - 1 - k)) & 1 for k in range(R)] for i in row]  # bit k of each dimension
        want = (
            [sum(bits[d][k] << d for d in range(dims)) for k in range(R)]
            if unfolding == "fused"
            else [bits[d][k] for k in range(R) for d in range(dims)]
        )
        assert list(digits) == want
        one = tuple(int(v) for v in row) if dims > 1 else int(row[0])
        assert g.grididx_to_quantics(one) == tuple(want)
        assert g.quantics_to_grididx(tuple(want)) == one
    back = g.quantics_to_grididx(q)
    np.testing.assert_array_equal(back if dims > 1 else back[:, None], idx)
    x = g.grididx_to_origcoord(idx if dims > 1 else idx[:, 0])
    x = x if dims > 1 else x[:, None]
    np.testing.assert_allclose(x, np.asarray(g.lower) + idx * np.asarray(g.step), rtol=0, atol=1e-15)
    again = g.origcoord_to_grididx(x if dims > 1 else x[:, 0])
    np.testing.assert_array_equal(again if dims > 1 else again[:, None], idx)


def test_grid_extended_precision_coordinates():
    g = Q.Grid(40, 0.0, math.log(20.0))
    i = 2**40 - 12345
    x = g.grididx_to_origcoord(i, dtype=np.longdouble)
    assert isinstance(x, np.longdouble)
    exact = np.longdouble(math.log(20.0)) * np.longdouble(i) / np.longdouble(2**40)
    assert abs(x - exact) <= 4 * np.finfo(np.longdouble).eps * exact
    assert abs(float(x) - g.grididx_to_origcoord(i)) <= 4e-16


def test_grid_errors_name_what_was_wrong():
    g = Q.Grid(4)
    with pytest.raises(Q.GridRangeError, match="outside 0..15"):
        g.grididx_to_quantics(16)
    with pytest.raises(IndexError):
        g.quantics_to_grididx((0, 2, 0, 0))
    with pytest.raises(ValueError, match="outside"):
        g.origcoord_to_grididx(1.5)
    with pytest.raises(t4a.InvalidOptionError, match="'fused', 'interleaved'"):
        Q.Grid(4, unfolding="zigzag")
    with pytest.raises(t4a.InvalidOptionError, match="below upper"):
        Q.Grid(4, 1.0, 0.0)
    with pytest.raises(t4a.DimensionMismatchError, match="2 entries"):
        Q.Grid(4, [0.0], [1.0, 2.0], dims=2)


# ---- quantics tensor trains -----------------------------------------------------------------------
def test_qtt_of_exp_sums_and_integrates_as_closed_forms():
    R = 10
    g = Q.Grid(R, 0.0, 1.0)
    h = 2.0**-R
    qtt = Q.QuanticsTT.from_values(np.exp(g.grididx_to_origcoord(np.arange(2**R))), g)
    assert qtt.rank == 1  # exp(x) is a product over the bits
    riemann = h * math.expm1(1.0) / math.expm1(h)  # h * sum_i e^{ih}, a geometric sum
    assert abs(qtt.integral() - riemann) < 1e-13
    assert abs(qtt.sum() - riemann / h) < 1e-10
    assert abs(qtt.evaluate(0.5) - math.exp(0.5)) < 1e-14
    np.testing.assert_allclose(
        qtt.evaluate_index(np.array([0, 3, 1023])), np.exp(np.array([0, 3, 1023]) * h), rtol=1e-14
    )
    ge = Q.Grid(R, 0.0, 1.0, include_endpoint=True)
    he = 1.0 / (2**R - 1)
    qe = Q.QuanticsTT.from_values(np.exp(ge.grididx_to_origcoord(np.arange(2**R))), ge)
    trapezoid = he * (math.expm1(1.0 + he) / math.expm1(he) - 0.5 * (1.0 + math.e))
    assert abs(qe.integral() - trapezoid) < 1e-13
    assert abs(qe.integral() - math.expm1(1.0)) < he**2  # O(h^2) from the exact integral


@pytest.mark.parametrize("unfolding", UNFOLDINGS)
def test_qtt_in_two_dimensions_values_and_integral(unfolding):
    g = Q.Grid(5, [0.0, -1.0], [1.0, 1.0], dims=2, unfolding=unfolding, include_endpoint=True)
    xy = g.grididx_to_origcoord(_all_indices(g))
    vals = (np.exp(xy[:, 0]) * xy[:, 1] ** 2).reshape(32, 32)
    qtt = Q.QuanticsTT.from_values(vals, g)
    np.testing.assert_allclose(qtt.to_values(), vals, atol=1e-13)
    hx, hy = g.step
    wx = np.full(32, hx)
    wx[[0, -1]] /= 2
    wy = np.full(32, hy)
    wy[[0, -1]] /= 2
    assert abs(qtt.integral() - wx @ vals @ wy) < 1e-12  # the 2D trapezoidal rule
    assert abs(qtt.integral() - math.expm1(1.0) * 2 / 3) < 5e-3
    pts = np.array([[3, 7], [31, 0], [16, 16]])
    np.testing.assert_allclose(qtt.evaluate_index(pts), vals[pts[:, 0], pts[:, 1]], atol=1e-13)
    assert abs(qtt.evaluate((0.5, 0.0)) - vals[g.origcoord_to_grididx((0.5, 0.0))]) < 1e-13


def test_qtt_integral_is_differentiable_in_the_site_tensors():
    g = Q.Grid(6, 0.0, 2.0)
    qtt = Q.QuanticsTT.from_values(np.cos(3 * g.grididx_to_origcoord(np.arange(64))), g)

    def integral(*ts):
        return Q.QuanticsTT(t4a.MPS(list(ts)), g).integral()

    def value(*ts):
        return tf.asarray(Q.QuanticsTT(t4a.MPS(list(ts)), g).evaluate_index(np.array([5, 40])))

    check_grads(integral, qtt.mps.tensors, order=1)
    check_grads(value, qtt.mps.tensors, order=1)
    grads = tidu.grad(lambda m: Q.QuanticsTT(m, g).integral())(qtt.mps)
    assert isinstance(grads, t4a.MPS)


# ---- shift and flip --------------------------------------------------------------------------------
def _reference(R: int, target, boundary: str) -> np.ndarray:
    """``A[x, x']``: 1 where ``x' = target(x)`` is on the grid; wraps weighted by the boundary."""
    N = 2**R
    A = np.zeros((N, N))
    for x in range(N):
        y = target(x)
        wraps = y // N
        w = {"periodic": 1.0, "antiperiodic": (-1.0) ** wraps, "open": float(wraps == 0)}[boundary]
        A[x, y % N] += w
    return A


@pytest.mark.parametrize("boundary", Q.BOUNDARIES)
def test_shift_and_flip_mpos_against_permutation_matrices(boundary):
    R = 5
    for offset in (0, 1, 5, -1, -13, 31, -31) + ((40, -77) if boundary != "open" else ()):
        S = np.asarray(Q.shift_mpo(R, offset, boundary=boundary).to_dense())
        np.testing.assert_array_equal(S, _reference(R, lambda x: x + offset, boundary), err_msg=str(offset))
        assert max(Q.shift_mpo(R, offset, boundary=boundary).bond_dims) <= 2
    F = np.asarray(Q.flip_mpo(R, boundary=boundary).to_dense())
    np.testing.assert_array_equal(F, _reference(R, lambda x: 2**R - x, boundary))
    with pytest.raises(t4a.InvalidOptionError) if boundary == "open" else _nothing():
        Q.shift_mpo(R, 2**R, boundary=boundary)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("unfolding", UNFOLDINGS)
def test_shift_and_flip_along_one_dimension_of_a_2d_grid(unfolding):
    g = Q.Grid(4, dims=2, unfolding=unfolding)
    vals = np.random.default_rng(1).standard_normal((16, 16))
    qtt = Q.QuanticsTT.from_values(vals, g)
    for dim in (0, 1):

        def along(a):  # the axis of ``dim`` first
            return np.moveaxis(a, dim, 0)

        got = along(Q.apply(Q.shift_mpo(g, 3, dim=dim), qtt).to_values())
        np.testing.assert_allclose(got, np.roll(along(vals), -3, axis=0), atol=1e-12)  # f(x + 3), periodic
        got = along(Q.apply(Q.shift_mpo(g, -2, dim=dim, boundary="open"), qtt).to_values())
        want = np.roll(along(vals), 2, axis=0)
        want[:2] = 0.0  # f(-2), f(-1): off the grid
        np.testing.assert_allclose(got, want, atol=1e-12)
        got = along(Q.apply(Q.flip_mpo(g, dim=dim, boundary="antiperiodic"), qtt).to_values())
        want = along(vals)[(-np.arange(16)) % 16]
        want[0] *= -1.0  # f(16) = -f(0)
        np.testing.assert_allclose(got, want, atol=1e-12)


# ---- the Fourier transform ---------------------------------------------------------------------------
R10 = 10
T10 = Q.fourier_mpo(R10)
REV10 = np.array([_bitrev(y, R10) for y in range(2**R10)])


def test_fourier_mpo_is_the_bit_reversed_dft_matrix():
    N = 2**R10
    dft = np.exp(-2j * np.pi * np.outer(np.arange(N), np.arange(N)) / N) / np.sqrt(N)
    T = np.asarray(T10.to_dense())
    assert np.abs(T[REV10] - dft).max() < 1e-12
    assert max(T10.bond_dims) <= 15
    Tp = np.asarray(Q.fourier_mpo(R10, sign=1).to_dense())
    assert np.abs(Tp[REV10] - dft.conj()).max() < 1e-12


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), complex_input=st.booleans())
def test_fourier_mpo_applied_to_a_qtt_is_numpy_fft(seed, complex_input):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(2**R10) + (1j * rng.standard_normal(2**R10) if complex_input else 0)
    g = Q.Grid(R10)
    qtt = Q.QuanticsTT.from_values(v, g, cutoff=0.0)
    out = Q.apply(T10, qtt)
    np.testing.assert_allclose(out.to_values()[REV10], np.fft.fft(v, norm="ortho"), atol=1e-11)
    natural = Q.reverse_bits(out)
    np.testing.assert_allclose(natural.to_values(), np.fft.fft(v, norm="ortho"), atol=1e-11)
    back = Q.apply(Q.fourier_mpo(g, sign=1), natural)  # the inverse, again bit-reversed
    np.testing.assert_allclose(back.to_values()[REV10], v, atol=1e-11)


def test_fourier_of_a_smooth_function_stays_low_rank_at_large_R():
    R = 40
    T = Q.fourier_mpo(R)
    assert max(T.bond_dims) <= 15
    # exp(2 pi i k0 x / N) is rank 1; its transform is a delta at k0 (bit-reversed): rank 1 again
    k0 = 2**39 + 12345
    g = Q.Grid(R)
    turns = [((k0 << (R - 1 - k)) % 2**R) / 2**R for k in range(R)]  # k0 x_k 2**(R-1-k) / N, mod 1, exact
    sites = [np.array([1.0, np.exp(2j * np.pi * t)]).reshape(1, 2, 1) / np.sqrt(2) for t in turns]
    qtt = Q.QuanticsTT(t4a.MPS(sites), g)
    out = Q.reverse_bits(Q.apply(T, qtt, max_bond=8))
    assert out.rank == 1
    assert abs(abs(out.evaluate_index(k0)) - 1.0) < 1e-9
    assert abs(out.evaluate_index(k0 + 1)) < 1e-9


@pytest.mark.parametrize("unfolding", UNFOLDINGS)
def test_fourier_along_one_dimension_of_a_2d_grid(unfolding):
    R = 4
    g = Q.Grid(R, dims=2, unfolding=unfolding)
    vals = np.random.default_rng(2).standard_normal((16, 16))
    qtt = Q.QuanticsTT.from_values(vals, g, cutoff=0.0)
    rev = np.array([_bitrev(y, R) for y in range(16)])
    for dim in (0, 1):
        got = Q.apply(Q.fourier_mpo(g, dim=dim), qtt).to_values()
        got = got[rev] if dim == 0 else got[:, rev]
        np.testing.assert_allclose(got, np.fft.fft(vals, axis=dim, norm="ortho"), atol=1e-12)
    if unfolding == "fused":  # reversing the sites reverses the bits of both dimensions
        both = Q.apply(Q.fourier_mpo(g, dim=1), Q.apply(Q.fourier_mpo(g, dim=0), qtt))
        np.testing.assert_allclose(Q.reverse_bits(both).to_values(), np.fft.fft2(vals, norm="ortho"), atol=1e-12)
    else:
        with pytest.raises(t4a.InvalidOptionError, match="interleaved"):
            Q.reverse_bits(qtt)


def test_apply_checks_its_operands():
    psi = t4a.MPS.random(5, bond_dim=2)
    with pytest.raises(t4a.DimensionMismatchError, match="4 sites"):
        Q.apply(Q.shift_mpo(4, 1), psi)
    with pytest.raises(t4a.Tensor4allTypeError, match="MPO first"):
        Q.apply(psi, psi)
    out = Q.apply(Q.shift_mpo(5, 1), psi)
    np.testing.assert_allclose(np.asarray(out.to_dense()), np.roll(np.asarray(psi.to_dense()), -1), atol=1e-12)
    assert isinstance(out, t4a.MPS)


# ---- interpolation ---------------------------------------------------------------------------------
# The 1D example of the QTCI papers (Ritter et al., PRL 132, 056501 (2024); Fernandez et al.,
# SciPost Phys. 18, 104 (2025)): f(x) = cos(x/B) cos(x/(4 sqrt(5) B)) exp(-x^2) + 2 exp(-x),
# B = 2^-30, on [0, ln 20) with R = 40 (paper: rank 15, 45,775 evaluations, error ~3e-8).
PAPER_GRID = Q.Grid(40, 0.0, math.log(20.0))
PAPER_INTEGRAL = 1.9  # int_0^ln20 2 e^-x dx; the oscillating part integrates to ~e^-(ln 20)^2 B ~ 1e-13


def _paper_exact(i: np.ndarray) -> np.ndarray:
    """f at grid indices, from the coordinate in extended precision (no rounding noise from cos(x 2^30))."""
    x = PAPER_GRID.grididx_to_origcoord(i, np.longdouble)
    B = np.longdouble(2.0) ** -30
    c = 4 * np.sqrt(np.longdouble(5))
    return np.asarray(np.cos(x / B) * np.cos(x / (c * B)) * np.exp(-x * x) + 2 * np.exp(-x), dtype=np.float64)


def _paper_float64(x):
    B = 2.0**-30
    return np.cos(x / B) * np.cos(x / (4 * np.sqrt(5) * B)) * np.exp(-(x**2)) + 2 * np.exp(-x)


PAPER_POINTS = np.random.default_rng(2024).integers(0, 2**40, size=10_000)


def test_paper_example_without_rounding_noise():
    qtt = Q.quantics_interpolate(_paper_exact, PAPER_GRID, tolerance=1e-8, argument="index", batched=True)
    assert qtt.tci.termination == "converged"
    assert qtt.rank <= 20 and qtt.tci.evaluations <= 60_000
    err = np.abs(qtt.evaluate_index(PAPER_POINTS) - _paper_exact(PAPER_POINTS)).max()
    assert err <= 1e-7
    assert abs(float(qtt.integral()) - PAPER_INTEGRAL) <= 1e-6


def test_paper_example_with_the_float64_formula():
    # the float64 formula carries ~5e-8 of noise (cos of x 2^30 with x rounded): the tolerance
    # must sit above it, else the interpolation keeps adding pivots to fit the noise
    noise = np.abs(_paper_float64(PAPER_GRID.grididx_to_origcoord(PAPER_POINTS)) - _paper_exact(PAPER_POINTS)).max()
    assert 1e-8 < noise < 1e-7
    qtt = Q.quantics_interpolate(_paper_float64, PAPER_GRID, tolerance=1e-7, batched=True)
    assert qtt.rank <= 20 and qtt.tci.evaluations <= 60_000
    assert np.abs(qtt.evaluate_index(PAPER_POINTS) - _paper_exact(PAPER_POINTS)).max() <= 1e-6
    assert abs(float(qtt.integral()) - PAPER_INTEGRAL) <= 1e-6


def _two_d(x, y):
    return np.exp(-(x + y)) * np.cos(10 * (x - y)) + 1.0 / (1.0 + x + y)


A_2D = (np.exp(-1 + 10j) - 1) / (-1 + 10j)
INTEGRAL_2D = abs(A_2D) ** 2 + 3 * math.log(3) - 4 * math.log(2)  # the cosine term factorizes: |A|^2


@pytest.mark.parametrize("unfolding", UNFOLDINGS)
def test_a_2d_function_on_2_20_by_2_20_points(unfolding):
    g = Q.Grid(20, 0.0, 1.0, dims=2, unfolding=unfolding, include_endpoint=True)
    qtt = Q.quantics_interpolate(_two_d, g, tolerance=1e-10, batched=True)
    idx = np.random.default_rng(7).integers(0, 2**20, size=(10_000, 2))
    xy = g.grididx_to_origcoord(idx)
    assert np.abs(qtt.evaluate_index(idx) - _two_d(xy[:, 0], xy[:, 1])).max() < 1e-8
    assert abs(float(qtt.integral()) - INTEGRAL_2D) < 1e-9  # trapezoidal rule: O(2^-40)
    x, y = 0.123, 0.987
    assert abs(qtt.evaluate((x, y)) - _two_d(*g.grididx_to_origcoord(g.origcoord_to_grididx((x, y))))) < 1e-8


def test_interpolate_one_point_at_a_time_with_indices_and_initial_points():
    g = Q.Grid(12, -1.0, 1.0)
    calls = []

    def f(i):  # zero at grid index 0: the start must come from initial_points
        calls.append(i)
        assert isinstance(i, int)
        return 0.0 if i == 0 else math.exp(-(((i - 2048) / 300.0) ** 2))

    qtt = Q.quantics_interpolate(f, g, argument="index", initial_points=[2048, 2100], tolerance=1e-10)
    assert len(calls) == qtt.tci.evaluations
    assert Q.quantics_interpolate(f, g, argument="index", initial_points=np.array([2048]), tolerance=1e-10).rank > 1
    idx = np.arange(0, 4096, 7)
    want = np.array([f(int(i)) for i in idx])
    assert np.abs(qtt.evaluate_index(idx) - want).max() < 1e-8
    qx = Q.quantics_interpolate(lambda x: math.sin(3 * x), g, tolerance=1e-12)
    xs = g.grididx_to_origcoord(idx)
    assert np.abs(qx.evaluate(xs) - np.sin(3 * xs)).max() < 1e-10


def test_gradient_through_the_interpolation():
    qtt = Q.quantics_interpolate(_paper_float64, PAPER_GRID, tolerance=1e-7, batched=True)

    def integral(theta):  # the smooth part 2 exp(-theta x), at the pivots of the fit
        def f(x):
            B = 2.0**-30
            return tf.cos(x / B) * tf.cos(x / (4 * math.sqrt(5) * B)) * tf.exp(-x * x) + 2 * tf.exp(-theta * x)

        return qtt.interpolant(f).integral()

    theta = tf.asarray(1.0)
    got = float(tidu.grad(integral)(theta))
    # d/dtheta of 2 (1 - 20^-theta) / theta at theta = 1
    exact = 2 * (math.log(20.0) * 20.0**-1 - (1 - 20.0**-1))
    assert abs(got - exact) < 1e-6
    assert abs(float(integral(theta)) - float(qtt.integral())) < 1e-12
    check_grads(integral, (theta,), order=2, modes=("rev",))


def test_interpolation_errors_are_typed():
    g = Q.Grid(6)
    with pytest.raises(t4a.tci.NonFiniteValueError):
        Q.quantics_interpolate(lambda x: math.nan, g)
    with pytest.raises(t4a.InvalidOptionError, match="'coordinate', 'index'"):
        Q.quantics_interpolate(math.sin, g, argument="x")
    with pytest.raises(t4a.InvalidOptionError, match="from quantics_interpolate"):
        Q.QuanticsTT.from_values(np.ones(64), g).interpolant(math.sin)


def test_gradient_of_quantics_interpolate_of_a_traced_parameter():
    """Issue 47: the natural call works under ``tidu.grad``: pivots from the concrete values,
    the train rebuilt from ``f`` under tracing. d/dtheta of the integral of exp(-theta x^2) on
    [0, 1) (the rectangle rule on 2**6 points, summed in closed form), both ways of calling f."""
    g = Q.Grid(6, 0.0, 1.0)
    x = g.grididx_to_origcoord(np.arange(g.n_points))

    def integral(th, batched=False):
        f = (lambda x: tf.exp(-th * tf.asarray(x) ** 2)) if batched else (lambda x: tf.exp(-th * x**2))
        return Q.quantics_interpolate(f, g, batched=batched, tolerance=1e-12).integral()

    for th0 in (1.0, 2.5):
        want = float(np.sum(-(x**2) * np.exp(-th0 * x**2)) * g.step[0])
        for batched in (False, True):
            assert float(tidu.grad(integral)(tf.asarray(th0), batched)) == pytest.approx(want, rel=1e-9)
    check_grads(integral, (tf.asarray(1.0),), order=2)
    with pytest.raises(t4a.NotDifferentiableError, match=r"qtt.interpolant\(lambda x: f\(x, theta\)\)"):
        tf.jit(integral)(tf.asarray(1.0))


def test_a_relative_tolerance_of_one_or_more_is_refused():
    with pytest.raises(
        t4a.tci.TCIOptionError,
        match=r"quantics_interpolate: tolerance must be a finite number > 0 "
        r"and < 1",
    ):
        Q.quantics_interpolate(math.sin, Q.Grid(4), tolerance=2)
    qtt = Q.quantics_interpolate(lambda x: 3.0 + x, Q.Grid(4), tolerance=1.5, normalize_error=False)
    assert qtt.tci.termination == "converged"
