"""Exact thermodynamics for tests/tensor4all/test_thermal.py, from explicit matrices (NumPy and SciPy
only, nothing of the library): ``python tests/tensor4all/data/thermal_references.py`` writes
``thermal_references.json`` beside it (a few minutes on one core; the tests load the file).

* ``hubbard_L8``: the open Hubbard chain ``-t sum (c+_{i s} c_{i+1 s} + h.c.) + U sum n_up n_dn - mu
  sum n``, L = 8, t = 1, U = 4, mu = U/2, all 4^8 = 65536 states (grand canonical). With the modes
  ordered all up, then all down, a hop joins two neighbouring modes, so it carries no Jordan-Wigner
  sign and each (N_up, N_dn) block is ``T_up (x) 1 + 1 (x) T_dn + U (double occupancies) - mu N``
  with ``T_s`` the hopping among the configurations of one species.
* ``heisenberg_L16``: the open spin-1/2 chain ``J sum (Sx Sx + Sy Sy) + Jz sum Sz Sz``, J = Jz = 1,
  L = 16, all 2^16 = 65536 states, by Sz sector.

Each block is split further by its symmetries (site reflection; spin flip where it maps the block to
itself, i.e. N_up = N_dn or Sz = 0), and the sectors that spin flip maps onto each other are
diagonalized once and counted twice. The eigenvalues give ``ln Z``, ``E`` and ``C`` on the grid
``beta = 0, 0.25, ..., 10``.
"""

from __future__ import annotations

import itertools
import json
import math
import pathlib
import time

import numpy as np
import scipy.sparse as sp

BETAS = [0.25 * k for k in range(41)]


def configurations(L: int, n: int) -> list[int]:
    """The L-bit integers with n bits set (bit i: site i occupied / spin up)."""
    return [sum(1 << i for i in c) for c in itertools.combinations(range(L), n)]


def reverse_bits(x: int, L: int) -> int:
    return int(f"{x:0{L}b}"[::-1], 2)


def hop_matrix(configs: list[int], L: int, t: float) -> sp.csr_matrix:
    """``-t sum_i (b+_i b_{i+1} + h.c.)`` among ``configs`` (neighbouring modes: no sign)."""
    index = {c: k for k, c in enumerate(configs)}
    rows, cols = [], []
    for k, c in enumerate(configs):
        for i in range(L - 1):
            if ((c >> i) & 1) != ((c >> (i + 1)) & 1):
                rows.append(index[c ^ (0b11 << i)])
                cols.append(k)
    n = len(configs)
    return sp.csr_matrix((np.full(len(rows), -t), (rows, cols)), shape=(n, n))


def symmetric_blocks(h: sp.csr_matrix, generators: list[np.ndarray]) -> list[np.ndarray]:
    """The eigenvalues of ``h`` block by block of the commuting involutions ``generators`` (basis
    permutations that commute with ``h``): one block per character of the group they generate."""
    n = h.shape[0]
    elements = []  # (permutation, which generators it applies)
    for bits in itertools.product((0, 1), repeat=len(generators)):
        p = np.arange(n)
        for g, bit in zip(generators, bits):
            if bit:
                p = g[p]
        elements.append((p, bits))
    orbits = np.min(np.stack([p for p, _ in elements]), axis=0)  # each state's orbit representative
    reps = np.unique(orbits)
    out = []
    for chars in itertools.product((1, -1), repeat=len(generators)):
        rows, cols, vals = [], [], []
        col = 0
        for r in reps:
            v: dict[int, float] = {}
            for p, bits in elements:
                s = int(p[r])
                v[s] = v.get(s, 0.0) + math.prod(c for c, b in zip(chars, bits) if b)
            v = {s: x for s, x in v.items() if x != 0.0}
            if not v:
                continue
            norm = math.sqrt(sum(x * x for x in v.values()))
            for s, x in v.items():
                rows.append(s)
                cols.append(col)
                vals.append(x / norm)
            col += 1
        if col == 0:
            continue
        b = sp.csr_matrix((vals, (rows, cols)), shape=(n, col))
        block = (b.T @ h @ b).toarray()
        out.append(np.linalg.eigvalsh(block))
    return out


