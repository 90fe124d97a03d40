"""Derivatives through tensor networks: MPS functions (check_grads: finite differences
and the dot-product test), variational MPS with L-BFGS (against exact diagonalization), and
the Hellmann-Feynman derivative of the DMRG energy in the couplings."""

import numpy as np
import pytest
import scipy.optimize

import tenferro as tf
import tidu
from tidu.testing import check_grads
import tensor4all as t4a
from tensor4all import models

from .conftest import heisenberg_chain_matrix

DTYPES = [tf.float64, tf.complex128]


@pytest.mark.parametrize("dtype", DTYPES)
def test_expectation_grads_in_the_mps(dtype):
    H = models.heisenberg(4, Jz=0.7, h=0.3)
    psi = t4a.MPS.random(4, bond_dim=2, seed=1, dtype=dtype)
    check_grads(lambda p: t4a.expectation(p, H), (psi,), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_overlap_norm_and_measurements_grads(dtype):
    a = t4a.MPS.random(3, bond_dim=2, seed=2, dtype=dtype)
    b = t4a.MPS.random(3, bond_dim=2, seed=3, dtype=dtype)
    check_grads(lambda x, y: t4a.overlap(x, y), (a, b), order=1)
    check_grads(lambda x: x.norm(), (a,), order=2)
    check_grads(lambda x: x.expect("Sz", 1), (a,), order=1)
    check_grads(lambda x: x.correlation("Sx", "Sz", 0, 2), (a,), order=1)
    check_grads(lambda x: x.to_dense(), (a,), order=1)
    check_grads(lambda x: t4a.MPS(x.tensors).canonicalize(1).normalize().to_dense(), (a,), order=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_expectation_grads_in_the_mpo(dtype):
    H = models.tfim(3, g=0.6)
    psi = t4a.MPS.random(3, bond_dim=2, seed=4, dtype=dtype)
    check_grads(lambda h: t4a.expectation(psi, h), (H,), order=1)


def test_expectation_grads_in_the_couplings():
    psi = t4a.MPS.random(4, bond_dim=3, seed=5)

    def energy(J, Jz, h):
        return t4a.expectation(psi, models.heisenberg(4, J=J, Jz=Jz, h=h))

    check_grads(energy, (tf.asarray(0.9), tf.asarray(1.3), tf.asarray(0.0)), order=2)


def test_grad_of_expectation_returns_an_mps():
    H = models.heisenberg(5)
    psi = t4a.MPS.random(5, bond_dim=3, seed=0)
    value, g = tidu.value_and_grad(lambda p: t4a.expectation(p, H))(psi)
    assert isinstance(g, t4a.MPS) and g.bond_dims == psi.bond_dims
    # the Rayleigh quotient does not change when one site tensor is scaled
    for a, ga in zip(psi.tensors, g.tensors):
        assert abs(float(np.sum(np.asarray(a) * np.asarray(ga)))) < 1e-12


def _svd_truncated_state(v: np.ndarray, L: int, chi: int) -> np.ndarray:
    """``v`` (2^L amplitudes) cut to an MPS of bond dimension ``chi`` by successive SVDs from the
    left (keeping the ``chi`` largest values at each bond), as a 2^L vector again."""
    left, rest = np.ones((1, 1)), v.reshape(1, -1)
    for _ in range(L - 1):
        u, s, vh = np.linalg.svd(rest.reshape(rest.shape[0] * 2, -1), full_matrices=False)
        left = (left @ u[:, :chi].reshape(left.shape[1], -1)).reshape(-1, min(chi, len(s)))
        rest = s[:chi, None] * vh[:chi]
    return (left @ rest).reshape(-1)


def test_variational_mps_with_lbfgs_lies_between_the_exact_and_a_truncated_ground_energy():
    """L-BFGS on the Rayleigh quotient of a bond-4 MPS (tidu's gradients) against exact
    diagonalization: not below the exact ground energy (variational), and not above the energy
    of the exact ground state cut to bond 4 by SVDs (a bond-4 MPS, so the optimum is at most
    that): -3.3749326 <= E <= -3.3715353; L-BFGS reaches -3.3718017."""
    L, chi = 8, 4
    H = models.heisenberg(L)
    psi0 = t4a.MPS.random(L, bond_dim=chi, seed=11)
    shapes = [tuple(t.shape) for t in psi0.tensors]
    sizes = [int(np.prod(s)) for s in shapes]
    energy_and_grad = tidu.value_and_grad(lambda p: t4a.expectation(p, H))

    def unflatten(x):
        out, k = [], 0
        for s, n in zip(shapes, sizes):
            out.append(tf.asarray(np.asfortranarray(x[k : k + n].reshape(s))))
            k += n
        return t4a.MPS(out)

    def fun(x):
        e, g = energy_and_grad(unflatten(x))
        return float(e), np.concatenate([np.asarray(t).reshape(-1) for t in g.tensors])

    x0 = np.concatenate([np.asarray(t).reshape(-1) for t in psi0.tensors])
    opt = scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", options=dict(maxiter=400, gtol=1e-9))
    Hd = heisenberg_chain_matrix(L)
    w, v = np.linalg.eigh(Hd)
    cut = _svd_truncated_state(v[:, 0], L, chi)
    upper = float(cut @ Hd @ cut / (cut @ cut))
    # rounding only (1e-10) below the exact energy; the optimum is 2.7e-4 below ``upper``
    assert w[0] - 1e-10 <= opt.fun <= upper, (opt.fun, w[0], upper)


def _dmrg_energy(L, **kw):
    opts = dict(max_bond=16, cutoff=0.0, tol=1e-13, sweeps=12)

    def f(J, Jz, h):
        return t4a.dmrg(models.heisenberg(L, J=J, Jz=Jz, h=h), **opts).energy

    return f


def test_dmrg_energy_gradient_matches_finite_differences_of_dmrg():
    f = _dmrg_energy(8)
    args = (tf.asarray(1.0), tf.asarray(0.8), tf.asarray(0.0))
    g = tidu.grad(f, argnums=(0, 1, 2))(*args)
    eps = 1e-4
    fd = []
    for k in range(3):
        plus = [float(a) + (eps if i == k else 0.0) for i, a in enumerate(args)]
        minus = [float(a) - (eps if i == k else 0.0) for i, a in enumerate(args)]
        fd.append((f(*plus) - f(*minus)) / (2 * eps))
    np.testing.assert_allclose([float(x) for x in g], fd, atol=1e-7)
    # the h-derivative at h = 0 is minus the total magnetization of the singlet: 0
    assert abs(float(g[2])) < 1e-8


def test_dmrg_energy_check_grads_and_magnetization():
    f = _dmrg_energy(6)

    def energy(J, Jz, h):  # a concrete energy is a float: make it a tensor for the checker
        e = f(J, Jz, h)
        return tf.asarray(e) if isinstance(e, float) else e

    check_grads(energy, (tf.asarray(0.9), tf.asarray(1.1), tf.asarray(0.4)), order=1)
    # dE/dh = -<sum Sz>, measured on the state whose energy was differentiated (one run:
    # two separately converged runs may end in states that differ at the solver tolerance)
    L = 6

    def energy_and_state(h):
        res = t4a.dmrg(models.heisenberg(L, h=h), max_bond=16, cutoff=0.0, tol=1e-13)
        return res.energy, res.state

    (_, state), dh = tidu.value_and_grad(energy_and_state, has_aux=True)(tf.asarray(0.7))
    mz = sum(float(state.expect("Sz", i)) for i in range(L))
    assert abs(float(dh) + mz) < 1e-10


@pytest.mark.parametrize("dtype", DTYPES)
def test_hellmann_feynman_operator_gradients_equal_the_expectation_gradient(dtype):
    """The engine's one-pass G_i (reusing its cached right blocks) against tidu's reverse
    mode of the plain contraction <psi|H|psi>/<psi|psi>, for an unconverged random state."""
    from tensor4all.linalg.eigensolver import get_solver
    from tensor4all.algorithms.sweep import SweepEngine

    # a complex H in the complex case, so the imaginary parts of G are checked too (the
    # gradient in a real W is Re G)
    H = t4a.MPO([np.asarray(w).astype(dtype.numpy) for w in models.heisenberg(5, Jz=0.7, h=0.3).tensors])
    psi = t4a.MPS.random(5, bond_dim=3, seed=7, dtype=dtype)
    engine = SweepEngine(
        [np.asarray(w) for w in H.tensors], [np.asarray(a) for a in psi.tensors], get_solver("lanczos")
    )
    state = t4a.MPS([np.asfortranarray(a) for a in engine.psi])  # the engine's gauge of psi
    expected = tidu.grad(lambda h: t4a.expectation(state, h))(H)
    for g, e in zip(engine.operator_gradients(), expected.tensors):
        np.testing.assert_allclose(g, np.asarray(e), rtol=0, atol=1e-12 * np.abs(np.asarray(e)).max())


def test_dmrg_energy_is_first_order_only():
    f = _dmrg_energy(4)
    with pytest.raises(t4a.NotDifferentiableError, match="first order"):
        tidu.grad(tidu.grad(lambda J: f(J, 1.0, 0.0)))(tf.asarray(1.0))


def test_numerical_tools_reject_tracers():
    psi = t4a.MPS.random(3, bond_dim=2)

    def f(p):
        p.compress(max_bond=1)
        return p.norm()

    with pytest.raises(t4a.NotDifferentiableError, match="MPS.compress"):
        tidu.grad(f)(psi)
