"""MPO application (tensor4all.apply: zip-up, variational fit, naive) and MPS arithmetic
(a + b, a - b, -a, c * a, a / c, tensor4all.add): against dense answers built here
(Kronecker products; MPO.to_dense / MPS.to_dense only as the oracle of a contraction), the
truncation error against the Schmidt tails of the exact product, hypothesis properties,
derivatives (tidu.testing.check_grads: finite differences and the dot-product test), the
symmetric (charge-conserving) versions, and one test per typed error."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
import tidu
from tidu.testing import check_grads
import tensor4all as t4a
from tensor4all import models

DTYPES = [np.float64, np.complex128]
METHODS = ["zipup", "fit", "naive"]


def dense(x):
    return np.asarray(x.to_dense())


def rel_err(x, ref):
    return np.linalg.norm(dense(x) - ref) / np.linalg.norm(ref)


def gaussian(rng, shape, dtype):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if np.dtype(dtype).kind == "c" else x


def random_mpo(L, d, D, dtype, seed):
    rng = np.random.default_rng(seed)
    dims = [1] + [D] * (L - 1) + [1]
    return t4a.MPO([gaussian(rng, (dims[i], d, d, dims[i + 1]), dtype) for i in range(L)])


def kron_sum_mpo(a, b):
    """The MPO of ``A_0 x A_1 x ... + B_0 x B_1 x ...`` (bond 2) and its matrix by np.kron."""
    L = len(a)
    ts = []
    for i in range(L):
        d = a[i].shape[0]
        t = np.zeros((1 if i == 0 else 2, d, d, 1 if i == L - 1 else 2), dtype=np.result_type(a[i], b[i]))
        t[0, :, :, 0] = a[i]
        t[-1, :, :, -1] = b[i]
        ts.append(t)
    return t4a.MPO(ts), functools.reduce(np.kron, a) + functools.reduce(np.kron, b)


def truncation_bound(v, dims, max_bond):
    """sqrt of the summed squared Schmidt tails of ``v`` beyond ``max_bond``: the error bound of
    the SVD compression of the exact state (each bond's tail bounds what is dropped there)."""
    total = 0.0
    for b in range(1, len(dims)):
        s = np.linalg.svd(v.reshape(int(np.prod(dims[:b])), -1), compute_uv=False)
        total += float(np.sum(s[max_bond:] ** 2))
    return np.sqrt(total)


# ---- exact products -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", METHODS)
def test_apply_is_exact_when_the_bond_does_not_limit(dtype, method):
    L = 7
    W = random_mpo(L, 2, 3, dtype, seed=1)
    psi = t4a.MPS.random(L, bond_dim=4, seed=2, dtype=dtype)
    ref = dense(W) @ dense(psi)
    phi = t4a.apply(W, psi, method=method)
    assert rel_err(phi, ref) < 1e-12
    assert np.dtype(str(phi.dtype)) == np.dtype(dtype) and not phi.symmetric
    assert phi.bond_dims == [2, 4, 8, 8, 4, 2]  # min(chi D, d^b): exact and minimal
    assert abs(float(phi.norm()) - np.linalg.norm(ref)) < 1e-10 * np.linalg.norm(ref)  # not normalized


@pytest.mark.parametrize("method", METHODS)
def test_apply_of_a_kronecker_product_operator(method):
    L, d = 6, 3
    rng = np.random.default_rng(4)
    a = [gaussian(rng, (d, d), np.complex128) for _ in range(L)]
    b = [gaussian(rng, (d, d), np.float64) for _ in range(L)]
    W, matrix = kron_sum_mpo(a, b)
    psi = t4a.MPS.random(L, d=d, bond_dim=5, seed=5)
    phi = t4a.apply(W, psi, method=method, max_bond=64)
    assert rel_err(phi, matrix @ dense(psi)) < 1e-12
    assert phi.dtype == tf.complex128 and phi.phys_dims == [d] * L


@pytest.mark.parametrize("dtype", DTYPES)
def test_truncated_apply_stays_within_the_discarded_weight(dtype):
    L = 8
    W = random_mpo(L, 2, 3, dtype, seed=3)
    psi = t4a.MPS.random(L, bond_dim=4, seed=6, dtype=dtype)
    ref = dense(W) @ dense(psi)
    for max_bond in (6, 10):
        bound = truncation_bound(ref, [2] * L, max_bond)
        errors = {}
        for method in METHODS:
            phi = t4a.apply(W, psi, method=method, max_bond=max_bond)
            assert max(phi.bond_dims) <= max_bond
            errors[method] = np.linalg.norm(dense(phi) - ref)
        assert errors["naive"] <= bound * (1 + 1e-9)
        assert errors["fit"] <= bound * (1 + 1e-9)
        assert errors["fit"] <= errors["zipup"] * (1 + 1e-9)  # the fit converges to zip-up or better
        assert errors["zipup"] <= 1.25 * bound


@pytest.mark.parametrize("method", METHODS)
def test_cutoff_bounds_the_relative_error(method):
    L = 8
    H = models.heisenberg(L)
    psi = t4a.MPS.random(L, bond_dim=8, seed=7)
    ref = dense(H) @ dense(psi)
    phi = t4a.apply(H, psi, method=method, cutoff=1e-4)
    assert max(phi.bond_dims) < max(t4a.apply(H, psi, method=method).bond_dims)
    assert rel_err(phi, ref) <= np.sqrt((L - 1) * 1e-4) * 1.25


def test_fit_sweeps_and_seed():
    L = 8
    H = models.heisenberg(L)
    psi = t4a.MPS.random(L, bond_dim=8, seed=8)
    ref = dense(H) @ dense(psi)
    one = t4a.apply(H, psi, method="fit", max_bond=8, sweeps=1, tol=0.0)
    many = t4a.apply(H, psi, method="fit", max_bond=8, sweeps=6, tol=0.0)
    other = t4a.apply(H, psi, method="fit", max_bond=8, sweeps=6, seed=3)
    assert np.linalg.norm(dense(many) - ref) <= np.linalg.norm(dense(one) - ref) * (1 + 1e-9)
    assert rel_err(other, dense(many)) < 1e-6  # another start converges to the same optimum


def test_apply_on_one_site():
    W = random_mpo(1, 3, 1, np.complex128, seed=9)
    psi = t4a.MPS.random(1, d=3, seed=9)
    for method in METHODS:
        assert rel_err(t4a.apply(W, psi, method=method), dense(W) @ dense(psi)) < 1e-13


# ---- MPS arithmetic -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_arithmetic_operators(dtype):
    a = t4a.MPS.random(6, bond_dim=3, seed=10, dtype=dtype)
    b = t4a.MPS.random(6, bond_dim=4, seed=11, dtype=np.float64)
    va, vb = dense(a), dense(b)
    cases = [
        (a + b, va + vb),
        (a - b, va - vb),
        (-a, -va),
        (2 * a, 2 * va),
        (a * (0.5 - 2j), (0.5 - 2j) * va),
        (a / 4, va / 4),
        (np.float64(3.0) * a, 3 * va),
        (np.complex128(1j) * a, 1j * va),
        (sum([a, b, a]), 2 * va + vb),
        (a * tf.asarray(1.5), 1.5 * va),
    ]
    for got, want in cases:
        assert np.allclose(dense(got), want, rtol=0, atol=1e-13 * np.abs(want).max())
    assert (a + b).bond_dims == [x + y for x, y in zip(a.bond_dims, b.bond_dims)]  # exact direct sum
    assert (2 * a).bond_dims == a.bond_dims


def test_compressed_add():
    a = t4a.MPS.random(8, bond_dim=6, seed=12)
    b = t4a.MPS.random(8, bond_dim=5, seed=13)
    want = 2 * dense(a) - dense(b)
    exact = t4a.add(a, -b, a)
    assert np.linalg.norm(dense(exact) - want) < 1e-12 * np.linalg.norm(want)
    assert max(exact.bond_dims) <= 11  # a + a needs no more bond than a
    for max_bond in (4, 8):
        c = a.add(-b, a, max_bond=max_bond)
        assert max(c.bond_dims) <= max_bond
        assert np.linalg.norm(dense(c) - want) <= truncation_bound(want, [2] * 8, max_bond) * (1 + 1e-9)
    assert t4a.add(a, a, max_bond=None, cutoff=0.0).bond_dims == [2 * x for x in a.bond_dims]


SIZES = st.tuples(
    st.integers(1, 4),
    st.integers(2, 3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(0, 99),
    st.sampled_from(DTYPES),
)


@settings(max_examples=25, deadline=None)
@given(SIZES, st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False))
def test_sum_scaling_and_linearity_properties(sizes, c):
    L, d, chi_a, chi_b, seed, dtype = sizes
    a = t4a.MPS.random(L, d=d, bond_dim=chi_a, seed=seed, dtype=dtype)
    b = t4a.MPS.random(L, d=d, bond_dim=chi_b, seed=seed + 1)
    W = random_mpo(L, d, 2, dtype, seed + 2)
    va, vb = dense(a), dense(b)
    scale = np.abs(va).max() + np.abs(vb).max()
    assert np.allclose(dense(a + b), va + vb, rtol=0, atol=1e-13 * scale)
    assert np.allclose(dense(c * a), c * va, rtol=0, atol=1e-13 * (1 + abs(c)) * scale)
    assert np.allclose(dense(a - c * b), va - c * vb, rtol=0, atol=1e-13 * (1 + abs(c)) * scale)
    # linear without truncation (cutoff 0: the default 1e-12 may drop c * b's part when |c| is tiny)
    wa, wb = dense(t4a.apply(W, a, cutoff=0.0)), dense(t4a.apply(W, b, cutoff=0.0))
    tol = 1e-11 * (1 + abs(c)) * (np.abs(wa).max() + np.abs(wb).max())
    assert np.allclose(dense(t4a.apply(W, a + c * b, cutoff=0.0)), wa + c * wb, rtol=0, atol=tol)


# ---- derivatives ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", METHODS)
def test_apply_grads(dtype, method):
    W = random_mpo(4, 2, 2, dtype, seed=14)
    psi = t4a.MPS.random(4, bond_dim=2, seed=15, dtype=dtype)
    with warnings.catch_warnings():
        # complex fit: an exact fit makes W|psi> independent of the intermediate SVDs, so all of
        # their cotangents (vectors and values) are rounding noise, and tenferro's gauge check,
        # relative to those cotangents, sees noise of noise; the loss is gauge invariant (the
        # dot-product test below checks the gradient itself)
        warnings.simplefilter("ignore", tf.linalg.GaugeWarning)
        check_grads(lambda w, p: t4a.apply(w, p, method=method).to_dense(), (W, psi), order=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_truncated_zipup_grads(dtype):
    W = random_mpo(4, 2, 2, dtype, seed=16)
    psi = t4a.MPS.random(4, bond_dim=2, seed=17, dtype=dtype)
    check_grads(lambda w, p: t4a.apply(w, p, max_bond=3).to_dense(), (W, psi), order=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_arithmetic_grads(dtype):
    a = t4a.MPS.random(4, bond_dim=2, seed=18, dtype=dtype)
    b = t4a.MPS.random(4, bond_dim=3, seed=19, dtype=dtype)
    check_grads(lambda x, y: (x + 2.5 * y - x / 3 + (-y) * (1 - 0.5j)).to_dense(), (a, b), order=2)
    check_grads(lambda x, y: t4a.add(x, y, max_bond=3).to_dense(), (a, b), order=1)
    check_grads(
        lambda c, x: (x * c - x / c).to_dense(), (tf.asarray(0.7, dtype=tf.dtype(np.dtype(dtype).name)), a), order=1
    )
    g = tidu.grad(lambda x: tf.real(t4a.overlap(x, x + x)))(a)
    assert isinstance(g, t4a.MPS) and g.bond_dims == a.bond_dims


# ---- symmetric states -------------------------------------------------------------------------
def conserving_opsum(L):
    os = t4a.OpSum()
    for i in range(L - 1):
        os += (0.7, "S+", i, "S-", i + 1)
        os += (0.7, "S-", i, "S+", i + 1)
        os += (1.1, "Sz", i, "Sz", i + 2 if i + 2 < L else i + 1)
    for i in range(L):
        os += (0.3 - 0.2j, "Sz", i)
    return os


@pytest.mark.parametrize("method", METHODS)
def test_symmetric_apply_matches_dense_and_keeps_the_sector(method):
    L = 8
    psi = t4a.MPS.random(L, bond_dim=6, seed=20, charge=1)
    for H in (models.heisenberg(L, Jz=0.6, conserve="Sz"), t4a.MPO.from_opsum(conserving_opsum(L), L, conserve="Sz")):
        ref = dense(H) @ dense(psi)
        phi = t4a.apply(H, psi, method=method)
        assert phi.symmetric and phi.sector == psi.sector == {"Sz": 1.0}
        assert rel_err(phi, ref) < 1e-12
        small = t4a.apply(H, psi, method=method, max_bond=5)
        assert small.symmetric and max(small.bond_dims) <= 5
        bound = truncation_bound(ref, [2] * L, 5)
        assert np.linalg.norm(dense(small) - ref) <= (1.25 if method == "zipup" else 1 + 1e-9) * bound


def test_symmetric_state_and_a_non_conserving_mpo_give_a_dense_result():
    psi = t4a.MPS.random(6, bond_dim=4, seed=21, charge=0)
    H = models.tfim(6, g=0.8)
    phi = t4a.apply(H, psi)
    assert not phi.symmetric and rel_err(phi, dense(H) @ dense(psi)) < 1e-12


def test_symmetric_arithmetic():
    a = t4a.MPS.random(6, bond_dim=4, seed=22, charge=0)
    b = t4a.MPS.random(6, bond_dim=3, seed=23, charge=0)
    va, vb = dense(a), dense(b)
    for got, want in ((a + b, va + vb), (a - 2j * b, va - 2j * vb), (-a / 3, -va / 3), (t4a.add(a, b, a), 2 * va + vb)):
        assert got.symmetric and got.sector == {"Sz": 0.0}
        assert np.allclose(dense(got), want, rtol=0, atol=1e-13)
    c = a.add(b, max_bond=3)
    assert c.symmetric and max(c.bond_dims) <= 3
    assert np.linalg.norm(dense(c) - va - vb) <= truncation_bound(va + vb, [2] * 6, 3) * (1 + 1e-9)


def test_symmetric_grads():
    psi = t4a.MPS.random(4, bond_dim=3, seed=24, charge=0)
    b = t4a.MPS.random(4, bond_dim=2, seed=25, charge=0)
    H = models.heisenberg(4, Jz=0.7, conserve="Sz")
    for method in METHODS:
        check_grads(lambda p, m=method: t4a.apply(H, p, method=m).to_dense(), (psi,), order=1)
    check_grads(lambda x, y: (x - 2 * y).to_dense(), (psi, b), order=1)
    check_grads(lambda x, y: t4a.add(x, y, max_bond=2).to_dense(), (psi, b), order=1)


# ---- bad input: one typed error each ----------------------------------------------------------
PSI = t4a.MPS.random(4, bond_dim=2, seed=26)
SYM0 = t4a.MPS.random(4, bond_dim=2, seed=26, charge=0)
SYM1 = t4a.MPS.random(4, bond_dim=2, seed=26, charge=1)
H4 = models.heisenberg(4)
BAD = [
    ("apply-swapped", lambda: t4a.apply(PSI, H4), t4a.Tensor4allTypeError, "the MPO comes first"),
    ("apply-not-mps", lambda: t4a.apply(H4, [1.0]), t4a.Tensor4allTypeError, "expected an MPS"),
    ("apply-length", lambda: t4a.apply(H4, t4a.MPS.random(5)), t4a.DimensionMismatchError, "5 sites"),
    ("apply-phys-dim", lambda: t4a.apply(H4, t4a.MPS.random(4, d=3)), t4a.DimensionMismatchError, "at site 0"),
    ("apply-method", lambda: t4a.apply(H4, PSI, method="svd"), t4a.InvalidOptionError, "zipup, fit, naive"),
    ("apply-max_bond", lambda: t4a.apply(H4, PSI, max_bond=0), t4a.BondDimensionError, "max_bond"),
    ("apply-cutoff", lambda: t4a.apply(H4, PSI, cutoff=1.5), t4a.InvalidOptionError, "cutoff"),
    ("apply-cutoff-str", lambda: t4a.apply(H4, PSI, cutoff="0"), t4a.Tensor4allTypeError, "cutoff"),
    ("apply-sweeps", lambda: t4a.apply(H4, PSI, method="fit", sweeps=0), t4a.InvalidOptionError, "sweeps"),
    ("apply-tol", lambda: t4a.apply(H4, PSI, tol=float("nan")), t4a.InvalidOptionError, "tol"),
    ("apply-seed", lambda: t4a.apply(H4, PSI, seed=-2), t4a.InvalidOptionError, "seed"),
    ("add-length", lambda: PSI + t4a.MPS.random(5), t4a.DimensionMismatchError, "differ in length"),
    ("sub-phys-dim", lambda: PSI - t4a.MPS.random(4, d=3), t4a.DimensionMismatchError, "physical dimensions"),
    ("add-dense-symmetric", lambda: PSI + SYM0, t4a.Tensor4allTypeError, ".dense()"),
    ("add-sectors", lambda: SYM0 + SYM1, t4a.SectorMismatchError, "different sectors"),
    ("add-groups", lambda: SYM0 + t4a.MPS.random(4, charge=0, local="pauli"), t4a.SectorMismatchError, "conserves"),
    ("add-number", lambda: PSI + 1.0, t4a.Tensor4allTypeError, "must be an MPS"),
    ("add-function-empty", lambda: t4a.add(), t4a.Tensor4allTypeError, "at least one MPS"),
    ("add-function-max_bond", lambda: PSI.add(PSI, max_bond=0), t4a.BondDimensionError, "max_bond"),
    ("add-function-cutoff", lambda: t4a.add(PSI, PSI, cutoff=-1.0), t4a.InvalidOptionError, "cutoff"),
    ("mul-str", lambda: PSI * "2", t4a.Tensor4allTypeError, "must be a number"),
    ("mul-mps", lambda: PSI * PSI, t4a.Tensor4allTypeError, "tensor4all.overlap"),
    ("mul-array", lambda: PSI * np.ones(2), t4a.Tensor4allTypeError, "must be a number"),
    ("mul-nan", lambda: PSI * float("nan"), t4a.NonFiniteError, "finite"),
    ("div-zero", lambda: PSI / 0, t4a.InvalidOptionError, "division by zero"),
]


@pytest.mark.parametrize("name,fn,exc,fragment", BAD, ids=[b[0] for b in BAD])
def test_bad_input(name, fn, exc, fragment):
    with pytest.raises(exc) as info:
        fn()
    assert fragment in str(info.value)
