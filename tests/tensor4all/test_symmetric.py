"""Symmetric (charge-conserving) tensors against the dense computation.

Hypothesis draws groups (U1, Z3, U1 x Z2), legs (charges, sector dimensions, duality),
total charges and dtypes; every structured result is compared with the same computation
on the dense arrays (NumPy), and derivatives are checked by finite differences and the
dot-product test (``check_grads``, second order) in float64 and complex128.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all.symmetry import U1, FusedLeg, Leg, Z2, Zn, fuse
from tidu.testing import check_grads

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GROUPS = {"U1": U1(), "Z3": Zn(3), "U1xZ2": U1() * Z2()}
DTYPES = ["float64", "complex128"]


def _charge_values(name: str) -> list:
    if name == "U1":
        return [-2, -1, 0, 1, 2]
    if name == "Z3":
        return [0, 1, 2]
    return [(q, p) for q in (-1, 0, 1) for p in (0, 1)]


@st.composite
def legs(draw, group: str, dual: bool | None = None) -> Leg:
    charges = draw(st.lists(st.sampled_from(_charge_values(group)), min_size=1, max_size=3, unique=True))
    dims = draw(st.lists(st.integers(1, 3), min_size=len(charges), max_size=len(charges)))
    is_dual = draw(st.booleans()) if dual is None else dual
    return Leg(GROUPS[group], dict(zip(charges, dims)), dual=is_dual)


@st.composite
def tensors(draw, group: str | None = None, n_legs: int | None = None, given_legs: list | None = None):
    """A random SymmetricTensor whose charge is carried by at least one sector tuple."""
    group = draw(st.sampled_from(sorted(GROUPS))) if group is None else group
    if given_legs is None:
        n = draw(st.integers(1, 3)) if n_legs is None else n_legs
        ls = [draw(legs(group)) for _ in range(n)]
    else:
        ls = list(given_legs)
    g = GROUPS[group]
    combo = [draw(st.sampled_from(leg.charges)) for leg in ls]
    charge = g.total(combo, [-1 if leg.is_dual else 1 for leg in ls])
    dtype = draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2**16))
    return t4a.SymmetricTensor.random(ls, charge=charge, dtype=dtype, seed=seed)


@pytest.mark.parametrize("dtype", ["float32", "complex64", "float64", "complex128"])
def test_random_in_every_floating_dtype(dtype):
    """``random`` makes the dtype it accepts: single precision is the double draw rounded
    (it raised tenferro's DTypeError on the narrowing conversion)."""
    v = Leg(U1(), {0: 2, 1: 1})
    x = t4a.SymmetricTensor.random([v, v.dual()], dtype=dtype, seed=3)
    assert str(x.dtype) == dtype
    double = t4a.SymmetricTensor.random([v, v.dual()], dtype="complex128" if "complex" in dtype else "float64", seed=3)
    for k, b in x.blocks.items():
        want = np.asarray(double.blocks[k]).astype(dtype)
        assert np.asarray(b).dtype == np.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(b), want)


def _dense(x) -> np.ndarray:
    return np.asarray(t4a.to_dense(x).numpy() if hasattr(x, "to_dense") else x.numpy())


def _close(a, b, tol=1e-10):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    scale = max(1.0, float(np.abs(b).max()) if b.size else 1.0)
    assert float(np.abs(a - b).max() if a.size else 0.0) <= tol * scale


def _mask(x: t4a.SymmetricTensor) -> np.ndarray:
    """True on the entries of the allowed sector tuples (computed from the legs, not the code)."""
    g = x.symmetry
    m = np.zeros(tuple(x.shape), dtype=bool)
    signs = [-1 if leg.is_dual else 1 for leg in x.legs]
    for combo in np.ndindex(*(len(leg.charges) for leg in x.legs)):
        qs = [leg.charges[i] for leg, i in zip(x.legs, combo)]
        if g.total(qs, signs) == x.charge:
            m[tuple(leg.slice(q) for leg, q in zip(x.legs, qs))] = True
    return m


# --- dense view, structure -------------------------------------------------------------------
@SETTINGS
@given(tensors())
def test_dense_roundtrip_and_zero_outside_the_allowed_blocks(x):
    d = _dense(x)
    assert d.shape == tuple(leg.dim for leg in x.legs)
    assert not np.any(d[~_mask(x)])
    y = t4a.SymmetricTensor.from_dense(d, x.legs, x.charge)
    _close(_dense(y), d, 0.0)
    assert x.nnz == int(np.count_nonzero(_mask(x)))  # random stores every allowed block


