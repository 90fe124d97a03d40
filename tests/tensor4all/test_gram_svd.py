"""The Gram-matrix SVD of TEBD's large splits (tensor4all.linalg.lapack.gram_svd) against LAPACK's
SVD: the orthonormal factor exact, the product with the weights the exact projection, the weights
to eps * s_max^2, truncations equal; and a TEBD run through it against one through gesdd."""

from __future__ import annotations

import numpy as np
import scipy.linalg
from hypothesis import given, settings, strategies as st

import tensor4all as t4a
from tensor4all import models
from tensor4all.algorithms import tebd_sites
from tensor4all.linalg import lapack


def _decaying(rng: np.random.Generator, r: int, c: int, complex_: bool) -> np.ndarray:
    m = rng.normal(size=(r, c)) + (1j * rng.normal(size=(r, c)) if complex_ else 0)
    u, _, vh = np.linalg.svd(m, full_matrices=False)
    return (u * np.exp(-0.5 * np.arange(min(r, c)))) @ vh  # singular values 1 down to e^-20 and below


@settings(max_examples=30, deadline=None)
@given(r=st.integers(2, 40), c=st.integers(2, 40), left=st.booleans(), complex_=st.booleans(), seed=st.integers(0, 99))
def test_gram_svd_against_lapack(r, c, left, complex_, seed):
    m = _decaying(np.random.default_rng(seed), r, c, complex_)
    u, s, vh = lapack.gram_svd(m, orthonormal_left=left)
    u_ref, s_ref, vh_ref = scipy.linalg.svd(m, full_matrices=False)
    k = min(r, c)
    assert np.abs(s[:k] ** 2 - s_ref**2).max() < 1e-14  # the weights, to eps s_max^2 (s_max = 1)
    assert np.abs(s[k:]).max(initial=0.0) < 1e-7  # the rank's complement: rounding only
    ortho = u if left else vh.conj().T
    assert np.abs(ortho.conj().T @ ortho - np.eye(ortho.shape[1])).max() < 1e-13
    weighted = u @ (s[:, None] * vh) if left else (u * s) @ vh  # the weights on the other side
    # exact but for directions whose squared weight rounds to <= 0 (zeroed): at most sqrt(eps) s_max each
    assert np.abs(weighted - m).max() < 1e-7
    n = int(np.count_nonzero(s_ref > 1e-5))  # a truncation to well-resolved values: the same matrix
    best = (u_ref[:, :n] * s_ref[:n]) @ vh_ref[:n]
    assert np.abs((u[:, :n] * s[:n]) @ vh[:n] - best).max() < 1e-10


def test_split_svd_takes_the_gram_path_only_where_the_cutoff_resolves_it(monkeypatch):
    calls = []
    monkeypatch.setattr(lapack, "gram_svd", lambda m, left: calls.append(m.shape) or scipy.linalg.svd(m))
    la, big, small = tebd_sites.NumpyLA(), np.ones((80, 100)), np.ones((20, 40))
    la.split_svd(big, True, 0.0)  # cutoff 0: every weight counts
    la.split_svd(big, True, 1e-16)  # below GRAM_MIN_CUTOFF
    la.split_svd(small, True, 1e-10)  # below GRAM_MIN_SIDE
    la.split_svd(np.ones((300, 80)), True, 1e-10)  # a Gram matrix 300 x 300 for an 80-wide block
    assert calls == []
    la.split_svd(big, True, 1e-10)
    la.split_svd(big, False, 1e-14)
    assert calls == [(80, 100), (80, 100)]


def test_tebd_split_through_the_gram_matrix_equals_the_svd_split(monkeypatch):
    """The Heisenberg chain L = 14 from a random state of bond dimension 64 (its pairs' matrices 64 x 64
    and more take the Gram path at cutoff 1e-12): <Sz_i> against the same run through gesdd."""
    H = models.heisenberg(14)
    psi0 = t4a.MPS.random(14, 2, bond_dim=64, seed=1).normalize()

    def run() -> np.ndarray:
        res = t4a.tebd(H, psi0, 0.3, 0.05, max_bond=96, cutoff=1e-12, observables={"Sz": "Sz"})
        return np.asarray(res.observables["Sz"])

    calls = []
    original = lapack.gram_svd
    monkeypatch.setattr(lapack, "gram_svd", lambda m, left: calls.append(m.shape) or original(m, left))
    gram = run()
    assert calls, "no split took the Gram path: the test would not test it"
    monkeypatch.setattr(lapack, "GRAM_MIN_CUTOFF", 1.0)  # gesdd everywhere
    assert np.abs(gram - run()).max() < 1e-9
