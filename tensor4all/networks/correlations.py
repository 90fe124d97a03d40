"""Local and two-point measurements of an MPS: operator products, string operators, Jordan-Wigner
strings and whole correlation matrices (what :meth:`MPS.expect`, :meth:`MPS.correlation` and
:meth:`MPS.correlation_matrix` compute; ``_mps.py`` calls this module, never the other way).

**Operators at a site.** An operator is a name of the local space (``"Sz"``), a ``d x d`` matrix,
or a product of them: the string ``"A*B"`` (spaces around ``*`` allowed) or a list/tuple
``["A", "B"]`` (names, matrices or both). A product multiplies in written order, as matrices:
``"Cdagup*Cup"`` is ``c^dag_up c_up`` (``Cup`` acts first). A name of the space is looked up
whole before ``*`` splits it. A list/tuple counts as a product when one of its entries is a name
or a 2-D array; nested lists of numbers are a matrix.

**Fermion parity.** A factor named in the space's ``fermionic`` set is odd; a product is odd when
it has an odd number of odd factors; matrices are even (a custom fermionic operator needs a
:class:`~tensor4all.LocalSpace` that declares it). An odd operator stands for the fermion
``(prod_{k<i} F_k) O_i`` (modes ordered by site: the convention of :mod:`._jordan_wigner`), so a
product of even parity at one site (``"Cdagup*Cup"``, ``"Cdagup*Cdn"``) needs no string and
``expect`` of an odd one is refused: its expectation value alone is not physical.

**Two points.** ``<A_i (prod_{min<k<max} S_k) B_j>`` with an optional string ``S`` on every site
strictly between ``i`` and ``j``. For two odd operators the strings multiply out (``F^2 = 1``,
operators on different sites commute as matrices) to

* ``i < j``: ``(A F)_i (F S)_{i<k<j} B_j``;
* ``i > j``: ``(F B)_j (F S)_{j<k<i} A_i`` (no sign: ``F B = -B F`` is where ITensor's ``-1`` of
  ``(B F)_j`` goes);
* ``i == j``: ``(A B)_i``.

An odd operator with an even one is refused (the product changes the fermion parity). The string
must be even: a fermionic name is refused, and with two odd operators a matrix must commute with
``F`` (``S F = F S``; otherwise ``F S`` and ``S F`` differ and the operator is ambiguous), so
that it combines with the Jordan-Wigner strings: ``correlation("Cdagup", "Cup", i, j,
string="Ntot")`` is ``<c^dag_{i up} (prod_k n_k) c_{j up}>`` of true fermions.

**Correlation matrices.** :func:`correlation_matrix` gets every ``<A_i S.. B_j>`` of a set of
sites as TeNPy's ``correlation_function`` does: left and right norm environments once, then per
site ``i`` one left-to-right sweep of transfer matrices that closes each ``j > i`` against the
right environment (``i < j`` entries), and one with the roles exchanged (``i > j``), so ``L``
sites cost ``O(L^2)`` contractions of ``chi^3 d`` each. Everything is a tenferro operation, so the
result is differentiable with tidu; symmetric sites stay blockwise when every operator has one
charge (``F``, ``Sz``, ``S+``, ``Cdag``), else the sites are made dense.

**Environments.** The norm environments live in the one environment object,
:class:`~.environments.EnvCache`, in its index order (left blocks ``(bra, ket)``, right blocks
``(ket, bra)``; ``None`` at the edges): the right blocks are built once from the right end, and
the centre then moves right through the measured sites (``set_left``), dropping the right blocks
it passes. Every block is moved by :func:`~.environments.transfer_left` and
:func:`~.environments.transfer_right`, and every value is the chain closed across the last
operator's site by :func:`~.environments.close`: the differentiable updates that the
variational fit of ``apply`` uses too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import tenferro as tf

from ..tools.errors import (
    DimensionMismatchError,
    InvalidOptionError,
    NonFiniteError,
    Tensor4allTypeError,
    ZeroNormError,
)
from ..sites.local_spaces import UnknownLocalSpaceError
from ..sites.local_spaces import LocalSpace, default_local_space, local_space
from .environments import EnvCache, block_bytes, close, site_conj, site_einsum, transfer_left, transfer_right
from .schmidt_form import SchmidtForm, pair_rows
from .schmidt_form import close as close_form
from .symmetric_sites import is_symmetric, operator_tensor
from ..tools.checks import check_index, concrete, numeric_array

__all__ = [
    "SiteOperator",
    "Chain",
    "expect_operators",
    "pair_operators",
    "correlation_operators",
    "correlation_matrix",
    "form_correlation_matrix",
    "expect_profile",
    "form_expect_profile",
    "site_einsum",
    "site_conj",
]


@dataclass(frozen=True)
class SiteOperator:
    """An operator at one site: its ``d x d`` matrix and whether it is odd under the fermion
    parity (an odd number of fermionic factors), with the text used in messages."""

    matrix: np.ndarray
    odd: bool
    label: str


class Chain:
    """How operator names resolve on a chain of physical dimensions ``dims``: the local space
    ``local`` on every site, or (``local=None``) each site's default space by dimension."""

    def __init__(self, dims: Sequence[int], local: Any):
        self.dims = list(dims)
        self.space = None if local is None else local_space(local)  # a bad name fails here, always

    def space_at(self, site: int) -> LocalSpace:
        return self.space if self.space is not None else default_local_space(self.dims[site])

    def operator(self, op: Any, site: int, what: str) -> SiteOperator:
        """``op`` (a name, a matrix or a product of them) at ``site`` as a :class:`SiteOperator`."""
        d = self.dims[site]
        matrix, odd, labels = None, False, []
        for f in self._factors(op, site, what):
            if isinstance(f, str):
                space = self.space_at(site)
                m = space.matrix(f)  # UnknownOperatorError lists the valid names
                odd ^= f in space.fermionic
                labels.append(f)
            else:
                m = numeric_array(f, f"{what} at site {site} (a name, a matrix or a product of them)")
                labels.append("<matrix>")
            if m.shape != (d, d):
                raise DimensionMismatchError(
                    f"{what}: the operator at site {site} must be {d}x{d}, got shape {m.shape}"
                )
            if not np.isfinite(m).all():
                raise NonFiniteError(f"{what}: the operator at site {site} holds NaN or infinity")
            matrix = m if matrix is None else matrix @ m
        return SiteOperator(matrix, odd, "*".join(labels))

    def parity(self, site: int) -> np.ndarray:
        """The Jordan-Wigner string operator ``F`` of the space at ``site``."""
        space = self.space_at(site)
        return space.matrix(space.string)

    def _factors(self, op: Any, site: int, what: str) -> list[Any]:
        """The factors of a product, in written order (names as strings, anything else a matrix)."""
        if isinstance(op, str):
            name = op.strip()
            try:
                whole = name in self.space_at(site).ops
            except UnknownLocalSpaceError:
                raise UnknownLocalSpaceError(
                    f"{what}: no local space for the operator name {op!r} on a site of dimension {self.dims[site]}; "
                    "pass local=... (a space whose dimension it is) or a matrix"
                ) from None
            parts = [name] if whole or "*" not in name else [p.strip() for p in name.split("*")]
            if not all(parts):
                raise InvalidOptionError(
                    f"{what}: the operator product {op!r} has an empty factor; write names "
                    "joined by '*', e.g. 'Cdagup*Cup'"
                )
            return parts
        if isinstance(op, (list, tuple)):
            if not op:
                raise InvalidOptionError(
                    f"{what}: an empty operator product []; give a name, a matrix or a non-empty list of them"
                )
            if any(isinstance(x, str) or getattr(x, "ndim", None) == 2 for x in op):
                return [f for x in op for f in self._factors(x, site, what)]
        return [op]


