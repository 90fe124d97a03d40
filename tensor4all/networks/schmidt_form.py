"""The Schmidt form of a concrete MPS, and the measurements that read it.

A state is brought once to left-canonical form with a Schmidt basis on every bond (one QR
sweep from the right, skipped where the state is known to be right-canonical, then one SVD
sweep from the left; G. Vidal, Phys. Rev. Lett. 91, 147902 (2003); the form TeNPy keeps with
its ``S``, J. Hauschild and F. Pollmann, SciPost Phys. Lect. Notes 5 (2018)):
``psi / |psi| = A_0 ... A_{L-1}`` with every ``A_i`` left-orthonormal and, at the bond right
of site ``i``, ``sum_a s_a |L_a> |R_a>`` where ``A_0 ... A_i`` gives the orthonormal ``|L_a>``
and ``A_{i+1} ... A_{L-1}`` gives ``s_a |R_a>``. So the left environment of every bond is the
identity and the right one ``diag(s^2)``: the entropies and spectra are read, an expectation
value is one site's contraction, and all two-point correlations of a set of sites are one
left-to-right pass whose rows travel together as a batch (TeNPy's ``correlation_function``
and ITensor's ``correlation_matrix`` start one pass per row).

**One code path for dense and symmetric states.** A site is a list of :class:`Block` s
(left sector, range of the physical basis, right sector, array ``(nl, ds, nr)``): a dense
site is one block over everything, a symmetric site one block per charge sector. An
environment is a dict ``(bra sector, ket sector) -> (rows, n_bra, n_ket)`` over a batch of
rows, or ``None`` for the identity; which pairs of blocks meet is read from the structure
(an operator block that is zero is skipped), so an operator of any charge, or of none,
works. Everything here is NumPy on concrete values (not differentiable): the MPS methods
take the differentiable path for traced states.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.linalg
import scipy.special

from ..linalg import lapack

__all__ = ["Block", "SchmidtForm", "schmidt_form", "transfer", "close", "sandwich", "pair_rows"]

#: largest batch of correlation rows held at once (bytes of their environments)
BATCH_BYTES = 1 << 27


class Block:
    """One block of a site in the Schmidt form: sectors ``left`` and ``right`` (indices into
    the bonds' sector lists), the physical range ``phys`` (``start, stop``), the array
    ``(nl, ds, nr)`` and ``weight``, the squared Schmidt values of its right sector (None at the
    last site, whose right bond is the norm 1). The matrix views the kernels multiply by are made
    on first use (a state that is only read for its entropies never makes them)."""

    __slots__ = ("left", "phys", "right", "array", "rows", "weight", "_conj_cols", "_weighted")

    def __init__(self, left: int, phys: tuple[int, int], right: int, array: np.ndarray):
        self.left, self.phys, self.right = left, phys, right
        self.array = np.ascontiguousarray(array)
        nl, ds, nr = self.array.shape
        self.rows = self.array.reshape(nl, ds * nr)  # (nl, ds nr): the ket side, a view
        self.weight: np.ndarray | None = None
        self._conj_cols: np.ndarray | None = None
        self._weighted: np.ndarray | None = None

    @property
    def conj_cols(self) -> np.ndarray:
        """The bra side ``(nr, nl ds)``: the conjugated array as rows of the right bond."""
        if self._conj_cols is None:
            nl, ds, nr = self.array.shape
            self._conj_cols = np.ascontiguousarray(self.array.reshape(nl * ds, nr).conj().T)
        return self._conj_cols

    @property
    def weighted(self) -> np.ndarray:
        """``conj(array) * s^2`` of the right sector, flattened: the bra closed with ``diag(s^2)``."""
        if self._weighted is None:
            a = self.array.conj()
            self._weighted = (a if self.weight is None else a * self.weight).reshape(-1)
        return self._weighted


class SchmidtForm:
    """A normalized state in left-canonical Schmidt form (see the module): ``sites`` (a list of
    blocks per site) and ``values`` (per inner bond ``0..L-2``, the Schmidt values by sector:
    ``{charge: descending array}``, the dense state's one sector keyed ``None``). The values of
    all bonds are held in one array, ``flat`` (bond by bond, ``counts[b]`` values each; the
    arrays of ``values`` are views of it), as TeNPy holds one ``S`` per bond: reading all
    entropies is then a few NumPy calls, not one per sector (1087 sectors on a U(1) chain of
    64 sites at bond dimension 128)."""

    __slots__ = ("sites", "values", "by_left", "flat", "counts")

    def __init__(self, sites: list[list[Block]], values: list[dict[Any, np.ndarray]]):
        arrays = [np.asarray(x, dtype=float).reshape(-1) for v in values for x in v.values()]
        self.flat = np.concatenate(arrays) if arrays else np.zeros(0)
        self.flat.flags.writeable = False  # read by every later measurement: no caller may change it
        self.counts = np.array([sum(np.size(x) for x in v.values()) for v in values], dtype=np.intp)
        views, at = [], 0
        for v in values:
            held = {}
            for q, x in v.items():
                held[q] = self.flat[at : at + np.size(x)]
                at += np.size(x)
            views.append(held)
        self.sites, self.values = sites, views
        self.by_left: list[dict[int, list[Block]]] = []
        for blocks in sites:
            groups: dict[int, list[Block]] = {}
            for b in blocks:
                groups.setdefault(b.left, []).append(b)
            self.by_left.append(groups)

    @property
    def L(self) -> int:
        return len(self.sites)

    def schmidt_values(self) -> list[np.ndarray]:
        """Per inner bond, all Schmidt values in descending order."""
        return [np.sort(np.concatenate(list(v.values())))[::-1] for v in self.values]

    def entropies(self) -> list[float]:
        """The von Neumann entanglement entropy ``-sum p log p`` (``p = s^2``) of every inner bond,
        from the kept values on every call (as TeNPy reads its ``S``): all bonds in one pass."""
        counts = self.counts
        out = np.zeros(len(counts))
        held = counts > 0  # every bond of a state holds values; one without would have entropy 0
        if held.any():
            p = self.flat * self.flat
            starts = np.concatenate([[0], np.cumsum(counts[:-1])])[held]
            out[held] = 0.0 - np.add.reduceat(scipy.special.xlogy(p, p), starts)  # 0, not -0
        return out.tolist()


def _site_blocks(t: Any) -> tuple[dict[tuple, np.ndarray], dict[Any, tuple[int, int]]]:
    """A site as ``{(left, phys, right) charges: array}`` and the physical range of each charge
    (a dense array: the one key ``(None, None, None)``)."""
    if isinstance(t, np.ndarray):
        return {(None, None, None): t}, {None: (0, t.shape[1])}
    leg = t.legs[1]
    phys = {q: (leg.slice(q).start, leg.slice(q).stop) for q in leg.sectors}
    return {k: np.asarray(v) for k, v in t.blocks.items()}, phys


def _right_canonical(sites: list[dict[tuple, np.ndarray]]) -> None:
    """Sites ``1..L-1`` right-orthonormal in place, per left sector (QR of the transposed rows)."""
    for i in range(len(sites) - 1, 0, -1):
        groups: dict[Any, list[tuple]] = {}
        for k in sites[i]:
            groups.setdefault(k[0], []).append(k)
        carry = {}
        for ql, keys in groups.items():
            mats = [sites[i][k].reshape(sites[i][k].shape[0], -1) for k in keys]
            q, r = scipy.linalg.qr(np.hstack(mats).T, mode="economic", check_finite=False)
            qt, at = q.T, 0
            for k, m in zip(keys, mats):
                _, ds, nr = sites[i][k].shape
                sites[i][k] = qt[:, at : at + m.shape[1]].reshape(qt.shape[0], ds, nr)
                at += m.shape[1]
            carry[ql] = r.T  # (nl, k)
        for k, a in list(sites[i - 1].items()):
            if k[2] in carry:
                sites[i - 1][k] = np.tensordot(a, carry[k[2]], axes=(2, 0))
            else:  # a sector that no block of site i continues: it holds no weight
                del sites[i - 1][k]


def schmidt_form(tensors: Sequence[Any], right_canonical: bool = False) -> SchmidtForm | None:
    """The :class:`SchmidtForm` of concrete site tensors (NumPy arrays, or symmetric sites with
    concrete blocks); ``right_canonical``: sites ``1..L-1`` are already right-orthonormal (a
    DMRG sweep's result), so the QR sweep is skipped. None for a state of norm 0. Each site is
    first scaled by a power of two (exact), so long chains neither overflow nor underflow."""
    split = [_site_blocks(t) for t in tensors]
    sites, physs = [s for s, _ in split], [p for _, p in split]
    for s in sites:
        m = max((float(np.abs(a).max()) for a in s.values() if a.size), default=0.0)
        e = math.frexp(m)[1] if m > 0.0 and math.isfinite(m) else 0
        if e:
            for k in s:
                s[k] = np.ldexp(s[k], -e) if s[k].dtype.kind == "f" else s[k] * 2.0**-e
    if not right_canonical:
        _right_canonical(sites)
    L = len(sites)
    sector_index: list[dict[Any, int]] = [{}]  # per bond, charge -> position
    for k in sites[0]:
        sector_index[0].setdefault(k[0], len(sector_index[0]))
    out_sites: list[list[Block]] = []
    values: list[dict[Any, np.ndarray]] = []
    for i in range(L):
        groups: dict[Any, list[tuple]] = {}
        for k in sites[i]:
            groups.setdefault(k[2], []).append(k)
        index = {q: n for n, q in enumerate(groups)}
        blocks: list[Block] = []
        if i == L - 1:
            norm = math.sqrt(sum(float(np.vdot(a, a).real) for a in sites[i].values()))
            if not norm > 0.0:
                return None
            for k, a in sites[i].items():
                blocks.append(Block(sector_index[i][k[0]], physs[i][k[1]], index[k[2]], a / norm))
            out_sites.append(blocks)  # no weight: the last right bond is the norm 1
            break
        svals, carry = {}, {}
        for qr, keys in groups.items():
            mats = [sites[i][k].reshape(-1, sites[i][k].shape[2]) for k in keys]
            u, s, vh = lapack.svd(mats[0] if len(mats) == 1 else np.vstack(mats))  # gesdd, gesvd where it fails
            at = 0
            for k, m in zip(keys, mats):
                nl, ds, _ = sites[i][k].shape
                arr = u[at : at + m.shape[0]].reshape(nl, ds, len(s))
                blocks.append(Block(sector_index[i][k[0]], physs[i][k[1]], index[qr], arr))
                at += m.shape[0]
            svals[qr] = s
            carry[qr] = s[:, None] * vh
        total = math.sqrt(sum(float((s * s).sum()) for s in svals.values()))
        if not total > 0.0:
            return None
        values.append({q: s / total for q, s in svals.items()})
        weights = [values[-1][q] ** 2 for q in groups]
        for b in blocks:
            b.weight = weights[b.right]
        out_sites.append(blocks)
        sector_index.append(index)
        nxt = sites[i + 1]
        for k, a in list(nxt.items()):
            if k[0] not in carry:  # a sector that no block of site i reaches: it holds no weight
                del nxt[k]
                continue
            c = carry[k[0]]
            nxt[k] = (c @ a.reshape(a.shape[0], -1)).reshape(c.shape[0], *a.shape[1:])
    return SchmidtForm(out_sites, values)


# ---- the kernels: environments moved across a site and closed ----------------------------


def _applied(x: np.ndarray, m: np.ndarray | None, nl: int, ds: int, nr: int) -> np.ndarray:
    """``x`` (rows, nl, ds2 nr) with the operator block ``m`` (ds, ds2) on its physical index,
    as (rows, nl ds, nr)."""
    n = x.shape[0]
    if m is None:
        return x.reshape(n, nl * ds, nr)
    y = np.matmul(m, x.reshape(n, nl, -1, nr))  # (rows, nl, ds, nr)
    return y.reshape(n, nl * ds, nr)


def _pairs(form: SchmidtForm, site: int, l1: int, l2: int, op: np.ndarray | None, cache: dict, closing: bool):
    """The pairs of blocks (bra, ket) of a site that an environment block ``(l1, l2)`` and the
    operator connect (``closing``: only those that end in the same right sector, which the
    right environment ``diag(s^2)`` keeps), with the operator's block (None: the identity);
    ``cache`` holds the operator's blocks of this call."""
    groups = form.by_left[site]
    for b2 in groups.get(l2, ()):
        for b1 in groups.get(l1, ()):
            if closing and b1.right != b2.right:
                continue
            if op is None:
                if b1.phys == b2.phys:
                    yield b1, b2, None
                continue
            key = (b1.phys, b2.phys)
            m = cache.get(key, False)
            if m is False:
                m = op[b1.phys[0] : b1.phys[1], b2.phys[0] : b2.phys[1]]
                m = cache[key] = m if m.any() else None
            if m is not None:
                yield b1, b2, m


def _env_keys(form: SchmidtForm, site: int, env: dict | None):
    if env is not None:
        return [(k, e) for k, e in env.items()]
    return [((q, q), None) for q in form.by_left[site]]  # the identity of the left bond


def _ket(b2: Block, e: np.ndarray | None) -> np.ndarray:
    """The environment block times the ket block: (rows, nl, ds nr)."""
    if e is None:
        return b2.rows[None]
    return np.matmul(e, b2.rows)


def transfer(form: SchmidtForm, site: int, env: dict | None, op: np.ndarray | None = None) -> dict:
    """The environment ``env`` of the bond left of ``site`` (None: the identity) moved across it,
    with the operator ``op`` (``d x d``, out x in; None: the identity) on the site."""
    out: dict[tuple[int, int], np.ndarray] = {}
    cache: dict = {}
    for (l1, l2), e in _env_keys(form, site, env):
        for b1, b2, m in _pairs(form, site, l1, l2, op, cache, False):
            nl, ds, _ = b1.array.shape
            x = _applied(_ket(b2, e), m, nl, ds, b2.array.shape[2])
            z = np.matmul(b1.conj_cols, x)
            key = (b1.right, b2.right)
            out[key] = out[key] + z if key in out else z
    return out


def close(form: SchmidtForm, site: int, env: dict | None, op: np.ndarray | None = None, rows: int = 1) -> np.ndarray:
    """``<env| op_site |.>`` closed with the right environment ``diag(s^2)``: one value per row."""
    acc: Any = 0.0
    cache: dict = {}
    for (l1, l2), e in _env_keys(form, site, env):
        for b1, b2, m in _pairs(form, site, l1, l2, op, cache, True):
            nl, ds, _ = b1.array.shape
            x = _applied(_ket(b2, e), m, nl, ds, b2.array.shape[2])
            acc = acc + x.reshape(x.shape[0], -1) @ b1.weighted
    return np.broadcast_to(np.asarray(acc), (rows,)).copy()


def sandwich(form: SchmidtForm, ops: dict[int, np.ndarray | None]) -> Any:
    """``<psi| prod_k ops[k] |psi> / <psi|psi>`` (a NumPy scalar)."""
    lo, hi = min(ops), max(ops)
    env = None
    for k in range(lo, hi):
        env = transfer(form, k, env, ops.get(k))
    return close(form, hi, env, ops.get(hi))[0]


def _merged(env: dict, n: int, new: dict) -> dict:
    """The batch ``env`` of ``n`` rows with one more row ``new`` (blocks missing on either side are 0)."""
    out = {}
    for key in env.keys() | new.keys():
        a, b = env.get(key), new.get(key)
        shape = (a if a is not None else b).shape[1:]
        a = np.zeros((n, *shape), dtype=b.dtype) if a is None else a
        b = np.zeros((1, *shape), dtype=a.dtype) if b is None else b
        out[key] = np.concatenate([a, b])
    return out


def pair_rows(
    form: SchmidtForm,
    rows: Sequence[int],
    cols: Sequence[int],
    first: dict[int, np.ndarray],
    last: dict[int, np.ndarray],
    between: dict[int, np.ndarray | None],
) -> dict[tuple[int, int], Any]:
    """``{(i, j): <first_i (prod_{i<k<j} between_k) last_j>}`` for every row ``i`` and column
    ``j > i``: one left-to-right pass carrying the rows as a batch (in chunks of at most
    :data:`BATCH_BYTES` of environments)."""
    rows, cols = sorted(set(rows)), sorted(set(cols))
    if not rows or not cols or cols[-1] <= rows[0]:
        return {}
    widest = max(max(b.array.shape[2] for b in blocks) for blocks in form.sites)
    chunk = max(1, BATCH_BYTES // (16 * widest * widest))
    colset, end = set(cols), cols[-1]
    out: dict[tuple[int, int], Any] = {}
    for c0 in range(0, len(rows), chunk):
        part = [r for r in rows[c0 : c0 + chunk] if r < end]
        if not part:
            continue
        starts, env, batch = set(part), {}, []
        for j in range(part[0], end + 1):
            if batch and j in colset:
                vals = close(form, j, env, last[j], len(batch))
                out.update({(i, j): v for i, v in zip(batch, vals)})
            if j == end:
                break
            if batch:
                env = transfer(form, j, env, between.get(j))
            if j in starts:
                env = _merged(env, len(batch), transfer(form, j, None, first[j]))
                batch.append(j)
    return out
