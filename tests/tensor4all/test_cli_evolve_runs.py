"""``tensor4all evolve`` (issue 24): exact references, and end-to-end runs checked against them.

The runs go through a subprocess as a user runs them. Evolutions are checked against
references computed here independently of the program: dense ``expm`` of the explicit
``2^L`` Hamiltonian (:func:`tensor4all.references.sparse_hamiltonian`), and for the XX
chain the free-fermion formula of :func:`tensor4all.references.xx_magnetization` (itself
checked against ``expm``).
"""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest
import scipy.linalg

import tensor4all as t4a
from tensor4all import models, references

sys.path.insert(0, os.path.dirname(__file__))  # the reference beside this file (no package __init__)
from fock_hubbard import basis_vector, exact_hubbard, site_op as electron_op  # noqa: E402

from .test_cli_evolve import run_cli, strict_json


# ---- exact references (no evolution code of the library) ----------------------------------
PAULI = {"X": np.array([[0.0, 1.0], [1.0, 0.0]]), "Y": np.array([[0.0, -1j], [1j, 0.0]]), "Z": np.diag([1.0, -1.0])}


def site_op(m: np.ndarray, i: int, L: int) -> np.ndarray:
    return np.kron(np.kron(np.eye(2**i), m), np.eye(2 ** (L - i - 1)))


def product_vector(vectors) -> np.ndarray:
    out = np.ones(1)
    for v in vectors:
        out = np.kron(out, v)
    return out


def ed_evolve(H: np.ndarray, psi: np.ndarray, times, ops) -> np.ndarray:
    """``<psi(t)| op_i |psi(t)>`` for every time (first axis) and operator (dense expm)."""
    out = []
    for t in times:
        v = scipy.linalg.expm(-1j * t * H) @ psi
        out.append([np.real(np.vdot(v, o @ v)) for o in ops])
    return np.array(out)


@pytest.mark.parametrize(
    "states,J,h", [([0, 1, 0, 1, 0, 1], 1.0, 0.0), ([0, 0, 0, 1, 1, 1], 0.7, 0.3), ([1, 0, 0, 1, 0], -1.3, 0.0)]
)
def test_xx_magnetization_matches_dense_expm(states, J, h):
    L = len(states)
    H = references.sparse_hamiltonian(models.heisenberg_opsum(L, J, 0.0, h), L).toarray()
    psi = product_vector([np.eye(2)[s] for s in states])
    times = [0.0, 0.4, 1.7]
    sz = ed_evolve(H, psi, times, [site_op(0.5 * PAULI["Z"], i, L) for i in range(L)])
    assert np.allclose(references.xx_magnetization(states, times, J), sz, atol=1e-12)
    assert references.xx_magnetization(states, 0.4, J).shape == (L,)
    if states == [0, 1, 0, 1, 0, 1]:
        m = references.xx_neel_magnetization(L, times, J)
        assert m[0] == pytest.approx(0.5, abs=1e-15) and np.allclose(m, sz @ ((-1.0) ** np.arange(L)) / L, atol=1e-12)


def test_xx_magnetization_rejects_bad_states():
    with pytest.raises(t4a.InvalidOptionError, match="basis indices 0"):
        references.xx_magnetization([0, 2], [0.0])
    with pytest.raises(t4a.InvalidOptionError, match="finite"):
        references.xx_magnetization([0, 1], [np.nan])