def _is_hermitian(m: np.ndarray) -> bool:
    """``m`` equals its adjoint to ``1e-14`` of its largest entry (``numpy.allclose`` with that
    ``atol`` and ``rtol=0``, without its broadcasting and checks: a third of a single-site
    ``MPS.expect`` went there)."""
    if not m.size:
        return True
    a = np.abs(m)
    return bool(np.abs(m - m.conj().T).max() <= 1e-14 * max(float(a.max()), 1e-300))


# ---- the operators of one measurement -----------------------------------------------------------
def expect_operators(op: Any, site: int, dims: Sequence[int], local: Any) -> tuple[dict[int, np.ndarray], bool]:
    """``({site: matrix}, hermitian)`` of :meth:`MPS.expect`; an odd operator raises
    :class:`InvalidOptionError`."""
    chain = Chain(dims, local)
    a = chain.operator(op, site, "expect")
    _check_even(a, chain, site)
    return {site: a.matrix}, _is_hermitian(a.matrix)


def _check_even(a: SiteOperator, chain: Chain, site: int) -> None:
    if a.odd:
        raise InvalidOptionError(
            f"expect: {a.label!r} is odd under the fermion parity (an odd number of fermionic operators of "
            f"{chain.space_at(site).name!r}), so its expectation value alone is not physical; measure fermionic "
            "operators in pairs, e.g. correlation('Cdag', 'C', i, j) (strings included), or an even product at one "
            "site such as 'Cdag*C'"
        )


