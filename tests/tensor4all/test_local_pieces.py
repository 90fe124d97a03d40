"""The sweep's small pieces alone: environments, effective Hamiltonians, eigensolvers,
truncation policy."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensor4all as t4a
from tensor4all import models
from tensor4all.algorithms.effective import OneSiteOperator, TwoSiteOperator
from tensor4all.linalg.eigensolver import dense_lowest, eigsh, lanczos
from tensor4all.networks.environments import Environments, left_step, mpo_squared, right_step
from tensor4all.linalg.truncation import svd_truncated, truncation_keep


def _numpy_state(psi):
    return [np.ascontiguousarray(np.asarray(t)) for t in psi.tensors]


def _dense_heff(lb, ws, rb):
    """Dense effective Hamiltonian from blocks by einsum (independent of the GEMM layout)."""
    if len(ws) == 1:
        h = np.einsum("awx,wstv,vyb->asyxtb", lb, ws[0], rb.transpose(0, 2, 1))
    else:
        h = np.einsum("awx,wstu,uijv,vyb->asiyxtjb", lb, ws[0], ws[1], rb.transpose(0, 2, 1))
    n = int(np.sqrt(h.size))
    return h.reshape(n, n)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 1000), cplx=st.booleans(), site=st.integers(0, 3))
def test_effective_operators_match_dense(seed, cplx, site):
    L = 5
    H = models.heisenberg(L, Jz=0.3, h=0.2)
    ws = [np.ascontiguousarray(np.asarray(t)) for t in H.tensors]
    psi = _numpy_state(t4a.MPS.random(L, bond_dim=3, seed=seed, dtype=np.complex128 if cplx else np.float64))
    lefts = [np.ones((1, 1, 1))]  # lefts[i]: sites < i
    for i in range(L - 1):
        lefts.append(left_step(lefts[-1], psi[i], ws[i]))
    rights = {L: np.ones((1, 1, 1))}  # rights[i]: sites >= i
    for i in range(L - 1, 0, -1):
        rights[i] = right_step(rights[i + 1], psi[i], ws[i])
    rng = np.random.default_rng(seed)
    op2 = TwoSiteOperator(lefts[site], ws[site], ws[site + 1], rights[site + 2])
    dense2 = _dense_heff(lefts[site], ws[site : site + 2], rights[site + 2])
    x2 = rng.standard_normal(dense2.shape[0])
    np.testing.assert_allclose(op2.matvec(x2), dense2 @ x2, atol=1e-12)
    np.testing.assert_allclose(dense2, dense2.conj().T, atol=1e-12)
    op1 = OneSiteOperator(lefts[site], ws[site], rights[site + 1])
    dense1 = _dense_heff(lefts[site], ws[site : site + 1], rights[site + 1])
    x1 = rng.standard_normal(dense1.shape[0])
    np.testing.assert_allclose(op1.matvec(x1), dense1 @ x1, atol=1e-12)


def test_environment_energy_and_variance():
    L = 6
    H = models.tfim(L, g=0.8)
    psi = t4a.MPS.random(L, bond_dim=4, seed=2)
    ws = [np.ascontiguousarray(np.asarray(t)) for t in H.tensors]
    p = _numpy_state(psi)
    env = np.ones((1, 1, 1))
    for a, w in zip(p, ws):
        env = left_step(env, a, w)
    hd = np.asarray(H.to_dense())
    v = np.asarray(psi.to_dense())
    np.testing.assert_allclose(env.reshape(()), v @ hd @ v, atol=1e-12)
    np.testing.assert_allclose(mpo_squared(ws, p).real, v @ hd @ hd @ v, atol=1e-11)
    envs = Environments(ws, np.float64)
    for i in range(L - 1, 0, -1):
        envs.push_right(i, p[i])
    assert envs.nbytes() == sum(envs.right(i).nbytes for i in range(1, L + 1)) + 8


@pytest.mark.parametrize("solver", [lanczos, eigsh])
@pytest.mark.parametrize("n", [1, 2, 7, 60])
def test_eigensolvers_find_the_lowest_eigenpair(solver, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))
    a = a + a.conj().T

    class Op:
        shape = (n, n)
        dtype = np.dtype(complex)

        def matvec(self, x):
            return a @ x

    e, v, count = solver(Op(), rng.standard_normal(n) + 0j, tol=1e-13, max_iter=n + 5)
    w = np.linalg.eigvalsh(a)
    assert abs(e - w[0]) < 1e-9 and count >= 1
    np.testing.assert_allclose(np.linalg.norm(a @ v - e * v), 0, atol=1e-5)


@pytest.mark.parametrize("cplx", [False, True])
def test_lanczos_keeps_its_basis_orthonormal(cplx):
    """Every vector Lanczos multiplies is orthonormal to the earlier ones to 1e-12 over 60
    steps of a wide spectrum (Ritz values converge and plain Lanczos loses orthogonality
    there), with one Gram-Schmidt pass per step unless the DGKS test asks for a second."""
    n, rng = 300, np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if cplx else 0))
    a = (q * -np.geomspace(1e-3, 1e3, n)) @ q.conj().T  # the lowest, -1e3, converges first
    seen = []

    class Op:
        shape = (n, n)
        dtype = np.dtype(complex if cplx else float)

        def matvec(self, x):
            seen.append(x.copy())
            return a @ x

    e, v, count = lanczos(Op(), rng.standard_normal(n) + (0j if cplx else 0), tol=0.0, max_iter=60, min_iter=60)
    basis = np.array(seen)
    assert count == 60
    np.testing.assert_allclose(basis.conj() @ basis.T, np.eye(60), rtol=0, atol=1e-12)
    assert abs(e - np.linalg.eigvalsh(a)[0]) < 1e-9


@pytest.mark.parametrize("cplx", [False, True])
def test_lanczos_state_tolerance_bounds_the_vector_error(cplx):
    """``state_tol``: Lanczos stops once (Ritz residual / Ritz gap)^2 is below it; the squared
    sine of the angle to the exact eigenvector is then at that level (here within 100x: the
    Ritz gap is an estimate of the true gap), long before the products run out."""
    n, rng = 200, np.random.default_rng(5)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if cplx else 0))
    spectrum = np.concatenate([[-10.0], np.linspace(-5.0, 5.0, n - 1)])
    a = (q * spectrum) @ q.conj().T

    class Op:
        shape = (n, n)
        dtype = np.dtype(complex if cplx else float)

        def matvec(self, x):
            return a @ x

    v0 = rng.standard_normal(n) + (0j if cplx else 0)
    for state_tol in (1e-6, 1e-10):
        e, v, count = lanczos(Op(), v0, tol=0.0, max_iter=100, state_tol=state_tol)
        sin2 = 1.0 - abs(np.vdot(q[:, 0], v)) ** 2
        assert sin2 < 100 * state_tol and count < 60, (state_tol, sin2, count)
        assert abs(e + 10.0) < 100 * state_tol * 15  # the energy error is sin^2 times the spread
    _, _, count = lanczos(Op(), v0, tol=0.0, max_iter=100)  # off: every product is made
    assert count == 100


@settings(max_examples=30, deadline=None)
@given(
    s=st.lists(st.floats(0, 10, allow_nan=False), min_size=1, max_size=12),
    max_bond=st.one_of(st.none(), st.integers(1, 12)),
    cutoff=st.sampled_from([0.0, 1e-12, 1e-3, 0.3]),
)
def test_truncation_policy(s, max_bond, cutoff):
    """``truncation_keep``'s documented rule, checked against exact rational weights: at least
    one value and at most ``max_bond`` and the nonzero values are kept; with ``cutoff > 0`` the
    fewest whose dropped tail has relative weight ``<= cutoff`` (unless ``max_bond`` forces more
    out): keeping one fewer exceeds the cutoff; ``cutoff = 0`` drops nothing nonzero."""
    s = np.sort(np.array(s))[::-1]
    keep, err = truncation_keep(s, max_bond, cutoff)
    nonzero = int(np.count_nonzero(s > 0))
    cap = nonzero if max_bond is None else min(max_bond, nonzero)
    assert 1 <= keep <= max(1, cap)
    if nonzero == 0:
        assert err == 0.0
        return
    w = [Fraction(float(x)) ** 2 for x in s]  # exact squares: no underflow, no rounding
    total = sum(w)

    def tail(k: int) -> float:  # the exact relative weight dropped when k are kept, rounded once
        return float(sum(w[k:], Fraction(0)) / total)

    # the library sums <= 12 squares relative to s[0] in floats (a few ulp, 1e-12 is far above
    # that); relative weights below the smallest normal float (2.2e-308) lose their relative
    # precision there, so an absolute 1e-300 besides
    assert err == pytest.approx(tail(keep), rel=1e-12, abs=1e-300)
    if cutoff == 0.0:  # no cutoff: every nonzero value, up to max_bond
        assert keep == max(1, cap)
        return
    # the same rounding margin on both sides of the cutoff (hypothesis' ties are not exact)
    if max_bond is None or keep < max_bond:
        assert tail(keep) <= cutoff * (1 + 1e-12), (keep, tail(keep))
    if keep > 1:  # minimal: one fewer value would drop more than the cutoff
        assert tail(keep - 1) > cutoff * (1 - 1e-12), (keep, tail(keep - 1))


def test_svd_truncated_reconstructs():
    m = np.random.default_rng(0).standard_normal((12, 9))
    u, s, vh, err = svd_truncated(m)
    np.testing.assert_allclose((u * s) @ vh, m, atol=1e-12)
    assert err == 0.0
    u, s, vh, err = svd_truncated(m, max_bond=3)
    assert len(s) == 3
    np.testing.assert_allclose(np.linalg.norm(m - (u * s) @ vh) ** 2 / np.linalg.norm(m) ** 2, err, rtol=1e-10)


def test_nearly_degenerate_ground_state_is_found_with_the_product_cap():
    """Deep in the TFIM's ordered phase (L = 16, g = 0.3999) the two lowest levels are 3.6e-7
    apart. Lanczos needs more than 20 products per local problem to tell them apart: with the
    cap of 20 everywhere (TeNPy's ``N_max``) this run stopped in the upper one. The cap applies
    only where the truncation allows a state error of 1e-9 or more (``_sweep.TRUNCATED_*``), so
    here DMRG reaches the free-fermion ground energy (computed independently: minus the sum of
    the singular values of ``g I + J`` times the upper shift)."""
    L, g = 16, 0.3999
    m = np.diag(np.full(L, g)) + np.diag(np.ones(L - 1), 1)
    exact = -np.linalg.svd(m, compute_uv=False).sum()
    res = t4a.dmrg(models.tfim(L, g=g), max_bond=32, cutoff=0.0, tol=1e-12, sweeps=12)
    assert res.converged and abs(res.energy - exact) < 1e-10, res.energy - exact


class _Matrix:
    def __init__(self, h):
        self.h, self.shape, self.dtype = h, h.shape, h.dtype

    def dense(self):
        return self.h


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("n,level", [(12, 1), (12, 3), (30, 11), (9, 9)])
def test_dense_solver_picks_a_vector_fixed_by_the_degenerate_level(dtype, n, level):
    """At a lowest level of multiplicity ``level`` the dense solver returns the level's
    projection of ``sin(1 + k sqrt 2)``, computed here from the level's known basis (a random
    unitary's first columns): the same vector whichever basis of the level LAPACK returns. Two
    matrices with the same level but another basis of the rest give the same vector; more than
    8 degenerate eigenvalues (beyond the first LAPACK call's subset) are caught too."""
    rng = np.random.default_rng(n * 10 + level)
    outs = []
    for rep in range(2):
        z = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if dtype is np.complex128 else 0)
        q, _ = np.linalg.qr(z)
        if rep:  # the same level, rotated within itself, and another rest
            w, _ = np.linalg.qr(rng.standard_normal((level, level)))
            q = np.concatenate([outs[0][1] @ w, q[:, level:] - outs[0][1] @ (outs[0][1].conj().T @ q[:, level:])], 1)
            q, _ = np.linalg.qr(q)
        lam = np.concatenate([np.full(level, -1.5), np.linspace(-1.0, 2.0, n - level)])
        h = (q * lam) @ q.conj().T
        e, x, count = dense_lowest(_Matrix(h), np.zeros(1))
        assert count == 0 and abs(e + 1.5) < 1e-12
        basis = q[:, :level]
        r = np.sin(1.0 + np.arange(n) * np.sqrt(2.0))
        want = basis @ (basis.conj().T @ r)
        want /= np.linalg.norm(want)
        if level == 1:  # a simple level: the eigenvector up to its phase
            assert abs(abs(np.vdot(want, x)) - 1.0) < 1e-12
        else:
            np.testing.assert_allclose(x, want, atol=1e-10)
        outs.append((x, basis))
    if level > 1:
        np.testing.assert_allclose(outs[0][0], outs[1][0], atol=1e-10)
