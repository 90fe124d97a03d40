"""The local eigensolver's stopping rule (``algorithms.dmrg_schedules``: ``local_tolerance``,
``state_tolerance``) against exact diagonalization: on a spin-1 Heisenberg chain with a fixed
schedule, cutoff 0 and a bond dimension that holds the ground state exactly, five sweeps reach
the exact energy, every local problem of the last sweep is solved to it, and the run ends in
the singlet, not in the state with polarized end spins that traps the N = 64 chain of
``benchmarks/dmrg_symmetric.py``.

Measured (N = 10, schedule 10, 20, 100, 243, 243; 243 = 3**5 is the largest bond dimension of
the chain): final energy 6e-14 from the exact one; local eigenvalues of the last sweep within
9e-12 of it; ``<Sz>`` at the first site 4e-7 (the polarized mixture: ~0.5). The tolerances below
leave two orders of magnitude or more, so rounding differences between BLAS builds (1e-14
here) cannot matter; a rule that stopped the local solver short of its eigenvalue would show
at 1e-9 and above. The exact energy comes from a sparse matrix built here (Sz = 0 sector,
8953 states), not from tensor4all. A sweep that raises the bond dimension makes at most TeNPy's
20 products per local problem (``sweep.TRUNCATED_MAX_ITER``; a Hubbard chain whose second
sweep made up to 23 without the cap)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg

import tensor4all as t4a
from tensor4all import MPS, lattices, models
from tensor4all.algorithms import dmrg as dmrg_module, sweep as sweep_module
from tensor4all.algorithms.dmrg_schedules import local_tolerance, state_tolerance
from tensor4all.algorithms.sweep import TRUNCATED_MAX_ITER

_SOLVE, _SWEEP = sweep_module.Sweep._solve, sweep_module.Sweep.sweep

N = 10
SCHEDULE = [10, 20, 100, 243, 243]


def spin1_heisenberg_ground_energy(n: int) -> float:
    """Lowest eigenvalue of the open spin-1 chain ``sum_i S_i . S_{i+1}`` in the sector Sz = 0,
    from its sparse matrix in the basis of product states (local ``m`` in +1, 0, -1)."""
    states = [s for s in itertools.product((1, 0, -1), repeat=n) if sum(s) == 0]
    index = {s: k for k, s in enumerate(states)}
    rows, cols, vals = [], [], []
    for k, s in enumerate(states):
        rows.append(k)
        cols.append(k)
        vals.append(float(sum(s[i] * s[i + 1] for i in range(n - 1))))
        for i in range(n - 1):
            # (S+_i S-_{i+1} + S-_i S+_{i+1}) / 2: each of S+ and S- has the element sqrt 2 for spin 1
            for a, b in ((i, i + 1), (i + 1, i)):
                if s[a] < 1 and s[b] > -1:
                    t = list(s)
                    t[a] += 1
                    t[b] -= 1
                    rows.append(index[tuple(t)])
                    cols.append(k)
                    vals.append(1.0)
    h = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(len(states), len(states)))
    w = scipy.sparse.linalg.eigsh(h, k=1, which="SA", tol=1e-14, v0=np.ones(len(states)))[0]
    return float(w[0])


@pytest.fixture(scope="module")
def run():
    H = models.heisenberg(N, spin="1")
    psi0 = t4a.MPS.product_state([0, 2] * (N // 2), d=3)  # Neel: up, down, ... as the benchmark
    updates = []
    res = t4a.dmrg(
        H,
        psi0,
        max_bond=SCHEDULE,
        cutoff=0.0,
        sweeps=len(SCHEDULE),
        tol=0.0,
        noise=0.0,
        compute_variance=False,
        conserve="Sz",
        progress=updates.append,
    )
    return res, updates


@pytest.fixture(scope="module")
def exact() -> float:
    return spin1_heisenberg_ground_energy(N)


def test_exact_energy_is_right(exact):
    # the known ground-state energy of the open spin-1 chain of 10 sites
    assert exact == pytest.approx(-12.89456013221, abs=1e-10)


def test_five_sweeps_reach_the_exact_energy(run, exact):
    res, _ = run
    assert len(res.history) == len(SCHEDULE)
    assert abs(res.energy - exact) < 1e-11  # measured 6e-14


def test_every_local_problem_of_the_last_sweep_is_solved(run, exact):
    _, updates = run
    last = [u for u in updates if u.sweep == len(SCHEDULE)]
    assert len(last) == 2 * (N - 1)
    assert max(abs(u.energy - exact) for u in last) < 1e-9  # measured 9e-12
    assert max(u.truncation_error for u in last) == 0.0  # the bond dimension holds the state


def test_the_run_ends_in_the_singlet(run):
    # polarized end spins (the mixture of singlet and triplet) would give about 0.5 here
    res, _ = run
    assert abs(float(res.state.expect("Sz", site=0))) < 1e-3  # measured 4e-7


def test_which_criterion_decides_after_a_growing_sweep():
    # the numbers of benchmarks/dmrg_symmetric.py at N = 64, m = 200, fifth sweep (documented in
    # local_tolerance): the energy criterion, 1e-3 x the last change (2.3e-7), is far looser than
    # the state criterion, 0.05 x the discarded weight (1e-13), and stops the solver first
    assert local_tolerance(4, -2.3e-7, 0.0, 1.08e-13) == pytest.approx(2.3e-10)
    assert state_tolerance(1.08e-13) == pytest.approx(5.4e-15)
    # a coarse truncation sets the floor of the energy criterion (TRUNC_FACTOR) ...
    assert local_tolerance(4, -2.3e-7, 0.0, 1e-4) == pytest.approx(5e-7)
    # ... and caps the state criterion (TeNPy's P_tol_max)
    assert state_tolerance(1e-2) == 1e-4
    # the first two sweeps: loose
    assert local_tolerance(1, float("nan"), 0.0) == 1e-8


def _caps_and_products(monkeypatch, schedule: list[int]) -> tuple[dict[int, set], dict[int, list[int]], float]:
    """Per sweep, the product caps the sweep engine got and each local problem's Lanczos products,
    of a Hubbard chain (L = 24, U = 4, N and Sz conserved) with the bond-dimension ``schedule``."""
    caps: dict[int, set] = {}
    counts: dict[int, list[int]] = {}

    def counted_sweep(self, **k):
        caps[k["sweep_no"]], counts[k["sweep_no"]] = set(), []
        return _SWEEP(self, **k)

    def counted_solve(self, local, tol, alpha, state_tol=0.0, max_iter=None):
        before = self._stats["matvecs"]
        out = _SOLVE(self, local, tol, alpha, state_tol, max_iter)
        caps[max(caps)].add(max_iter)
        counts[max(counts)].append(self._stats["matvecs"] - before)
        return out

    monkeypatch.setattr(sweep_module.Sweep, "sweep", counted_sweep)
    monkeypatch.setattr(sweep_module.Sweep, "_solve", counted_solve)
    H = models.hubbard(lattices.chain(24), t=1.0, U=4.0, conserve="N,Sz")
    psi0 = MPS.product_state([1, 2] * 12, d=4, conserve="N,Sz", local="electron")
    res = t4a.dmrg(H, psi0, max_bond=schedule, sweeps=len(schedule), cutoff=1e-10, tol=0.0, noise=0.0)
    return caps, counts, res.energy


def test_a_sweep_that_raises_the_bond_dimension_makes_at_most_tenpys_products(monkeypatch):
    # the second sweep raises the bond dimension: capped at 20 (measured: up to 23 products a
    # problem without the cap); the first and the third (same bond dimension) are not
    caps, counts, energy = _caps_and_products(monkeypatch, [16, 48, 48])
    assert caps == {1: {None}, 2: {TRUNCATED_MAX_ITER}, 3: {None}}
    assert max(counts[2]) <= TRUNCATED_MAX_ITER
    # the last sweep is never capped, even where it raises the bond dimension
    assert _caps_and_products(monkeypatch, [16, 48])[0] == {1: {None}, 2: {None}}
    # the cap changes the final energy by rounding-level amounts only (measured: 4e-11)
    monkeypatch.setattr(dmrg_module, "TRUNCATED_MAX_ITER", None)
    uncapped, _, energy_uncapped = _caps_and_products(monkeypatch, [16, 48, 48])
    assert uncapped[2] == {None}
    assert energy == pytest.approx(energy_uncapped, abs=1e-8)
