"""Exact ground energies of the lattice models (fermions and spin 1/2) in one charge sector, built
here from explicit matrices: no MPO, OpSum or local-space code, so that they can check those.

A model is given by its number of sites and its bond lists (``(i, j)`` pairs, e.g. a
:class:`~tensor4all.lattices.Lattice`'s ``nearest`` and ``next_nearest``):

* :func:`hopping_matrix` -- the single-particle matrix ``h_ij = -t`` on every bond.
* :func:`free_fermion_energy` and :func:`free_electron_energy` -- the ground energy of free
  fermions (spinless ``V = 0``, Hubbard ``U = 0``): each species fills the lowest levels of
  :func:`hopping_matrix` (``O(n^3)`` for ``n`` sites, no size limit).
* :func:`sector_dimension` and :func:`exact_sector_energy` -- sparse exact diagonalization
  (SciPy ``eigsh``) in a sector of particle number ``N``, spin ``Sz`` or parity, in the
  occupation basis of the fermionic modes ordered site by site (up before down), where a
  hopping ``c^dag_a c_b`` has the sign ``(-1)^(occupied modes strictly between a and b)``
  (Jordan-Wigner). Models (the conventions of :mod:`tensor4all.models`):

  - ``"hubbard"``: ``-t sum_<ij>,s (c^dag_is c_js + h.c.) + U sum n_up n_dn - mu sum n``;
  - ``"tj"``: no double occupancy, ``-t sum P (c^dag_is c_js + h.c.) P + J sum_<ij> (S_i.S_j -
    n_i n_j / 4)``;
  - ``"spinless"``: ``-t sum (c^dag_i c_j + h.c.) + V sum_<ij> n_i n_j - mu sum n``;
  - ``"xxz"`` (spin 1/2): ``sum_<ij> J (SxSx + SySy) + Jz SzSz - h sum Sz``, and ``"j1j2"``:
    ``J1`` on ``bonds``, ``J2`` on ``next_bonds`` (isotropic), ``- h sum Sz``;
  - ``"tfim"``: ``-J sum_<ij> X X - g sum Z`` (the parity ``prod Z`` diagonal: sector ``parity``
    = number of ``Z = -1`` spins mod 2), the spectrum of ``-J sum Z Z - g sum X``.

Bad input raises :class:`~tensor4all.InvalidOptionError` (an unknown model or coupling, a
sector without states, a bond outside the sites, a sector beyond ``max_dim`` states),
:class:`~tensor4all.Tensor4allTypeError` or :class:`~tensor4all.BondDimensionError`.
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np
import scipy.sparse
import scipy.sparse.linalg

from ..tools.errors import InvalidOptionError, Tensor4allTypeError
from ..tools.checks import check_positive_int, check_real

__all__ = [
    "hopping_matrix",
    "free_fermion_energy",
    "free_electron_energy",
    "sector_dimension",
    "exact_sector_energy",
    "ED_MODELS",
]

#: the models of :func:`exact_sector_energy` and their couplings (with defaults)
ED_MODELS: dict[str, dict[str, float]] = {
    "hubbard": {"t": 1.0, "U": 4.0, "mu": 0.0},
    "tj": {"t": 1.0, "J": 0.5},
    "spinless": {"t": 1.0, "V": 0.0, "mu": 0.0},
    "xxz": {"J": 1.0, "Jz": 1.0, "h": 0.0},
    "j1j2": {"J1": 1.0, "J2": 0.5, "h": 0.0},
    "tfim": {"J": 1.0, "g": 1.0},
}
#: the charges each model conserves (the sector arguments it takes)
_CHARGES = {
    "hubbard": ("N", "Sz"),
    "tj": ("N", "Sz"),
    "spinless": ("N",),
    "xxz": ("Sz",),
    "j1j2": ("Sz",),
    "tfim": ("parity",),
}
_SPINFUL = ("hubbard", "tj")


# ---- checks ---------------------------------------------------------------------------------------
def _bonds(n: int, bonds: Any, what: str) -> list[tuple[int, int]]:
    if isinstance(bonds, (str, bytes)) or not hasattr(bonds, "__iter__"):
        raise Tensor4allTypeError(f"{what}: bonds must be a list of site pairs (i, j), got {type(bonds).__name__}")
    out = []
    for b in bonds:
        if (
            isinstance(b, (str, bytes))
            or not hasattr(b, "__len__")
            or len(b) != 2
            or not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in b)
        ):
            raise Tensor4allTypeError(f"{what}: each bond must be a pair of integer sites (i, j), got {b!r}")
        i, j = int(b[0]), int(b[1])
        if not (0 <= i < n and 0 <= j < n) or i == j:
            raise InvalidOptionError(f"{what}: bond {(i, j)} must join two different sites of 0..{n - 1}")
        out.append((i, j))
    return out


def _count(value: Any, what: str, high: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise Tensor4allTypeError(f"{what} must be an integer, got {type(value).__name__} {value!r}")
    if not 0 <= value <= high:
        raise InvalidOptionError(f"{what} = {int(value)} has no states: it must lie in 0..{high}")
    return int(value)


def _splits(n: int, N: int | None, Sz: Any, spinful_max: int, what: str) -> list[tuple[int, int]]:
    """The ``(n_up, n_dn)`` of a sector: ``N`` and ``Sz`` fixed, ``N`` only (every split), or all."""
    if N is None:
        if Sz is not None:
            raise InvalidOptionError(f"{what}: Sz needs N (the sector N, Sz)")
        return [(u, d) for u in range(n + 1) for d in range(n + 1) if u + d <= spinful_max]
    N = _count(N, f"{what}: N", spinful_max)
    if Sz is None:
        return [(u, N - u) for u in range(max(0, N - n), min(N, n) + 1)]
    sz = check_real(Sz, f"{what}: Sz")
    up2 = N + 2 * sz
    if abs(up2 - round(up2)) > 1e-9 or round(up2) % 2:
        raise InvalidOptionError(f"{what}: Sz = {Sz!r} does not fit N = {N} (N/2 + Sz must be an integer)")
    u = round(up2) // 2
    d = N - u
    if not (0 <= u <= n and 0 <= d <= n) or u + d > spinful_max:
        raise InvalidOptionError(f"{what}: the sector N = {N}, Sz = {Sz!r} has no states on {n} sites")
    return [(u, d)]


def _couplings(model: str, couplings: Any, what: str) -> dict[str, float]:
    if model not in ED_MODELS:
        raise InvalidOptionError(f"{what}: unknown model {model!r}; valid models: {', '.join(ED_MODELS)}")
    given = {} if couplings is None else couplings
    if not isinstance(given, dict):
        raise Tensor4allTypeError(
            f"{what}: couplings must be a dict such as {ED_MODELS[model]!r}, got {type(given).__name__}"
        )
    unknown = sorted(set(given) - set(ED_MODELS[model]))
    if unknown:
        raise InvalidOptionError(
            f"{what}: {', '.join(map(repr, unknown))} not a coupling of {model!r}; its "
            f"couplings: {', '.join(ED_MODELS[model])}"
        )
    out = dict(ED_MODELS[model])
    for k, v in given.items():
        out[k] = check_real(v, f"{what}: {k}")
    return out


# ---- free fermions -------------------------------------------------------------------------------
def hopping_matrix(n_sites: int, bonds: Iterable[tuple[int, int]], t: float = 1.0) -> np.ndarray:
    """The ``n_sites x n_sites`` single-particle matrix of ``-t sum_<ij> (c^dag_i c_j + h.c.)``:
    ``h_ij = h_ji = -t`` on every bond (a bond listed twice counts twice)."""
    n = check_positive_int(n_sites, "hopping_matrix: n_sites")
    t = check_real(t, "hopping_matrix: t")
    h = np.zeros((n, n))
    for i, j in _bonds(n, bonds, "hopping_matrix"):
        h[i, j] -= t
        h[j, i] -= t
    return h


def _filled(levels: np.ndarray, n: int | None, mu: float) -> float:
    """The lowest energy of ``n`` particles in ``levels`` with ``-mu n`` (``n`` None: any number)."""
    if n is None:
        return float(np.sum(np.minimum(levels - mu, 0.0)))
    return float(np.sum(levels[:n]) - mu * n)


def free_fermion_energy(
    n_sites: int, bonds: Iterable[tuple[int, int]], N: int | None = None, t: float = 1.0, mu: float = 0.0
) -> float:
    """The ground energy of ``N`` free spinless fermions ``-t sum_<ij> (c^dag_i c_j + h.c.) - mu N``:
    the sum of the ``N`` lowest eigenvalues of :func:`hopping_matrix`, minus ``mu N`` (``N=None``:
    the lowest over all ``N``, every level below ``mu`` filled)."""
    n = check_positive_int(n_sites, "free_fermion_energy: n_sites")
    levels = np.linalg.eigvalsh(hopping_matrix(n, bonds, t))
    mu = check_real(mu, "free_fermion_energy: mu")
    if N is not None:
        N = _count(N, "free_fermion_energy: N", n)
    return _filled(levels, N, mu)


def free_electron_energy(
    n_sites: int,
    bonds: Iterable[tuple[int, int]],
    N: int | None = None,
    Sz: float | None = None,
    t: float = 1.0,
    mu: float = 0.0,
) -> float:
    """The ground energy of the Hubbard model at ``U = 0`` in the sector ``N`` (and ``Sz``): each spin
    fills the lowest levels of :func:`hopping_matrix`, ``N_up = N/2 + Sz``, ``N_dn = N/2 - Sz``
    (``Sz=None``: the best split; ``N=None``: any ``N``), minus ``mu N``."""
    n = check_positive_int(n_sites, "free_electron_energy: n_sites")
    levels = np.linalg.eigvalsh(hopping_matrix(n, bonds, t))
    mu = check_real(mu, "free_electron_energy: mu")
    if N is None and Sz is None:
        return 2 * _filled(levels, None, mu)
    return min(
        _filled(levels, u, mu) + _filled(levels, d, mu) for u, d in _splits(n, N, Sz, 2 * n, "free_electron_energy")
    )


# ---- exact diagonalization -------------------------------------------------------------------------
def _popcount(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.int64)
    out = np.zeros(x.shape, dtype=np.int64)
    while np.any(x):
        out += x & 1
        x = x >> 1
    return out


def _with_bits(n: int, k: int) -> np.ndarray:
    """The ``n``-bit integers with ``k`` bits set, ascending."""
    allx = np.arange(1 << n, dtype=np.int64)
    return allx[_popcount(allx) == k]


def _sector(model: str, n: int, N: Any, Sz: Any, parity: Any, what: str) -> np.ndarray:
    """The basis codes of a sector, sorted: spinful ``up << n | dn``; spinless and spin ``bits``."""
    given = {"N": N, "Sz": Sz, "parity": parity}
    wrong = [k for k, v in given.items() if v is not None and k not in _CHARGES[model]]
    if wrong:
        raise InvalidOptionError(f"{what}: {model!r} conserves {', '.join(_CHARGES[model])}, not {wrong[0]}")
    if model in _SPINFUL:
        most = n if model == "tj" else 2 * n
        codes = []
        for u, d in _splits(n, N, Sz, most, what):
            ups, dns = _with_bits(n, u), _with_bits(n, d)
            c = (ups[:, None] << n | dns[None, :]).reshape(-1)
            if model == "tj":
                c = c[((c >> n) & c & ((1 << n) - 1)) == 0]
            codes.append(c)
        return np.sort(np.concatenate(codes))
    if model == "spinless":
        return _with_bits(n, _count(N, f"{what}: N", n)) if N is not None else np.arange(1 << n, dtype=np.int64)
    if model == "tfim":
        allx = np.arange(1 << n, dtype=np.int64)
        if parity is None:
            return allx
        if isinstance(parity, bool) or parity not in (0, 1):
            raise InvalidOptionError(f"{what}: parity must be 0 or 1, got {parity!r}")
        return allx[_popcount(allx) % 2 == parity]
    if Sz is None:  # xxz, j1j2: bits are the up spins
        return np.arange(1 << n, dtype=np.int64)
    return _with_bits(n, _spins_up(n, Sz, what))


def _spins_up(n: int, Sz: Any, what: str) -> int:
    """The number of up spins of ``n`` spins 1/2 with total ``Sz``."""
    up2 = n + 2 * check_real(Sz, f"{what}: Sz")
    if abs(up2 - round(up2)) > 1e-9 or round(up2) % 2 or not 0 <= round(up2) // 2 <= n:
        raise InvalidOptionError(f"{what}: Sz = {Sz!r} is not a total Sz of {n} spins 1/2")
    return round(up2) // 2


def sector_dimension(
    model: str, n_sites: int, *, N: int | None = None, Sz: float | None = None, parity: int | None = None
) -> int:
    """The number of basis states of the sector (all of the Hilbert space when no charge is given),
    counted without building it."""
    what = "sector_dimension"
    _couplings(model, None, what)
    n = check_positive_int(n_sites, f"{what}: n_sites")
    wrong = [k for k, v in {"N": N, "Sz": Sz, "parity": parity}.items() if v is not None and k not in _CHARGES[model]]
    if wrong:
        raise InvalidOptionError(f"{what}: {model!r} conserves {', '.join(_CHARGES[model])}, not {wrong[0]}")
    if model in _SPINFUL:
        most = n if model == "tj" else 2 * n
        if model == "tj":
            return sum(math.comb(n, u) * math.comb(n - u, d) for u, d in _splits(n, N, Sz, most, what))
        return sum(math.comb(n, u) * math.comb(n, d) for u, d in _splits(n, N, Sz, most, what))
    if model == "spinless":
        return math.comb(n, _count(N, f"{what}: N", n)) if N is not None else 2**n
    if model == "tfim":
        if parity is not None and (isinstance(parity, bool) or parity not in (0, 1)):
            raise InvalidOptionError(f"{what}: parity must be 0 or 1, got {parity!r}")
        return 2**n if parity is None else 2 ** (n - 1)
    return 2**n if Sz is None else math.comb(n, _spins_up(n, Sz, what))


class _Builder:
    """Collects the entries of a sparse Hamiltonian on the sorted basis ``codes``."""

    def __init__(self, codes: np.ndarray):
        self.codes = codes
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.diag = np.zeros(len(codes))

    def move(self, src: np.ndarray, new: np.ndarray, values: np.ndarray) -> None:
        """``<new| H |codes[src]> += values`` where ``new`` is in the basis (else nothing: projected out)."""
        at = np.searchsorted(self.codes, new)
        at = np.minimum(at, len(self.codes) - 1)
        ok = self.codes[at] == new
        self.rows.append(at[ok])
        self.cols.append(src[ok])
        self.vals.append(np.broadcast_to(values, new.shape)[ok])

    def matrix(self) -> scipy.sparse.csr_matrix:
        k = len(self.codes)
        idx = np.arange(k)
        rows = np.concatenate(self.rows + [idx])
        cols = np.concatenate(self.cols + [idx])
        vals = np.concatenate(self.vals + [self.diag])
        return scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(k, k))


def _bit(x: np.ndarray, i: int) -> np.ndarray:
    return (x >> i) & 1


def _site_bit(n: int, site: int) -> int:
    """Bit position of ``site`` (site 0 the most significant, as in an occupation string)."""
    return n - 1 - site


def _spinful_terms(b: _Builder, n: int, bonds: list, c: dict[str, float], model: str) -> None:
    codes = b.codes
    up, dn = codes >> n, codes & ((1 << n) - 1)
    nup, ndn = _popcount(up), _popcount(dn)
    if model == "hubbard":
        b.diag += c["U"] * _popcount(up & dn) - c["mu"] * (nup + ndn)
    for i, j in bonds:
        bi, bj = _site_bit(n, i), _site_bit(n, j)
        lo, hi = min(i, j), max(i, j)
        for spin in (0, 1):  # modes 2 k + spin: strictly between the modes of (i, spin) and (j, spin)
            a, z = 2 * lo + spin, 2 * hi + spin
            up_mask = sum(1 << _site_bit(n, k) for k in range(n) if a < 2 * k < z)
            dn_mask = sum(1 << _site_bit(n, k) for k in range(n) if a < 2 * k + 1 < z)
            sign = 1 - 2 * ((_popcount(up & up_mask) + _popcount(dn & dn_mask)) % 2)
            occ = up if spin == 0 else dn
            for src_b, dst_b in ((bj, bi), (bi, bj)):  # c^dag_dst c_src, both directions
                sel = np.flatnonzero((_bit(occ, src_b) == 1) & (_bit(occ, dst_b) == 0))
                moved = occ[sel] ^ (1 << src_b) ^ (1 << dst_b)
                new = (moved << n | dn[sel]) if spin == 0 else (up[sel] << n | moved)
                b.move(sel, new, -c["t"] * sign[sel])
        if model == "tj" and c["J"] != 0.0:
            ui, uj, di, dj = _bit(up, bi), _bit(up, bj), _bit(dn, bi), _bit(dn, bj)
            szi, szj = 0.5 * (ui - di), 0.5 * (uj - dj)
            b.diag += c["J"] * (szi * szj - 0.25 * (ui + di) * (uj + dj))
            # S+_i S-_j + S-_i S+_j (even operators of adjacent modes: no sign): swap opposite spins
            sel = np.flatnonzero(((ui == 1) & (dj == 1)) | ((di == 1) & (uj == 1)))
            flip = (1 << bi) | (1 << bj)
            b.move(sel, (up[sel] ^ flip) << n | (dn[sel] ^ flip), np.full(len(sel), 0.5 * c["J"]))


def _spinless_terms(b: _Builder, n: int, bonds: list, c: dict[str, float]) -> None:
    occ = b.codes
    b.diag -= c["mu"] * _popcount(occ)
    for i, j in bonds:
        bi, bj = _site_bit(n, i), _site_bit(n, j)
        lo, hi = min(i, j), max(i, j)
        mask = sum(1 << _site_bit(n, k) for k in range(lo + 1, hi))
        sign = 1 - 2 * (_popcount(occ & mask) % 2)
        b.diag += c["V"] * _bit(occ, bi) * _bit(occ, bj)
        for src_b, dst_b in ((bj, bi), (bi, bj)):
            sel = np.flatnonzero((_bit(occ, src_b) == 1) & (_bit(occ, dst_b) == 0))
            b.move(sel, occ[sel] ^ (1 << src_b) ^ (1 << dst_b), -c["t"] * sign[sel])


def _spin_terms(b: _Builder, n: int, bonds: list, J: float, Jz: float) -> None:
    """``J (SxSx + SySy) + Jz SzSz`` on ``bonds`` (bits: up spins)."""
    x = b.codes
    for i, j in bonds:
        bi, bj = _site_bit(n, i), _site_bit(n, j)
        si, sj = _bit(x, bi) - 0.5, _bit(x, bj) - 0.5
        b.diag += Jz * si * sj
        sel = np.flatnonzero(_bit(x, bi) != _bit(x, bj))
        b.move(sel, x[sel] ^ ((1 << bi) | (1 << bj)), np.full(len(sel), 0.5 * J))


def _tfim_terms(b: _Builder, n: int, bonds: list, c: dict[str, float]) -> None:
    """``-J sum X X - g sum Z`` (bits: ``Z = -1``)."""
    x = b.codes
    b.diag -= c["g"] * (n - 2 * _popcount(x))
    for i, j in bonds:
        flip = (1 << _site_bit(n, i)) | (1 << _site_bit(n, j))
        b.move(np.arange(len(x)), x ^ flip, np.full(len(x), -c["J"]))


def exact_sector_energy(
    model: str,
    n_sites: int,
    bonds: Iterable[tuple[int, int]],
    *,
    next_bonds: Iterable[tuple[int, int]] = (),
    couplings: dict[str, float] | None = None,
    N: int | None = None,
    Sz: float | None = None,
    parity: int | None = None,
    max_dim: int = 2**14,
) -> float:
    """The lowest eigenvalue of ``model`` (see the module; couplings by name, defaults in
    :data:`ED_MODELS`) on ``n_sites`` sites with ``bonds`` (and, for ``"j1j2"``, ``next_bonds``)
    in the sector ``N``/``Sz``/``parity`` (None: not fixed; all None: the whole Hilbert space).
    Dense below 256 states, else ``eigsh``; a sector of more than ``max_dim`` states is refused."""
    what = "exact_sector_energy"
    c = _couplings(model, couplings, what)
    n = check_positive_int(n_sites, f"{what}: n_sites")
    if n > 30:
        raise InvalidOptionError(f"{what}: {n} sites are beyond exact diagonalization (at most 30)")
    near = _bonds(n, bonds, what)
    far = _bonds(n, next_bonds, what)
    if far and model != "j1j2":
        raise InvalidOptionError(f"{what}: next_bonds are only used by 'j1j2', not {model!r}")
    dim = sector_dimension(model, n, N=N, Sz=Sz, parity=parity)
    if dim > max_dim:
        raise InvalidOptionError(f"{what}: the sector has {dim} states, more than max_dim = {max_dim}")
    b = _Builder(_sector(model, n, N, Sz, parity, what))
    if model in _SPINFUL:
        _spinful_terms(b, n, near, c, model)
    elif model == "spinless":
        _spinless_terms(b, n, near, c)
    elif model == "tfim":
        _tfim_terms(b, n, near, c)
    else:
        if model == "xxz":
            _spin_terms(b, n, near, c["J"], c["Jz"])
        else:
            _spin_terms(b, n, near, c["J1"], c["J1"])
            _spin_terms(b, n, far, c["J2"], c["J2"])
        b.diag -= c["h"] * (_popcount(b.codes) - 0.5 * n)
    H = b.matrix()
    if H.shape[0] <= 256:
        return float(np.linalg.eigvalsh(H.toarray())[0])
    v0 = np.random.default_rng(0).standard_normal(H.shape[0])
    return float(scipy.sparse.linalg.eigsh(H, k=1, which="SA", tol=1e-13, v0=v0, return_eigenvectors=False)[0])
