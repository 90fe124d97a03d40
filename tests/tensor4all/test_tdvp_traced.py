"""The traced (differentiable) TDVP backend: ``Sweep.evolve`` on a :class:`TracedBackend`
with the traced Krylov exponential equals the NumPy backend and the exact exponential, and
its derivatives (in the couplings, in per-step control fields, in the initial state) equal
finite differences of the same computed map."""

import warnings

import numpy as np
import pytest
import scipy.linalg

import tenferro as tf
import tensor4all as t4a
import tidu
from tensor4all import models
from tensor4all.algorithms.dense_backend import DenseBackend
from tensor4all.linalg.krylov import expm_krylov
from tensor4all.linalg.krylov_traced import expm_krylov_traced
from tensor4all.algorithms.sweep import Sweep
from tensor4all.algorithms.traced_backend import TracedBackend
from tidu.testing import check_grads

TAUS = [-0.1j, -0.1]  # real and imaginary time
KTOL = 1e-12  # Krylov tolerance: a dimension flip under a 1e-5 step stays far below 1e-6


def traced_run(ws_steps, psi, *, tau=-0.1j, two_site=True, max_bond=64, cutoff=1e-12):
    """One TDVP step per MPO of ``ws_steps`` on the traced backend; returns the backend."""
    b = TracedBackend(list(ws_steps[0]), list(psi))
    if complex(tau).imag:
        b.promote(tf.complex128)
    s = Sweep(b, None)  # the backend brings its differentiable Krylov exponential (b.expm)
    for k, ws in enumerate(ws_steps):
        if k:
            b.set_operator(ws)
        s.evolve(tau, two_site=two_site, max_bond=max_bond, cutoff=cutoff, krylov_tol=KTOL)
    return b


def state_vector(tensors):
    return np.asarray(t4a.MPS([tf.asarray(np.asarray(a)) for a in tensors]).to_dense()).reshape(-1)


def central_difference(f, x, eps=1e-5):
    return (float(f(x + eps)) - float(f(x - eps))) / (2 * eps)


# ---- forward: the NumPy backend and the exact exponential ----------------------------------
@pytest.mark.parametrize("two_site,max_bond", [(True, 8), (True, 4), (False, 8)])
@pytest.mark.parametrize("tau", TAUS)
@pytest.mark.parametrize("dtype", [tf.float64, tf.complex128])
def test_traced_backend_equals_the_dense_backend(two_site, max_bond, tau, dtype):
    L = 6
    H = models.heisenberg(L, Jz=0.7, h=0.3)
    psi = t4a.MPS.random(L, bond_dim=8, seed=3, dtype=dtype)  # full bond dimensions
    dense = DenseBackend([np.asarray(w) for w in H.tensors], [np.asarray(a) for a in psi.tensors])
    if complex(tau).imag:
        dense.promote(np.complex128)
    ds = Sweep(dense, None)
    traced = traced_run([H.tensors] * 2, psi.tensors, tau=tau, two_site=two_site, max_bond=max_bond, cutoff=0.0)
    for _ in range(2):
        ds.evolve(tau, two_site=two_site, max_bond=max_bond, cutoff=0.0, krylov_tol=KTOL)
    assert traced.bond_dims() == dense.bond_dims() and all(isinstance(k, int) for k in traced.bond_dims())
    np.testing.assert_allclose(state_vector(traced.psi), state_vector(dense.psi), rtol=0, atol=1e-10)
    assert abs(float(traced.state_norm()) - dense.state_norm()) < 1e-10


@pytest.mark.parametrize("two_site", [True, False])
@pytest.mark.parametrize("tau", [-0.3j, -0.3])
def test_one_step_without_truncation_is_the_exact_exponential(two_site, tau):
    L = 6
    H = models.heisenberg(L, Jz=0.7, h=0.3)
    psi = t4a.MPS.random(L, bond_dim=8, seed=4, dtype=tf.complex128)
    v = np.asarray(psi.to_dense()).reshape(-1)
    v = v / np.linalg.norm(v)
    b = traced_run([H.tensors], psi.tensors, tau=tau, two_site=two_site, cutoff=0.0)
    want = scipy.linalg.expm(tau * np.asarray(H.to_dense()).reshape(2**L, 2**L)) @ v
    np.testing.assert_allclose(state_vector(b.psi), want, rtol=0, atol=1e-10)


