"""Compile an :class:`~tensor4all.OpSum` into MPO tensors by a finite-state automaton.

Each term ``c * A(i1) B(i2) ... Z(ik)`` (sites sorted; factors on one site multiplied
in written order; ``Id`` factors dropped) is a path through automaton states. Terms with
fermionic operators first get their sign and ``F`` strings (:mod:`tensor4all.operators.jordan_wigner`:
site order, then ``F`` factors on the sites the strings cross); others are unchanged.

* ``ready`` (nothing applied yet) --A at i1--> prefix state ``(A@i1)`` --Id on the
  sites in between--> ... --Z at ik--> ``done`` (everything applied).
* The coefficient sits on one *pivot* transition: the last factor for terms left of
  the middle site ``L // 2``, the first factor for terms right of it, and the factor at
  the middle site (or an identity there) for terms that span it. States before the
  pivot are keyed by the term's prefix (a left trie), states after it by its suffix (a
  right trie), so terms share states and a bond ``b`` carries at most about
  ``min(#left keys, #right keys)`` states (ITensor's AutoMPO does the same with an SVD
  per bond). Nearest-neighbour models get ``2 + #distinct operators`` (Heisenberg 5,
  TFIM 3) without any numerical compression.
* Every MPO entry is linear in at most one coefficient; traced coefficients (tidu
  tracers) stay symbolic:
  ``W_i = W_i^0 + sum_c c * P_{i,c}`` with numeric ``W_i^0`` and ``P_{i,c}``.

A state lives on bond ``b`` (between sites ``b`` and ``b+1``) when it is open there.
Index 0 of a bulk bond is ``ready`` and the last index is ``done``; the left boundary
bond holds only ``ready`` and the right boundary only ``done``. Tensors have index
order ``(left, out, in, right)``. ``MPO.from_opsum`` then compresses numeric MPOs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tenferro as tf

from .opsum import EmptyOpSumError
from .jordan_wigner import jordan_wigner
from ..sites.local_spaces import LocalSpace
from .opsum import OpSum
from ..tools.checks import is_traced

__all__ = ["compile_opsum"]

_READY, _DONE = -1, -2


class _OpTable:
    """Operator products by key (tuple of names) -> index into a stack of real matrices; each
    operator name is validated once, at its first use (:meth:`LocalSpace.factor` lists the
    valid names otherwise)."""

    def __init__(self, space: LocalSpace):
        self.space = space
        self.index: dict[tuple[str, ...], int] = {}
        self.mats: list[np.ndarray] = []
        self.phases: list[complex] = []
        self._factor: dict[str, tuple[complex, np.ndarray]] = {}
        self.get(("Id",))

    def factor(self, name: str) -> tuple[complex, np.ndarray]:
        f = self._factor.get(name)
        if f is None:
            f = self._factor[name] = self.space.factor(name)
        return f

    def get(self, key: tuple[str, ...]) -> int:
        k = self.index.get(key)
        if k is None:
            phase, m = 1, np.eye(self.space.dim)
            for name in key:
                p, f = self.factor(name)
                phase, m = phase * p, m @ f
            k = self.index[key] = len(self.mats)
            self.mats.append(m)
            self.phases.append(phase)
        return k


def _factors(term_ops: tuple[tuple[str, int], ...], table: _OpTable) -> list[tuple[int, int]]:
    """``[(site, op index)]`` sorted by site; same-site factors multiplied in written order."""
    by_site: dict[int, list[str]] = {}
    for name, site in term_ops:
        table.factor(name)  # validates the name
        if name != "Id":
            by_site.setdefault(site, []).append(name)
    if not by_site:  # a multiple of the identity
        return [(min(s for _, s in term_ops), 0)]
    return [(s, table.get(tuple(by_site[s]))) for s in sorted(by_site)]


def _assemble(coeff: np.ndarray, mats: np.ndarray) -> np.ndarray:
    """``W[r, s, t, c] = sum_k coeff[r, c, k] mats[k, s, t]`` as one matrix product."""
    r, c, k = coeff.shape
    d = mats.shape[1]
    w = (coeff.reshape(r * c, k) @ mats.reshape(k, d * d)).reshape(r, c, d, d)
    return np.ascontiguousarray(w.transpose(0, 2, 3, 1))


def _numeric(c: Any) -> complex:
    return complex(np.asarray(c).reshape(()))


class _Automaton:
    """Step 1: the automaton of the terms. States are keyed by a term's prefix (left trie,
    before its pivot) or suffix (right trie, after it); each knows the first and last bond
    where it is open. Transitions ``(site, from, to, op) -> weight``: numeric weights in
    ``trans``, traced coefficients (by ``id``) in ``sym_trans``."""

    def __init__(self, L: int, table: _OpTable):
        self.L, self.table, self.mid = L, table, L // 2
        self.state_id: dict[tuple, int] = {}
        self.first: list[int] = []  # first bond where each state is open
        self.last: list[int] = []  # last bond where it is open
        self.trans: dict[tuple[int, int, int, int], Any] = {}
        self.sym_trans: dict[tuple[int, int, int, int, int], complex] = {}
        self.symbols: dict[int, Any] = {}

    def state(self, key: tuple, lo: int, hi: int) -> int:
        s = self.state_id.get(key)
        if s is None:
            s = self.state_id[key] = len(self.first)
            self.first.append(lo)
            self.last.append(hi)
        else:
            self.first[s] = min(self.first[s], lo)
            self.last[s] = max(self.last[s], hi)
        return s

    def add_term(self, coef: Any, sign: int, ops: tuple[tuple[str, int], ...]) -> None:
        """One term's path: the coefficient on its pivot transition (see the module docstring)."""
        table, mid = self.table, self.mid
        facs = _factors(ops, table)
        phase = sign
        for _, k in facs:
            phase = phase * table.phases[k]
        sites = [s for s, _ in facs]
        if sites[-1] < mid:
            p = len(facs) - 1
        elif sites[0] > mid:
            p = 0
        elif mid in sites:
            p = sites.index(mid)
        else:  # a virtual identity factor at the middle site
            p = next(t for t, s in enumerate(sites) if s > mid)
            facs.insert(p, (mid, 0))
            sites.insert(p, mid)
        prev = _READY
        for t in range(p):
            st = self.state(("L",) + tuple(facs[: t + 1]), sites[t], sites[t + 1] - 1)
            self.trans[(sites[t], prev, st, facs[t][1])] = 1.0
            prev = st
        nxt = _DONE
        for t in range(len(facs) - 1, p, -1):
            st = self.state(("R",) + tuple(facs[t:]), sites[t - 1], sites[t] - 1)
            self.trans[(sites[t], st, nxt, facs[t][1])] = 1.0
            nxt = st
        site, k = facs[p]
        if is_traced(coef):
            sid = id(coef)
            self.symbols[sid] = coef
            key = (sid, site, prev, nxt, k)
            self.sym_trans[key] = self.sym_trans.get(key, 0.0) + phase
        else:
            key2 = (site, prev, nxt, k)
            self.trans[key2] = self.trans.get(key2, 0.0) + _numeric(coef) * phase

    def add_identity_carries(self) -> None:
        """``ready`` and ``done`` carry on every site; each state carries through the sites it spans."""
        for s in range(self.L):
            self.trans[(s, _READY, _READY, 0)] = 1.0
            self.trans[(s, _DONE, _DONE, 0)] = 1.0
        for q in range(len(self.first)):
            for s in range(self.first[q] + 1, self.last[q] + 1):
                self.trans[(s, q, q, 0)] = 1.0


