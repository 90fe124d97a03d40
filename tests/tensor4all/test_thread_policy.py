"""The one BLAS thread policy (:mod:`tensor4all.tools.threads`): every public call that does
dense linear algebra on a state or operator runs with one BLAS thread while its bonds are
small, restores the caller's setting afterwards, and a call nested in another policy makes
no threadpoolctl call of its own."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import tensor4all as t4a
import tidu
from tensor4all import measurements as ms
from tensor4all import models, tci
from tensor4all.algorithms import apply as apply_module
from tensor4all.networks import mpo as mpo_module
from tensor4all.networks.mps import MPS
from tensor4all.structured import BlockDiagonal
from tensor4all.structured import linalg as slinalg
from tensor4all.tools import threads
from tensor4all.tools.threads import THREADED_MIN_BOND, blas_threads, thread_policy

CALLER = 3  # the caller's own BLAS setting around each call: neither 1 nor a default


def _blas() -> list[int]:
    return sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})


def _inner(fn):
    """The code object whose body runs under the policy: the function a decorator wraps."""
    return getattr(fn, "__wrapped__", fn).__code__


def _threads_during(call, code) -> list[list[int]]:
    """Run ``call()`` and record the BLAS thread counts each time ``code`` starts running."""
    seen: list[list[int]] = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code is code:
            seen.append(_blas())

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(previous)
    return seen


PSI = t4a.MPS.random(6, bond_dim=4, seed=1)
PHI = t4a.MPS.random(6, bond_dim=3, seed=2)
H = models.heisenberg(6)
SYM = t4a.MPS.random(6, bond_dim=4, seed=3, conserve="Sz")
BLOCKS = BlockDiagonal([np.eye(3) * 2.0, np.diag([1.0, 2.0])])
ELECTRONS = t4a.MPS.random(4, d=4, bond_dim=4, seed=4, conserve="N", local="electron")

#: (name, call, the function whose body must run with one thread)
CALLS = [
    ("expect", lambda: PSI.expect("Sz", 2), MPS.expect),
    ("expect-all", lambda: PSI.expect("Sz"), MPS.expect),
    ("correlation", lambda: PSI.correlation("Sz", "Sz", 1, 4), MPS.correlation),
    ("correlation_matrix", lambda: PSI.correlation_matrix("Sz", "Sz"), MPS.correlation_matrix),
    ("entanglement_entropy", lambda: PSI.entanglement_entropy(), MPS.entanglement_entropy),
    ("schmidt_values", lambda: PSI.schmidt_values(), MPS.schmidt_values),
    ("entanglement_spectrum", lambda: SYM.entanglement_spectrum(2), MPS.entanglement_spectrum),
    ("compress", lambda: MPS(PSI.tensors).compress(max_bond=2), MPS.compress),
    ("canonicalize", lambda: MPS(PSI.tensors).canonicalize(3), MPS.canonicalize),
    ("normalize", lambda: MPS(PSI.tensors).normalize(), MPS.normalize),
    ("norm", lambda: PSI.norm(), MPS.norm),
    ("to_dense", lambda: PSI.to_dense(), MPS.to_dense),
    ("overlap", lambda: t4a.overlap(PSI, PHI), t4a.overlap),
    ("add", lambda: t4a.add(PSI, PHI, max_bond=4), t4a.add),
    ("expectation", lambda: t4a.expectation(PSI, H), t4a.expectation),
    ("apply", lambda: t4a.apply(H, PSI, max_bond=4), apply_module._apply),
    ("apply-fit", lambda: t4a.apply(H, PSI, max_bond=4, method="fit", sweeps=1), apply_module._apply),
    ("mpo-compression", lambda: t4a.MPO.from_opsum(models.heisenberg_opsum(6), 6), mpo_module.compress_mpo_tensors),
    ("mpo-is_hermitian", lambda: H.is_hermitian(), t4a.MPO.is_hermitian),
    ("density", lambda: ms.density(ELECTRONS), ms.density),
    ("double_occupancy", lambda: ms.double_occupancy(ELECTRONS), ms.double_occupancy),
    ("spin_correlation", lambda: ms.spin_correlation(PSI), ms.spin_correlation),
    ("charge_correlation", lambda: ms.charge_correlation(ELECTRONS), ms.charge_correlation),
    ("one_particle_density_matrix", lambda: ms.one_particle_density_matrix(ELECTRONS), ms.one_particle_density_matrix),
    ("entanglement_per_sector", lambda: ms.entanglement_per_sector(SYM, 2), ms.entanglement_per_sector),
    (
        "crossinterpolate2",
        lambda: tci.crossinterpolate2(lambda i: 1.0 + i.sum(axis=1), [2] * 5, batched=True),
        tci._interpolate,
    ),
    ("tt_sum", lambda: tci.tt_sum(PSI), tci.tt_sum),
    ("structured-norm-2", lambda: slinalg.norm(BLOCKS, ord=2), slinalg.norm),
    ("structured-svd", lambda: slinalg.svd(SYM.tensors[2].fuse_legs([0, 1], [2])), slinalg.svd),
    ("structured-eigh", lambda: slinalg.eigh(BLOCKS), slinalg.eigh),
]


@pytest.mark.parametrize("name, call, fn", CALLS, ids=[c[0] for c in CALLS])
def test_small_calls_run_on_one_blas_thread_and_restore_the_callers_setting(name, call, fn):
    with threadpool_limits(CALLER, user_api="blas"):
        seen = _threads_during(call, _inner(fn))
        assert seen and all(s == [1] for s in seen), seen
        assert _blas() == [CALLER]  # restored


def test_the_size_policy_keeps_the_blas_default_from_the_threshold_bond():
    assert threads.threads_for(None, THREADED_MIN_BOND - 1) == 1
    assert threads.threads_for(None, THREADED_MIN_BOND) is None
    big = thread_policy(lambda: THREADED_MIN_BOND)(_blas)
    small = thread_policy(lambda: THREADED_MIN_BOND - 1)(_blas)
    with threadpool_limits(CALLER, user_api="blas"):
        assert big() == [CALLER] and small() == [1]
        assert _blas() == [CALLER]


@pytest.mark.parametrize("threads_, expected", [(None, 1), (2, 2), (0, CALLER)])
def test_long_calls_take_a_threads_keyword(threads_, expected):
    with threadpool_limits(CALLER, user_api="blas"):
        seen = _threads_during(lambda: t4a.apply(H, PSI, max_bond=4, threads=threads_), _inner(apply_module._apply))
        seen += _threads_during(
            lambda: tci.crossinterpolate2(lambda i: 1.0 + i.sum(axis=1), [2] * 4, batched=True, threads=threads_),
            _inner(tci._interpolate),
        )
        assert len(seen) == 2 and all(s == [expected] for s in seen), seen
        assert _blas() == [CALLER]


def test_the_setting_is_restored_when_the_call_raises():
    with threadpool_limits(CALLER, user_api="blas"):
        with pytest.raises(t4a.Tensor4allError):
            PSI.expect("Sz", 99)
        with pytest.raises(t4a.Tensor4allError):
            t4a.apply(H, t4a.MPS.random(5, bond_dim=2))
        assert _blas() == [CALLER]


def _count_limits(monkeypatch) -> list[int]:
    calls: list[int] = []
    limit = threads._limit

    def counted(n):
        calls.append(n)
        return limit(n)

    monkeypatch.setattr(threads, "_limit", counted)
    return calls


def test_nested_calls_make_no_threadpoolctl_call(monkeypatch):
    calls = _count_limits(monkeypatch)
    with threadpool_limits(CALLER, user_api="blas"):
        PSI.expect("Sz", 2)
        assert len(calls) == 1  # the outer call sets the limit
        ms.spin_correlation(PSI)  # two correlation matrices and a profile inside
        assert len(calls) == 2
        PSI.add(PHI, max_bond=4)  # the method calls the decorated function
        assert len(calls) == 3
        with blas_threads(None, 8):
            PSI.expect("Sz", 2), PSI.entanglement_entropy(), t4a.overlap(PSI, PHI)
            t4a.apply(H, PSI, max_bond=4)
        assert len(calls) == 4
        seen = []
        t4a.dmrg(H, max_bond=4, sweeps=2, callback=lambda r: seen.append((PSI.entanglement_entropy(), _blas())))
        assert len(calls) == 5 and seen and all(s[1] == [1] for s in seen)  # the dmrg's own limit only
        assert _blas() == [CALLER]


def test_an_explicit_count_applies_inside_a_policy(monkeypatch):
    calls = _count_limits(monkeypatch)
    with threadpool_limits(CALLER, user_api="blas"):
        with blas_threads(None, 8):
            seen = _threads_during(lambda: t4a.apply(H, PSI, max_bond=4, threads=2), _inner(apply_module._apply))
            assert seen == [[2]] and _blas() == [1]
        assert calls == [1, 2] and _blas() == [CALLER]


def test_the_policy_does_not_break_tracing():
    ts = PSI.tensors

    def f(t0):
        psi = t4a.MPS([t0, *ts[1:]])
        return psi.expect("Sz", 2) + t4a.expectation(psi, H) + psi.norm() + t4a.overlap(psi, PHI)

    g = tidu.grad(f)(ts[0])
    eps = 1e-6
    d = np.zeros(np.asarray(ts[0]).shape)
    d[0, 1, 1] = 1.0
    fd = (float(f(ts[0] + eps * d)) - float(f(ts[0] - eps * d))) / (2 * eps)
    assert abs(float(np.asarray(g)[0, 1, 1]) - fd) < 1e-6


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t4a.apply(H, PSI, threads=t),
        lambda t: tci.crossinterpolate2(lambda i: 1.0 + i.sum(axis=1), [2, 2], batched=True, threads=t),
    ],
    ids=["apply", "crossinterpolate2"],
)
@pytest.mark.parametrize("bad, kind", [(-1, ValueError), (1.5, TypeError), (True, TypeError), ("2", TypeError)])
def test_bad_thread_counts_are_rejected(fn, bad, kind):
    with pytest.raises(kind, match="threads"):
        fn(bad)