@pytest.mark.parametrize("states,t", [([1, 2, 1, 2], 1.0), ([3, 3, 0, 1], 0.7), ([0, 3, 2, 1], -1.2)])
def test_hubbard_free_densities_match_the_jordan_wigner_expm(states, t):
    """U = 0, any mu: each spin hops freely; against expm of the explicit Fock-space Hamiltonian."""
    L, times = len(states), [0.0, 0.3, 1.1]
    H = exact_hubbard(L, t, 0.0, 0.4)
    ops = [electron_op(t4a.local_space("electron").matrix(op), i, L) for op in ("Nup", "Ndn") for i in range(L)]
    exact = ed_evolve(H, basis_vector(states), times, ops)
    up, dn = references.hubbard_free_densities(states, times, t)
    assert np.allclose(up, exact[:, :L], atol=1e-12) and np.allclose(dn, exact[:, L:], atol=1e-12)
    assert references.hubbard_free_densities(states, 0.3, t)[0].shape == (L,)
    with pytest.raises(t4a.InvalidOptionError, match="basis indices 0"):
        references.hubbard_free_densities([0, 4], [0.0])
    with pytest.raises(t4a.InvalidOptionError, match="finite"):
        references.hubbard_free_densities([0, 1], [np.inf])


def test_models_xx_is_heisenberg_with_jz_zero():
    psi = t4a.MPS.random(6, 2, bond_dim=4, seed=3)
    for conserve in (None, "Sz"):
        H = models.xx(6, J=0.8, h=0.2, conserve=conserve)
        ref = models.heisenberg(6, J=0.8, Jz=0.0, h=0.2)
        assert float(np.asarray(t4a.expectation(psi, H))) == pytest.approx(
            float(np.asarray(t4a.expectation(psi, ref))), abs=1e-13
        )


# ---- end to end --------------------------------------------------------------------------------
def _table_rows(stdout: str) -> list[list[float]]:
    return [
        [float(x) for x in line.split()]
        for line in stdout.splitlines()
        if re.match(r"^\s+\d[\d.e+-]*\s+-?\d+\.\d{10}\s", line)
    ]


# cutoff 1e-12: at the default 1e-10 the discarded weight alone moves <Sz_i> by about 1e-6 here
XX_RUNS = [
    pytest.param("tdvp", [], id="tdvp-Sz"),
    pytest.param("tdvp", ["--conserve", "none"], id="tdvp-dense"),
    pytest.param("tebd", ["--order", "4"], id="tebd4-Sz"),
    pytest.param("tebd", ["--order", "4", "--conserve", "none"], id="tebd4-dense"),
]


@pytest.mark.parametrize("method,extra", XX_RUNS)
def test_xx_neel_matches_free_fermions(tmp_path, method, extra):
    path = tmp_path / "run.json"
    proc = run_cli(
        "evolve",
        "--model",
        "xx",
        "--L",
        "10",
        "--state",
        "neel",
        "--t-final",
        "1",
        "--dt",
        "0.05",
        "--method",
        method,
        *extra,
        "--cutoff",
        "1e-12",
        "--json",
        str(path),
    )
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    assert doc["schema"] == "tensor4all.evolve/2" and doc["parameters"]["method"] == method
    assert doc["parameters"]["conserve"] == (None if "none" in extra else "Sz")
    times = np.array(doc["times"])
    assert np.allclose(times, 0.05 * np.arange(21), atol=1e-12)
    exact = references.xx_magnetization([i % 2 for i in range(10)], times)
    sz = np.array(doc["observables"]["Sz"])
    assert sz.shape == (21, 10)
    assert np.max(np.abs(sz - exact)) < 1e-6
    assert np.allclose(doc["reference"]["Sz"], exact, atol=1e-14)
    stag = np.array(doc["summaries"]["Sz"]["staggered"])
    assert np.allclose(stag, references.xx_neel_magnetization(10, times), atol=1e-6)
    assert max(doc["reference"]["error"]) < 1e-6
    # the energy of the Neel state is 0 and conserved; the norm stays 1
    assert np.max(np.abs(doc["observables"]["energy"])) < 1e-6
    assert np.max(np.abs(np.array(doc["observables"]["norm"]) - 1)) < 1e-6
    assert len(doc["history"]) == 20 and doc["history"][-1]["time"] == pytest.approx(1.0)
    # the table: one row per output time, the exact column and its error as in the JSON
    rows = _table_rows(proc.stdout)
    assert len(rows) == 21
    assert [r[0] for r in rows] == pytest.approx(times, abs=1e-9)
    assert [r[-2] for r in rows] == pytest.approx(references.xx_neel_magnetization(10, times), abs=1e-6)
    assert max(r[-1] for r in rows) < 1e-6
    assert re.search(r"^exact\s+max \|<Sz_i> - exact\| = ", proc.stdout, flags=re.MULTILINE)
    assert proc.stderr == ""  # no terminal: no progress bar


