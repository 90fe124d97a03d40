"""Jordan-Wigner strings for OpSum terms with fermionic operators (a step of ``compile_opsum``).

A local space declares its fermionic operators and its string operator ``F`` (the local
parity; :class:`~tensor4all.LocalSpace`). A fermionic operator ``C`` named at site ``j``
stands for the fermion ``c_j = (prod_{k<j} F_k) C_j`` (modes ordered by site, and inside a
site as the space's matrices order them: ``"electron"`` up before down). A term written as
``O_1 O_2 ... O_n`` (any sites, any order) becomes a product of local matrices in two steps:

1. *Site order.* A stable sort by site; fermions on different sites anticommute, bosons
   commute with everything there, so the sign is that of the permutation of the fermionic
   operators (the parity of their inversions). Operators on one site keep their written
   order and multiply in it.
2. *Strings.* Writing each ``c_j`` as its string times ``C_j`` and moving every string to the
   left of the operators of lower sites turns the site ``k`` factor ``M_k`` (the product of
   the operators there, identity if none) into ``M_k F_k^{n(>k)}``, where ``n(>k)`` is the
   number of fermionic operators on sites right of ``k``: ``F`` multiplies on the right
   (acts first) and only where that count is odd. Left of the first operator ``n(>k)`` is
   the (even) total, so the string runs from the first site to the last one.

So ``c^dag_i c_j`` for ``i < j`` is ``(Cdag F)_i F_{i+1} ... F_{j-1} C_j`` and ``c^dag_j c_i``
(written ``"Cdag", j, "C", i``) is ``(C F)_i F_{i+1} ... F_{j-1} Cdag_j`` with sign ``-1`` (
``C F = -F C``): what ITensor's OpSum builds. A term with an odd number of fermionic
operators raises :class:`OpSumTermError`. A term with no fermionic operator is left as
written, bit for bit, and so is a term that names the string operator itself: its strings
are taken as written out by hand (``("Cdagup", i, "F", i, "Cup", i + 1)``: the convention
before automatic strings, still accepted).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .opsum import OpSumTermError
from ..sites.local_spaces import LocalSpace

__all__ = ["has_fermions", "jordan_wigner", "jordan_wigner_term"]


def has_fermions(ops: Sequence[tuple[str, int]], space: LocalSpace) -> bool:
    """Whether the term's factors ``[(name, site)]`` name a fermionic operator of ``space``."""
    return bool(space.fermionic) and any(name in space.fermionic for name, _ in ops)


def jordan_wigner_term(ops: Sequence[tuple[str, int]], space: LocalSpace) -> tuple[int, tuple[tuple[str, int], ...]]:
    """``(sign, factors)``: the term ``ops`` (``(name, site)`` in written order) as a product
    of local operators in site order with its Jordan-Wigner strings: ``sign`` (``+1`` or
    ``-1``) times the factors, which multiply in the order given on each site.

    Terms without fermionic operators, or that name the string operator themselves, come
    back unchanged with sign ``+1``.
    """
    ops = tuple(ops)
    for name, _ in ops:  # a misspelled name is named as such, before any parity is counted
        space.factor(name)
    if not has_fermions(ops, space) or any(name == space.string for name, _ in ops):
        return 1, ops
    odd = [name in space.fermionic for name, _ in ops]
    n_odd = sum(odd)
    if n_odd % 2:
        raise OpSumTermError(
            f"OpSum term {' '.join(f'{n}({s})' for n, s in ops)} has {n_odd} fermionic operators "
            f"(an odd number: it changes the fermion parity); fermionic operators of {space.name!r}: "
            f"{', '.join(sorted(space.fermionic))}"
        )
    # 1. site order: the sign of the permutation of the fermionic operators
    fsites = [s for (_, s), f in zip(ops, odd) if f]
    inversions = sum(1 for a in range(len(fsites)) for b in range(a + 1, len(fsites)) if fsites[a] > fsites[b])
    sign = -1 if inversions % 2 else 1
    by_site: dict[int, list[str]] = {}
    right: dict[int, int] = {}  # fermionic operators on each site
    for (name, s), f in zip(ops, odd):
        by_site.setdefault(s, []).append(name)
        right[s] = right.get(s, 0) + f
    # 2. strings: site k gets M_k F^(n(>k)), from the first site to the last
    lo, hi = min(by_site), max(by_site)
    out: list[tuple[str, int]] = []
    n_right = n_odd
    for k in range(lo, hi + 1):
        n_right -= right.get(k, 0)
        out.extend((name, k) for name in by_site.get(k, ()))
        if n_right % 2:
            out.append((space.string, k))
    return sign, tuple(out)


def jordan_wigner(terms: Iterable[Any], space: LocalSpace) -> list[tuple[Any, int, tuple[tuple[str, int], ...]]]:
    """The step of ``compile_opsum`` before the automaton: ``[(coef, sign, factors)]`` per
    term (``Term``s of an OpSum), by :func:`jordan_wigner_term`. The sign stays apart from the
    coefficient so a traced coefficient shared by many terms stays one symbol."""
    out = []
    for t in terms:
        sign, ops = jordan_wigner_term(t.ops, space)
        out.append((t.coef, sign, ops))
    return out