def _check_parities(a: SiteOperator, b: SiteOperator, what: str) -> None:
    if a.odd != b.odd:
        odd = a if a.odd else b
        raise InvalidOptionError(
            f"{what}: {a.label!r} and {b.label!r} hold an odd number of fermionic operators ({odd.label!r} is odd "
            "under the fermion parity, the other even), so the product changes the fermion parity and its "
            "expectation value is not physical; pair fermionic operators, e.g. ('Cdag', 'C')"
        )


def _between(chain: Chain, string: Any, site: int, odd: bool, what: str) -> np.ndarray | None:
    """The operator on a site strictly between the two ends: ``S`` (the string), ``F`` (two odd
    ends), ``F S``, or None (the identity)."""
    s = None
    if string is not None:
        sop = chain.operator(string, site, f"{what}: string")
        if sop.odd:
            raise InvalidOptionError(
                f"{what}: the string {sop.label!r} is odd under the fermion parity; a string "
                "operator must be even (bosonic), e.g. 'F', 'Ntot' or a parity"
            )
        s = sop.matrix
    if not odd:
        return s
    f = chain.parity(site)
    if s is None:
        return f
    if not np.allclose(f @ s, s @ f, rtol=0, atol=1e-12 * max(1.0, float(np.max(np.abs(s))))):
        raise InvalidOptionError(
            f"{what}: the string matrix does not commute with the parity F at site {site}, so "
            "it cannot stand between fermionic operators (F S and S F differ); give an even "
            "(parity-conserving) string"
        )
    return f @ s


def pair_operators(
    a: SiteOperator,
    b: SiteOperator,
    i: int,
    j: int,
    between: dict[int, np.ndarray | None],
    parity: dict[int, np.ndarray],
) -> dict[int, np.ndarray]:
    """The site matrices of ``<A_i (prod S) B_j>`` in the Jordan-Wigner form of the module docstring
    (``between[k]``: the operator on site ``k`` strictly between; ``parity[k]``: ``F`` at the ends
    when ``a`` and ``b`` are odd)."""
    if i == j:
        return {i: a.matrix @ b.matrix}
    if i < j:
        ops = {i: a.matrix @ parity[i] if a.odd else a.matrix, j: b.matrix}
    else:
        ops = {j: parity[j] @ b.matrix if b.odd else b.matrix, i: a.matrix}
    for k in range(min(i, j) + 1, max(i, j)):
        if between[k] is not None:
            ops[k] = between[k]
    return ops


def correlation_operators(
    op_a: Any, op_b: Any, i: int, j: int, dims: Sequence[int], local: Any, string: Any = None
) -> tuple[dict[int, np.ndarray], bool]:
    """``({site: matrix}, hermitian)`` of :meth:`MPS.correlation` (sites already checked)."""
    what = "correlation"
    chain = Chain(dims, local)
    a = chain.operator(op_a, i, f"{what}: op_a")
    b = chain.operator(op_b, j, f"{what}: op_b")
    _check_parities(a, b, what)
    lo, hi = min(i, j), max(i, j)
    between = {k: _between(chain, string, k, a.odd, what) for k in range(lo + 1, hi)}
    if string is not None and hi - lo < 2:
        _between(chain, string, lo, a.odd, what)  # checked though no site lies between
    parity = {k: chain.parity(k) for k in (i, j)} if a.odd else {}
    ops = pair_operators(a, b, i, j, between, parity)
    return ops, all(_is_hermitian(m) for m in ops.values())


