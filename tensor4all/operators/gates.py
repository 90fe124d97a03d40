"""TEBD's gates: the Hamiltonian as two-site bond terms, the Trotter-Suzuki sequence of
commuting parts, and the gates ``expm(-i tau h)`` (or ``expm(-tau h)``).

* :func:`bonds_from_opsum` splits an :class:`OpSum` into two-site terms: a term on sites
  ``(i, j)`` becomes ``c A_i B_j`` (factors on one site multiplied in written order, ``Id``
  factors dropped, as ``MPO.from_opsum``); a one-site term goes half to each neighbouring
  bond (all of it to the one bond of an end site); a term on three or more sites is refused.
  Traced coefficients (tidu tracers) give traced bond matrices: ``h = h0 + sum_c c P_c``.
* :func:`bonds_from_arrays` checks the explicit form: ``L - 1`` arrays ``h_b`` on sites
  ``(b, b + 1)``, shape ``(d, d, d, d)`` (``h[s, s', t, t'] = <s s'| h |t t'>``) or
  ``(d d, d d)`` (``np.kron`` order).
* :func:`trotter_parts` groups the terms into parts whose gates commute (even bonds, odd
  bonds, then groups of non-overlapping long-range terms; or, for the ``"sweep"`` splitting, each
  bond its own part from left to right); :func:`trotter_sequence` gives the order-2 (Strang) or
  order-4 (Suzuki fractal) product of the parts' exponentials.
* :func:`exp_gate` is SciPy's ``expm`` on concrete matrices and ``tenferro.linalg.expm`` on
  traced ones (differentiable in the couplings through the exact Frechet derivative).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import scipy.linalg

import tenferro as tf

from ..tools.errors import DimensionMismatchError, InvalidOptionError, NonFiniteError, Tensor4allTypeError
from .jordan_wigner import jordan_wigner_term
from ..sites.local_spaces import LocalSpace
from .opsum import OpSum
from ..tools.checks import first_nonfinite, is_traced

__all__ = [
    "BondHamiltonian",
    "bonds_from_opsum",
    "bonds_from_arrays",
    "trotter_parts",
    "trotter_sequence",
    "exp_gate",
    "swap_gate",
    "SUZUKI_P",
    "ORDERS",
    "SPLITTINGS",
]

#: Suzuki's fractal weight ``p = 1 / (4 - 4^(1/3))``: ``U4(x) = U2(p x)^2 U2((1 - 4p) x) U2(p x)^2``
SUZUKI_P = 1.0 / (4.0 - 4.0 ** (1.0 / 3.0))
#: the Trotter orders :func:`trotter_sequence` knows
ORDERS = (2, 4)
#: how :func:`trotter_parts` splits the bonds: even/odd bonds, or one bond after another
SPLITTINGS = ("brick", "sweep")


@dataclass
class BondHamiltonian:
    """``H = sum_b h_b + sum_(i, j) h_ij``: ``nn[b]`` the ``(d_b d_{b+1})``-square matrix on sites
    ``(b, b + 1)`` (None: no term), ``long[(i, j)]`` the terms on sites ``j > i + 1`` (rows in
    ``np.kron`` order of ``(i, j)``). Matrices are NumPy arrays, tenferro tensors or tracers."""

    dims: list[int]
    nn: list[Any]
    long: dict[tuple[int, int], Any] = field(default_factory=dict)

    @property
    def traced(self) -> bool:
        return any(is_traced(h) for h in self.nn) or any(is_traced(h) for h in self.long.values())

    def matrix(self, key: tuple[int, int]) -> Any:
        i, j = key
        return self.nn[i] if j == i + 1 else self.long[key]


class _Accumulator:
    """One bond's matrix as a NumPy constant plus ``coefficient * constant`` for traced
    coefficients (terms sharing a coefficient object share one product)."""

    def __init__(self, n: int):
        self.const = np.zeros((n, n), dtype=complex)
        self.traced: dict[int, tuple[Any, np.ndarray]] = {}
        self.used = False

    def add(self, coef: Any, m: np.ndarray) -> None:
        self.used = True
        if is_traced(coef):
            c, acc = self.traced.get(id(coef), (coef, 0.0))
            self.traced[id(coef)] = (c, acc + m)
        else:
            self.const = self.const + complex(np.asarray(coef)) * m

    def value(self) -> Any:
        if not self.used:
            return None
        const = self.const.real.copy() if not np.any(self.const.imag) else self.const
        if not self.traced:
            return const
        out = tf.asarray(np.asfortranarray(const))
        for c, m in self.traced.values():
            m = m.real.copy() if not np.any(m.imag) else m
            out = out + c * tf.asarray(np.asfortranarray(m))
        return out


def _term_text(term: Any) -> str:
    return " ".join(f"{n}({s})" for n, s in term.ops)


def bonds_from_opsum(os: OpSum, space: LocalSpace, L: int, what: str) -> BondHamiltonian:
    """The bond terms of ``os`` on ``L`` sites of ``space`` (see the module docstring)."""
    os.check_sites(L)
    d = space.dim
    eye = np.eye(d)
    nn = [_Accumulator(d * d) for _ in range(L - 1)]
    long: dict[tuple[int, int], _Accumulator] = {}
    for term in os:
        local: dict[int, np.ndarray] = {}
        sign, factors = jordan_wigner_term(term.ops, space)  # fermionic terms: site order, F strings
        if sign < 0:
            term = term._replace(coef=-term.coef)
        for name, site in factors:
            m = space.matrix(name)  # UnknownOperatorError names the space's operators
            if name != "Id":
                local[site] = local[site] @ m if site in local else m
        if not local:  # a multiple of the identity: a constant energy on the first site named
            local = {term.ops[0][1]: eye}
        sites = sorted(local)
        if len(sites) > 2:
            raise InvalidOptionError(
                f"{what}: the term {_term_text(term)} acts on {len(sites)} sites {sites} (with "
                "its Jordan-Wigner string, for fermions); TEBD takes one- and two-site terms "
                "only (use tdvp for longer-range products and fermion hopping beyond nearest "
                "neighbours, from a state whose bonds have grown: from a product state TDVP's "
                "two-site projection misses such terms, FrozenBondsWarning)"
            )
        if len(sites) == 2:
            i, j = sites
            k = np.kron(local[i], local[j])
            acc = nn[i] if j == i + 1 else long.setdefault((i, j), _Accumulator(d * d))
            acc.add(term.coef, k)
            continue
        (i,) = sites
        m = local[i]
        if L == 1:
            raise InvalidOptionError(f"{what}: a chain of one site has no bonds; TEBD needs L >= 2")
        left, right = np.kron(eye, m), np.kron(m, eye)  # m on the second / first site of a bond
        if i == 0:
            nn[0].add(term.coef, right)
        elif i == L - 1:
            nn[L - 2].add(term.coef, left)
        else:
            half = 0.5 * term.coef
            nn[i - 1].add(half, left)
            nn[i].add(half, right)
    return BondHamiltonian([d] * L, [a.value() for a in nn], {k: a.value() for k, a in sorted(long.items())})


def bonds_from_arrays(hs: Sequence[Any], dims: Sequence[int], what: str) -> BondHamiltonian:
    """Explicit bond Hamiltonians: ``L - 1`` arrays (or None for no term) on sites ``(b, b+1)``,
    shape ``(d_b, d_{b+1}, d_b, d_{b+1})`` or ``(d_b d_{b+1}, d_b d_{b+1})``."""
    L = len(dims)
    if len(hs) != L - 1:
        raise DimensionMismatchError(
            f"{what}: {len(hs)} bond Hamiltonians for a chain of {L} sites; give L - 1 = "
            f"{L - 1}, the b-th acting on sites (b, b + 1)"
        )
    out = []
    for b, h in enumerate(hs):
        if h is None:
            out.append(None)
            continue
        da, db = dims[b], dims[b + 1]
        n = da * db
        if not (is_traced(h) or isinstance(h, tf.Tensor)):
            try:
                h = np.asarray(h)
            except (TypeError, ValueError) as e:
                raise Tensor4allTypeError(f"{what}: bond Hamiltonian {b} is not an array ({e})") from None
            if h.dtype.kind in "iu":
                h = h.astype(np.float64)
            if h.dtype.kind not in "fc":
                raise Tensor4allTypeError(f"{what}: bond Hamiltonian {b} must hold numbers, got dtype {h.dtype}")
        shape = tuple(h.shape)
        if shape not in ((da, db, da, db), (n, n)):
            raise DimensionMismatchError(
                f"{what}: bond Hamiltonian {b} has shape {shape}; on sites of dimensions "
                f"({da}, {db}) it must be ({da}, {db}, {da}, {db}) or ({n}, {n})"
            )
        if first_nonfinite([h]) is not None:
            raise NonFiniteError(f"{what}: bond Hamiltonian {b} holds NaN or infinity")
        if len(shape) == 4:
            h = h.reshape(n, n) if isinstance(h, np.ndarray) else tf.reshape(h, (n, n), order="C")
        out.append(h)
    return BondHamiltonian(list(dims), out, {})


def trotter_parts(bh: BondHamiltonian, splitting: str = "brick") -> list[list[tuple[int, int]]]:
    """The parts of the Trotter splitting, each a list of site pairs whose gates commute:
    the even bonds, the odd bonds (``splitting="brick"``), or each nearest-neighbour bond alone,
    left to right (``"sweep"``: Strang's product over them is a sweep of half steps to the right
    and back, ``e^{h_0/2} ... e^{h_{L-2}} ... e^{h_0/2}``, TeNPy's imaginary-time TEBD), then the
    long-range terms in groups of disjoint site ranges ``[i, j]`` (their swap gates stay inside
    the range). Empty parts are dropped."""
    if splitting == "sweep":
        bonds = [[(b, b + 1)] for b in range(len(bh.nn)) if bh.nn[b] is not None]
        even, odd = [], []
    else:
        bonds = []
        even = [(b, b + 1) for b in range(0, len(bh.nn), 2) if bh.nn[b] is not None]
        odd = [(b, b + 1) for b in range(1, len(bh.nn), 2) if bh.nn[b] is not None]
    groups: list[list[tuple[int, int]]] = []
    for key in bh.long:  # first group whose ranges it does not touch
        for grp in groups:
            if all(key[1] < i or key[0] > j for i, j in grp):
                grp.append(key)
                break
        else:
            groups.append([key])
    return [p for p in bonds + [even, odd] + [sorted(g) for g in groups] if p]


def _strang(n: int, x: float) -> list[tuple[int, float]]:
    """``e^{P_0 x/2} ... e^{P_{n-2} x/2} e^{P_{n-1} x} e^{P_{n-2} x/2} ... e^{P_0 x/2}`` as
    (part, weight) pairs in the order they act."""
    if n == 1:
        return [(0, x)]
    half = [(k, 0.5 * x) for k in range(n - 1)]
    return half + [(n - 1, x)] + half[::-1]


def trotter_sequence(order: int, n_parts: int) -> list[tuple[int, float]]:
    """One time step as (part, weight) pairs in the order they act, ``weight * dt`` each,
    adjacent factors of one part merged (exact: a part commutes with itself).

    * ``order=2``: Strang's symmetric splitting ``e^{A/2} e^{B} e^{A/2}`` (G. Strang, SIAM J.
      Numer. Anal. 5, 506 (1968)), error ``O(dt^3)`` per step.
    * ``order=4``: Suzuki's fractal decomposition ``U4(dt) = U2(p dt)^2 U2((1 - 4p) dt)
      U2(p dt)^2``, ``p = 1/(4 - 4^(1/3))`` (M. Suzuki, Phys. Lett. A 146, 319 (1990); the
      three-stage version with weights ``1/(2 - 2^(1/3))`` is E. Forest and R. D. Ruth,
      Physica D 43, 105 (1990)): five order-2 steps, error ``O(dt^5)`` per step with a much
      smaller constant than the three-stage one.
    """
    if order == 2:
        seq = _strang(n_parts, 1.0)
    else:
        p = SUZUKI_P
        seq = [f for w in (p, p, 1.0 - 4.0 * p, p, p) for f in _strang(n_parts, w)]
    out: list[tuple[int, float]] = []
    for part, w in seq:
        if out and out[-1][0] == part:
            out[-1] = (part, out[-1][1] + w)
        else:
            out.append((part, w))
    return out


def exp_gate(h: Any, tau: float, imaginary: bool) -> Any:
    """``expm(-i tau h)`` (``expm(-tau h)`` with ``imaginary``): SciPy on a NumPy matrix,
    ``tenferro.linalg.expm`` on a tenferro tensor or tracer (differentiable)."""
    factor = -tau if imaginary else -1j * tau
    if isinstance(h, np.ndarray):
        return scipy.linalg.expm(factor * h)
    return tf.linalg.expm(h * factor)


def swap_gate(d: int) -> np.ndarray:
    """The ``d^2 x d^2`` permutation ``|s t> -> |t s>``."""
    g = np.zeros((d, d, d, d))
    for s in range(d):
        for t in range(d):
            g[t, s, s, t] = 1.0
    return g.reshape(d * d, d * d)
