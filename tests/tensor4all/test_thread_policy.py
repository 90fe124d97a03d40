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
from tensor4all.networks import mps as mps_module
from tensor4all.networks.mps import MPS
from tensor4all.structured import BlockDiagonal
from tensor4all.structured import linalg as slinalg
from tensor4all.tools import threads
from tensor4all.tools.threads import THREADED_MIN_BOND, blas_threads, thread_policy
from tensor4all import cli, references, trees
from tensor4all import quantics as quantics_module
from tensor4all.networks import mps_factories, mps_forms
from tensor4all.references import thermal as thermal_references
from tensor4all.spectra import chebyshev
from tensor4all.trees import fit as tree_fit
from tensor4all.trees import linsolve as tree_linsolve
from tensor4all.trees import sweeps as tree_sweeps
from tensor4all.algorithms import excited
from tensor4all.algorithms import tebd as tebd_module
from tensor4all.operators.gates import exp_gate
from tensor4all.spectra import correlation as spectra_correlation
from tensor4all.thermal import purification, realtime

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
    enter = threads._enter

    def counted(n):
        calls.append(n)
        return enter(n)

    monkeypatch.setattr(threads, "_enter", counted)
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


# ---- the long calls' threads= of the tree sweeps and the Chebyshev expansion -----------------
TREE = trees.Tree([(0, 1), (1, 2), (1, 3)])
TREE_H = trees.tree_heisenberg(TREE)
TREE_PSI = trees.TreeTN.random(TREE, 2, 2, seed=0)
XX = models.xx(6, conserve="Sz")
XX_GROUND = t4a.dmrg(XX, max_bond=8, sweeps=2).state

#: (name, call with threads=t, a function its body runs inside the run's limit)
THREADED = [
    ("tree_dmrg", lambda t: trees.tree_dmrg(TREE_H, max_bond=4, sweeps=1, threads=t), tree_sweeps.TreeBackend.__init__),
    (
        "apply_fit",
        lambda t: trees.apply_fit(TREE_H, TREE_PSI, max_bond=3, sweeps=1, threads=t),
        tree_fit.FitBackend.target,
    ),
    (
        "tree_linsolve",
        lambda t: trees.tree_linsolve(TREE_H, TREE_PSI, max_bond=3, sweeps=1, threads=t),
        tree_linsolve._local_solve,
    ),
    (
        "spectral_function_chebyshev",
        lambda t: t4a.spectral_function_chebyshev(
            XX, XX_GROUND, "Sz", "Sz", n_moments=3, bounds=(-3.0, 3.0), threads=t
        ),
        chebyshev.chebyshev_moments,
    ),
]


@pytest.mark.parametrize("name, call, fn", THREADED, ids=[c[0] for c in THREADED])
@pytest.mark.parametrize("threads_, expected", [(None, 1), (2, 2), (0, CALLER)])
def test_the_tree_sweeps_and_the_chebyshev_expansion_take_threads(name, call, fn, threads_, expected):
    with threadpool_limits(CALLER, user_api="blas"):
        seen = _threads_during(lambda: call(threads_), _inner(fn))
        assert seen and all(s == [expected] for s in seen), seen
        assert _blas() == [CALLER]


@pytest.mark.parametrize("name, call, fn", THREADED, ids=[c[0] for c in THREADED])
@pytest.mark.parametrize("bad, kind", [(-1, ValueError), (1.5, TypeError), (True, TypeError)])
def test_bad_thread_counts_of_the_new_keywords_are_rejected(name, call, fn, bad, kind):
    with pytest.raises(kind, match="threads"):
        call(bad)


# ---- sizes: dense outputs by the output, dense inputs by the largest matrix factored ----------
def test_dense_conversions_are_sized_by_their_output(monkeypatch):
    """``to_dense`` of a chain of small bonds but a large output keeps the BLAS default (the
    output's side ``sqrt(prod d)`` from 512 on; an MPO's matrix side ``prod d``); before, the bond
    dimension sized them and large contractions ran on one thread."""
    wide = t4a.MPS.random(20, bond_dim=2, seed=0)
    H9 = models.heisenberg(9)
    monkeypatch.setattr(mps_forms, "to_dense", lambda psi: None)  # the size alone, not the 2**20 vector
    with threadpool_limits(CALLER, user_api="blas"):
        assert _threads_during(wide.to_dense, _inner(MPS.to_dense)) == [[CALLER]]
        assert _threads_during(H9.to_dense, _inner(t4a.MPO.to_dense)) == [[CALLER]]
        assert _threads_during(PSI.to_dense, _inner(MPS.to_dense)) == [[1]]
        assert _blas() == [CALLER]


