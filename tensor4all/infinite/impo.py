"""Infinite MPOs: the unit cell of a translation-invariant Hamiltonian as MPO tensors.

A cell OpSum lists every term whose first site lies in the cell ``0..n-1``; its other sites may
lie beyond (site ``n + j`` is site ``j`` of the next cell), so ``(J, "Sz", n - 1, "Sz", n)`` is the
bond that crosses into the next cell. :func:`cell_opsum` cuts such a list out of the OpSum of a
finite chain or lattice: the terms whose first site lies in the first ``n`` sites. That is how
:func:`infinite_model` reuses :mod:`tensor4all.models` (their ``*_opsum`` builders on a short
chain, or on a lattice with one open direction, e.g. a cylinder ``square(Lx, Ly, yperiodic=True)``
with ``cell = Ly``: one column per cell).

The tensors are written directly, not compiled from a finite chain: a finite-state automaton
with state 0 ``ready`` (nothing applied yet), the last state ``done`` and, for each term of more
than one site, its own chain of states on the bonds it spans (``W[ready, ready] = W[done, done] =
Id``; no sharing of prefixes, so a nearest-neighbour model has ``2 + #two-site terms`` states:
Heisenberg 5, TFIM 3). Fermionic terms get their Jordan-Wigner strings
(:mod:`tensor4all.operators.jordan_wigner`, local to each term). The coefficient sits on the
term's first factor. Tensors have index order ``(left, out, in, right)``; the one on site ``i``
has the states of bond ``i`` (left of site ``i``) on its left and those of bond ``i + 1`` on its
right. Traced coefficients are kept with the terms (for :mod:`.derivatives`) and enter the
tensors by their concrete values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..lattices import Lattice
from ..models import heisenberg_opsum, j1j2_opsum, tfim_opsum
from ..networks.mpo import require_hermitian
from ..operators.jordan_wigner import jordan_wigner
from ..operators.opsum import EmptyOpSumError, OpSum
from ..sites.local_spaces import LocalSpace, local_space
from ..tools.checks import check_positive_int, concrete, is_traced
from ..tools.errors import InvalidOptionError, SiteOutOfRangeError, Tensor4allTypeError

__all__ = ["InfiniteMPO", "cell_opsum", "infinite_model", "MODELS", "check_hermitian"]


def _value(c: Any) -> complex | float:
    if is_traced(c):
        c = concrete(c)
    v = complex(np.asarray(c).item()) if not isinstance(c, (int, float, complex)) else c
    return v.real if isinstance(v, complex) and v.imag == 0 else v


class InfiniteMPO:
    """The unit cell of an infinite MPO: ``tensors[i]`` of shape ``(w_i, d, d, w_{i+1})``
    (``w_n = w_0``), the local space, and the cell's terms ``(coef, sign, ((site, matrix), ...))``
    (sites in the infinite chain, the first in the cell; the matrices multiplied per site)."""

    __slots__ = ("tensors", "local", "terms", "opsum")

    def __init__(self, tensors: list[np.ndarray], local: str, terms: list, opsum: OpSum | None):
        self.tensors = tensors
        self.local = local
        self.terms = terms
        self.opsum = opsum

    @property
    def cell(self) -> int:
        return len(self.tensors)

    @property
    def bond_dims(self) -> list[int]:
        """The number of automaton states on each bond of the cell."""
        return [w.shape[0] for w in self.tensors]

    @property
    def dtype(self) -> np.dtype:
        return np.result_type(*self.tensors)

    def __repr__(self) -> str:
        return f"InfiniteMPO(cell={self.cell}, local={self.local!r}, bond_dims={self.bond_dims})"

    @classmethod
    def from_opsum(cls, os: OpSum, cell: int, local: str | LocalSpace = "spin-1/2") -> "InfiniteMPO":
        """The infinite MPO of the cell OpSum ``os`` (every term's first site in ``0..cell-1``)."""
        if not isinstance(os, OpSum):
            raise Tensor4allTypeError(f"InfiniteMPO.from_opsum expects an OpSum, got {type(os).__name__}")
        if len(os) == 0:
            raise EmptyOpSumError("InfiniteMPO.from_opsum: the OpSum has no terms; add the cell's terms")
        n = check_positive_int(cell, "cell (sites per unit cell)")
        space = local_space(local)
        for t in os:
            first = min(s for _, s in t.ops)
            if first >= n:
                raise SiteOutOfRangeError(
                    f"InfiniteMPO.from_opsum: a term's first site must lie in the cell 0..{n - 1}, got "
                    f"{' '.join(f'{a}({s})' for a, s in t.ops)}; list each term once, shifted into the cell "
                    "(cell_opsum does this for the OpSum of a finite chain)"
                )
        terms = []
        for coef, sign, ops in jordan_wigner(os, space):
            by_site: dict[int, np.ndarray] = {}
            for name, s in ops:  # factors on one site multiply in written order
                m = space.matrix(name)
                by_site[s] = by_site[s] @ m if s in by_site else m
            terms.append((coef, sign, tuple(sorted(by_site.items()))))
        return cls(_tensors(terms, n, space.dim), space.name, terms, os + OpSum())


def cell_window(H: InfiniteMPO) -> list[np.ndarray]:
    """The finite MPO tensors of ``H_cell``, the sum of the cell's terms (each first site in the
    cell), on the sites ``0 .. n - 1 + reach`` (``reach``: the longest term's span): the automaton
    from ``ready`` on the left to ``done`` on the right, no term started beyond the cell."""
    n = H.cell
    reach = max((factors[-1][0] - factors[0][0] for _, _, factors in H.terms), default=0)
    ws = [np.array(H.tensors[p % n]) for p in range(n + reach)]
    for w in ws[n:]:
        w[0, :, :, 1:] = 0.0  # from ``ready`` only on to ``ready`` (which never reaches ``done``)
    ws[0] = ws[0][:1]
    ws[-1] = ws[-1][..., -1:]
    return ws


def check_hermitian(H: InfiniteMPO, what: str) -> None:
    """:class:`~tensor4all.NonHermitianError` unless the cell's terms add up to a Hermitian operator,
    by the finite :func:`tensor4all.dmrg`'s test (:func:`tensor4all.networks.mpo.require_hermitian`)
    on :func:`cell_window`. Each term's
    adjoint acts on the same sites, so it is a term of the same cell: ``H`` is Hermitian when the cell's
    part is."""
    require_hermitian(cell_window(H), what)


def _tensors(terms: list, n: int, d: int) -> list[np.ndarray]:
    """The automaton's tensors: per bond ``ready``, the open states of the terms, ``done``."""
    states: list[list[tuple[int, int]]] = [[] for _ in range(n)]  # bond -> [(term, offset)]
    for k, (_, _, factors) in enumerate(terms):
        first, last = factors[0][0], factors[-1][0]
        for p in range(first + 1, last + 1):
            states[p % n].append((k, p))
    index = [{key: 1 + j for j, key in enumerate(st)} for st in states]
    dims = [len(st) + 2 for st in states]
    dtype = np.result_type(float, *(np.asarray(_value(c)) for c, _, _ in terms), *(m for t in terms for _, m in t[2]))
    W = [np.zeros((dims[i], d, d, dims[(i + 1) % n]), dtype=dtype) for i in range(n)]
    eye = np.eye(d)
    for i in range(n):
        W[i][0, :, :, 0] = eye
        W[i][-1, :, :, -1] = eye
    for k, (coef, sign, factors) in enumerate(terms):
        c = sign * _value(coef)
        ops = dict(factors)
        first, last = factors[0][0], factors[-1][0]
        if first == last:
            W[first % n][0, :, :, -1] += c * ops[first]
            continue
        for p in range(first, last + 1):
            left = 0 if p == first else index[p % n][(k, p)]
            right = -1 if p == last else index[(p + 1) % n][(k, p + 1)]
            m = ops.get(p, eye)
            W[p % n][left, :, :, right] += (c * m) if p == first else m
    return W


def cell_opsum(os: OpSum, cell: int) -> OpSum:
    """The terms of ``os`` (a finite chain's or lattice's OpSum) whose first site lies in
    ``0..cell-1``: one unit cell of the translation-invariant bulk, when the finite system
    reaches at least one interaction range past the cell."""
    if not isinstance(os, OpSum):
        raise Tensor4allTypeError(f"cell_opsum expects an OpSum, got {type(os).__name__}")
    n = check_positive_int(cell, "cell (sites per unit cell)")
    return OpSum([t for t in os if min(s for _, s in t.ops) < n])


#: the models :func:`infinite_model` knows: name -> (OpSum builder, reach, local space)
MODELS = {
    "heisenberg": (heisenberg_opsum, 1, None),
    "xxz": (heisenberg_opsum, 1, None),
    "xx": (heisenberg_opsum, 1, None),
    "tfim": (tfim_opsum, 1, "pauli"),
    "j1j2": (j1j2_opsum, 2, "spin-1/2"),
}

_SPINS = {"1/2": "spin-1/2", "1": "spin-1"}


def infinite_model(
    name: str, cell: int = 1, lattice: Lattice | None = None, spin: str | None = None, **couplings: Any
) -> InfiniteMPO:
    """The infinite MPO of a model of :mod:`tensor4all.models` (``"heisenberg"``, ``"xxz"``,
    ``"xx"``, ``"tfim"``, ``"j1j2"``) with ``cell`` sites per unit cell; couplings as keywords
    (``J``, ``Jz``, ``h``, ``g``, ``J1``, ``J2``; numbers or tidu tracers). ``lattice``: a lattice
    with one open direction whose first ``cell`` sites are the unit cell (a cylinder
    ``square(3, Ly, yperiodic=True)`` with ``cell=Ly``); default: the chain. ``spin`` (``"1/2"``,
    ``"1"``; default ``"1/2"``) for the Heisenberg, XXZ and XX chains; ``"tfim"`` (Pauli matrices)
    and ``"j1j2"`` are spin-1/2 models and take only ``"1/2"``. A keyword that does not apply to the
    model (``Jz`` for ``"xx"``, whose ``Jz`` is 0) raises :class:`InvalidOptionError`."""
    if not isinstance(name, str) or name not in MODELS:
        raise InvalidOptionError(f"infinite_model: unknown model {name!r}; valid models: {', '.join(MODELS)}")
    if spin is not None and (not isinstance(spin, str) or spin not in _SPINS):
        raise InvalidOptionError(f"infinite_model: unknown spin {spin!r}; valid spins: {', '.join(_SPINS)}")
    n = check_positive_int(cell, "cell (sites per unit cell)")
    build, reach, local = MODELS[name]
    if local is not None and spin not in (None, "1/2"):
        raise InvalidOptionError(
            f"infinite_model({name!r}): spin={spin!r} does not apply; the model is defined on spins 1/2 "
            f"(local space {local!r}); spin= chooses the spin of heisenberg, xxz and xx"
        )
    if name == "xx":
        if "Jz" in couplings:
            raise InvalidOptionError(
                f"infinite_model('xx'): Jz={couplings['Jz']!r} does not apply (the XX chain has Jz = 0); "
                "use infinite_model('xxz', Jz=...) for an anisotropic chain"
            )
        couplings = {**couplings, "Jz": 0.0}
    if lattice is not None and not isinstance(lattice, Lattice):
        raise Tensor4allTypeError(f"infinite_model: lattice must be a Lattice or None, got {type(lattice).__name__}")
    system = lattice if lattice is not None else n + reach
    try:
        os = build(system, **couplings)
    except TypeError as e:  # an unknown coupling name
        raise InvalidOptionError(f"infinite_model({name!r}): {e}") from None
    space = local if local is not None else _SPINS[spin or "1/2"]
    return InfiniteMPO.from_opsum(cell_opsum(os, n), n, space)
