"""Issue 21, tensor networks: methods that change an MPS, MPO or OpSum in place check
everything before they write, so a bad call or a failure midway leaves the object
unchanged, and every mutating method has a row in the table that checks it. Each test names the class of defect it guards; all of them failed before the fix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tenferro as tf
import tensor4all as t4a
from tensor4all import models

NAN, INF = float("nan"), float("inf")


@pytest.fixture(autouse=True)
def _no_numpy_warnings():
    """No RuntimeWarning (overflow, invalid value, divide by zero) leaks from these calls."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


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