# TEBD order 4 is within 1.0e-7 of the exact <Sz_i>, <Ntot_i>; two-site TDVP has the time step
# error of its integrator, larger than for the XX chain (1.5e-7 there): 3.8e-5, 4.6e-6, 4.0e-7
# at dt = 0.1, 0.05, 0.025 (of order dt^3 while the bonds grow from the product state)
HUBBARD_RUNS = [
    pytest.param("tdvp", [], 1e-5, id="tdvp-NSz"),
    pytest.param("tebd", ["--order", "4", "--conserve", "N"], 1e-6, id="tebd4-N"),
    pytest.param("tebd", ["--order", "4", "--conserve", "none"], 1e-6, id="tebd4-dense"),
]


@pytest.mark.parametrize("method,extra,bound", HUBBARD_RUNS)
def test_hubbard_neel_at_U_zero_matches_free_fermions(tmp_path, method, extra, bound):
    path = tmp_path / "run.json"
    proc = run_cli(
        "evolve",
        "--model",
        "hubbard",
        "--L",
        "6",
        "--U",
        "0",
        "--state",
        "neel",
        "--t-final",
        "1",
        "--dt",
        "0.05",
        "--method",
        method,
        *extra,
        "--cutoff",
        "1e-12",
        "--json",
        str(path),
    )
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    p = doc["parameters"]
    assert (p["model"], p["t"], p["U"], p["mu"], p["observe"]) == ("hubbard", 1.0, 0.0, 0.0, ["Ntot", "Sz"])
    assert "J" not in p  # hubbard's hopping is t
    conserve = None if "none" in extra else "N" if "N" in extra else "N,Sz"
    assert p["conserve"] == conserve
    assert doc["final"]["sector"] == {None: {}, "N": {"N": 6.0}, "N,Sz": {"N": 6.0, "Sz": 0.0}}[conserve]
    times = np.array(doc["times"])
    up, dn = references.hubbard_free_densities([1, 2] * 3, times, 1.0)
    for op, exact in (("Ntot", up + dn), ("Sz", 0.5 * (up - dn))):
        assert np.max(np.abs(np.array(doc["observables"][op]) - exact)) < bound
        assert np.allclose(doc["reference"][op], exact, atol=1e-14)
    assert doc["reference"]["source"].endswith("references.hubbard_free_densities")
    assert max(doc["reference"]["error"]) < bound
    assert abs(doc["reference"]["staggered"][-1] - np.mean(0.5 * (up - dn)[-1] * (-1.0) ** np.arange(6))) < 1e-14
    assert np.max(np.abs(doc["observables"]["energy"])) < 1e-6  # <H> = 0 for the Neel state at U = 0
    rows = _table_rows(proc.stdout)
    assert len(rows) == 21 and max(r[-1] for r in rows) < bound
    assert "exact: free fermions (Jordan-Wigner, each spin)" in proc.stdout
    assert re.search(r"^exact\s+max \|<Sz/Ntot_i> - exact\| = ", proc.stdout, flags=re.MULTILINE)


