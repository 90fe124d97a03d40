"""The one compression sweep (``tensor4all.networks.site_ops.compress_sweep``) against an explicit
dense SVD truncation computed here, for every format it runs on: ``MPS.compress`` of a dense MPS
(NumPy arrays), of a U(1) MPS (blocks), and the differentiable ``add`` (tenferro tensors).

The reference works on the state vector alone: from the right end, bond by bond, the vector is
cut at the bond, its singular values ranked, the rank chosen from the definition (at most
``max_bond``, the fewest whose dropped tail ``sum(dropped s^2) / sum(s^2)`` is at most ``cutoff``)
and the vector projected onto the kept right singular vectors; the discarded weights add up.
That is what a right-to-left sweep over a left-orthonormal chain computes, and for a symmetric
state the dense cut holds every sector, so one ranking across the sectors is the dense one.
"""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tidu
import tensor4all as t4a

L = 8


def _rank(s: np.ndarray, max_bond: int | None, cutoff: float) -> int:
    w = s**2 / np.sum(s**2)
    r = next(r for r in range(1, len(s) + 1) if w[r:].sum() <= cutoff)
    return min(r, max_bond or r, int(np.count_nonzero(s)))


def _dense_truncation(v: np.ndarray, d: int, max_bond: int | None, cutoff: float) -> tuple[np.ndarray, float, list]:
    """The vector truncated bond by bond from the right, the summed discarded weight and the ranks."""
    total, ranks = 0.0, []
    for b in range(L - 2, -1, -1):
        m = v.reshape(d ** (b + 1), -1)
        _, s, vh = np.linalg.svd(m, full_matrices=False)
        k = _rank(s, max_bond, cutoff)
        total += float(np.sum(s[k:] ** 2) / np.sum(s**2))
        v = (m @ vh[:k].conj().T @ vh[:k]).reshape(-1)
        ranks.append(k)
    return v, total, ranks[::-1]


def _assert_matches(psi: t4a.MPS, got_weight: float, v: np.ndarray, want: tuple) -> None:
    w, weight, ranks = want
    assert psi.bond_dims == ranks
    assert got_weight == pytest.approx(weight, rel=1e-10, abs=1e-15)
    got = np.asarray(psi.to_dense())
    assert np.linalg.norm(got - w) <= 1e-12 * np.linalg.norm(v)


@pytest.mark.parametrize("dtype", [tf.float64, tf.complex128])
@pytest.mark.parametrize("max_bond,cutoff", [(3, 0.0), (None, 1e-2), (5, 1e-3)])
def test_dense_compress_and_add_are_the_dense_svd_truncation(dtype, max_bond, cutoff):
    psi = t4a.MPS.random(L, bond_dim=8, seed=7, dtype=dtype)
    v = np.asarray(psi.to_dense())
    want = _dense_truncation(v, 2, max_bond, cutoff)
    c = t4a.MPS(psi.tensors)
    _assert_matches(c, c.compress(max_bond=max_bond, cutoff=cutoff), v, want)  # NumPy arrays
    s = t4a.add(psi, max_bond=max_bond, cutoff=cutoff)  # tenferro tensors, same sweep
    assert s.bond_dims == want[2]
    assert np.linalg.norm(np.asarray(s.to_dense()) - want[0]) <= 1e-12 * np.linalg.norm(v)
    assert s.dtype == c.dtype == dtype


@pytest.mark.parametrize("dtype", [tf.float64, tf.complex128])
@pytest.mark.parametrize("max_bond,cutoff", [(3, 0.0), (None, 1e-2), (5, 1e-3)])
def test_u1_compress_and_add_are_the_dense_svd_truncation(dtype, max_bond, cutoff):
    psi = t4a.MPS.random(L, bond_dim=8, seed=9, dtype=dtype, conserve="Sz")
    v = np.asarray(psi.to_dense())
    want = _dense_truncation(v, 2, max_bond, cutoff)
    c = t4a.MPS(psi.tensors)
    weight = c.compress(max_bond=max_bond, cutoff=cutoff)
    assert c.symmetric and c.charge == psi.charge
    _assert_matches(c, weight, v, want)
    s = t4a.add(psi, max_bond=max_bond, cutoff=cutoff)
    assert s.symmetric and s.bond_dims == want[2]
    assert np.linalg.norm(np.asarray(s.to_dense()) - want[0]) <= 1e-12 * np.linalg.norm(v)


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_u1_compress_of_a_state_beyond_the_float_range(scale):
    # the power-of-two scaling of MPS.compress, for symmetric sites too: norm scale**L
    psi = t4a.MPS.random(L, bond_dim=8, seed=9, conserve="Sz")
    big = t4a.MPS([t * scale for t in psi.tensors])
    ref = t4a.MPS(psi.tensors)
    assert big.compress(max_bond=3) == pytest.approx(ref.compress(max_bond=3), rel=1e-12)
    assert big.bond_dims == ref.bond_dims
    a, b = np.asarray(big.normalize().to_dense()), np.asarray(ref.normalize().to_dense())
    assert np.linalg.norm(a - b) <= 1e-12


def test_compress_checks_before_it_works_and_leaves_the_state_unchanged():
    psi = t4a.MPS.random(L, bond_dim=4, seed=3, conserve="Sz")
    before = list(psi.tensors)
    with pytest.raises(t4a.InvalidOptionError):
        psi.compress(cutoff=2.0)
    assert psi.tensors == before

    def f(p):
        p.compress(max_bond=2)
        return p.norm()

    with pytest.raises(t4a.NotDifferentiableError, match="MPS.compress"):  # symmetric sites too
        tidu.grad(f)(psi)
    assert psi.tensors == before
