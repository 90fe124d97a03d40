"""Issue 21, tensor networks: every numeric parameter validated, a scale-free Hermiticity
test, no division by a zero norm, methods that leave the object unchanged when they
fail, atomic and typed file I/O, callbacks checked up front, and a sweep of malformed
inputs over the public API (MPS, MPO, OpSum, models, dmrg, references). Each test names
the class of defect it guards; all of them failed before the fix."""

from __future__ import annotations

import math
import os
import stat
import warnings

import numpy as np
import pytest

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all import models, references

from .conftest import ground_energy

NAN, INF = float("nan"), float("inf")


@pytest.fixture(autouse=True)
def _no_numpy_warnings():
    """No RuntimeWarning (overflow, invalid value, divide by zero) leaks from these calls."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


def _raises(exc, fragment, fn, *args, **kwargs):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert fragment in str(info.value), str(info.value)
    assert isinstance(info.value, t4a.Tensor4allError)
    return info.value


def _with_nan(psi_or_H, site=1):
    """The same chain with NaN in one site tensor, built as tidu rebuilds pytrees (the
    constructors refuse NaN, so this is how a NaN state can reach a method)."""
    leaves = [np.asarray(t).copy() for t in psi_or_H.tensors]
    leaves[site][(0,) * leaves[site].ndim] = NAN
    return type(psi_or_H)._from_leaves(
        *(([psi_or_H.local] if isinstance(psi_or_H, t4a.MPO) else []) + [[tf.asarray(x) for x in leaves]])
    )


def _zero_mps(L=3):
    return t4a.MPS([np.zeros((1, 2, 1))] * L)


# =============================================================================================
# 1. every numeric parameter is validated
# =============================================================================================
H4 = models.heisenberg(4)
OS4 = models.heisenberg_opsum(4)


@pytest.mark.parametrize(
    "cutoff,exc,fragment",
    [
        (NAN, t4a.InvalidOptionError, "must be a finite number, got nan"),
        (INF, t4a.InvalidOptionError, "must be a finite number, got inf"),
        (2.0, t4a.InvalidOptionError, "must be < 1, got 2.0"),
        (1.0, t4a.InvalidOptionError, "must be < 1"),
        (-1e-3, t4a.InvalidOptionError, "must be >= 0"),
        ("a", t4a.Tensor4allTypeError, "must be a real number, got str 'a'"),
        (None, t4a.Tensor4allTypeError, "got NoneType None"),
        (True, t4a.Tensor4allTypeError, "got bool True"),
    ],
)
def test_cutoffs_are_relative_weights_in_zero_one(cutoff, exc, fragment):
    # before: from_opsum(cutoff=nan or 2.0) compressed Heisenberg to bond dimension 1 (a
    # different Hamiltonian); dmrg(cutoff=inf) forced bond dimension 1 and a wrong energy
    _raises(exc, fragment, t4a.MPO.from_opsum, OS4, 4, rtol=cutoff)
    _raises(exc, fragment, t4a.dmrg, H4, max_bond=4, sweeps=2, cutoff=cutoff)
    _raises(exc, fragment, t4a.dmrg, H4, max_bond=4, sweeps=2, cutoff=[1e-10, cutoff])
    _raises(exc, fragment, t4a.MPS.random(4).compress, cutoff=cutoff)
    _raises(exc, fragment, t4a.MPS.from_dense, np.ones(16), 4, cutoff=cutoff)
    dense = np.asarray(H4.to_dense())  # valid cutoffs still give the same Hamiltonian
    for c in (0.0, 1e-13, 1e-6):
        assert np.allclose(np.asarray(t4a.MPO.from_opsum(OS4, 4, rtol=c).to_dense()), dense, atol=1e-12)


@pytest.mark.parametrize(
    "kwargs,exc,fragment",
    [
        (dict(tol=NAN), t4a.InvalidOptionError, "tol must be a finite number, got nan"),
        (dict(tol=INF), t4a.InvalidOptionError, "tol must be a finite number, got inf"),
        (dict(tol=-1e-8), t4a.InvalidOptionError, "tol must be >= 0"),
        (dict(tol="1e-8"), t4a.Tensor4allTypeError, "tol must be a real number"),
        (dict(two_site="False"), t4a.Tensor4allTypeError, "two_site must be True or False, got str 'False'"),
        (dict(two_site=1), t4a.Tensor4allTypeError, "two_site must be True or False, got int 1"),
        (dict(two_site=None), t4a.Tensor4allTypeError, "two_site must be True or False"),
        (dict(compute_variance="no"), t4a.Tensor4allTypeError, "compute_variance must be True or False"),
        (dict(seed=-1), t4a.InvalidOptionError, "seed must be a non-negative integer or None, got -1"),
        (dict(seed=1.5), t4a.Tensor4allTypeError, "seed must be a non-negative integer or None, got float 1.5"),
        (dict(seed=True), t4a.Tensor4allTypeError, "got bool True"),
        (dict(seed="0"), t4a.Tensor4allTypeError, "got str '0'"),
        (
            dict(noise=INF, two_site=False),
            t4a.InvalidOptionError,
            "noise (a relative size in [0, 1), 1e-4 is typical, or a list of them) must be a finite number, got inf",
        ),
        (dict(noise=[1e-4, NAN], two_site=False), t4a.InvalidOptionError, "must be a finite number, got nan"),
        (dict(noise="a", two_site=False), t4a.Tensor4allTypeError, "noise"),
    ],
)
def test_dmrg_options_are_validated(kwargs, exc, fragment):
    kwargs = {"max_bond": 4, "sweeps": 2, **kwargs}
    _raises(exc, fragment, t4a.dmrg, H4, **kwargs)


def test_seeds_are_non_negative_integers_or_none():
    _raises(
        t4a.InvalidOptionError,
        "dmrg: seed must be a non-negative integer or None, got -1",
        t4a.dmrg,
        H4,
        max_bond=4,
        seed=-1,
    )
    assert t4a.dmrg(H4, max_bond=4, sweeps=2, seed=None).energy == pytest.approx(-1.6160254, abs=1e-6)
    assert t4a.dmrg(H4, max_bond=4, sweeps=2, seed=np.int64(3), two_site=np.bool_(True)).energy < -1.6
    assert t4a.MPS.random(4, seed=None).L == 4


@pytest.mark.parametrize(
    "call,exc,fragment",
    [
        (lambda: models.heisenberg(4, J="a"), t4a.Tensor4allTypeError, "heisenberg: J must be a number"),
        (lambda: models.heisenberg(4, J=None), t4a.Tensor4allTypeError, "heisenberg: J must be a number"),
        (lambda: models.heisenberg(4, J=True), t4a.Tensor4allTypeError, "got bool True"),
        (lambda: models.heisenberg(4, J=[1.0]), t4a.Tensor4allTypeError, "got list [1.0]"),
        (lambda: models.heisenberg(4, J=tf.ones((2,))), t4a.Tensor4allTypeError, "must be a scalar number"),
        (lambda: models.heisenberg(4, J=NAN), t4a.NonFiniteError, "heisenberg: J must be finite, got nan"),
        (lambda: models.heisenberg(4, Jz=INF), t4a.NonFiniteError, "heisenberg: Jz must be finite, got inf"),
        (lambda: models.heisenberg(4, h=-INF), t4a.NonFiniteError, "heisenberg: h must be finite"),
        (lambda: models.heisenberg(4, h=tf.asarray(NAN)), t4a.NonFiniteError, "heisenberg: h must be finite"),
        (lambda: models.xxz(4, Jz=complex(0, NAN)), t4a.NonFiniteError, "heisenberg: Jz must be finite"),
        (lambda: models.tfim(4, g=NAN), t4a.NonFiniteError, "tfim: g must be finite, got nan"),
        (lambda: models.tfim(4, J="1"), t4a.Tensor4allTypeError, "tfim: J must be a number"),
        (lambda: models.tfim_opsum(4, J=np.float64(INF)), t4a.NonFiniteError, "tfim: J must be finite"),
        (lambda: models.heisenberg_opsum(4, J=np.array(NAN)), t4a.NonFiniteError, "heisenberg: J must be finite"),
        (lambda: models.heisenberg(4, spin=["1/2"]), t4a.InvalidOptionError, "unknown spin ['1/2']"),
    ],
)
def test_model_couplings_are_finite_numbers(call, exc, fragment):
    _raises(exc, fragment, call)


def test_traced_nan_coupling_is_reported_as_non_finite():
    with pytest.raises(t4a.NonFiniteError, match="heisenberg: J must be finite"):
        tidu.grad(lambda J: t4a.dmrg(models.heisenberg(4, J=J), max_bond=4, sweeps=2).energy)(tf.asarray(NAN))


@pytest.mark.parametrize(
    "term,exc,fragment",
    [
        ((NAN, "Sz", 0), t4a.NonFiniteError, "the coefficient of OpSum term Sz(0) must be finite, got nan"),
        ((INF, "S+", 0, "S-", 1), t4a.NonFiniteError, "the coefficient of OpSum term S+(0) S-(1) must be finite"),
        ((complex(1, INF), "Sz", 0), t4a.NonFiniteError, "must be finite"),
        ((tf.asarray(NAN), "Sz", 0), t4a.NonFiniteError, "must be finite"),
        ((np.float32(NAN), "Sz", 0), t4a.NonFiniteError, "must be finite"),
        ((True, "Sz", 0), t4a.OpSumTermError, "an OpSum coefficient must be a number, got the bool True"),
    ],
)
def test_opsum_coefficients_are_finite_numbers(term, exc, fragment):
    os_ = t4a.OpSum() + (1.0, "Sz", 0)
    _raises(exc, fragment, os_.__iadd__, term)
    assert len(os_) == 1  # the OpSum is unchanged
    _raises(exc, fragment, t4a.OpSum, [term])


def test_opsum_accepts_terms_of_another_opsum_and_huge_finite_coefficients():
    os_ = t4a.OpSum(OS4.terms)
    assert len(os_) == len(OS4)
    assert np.allclose(np.asarray(t4a.MPO.from_opsum(os_, 4).to_dense()), np.asarray(H4.to_dense()))
    assert t4a.MPO.from_opsum(t4a.OpSum() + (1e300, "Sz", 0), 2).is_hermitian()


def test_coefficients_that_overflow_when_added_are_a_range_error():
    os_ = t4a.OpSum() + (1.5e308, "Sz", 0) + (1.5e308, "Sz", 0)
    _raises(t4a.ValueRangeError, "beyond the float range", t4a.MPO.from_opsum, os_, 2)


@pytest.mark.parametrize(
    "call,exc,fragment",
    [
        (lambda: t4a.MPS.random(4, seed=-1), t4a.InvalidOptionError, "MPS.random: seed must be a non-negative"),
        (lambda: t4a.MPS.random(4, seed=0.5), t4a.Tensor4allTypeError, "MPS.random: seed"),
        (lambda: t4a.MPS.random(4, dtype="int64"), t4a.InvalidOptionError, "dtype must be one of float32, float64"),
        (lambda: t4a.MPS.random(4, dtype="foo"), t4a.InvalidOptionError, "got 'foo'"),
        (lambda: t4a.MPS.random(200, bond_dim=10**30), t4a.Tensor4allMemoryError, "more than this machine's memory"),
        (lambda: t4a.MPS.random(80, bond_dim=1).to_dense(), t4a.Tensor4allMemoryError, "MPS.to_dense of 80 sites"),
        (lambda: models.heisenberg(40).to_dense(), t4a.Tensor4allMemoryError, "MPO.to_dense of 40 sites"),
        (lambda: H4.is_hermitian(tol=NAN), t4a.InvalidOptionError, "MPO.is_hermitian: tol must be a finite number"),
        (lambda: H4.is_hermitian(tol=-1.0), t4a.InvalidOptionError, "MPO.is_hermitian: tol must be >= 0"),
        (lambda: OS4.check_sites("4"), t4a.BondDimensionError, "L (number of sites) must be a positive integer"),
    ],
)
def test_sizes_seeds_dtypes_and_tolerances(call, exc, fragment):
    _raises(exc, fragment, call)


# =============================================================================================
# 2. Hermiticity is scale-free; NaN is non-finite, not non-Hermitian
# =============================================================================================
@pytest.mark.parametrize("J", [1e-200, 1e200])
def test_hermiticity_does_not_depend_on_the_scale(J):
    assert models.heisenberg(8, J=J).is_hermitian()
    assert models.tfim(6, J=J, g=0.5 * J).is_hermitian()
    raising = t4a.MPO.from_opsum(t4a.OpSum() + (J, "S+", 0, "Sz", 1) + (J, "Sz", 0), 3)
    assert not raising.is_hermitian()


def test_non_finite_hamiltonian_is_reported_as_such():
    bad = _with_nan(models.heisenberg(4))
    _raises(t4a.NonFiniteError, "MPO: site tensor 1 holds NaN or infinity", bad.is_hermitian)
    err = _raises(t4a.NonFiniteError, "dmrg: the Hamiltonian (MPO): site tensor 1 holds NaN", t4a.dmrg, bad, max_bond=4)
    assert not isinstance(err, t4a.NonHermitianError)
    _raises(t4a.NonFiniteError, "MPO site tensor 0 holds NaN or infinity", t4a.MPO, [np.full((1, 2, 2, 1), NAN)])
    H = t4a.MPO.from_opsum(t4a.OpSum() + (1.0, "S+", 0, "S-", 1), 2)  # still refused: non-Hermitian
    _raises(t4a.NonHermitianError, "dmrg needs a Hermitian Hamiltonian", t4a.dmrg, H, max_bond=4)


def test_huge_couplings_are_refused_with_a_range_error():
    # the choice for J = 1e200: refused (not mislabelled non-Hermitian): <H^2> of the
    # variance would overflow; the message says how to rescale
    H = models.heisenberg(8, J=1e200)
    assert H.is_hermitian()
    _raises(t4a.ValueRangeError, "divide the couplings by a common factor", t4a.dmrg, H, max_bond=8)
    assert isinstance(pytest.raises(OverflowError, t4a.dmrg, H, max_bond=8).value, t4a.ValueRangeError)


@pytest.mark.parametrize(
    "J,two_site",
    [(1e-200, True), (1e-200, False), (1e-20, True), (1e-20, False), (1e-12, True), (1e-12, False), (1e100, False)],
)
def test_dmrg_energy_scales_with_the_couplings(J, two_site):
    # before: J <= 1e-10 gave energies off in the 4th digit or worse (absolute eigensolver
    # thresholds), J >= 1e150 an overflow reported as "non-Hermitian"
    exact = ground_energy(models.heisenberg_opsum(8), 8)
    res = t4a.dmrg(models.heisenberg(8, J=J), max_bond=16, sweeps=6, tol=1e-10 * J, two_site=two_site)
    assert res.energy / J == pytest.approx(exact, abs=1e-9)
    assert abs(res.variance) / J / J < 1e-8
    assert all(math.isfinite(r.energy / J) for r in res.history)


@pytest.mark.parametrize("J", [1e-200, 1e-20])
def test_hellmann_feynman_gradient_scales_with_the_couplings(J):
    exact = ground_energy(models.heisenberg_opsum(8), 8)
    e, g = tidu.value_and_grad(
        lambda j: t4a.dmrg(models.heisenberg(8, J=j), max_bond=16, sweeps=6, tol=1e-10 * J).energy
    )(tf.asarray(J))
    assert float(g) == pytest.approx(float(e) / J, rel=1e-9)  # E is homogeneous of degree 1 in J
    assert float(g) == pytest.approx(exact, abs=1e-9)


def test_progress_reports_energies_in_the_callers_units():
    seen = []
    t4a.dmrg(models.heisenberg(6, J=1e-30), max_bond=8, sweeps=2, tol=0.0, progress=lambda u: seen.append(u.energy))
    assert seen and all(-1e-29 < e < 0 for e in seen)


# =============================================================================================
# 3. no division by a zero norm; huge and tiny states give finite, right numbers
# =============================================================================================
@pytest.mark.parametrize(
    "call,fragment",
    [
        (lambda z: z.normalize(), "MPS.normalize: the state has norm 0"),
        (lambda z: z.expect("Sz", 0), "MPS.expect: the state has norm 0"),
        (lambda z: z.correlation("Sz", "Sz", 0, 2), "MPS.correlation: the state has norm 0"),
        (lambda z: t4a.expectation(z, models.heisenberg(3)), "expectation: the state has norm 0"),
        (lambda z: z.schmidt_values(), "MPS.schmidt_values: the state has norm 0"),
        (lambda z: z.entanglement_entropy(), "no Schmidt values"),
        (lambda z: t4a.dmrg(models.heisenberg(3), z, max_bond=4), "dmrg: the start state psi0 has norm 0"),
        (lambda z: t4a.MPS.product_state([[0.0, 0.0], 0, 1]).normalize(), "the state has norm 0"),
    ],
)
def test_zero_norm_states_raise_instead_of_nan(call, fragment):
    _raises(t4a.ZeroNormError, fragment, call, _zero_mps())


def test_zero_norm_under_tidu_grad_and_the_zero_state_itself_are_fine():
    z = _zero_mps()
    assert float(z.norm()) == 0.0 and float(tf.real(t4a.overlap(z, z))) == 0.0
    with pytest.raises(t4a.ZeroNormError):
        tidu.grad(lambda p: t4a.expectation(p, models.heisenberg(3)))(z)


@pytest.mark.parametrize("scale", [1e-200, 1e-100, 1e100, 1e200])
def test_states_near_the_ends_of_the_float_range(scale):
    psi = t4a.MPS.random(6, bond_dim=3, seed=1)
    big = t4a.MPS([np.asarray(t) * scale for t in psi.tensors])  # norm scale**6: beyond the float range
    H = models.heisenberg(6)
    assert float(big.expect("Sz", 2)) == pytest.approx(float(psi.expect("Sz", 2)), abs=1e-12)
    assert float(big.correlation("Sx", "Sx", 1, 4)) == pytest.approx(
        float(psi.correlation("Sx", "Sx", 1, 4)), abs=1e-12
    )
    assert float(t4a.expectation(big, H)) == pytest.approx(float(t4a.expectation(psi, H)), abs=1e-12)
    assert big.entanglement_entropy() == pytest.approx(psi.entanglement_entropy(), abs=1e-12)
    n = big.normalize()
    assert float(n.norm()) == pytest.approx(1.0, abs=1e-13)
    assert float(t4a.expectation(n, H)) == pytest.approx(float(t4a.expectation(psi, H)), abs=1e-12)
    small = t4a.MPS([np.asarray(t) * scale ** (1 / 6) for t in psi.tensors])  # norm ~ scale: representable
    assert float(small.norm()) == pytest.approx(scale, rel=1e-12)
    c = t4a.MPS([np.asarray(t) * scale for t in psi.tensors])
    c.compress(max_bond=2)
    assert float(t4a.MPS(c.tensors).normalize().norm()) == pytest.approx(1.0, abs=1e-13)
    v = np.asarray(psi.to_dense()) * scale
    back = t4a.MPS.from_dense(v, 6, cutoff=1e-12)
    assert float(back.norm()) == pytest.approx(scale, rel=1e-10)


def test_gradients_through_the_scaled_norm_are_unchanged():
    psi = t4a.MPS.random(5, bond_dim=3, seed=2)
    H = models.heisenberg(5)
    big = t4a.MPS([np.asarray(t) * 2.0**60 for t in psi.tensors])  # norm 2**300, its square overflows
    g = tidu.grad(lambda p: t4a.expectation(p, H))(psi)
    gb = tidu.grad(lambda p: t4a.expectation(p, H))(big)
    for a, b in zip(g.tensors, gb.tensors):  # the expectation is homogeneous of degree 0
        np.testing.assert_allclose(np.asarray(b) * 2.0**60, np.asarray(a), atol=1e-12)
    gn = tidu.grad(lambda p: p.norm())(psi)
    gnb = tidu.grad(lambda p: p.norm())(big)
    for a, b in zip(gn.tensors, gnb.tensors):  # the norm is homogeneous of degree 1 in each of the 5 sites
        np.testing.assert_allclose(np.asarray(b), np.asarray(a) * 2.0**240, rtol=1e-12)


# =============================================================================================
# 4. methods that change an object check everything before they write
# =============================================================================================
def _snapshot(obj):
    ts = list(obj._tensors) if hasattr(obj, "_tensors") else list(obj._terms)
    return ts, [np.asarray(t).copy() if not isinstance(t, t4a.Term) else t for t in ts]


def _assert_unchanged(obj, snap):
    ts, arrays = snap
    now = list(obj._tensors) if hasattr(obj, "_tensors") else list(obj._terms)
    assert len(now) == len(ts) and all(a is b for a, b in zip(now, ts)), "the object was modified"
    for a, b in zip(now, arrays):
        if isinstance(b, t4a.Term):
            assert a == b
        else:
            assert np.array_equal(np.asarray(a), b, equal_nan=True)


def _fail_on_call(monkeypatch, module, name, n):
    """Make ``module.name`` raise on its ``n``-th call (a failure in the middle of a sweep)."""
    real = getattr(module, name)
    count = [0]

    def wrapper(*a, **k):
        count[0] += 1
        if count[0] >= n:
            raise RuntimeError(f"injected failure in {name}")
        return real(*a, **k)

    monkeypatch.setattr(module, name, wrapper)


#: every method that changes an MPS, MPO or OpSum in place, with the bad calls that must
#: leave it unchanged: (object factory, method, args, kwargs, expected exception)
MUTATIONS = [
    (
        "MPS.canonicalize-nan",
        lambda: _with_nan(t4a.MPS.random(5, bond_dim=3), 3),
        "canonicalize",
        (1,),
        {},
        t4a.NonFiniteError,
    ),
    ("MPS.normalize-nan", lambda: _with_nan(t4a.MPS.random(5, bond_dim=3), 2), "normalize", (), {}, t4a.NonFiniteError),
    ("MPS.normalize-zero", _zero_mps, "normalize", (), {}, t4a.ZeroNormError),
    ("MPS.compress-nan", lambda: _with_nan(t4a.MPS.random(5, bond_dim=3), 4), "compress", (2,), {}, t4a.NonFiniteError),
    (
        "MPS.compress-cutoff",
        lambda: t4a.MPS.random(5, bond_dim=3),
        "compress",
        (2,),
        {"cutoff": NAN},
        t4a.InvalidOptionError,
    ),
    ("OpSum.__iadd__-nan", lambda: t4a.OpSum() + (1.0, "Sz", 0), "__iadd__", ((NAN, "Sz", 1),), {}, t4a.NonFiniteError),
    ("OpSum.add-nan", lambda: t4a.OpSum() + (1.0, "Sz", 0), "add", (INF, "Sz", 1), {}, t4a.NonFiniteError),
    ("OpSum.add-bool", lambda: t4a.OpSum() + (1.0, "Sz", 0), "add", (False, "Sz", 1), {}, t4a.OpSumTermError),
]


@pytest.mark.parametrize("name,make,method,args,kwargs,exc", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_a_failing_method_leaves_the_object_unchanged(name, make, method, args, kwargs, exc):
    obj = make()
    snap = _snapshot(obj)
    with pytest.raises(exc):
        getattr(obj, method)(*args, **kwargs)
    _assert_unchanged(obj, snap)


@pytest.mark.parametrize(
    "method,args,module,fn,n",
    [
        ("canonicalize", (2,), tf.linalg, "qr", 2),  # fails after the first QR step
        ("canonicalize", (2,), tf.linalg, "lq", 2),  # fails in the right-to-left sweep
        ("canonicalize", (0,), tf, "einsum", 3),
    ],
)
def test_a_failure_midway_leaves_the_mps_unchanged(monkeypatch, method, args, module, fn, n):
    psi = t4a.MPS.random(6, bond_dim=4, seed=5)
    snap = _snapshot(psi)
    _fail_on_call(monkeypatch, module, fn, n)
    with pytest.raises(RuntimeError, match="injected failure"):
        getattr(psi, method)(*args)
    _assert_unchanged(psi, snap)


#: valid calls of every public method of MPS and MPO: each is run on a fresh object to find
#: the methods that change it, which must all appear in MUTATIONS above
VALID_CALLS = {
    "canonicalize": (2,),
    "normalize": (),
    "compress": (2,),
    "norm": (),
    "to_dense": (),
    "expect": ("Sz", 1),
    "correlation": ("Sz", "Sz", 0, 2),
    "correlation_matrix": ("Sz", "Sz"),
    "entanglement_entropy": (),
    "schmidt_values": (),
    "schmidt_form": (),
    "is_hermitian": (),
    "dense": (),
    "entanglement_spectrum": (1,),
    "add": (t4a.MPS.random(5, bond_dim=2, seed=2),),
}
#: methods that need a symmetric MPS (they are checked on one)
SYMMETRIC_ONLY = {"entanglement_spectrum"}


def test_every_mutating_method_has_a_state_safety_row_and_passes_it(tmp_path):
    for cls in (t4a.MPS, t4a.MPO):
        _check_mutators(cls, tmp_path)


def _check_mutators(cls, tmp_path):
    obj = t4a.MPS.random(5, bond_dim=3, seed=1) if cls is t4a.MPS else models.heisenberg(5)
    methods = sorted(m for m, v in vars(cls).items() if not m.startswith("_") and callable(v))
    methods += sorted(m for m, v in vars(t4a.networks.chain.SiteChain).items() if not m.startswith("_") and callable(v))
    mutating = set()
    for m in methods:
        if m in ("save",):
            obj.save(tmp_path / "x.npz")
            continue
        if m in ("load", "random", "product_state", "from_dense", "from_opsum"):
            continue  # constructors: they make a new object
        assert m in VALID_CALLS, f"{cls.__name__}.{m}: add a valid call to VALID_CALLS (and MUTATIONS if it mutates)"
        fresh = t4a.MPS.random(5, bond_dim=3, seed=1) if cls is t4a.MPS else models.heisenberg(5)
        if m in SYMMETRIC_ONLY:
            fresh = t4a.MPS.random(5, bond_dim=3, seed=1, charge=0.5)
        before = list(fresh._tensors)
        getattr(fresh, m)(*VALID_CALLS[m])
        if any(a is not b for a, b in zip(before, fresh._tensors)) or len(before) != len(fresh._tensors):
            mutating.add(m)
    rows = [row for row in MUTATIONS if row[0].startswith(cls.__name__ + ".")]
    assert mutating == {row[2] for row in rows}
    assert (cls is t4a.MPS) == bool(mutating)  # an MPO is never changed in place
    for _, make, method, args, kwargs, exc in rows:
        obj = make()
        snap = _snapshot(obj)
        with pytest.raises(exc):
            getattr(obj, method)(*args, **kwargs)
        _assert_unchanged(obj, snap)


# =============================================================================================
# 5. files: atomic writes, typed load errors naming the file, typed path errors
# =============================================================================================
def _files(d):
    return sorted(p.name for p in d.iterdir())


def test_a_failed_npz_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    good = t4a.MPS.random(4, bond_dim=2, seed=1)
    path = tmp_path / "psi.npz"
    good.save(path)
    before = path.read_bytes()

    def partial_savez(fh, **arrays):
        fh.write(b"PK\x03\x04 half of a zip archive")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np, "savez", partial_savez)
    err = _raises(t4a.MPSFileIOError, "No space left on device", t4a.MPS.random(4, bond_dim=3, seed=2).save, path)
    assert isinstance(err, OSError) and str(path) in str(err)
    assert path.read_bytes() == before and _files(tmp_path) == ["psi.npz"]

    def interrupted_savez(fh, **arrays):
        fh.write(b"PK\x03\x04")
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez", interrupted_savez)
    with pytest.raises(KeyboardInterrupt):
        t4a.MPS.random(4, bond_dim=3, seed=2).save(path)
    assert path.read_bytes() == before and _files(tmp_path) == ["psi.npz"]
    monkeypatch.undo()
    back = t4a.MPS.load(path)
    assert all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(back.tensors, good.tensors))

    def f(p):  # a state that cannot be serialized (tracers) writes nothing
        p.save(path)
        return tf.real(t4a.overlap(p, p))

    with pytest.raises(t4a.NotDifferentiableError):
        tidu.grad(f)(t4a.MPS.random(4, bond_dim=2, seed=4))
    assert path.read_bytes() == before and _files(tmp_path) == ["psi.npz"]
    (tmp_path / "plain").write_bytes(b"x")  # the replaced file has the usual permissions, not mkstemp's 0600
    assert stat.S_IMODE(os.stat(path).st_mode) == stat.S_IMODE(os.stat(tmp_path / "plain").st_mode)


@pytest.mark.parametrize("ext", [".npz", ".arrow"])
def test_write_errors_name_the_path(tmp_path, ext):
    if ext == ".arrow":
        pytest.importorskip("pyarrow")
    psi = t4a.MPS.random(3, bond_dim=2)
    _raises(t4a.MPSFileIOError, "does not exist", psi.save, tmp_path / "no" / f"psi{ext}")
    (tmp_path / f"d{ext}").mkdir()
    _raises(t4a.MPSFileIOError, "is a directory", psi.save, tmp_path / f"d{ext}")
    assert _files(tmp_path) == [f"d{ext}"]


def _write(path, data):
    path.write_bytes(data)
    return path


@pytest.fixture
def damaged(tmp_path):
    psi = t4a.MPS.random(4, bond_dim=2, seed=3)
    psi.save(tmp_path / "good.npz")
    raw = (tmp_path / "good.npz").read_bytes()
    out = {
        "truncated": _write(tmp_path / "truncated.npz", raw[: len(raw) // 2]),
        "crc": _write(tmp_path / "crc.npz", raw[:200] + bytes(40) + raw[240:]),
        "empty": _write(tmp_path / "empty.npz", b""),
        "text": _write(tmp_path / "text.npz", b"hello, world\n"),
    }
    np.save(tmp_path / "one.npy", np.zeros(3))
    out["npy"] = (tmp_path / "one.npy").rename(tmp_path / "npy.npz")
    for name, arrays in {
        "other": dict(a=np.zeros(3)),
        "gap": dict(site_0000=np.ones((1, 2, 1)), site_0002=np.ones((1, 2, 1))),
        "twod": dict(site_0000=np.ones((2, 2))),
        "nan": dict(site_0000=np.full((1, 2, 1), NAN)),
        "strings": dict(site_0000=np.array([[["a"], ["b"]]])),
        "bonds": dict(site_0000=np.ones((1, 2, 2)), site_0001=np.ones((3, 2, 1))),
        "objects": dict(site_0000=np.array([None, 1.0], dtype=object)),
    }.items():
        np.savez(tmp_path / f"{name}.npz", **arrays)
        out[name] = tmp_path / f"{name}.npz"
    (tmp_path / "dir.npz").mkdir()
    out["dir"] = tmp_path / "dir.npz"
    out["missing"] = tmp_path / "missing.npz"
    return out


@pytest.mark.parametrize(
    "kind,exc,fragment",
    [
        ("dir", t4a.MPSFileIOError, "is a directory"),
        ("empty", t4a.MPSFileError, "is empty (0 bytes)"),
        ("truncated", t4a.MPSFileError, "could not be read as npz (a truncated or damaged file?)"),
        ("crc", t4a.MPSFileError, "could not be read as npz"),
        ("text", t4a.MPSFileError, "is not a NumPy .npz archive (it starts with b'hello, w')"),
        ("npy", t4a.MPSFileError, "is a single NumPy .npy array, not a NumPy .npz archive"),
        ("twod", t4a.MPSFileError, "do not form an MPS: MPS site tensor 0 must have 3 indices"),
        ("nan", t4a.MPSFileError, "do not form an MPS: MPS site tensor 0 holds NaN or infinity"),
        ("strings", t4a.MPSFileError, "must hold float or complex numbers"),
        ("bonds", t4a.MPSFileError, "MPS bond 0 mismatch"),
        ("objects", t4a.MPSFileError, "Object arrays cannot be loaded"),
    ],
)
def test_load_errors_are_typed_and_name_the_file(damaged, kind, exc, fragment):
    err = _raises(exc, fragment, t4a.MPS.load, damaged[kind])
    assert str(damaged[kind]) in str(err)


def test_a_file_of_another_format_is_named(tmp_path):
    pytest.importorskip("pyarrow")
    psi = t4a.MPS.random(4, bond_dim=2)
    for ext in (".npz", ".arrow", ".parquet"):
        psi.save(tmp_path / f"psi{ext}")
    _raises(
        t4a.MPSFileError,
        "is an Arrow IPC file, not a NumPy .npz archive; pass format='arrow'",
        t4a.MPS.load,
        tmp_path / "psi.arrow",
        format="npz",
    )
    _raises(
        t4a.MPSFileError,
        "is a NumPy .npz archive, not an Arrow IPC file; pass format='npz'",
        t4a.MPS.load,
        tmp_path / "psi.npz",
        format="arrow",
    )
    _raises(
        t4a.MPSFileError,
        "is a Parquet file, not an Arrow IPC file",
        t4a.MPS.load,
        tmp_path / "psi.parquet",
        format="arrow",
    )
    raw = (tmp_path / "psi.arrow").read_bytes()
    _write(tmp_path / "cut.arrow", raw[: len(raw) // 2])
    _raises(t4a.MPSFileError, "could not be read as arrow", t4a.MPS.load, tmp_path / "cut.arrow")


@pytest.mark.parametrize("path", [123, None, 1.5, ["psi.npz"]])
def test_paths_of_the_wrong_type_are_type_errors(path):
    psi = t4a.MPS.random(3, bond_dim=2)
    for call in (lambda: psi.save(path), lambda: t4a.MPS.load(path)):
        err = _raises(t4a.Tensor4allTypeError, "a path must be a str or os.PathLike", call)
        assert isinstance(err, TypeError)
    _raises(t4a.UnsupportedFileFormatError, "unknown MPS file format 5", t4a.MPS.load, "x.npz", format=5)


def test_bytes_and_pathlike_paths_work(tmp_path):
    psi = t4a.MPS.random(3, bond_dim=2)
    psi.save(os.fsencode(tmp_path / "b.npz"))
    assert t4a.MPS.load(tmp_path / "b.npz").bond_dims == psi.bond_dims


# =============================================================================================
# 6. callback and progress are checked before the first sweep
# =============================================================================================
@pytest.mark.parametrize("kwargs", [dict(callback=5), dict(progress="bar"), dict(callback=[print])])
def test_callbacks_are_checked_up_front(kwargs):
    bonds = []
    kw = dict(progress=lambda u: bonds.append(u), **kwargs) if "progress" not in kwargs else kwargs
    fragment = (
        "must be True (a progress bar), False/None or a callable" if "progress" in kwargs else "must be a callable"
    )
    _raises(t4a.Tensor4allTypeError, fragment, t4a.dmrg, models.heisenberg(6), max_bond=4, **kw)
    assert bonds == []  # before: callback=5 failed only after a whole sweep


# =============================================================================================
# 7. malformed and borderline input over the public API
# =============================================================================================
PSI = t4a.MPS.random(4, bond_dim=2, seed=7)

SWEEP = [
    ("MPS-int", lambda: t4a.MPS(5), t4a.Tensor4allTypeError, "an MPS takes a list of site tensors"),
    ("MPS-str", lambda: t4a.MPS("abc"), t4a.Tensor4allTypeError, "got str"),
    ("MPS-strings", lambda: t4a.MPS([np.array([[["a"], ["b"]]])]), t4a.Tensor4allTypeError, "float or complex"),
    ("MPS-bools", lambda: t4a.MPS([np.ones((1, 2, 1), bool)]), t4a.Tensor4allTypeError, "dtype bool"),
    ("MPS-None", lambda: t4a.MPS([None]), t4a.Tensor4allTypeError, "float or complex"),
    ("MPS-ragged", lambda: t4a.MPS([[[1.0], [1.0, 2.0]]]), t4a.Tensor4allTypeError, "is not an array"),
    ("MPS-extent0", lambda: t4a.MPS([np.ones((1, 0, 1))]), t4a.DimensionMismatchError, "extent 0"),
    ("MPS-inf", lambda: t4a.MPS([np.full((1, 2, 1), INF)]), t4a.NonFiniteError, "holds NaN or infinity"),
    ("MPO-int", lambda: t4a.MPO(5), t4a.Tensor4allTypeError, "an MPO takes a list of site tensors"),
    (
        "MPO-local-type",
        lambda: t4a.MPO([np.ones((1, 2, 2, 1))], local=5),
        t4a.Tensor4allTypeError,
        "local must be the name of a local space",
    ),
    (
        "MPO-local-dim",
        lambda: t4a.MPO([np.ones((1, 2, 2, 1))], local="spin-1"),
        t4a.DimensionMismatchError,
        "local space 'spin-1' has dimension 3",
    ),
    ("product_state-int", lambda: t4a.MPS.product_state(5), t4a.Tensor4allTypeError, "product_state takes a list"),
    ("product_state-bool", lambda: t4a.MPS.product_state([True, 0]), t4a.Tensor4allTypeError, "got True"),
    (
        "product_state-strvec",
        lambda: t4a.MPS.product_state([["a", "b"]]),
        t4a.Tensor4allTypeError,
        "local vector must hold numbers",
    ),
    ("product_state-nan", lambda: t4a.MPS.product_state([[NAN, 0.0]]), t4a.NonFiniteError, "NaN or infinity"),
    ("from_dense-str", lambda: t4a.MPS.from_dense(["a"] * 8, 3), t4a.Tensor4allTypeError, "must hold numbers"),
    ("from_dense-None", lambda: t4a.MPS.from_dense(None, 3), t4a.Tensor4allTypeError, "must hold numbers"),
    (
        "from_dense-nan",
        lambda: t4a.MPS.from_dense(np.r_[NAN, np.zeros(7)], 3),
        t4a.NonFiniteError,
        "NaN or infinity (entry 0)",
    ),
    ("expect-None", lambda: PSI.expect(None, 0), t4a.Tensor4allTypeError, "must hold numbers"),
    ("expect-nan-op", lambda: PSI.expect(np.full((2, 2), NAN), 0), t4a.NonFiniteError, "holds NaN or infinity"),
    ("entropy-bool", lambda: PSI.entanglement_entropy(True), t4a.SiteOutOfRangeError, "bond True is outside"),
    (
        "expectation-result",
        lambda: t4a.expectation(t4a.dmrg(models.heisenberg(3), max_bond=2, sweeps=1), H4),
        t4a.Tensor4allTypeError,
        "got DMRGResult (pass its .state)",
    ),
    (
        "dmrg-psi0-result",
        lambda: t4a.dmrg(H4, t4a.DMRGResult(0.0, PSI), max_bond=2),
        t4a.Tensor4allTypeError,
        "got DMRGResult (pass its .state)",
    ),
    ("OpSum-int", lambda: t4a.OpSum(5), t4a.Tensor4allTypeError, "OpSum takes an iterable of terms"),
    ("Term-nan", lambda: t4a.OpSum([t4a.Term(NAN, (("Sz", 0),))]), t4a.NonFiniteError, "must be finite"),
    (
        "factor-unhashable",
        lambda: t4a.local_space("pauli").factor(["X"]),
        t4a.UnknownOperatorError,
        "valid operators: Id, X, Y, Z",
    ),
    ("LocalSpace-dim", lambda: t4a.LocalSpace("q", 0, {}).operator_names(), t4a.BondDimensionError, "dim"),
    (
        "LocalSpace-matrix",
        lambda: t4a.LocalSpace("q", 2, {"A": (1, np.eye(3))}).matrix("A"),
        t4a.DimensionMismatchError,
        "must be a real 2x2 matrix",
    ),
    (
        "LocalSpace-nan",
        lambda: t4a.LocalSpace("q", 1, {"A": (1, np.full((1, 1), NAN))}),
        t4a.NonFiniteError,
        "holds NaN",
    ),
    (
        "ref-tfim-nan",
        lambda: references.tfim_ground_energy(4, J=NAN),
        t4a.InvalidOptionError,
        "J must be a finite number",
    ),
    ("ref-tfim-str", lambda: references.tfim_ground_energy(4, g="a"), t4a.Tensor4allTypeError, "real number"),
    ("ref-closed-L", lambda: references.tfim_critical_closed_form(0), t4a.BondDimensionError, "positive integer"),
    (
        "ref-exact-site",
        lambda: references.exact_ground_energy(t4a.OpSum() + ("Sz", 5), 3),
        t4a.SiteOutOfRangeError,
        "outside 0..2",
    ),
    ("ref-exact-os", lambda: references.exact_ground_energy(5, 3), t4a.Tensor4allTypeError, "expects an OpSum"),
    ("ref-exact-L", lambda: references.exact_ground_energy(OS4, "4"), t4a.BondDimensionError, "positive integer"),
    (
        "ref-exact-huge",
        lambda: references.exact_ground_energy(t4a.OpSum() + ("Sz", 0), 60),
        t4a.Tensor4allMemoryError,
        "more than this machine's memory",
    ),
    ("ref-energy-nan", lambda: references.reference_energy("heisenberg", 4, J=NAN), t4a.InvalidOptionError, "finite"),
    (
        "ref-energy-spin",
        lambda: references.reference_energy("heisenberg", 4, spin="3"),
        t4a.InvalidOptionError,
        "unknown spin '3'",
    ),
]


@pytest.mark.parametrize("name,call,exc,fragment", SWEEP, ids=[s[0] for s in SWEEP])
def test_malformed_input_over_the_public_api(name, call, exc, fragment):
    _raises(exc, fragment, call)


def test_integer_tensors_become_float64_and_work_everywhere():
    psi = t4a.MPS([np.ones((1, 2, 2), dtype=int), np.ones((2, 2, 1), dtype=int)])
    assert psi.dtype == tf.float64
    psi.canonicalize(0)
    assert float(psi.norm()) == pytest.approx(4.0)
    H = t4a.MPO([np.eye(2, dtype=int).reshape(1, 2, 2, 1)] * 2)
    assert H.dtype == tf.float64 and H.is_hermitian()