def _number_states(first: list[int], last: list[int], L: int) -> tuple[list[dict[int, int]], list[int]]:
    """Step 2: the index of each open state on every bond ``b = -1 .. L-1`` (``ready`` first,
    ``done`` last) and the bond dimensions."""
    first_a = np.array(first, dtype=np.int64)
    last_a = np.array(last, dtype=np.int64)
    index_on_bond: list[dict[int, int]] = []
    for b in range(-1, L):
        if b == -1:
            idx = {_READY: 0}
        elif b == L - 1:
            idx = {_DONE: 0}
        else:
            alive = np.nonzero((first_a <= b) & (last_a >= b))[0] if len(first) else np.zeros(0, dtype=np.int64)
            idx = {_READY: 0}
            idx.update({int(q): j + 1 for j, q in enumerate(alive)})
            idx[_DONE] = len(alive) + 1
        index_on_bond.append(idx)
    return index_on_bond, [len(idx) for idx in index_on_bond]


def _coefficients(
    auto: _Automaton, index_on_bond: list[dict[int, int]], dims: list[int], n_ops: int
) -> tuple[list[np.ndarray], dict[int, list[np.ndarray | None]]]:
    """Step 3: per site the coefficient tensor ``coeff[left, right, op]`` of the numeric
    transitions, and per traced coefficient its own tensors (None where it does not act)."""
    L = auto.L
    numeric_complex = any(isinstance(w, complex) and w.imag != 0.0 for w in auto.trans.values())
    dt = np.complex128 if numeric_complex else np.float64
    coeffs = [np.zeros((dims[s], dims[s + 1], n_ops), dtype=dt) for s in range(L)]
    sym_coeffs: dict[int, list[np.ndarray | None]] = {sid: [None] * L for sid in auto.symbols}
    for (s, f, t, k), w in auto.trans.items():
        i, j = index_on_bond[s].get(f), index_on_bond[s + 1].get(t)
        if i is None or j is None:
            continue
        coeffs[s][i, j, k] += w if numeric_complex else w.real if isinstance(w, complex) else w
    for (sid, s, f, t, k), w in auto.sym_trans.items():
        i, j = index_on_bond[s].get(f), index_on_bond[s + 1].get(t)
        if i is None or j is None:
            continue
        arr = sym_coeffs[sid][s]
        if arr is None:
            arr = sym_coeffs[sid][s] = np.zeros((dims[s], dims[s + 1], n_ops), dtype=np.complex128)
        arr[i, j, k] += w
    return coeffs, sym_coeffs