def test_from_dense_is_sized_by_the_largest_matrix_it_factors(monkeypatch):
    v = np.ones(2**20)
    monkeypatch.setattr(mps_module, "dense_vector_sites", lambda *_: PSI.tensors)  # the size alone, not the SVDs
    with threadpool_limits(CALLER, user_api="blas"):
        assert _threads_during(lambda: MPS.from_dense(v, 20), _inner(MPS.from_dense)) == [[CALLER]]  # 2**10 x 2**10
        assert _threads_during(lambda: MPS.from_dense(v, 20, max_bond=8), _inner(MPS.from_dense)) == [[1]]
        assert _blas() == [CALLER]
    assert mps_factories.dense_vector_bond(MPS, v, 20, 2, None) == 1024
    assert quantics_module._values_bond(t4a.quantics.Grid(20), None) == 1024
    assert quantics_module._values_bond(t4a.quantics.Grid(20), 8) == 8
    assert mps_factories.random_state_bond(MPS, 4, None, 600) == 4  # bonds of at most 2**2
    assert mps_factories.random_state_bond(MPS, 20, None, 600) == 600


def test_tree_networks_are_sized_by_their_largest_bond():
    assert threads.bond_of(trees.TreeTN.random(TREE, 2, 5, seed=0)) == 5
    assert threads.bond_of(TREE_H) == max(TREE_H.bond_dims.values())


# ---- the command line: --threads for all of a command's work ------------------------------------
@pytest.mark.parametrize(
    "argv, fn",
    [
        (["dmrg", "--model", "heisenberg", "--L", "6", "--chi", "8", "--sweeps", "2"], references.exact_ground_energy),
        (["idmrg", "--model", "tfim", "--max-bond", "4", "--tol", "1e-5"], t4a.infinite.correlation_length),
        (
            ["thermal", "--model", "xx", "--L", "4", "--beta-max", "0.2", "--dbeta", "0.1"],
            thermal_references.thermal_reference,
        ),
    ],
    ids=["dmrg-reference", "idmrg-measurements", "thermal-reference"],
)
def test_the_commands_run_their_references_and_analysis_under_threads(argv, fn, capsys):
    with threadpool_limits(CALLER, user_api="blas"):
        seen = _threads_during(lambda: cli.main([*argv, "--threads", "1", "--quiet"]), _inner(fn))
        assert seen and all(s == [1] for s in seen), seen  # (before: the caller's 3)
        assert _blas() == [CALLER]


# ---- an explicit threads= covers the whole call: its set-up and its results ---------------------
TFIM = t4a.infinite_model("tfim", g=1.5)
XX4 = models.xx(4)
THERMAL4 = t4a.thermal_state(XX4, 0.2, dbeta=0.1, max_bond=8)

#: (name, call with threads=2, a function of its set-up or results)
WHOLE = [
    ("idmrg-final-energy", lambda: t4a.idmrg(TFIM, max_bond=4, sweeps=2, threads=2), t4a.infinite.energy_per_site),
    ("tebd-setup", lambda: t4a.tebd(H, PSI, 0.1, 0.05, max_bond=4, threads=2), tebd_module._Source.__init__),
    ("itebd-gates", lambda: t4a.itebd(TFIM, t4a.iMPS.product_state([0]), 0.1, 0.05, threads=2), exp_gate),
    ("excited_states-overlaps", lambda: t4a.excited_states(H, 2, max_bond=4, sweeps=1, threads=2), excited._overlaps),
    (
        "dynamical_correlation-variance",
        lambda: t4a.dynamical_correlation(XX, XX_GROUND, "Sz", "Sz", t_final=0.1, dt=0.1, threads=2),
        spectra_correlation._variance,
    ),
    (
        "thermal_state-setup",
        lambda: t4a.thermal_state(XX4, 0.2, dbeta=0.1, threads=2),
        purification.purified_hamiltonian,
    ),
    ("evolve_thermal-setup", lambda: t4a.evolve_thermal(THERMAL4, XX4, 0.1, 0.1, threads=2), realtime.ancilla_bonds),
]


@pytest.mark.parametrize("name, call, fn", WHOLE, ids=[c[0] for c in WHOLE])
def test_an_explicit_count_covers_the_set_up_and_the_results(name, call, fn):
    with threadpool_limits(CALLER, user_api="blas"):
        seen = _threads_during(call, _inner(fn))
        assert seen and all(s == [2] for s in seen), seen
        assert _blas() == [CALLER]


def test_metts_chains_run_all_their_work_on_one_thread(monkeypatch):
    """Every part of a chain, not its evolution alone: with the size policy keeping the BLAS default
    at every size, the measurements and the collapse still run on one thread."""
    monkeypatch.setattr(threads, "THREADED_MIN_BOND", 0)
    chain = t4a.thermal.MettsChain(XX4, 0.2, 1, 0, 0, dbeta=0.1, max_bond=8, warmup=0)
    with threadpool_limits(CALLER, user_api="blas"):
        seen = _threads_during(chain, _inner(t4a.expectation)) + _threads_during(chain, _inner(t4a.thermal.collapse))
        assert len(seen) == 2 and all(s == [1] for s in seen), seen
        assert _blas() == [CALLER]