# TDVP from a product state has a projection error while the bonds grow, O(dt^2): ~5e-5 here
@pytest.mark.parametrize("method,extra,bound", [("tebd", ["--order", "4"], 1e-6), ("tdvp", [], 2e-4)])
def test_hubbard_at_U_4_matches_exact_diagonalization(tmp_path, method, extra, bound):
    L, states, times = 4, [3, 1, 0, 2], np.linspace(0, 1, 5)
    path = tmp_path / "run.json"
    proc = run_cli(
        "evolve",
        "--model",
        "hubbard",
        "--L",
        "4",
        "--U",
        "4",
        "--mu",
        "0.3",
        "--state",
        "product:2u0d",
        "--t-final",
        "1",
        "--dt",
        "0.05",
        "--every",
        "5",
        "--observe",
        "Ntot,Sz,Nupdn",
        "--method",
        method,
        *extra,
        "--cutoff",
        "1e-12",
        "--json",
        str(path),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    assert doc["reference"] is None and np.allclose(doc["times"], times)
    sp = t4a.local_space("electron")
    names = ("Ntot", "Sz", "Nupdn")
    H = exact_hubbard(L, 1.0, 4.0, 0.3)
    exact = ed_evolve(
        H, basis_vector(states), times, [electron_op(sp.matrix(op), i, L) for op in names for i in range(L)]
    )
    for k, op in enumerate(names):
        assert np.max(np.abs(np.array(doc["observables"][op]) - exact[:, k * L : (k + 1) * L])) < bound, op
    e0 = np.real(np.vdot(basis_vector(states), H @ basis_vector(states)))
    assert np.allclose(doc["observables"]["energy"], e0, atol=1e-8)
    assert doc["final"]["sector"] == {"N": 4.0, "Sz": 0.0}


def test_hubbard_quench_of_U_from_the_ground_state(tmp_path):
    """Half-filled ground state at U = 2 (DMRG, N = 4) evolved with U = 6: the double occupancy
    against expm of the Fock-space Hamiltonian from the exact ground state of the sector."""
    L, times = 4, np.linspace(0, 1, 5)
    n = np.array([sum((0, 1, 1, 2)[b // 4 ** (L - 1 - i) % 4] for i in range(L)) for b in range(4**L)])
    sel = np.flatnonzero(n == L)
    H0, H1 = exact_hubbard(L, 1.0, 2.0, 0.0), exact_hubbard(L, 1.0, 6.0, 0.0)
    e, v = np.linalg.eigh(H0[np.ix_(sel, sel)])
    psi0 = np.zeros(4**L)
    psi0[sel] = v[:, 0]
    path = tmp_path / "run.json"
    proc = run_cli(
        "evolve",
        "--model",
        "hubbard",
        "--L",
        "4",
        "--U",
        "2",
        "--state",
        "ground",
        "--quench-U",
        "6",
        "--t-final",
        "1",
        "--dt",
        "0.05",
        "--every",
        "5",
        "--observe",
        "Nupdn,Ntot",
        "--method",
        "tebd",
        "--order",
        "4",
        "--cutoff",
        "1e-12",
        "--json",
        str(path),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    assert doc["parameters"]["quench"] == {"t": 1.0, "U": 6.0, "mu": 0.0} and doc["parameters"]["U"] == 2.0
    assert doc["parameters"]["conserve"] == "N,Sz" and doc["parameters"]["sector"] == {"N": 4.0, "Sz": 0.0}
    assert doc["ground_state"]["energy"] == pytest.approx(e[0], abs=1e-9)
    sp = t4a.local_space("electron")
    d = ed_evolve(H1, psi0, times, [electron_op(sp.matrix("Nupdn"), i, L) for i in range(L)])
    assert np.ptp(d) > 0.05  # the quench moves the double occupancy
    assert np.max(np.abs(np.array(doc["observables"]["Nupdn"]) - d)) < 1e-6
    assert np.max(np.abs(np.array(doc["observables"]["Ntot"]) - 1.0)) < 1e-6  # half filling, particle-hole
    assert np.allclose(doc["observables"]["energy"], np.vdot(psi0, H1 @ psi0), atol=1e-7)
    assert "state ground: DMRG ground state of hubbard L=4 t=1 U=2 mu=0" in proc.stdout
    assert "symmetry U(1) x U(1) N,Sz, sector N = 4, Sz = 0" in proc.stdout


def test_tebd_order_2_has_its_trotter_error(tmp_path):
    # Strang splitting at dt = 0.05: an error of order dt^2 (about 2e-5 here), far above order 4's
    path = tmp_path / "o2.json"
    proc = run_cli(
        "evolve",
        "--L",
        "10",
        "--t-final",
        "1",
        "--dt",
        "0.05",
        "--method",
        "tebd",
        "--cutoff",
        "1e-12",
        "--every",
        "10",
        "--json",
        str(path),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    assert doc["parameters"]["order"] == 2 and doc["parameters"]["two_site"] is None
    assert 1e-6 < max(doc["reference"]["error"]) < 1e-4
    assert "TEBD order 2" in proc.stdout


def test_tfim_quench_from_the_ground_state_matches_dense_expm(tmp_path):
    # ground state of g = 0.5 (exact diagonalization), evolved with g = 1.5: <X_i>, <Z_i> in
    # the model's basis, whether the run conserves the parity (rotated basis) or not
    L, times = 6, np.linspace(0, 1, 6)
    H0 = references.sparse_hamiltonian(models.tfim_opsum(L, 1.0, 0.5), L, "pauli").toarray()
    H1 = references.sparse_hamiltonian(models.tfim_opsum(L, 1.0, 1.5), L, "pauli").toarray()
    psi0 = np.linalg.eigh(H0)[1][:, 0]
    X = ed_evolve(H1, psi0, times, [site_op(PAULI["X"], i, L) for i in range(L)])
    for conserve in ("auto", "none"):
        path = tmp_path / f"{conserve}.json"
        proc = run_cli(
            "evolve",
            "--model",
            "tfim",
            "--L",
            str(L),
            "--g",
            "0.5",
            "--state",
            "ground",
            "--quench-g",
            "1.5",
            "--t-final",
            "1",
            "--dt",
            "0.05",
            "--every",
            "4",
            "--observe",
            "X,Z",
            "--conserve",
            conserve,
            "--json",
            str(path),
            "--quiet",
        )
        assert proc.returncode == 0, proc.stderr
        doc = strict_json(path)
        assert doc["parameters"]["conserve"] == ("parity" if conserve == "auto" else None)
        assert doc["parameters"]["quench"] == {"J": 1.0, "g": 1.5} and doc["parameters"]["g"] == 0.5
        assert doc["ground_state"]["energy"] == pytest.approx(np.linalg.eigvalsh(H0)[0], abs=1e-9)
        assert np.allclose(doc["times"], times)
        assert np.max(np.abs(np.array(doc["observables"]["X"]) - X)) < 1e-6
        # <Z_i> is 0 by the parity; the energy of the quenched Hamiltonian is conserved
        assert np.max(np.abs(doc["observables"]["Z"])) < 1e-6
        e1 = np.real(np.vdot(psi0, H1 @ psi0))
        assert np.allclose(doc["observables"]["energy"], e1, atol=1e-6)
        assert "|norm-1|" not in proc.stdout and _table_rows(proc.stdout) == []  # --quiet: summary only


def test_imaginary_time_reaches_the_tfim_ground_energy(tmp_path):
    path = tmp_path / "im.json"
    proc = run_cli(
        "evolve",
        "--model",
        "tfim",
        "--L",
        "8",
        "--g",
        "1.5",
        "--state",
        "product:++++++++",
        "--imaginary",
        "--t-final",
        "6",
        "--dt",
        "0.1",
        "--every",
        "10",
        "--json",
        str(path),
    )
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(path)
    e = np.array(doc["observables"]["energy"])
    assert np.all(np.diff(e) < 1e-9)  # the energy decreases in imaginary time
    assert e[-1] == pytest.approx(references.tfim_ground_energy(8, 1.0, 1.5), abs=1e-6)
    assert doc["reference"] is None and "exact  " not in proc.stdout
