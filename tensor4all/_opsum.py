"""Operator sums (ITensor's ``OpSum``/``AutoMPO``): ``sum_k c_k prod_m op_{k,m}(site_{k,m})``.

>>> os = OpSum()
>>> os += (0.5, "S+", 0, "S-", 1)
>>> os += ("Sz", 0, "Sz", 1)          # coefficient 1
>>> len(os)
2

Coefficients may be Python/NumPy numbers, tenferro scalars or tidu tracers (so an MPO
built from an OpSum is differentiable in its couplings). Operator names are checked
against a local space when the OpSum is compiled (``MPO.from_opsum``), sites against
the chain length there too.
"""
from __future__ import annotations

import numbers
from typing import Any, Iterator, NamedTuple

import numpy as np

from ._errors import OpSumTermError, SiteOutOfRangeError
from ._util import is_scalar_number

__all__ = ["OpSum", "Term"]


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
        self._terms: list[Term] = []
        for t in terms:
            self += t

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
        for t in self._terms:
            for name, s in t.ops:
                if s >= L:
                    raise SiteOutOfRangeError(
                        f"OpSum term {_term_str(t)}: site {s} of operator {name!r} is outside 0..{L - 1}"
                    )


def _term_str(t: Term) -> str:
    return " ".join(f"{n}({s})" for n, s in t.ops)


def _parse_term(term: Any) -> Term:
    if not isinstance(term, (tuple, list)) or len(term) == 0:
        raise OpSumTermError(
            f"an OpSum term must be a tuple (coef, name, site, name, site, ...), got {term!r}"
        )
    items = list(term)
    coef: Any = 1.0
    if _is_coef(items[0]):
        coef = items.pop(0)
    if len(items) == 0 or len(items) % 2:
        raise OpSumTermError(
            f"an OpSum term needs (name, site) pairs after the coefficient, got {term!r}"
        )
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
    return Term(coef, tuple(ops))
