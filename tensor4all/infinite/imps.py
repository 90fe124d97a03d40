"""The infinite MPS :class:`iMPS`: a unit cell of ``n`` sites repeated forever, held in its
canonical forms (MPSKit.jl's ``InfiniteMPS``, TeNPy's ``MPS`` with ``bc="infinite"``).

* ``AL[i]`` left-orthonormal (``sum_s AL_s^dagger AL_s = 1``), ``AR[i]`` right-orthonormal,
  ``C[i]`` the centre matrix on bond ``i`` (left of site ``i``; bond ``n`` is bond ``0``), with
  ``AL[i] C[i+1] = C[i] AR[i] = AC[i]``. Made by :func:`.gauge.mixed_canonical`, ``C`` is diagonal:
  the Schmidt values of the bond, descending, unit norm.
* Site tensors are NumPy arrays ``(left, phys, right)``; ``local`` names the local space (for
  operator names in measurements).
* ``iMPS(AL, AR, C, local)`` checks what it is given (shapes, finite entries, ``AL`` left- and
  ``AR`` right-isometric, ``C`` of unit norm, ``AL C = C AR``, each to :data:`CANONICAL_TOL`); ``C``
  need not be diagonal (a gauge-rotated state is the same state).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..sites.local_spaces import local_space
from ..tools.checks import check_alloc, check_finite_arrays, check_positive_int, check_seed, float_dtype
from ..tools.errors import (
    DimensionMismatchError,
    InvalidOptionError,
    NonFiniteError,
    Tensor4allTypeError,
    ZeroNormError,
)
from ..tools.threads import thread_policy
from .gauge import mixed_canonical

__all__ = ["iMPS", "CANONICAL_TOL", "site_index"]

#: the largest deviation :class:`iMPS` accepts from ``A_L^dagger A_L = 1``, ``A_R A_R^dagger = 1``,
#: ``||C|| = 1`` and ``A_L C = C A_R`` (relative to ``||C||``): far above rounding (1e-14 after
#: :func:`.gauge.mixed_canonical`), far below any error that would show in a measurement
CANONICAL_TOL = 1e-8


def site_index(i: Any, cell: int, what: str) -> int:
    """``i`` (any integer: a site or bond of the infinite chain) modulo ``cell``; anything else (a
    float, a bool, a string) raises :class:`Tensor4allTypeError` naming ``what``."""
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
        raise Tensor4allTypeError(
            f"{what}: the site or bond must be an integer (any, taken modulo the cell), got {type(i).__name__} {i!r}"
        )
    return int(i) % cell


class iMPS:  # noqa: N801 (the name the field uses)
    """An infinite MPS in mixed canonical form (``AL``, ``AR``, ``C``; ``AC(i)``)."""

    __slots__ = ("AL", "AR", "C", "local")

    def __init__(self, AL: list[np.ndarray], AR: list[np.ndarray], C: list[np.ndarray], local: str | None = None):
        AL, AR, C = _check_canonical(AL, AR, C)
        for a in AL:
            name = _check_local(local, a.shape[1])
        self.AL, self.AR, self.C, self.local = AL, AR, C, name

    @classmethod
    def _unchecked(cls, AL: list, AR: list, C: list, local: str | None) -> "iMPS":
        """A state made inside the package whose gauge holds only to an algorithm's tolerance (a
        TDVP step's ``A_C = A_L C``), or the site list of a measurement: not checked."""
        psi = object.__new__(cls)
        psi.AL, psi.AR, psi.C, psi.local = AL, AR, C, local
        return psi

    # ---- construction ---------------------------------------------------------------------
    @classmethod
    @thread_policy(lambda cls, tensors, *_, **__: _largest_bond(tensors))
    def from_tensors(cls, tensors: Sequence[Any], local: str | None = None, tol: float = 1e-14) -> "iMPS":
        """The state of the unit cell ``tensors`` (arrays ``(left, phys, right)``, the last right
        bond matching the first left one), brought to mixed canonical form."""
        if isinstance(tensors, (str, bytes)) or not isinstance(tensors, (list, tuple)) or not tensors:
            raise Tensor4allTypeError("iMPS.from_tensors takes a non-empty list of (left, phys, right) arrays")
        ts = []
        for i, t in enumerate(tensors):
            a = np.asarray(t)
            if a.ndim != 3 or a.dtype.kind not in "iufc":
                raise DimensionMismatchError(
                    f"iMPS.from_tensors: site {i} must be a numeric (left, phys, right) array, got shape {a.shape}"
                )
            if not np.isfinite(a).all():
                raise NonFiniteError(f"iMPS.from_tensors: site {i} holds NaN or infinity")
            if not np.any(a):
                raise ZeroNormError(f"iMPS.from_tensors: site {i} is all zeros; the state would have zero norm")
            ts.append(a.astype(np.result_type(a, np.float64)))
        n = len(ts)
        for i in range(n):
            if ts[i].shape[2] != ts[(i + 1) % n].shape[0]:
                raise DimensionMismatchError(
                    f"iMPS.from_tensors: the right bond of site {i} ({ts[i].shape[2]}) must match the left bond "
                    f"of site {(i + 1) % n} ({ts[(i + 1) % n].shape[0]}); the cell repeats"
                )
            dl, d, dr = ts[i].shape
            if dr > dl * d or dl > d * dr:
                raise DimensionMismatchError(
                    f"iMPS.from_tensors: site {i} has bonds ({dl}, {dr}) with physical dimension {d}; "
                    "a bond can be at most d times its neighbour"
                )
        AL, AR, C = mixed_canonical(ts, tol=tol)
        return cls(AL, AR, C, _check_local(local, ts[0].shape[1]))

    @classmethod
    @thread_policy(lambda cls, *args, **kwargs: _random_bond(*args, **kwargs))
    def random(
        cls, local: str = "spin-1/2", cell: int = 1, max_bond: int = 8, seed: int | None = None, dtype: Any = float
    ) -> "iMPS":
        """A random state of bond dimension ``max_bond`` on a cell of ``cell`` sites of ``local``."""
        n = check_positive_int(cell, "cell (sites per unit cell)")
        D = check_positive_int(max_bond, "max_bond")
        d = local_space(local).dim
        rng = np.random.default_rng(check_seed(seed))
        dt = float_dtype(dtype, "iMPS.random: dtype")
        check_alloc(4 * n * D * d * D * dt.itemsize, "iMPS.random")  # the tensors and their gauge
        ts = [rng.standard_normal((D, d, D)) for _ in range(n)]
        if dt.kind == "c":
            ts = [t + 1j * rng.standard_normal(t.shape) for t in ts]
        return cls.from_tensors(ts, local)

    @classmethod
    def product_state(cls, states: Sequence[Any], local: str = "spin-1/2") -> "iMPS":
        """The product state of one cell: per site a basis index or a vector of length ``d``
        (normalized here), e.g. ``[0, 1]`` the Neel state of spins 1/2."""
        space = local_space(local)
        if isinstance(states, (str, bytes)) or not isinstance(states, (list, tuple)) or not states:
            raise Tensor4allTypeError("iMPS.product_state takes a non-empty list of basis indices or vectors")
        ts = []
        for i, s in enumerate(states):
            if isinstance(s, (int, np.integer)) and not isinstance(s, bool):
                if not 0 <= s < space.dim:
                    raise InvalidOptionError(
                        f"iMPS.product_state: site {i} index {s} is outside 0..{space.dim - 1} of {space.name!r}"
                    )
                v = np.zeros(space.dim)
                v[s] = 1.0
            else:
                v = np.asarray(s, dtype=np.result_type(np.asarray(s), float)).reshape(-1)
                if v.shape != (space.dim,) or not np.isfinite(v).all() or np.linalg.norm(v) == 0:
                    raise InvalidOptionError(
                        f"iMPS.product_state: site {i} must be an index or a finite nonzero vector of length {space.dim}"
                    )
                v = v / np.linalg.norm(v)
            ts.append(v.reshape(1, space.dim, 1))
        one = np.ones((1, 1), dtype=np.result_type(*ts))
        return cls([t.copy() for t in ts], [t.copy() for t in ts], [one.copy() for _ in ts], space.name)

    # ---- properties -------------------------------------------------------------------------
    @property
    def cell(self) -> int:
        """Sites per unit cell."""
        return len(self.AL)

    @property
    def bond_dims(self) -> list[int]:
        """The bond dimensions ``D_i`` of the bonds ``0..n-1`` (left of each site)."""
        return [c.shape[0] for c in self.C]

    @property
    def max_bond(self) -> int:
        return max(self.bond_dims)

    @property
    def phys_dims(self) -> list[int]:
        return [a.shape[1] for a in self.AL]

    @property
    def dtype(self) -> np.dtype:
        return np.result_type(*self.AL)

    def _index(self, i: Any, what: str) -> int:
        return site_index(i, self.cell, f"iMPS.{what}")

    @thread_policy()
    def AC(self, i: int) -> np.ndarray:  # noqa: N802 (the field's name)
        """The centre site tensor ``AL[i] C[i+1]`` of site ``i`` of the cell."""
        i = self._index(i, "AC")
        return np.tensordot(self.AL[i], self.C[(i + 1) % self.cell], (2, 0))

    @thread_policy()
    def schmidt_values(self, bond: int = 0) -> np.ndarray:
        """The Schmidt values on bond ``bond`` (left of that site), descending, unit norm."""
        s = np.linalg.svd(self.C[self._index(bond, "schmidt_values")], compute_uv=False)
        return s / np.linalg.norm(s)

    @thread_policy()
    def entanglement_entropy(self, bond: int = 0) -> float:
        """The von Neumann entropy ``-sum p ln p`` (``p = s^2``) of a half-infinite chain cut at ``bond``."""
        p = self.schmidt_values(bond) ** 2
        p = p[p > 1e-300]
        return float(-np.sum(p * np.log(p)))

    @thread_policy()
    def entanglement_spectrum(self, bond: int = 0) -> np.ndarray:
        """``-ln s^2`` of the Schmidt values on ``bond`` (ascending)."""
        s = self.schmidt_values(bond)
        return -2.0 * np.log(s[s > 1e-300])

    def __repr__(self) -> str:
        return f"iMPS(cell={self.cell}, local={self.local!r}, bond_dims={self.bond_dims}, dtype={self.dtype})"


