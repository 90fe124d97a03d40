"""``cutoff`` means one thing across the project (issue 47): the discarded weight
``sum(dropped s^2) / sum(s^2)`` (ITensor's truncation error). ``tenferro.linalg.truncated_svd``,
``tensor4all.linalg.truncated_svd`` (dense and symmetric), ``MPS.from_dense``, ``MPS.compress``
and ``dmrg`` keep the same number of values of one spectrum, and that number is the one counted
here from the definition."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tensor4all as t4a
from tensor4all.symmetry import U1, Leg
from tensor4all.structured import SymmetricTensor

S = np.array([1.0, 0.3, 0.1, 0.03, 0.01])  # one spectrum, all of it
D = len(S)
CUTOFFS = [0.0, 1e-5, 5e-4, 1e-3, 5e-3, 0.05, 0.2, 0.9]


def expected_rank(cutoff: float) -> int:
    """The fewest values whose dropped tail weighs at most ``cutoff``, counted directly."""
    w = S**2 / np.sum(S**2)
    return next(r for r in range(1, D + 1) if w[r:].sum() <= cutoff)


def _schmidt_state() -> np.ndarray:
    """``sum_k s_k |k>|k>`` on two sites of dimension ``D``: its Schmidt values are ``S``."""
    return np.diag(S / np.linalg.norm(S)).reshape(-1)


def _projector_mpo(v: np.ndarray) -> t4a.MPO:
    """``H = -|v><v|`` on two sites as an MPO (operator SVD of the dense matrix): its ground
    state is ``v``, so a two-site DMRG step cuts exactly the spectrum ``S``."""
    h = -np.outer(v, v.conj()).reshape(D, D, D, D)  # (s1, s2, t1, t2)
    m = h.transpose(0, 2, 1, 3).reshape(D * D, D * D)  # (s1 t1), (s2 t2)
    u, s, vh = np.linalg.svd(m)
    k = int(np.sum(s > 1e-14 * s[0]))
    w1 = (u[:, :k] * s[:k]).reshape(1, D, D, k)
    w2 = vh[:k].reshape(k, D, D, 1)
    return t4a.MPO([tf.asarray(w1), tf.asarray(w2)])


def test_the_spectrum_separates_the_cutoffs():
    assert sorted({expected_rank(c) for c in CUTOFFS}) == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("cutoff", CUTOFFS)
def test_truncated_svd_compress_and_dmrg_keep_the_same_values(cutoff):
    r = expected_rank(cutoff)
    m = np.diag(S)
    assert tf.linalg.truncation_rank(S, cutoff=cutoff) == r  # the one rule, on the values alone
    assert tf.linalg.truncated_svd(tf.asarray(m), cutoff=cutoff)[1].shape == (r,)
    assert t4a.linalg.truncated_svd(tf.asarray(m), cutoff=cutoff)[1].shape == (r,)
    # a symmetric matrix whose sectors split the spectrum: one ranking across them
    leg = Leg(U1(), {0: 2, 1: 3})
    sym = SymmetricTensor.from_dense(tf.asarray(np.diag(S[[0, 3, 1, 2, 4]])), [leg, leg.dual()], 0)
    kept = np.sort(np.asarray(t4a.linalg.truncated_svd(sym, cutoff=cutoff)[1].to_vector().numpy()))[::-1]
    np.testing.assert_allclose(kept, S[:r], rtol=1e-12)
    # the MPS functions: from_dense, compress, and the two-site DMRG step
    v = _schmidt_state()
    assert t4a.MPS.from_dense(v, 2, D, cutoff=cutoff).bond_dims == [r]
    psi = t4a.MPS.from_dense(v, 2, D)
    psi.compress(cutoff=cutoff)
    assert psi.bond_dims == [r]
    res = t4a.dmrg(_projector_mpo(v), max_bond=D, cutoff=cutoff, sweeps=2, seed=1)
    assert res.state.bond_dims == [r]


def test_rtol_is_the_threshold_relative_to_the_largest():
    m = tf.asarray(np.diag(S))
    for rtol, r in ((0.0, 5), (0.02, 4), (0.05, 3), (0.2, 2), (0.5, 1)):
        assert tf.linalg.truncated_svd(m, rtol=rtol)[1].shape == (r,)


@pytest.mark.parametrize("bad", [2.0, 1.0, -0.1, float("nan")])
def test_a_cutoff_outside_zero_one_is_refused(bad):
    with pytest.raises(
        tf.TenferroValueError, match=r"cutoff \(the discarded weight\) must be a real number in \[0, 1\)"
    ):
        tf.linalg.truncated_svd(tf.asarray(np.diag(S)), cutoff=bad)
    leg = Leg(U1(), {0: 2, 1: 3})
    sym = SymmetricTensor.from_dense(tf.asarray(np.diag(S)), [leg, leg.dual()], 0)
    with pytest.raises(tf.TenferroValueError, match="the discarded weight"):
        t4a.linalg.truncated_svd(sym, cutoff=bad)


def test_the_older_cutoff_keyword_of_from_opsum_is_rtol_with_a_warning():
    os_ = t4a.models.heisenberg_opsum(4)
    with pytest.warns(DeprecationWarning, match="now called rtol"):
        old = t4a.MPO.from_opsum(os_, 4, cutoff=1e-10)
    new = t4a.MPO.from_opsum(os_, 4, rtol=1e-10)
    np.testing.assert_array_equal(np.asarray(old.to_dense()), np.asarray(new.to_dense()))


def test_one_truncation_across_sectors():
    """linalg.truncation.sector_keep, the one ranking the sector backend, the symmetric split and
    TEBD use: the counts per sector are those of the merged spectrum (here ``S`` split in two)."""
    from tensor4all.linalg.truncation import sector_keep  # the internal every block-sparse split calls

    assert sector_keep({}, 4, 1e-3) == ({}, 0.0)  # nothing to keep (TEBD's copy failed here)
    parts = {"a": S[[0, 2, 4]], "b": S[[1, 3]]}
    for cutoff in CUTOFFS:
        counts, err = sector_keep(parts, None, cutoff)
        r = expected_rank(cutoff)
        kept = sorted(np.concatenate([parts[q][:n] for q, n in counts.items()]))[::-1]
        np.testing.assert_array_equal(kept, S[:r])
        assert err == pytest.approx(np.sum(S[r:] ** 2) / np.sum(S**2), abs=1e-15)