# ---- correlation matrices: one sweep of transfer matrices per row ---------------------------------
def _check_sites(sites: Any, L: int, what: str) -> list[int]:
    """``sites`` (None: all) as a non-empty list of sites in ``0..L-1``, in the order given."""
    if sites is None:
        return list(range(L))
    if isinstance(sites, (str, bytes)) or not hasattr(sites, "__iter__"):
        raise Tensor4allTypeError(
            f"{what}: sites must be a list of site indices (or None for all), got {type(sites).__name__} {sites!r}"
        )
    out = []
    for s in sites:
        out.append(check_index(s, L, f"{what}: site"))
    if not out:
        raise InvalidOptionError(f"{what}: sites is empty; give at least one site in 0..{L - 1} (or None for all)")
    return out


def _move_right(envs: EnvCache, ts: list[Any], start: int, stop: int) -> int:
    """The centre moved from site ``start`` to ``stop``: the left blocks up to ``stop`` built, the
    right blocks passed dropped. Returns ``stop``."""
    for k in range(start, stop):
        envs.set_left(k + 1, transfer_left(envs.left(k), ts[k], ts[k]))
    return stop


def _operands(ts: list[Any], mats: dict[tuple[str, int], np.ndarray | None]) -> tuple[list[Any], dict]:
    """The site tensors and the operator matrices as operands: blockwise on symmetric sites when every
    operator has one charge, else dense (sites made dense); all matrices of one dtype."""
    dt = np.result_type(*[m for m in mats.values() if m is not None], np.float64)
    mats = {k: None if m is None else np.asfortranarray(m.astype(dt)) for k, m in mats.items()}
    if is_symmetric(ts):
        blocks = {k: None if m is None else operator_tensor(m, ts[k[1]].legs[1]) for k, m in mats.items()}
        if all(o is not None for k, o in blocks.items() if mats[k] is not None):
            return ts, blocks
        ts = [t.to_dense() for t in ts]
    return ts, {k: None if m is None else tf.asarray(m) for k, m in mats.items()}


def _sweep(
    ts: list[Any], envs: EnvCache, start: int, first: Any, ends: dict[int, Any], between: dict[int, Any]
) -> dict[int, Any]:
    """``{k: <first_start (prod between) ends[k]_k>}`` (unnormalized) for every ``k > start`` in
    ``ends``: one left-to-right pass from ``start``, closing at each ``k`` with the right block."""
    env = transfer_left(envs.left(start), ts[start], ts[start], first)
    out = {}
    last = max(ends)
    for k in range(start + 1, last + 1):
        if k in ends:
            out[k] = close(env, envs.right(k + 1), ts[k], ts[k], ends[k])
        if k < last:
            env = transfer_left(env, ts[k], ts[k], between.get(k))
    return out