def _largest_bond(tensors: Any) -> int:
    """The largest bond of a cell's site tensors (the size of :meth:`iMPS.from_tensors`'s policy)."""
    if not isinstance(tensors, (list, tuple)):
        return 0
    dims = [d for t in tensors for d in tuple(getattr(t, "shape", ()))[0:3:2]]
    return max((d for d in dims if isinstance(d, int)), default=0)


def _random_bond(local: Any = "spin-1/2", cell: Any = 1, max_bond: Any = 8, *_: Any, **kwargs: Any) -> int:
    """The bond dimension :meth:`iMPS.random` canonicalizes (0 for a bad one: the call raises)."""
    D = kwargs.get("max_bond", max_bond)
    return D if isinstance(D, int) else 0


def _arrays(xs: Any, ndim: int, what: str) -> list[np.ndarray]:
    """``xs`` (a non-empty list or tuple) as numeric NumPy arrays of ``ndim`` axes (integers as floats)."""
    if isinstance(xs, (str, bytes)) or not isinstance(xs, (list, tuple)) or not xs:
        raise Tensor4allTypeError(f"iMPS: {what} must be a non-empty list of arrays, got {type(xs).__name__}")
    out = []
    for i, x in enumerate(xs):
        a = np.asarray(x)
        if a.dtype.kind not in "iufc":
            raise Tensor4allTypeError(f"iMPS: {what}[{i}] must hold numbers, got dtype {a.dtype}")
        if a.ndim != ndim:
            raise DimensionMismatchError(f"iMPS: {what}[{i}] must have {ndim} axes, got shape {a.shape}")
        out.append(a.astype(np.result_type(a, np.float64)) if a.dtype.kind in "iu" else a)
    return out


