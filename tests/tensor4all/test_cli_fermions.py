"""``tensor4all dmrg`` for the fermion models, the J1-J2 model and lattices (the program run
in-process through ``tensor4all.cli.main``, as the console script calls it; one run as a
subprocess), checked against answers computed here independently of the program:

* the Hubbard and t-J Hamiltonians on the Fock space of ``2L`` modes with explicit
  Jordan-Wigner matrices (``fock_hubbard``), restricted to a sector of ``N`` and ``Sz`` (t-J: and
  to no double occupancy), diagonalized densely; their ground vectors give the measurements;
* free fermions on a lattice: the lowest eigenvalues of the hopping matrix built here from the
  lattice's bonds (per spin);
* the J1-J2 model from Kronecker products of spin-1/2 matrices (SU(2): its ground energy lies
  in the lowest-|Sz| sector the program runs in).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tensor4all import lattices, references
from tensor4all.cli import main

sys.path.insert(0, os.path.dirname(__file__))  # the reference beside this file (no package __init__)
from fock_hubbard import annihilators, exact_hubbard  # noqa: E402

N_SITE = (0, 1, 1, 2)  # electron basis |0>, |up>, |dn>, |up dn>
SZ2_SITE = (0, 1, -1, 0)


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["dmrg", "--quiet", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def run_json(capsys, tmp_path, *args: str) -> tuple[str, dict]:
    path = tmp_path / "run.json"
    code, out, err = run(capsys, *args, "--json", str(path))
    assert code == 0, err

    def no_constants(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    return out, json.loads(path.read_text(), parse_constant=no_constants)


def summary_value(text: str, key: str) -> float:
    for line in text.splitlines():
        if line.startswith(key + " "):
            return float(line.split()[1])
    raise AssertionError(f"no {key!r} line in {text!r}")


# ---- references ------------------------------------------------------------------------------------
def electron_labels(L: int) -> tuple[np.ndarray, np.ndarray]:
    """``N`` and ``2Sz`` of every basis state of the MPS basis (site 0 most significant)."""
    digits = np.array(list(itertools.product(range(4), repeat=L)))
    return np.array(N_SITE)[digits].sum(1), np.array(SZ2_SITE)[digits].sum(1)


def hubbard_sector_ground(L: int, t: float, U: float, N: int, sz2: int) -> tuple[float, np.ndarray]:
    H = exact_hubbard(L, t, U, 0.0)  # the Fock Hamiltonian in the MPS basis
    n, s = electron_labels(L)
    sel = np.flatnonzero((n == N) & (s == sz2))
    e, v = np.linalg.eigh(H[np.ix_(sel, sel)])
    assert e[1] - e[0] > 1e-3  # unique: the measurements are well defined
    full = np.zeros(4**L)
    full[sel] = v[:, 0]
    return float(e[0]), full


def tj_sector_energy(L: int, t: float, J: float, N: int, sz2: int) -> float:
    """``-t sum P(c^dag c + h.c.)P + J sum (S.S - n n / 4)`` on the Fock space of ``2L`` modes,
    restricted to no double occupancy and the sector (the restriction is the projection P)."""
    c = annihilators(2 * L)
    up, dn = c[0::2], c[1::2]
    nu, nd = [x.T @ x for x in up], [x.T @ x for x in dn]
    H = np.zeros_like(c[0])
    for i in range(L - 1):
        j = i + 1
        for a in (up, dn):
            hop = a[i].T @ a[j]
            H -= t * (hop + hop.T)
        sp_i, sp_j = up[i].T @ dn[i], up[j].T @ dn[j]
        sz_i, sz_j = 0.5 * (nu[i] - nd[i]), 0.5 * (nu[j] - nd[j])
        H += J * (sz_i @ sz_j + 0.5 * (sp_i @ sp_j.T + sp_i.T @ sp_j) - 0.25 * (nu[i] + nd[i]) @ (nu[j] + nd[j]))
    occ_u = np.array([np.diag(x) for x in nu]).round().astype(int)  # mode occupations of each Fock state
    occ_d = np.array([np.diag(x) for x in nd]).round().astype(int)
    keep = np.flatnonzero(
        ((occ_u & occ_d).sum(0) == 0) & ((occ_u + occ_d).sum(0) == N) & ((occ_u - occ_d).sum(0) == sz2)
    )
    return float(np.linalg.eigvalsh(H[np.ix_(keep, keep)])[0])


def hopping_levels(n: int, bonds, t: float = 1.0) -> np.ndarray:
    h = np.zeros((n, n))
    for i, j in bonds:
        h[i, j] = h[j, i] = -t
    return np.linalg.eigvalsh(h)


def heisenberg_lattice_energy(n: int, near, far, J1: float, J2: float) -> float:
    """``S_i.S_j = Sz Sz + (S+ S- + S- S+) / 2`` from Kronecker products (real matrices)."""
    sp = np.array([[0.0, 1.0], [0.0, 0.0]])
    sz = np.diag([0.5, -0.5])

    def at(m, i):
        return np.kron(np.kron(np.eye(2**i), m), np.eye(2 ** (n - i - 1)))

    H = np.zeros((2**n, 2**n))
    for bonds, J in ((near, J1), (far, J2)):
        for i, j in bonds:
            H += J * (at(sz, i) @ at(sz, j) + 0.5 * (at(sp, i) @ at(sp.T, j) + at(sp.T, i) @ at(sp, j)))
    return float(np.linalg.eigvalsh(H)[0])


def site_op(m: np.ndarray, i: int, L: int) -> np.ndarray:
    return np.kron(np.kron(np.eye(4**i), m), np.eye(4 ** (L - i - 1)))


# ---- runs against exact energies ---------------------------------------------------------------
def test_hubbard_chain_energy_json_and_measurements_against_the_fock_space(capsys, tmp_path):
    L, U = 4, 4.0
    out, doc = run_json(
        capsys, tmp_path, "--model", "hubbard", "--L", "4", "--U", "4", "--max-bond", "32", "--sweeps", "6"
    )
    e0, v = hubbard_sector_ground(L, 1.0, U, N=4, sz2=0)
    assert abs(doc["energy"] - e0) < 1e-9
    assert abs(summary_value(out, "energy") - e0) < 1e-9 and abs(summary_value(out, "exact") - e0) < 1e-11
    assert doc["schema"] == "tensor4all.dmrg/1"
    p = doc["parameters"]
    assert (p["model"], p["L"], p["t"], p["U"], p["mu"]) == ("hubbard", 4, 1.0, 4.0, 0.0)
    assert "J" not in p and p["conserve"] == "N,Sz" and p["sector"] == {"N": 4, "Sz": 0.0}
    assert p["lattice"] == {
        "kind": "chain",
        "name": "chain 4",
        "Lx": 4,
        "Ly": 1,
        "yperiodic": False,
        "sites": 4,
        "nearest_bonds": 3,
        "next_nearest_bonds": 2,
    }
    assert doc["sector"] == {"N": 4.0, "Sz": 0.0}
    assert doc["reference"]["exact"] and abs(doc["reference"]["energy"] - e0) < 1e-11
    assert "N = 4, Sz = 0" in doc["reference"]["source"]
    # the measurements of the exact ground vector (MPS basis: even operators need no strings)
    m = doc["measurements"]
    nupdn = np.diag([0.0, 0, 0, 1])
    ntot = np.diag([0.0, 1, 1, 2])
    sz, sp = np.diag([0.0, 0.5, -0.5, 0]), np.zeros((4, 4))
    sp[1, 2] = 1.0
    ev = lambda op: float(v @ op @ v)  # noqa: E731
    np.testing.assert_allclose(m["density"], [ev(site_op(ntot, i, L)) for i in range(L)], atol=1e-7)
    np.testing.assert_allclose(m["double_occupancy"], [ev(site_op(nupdn, i, L)) for i in range(L)], atol=1e-7)
    assert m["nearest_bonds"] == [[0, 1], [1, 2], [2, 3]]
    spin = [
        ev(site_op(sz, i, L) @ site_op(sz, i + 1, L))
        + 0.5 * ev(site_op(sp, i, L) @ site_op(sp.T, i + 1, L) + site_op(sp.T, i, L) @ site_op(sp, i + 1, L))
        for i in range(L - 1)
    ]
    charge = [
        ev(site_op(ntot, i, L) @ site_op(ntot, i + 1, L)) - ev(site_op(ntot, i, L)) * ev(site_op(ntot, i + 1, L))
        for i in range(L - 1)
    ]
    np.testing.assert_allclose(m["spin_correlation"], spin, atol=1e-7)
    np.testing.assert_allclose(m["charge_correlation"], charge, atol=1e-7)
    assert m["spin_correlation_mean"] == pytest.approx(np.mean(spin), abs=1e-7)
    assert m["charge_correlation_mean"] == pytest.approx(np.mean(charge), abs=1e-7)
    # entanglement per (N, Sz) sector of the left half at the middle bond
    ent = m["entanglement_per_sector"]
    assert ent["bond"] == 1
    n_left, s_left = electron_labels(2)
    block = v.reshape(16, 16)
    for rec in ent["sectors"]:
        rows = (n_left == rec["sector"]["N"]) & (s_left == round(2 * rec["sector"]["Sz"]))
        s = np.linalg.svd(block[rows], compute_uv=False)
        p_exact = float(np.sum(s**2))
        assert rec["probability"] == pytest.approx(p_exact, abs=1e-6)
        w = s[s > 1e-9] ** 2
        assert rec["entropy"] == pytest.approx(float(-np.sum(w * np.log(w))), abs=1e-5)
    assert sum(r["probability"] for r in ent["sectors"]) == pytest.approx(1.0, abs=1e-10)
    assert [r["probability"] for r in ent["sectors"]] == sorted(
        (r["probability"] for r in ent["sectors"]), reverse=True
    )
    for key in ("density ", "double occ ", "nearest ", "sectors "):
        assert any(line.startswith(key) for line in out.splitlines()), key


def test_hubbard_sector_options_and_a_dense_run(capsys):
    e_sector, _ = hubbard_sector_ground(4, 1.0, 2.0, N=3, sz2=-1)
    code, out, err = run(
        capsys,
        "--model",
        "hubbard",
        "--L",
        "4",
        "--U",
        "2",
        "--N",
        "3",
        "--sz",
        "-0.5",
        "--max-bond",
        "32",
        "--sweeps",
        "6",
    )
    assert code == 0, err
    assert abs(summary_value(out, "energy") - e_sector) < 1e-9
    assert "sector      N = 3, Sz = -0.5" in out and "U(1) x U(1) N and Sz, sector N = 3, Sz = -0.5" in out
    # --conserve N: the lowest state of N = 3 over every Sz; --conserve none: over every N
    H = exact_hubbard(4, 1.0, 2.0, 0.7)
    n, _ = electron_labels(4)
    sel = np.flatnonzero(n == 3)
    code, out, err = run(
        capsys,
        "--model",
        "hubbard",
        "--L",
        "4",
        "--U",
        "2",
        "--mu",
        "0.7",
        "--conserve",
        "N",
        "--N",
        "3",
        "--max-bond",
        "32",
        "--sweeps",
        "6",
        "--no-measure",
    )
    assert code == 0, err
    assert abs(summary_value(out, "energy") - np.linalg.eigvalsh(H[np.ix_(sel, sel)])[0]) < 1e-9
    assert "U(1) N, sector N = 3" in out
    assert "density " not in out and "s measurements" not in out  # --no-measure
    code, out, err = run(
        capsys,
        "--model",
        "hubbard",
        "--L",
        "4",
        "--U",
        "2",
        "--mu",
        "0.7",
        "--conserve",
        "none",
        "--max-bond",
        "32",
        "--sweeps",
        "6",
    )
    assert code == 0, err
    assert abs(summary_value(out, "energy") - np.linalg.eigvalsh(H)[0]) < 1e-9
    assert "over all sectors" in out and "sectors " not in out  # a dense state has no sectors


def test_tj_chain_against_the_projected_fock_hamiltonian(capsys):
    code, out, err = run(
        capsys, "--model", "tj", "--L", "4", "--t", "1", "--J", "0.4", "--max-bond", "32", "--sweeps", "6"
    )
    assert code == 0, err
    exact = tj_sector_energy(4, 1.0, 0.4, N=2, sz2=0)  # the default: N = L // 2, Sz = 0
    assert abs(summary_value(out, "energy") - exact) < 1e-9
    assert abs(summary_value(out, "exact") - exact) < 1e-11
    assert "double occ" not in out and "<S_i.S_j>" in out
    code, out, err = run(
        capsys, "--model", "tj", "--L", "4", "--N", "3", "--sz", "0.5", "--max-bond", "32", "--sweeps", "6"
    )
    assert code == 0, err
    assert abs(summary_value(out, "energy") - tj_sector_energy(4, 1.0, 0.5, N=3, sz2=1)) < 1e-9  # J: 0.5


def test_free_fermions_on_lattices_against_the_hopping_matrix(capsys, tmp_path):
    lad = lattices.ladder(5, 2)
    out, doc = run_json(
        capsys,
        tmp_path,
        "--model",
        "spinless",
        "--lattice",
        "ladder",
        "--Lx",
        "5",
        "--Ly",
        "2",
        "--mu",
        "0.2",
        "--max-bond",
        "32",
        "--sweeps",
        "8",
    )
    exact = float(np.sum(hopping_levels(10, lad.nearest)[:5])) - 0.2 * 5  # N = L // 2 = 5
    assert abs(doc["energy"] - exact) < 1e-8
    assert abs(doc["reference"]["energy"] - exact) < 1e-12 and "free fermions" in doc["reference"]["source"]
    assert doc["parameters"]["lattice"]["kind"] == "ladder" and doc["parameters"]["L"] == 10
    assert doc["measurements"]["double_occupancy"] is None and doc["measurements"]["spin_correlation"] is None
    assert sum(doc["measurements"]["density"]) == pytest.approx(5.0, abs=1e-9)
    # the Hubbard model at U = 0 on a 3 x 2 cylinder (Ly = 2: the wrap repeats a bond), N = 4, Sz = 1
    sq = lattices.square(3, 2, yperiodic=True)
    levels = hopping_levels(6, sq.nearest, t=0.8)
    code, out, err = run(
        capsys,
        "--model",
        "hubbard",
        "--lattice",
        "square",
        "--Lx",
        "3",
        "--Ly",
        "2",
        "--U",
        "0",
        "--t",
        "0.8",
        "--N",
        "4",
        "--sz",
        "1",
        "--max-bond",
        "32",
        "--sweeps",
        "8",
    )
    assert code == 0, err
    assert abs(summary_value(out, "energy") - (levels[:3].sum() + levels[:1].sum())) < 1e-8


def test_j1j2_on_a_triangular_cylinder_against_kronecker_products(capsys, tmp_path):
    lat = lattices.triangular(3, 3, yperiodic=True)
    _, doc = run_json(
        capsys,
        tmp_path,
        "--model",
        "j1j2",
        "--lattice",
        "triangular",
        "--Lx",
        "3",
        "--Ly",
        "3",
        "--J2",
        "0.2",
        "--max-bond",
        "32",
        "--sweeps",
        "6",
    )
    exact = heisenberg_lattice_energy(9, lat.nearest, lat.next_nearest, 1.0, 0.2)
    assert abs(doc["energy"] - exact) < 1e-9 and abs(doc["reference"]["energy"] - exact) < 1e-11
    assert doc["sector"] == {"Sz": 0.5} and "measurements" not in doc
    assert doc["parameters"]["lattice"]["yperiodic"] is True and doc["parameters"]["J2"] == 0.2


def test_tfim_on_a_ladder_against_kronecker_products(capsys, tmp_path):
    """Auto conserves the parity (J >= 0: the ground state is even) and compares with ED there."""
    lat = lattices.ladder(3, 2)
    x, z = np.array([[0.0, 1.0], [1.0, 0.0]]), np.diag([1.0, -1.0])

    def at(m, i):
        return np.kron(np.kron(np.eye(2**i), m), np.eye(2 ** (6 - i - 1)))

    H = -sum(at(z, i) @ at(z, j) for i, j in lat.nearest) - 0.7 * sum(at(x, i) for i in range(6))
    exact = float(np.linalg.eigvalsh(H)[0])
    _, doc = run_json(
        capsys,
        tmp_path,
        "--model",
        "tfim",
        "--lattice",
        "ladder",
        "--Lx",
        "3",
        "--g",
        "0.7",
        "--max-bond",
        "32",
        "--sweeps",
        "6",
    )
    assert doc["parameters"]["conserve"] == "parity" and doc["sector"] == {"parity": 0.0}
    assert abs(doc["energy"] - exact) < 1e-9 and abs(doc["reference"]["energy"] - exact) < 1e-11


def fock_lattice(n: int, bonds, spinful: bool, t: float, U: float = 0.0, V: float = 0.0, J: float = 0.0):
    """Hubbard (``U``) + t-J exchange (``J``) or spinless (``V``) fermions on ``bonds`` in the Fock space
    of the modes ``(0 up, 0 dn, 1 up, ...)`` (spinless: one per site), with the labels of each state."""
    k = 2 if spinful else 1
    c = annihilators(k * n)
    num = [x.T @ x for x in c]
    H = np.zeros_like(c[0])
    for i, j in bonds:
        for s in range(k):
            hop = c[k * i + s].T @ c[k * j + s]
            H -= t * (hop + hop.T)
        if not spinful:
            H += V * num[i] @ num[j]
        elif J:
            sp_i, sp_j = c[2 * i].T @ c[2 * i + 1], c[2 * j].T @ c[2 * j + 1]
            sz_i, sz_j = 0.5 * (num[2 * i] - num[2 * i + 1]), 0.5 * (num[2 * j] - num[2 * j + 1])
            n_i, n_j = num[2 * i] + num[2 * i + 1], num[2 * j] + num[2 * j + 1]
            H += J * (sz_i @ sz_j + 0.5 * (sp_i @ sp_j.T + sp_i.T @ sp_j) - 0.25 * n_i @ n_j)
    if spinful:
        for i in range(n):
            H += U * num[2 * i] @ num[2 * i + 1]
    occ = np.array([np.diag(x) for x in num]).round().astype(int)
    return H, occ


@pytest.mark.parametrize("model", ["hubbard", "tj", "spinless"])
def test_reference_module_on_a_2d_lattice_against_the_fock_space(model):
    """The CLI's references (tensor4all.references.exact_sector_energy) where bonds skip sites, so
    that the Jordan-Wigner signs of the long bonds matter."""
    lat = lattices.triangular(2, 2) if model != "spinless" else lattices.square(2, 3, yperiodic=True)
    n = lat.sites
    if model == "spinless":
        H, occ = fock_lattice(n, lat.nearest, False, t=0.9, V=1.3)
        keep = np.flatnonzero(occ.sum(0) == 3)
        got = references.exact_sector_energy("spinless", n, lat.nearest, couplings={"t": 0.9, "V": 1.3}, N=3)
    else:
        H, occ = fock_lattice(n, lat.nearest, True, t=0.9, U=2.5, J=0.4 if model == "tj" else 0.0)
        up, dn = occ[0::2], occ[1::2]
        keep = (up.sum(0) + dn.sum(0) == 3) & (up.sum(0) - dn.sum(0) == 1)
        if model == "tj":
            keep &= (up & dn).sum(0) == 0
        keep = np.flatnonzero(keep)
        cpl = {"t": 0.9, "U": 2.5} if model == "hubbard" else {"t": 0.9, "J": 0.4}
        got = references.exact_sector_energy(model, n, lat.nearest, couplings=cpl, N=3, Sz=0.5)
    assert abs(got - np.linalg.eigvalsh(H[np.ix_(keep, keep)])[0]) < 1e-11


def test_spin_chains_keep_their_record(capsys, tmp_path):
    """The spin chains of the first version: no lattice, no measurements, the same keys."""
    _, doc = run_json(capsys, tmp_path, "--model", "xxz", "--L", "6", "--Jz", "0.5", "--max-bond", "16")
    assert "lattice" not in doc["parameters"] and "measurements" not in doc
    assert set(doc["parameters"]) >= {"J", "Jz", "h", "spin"}


def test_subprocess_run_with_the_readme_example_shape():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tensor4all",
            "dmrg",
            "--model",
            "hubbard",
            "--lattice",
            "square",
            "--Lx",
            "2",
            "--Ly",
            "2",
            "--U",
            "4",
            "--max-bond",
            "32",
            "--sweeps",
            "4",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "hubbard on square 2x2 (y-periodic) (4 sites, 4 bonds)" in proc.stdout
    assert abs(summary_value(proc.stdout, "error")) < 1e-8


# ---- help and bad arguments --------------------------------------------------------------------
def test_help_lists_the_new_options_with_defaults(capsys):
    with pytest.raises(SystemExit) as info:
        main(["dmrg", "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the help lines
    for opt in (
        "--lattice",
        "--Lx",
        "--Ly",
        "--yperiodic",
        "--no-yperiodic",
        "--t",
        "--U",
        "--V",
        "--mu",
        "--J2",
        "--N",
        "hubbard",
        "tj",
        "spinless",
        "j1j2",
        "ladder",
        "honeycomb",
        '"N,Sz"',
    ):
        assert opt in text, opt
    for default in (
        "(default: chain)",
        "(default: 8)",
        "(default: 2 for ladder, 4 otherwise)",
        "(default: 4)",
        "half filling N = L for hubbard",
    ):
        assert default in text, default


BAD = [
    (
        ["--model", "hubbard", "--J", "1"],
        ["--J: not a parameter of --model hubbard", "hubbard takes --L, --t, --U, --mu"],
    ),
    (["--model", "heisenberg", "--U", "2"], ["--U", "belongs to hubbard"]),
    (["--model", "tj", "--mu", "1"], ["--mu", "belongs to hubbard, spinless"]),
    (["--model", "spinless", "--J2", "1"], ["--J2", "belongs to j1j2"]),
    (["--lattice", "square", "--L", "8"], ["--L: the number of sites of a chain", "--Lx and --Ly"]),
    (["--Lx", "4"], ["--Lx: a chain has --L sites"]),
    (["--lattice", "ladder", "--yperiodic"], ["--yperiodic: a ladder is open"]),
    (["--lattice", "honeycomb", "--Ly", "3", "--yperiodic"], ["needs an even --Ly, got 3"]),
    (["--lattice", "square", "--Lx", "1", "--Ly", "1"], ["at least 2 sites"]),
    (["--lattice", "cube"], ["--lattice", "invalid choice", "'honeycomb'"]),
    (["--lattice", "square", "--Ly", "0"], ["--Ly", "positive integer"]),
    (["--model", "hubbard", "--conserve", "Sz"], ["--conserve", "conserves N and Sz, not Sz alone"]),
    (["--model", "spinless", "--conserve", "N,Sz"], ["--conserve", "conserves only N"]),
    (["--model", "heisenberg", "--conserve", "N"], ["--conserve", "conserves Sz, not N"]),
    (["--model", "xxz", "--N", "3"], ["--N", "has no particle number"]),
    (["--model", "hubbard", "--L", "4", "--N", "9"], ["--N", "9 particles do not fit on 4 sites"]),
    (["--model", "tj", "--L", "4", "--N", "5"], ["--N", "at most 4 for tj"]),
    (["--model", "hubbard", "--L", "4", "--sz", "0.5"], ["--sz", "does not fit N = 4"]),
    (
        ["--model", "hubbard", "--L", "4", "--N", "1", "--sz", "1.5"],
        ["--sz", "N = 1, Sz = 1.5 has no states on 4 sites"],
    ),
    (["--model", "hubbard", "--conserve", "N", "--sz", "0"], ["--sz", "needs --conserve N,Sz"]),
    (["--model", "spinless", "--sz", "0"], ["--sz", "spinless fermions have no spin"]),
    (["--model", "hubbard", "--conserve", "none", "--N", "2"], ["--N", "needs a conserved particle number"]),
    (["--model", "hubbard", "--parity", "1"], ["--parity", "needs --model tfim"]),
    (["--model", "hubbard", "--conserve", "N", "--dtype", "complex128"], ["--conserve", "N runs in float64"]),
    (["--N", "-1", "--model", "hubbard"], ["--N", "non-negative integer"]),
    (["--model", "xxz", "--measure"], ["--measure", "those of the fermion models"]),
]


@pytest.mark.parametrize("args,needles", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_arguments_exit_2_with_a_message(capsys, args, needles):
    with pytest.raises(SystemExit) as info:
        main(
            ["dmrg", "--L", "4", "--max-bond", "4", *args]
            if "--L" not in args and "--lattice" not in args
            else ["dmrg", "--max-bond", "4", *args]
        )
    assert info.value.code == 2
    out = capsys.readouterr()
    assert "DMRG  " not in out.out and "Traceback" not in out.err
    assert "usage: tensor4all dmrg" in out.err
    for needle in needles:
        assert needle in out.err, (needle, out.err)