def _pair_matrices(dims: list[int], op_a: Any, op_b: Any, sites: Any, string: Any, local: Any, what: str) -> tuple:
    """The checked sites (``order``, and ``uniq`` sorted) and the operator matrices of a correlation
    matrix by role, ``{(role, site): matrix or None}``: rows start with A (``first_a``, ``i < j``) or
    B (``first_b``, ``i > j``) and end with the other (``last_b``, ``last_a``), ``between`` strings,
    ``both`` on the diagonal; whether every one is Hermitian, and whether the lower triangle
    mirrors the upper (``mirror``)."""
    chain = Chain(dims, local)
    order = _check_sites(sites, len(dims), what)
    uniq = sorted(set(order))
    lo, hi = uniq[0], uniq[-1]
    a = {k: chain.operator(op_a, k, f"{what}: op_a") for k in uniq}
    b = {k: chain.operator(op_b, k, f"{what}: op_b") for k in uniq}
    for k in uniq:
        _check_parities(a[k], b[k], what)
    odd = a[lo].odd
    if string is not None and hi - lo < 2:
        _between(chain, string, lo, odd, what)  # checked though no site lies between
    mats: dict[tuple[str, int], np.ndarray | None] = {}
    for k in range(lo + 1, hi):
        mats[("between", k)] = _between(chain, string, k, odd, what)
    for k in uniq:
        f = chain.parity(k) if odd else None
        mats[("both", k)] = a[k].matrix @ b[k].matrix
        if len(uniq) > 1:
            mats[("first_a", k)] = a[k].matrix @ f if odd else a[k].matrix
            mats[("first_b", k)] = f @ b[k].matrix if odd else b[k].matrix
            mats[("last_a", k)] = a[k].matrix
            mats[("last_b", k)] = b[k].matrix
    hermitian = all(_is_hermitian(m) for m in mats.values() if m is not None)
    # (A_i S B_j)^dagger = B_j^dagger S^dagger A_i^dagger: when B = A^dagger and S is Hermitian the
    # entries below the diagonal are the conjugates of those above (<c^dag_i c_j>, <Sz_i Sz_j>)
    mirror = all(np.allclose(a[k].matrix.conj().T, b[k].matrix, rtol=0, atol=1e-14) for k in uniq) and all(
        _is_hermitian(mats[("between", k)]) for k in range(lo + 1, hi) if mats[("between", k)] is not None
    )
    return order, uniq, mats, hermitian, mirror


def correlation_matrix(
    ts: Sequence[Any],
    op_a: Any,
    op_b: Any,
    sites: Any = None,
    string: Any = None,
    local: Any = None,
    what: str = "MPS.correlation_matrix",
) -> Any:
    """The matrix ``C[x, y] = <A_{sites[x]} (prod S) B_{sites[y]}> / <psi|psi>`` over the site
    tensors ``ts`` (scaled by powers of two or not: the ratio is the same), as a tenferro tensor;
    real where every operator used is Hermitian: the differentiable path. See
    :meth:`MPS.correlation_matrix`."""
    ts = list(ts)
    dims = [tuple(t.shape)[1] for t in ts]
    order, uniq, mats, hermitian, mirror = _pair_matrices(dims, op_a, op_b, sites, string, local, what)
    lo, hi = uniq[0], uniq[-1]
    ts, ops = _operands(ts, mats)
    between = {k: ops[("between", k)] for k in range(lo + 1, hi)}
    # the right blocks over every site; the centre then moves right through the rows
    norm2, envs = _norm_and_environments(ts, what)
    values: dict[tuple[int, int], Any] = {}
    centre = 0
    for pos, k in enumerate(uniq):
        centre = _move_right(envs, ts, centre, k)
        values[(k, k)] = close(envs.left(k), envs.right(k + 1), ts[k], ts[k], ops[("both", k)])
        later = uniq[pos + 1 :]
        if later:
            upper = _sweep(ts, envs, k, ops[("first_a", k)], {j: ops[("last_b", j)] for j in later}, between)
            values.update({(k, j): v for j, v in upper.items()})
            if mirror:
                values.update({(i, k): tf.conj(v) for i, v in upper.items()})
            else:
                lower = _sweep(ts, envs, k, ops[("first_b", k)], {i: ops[("last_a", i)] for i in later}, between)
                values.update({(i, k): v for i, v in lower.items()})
    scaled = {key: (tf.real(v / norm2) if hermitian else v / norm2) for key, v in values.items()}
    return tf.stack([tf.stack([scaled[(i, j)] for j in order]) for i in order])


