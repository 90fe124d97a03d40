import math

import numpy as np
import pytest

import tenferro as tf
import tensor4all as t4a
from tensor4all import models

from .conftest import ground_energy, heisenberg_bethe_energy, heisenberg_chain_matrix

EXACT = dict(max_bond=64, cutoff=0.0, tol=1e-12, sweeps=12)


def long_range_opsum(L):
    os = t4a.OpSum()
    for i in range(L):
        for j in range(i + 1, L):
            c = 1.0 / (j - i) ** 2
            os += (0.5 * c, "S+", i, "S-", j)
            os += (0.5 * c, "S-", i, "S+", j)
            os += (0.7 * c, "Sz", i, "Sz", j)
        os += (0.1 * (-1) ** i, "Sx", i)
    return os


CASES = {
    "heisenberg-12": (lambda: models.heisenberg_opsum(12), 12, "spin-1/2"),
    "xxz-10": (lambda: models.heisenberg_opsum(10, J=1.0, Jz=0.4, h=0.15), 10, "spin-1/2"),
    "tfim-g0.5": (lambda: models.tfim_opsum(12, g=0.5), 12, "pauli"),
    "tfim-g1": (lambda: models.tfim_opsum(12, g=1.0), 12, "pauli"),
    "tfim-g2": (lambda: models.tfim_opsum(12, g=2.0), 12, "pauli"),
    "long-range-10": (lambda: long_range_opsum(10), 10, "spin-1/2"),
    "spin1-heisenberg-7": (lambda: models.heisenberg_opsum(7), 7, "spin-1"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_two_site_dmrg_matches_exact_diagonalization(case):
    make, L, local = CASES[case]
    os = make()
    res = t4a.dmrg(t4a.MPO.from_opsum(os, L, local), **EXACT)
    assert abs(res.energy - ground_energy(os, L, local)) < 1e-10
    assert res.converged
    assert abs(res.variance) < 1e-9
    assert abs(float(t4a.expectation(res.state, t4a.MPO.from_opsum(os, L, local))) - res.energy) < 1e-11


@pytest.mark.parametrize("L", [16, 32])
def test_critical_tfim_matches_closed_form(L):
    exact = 1.0 - 1.0 / math.sin(math.pi / (2 * (2 * L + 1)))
    res = t4a.dmrg(models.tfim(L, g=1.0), max_bond=48, cutoff=0.0, tol=1e-12)
    assert abs(res.energy - exact) < 1e-10


#: the ground energy of the open Heisenberg chain L = 32 (J = 1) as the library's reference table and
#: the CLI hold it: the Bethe ansatz value -13.997315618224327 (conftest.heisenberg_bethe_energy,
#: checked below) to 13 decimals; an independent TeNPy DMRG at chi 200 gives -13.99731561822433
E_HEISENBERG_32 = -13.9973156182243


def test_the_bethe_ansatz_reference_against_exact_diagonalization():
    """The open chain's Bethe ansatz (conftest) against the explicit matrices' lowest eigenvalue for
    L = 4 .. 10 (1e-12: rounding of both at |E| <= 5), and the L = 32 literal is its value to 13 decimals."""
    for L in (4, 6, 8, 10):
        assert abs(heisenberg_bethe_energy(L) - np.linalg.eigvalsh(heisenberg_chain_matrix(L))[0]) < 1e-12, L
    assert abs(heisenberg_bethe_energy(32) - E_HEISENBERG_32) < 1e-13


def test_heisenberg_32_chi_64_reference_energy():
    res = t4a.dmrg(models.heisenberg(32), max_bond=64, cutoff=0.0, tol=1e-10)
    assert abs(res.energy - heisenberg_bethe_energy(32)) < 1e-9
    assert res.state.bond_dims[15] == 64


def test_one_site_dmrg_with_subspace_expansion():
    L = 10
    os = models.heisenberg_opsum(L, Jz=0.8)
    res = t4a.dmrg(
        t4a.MPO.from_opsum(os, L),
        psi0=t4a.MPS.random(L, bond_dim=2, seed=3),
        two_site=False,
        max_bond=32,
        cutoff=0.0,
        tol=1e-12,
        sweeps=20,
    )
    assert max(res.state.bond_dims) == 32  # grew from 2 through the expansion
    assert abs(res.energy - ground_energy(os, L)) < 1e-10
    assert [r.noise for r in res.history][:2] == [1e-4, 1e-5]


def test_history_callback_progress_and_schedules():
    records, updates = [], []
    res = t4a.dmrg(
        models.heisenberg(12),
        max_bond=[8, 16, 32],
        cutoff=[1e-8, 1e-12],
        sweeps=6,
        tol=1e-9,
        callback=records.append,
        progress=updates.append,
    )
    assert records == res.history and len(records) >= 3
    assert [r.max_bond_limit for r in records][:3] == [8, 16, 32]
    assert [r.cutoff for r in records][:2] == [1e-8, 1e-12]
    assert all(r.max_bond <= r.max_bond_limit for r in records)
    assert math.isnan(records[0].delta_energy)
    for a, b in zip(records, records[1:]):
        assert b.delta_energy == pytest.approx(b.energy - a.energy, abs=1e-15)
    r = records[-1]
    assert r.matvecs > 0 and r.seconds > 0 and r.peak_memory > 0 and 0 <= r.max_truncation_error < 1e-6
    assert set(r.as_dict()) >= {
        "sweep",
        "energy",
        "delta_energy",
        "max_bond",
        "max_truncation_error",
        "matvecs",
        "seconds",
        "peak_memory",
    }
    assert len(updates) == 2 * 11 * len(records)
    u = updates[0]
    assert (u.sweep, u.step, u.steps, u.site, u.direction) == (1, 1, 22, 0, "right")
    assert updates[-1].direction == "left" and updates[-1].site == 0
    e, psi = res
    assert e == res.energy and psi is res.state


def test_eigsh_solver_and_complex_start_agree():
    H = models.heisenberg(10, Jz=0.6)
    a = t4a.dmrg(H, max_bond=32, cutoff=0.0, tol=1e-12, eigensolver="eigsh")
    b = t4a.dmrg(
        H, psi0=t4a.MPS.random(10, bond_dim=4, seed=5, dtype=tf.complex128), max_bond=32, cutoff=0.0, tol=1e-12
    )
    # each against exact diagonalization of this MPO (not one run against the other: the
    # energy error is quadratic in the state's, so each converged energy is ~1e-12 off)
    e0 = float(np.linalg.eigvalsh(np.asarray(H.to_dense()))[0])
    assert abs(a.energy - e0) < 1e-10 and abs(b.energy - e0) < 1e-10
    assert b.state.dtype == tf.complex128


def test_edge_cases_single_site_and_two_sites():
    os = t4a.OpSum([(1.0, "Sx", 0)])
    res = t4a.dmrg(t4a.MPO.from_opsum(os, 1), max_bond=4)
    assert res.energy == pytest.approx(-0.5, abs=1e-12)
    res = t4a.dmrg(models.heisenberg(2), max_bond=4, cutoff=0.0)
    assert res.energy == pytest.approx(-0.75, abs=1e-12)


def test_dmrg_bad_input():
    os = t4a.OpSum([(1.0, "S+", 0, "S-", 1)])
    with pytest.raises(t4a.NonHermitianError, match="Hermitian"):
        t4a.dmrg(t4a.MPO.from_opsum(os, 4))
    H = models.heisenberg(4)
    with pytest.raises(t4a.DimensionMismatchError, match="physical dimension"):
        t4a.dmrg(H, psi0=t4a.MPS.random(4, d=3))
    with pytest.raises(t4a.BondDimensionError, match="max_bond"):
        t4a.dmrg(H, max_bond=0)
    with pytest.raises(t4a.BondDimensionError, match="max_bond"):
        t4a.dmrg(H, max_bond=[8, -1])
    with pytest.raises(t4a.Tensor4allError, match="valid eigensolvers: eigsh, lanczos"):
        t4a.dmrg(H, eigensolver="davidson")
    with pytest.raises(t4a.Tensor4allError, match="cutoff"):
        t4a.dmrg(H, cutoff=-1.0)
    with pytest.raises(t4a.Tensor4allError, match="expects an MPO"):
        t4a.dmrg(t4a.MPS.random(4))


# ---- BLAS threads ------------------------------------------------------------------------
def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"})


@pytest.mark.parametrize(
    "threads, max_bond, expected",
    [(None, 8, 1), (2, 8, 2), (1, 8, 1), (0, 8, None), (None, [8, 600], None), (3, [8, 600], 3)],
)
def test_dmrg_limits_blas_threads_for_its_duration(threads, max_bond, expected):
    from threadpoolctl import threadpool_limits
    from tensor4all.tools.threads import THREADED_MIN_BOND

    assert THREADED_MIN_BOND <= 600
    with threadpool_limits(4, user_api="blas"):  # the caller's own setting
        seen = []
        t4a.dmrg(
            models.heisenberg(6),
            max_bond=max_bond,
            sweeps=2,
            threads=threads,
            callback=lambda r: seen.append(_blas_threads()),
        )
        assert seen and all(s == ([4] if expected is None else [expected]) for s in seen)
        assert _blas_threads() == [4]  # restored


@pytest.mark.parametrize("threads, error", [(-1, ValueError), (1.5, TypeError), (True, TypeError), ("2", TypeError)])
def test_dmrg_rejects_bad_thread_counts(threads, error):
    with pytest.raises(error, match="threads"):
        t4a.dmrg(models.heisenberg(4), max_bond=4, threads=threads)


def test_history_counts_exact_local_solves():
    """A small local problem of a conserved run is solved from its dense matrix (no products):
    the record's ``matvecs`` counts none of them, so a run of small problems read "0 matvecs".
    ``exact_solves`` counts them; every step of a sweep is one or the other. The dense engine's
    local problems are always solved by Lanczos."""
    res = t4a.dmrg(models.heisenberg(6, conserve="Sz"), max_bond=8, sweeps=2, tol=0.0)
    for r in res.history:
        assert r.exact_solves == 2 * (6 - 1) and r.matvecs == 0  # every two-site problem: at most 64 states
    big = t4a.dmrg(models.heisenberg(16, conserve="Sz"), max_bond=32, sweeps=2, tol=0.0)
    last = big.history[-1]
    assert 0 < last.exact_solves < 2 * (16 - 1) and last.matvecs > 0  # the middle bonds take Lanczos
    dense = t4a.dmrg(models.heisenberg(6), max_bond=8, sweeps=2, tol=0.0)
    assert all(r.exact_solves == 0 and r.matvecs > 0 for r in dense.history)


@pytest.mark.parametrize("two_site", [True, False])
@pytest.mark.parametrize("eigensolver", ["lanczos", "eigsh"])
def test_an_eigenstate_start_stays_with_either_eigensolver(eigensolver, two_site):
    """All spins up is an eigenstate of the Heisenberg chain (E = (L - 1)/4); with ``noise=0`` a
    run from it stays there (dmrg's docstring). ARPACK went on from a random vector at the
    invariant start (and solved problems of up to 3 states densely): ``eigsh`` ended in the
    Sz = 0 ground state (-3.3749 two-site, -1.25 one-site)."""
    res = t4a.dmrg(
        models.heisenberg(8),
        t4a.MPS.product_state([0] * 8),
        noise=0,
        eigensolver=eigensolver,
        two_site=two_site,
        max_bond=32,
        sweeps=4,
    )
    assert res.energy == pytest.approx(1.75, abs=1e-12)
    assert res.sector == {"Sz": 4.0}