def hubbard_levels(L: int, t: float, U: float, mu: float) -> list[tuple[np.ndarray, int]]:
    """``(eigenvalues, multiplicity)`` of every (N_up, N_dn) block, N_up >= N_dn."""
    out = []
    for nu in range(L + 1):
        for nd in range(nu + 1):
            up, dn = configurations(L, nu), configurations(L, nd)
            tu, td = hop_matrix(up, L, t), hop_matrix(dn, L, t)
            h = sp.kron(tu, sp.identity(len(dn))) + sp.kron(sp.identity(len(up)), td)
            double = np.array([bin(a & b).count("1") for a in up for b in dn], dtype=float)
            h = sp.csr_matrix(h + sp.diags(U * double - mu * (nu + nd)))
            iu = {c: k for k, c in enumerate(up)}
            idn = {c: k for k, c in enumerate(dn)}
            refl = np.array([iu[reverse_bits(a, L)] * len(dn) + idn[reverse_bits(b, L)] for a in up for b in dn])
            gens = [refl]
            if nu == nd:
                gens.append(np.array([idn[b] * len(dn) + iu[a] for a in up for b in dn]))  # up <-> down
            for w in symmetric_blocks(h, gens):
                out.append((w, 1 if nu == nd else 2))
    return out


def heisenberg_levels(L: int, J: float, Jz: float) -> list[tuple[np.ndarray, int]]:
    """``(eigenvalues, multiplicity)`` of every Sz block, Sz <= 0 (spin flip: Sz -> -Sz)."""
    out = []
    for k in range(L // 2 + 1):  # k spins up
        configs = configurations(L, k)
        index = {c: n for n, c in enumerate(configs)}
        rows, cols, vals = [], [], []
        for n, c in enumerate(configs):
            diag = 0.0
            for i in range(L - 1):
                a, b = (c >> i) & 1, (c >> (i + 1)) & 1
                diag += Jz * (0.25 if a == b else -0.25)
                if a != b:
                    rows.append(index[c ^ (0b11 << i)])
                    cols.append(n)
                    vals.append(0.5 * J)
            rows.append(n)
            cols.append(n)
            vals.append(diag)
        h = sp.csr_matrix((vals, (rows, cols)), shape=(len(configs), len(configs)))
        gens = [np.array([index[reverse_bits(c, L)] for c in configs])]
        if 2 * k == L:
            full = (1 << L) - 1
            gens.append(np.array([index[c ^ full] for c in configs]))
        for w in symmetric_blocks(h, gens):
            out.append((w, 1 if 2 * k == L else 2))
    return out


def thermodynamics(levels: list[tuple[np.ndarray, int]], betas: list[float]) -> dict:
    w = np.concatenate([x for x, _ in levels])
    m = np.concatenate([np.full(len(x), c, dtype=float) for x, c in levels])
    e0 = float(w.min())
    out = {
        "dimension": int(m.sum()),
        "ground_energy": e0,
        "betas": betas,
        "log_z": [],
        "energy": [],
        "specific_heat": [],
    }
    for b in betas:
        p = m * np.exp(-b * (w - e0))
        z = p.sum()
        e = float(np.sum(p * w) / z)
        out["log_z"].append(float(np.log(z) - b * e0))
        out["energy"].append(e)
        out["specific_heat"].append(float(b * b * (np.sum(p * w * w) / z - e * e)))
    return out


def main() -> None:
    here = pathlib.Path(__file__).resolve().parent
    refs = {}
    t0 = time.perf_counter()
    refs["hubbard_L8"] = {
        "L": 8,
        "t": 1.0,
        "U": 4.0,
        "mu": 2.0,
        **thermodynamics(hubbard_levels(8, 1.0, 4.0, 2.0), BETAS),
    }
    print(f"hubbard L=8: {time.perf_counter() - t0:.1f} s, dimension {refs['hubbard_L8']['dimension']}")
    t0 = time.perf_counter()
    refs["heisenberg_L16"] = {"L": 16, "J": 1.0, "Jz": 1.0, **thermodynamics(heisenberg_levels(16, 1.0, 1.0), BETAS)}
    print(f"heisenberg L=16: {time.perf_counter() - t0:.1f} s, dimension {refs['heisenberg_L16']['dimension']}")
    (here / "thermal_references.json").write_text(json.dumps(refs, indent=1) + "\n")


if __name__ == "__main__":
    main()
