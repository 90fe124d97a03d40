"""Issue 21, tensor networks: every numeric parameter validated, callbacks checked up
front, and a sweep of malformed inputs over the public API (MPS, MPO, OpSum, models,
dmrg, references). Each test names the class of defect it guards; all of them failed
before the fix. The scale-free Hermiticity test and zero norms are in
test_network_scale_safety.py, methods that leave the object unchanged when they fail in
test_network_mutation_safety.py, and file I/O in test_network_file_safety.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenferro as tf
import tidu
import tensor4all as t4a
from tensor4all import models, references

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
        (lambda: OS4.check_sites("4"), t4a.Tensor4allTypeError, "L (number of sites) must be a positive integer"),
    ],
)
def test_sizes_seeds_dtypes_and_tolerances(call, exc, fragment):
    _raises(exc, fragment, call)


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
    (
        "entropy-bool",
        lambda: PSI.entanglement_entropy(True),
        t4a.Tensor4allTypeError,
        "must be an integer bond, got bool",
    ),
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
    ("ref-exact-L", lambda: references.exact_ground_energy(OS4, "4"), t4a.Tensor4allTypeError, "positive integer"),
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