class MatrixOperator:
    """``x -> a x`` on NumPy arrays or on tenferro values (for the two Krylov versions)."""

    def __init__(self, a):
        self.a, self.dtype, self.matvecs = a, a.dtype, 0
        self.inputs = (a,)

    def matvec(self, x):
        self.matvecs += 1
        return self.a @ x if isinstance(self.a, np.ndarray) else tf.einsum("ij,j->i", self.a, x)


@pytest.mark.parametrize("hermitian", [True, False])
def test_krylov_traced_equals_numpy_krylov_and_its_gradient_finite_differences(hermitian):
    rng = np.random.default_rng(0)
    n = 30
    a = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    a = 0.1 * (a + a.conj().T if hermitian else a)
    v = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    tau = -0.7j
    want = expm_krylov(MatrixOperator(a), v, tau, tol=1e-10, hermitian=hermitian)
    got = expm_krylov_traced(MatrixOperator(tf.asarray(a)), tf.asarray(v), tau, tol=1e-10, hermitian=hermitian)
    assert got.matvecs == want.matvecs < n and abs(got.error - want.error) < 1e-12
    np.testing.assert_allclose(np.asarray(got.vector), want.vector, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(got.vector), scipy.linalg.expm(tau * a) @ v, rtol=0, atol=1e-8)
    # the computed map (Krylov dimension frozen) in the operator and the start vector
    if hermitian:  # a Hermitian direction keeps Lanczos' map that of the exponential

        def f(x, y):
            return expm_krylov_traced(MatrixOperator(x + tf.conj(tf.transpose(x))), y, tau, tol=1e-10).vector

        check_grads(f, (tf.asarray(0.5 * a), tf.asarray(v)), order=1, eps=1e-5, atol=1e-6, rtol=1e-6)
    else:

        def f(x, y):
            return expm_krylov_traced(MatrixOperator(x), y, tau, tol=1e-10, hermitian=False).vector

        check_grads(f, (tf.asarray(a), tf.asarray(v)), order=1, eps=1e-5, atol=1e-6, rtol=1e-6)


def test_krylov_traced_breakdown_stops_exactly_without_nans():
    a = np.diag([0.3, -0.5, 1.2, 0.7]).astype(complex)
    v = np.array([0.0, 2.0, 0.0, 0.0], dtype=complex)  # an eigenvector: beta_2 = 0
    r = expm_krylov_traced(MatrixOperator(tf.asarray(a)), tf.asarray(v), -1j)
    assert r.matvecs == 1 and r.error == 0.0
    np.testing.assert_allclose(np.asarray(r.vector), np.exp(-1j * np.diag(a)) * v, atol=1e-14)

    def f(x):  # a real diagonal (Hermitian) perturbation; the rule's derivative is exact whatever the space
        return tf.real(
            expm_krylov_traced(MatrixOperator(tf.diag(tf.convert(x, tf.complex128))), tf.asarray(v), -1j).vector[1]
        )

    g = tidu.grad(f)(tf.asarray(np.diag(a).real.copy()))
    assert np.all(np.isfinite(np.asarray(g)))
    np.testing.assert_allclose(np.asarray(g), [0.0, 2.0 * np.sin(0.5), 0.0, 0.0], atol=1e-12)
    r0 = expm_krylov_traced(MatrixOperator(tf.asarray(a)), tf.asarray(v), 0.0)
    assert r0.matvecs == 0


# ---- derivatives through TDVP steps ---------------------------------------------------
def sz2(b):
    return tf.real(t4a.MPS(b.psi).expect("Sz", 2))


@pytest.mark.parametrize("two_site,max_bond", [(True, 3), (True, 8), (False, 8)])
def test_gradient_in_the_coupling_equals_finite_differences(two_site, max_bond):
    L = 5
    psi = t4a.MPS.random(L, bond_dim=2, seed=3, dtype=tf.complex128)

    def f(J):  # 3 steps of dt = 0.1; max_bond = 3 truncates (the truncated SVD's derivative)
        H = models.heisenberg(L, J=J, Jz=0.7)
        return sz2(traced_run([H.tensors] * 3, psi.tensors, two_site=two_site, max_bond=max_bond))

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no gauge or degeneracy warning from the SVDs
        g = float(tidu.grad(f)(tf.asarray(0.9)))
    fd = central_difference(lambda J: f(tf.asarray(J)), 0.9)
    assert abs(g) > 1e-3 and abs(g - fd) < 1e-6