def _check_canonical(AL: Any, AR: Any, C: Any) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """``(AL, AR, C)`` as lists of arrays, checked: one cell length, matching shapes
    (:class:`DimensionMismatchError`), finite entries (:class:`NonFiniteError`), a nonzero ``C``
    (:class:`ZeroNormError`), and the mixed canonical form to :data:`CANONICAL_TOL`
    (:class:`InvalidOptionError` with the measured deviation): one contraction per tensor."""
    AL, AR, C = _arrays(AL, 3, "AL"), _arrays(AR, 3, "AR"), _arrays(C, 2, "C")
    n = len(AL)
    if len(AR) != n or len(C) != n:
        raise DimensionMismatchError(f"iMPS: AL, AR and C must have one entry per site, got {n}, {len(AR)}, {len(C)}")
    for i in range(n):
        D, Dn = C[i].shape[0], C[(i + 1) % n].shape[0]
        if C[i].shape != (D, D):
            raise DimensionMismatchError(f"iMPS: C[{i}] must be square (bond {i}), got shape {C[i].shape}")
        d = AL[i].shape[1]
        if AL[i].shape != (D, d, Dn) or AR[i].shape != (D, d, Dn):
            raise DimensionMismatchError(
                f"iMPS: site {i} needs AL and AR of shape (D_{i}, d, D_{i + 1}) = ({D}, d, {Dn}) from C[{i}] and "
                f"C[{(i + 1) % n}], with one d; got AL {AL[i].shape}, AR {AR[i].shape}"
            )
    for what, xs in (("AL", AL), ("AR", AR), ("C", C)):
        check_finite_arrays(xs, f"iMPS: {what}")
    for i in range(n):
        norm = float(np.linalg.norm(C[i]))
        if norm == 0.0:
            raise ZeroNormError(f"iMPS: C[{i}] is zero; the centre matrix holds the state's norm (1)")
        D, d, Dn = AL[i].shape
        al, ar = AL[i].reshape(D * d, Dn), AR[i].reshape(D, d * Dn)
        devs = {
            "AL^dagger AL - 1 (left-isometric AL)": np.abs(al.conj().T @ al - np.eye(Dn)).max(),
            "AR AR^dagger - 1 (right-isometric AR)": np.abs(ar @ ar.conj().T - np.eye(D)).max(),
            "||C|| - 1 (unit norm)": abs(norm - 1.0),
            "AL C[i+1] - C[i] AR (relative to ||C||)": np.linalg.norm(
                np.tensordot(AL[i], C[(i + 1) % n], (2, 0)) - np.tensordot(C[i], AR[i], (1, 0))
            )
            / norm,
        }
        for name, dev in devs.items():
            if not dev <= CANONICAL_TOL:
                raise InvalidOptionError(
                    f"iMPS: site {i} is not in mixed canonical form: {name} deviates by {float(dev):.3g} (at most "
                    f"{CANONICAL_TOL:g}); make the state with iMPS.from_tensors, which brings any cell to this form"
                )
    return AL, AR, C


def _check_local(local: Any, d: int) -> str | None:
    if local is None:
        return None
    space = local_space(local)
    if space.dim != d:
        raise DimensionMismatchError(f"iMPS: local space {space.name!r} has dimension {space.dim}, the sites {d}")
    return space.name
