"""Operator sums (ITensor's ``OpSum``/``AutoMPO``): ``sum_k c_k prod_m op_{k,m}(site_{k,m})``.

>>> os = OpSum()
>>> os += (0.5, "S+", 0, "S-", 1)
>>> os += ("Sz", 0, "Sz", 1)          # coefficient 1
>>> len(os)
2

Coefficients may be Python/NumPy numbers (complex too), tenferro scalars or tidu
tracers (so an MPO built from an OpSum is differentiable in its couplings); NaN and
infinity raise :class:`NonFiniteError` naming the term, booleans :class:`OpSumTermError`.
A term is checked whole before it is added, so a bad term leaves the OpSum as it was.
Operator names are checked against a local space when the OpSum is compiled
(``MPO.from_opsum``), sites against the chain length there too. Fermionic operators of that
space (``"Cdag"``, ``"Cup"``, ...) are fermions: the compiler adds the sign and the ``F``
strings (:mod:`tensor4all.operators.jordan_wigner`), so ``os += (-t, "Cdag", j, "C", i)`` is
``-t c^dag_j c_i`` for any ``i, j``.
"""

from __future__ import annotations

import numbers
from typing import Any, Iterator, NamedTuple

import numpy as np

from ..tools.errors import SiteOutOfRangeError, Tensor4allError, Tensor4allTypeError
from ..tools.checks import check_coupling, check_positive_int, is_scalar_number

__all__ = ["EmptyOpSumError", "OpSumTermError", "OpSum", "Term"]


class EmptyOpSumError(Tensor4allError, ValueError):
    """An OpSum without terms where an operator is needed."""


class OpSumTermError(Tensor4allError, ValueError):
    """A malformed OpSum term (not ``(coef, name, site, name, site, ...)``)."""


class Term(NamedTuple):
    """One product term: a coefficient and ``(operator name, site)`` factors in written order."""

    coef: Any
    ops: tuple[tuple[str, int], ...]


def _is_coef(x: Any) -> bool:
    if isinstance(x, str):
        return False
    if is_scalar_number(x):
        return True
    shape = getattr(x, "shape", None)  # tenferro tensors and tracers
    return shape is not None and tuple(shape) == ()


class OpSum:
    """A sum of operator products; add terms with ``os += (coef, name, site, name, site, ...)``."""

    __slots__ = ("_terms",)

    def __init__(self, terms: Any = ()):
        if isinstance(terms, (str, bytes)) or not hasattr(terms, "__iter__"):
            raise Tensor4allTypeError(
                f"OpSum takes an iterable of terms (tuples or Terms), got {type(terms).__name__} {terms!r}"
            )
        parsed: list[Term] = []
        for t in terms:
            parsed.extend(t._terms if isinstance(t, OpSum) else [_parse_term(t)])
        self._terms = parsed

    def __iadd__(self, term: Any) -> "OpSum":
        if isinstance(term, OpSum):
            self._terms.extend(term._terms)
            return self
        self._terms.append(_parse_term(term))
        return self

    def __add__(self, other: Any) -> "OpSum":
        out = OpSum()
        out._terms = list(self._terms)
        out += other
        return out

    def add(self, coef: Any, *ops: Any) -> "OpSum":
        """``os.add(coef, "Sz", 0, "Sz", 1)`` is ``os += (coef, "Sz", 0, "Sz", 1)``."""
        self += (coef, *ops)
        return self

    @property
    def terms(self) -> list[Term]:
        return list(self._terms)

    def __len__(self) -> int:
        return len(self._terms)

    def __iter__(self) -> Iterator[Term]:
        return iter(self._terms)

    def __repr__(self) -> str:
        return f"OpSum({len(self._terms)} terms)"

    def check_sites(self, L: int) -> None:
        """:class:`SiteOutOfRangeError` if a term acts on a site outside ``0..L-1``."""
        L = check_positive_int(L, "L (number of sites)")
        for t in self._terms:
            for name, s in t.ops:
                if s >= L:
                    raise SiteOutOfRangeError(
                        f"OpSum term {_term_str(t)}: site {s} of operator {name!r} is outside 0..{L - 1}"
                    )


def _term_str(t: Term) -> str:
    return " ".join(f"{n}({s})" for n, s in t.ops)


def _numeral(x: Any) -> bool:
    """Whether ``x`` is a string spelling a number (a coefficient given as text)."""
    if not isinstance(x, str):
        return False
    try:
        complex(x.replace(" ", ""))
    except ValueError:
        return False
    return True


def _parse_term(term: Any) -> Term:
    if isinstance(term, Term):  # os.terms of another OpSum: checked again (a Term is a plain tuple)
        term = (term.coef, *(x for op in term.ops for x in op))
    if not isinstance(term, (tuple, list)) or len(term) == 0:
        raise OpSumTermError(f"an OpSum term must be a tuple (coef, name, site, name, site, ...), got {term!r}")
    items = list(term)
    coef: Any = None  # none given: 1
    if isinstance(items[0], (bool, np.bool_)):
        raise OpSumTermError(f"an OpSum coefficient must be a number, got the bool {items[0]!r} in term {term!r}")
    if _is_coef(items[0]):
        coef = items.pop(0)
    elif len(items) % 2 and not isinstance(items[0], str):  # an odd count: the first item was a coefficient
        raise OpSumTermError(
            f"an OpSum coefficient must be a number, got {type(items[0]).__name__} {items[0]!r} in term {term!r}"
        )
    if len(items) == 0 or len(items) % 2:
        hint = (
            f" (a coefficient is a number, not the string {items[0]!r})"
            if items and coef is None and _numeral(items[0])
            else ""
        )
        raise OpSumTermError(f"an OpSum term needs (name, site) pairs after the coefficient, got {term!r}{hint}")
    ops = []
    for k in range(0, len(items), 2):
        name, site = items[k], items[k + 1]
        if not isinstance(name, str):
            raise OpSumTermError(f"operator names must be strings, got {name!r} in term {term!r}")
        if isinstance(site, bool) or not isinstance(site, (numbers.Integral, np.integer)):
            raise OpSumTermError(f"sites must be integers, got {site!r} for operator {name!r}")
        if site < 0:
            raise SiteOutOfRangeError(f"site {site} of operator {name!r} is negative; sites start at 0")
        ops.append((name, int(site)))
    ops_t = tuple(ops)
    coef = 1.0 if coef is None else coef
    try:
        check_coupling(coef, f"the coefficient of OpSum term {_term_str(Term(coef, ops_t))}")
    except Tensor4allTypeError as e:
        raise OpSumTermError(str(e)) from None
    return Term(coef, ops_t)
