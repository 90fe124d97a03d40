"""States whose site tensors carry scales far outside the float range (the same vector as an ordinary
state, scaled site by site by powers of ten that cancel), and files of more than 10 000 sites:
canonicalize, overlap, add and apply give the ordinary state's numbers, checked by NumPy contractions
written here."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
from tensor4all import MPS, add, apply, models, overlap
from tensor4all.networks.contractions import overlap_tensors
from tensor4all.networks.site_ops import canonical_dense
from tensor4all.tools.errors import Tensor4allError, ValueRangeError

KINDS = [
    pytest.param({}, id="real"),
    pytest.param({"dtype": tf.complex128}, id="complex"),
    pytest.param({"conserve": "Sz"}, id="Sz"),
]


def _dense(t):
    return np.asarray(t.to_dense() if hasattr(t, "to_dense") else t)


def _inner(xs, ys):
    """<x|y> of two chains by a NumPy contraction (entries in the ordinary range)."""
    env = np.ones((1, 1))
    for x, y in zip(xs, ys):
        env = np.einsum("ab,asc,bsd->cd", env, np.conj(_dense(x)), _dense(y))
    return complex(env[0, 0])


def _drifting(base, factor=1e20):
    """``base`` with its first half times ``factor`` and its second half divided by it, site by site."""
    L = base.L
    return MPS([t * (factor if i < L // 2 else 1.0 / factor) for i, t in enumerate(base.tensors)])


def _base(L=40, **kw):
    return MPS.random(L, bond_dim=4, seed=3, **kw)


@pytest.mark.parametrize("ext", [".npz", ".arrow"])
def test_load_more_than_10000_sites(tmp_path, ext):
    if ext == ".arrow":
        pytest.importorskip("pyarrow")
    states = [(i * 7 // 3) % 2 for i in range(10001)]
    path = tmp_path / f"big{ext}"
    MPS.product_state(states).save(path)
    psi = MPS.load(path)
    assert psi.L == 10001
    assert [int(np.argmax(_dense(t).ravel())) for t in psi.tensors] == states


@pytest.mark.parametrize("kw", KINDS)
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_canonicalize_drifting_chain(kw, where):
    base = _base(**kw)
    center = {"first": 0, "middle": 17, "last": base.L - 1}[where]
    p = _drifting(base).canonicalize(center)
    assert p.center == center
    ts = [_dense(t) for t in p.tensors]
    for i, t in enumerate(ts):  # orthonormal left and right of the centre
        if i < center:
            m = t.reshape(-1, t.shape[2])
            np.testing.assert_allclose(m.conj().T @ m, np.eye(m.shape[1]), atol=1e-12)
        elif i > center:
            m = t.reshape(t.shape[0], -1)
            np.testing.assert_allclose(m @ m.conj().T, np.eye(m.shape[0]), atol=1e-12)
    n2 = _inner(base.tensors, base.tensors)
    assert abs(_inner(ts, ts) - n2) < 1e-12
    assert abs(_inner(base.tensors, ts) - n2) < 1e-12  # the same vector
    assert abs(float(np.asarray(p.norm())) - 1.0) < 1e-12


def test_canonicalize_short_chain_scaled_far():
    base = _base(20)
    p = _drifting(base, 1e40).canonicalize(0)
    assert abs(_inner(base.tensors, p.tensors) - 1.0) < 1e-12


def test_canonicalize_norm_beyond_float_range_raises_typed_error():
    base = _base(20)
    p = MPS([t * 1e40 for t in base.tensors])  # norm 1e800
    with pytest.raises(ValueRangeError):
        p.canonicalize(0)
    assert all(np.array_equal(_dense(a), _dense(b) * 1e40) for a, b in zip(p.tensors, base.tensors))  # unchanged


@pytest.mark.parametrize("kw", KINDS)
def test_overlap_drifting_chain(kw):
    base = _base(**kw)
    p = _drifting(base)
    n2 = _inner(base.tensors, base.tensors)
    assert abs(complex(np.asarray(overlap(p, p))) - n2) < 1e-12
    assert abs(complex(np.asarray(overlap(base, p))) - n2) < 1e-12
    assert abs(complex(np.asarray(overlap(p, base))) - n2) < 1e-12


def test_overlap_beyond_float_range_raises_typed_error():
    base = _base()
    p = _drifting(base)
    big = MPS([t * 1e100 for t in base.tensors[:4]] + base.tensors[4:])  # norm**2 = 1e800
    with pytest.raises(ValueRangeError) as info:
        overlap(big, p * 1e100)
    assert isinstance(info.value, (Tensor4allError, OverflowError))


@pytest.mark.parametrize("kw", KINDS)
def test_add_drifting_chain(kw):
    base = _base(**kw)
    p = _drifting(base)
    n2 = _inner(base.tensors, base.tensors)
    for s, expected in [(add(p, p), 4 * n2), (add(p, base), 4 * n2), (add(base, p, max_bond=4), 4 * n2)]:
        assert abs(_inner(s.tensors, s.tensors) - expected) < 1e-10
        assert abs(_inner(base.tensors, s.tensors) - 2 * n2) < 1e-10


@pytest.mark.parametrize("kw", KINDS)
@pytest.mark.parametrize("method", ["zipup", "fit", "naive"])
def test_apply_drifting_chain(kw, method):
    base = _base(**kw)
    H = models.heisenberg(base.L, conserve="Sz") if base.symmetric else models.heisenberg(base.L)
    want = apply(H, base, max_bond=8, method=method)
    got = apply(H, _drifting(base), max_bond=8, method=method)
    w2 = _inner(want.tensors, want.tensors)
    assert abs(_inner(got.tensors, got.tensors) - w2) < 1e-9 * abs(w2)
    assert abs(_inner(want.tensors, got.tensors) - w2) < 1e-9 * abs(w2)


@pytest.mark.parametrize("kw", KINDS)
def test_ordinary_states_unchanged_bit_for_bit(kw):
    psi = MPS.random(12, bond_dim=8, seed=1, **kw)
    phi = MPS.random(12, bond_dim=8, seed=2, **kw)
    assert np.array_equal(np.asarray(overlap(psi, phi)), np.asarray(overlap_tensors(psi.tensors, phi.tensors)))
    if not psi.symmetric:
        got = MPS(psi.tensors).canonicalize(5).tensors
        for a, b in zip(got, canonical_dense(psi.tensors, 5)):
            assert np.array_equal(_dense(a), _dense(b))