@SETTINGS
@given(tensors(n_legs=3))
def test_from_dense_names_the_largest_violating_entry(x):
    d = _dense(x).copy()
    bad = np.argwhere(~_mask(x))
    if not len(bad):
        return
    idx = tuple(bad[len(bad) // 2])
    d[idx] = 5.0
    with pytest.raises(t4a.SymmetryViolationError, match=r"entry \(" + ", ".join(map(str, idx)) + r"\) = "):
        t4a.SymmetricTensor.from_dense(d, x.legs, x.charge)


@SETTINGS
@given(tensors(n_legs=3), st.sampled_from([([0, 1], [2]), ([0], [1, 2]), ([0, 1, 2],), ([2, 0], [1])]))
def test_fuse_then_split_is_the_identity_and_fusion_is_a_permuted_reshape(x, groups):
    f = x.fuse_legs(*groups)
    assert f.nnz == x.nnz and len(f.legs) == len(groups)
    back = f.split_legs()
    order = [a for grp in groups for a in grp]
    _close(_dense(back), np.transpose(_dense(x), order), 0.0)
    # the fused dense index is a permutation of the column-major reshape of the parts
    d = np.transpose(_dense(x), order)
    shape, start = [], 0
    for grp in groups:
        shape.append(int(np.prod([d.shape[start + k] for k in range(len(grp))])))
        start += len(grp)
    flat = d.reshape(shape, order="F")
    fd = _dense(f)
    for axis, leg in enumerate(f.legs):
        if isinstance(leg, FusedLeg):
            fd = np.moveaxis(np.moveaxis(fd, axis, 0)[np.argsort(_fused_permutation(leg))], 0, axis)
    _close(fd, flat, 0.0)


def _fused_permutation(leg: FusedLeg) -> np.ndarray:
    """Fused position -> column-major index into the product of the parts (built from the
    parts' slices, independently of the fusion code's own offsets arithmetic)."""
    parts = leg.split() if not leg.is_dual else leg.parts
    perm = []
    for q in leg.charges:
        for part_charges, lo, hi in leg.pieces_of(q):
            ranges = [np.arange(p.slice(c).start, p.slice(c).stop) for p, c in zip(parts, part_charges)]
            grids = np.meshgrid(*ranges, indexing="ij")
            dims = [p.dim for p in parts]
            idx = np.ravel_multi_index(
                [gr.transpose(*reversed(range(len(ranges)))).reshape(-1) for gr in grids], dims, order="F"
            )
            perm.extend(idx.tolist())
            assert hi - lo == len(idx)
    return np.array(perm)


# --- contraction ------------------------------------------------------------------------------
@st.composite
def contractible_pairs(draw):
    group = draw(st.sampled_from(sorted(GROUPS)))
    shared = [draw(legs(group)) for _ in range(draw(st.integers(1, 2)))]
    free_a = [draw(legs(group)) for _ in range(draw(st.integers(0, 2)))]
    free_b = [draw(legs(group)) for _ in range(draw(st.integers(0, 2)))]
    a = draw(tensors(group, given_legs=free_a + shared))
    b = draw(tensors(group, given_legs=[leg.dual() for leg in shared] + free_b))
    return a, b, len(free_a), len(shared), len(free_b)


@SETTINGS
@given(contractible_pairs())
def test_einsum_and_tensordot_equal_the_dense_contraction(pair):
    a, b, na, ns, nb = pair
    la = "abcd"[:na] + "xyz"[:ns]
    lb = "xyz"[:ns] + "efgh"[:nb]
    out = "abcd"[:na] + "efgh"[:nb]
    spec = f"{la},{lb}->{out}"
    want = np.einsum(spec, _dense(a), _dense(b))
    got = t4a.einsum(spec, a, b)
    _close(_dense(got) if out else np.asarray(got.numpy()), want)
    if out:
        assert isinstance(got, t4a.SymmetricTensor)
        assert got.charge == a.symmetry.add(a.charge, b.charge)
    td = t4a.tensordot(a, b, ns)
    _close(_dense(td) if out else np.asarray(td.numpy()), want)


def test_three_operand_einsum_and_mismatched_legs():
    p = Leg(U1(), {-1: 1, 1: 1})
    v = Leg(U1(), {-1: 2, 0: 3, 1: 2})
    a = t4a.SymmetricTensor.random([v, p, v.dual()], seed=1)
    h = t4a.SymmetricTensor.random([p.dual(), p], seed=2)
    c = t4a.SymmetricTensor.random([v.dual(), p.dual(), v], seed=3)
    got = t4a.einsum("asb,st,ctb->ac", a, h, c)
    want = np.einsum("asb,st,ctb->ac", _dense(a), _dense(h), _dense(c))
    _close(_dense(got), want)
    with pytest.raises(t4a.SectorMismatchError, match="opposite duality"):
        t4a.einsum("asb,asb->", a, a)
    w = Leg(U1(), {-1: 2, 0: 2, 1: 2})
    with pytest.raises(t4a.SectorMismatchError, match="different sectors"):
        t4a.einsum("ab,bc->ac", t4a.SymmetricTensor.random([v, v.dual()]), t4a.SymmetricTensor.random([w, w.dual()]))


def test_a_dense_operand_densifies_through_the_counted_fallback():
    v = Leg(U1(), {-1: 2, 1: 2})
    a = t4a.SymmetricTensor.random([v, v.dual()], seed=4)
    t4a.reset_fallback_stats()
    d = tf.asarray(np.arange(16.0).reshape(4, 4))
    got = t4a.einsum("ab,bc->ac", a, d)
    _close(np.asarray(got.numpy()), _dense(a) @ d.numpy())
    assert sum(t4a.fallback_stats().values()) == 1
    with t4a.fallback_policy("error"), pytest.raises(t4a.DensifyError):
        t4a.einsum("ab,bc->ac", a, d)


def test_batch_labels_fall_back_to_dense_like_multiply():
    """Issue 47: ``ab,ab->ab`` keeps ``a`` and ``b`` (batch labels, elementwise like ``x * y``),
    so no duality is asked of them: the counted dense fallback, as ``b * b``."""
    v = Leg(U1(), {-1: 2, 0: 3, 1: 2})
    b = t4a.SymmetricTensor.random([v, v.dual()], charge=0, seed=1)
    t4a.reset_fallback_stats()
    got = t4a.einsum("ab,ab->ab", b, b)
    _close(np.asarray(got.numpy()), _dense(b) * _dense(b))
    _close(np.asarray(got.numpy()), np.asarray((b * b).numpy()))
    assert sum(t4a.fallback_stats().values()) == 2
    c = t4a.SymmetricTensor.random([v, v], charge=0, seed=2)  # a batch label beside a contracted one
    _close(np.asarray(t4a.einsum("ab,bc->abc", b, c).numpy()), np.einsum("ab,bc->abc", _dense(b), _dense(c)))
    with pytest.raises(t4a.SectorMismatchError, match="opposite duality"):  # contracted labels still checked
        t4a.einsum("ab,ac->bc", b, b)
    with t4a.fallback_policy("error"), pytest.raises(t4a.DensifyError):
        t4a.einsum("ab,ab->ab", b, b)


@SETTINGS
@given(tensors(n_legs=2), st.floats(-2.0, 2.0))
def test_arithmetic_and_norm(x, s):
    d = _dense(x)
    _close(_dense(x * s), d * s)
    _close(_dense(s * x), s * d)
    _close(_dense(x + x * s), d + d * s)
    _close(_dense(x - 2.0 * x), -d)
    _close(_dense(-x), -d)
    _close(float(t4a.linalg.norm(x)), np.linalg.norm(d))
    _close(_dense(x.conj()), d.conj())
    assert [leg.is_dual for leg in x.conj().legs] == [not leg.is_dual for leg in x.legs]
    _close(_dense(x.transpose()), d.T)


# --- decompositions ---------------------------------------------------------------------------
@SETTINGS
@given(tensors(n_legs=2))
def test_svd_qr_equal_dense(x):
    d = _dense(x)
    if not x.blocks:
        return
    u, s, vh = t4a.linalg.svd(x)
    _close(_dense(t4a.einsum("ab,bc->ac", u.scale_leg(1, s), vh)), d)
    sv = np.sort(np.asarray(s.to_vector().numpy()))[::-1]
    dense_sv = np.linalg.svd(d, compute_uv=False)
    _close(sv, dense_sv[: len(sv)])
    assert np.all(dense_sv[len(sv) :] < 1e-10 * max(1.0, dense_sv[0]))
    ud = _dense(u)
    _close(ud.conj().T @ ud, np.eye(ud.shape[1]))
    q, r = t4a.linalg.qr(x)
    _close(_dense(t4a.matmul(q, r)), d)
    qd = _dense(q)
    _close(qd.conj().T @ qd, np.eye(qd.shape[1]))


@SETTINGS
@given(
    st.sampled_from(sorted(GROUPS)).flatmap(lambda g: st.tuples(legs(g), st.sampled_from(DTYPES), st.integers(0, 999)))
)
def test_eigh_equals_the_dense_spectrum(args):
    leg, dtype, seed = args
    a = t4a.SymmetricTensor.random([leg, leg.dual()], dtype=dtype, seed=seed)
    h = (a + a.conj().transpose()) * 0.5  # Hermitian, legs (leg, leg.dual())
    d = _dense(h)
    w, v = t4a.linalg.eigh(h)
    _close(np.sort(np.asarray(w.to_vector().numpy())), np.linalg.eigvalsh(d))
    vd = _dense(v)
    _close(vd @ np.diag(np.asarray(w.to_vector().numpy())) @ vd.conj().T, d)


@SETTINGS
@given(tensors(n_legs=2), st.integers(1, 4), st.sampled_from([None, 1e-1, 0.5]))
def test_truncated_svd_keeps_the_dense_top_values(x, rank, cutoff):
    if not x.blocks:
        return
    d = _dense(x)
    sv = np.linalg.svd(d, compute_uv=False)
    r = min(rank, int(np.sum(sv > 1e-12 * max(sv[0], 1e-300))) or 1)
    if r < len(sv) and abs(sv[r - 1] - sv[r]) < 1e-8 * sv[0]:
        return  # a tie at the cut: both codes may keep either vector
    u, s, vh = t4a.linalg.truncated_svd(x, max_rank=rank, cutoff=cutoff)
    kept = np.sort(np.asarray(s.to_vector().numpy()))[::-1]
    ud, sd, vhd = (np.asarray(t.numpy()) for t in tf.linalg.truncated_svd(tf.asarray(d), max_rank=rank, cutoff=cutoff))
    # the symmetric SVD has no vectors for the zero singular values of unstored sectors
    _close(kept, sd[: len(kept)])
    assert np.all(sd[len(kept) :] < 1e-10 * sd[0])
    _close(_dense(t4a.einsum("ab,bc->ac", u.scale_leg(1, s), vh)), (ud * sd) @ vhd, 1e-8)


# --- derivatives ------------------------------------------------------------------------------
V = Leg(U1(), {-1: 2, 0: 1, 1: 2})
P = Leg(U1(), {-1: 1, 1: 1})


def _example(dtype, seed=0):
    return t4a.SymmetricTensor.random([V, P, V.dual()], charge=0, dtype=dtype, seed=seed)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients_of_contractions(dtype):
    a, b = _example(dtype, 1), _example(dtype, 2)
    h = t4a.SymmetricTensor.random([P.dual(), P], dtype=dtype, seed=3)

    def f(a, b, h):
        e = t4a.einsum("asb,ts,atb->", a.conj(), h, b)
        return tf.real(e) + tf.imag(e) if "complex" in dtype else e

    check_grads(f, (a, b, h), order=2)
    check_grads(lambda a: t4a.linalg.norm(a.fuse_legs([0, 1], [2])), (a,), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients_of_qr_svd_eigh_and_truncated_svd(dtype):
    m = _example(dtype, 4).fuse_legs([0, 1], [2])
    c = t4a.SymmetricTensor.random(list(m.legs), charge=m.charge, dtype=dtype, seed=5)

    def pair(x, y):
        e = t4a.einsum("ab,ab->", x.conj(), y)
        return tf.real(e)

    def via_qr(m):
        q, r = t4a.linalg.qr(m)
        return pair(c, t4a.matmul(q, r)) + tf.real(tf.sum(r.to_dense() * r.to_dense().conj()))

    def via_svd(m):
        u, s, vh = t4a.linalg.svd(m)
        # gauge-invariant: the singular values and the projector onto the left vectors
        proj = t4a.einsum("ab,cb->ac", u, u.conj())
        return tf.sum(s.to_vector() ** 3) + pair(
            c.fuse_legs([0], [1]) if False else t4a.einsum("ab,bc->ac", proj, c), c
        )

    def via_truncated(m):
        u, s, vh = t4a.linalg.truncated_svd(m, max_rank=2)
        return pair(c, t4a.einsum("ab,bc->ac", u.scale_leg(1, s), vh))

    def via_eigh(m):
        h = t4a.einsum("ab,cb->ac", m, m.conj())
        w, v = t4a.linalg.eigh(h)
        proj = t4a.einsum("ab,cb->ac", v.scale_leg(1, w), v.conj())
        return tf.sum(w.to_vector() ** 2) + tf.real(t4a.einsum("ab,ab->", proj.conj(), proj))

    for f in (via_qr, via_svd, via_truncated, via_eigh):
        check_grads(f, (m,), order=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_gradient_is_the_dense_gradient_restricted_to_the_blocks(dtype):
    x = _example(dtype, 6)
    w = tf.asarray(np.random.default_rng(0).standard_normal(tuple(x.shape)))

    def f_dense(d):
        return tf.real(tf.sum(tf.sin(d) * w))

    g_sym = tidu.grad(lambda x: f_dense(x.to_dense()))(x)
    assert isinstance(g_sym, t4a.SymmetricTensor) and set(g_sym.blocks) == set(x.blocks)
    g_dense = tidu.grad(f_dense)(x.to_dense()).numpy()
    _close(_dense(g_sym), np.where(_mask(x), g_dense, 0.0))


# --- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call,exc,fragment",
    [
        (lambda: Leg(U1(), {0.5: 2}), t4a.ChargeError, "must be an integer"),
        (lambda: Leg(U1() * Z2(), {1: 2}), t4a.ChargeError, "tuple of 2 integers"),
        (lambda: Leg(U1(), {0: 0}), t4a.LegError, "positive integer"),
        (lambda: Leg(U1(), [(0, 1), (0, 2)]), t4a.LegError, "appears twice"),
        (lambda: Leg(U1(), {}), t4a.LegError, "non-empty"),
        (lambda: Leg("U1", {0: 1}), t4a.ChargeError, "must be a Symmetry"),
        (lambda: Zn(1), t4a.ChargeError, "n must be an integer >= 2"),
        (lambda: fuse(Leg(U1(), {0: 1}), Leg(Z2(), {0: 1})), t4a.ChargeError, "only legs of one group fuse"),
        (
            lambda: t4a.SymmetricTensor({(1, 1): np.ones((1, 1))}, [P, P]),
            t4a.SymmetryViolationError,
            "carries charge 2",
        ),
        (
            lambda: t4a.SymmetricTensor({(1, 1): np.ones((2, 1))}, [P, P.dual()]),
            t4a.StructuredShapeError,
            "has shape (2, 1)",
        ),
        (lambda: t4a.SymmetricTensor({(3, 3): np.ones((1, 1))}, [P, P.dual()]), t4a.LegError, "no sector of charge 3"),
        (lambda: t4a.SymmetricTensor.random([P, P], charge=1), t4a.SymmetryViolationError, "carries the charge 1"),
        (lambda: t4a.SymmetricTensor.random([P, P], charge=(1, 0)), t4a.ChargeError, "must be an integer"),
        (lambda: t4a.linalg.svd(_example("float64")), t4a.SymmetryError, "needs two legs"),
        (lambda: _example("float64") + _example("float64").conj(), t4a.SectorMismatchError, "leg 0 differs"),
        (
            lambda: t4a.linalg.eigh(t4a.SymmetricTensor.random([P, P], charge=0)),
            t4a.SectorMismatchError,
            "needs legs (leg, leg.dual())",
        ),
    ],
)
def test_bad_input_is_typed_and_named(call, exc, fragment):
    with pytest.raises(exc) as info:
        call()
    assert fragment in str(info.value)
    assert isinstance(info.value, t4a.StructuredError) and isinstance(info.value, (ValueError, TypeError))


def test_a_one_leg_tensor_is_refused_by_linear_algebra_as_a_dense_vector():
    x = t4a.SymmetricTensor.random([P, P.dual()], charge=0).fuse_legs([0, 1])
    with pytest.raises(tf.linalg.LinalgShapeError, match="must be a matrix"):
        t4a.linalg.eigh(x)


def test_nan_blocks_are_refused_by_linear_algebra_as_dense():
    x = t4a.SymmetricTensor({(1, 1): np.array([[np.nan]]), (-1, -1): np.ones((1, 1))}, [P, P.dual()])
    with pytest.raises(tf.linalg.NonFiniteError):
        t4a.linalg.svd(x)