def _assemble_tensors(
    coeffs: list[np.ndarray], sym_coeffs: dict[int, list[np.ndarray | None]], symbols: dict[int, Any], mats: np.ndarray
) -> tuple[list[Any], bool]:
    """Step 4: the MPO tensors, ``W_i = W_i^0 + sum_c c * P_{i,c}`` (numeric when no
    coefficient is traced)."""
    tensors = [_assemble(c, mats) for c in coeffs]
    if not symbols:
        return tensors, False
    out = []
    for s, w0 in enumerate(tensors):
        w = tf.asarray(w0)
        for sid, per_site in sym_coeffs.items():
            arr = per_site[s]
            if arr is None:
                continue
            p = _assemble(arr, mats)
            if not np.any(p.imag):
                p = p.real.copy()
            w = w + symbols[sid] * tf.asarray(p)
        out.append(w)
    return out, True


def compile_opsum(os: OpSum, L: int, space: LocalSpace) -> tuple[list[Any], bool]:
    """MPO tensors ``(left, out, in, right)`` of ``os`` on ``L`` sites of ``space``, in four
    steps: the automaton of the terms (after their Jordan-Wigner form), the numbering of its
    states per bond, the coefficient tensors, and their assembly with the operator matrices.

    Returns ``(tensors, symbolic)``: NumPy arrays when every coefficient is concrete
    (``symbolic=False``), else tenferro expressions in the traced coefficients.
    """
    if len(os) == 0:
        raise EmptyOpSumError("the OpSum has no terms; add terms with os += (coef, 'Sz', i, ...)")
    os.check_sites(L)  # every site validated once, here
    table = _OpTable(space)
    auto = _Automaton(L, table)
    for coef, sign, ops in jordan_wigner(os, space):
        auto.add_term(coef, sign, ops)
    index_on_bond, dims = _number_states(auto.first, auto.last, L)
    auto.add_identity_carries()
    mats = np.stack(table.mats)  # (nops, d, d) real
    coeffs, sym_coeffs = _coefficients(auto, index_on_bond, dims, len(mats))
    return _assemble_tensors(coeffs, sym_coeffs, auto.symbols, mats)