def test_coupling_gradient_check_grads_forward_and_reverse():
    L = 4
    psi = t4a.MPS.random(L, bond_dim=2, seed=7, dtype=tf.complex128)

    def f(J, Jz):
        H = models.heisenberg(L, J=J, Jz=Jz)
        return sz2(traced_run([H.tensors] * 3, psi.tensors, two_site=True, max_bond=3))

    check_grads(f, (tf.asarray(0.9), tf.asarray(1.2)), order=1, eps=1e-5, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("two_site", [True, False])
def test_gradient_in_per_step_control_fields(two_site):
    L = 4
    psi = t4a.MPS.random(L, bond_dim=4, seed=2, dtype=tf.complex128)
    h0 = [0.3, -0.2, 0.5]

    def f(hs):  # the field precesses the spins: <Sx_2> depends on every h_k
        b = traced_run([models.heisenberg(L, J=1.0, h=h).tensors for h in hs], psi.tensors, two_site=two_site)
        return tf.real(t4a.MPS(b.psi).expect("Sx", 2))

    g = [float(x) for x in tidu.grad(f)([tf.asarray(h) for h in h0])]
    for k in range(3):
        fd = central_difference(lambda x, k=k: f([tf.asarray(x if i == k else h) for i, h in enumerate(h0)]), h0[k])
        assert abs(g[k] - fd) < 1e-6
    assert min(abs(x) for x in g) > 1e-3


@pytest.mark.parametrize("two_site", [True, False])
def test_initial_state_jvp_and_vjp(two_site):
    L = 4
    H = models.heisenberg(L, Jz=0.7)
    psi = t4a.MPS.random(L, bond_dim=4, seed=5, dtype=tf.complex128)

    def f(p):  # the final state itself (gauge-invariant): every component is checked
        return t4a.MPS(traced_run([H.tensors] * 2, p.tensors, two_site=two_site).psi).to_dense()

    check_grads(f, (psi,), order=1, eps=1e-5, atol=1e-6, rtol=1e-6)


def test_gradient_from_a_product_state_through_krylov_breakdowns():
    """From the Neel state each two-site Krylov space closes in its Sz sector (breakdown
    before the local space is exhausted) and the SVDs have exact zeros; a coupling keeps the
    sector, so the frozen map's derivative is the exponential's."""
    L = 4
    up, dn = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    neel = [tf.asarray((up if i % 2 == 0 else dn).reshape(1, 2, 1).astype(complex)) for i in range(L)]

    def f(J):
        return sz2(traced_run([models.heisenberg(L, J=J, Jz=0.7).tensors] * 3, neel, two_site=True))

    g = float(tidu.grad(f)(tf.asarray(0.9)))
    fd = central_difference(lambda J: f(tf.asarray(J)), 0.9)
    assert np.isfinite(g) and abs(g) > 1e-3 and abs(g - fd) < 1e-6


@pytest.mark.parametrize("two_site", [True, False])
def test_symmetry_breaking_derivative_at_a_symmetric_point(two_site):
    """All spins up at g = 0 is an eigenstate: every local Krylov space closes at dimension 1.
    The exponential's own derivative rule still sees the transverse field open it (the
    derivative of the stopped Lanczos recursion would be 0 here; finite differences: 0.233)."""
    L = 4
    up = [tf.asarray(np.array([1.0, 0.0]).reshape(1, 2, 1).astype(complex)) for _ in range(L)]

    def f(g):
        b = traced_run([models.tfim(L, g=g).tensors] * 3, up, two_site=two_site)
        return tf.real(t4a.MPS(b.psi).expect("Sy", 2))

    g = float(tidu.grad(f)(tf.asarray(0.0)))
    fd = central_difference(lambda x: f(tf.asarray(x)), 0.0)
    assert abs(fd) > 0.1 and abs(g - fd) < 1e-6


@pytest.mark.parametrize("evolve", ["tdvp", "tebd"])
def test_second_order_in_the_coupling(evolve):
    """Second derivatives through a few steps (finite differences of the JVP and VJP maps, and
    the dot-product test, by check_grads): for TDVP through the exponential primitive's rules,
    the transposed exponential included."""
    L = 4
    psi = t4a.MPS.random(L, bond_dim=2, seed=3, dtype=tf.complex128)

    def f(J):
        H = models.heisenberg(L, J=J, Jz=0.7)
        r = (
            t4a.tdvp(H, psi, 0.2, 0.1, max_bond=8, krylov_tol=1e-12)
            if evolve == "tdvp"
            else t4a.tebd(H, psi, 0.2, 0.1, max_bond=8)
        )
        return tf.real(r.state.expect("Sz", 1))

    check_grads(f, (tf.asarray(0.9),), order=2, eps=1e-4, atol=1e-5, rtol=1e-5)
