"""The norm an evolution records and keeps, checked against the explicit Hamiltonian matrix
exponentiated here (``scipy.linalg.expm``):

* ``EvolutionRecord.norm`` is the norm of the state after the step, before any normalization:
  TEBD normalized an unnormalized start and dropped its norm from the first record (2 * Neel:
  1.0856 where ``||e^{-0.1 H} psi|| = 2.1712``, TDVP's record);
* imaginary time with ``normalize=False``: norms past 1e154 (whose squares overflow) are recorded
  and kept (TEBD recorded inf while the state was finite; a start of norm 1e160 gave TEBD inf and
  TDVP a zero state), and a norm leaving the float range raises :class:`ValueRangeError` naming
  ``normalize=True`` (was: inf, then NumPy's "SVD did not converge" or SciPy's "array must not
  contain infs or NaNs").
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg

import tenferro as tf
import tidu

import tensor4all as t4a
from tensor4all import models
from tensor4all.linalg.krylov import expm_krylov
from tensor4all.tools.errors import ValueRangeError

SX = np.array([[0, 0.5], [0.5, 0]])
SY = np.array([[0, -0.5j], [0.5j, 0]])
SZ = np.diag([0.5, -0.5])
NEEL = [0, 1, 0, 1]


def _heisenberg(L: int, J: float = 1.0) -> np.ndarray:
    """``J sum_i S_i . S_{i+1}`` from Kronecker products (site 0 most significant, state 0 up)."""

    def site(op, i):
        return np.kron(np.kron(np.eye(2**i), op), np.eye(2 ** (L - i - 1)))

    return J * sum(site(op, i) @ site(op, i + 1) for i in range(L - 1) for op in (SX, SY, SZ)).real


def _norm(x: np.ndarray) -> float:
    """``||x||`` without overflow in the squares (entries up to 1e307)."""
    top = float(np.max(np.abs(x)))
    return top * float(np.linalg.norm(x / top))


def _vector(psi: t4a.MPS) -> np.ndarray:
    return np.asarray((psi.dense() if psi.symmetric else psi).to_dense()).reshape(-1)


def _start(method: str, scale: float, conserve: str | None = None) -> tuple[t4a.MPS, np.ndarray]:
    """``scale`` times a unit state and its vector: the Neel state, for TDVP (exact only on full
    bonds) first spread by a real-time evolution so that its bonds are full (in the sector)."""
    psi = t4a.MPS.product_state(NEEL, conserve=conserve)
    if method == "tdvp":
        psi = t4a.tdvp(models.heisenberg(len(NEEL), conserve=conserve), psi, 1.0, 0.5, cutoff=0.0).state.normalize()
    return psi * scale, _vector(psi) * scale


def _evolve(method: str, H: t4a.MPO, psi: t4a.MPS, t: float, dt: float, **kw):
    kw = dict(max_bond=64, cutoff=0.0, imaginary=True, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "tebd":
            return t4a.tebd(H, psi, t, dt, order=4, **kw)
        return t4a.tdvp(H, psi, t, dt, **kw)


METHODS = ["tebd", "tdvp"]


@pytest.mark.parametrize("conserve", [None, "Sz"], ids=["dense", "Sz"])
@pytest.mark.parametrize("method", METHODS)
def test_a_normalized_run_records_the_norm_after_each_step_from_an_unnormalized_start(method, conserve):
    """Record k: ||e^{-dt H} phi_{k-1}|| with phi_0 = psi (norm 2) and phi_k the normalized state."""
    dt, n = 0.1, 3
    psi, v = _start(method, 2.0, conserve)
    step = scipy.linalg.expm(-dt * _heisenberg(4))
    exact, phi = [], v
    for _ in range(n):
        out = step @ phi
        exact.append(np.linalg.norm(out))
        phi = out / np.linalg.norm(out)
    res = _evolve(method, models.heisenberg(4, conserve=conserve), psi, n * dt, dt)
    if method == "tebd":  # from 2 * Neel
        assert exact[0] == pytest.approx(2.1712441942357, rel=1e-12)
    np.testing.assert_allclose([r.norm for r in res.history], exact, rtol=1e-6)  # tebd recorded 1.0856 first
    assert float(res.state.norm()) == pytest.approx(1.0, rel=1e-12)
    np.testing.assert_allclose(abs(np.vdot(_vector(res.state), phi)), 1.0, rtol=1e-9)


@pytest.mark.parametrize("conserve", [None, "Sz"], ids=["dense", "Sz"])
@pytest.mark.parametrize("method", METHODS)
def test_norms_past_1e154_are_recorded_and_kept(method, conserve):
    """A start of norm 1e160 (its squares overflow), imaginary time, normalize=False: every record
    is ||e^{-t_k H} psi||, the final state e^{-t H} psi (TEBD recorded inf, TDVP returned 0)."""
    dt, n = 0.05, 10
    psi, v = _start(method, 1e160, conserve)
    H = _heisenberg(4)
    res = _evolve(method, models.heisenberg(4, conserve=conserve), psi, n * dt, dt, normalize=False)
    exact = [_norm(scipy.linalg.expm(-(k + 1) * dt * H) @ v) for k in range(n)]
    assert 1e160 < exact[-1] < 1e161
    np.testing.assert_allclose([r.norm for r in res.history], exact, rtol=1e-6)
    assert float(res.state.norm()) == pytest.approx(exact[-1], rel=1e-6)
    final = scipy.linalg.expm(-n * dt * H) @ v
    np.testing.assert_allclose(_vector(res.state) / 1e160, final / 1e160, atol=1e-6)


@pytest.mark.parametrize("method", METHODS)
def test_a_traced_run_records_norms_past_1e154(method):
    """Differentiated with respect to J (the runs on tenferro operations): the records from a start of
    norm 1e160 are exact (TEBD's sum of squares recorded inf; TDVP's Krylov step raised SciPy's
    ValueError), and TDVP's d log||psi(t)|| / dJ is the exact one."""
    psi, v = _start(method, 1e160)
    records: list[float] = []

    def log_norm(J):
        res = _evolve(method, models.heisenberg(4, J=J), psi, 0.5, 0.05, normalize=False)
        records[:] = [r.norm for r in res.history]
        return tf.log(res.state.norm())

    def exact_log(J):
        return np.log(_norm(scipy.linalg.expm(-0.5 * _heisenberg(4, J)) @ v))

    value, slope = tidu.jvp(log_norm, (tf.asarray(1.0),), (tf.asarray(1.0),))
    H = _heisenberg(4)
    np.testing.assert_allclose(records, [_norm(scipy.linalg.expm(-k * 0.05 * H) @ v) for k in range(1, 11)], rtol=1e-6)
    assert float(np.asarray(value)) == pytest.approx(exact_log(1.0), rel=1e-9)
    if method == "tdvp":  # TEBD's traced derivative past 1e154 is NaN, before as now (its SVD derivatives)
        fd = (exact_log(1.0 + 1e-5) - exact_log(1.0 - 1e-5)) / 2e-5
        assert float(np.asarray(slope)) == pytest.approx(fd, rel=1e-6)