def form_correlation_matrix(
    form: SchmidtForm,
    dims: list[int],
    op_a: Any,
    op_b: Any,
    sites: Any = None,
    string: Any = None,
    local: Any = None,
    what: str = "MPS.correlation_matrix",
) -> Any:
    """:func:`correlation_matrix` of a concrete state from its Schmidt form: the diagonal one site
    each, the upper triangle one left-to-right pass with the rows batched
    (:func:`~.schmidt_form.pair_rows`), the lower the conjugate or a second pass."""
    order, uniq, mats, hermitian, mirror = _pair_matrices(dims, op_a, op_b, sites, string, local, what)
    between = {k: mats[("between", k)] for k in range(uniq[0] + 1, uniq[-1])}
    values = {(k, k): close_form(form, k, None, mats[("both", k)])[0] for k in uniq}
    if len(uniq) > 1:
        role = lambda name: {k: mats[(name, k)] for k in uniq}
        upper = pair_rows(form, uniq, uniq, role("first_a"), role("last_b"), between)
        values.update(upper)
        if mirror:
            values.update({(j, i): np.conj(v) for (i, j), v in upper.items()})
        else:
            lower = pair_rows(form, uniq, uniq, role("first_b"), role("last_a"), between)
            values.update({(j, i): v for (i, j), v in lower.items()})
    out = np.array([[values[(i, j)] for j in order] for i in order])
    return tf.asarray(out.real.copy() if hermitian else out)


def _norm_and_environments(ts: list[Any], what: str) -> tuple[Any, EnvCache]:
    """``<psi|psi>`` (ZeroNormError if 0) and the environments of ``<psi|psi>`` with the right
    blocks over every site built (the centre at site 0)."""
    envs: EnvCache = EnvCache(len(ts), None, None, block_bytes)
    for k in range(len(ts) - 1, -1, -1):
        envs.set_right(k, transfer_right(envs.right(k + 1), ts[k], ts[k]))
    norm2 = close(envs.left(0), envs.right(0))
    c = concrete(norm2)
    if c is not None and float(tf.real(c)) == 0.0:
        raise ZeroNormError(f"{what}: the state has norm 0, so <psi|...|psi> / <psi|psi> is undefined")
    return norm2, envs


def _site_matrices(dims: list[int], op: Any, sites: Any, local: Any, what: str) -> tuple:
    """The checked sites (``order``, ``uniq`` sorted), ``{k: matrix of op at k}`` (even operators
    only) and whether they are all Hermitian."""
    chain = Chain(dims, local)
    order = _check_sites(sites, len(dims), what)
    uniq = sorted(set(order))
    mats: dict[int, np.ndarray] = {}
    for k in uniq:
        a = chain.operator(op, k, f"{what}: op")
        _check_even(a, chain, k)
        mats[k] = a.matrix
    return order, uniq, mats, all(_is_hermitian(m) for m in mats.values())


def expect_profile(ts: Sequence[Any], op: Any, sites: Any = None, local: Any = None, what: str = "MPS.expect") -> Any:
    """``<op_k> = <psi|op_k|psi> / <psi|psi>`` for every ``k`` of ``sites`` (None: all), as a 1D
    tenferro tensor, from one pass of left and one of right environments (``O(L)`` transfers,
    not ``O(L^2)``); real where the operators are Hermitian: the differentiable path. See
    :meth:`MPS.expect`."""
    ts = list(ts)
    order, uniq, mats, hermitian = _site_matrices([tuple(t.shape)[1] for t in ts], op, sites, local, what)
    ts, ops = _operands(ts, {("op", k): m for k, m in mats.items()})
    norm2, envs = _norm_and_environments(ts, what)
    values, centre = {}, 0
    for k in uniq:
        centre = _move_right(envs, ts, centre, k)
        values[k] = close(envs.left(k), envs.right(k + 1), ts[k], ts[k], ops[("op", k)])
    scaled = {k: (tf.real(v / norm2) if hermitian else v / norm2) for k, v in values.items()}
    return tf.stack([scaled[k] for k in order])


def form_expect_profile(
    form: SchmidtForm, dims: list[int], op: Any, sites: Any = None, local: Any = None, what: str = "MPS.expect"
) -> Any:
    """:func:`expect_profile` of a concrete state from its Schmidt form: one site's contraction each."""
    order, uniq, mats, hermitian = _site_matrices(dims, op, sites, local, what)
    values = {k: close_form(form, k, None, m)[0] for k, m in mats.items()}
    out = np.array([values[k] for k in order])
    return tf.asarray(out.real.copy() if hermitian else out)