@pytest.mark.parametrize("method", METHODS)
def test_a_norm_leaving_the_float_range_raises_a_typed_error_naming_normalize(method):
    """J = 10, start 1e300: e^{-t H} grows by e^{16.2 t}; at t = 1 (9e306) the records and the state
    are exact, by t = 2 (7e313) the state's entries cannot be represented."""
    psi, v = _start(method, 1e300)
    H = models.heisenberg(4, J=10.0)
    res = _evolve(method, H, psi, 1.0, 0.01, normalize=False)
    exact = _norm(scipy.linalg.expm(-1.0 * _heisenberg(4, J=10.0)) @ v)
    assert 1e306 < exact < 1e308
    assert res.history[-1].norm == pytest.approx(exact, rel=1e-5)
    assert float(res.state.norm()) == pytest.approx(exact, rel=1e-5)
    with pytest.raises(ValueRangeError, match=r"overflows the float range.*normalize=True"):
        _evolve(method, H, psi, 2.0, 0.01, normalize=False)
    # normalized, the same run records each step's growth: log ||e^{-2 H} psi|| is the sum of their logs
    res = _evolve(method, H, psi, 2.0, 0.01)
    log_norm = sum(np.log(r.norm) for r in res.history)  # the first from psi's norm
    w, u = np.linalg.eigh(_heisenberg(4, J=10.0))
    c = u.T @ (v / 1e300)
    exact_log = np.log(1e300) + 0.5 * np.log(np.sum(np.abs(c) ** 2 * np.exp(-4.0 * (w - w[0])))) - 2.0 * w[0]
    assert log_norm == pytest.approx(exact_log, rel=1e-7)


def test_a_norm_underflowing_the_float_range_raises_a_typed_error_naming_normalize():
    """A positive bond Hamiltonian (J (S.S + 1), J = 100) decays a start of norm 1e-300 by at least
    e^{-75 t}: tebd's records are exact while in range (the start's squares underflowed to 0: tebd
    said its norm was 0), then ValueRangeError."""
    h = 100.0 * (sum(np.kron(op, op) for op in (SX, SY, SZ)).real + np.eye(4))
    bonds = [h] * 3
    psi, v = _start("tebd", 1e-300)
    res = t4a.tebd(bonds, psi, 0.1, 0.01, order=4, cutoff=0.0, imaginary=True, normalize=False)
    H = sum(np.kron(np.kron(np.eye(2**i), h), np.eye(2 ** (2 - i))) for i in range(3))
    exact = _norm(scipy.linalg.expm(-0.1 * H) @ v)
    assert 1e-308 < exact < 1e-302
    assert res.history[-1].norm == pytest.approx(exact, rel=1e-6)
    with pytest.raises(ValueRangeError, match=r"underflows the float range.*normalize=True"):
        t4a.tebd(bonds, psi, 1.0, 0.01, order=4, cutoff=0.0, imaginary=True, normalize=False)


@pytest.mark.parametrize("method", METHODS)
def test_one_step_that_overflows_raises_a_typed_error(method):
    """dt = 1000 at J = 10: one gate (TEBD) or one local exponential (TDVP) overflows, whatever the
    normalization (was: NumPy's LinAlgError or SciPy's ValueError)."""
    psi, _ = _start(method, 1.0)
    with pytest.raises(ValueRangeError, match="smaller"):
        _evolve(method, models.heisenberg(4, J=10.0), psi, 1000.0, 1000.0)


class _Matrix:
    def __init__(self, a: np.ndarray):
        self.a, self.shape, self.dtype = a, a.shape, a.dtype

    def matvec(self, x: np.ndarray) -> np.ndarray:
        return self.a @ x


@pytest.mark.parametrize("size", [1e200, 1e-200])
def test_expm_krylov_takes_vectors_whose_squares_leave_the_float_range(size):
    """``||v||`` of entries 1e200 overflowed (the result was NaN), of 1e-200 underflowed to 0 (the
    result was v itself)."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((12, 12))
    a = a + a.T
    v = rng.standard_normal(12)
    res = expm_krylov(_Matrix(a), size * v, -0.3, tol=1e-12)
    np.testing.assert_allclose(res.vector / size, scipy.linalg.expm(-0.3 * a) @ v, rtol=1e-9, atol=1e-10)
