"""Matrix product operators: :class:`MPO` (a tidu pytree over its site tensors),
``MPO.from_opsum`` (automaton construction, then SVD compression) and
:func:`expectation`.

Site tensors have index order ``(left bond, out, in, right bond)``: ``out`` is the
bra (row) index of the local operator and ``in`` the ket (column) index.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, Sequence

import numpy as np
import scipy.linalg

import tenferro as tf
import tidu

from ..operators.autompo import compile_opsum
from .chain import SiteChain, site_tensors
from ..tools.errors import (
    DimensionMismatchError,
    InvalidOptionError,
    NonHermitianError,
    Tensor4allTypeError,
    ValueRangeError,
)
from ..sites.charges import NonConservingError
from ..sites.charges import CONSERVED_CHARGES, charge_parts
from ..sites.local_spaces import LOCAL_SPACES, LocalSpace, local_space
from ..operators.term_charges import check_opsum_conserves, mpo_bond_charges
from .environments import transfer_left
from .contractions import check_nonzero_norm, overlap_tensors, scalar_of, scaled_sites
from .mps import MPS
from ..operators.opsum import OpSum
from ..tools.checks import (
    check_alloc,
    check_rtol,
    check_finite_arrays,
    check_positive_int,
    check_real,
    exponent,
    first_nonfinite,
    is_traced,
    ldexp,
    to_numpy,
)
from ..structured import Leg, SymmetricTensor, U1, Zn
from ..tools.threads import thread_policy

__all__ = ["MPO", "expectation", "compress_mpo_tensors"]


def _shape(t: Any) -> tuple[int, ...]:
    return tuple(t.shape)


class MPO(SiteChain):
    """A matrix product operator on ``L`` sites (tensors ``(left, out, in, right)``).

    Build one from an :class:`~tensor4all.OpSum` with :meth:`from_opsum`, or from site
    tensors directly. An MPO is a tidu pytree over its site tensors, so an MPO whose
    couplings are tracers is differentiable in them.
    """

    __slots__ = ("_tensors", "_local", "_conserve", "_opsum", "_symmetric")
    _RIGHT = 3

    def __init__(self, tensors: Sequence[Any], local: str | None = None):
        ts = site_tensors(tensors, "MPO", 4, "(left, out, in, right)")
        for i, t in enumerate(ts):
            sh = _shape(t)
            if sh[1] != sh[2]:
                raise DimensionMismatchError(f"MPO site tensor {i} must have shape (left, d, d, right), got {sh}")
        if _shape(ts[0])[0] != 1 or _shape(ts[-1])[3] != 1:
            raise DimensionMismatchError(
                f"MPO boundary bonds must have dimension 1, got {_shape(ts[0])[0]} and {_shape(ts[-1])[3]}"
            )
        for i in range(len(ts) - 1):
            if _shape(ts[i])[3] != _shape(ts[i + 1])[0]:
                raise DimensionMismatchError(f"MPO bond {i} mismatch: {_shape(ts[i])[3]} vs {_shape(ts[i + 1])[0]}")
        if local is not None and not isinstance(local, str):
            raise Tensor4allTypeError(
                f"MPO: local must be the name of a local space or None, got {type(local).__name__} {local!r}"
            )
        known = LOCAL_SPACES.get(local) if local is not None else None
        if known is not None and any(d != known.dim for d in (_shape(t)[1] for t in ts)):
            raise DimensionMismatchError(
                f"MPO: local space {local!r} has dimension {known.dim}, but the site "
                f"tensors have physical dimensions {[_shape(t)[1] for t in ts]}"
            )
        self._tensors = ts
        self._local = local
        self._conserve: str | None = None
        self._opsum: OpSum | None = None
        self._symmetric: tuple[tuple, list[Any] | None] | None = None  # symmetric_mpo_sites, the last legs asked

    @classmethod
    def _from_leaves(cls, local: str | None, leaves: Sequence[Any], conserve: str | None = None) -> "MPO":
        obj = cls.__new__(cls)
        obj._tensors = list(leaves)
        obj._local, obj._conserve, obj._opsum, obj._symmetric = local, conserve, None, None
        return obj

    @classmethod
    def from_opsum(
        cls,
        os: OpSum,
        L: int,
        local: str | LocalSpace = "spin-1/2",
        *,
        rtol: float = 1e-13,
        conserve: str | None = None,
        cutoff: float | None = None,
    ) -> "MPO":
        """Compile ``os`` on ``L`` sites of the local space ``local``.

        A finite-state automaton gives an exact MPO (shared prefixes; see
        ``tensor4all.operators.autompo``); when all coefficients are concrete it is then
        compressed bond by bond (orthonormal sweep, then rank-revealing QR; see
        :func:`compress_mpo_tensors`), dropping directions below ``rtol`` relative to the
        largest at that bond (with the identity normalized), so bond dimensions are minimal. With traced coefficients
        (tidu tracers) the automaton MPO is returned uncompressed: it is exact and linear
        in each coefficient, and already minimal for nearest-neighbour models.
        ``rtol`` is a relative size in ``[0, 1)`` (``cutoff=``, its older name, still works with a
        :class:`DeprecationWarning`: ``cutoff`` means the discarded weight across tensor4all).

        ``conserve`` (``"Sz"``, ``"parity"``, ``"N"``, ``"N,Sz"``: both, term by term; None: nothing
        declared) checks that every term
        conserves that charge of the local space (each operator's charge is read from its
        matrix and the space's declared charges; a term that changes it, or an operator of no
        definite charge such as ``Sx``, raises :class:`NonConservingError` naming the term) and
        marks the MPO: ``dmrg`` then runs in a sector by default and :func:`expectation` of a
        symmetric MPS contracts blocks. The tensors are the same as without ``conserve``.
        """
        if not isinstance(os, OpSum):
            raise Tensor4allTypeError(f"MPO.from_opsum expects an OpSum, got {type(os).__name__}")
        L = check_positive_int(L, "L (number of sites)")
        space = local_space(local)
        rtol = check_rtol(rtol, cutoff, "MPO.from_opsum")
        if conserve is not None:
            if not isinstance(conserve, str) or conserve not in CONSERVED_CHARGES:
                raise InvalidOptionError(
                    f"MPO.from_opsum: conserve must be one of "
                    f"{', '.join(map(repr, CONSERVED_CHARGES))} or None, got {conserve!r}"
                )
            charge, modulus = CONSERVED_CHARGES[conserve]
            for part in charge_parts(charge):  # a product charge ("N,2Sz") part by part
                if part not in space.charges:
                    raise InvalidOptionError(
                        f"MPO.from_opsum: conserve={conserve!r} needs the charge {part!r}, "
                        f"which the local space {space.name!r} does not declare"
                    )
            os.check_sites(L)
            for part in charge_parts(charge):
                check_opsum_conserves(os, space, part, modulus)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is checked just below
            tensors, symbolic = compile_opsum(os, L, space)
            if not symbolic:
                _check_range(tensors)
                tensors = compress_mpo_tensors(tensors, rtol)
                _check_range(tensors)
        if not symbolic:
            tensors = [tf.asarray(np.asfortranarray(t)) for t in tensors]
        out = cls(tensors, space.name)
        out._conserve = conserve
        out._opsum = os + OpSum()  # a copy: later additions to os do not change H
        return out

    # ---- properties -----------------------------------------------------------------
    @property
    def local(self) -> str | None:
        """The name of the local space the MPO was built on (None if built from tensors)."""
        return self._local

    @property
    def opsum(self) -> OpSum | None:
        """The :class:`OpSum` the MPO was compiled from (``MPO.from_opsum``; its terms give TEBD's
        gates), or None for an MPO built from tensors."""
        return self._opsum

    @property
    def conserve(self) -> str | None:
        """The charge ``MPO.from_opsum(..., conserve=...)`` checked (``"Sz"``, ``"parity"``), or None."""
        return self._conserve

    def __repr__(self) -> str:
        sym = f", conserve={self._conserve!r}" if self._conserve is not None else ""
        return f"MPO(L={self.L}, local={self._local!r}, bond_dims={self.bond_dims}, dtype={self.dtype}{sym})"

    # ---- dense and checks -----------------------------------------------------------
    @thread_policy(lambda self: max(max(self.bond_dims, default=1), math.prod(self.phys_dims)))  # by the output
    def to_dense(self) -> Any:
        """The ``prod(d) x prod(d)`` matrix in ``np.kron`` order (for small L; differentiable)."""
        n = math.prod(self.phys_dims)
        check_alloc(n * n * max(self.bond_dims, default=1) * self.dtype.itemsize, f"MPO.to_dense of {self.L} sites")
        w0 = self._tensors[0]
        _, d, _, r = _shape(w0)
        m = tf.reshape(w0, (d, d, r))
        for w in self._tensors[1:]:
            n, c, _ = _shape(m)
            _, d, _, r = _shape(w)
            m = tf.reshape(tf.einsum("rcw,wstv->rsctv", m, w), (n * d, c * d, r), order="C")
        n, c, _ = _shape(m)
        return tf.reshape(m, (n, c))

    @thread_policy()
    def is_hermitian(self, tol: float = 1e-6) -> bool:
        """Whether ``||H - H^dagger||_F <= tol * ||H||_F``, from the MPO traces
        ``Tr(H^dagger H)`` and ``Tr(H H)`` (no dense matrix). The difference of the two
        traces cancels to rounding level, so ``tol`` much below ``1e-7`` is not meaningful.
        The test is scale-free (any finite couplings, 1e-300 to 1e300); NaN or infinity in
        a site tensor raises :class:`NonFiniteError`."""
        tol = check_real(tol, "MPO.is_hermitian: tol", low=0.0)
        ws = [to_numpy(t, "MPO.is_hermitian") for t in self._tensors]
        defect, _ = hermiticity(ws)
        return bool(defect <= tol * tol)


def _check_range(tensors: list[np.ndarray]) -> None:
    if first_nonfinite(tensors) is not None:  # finite coefficients whose sums or products overflow
        raise ValueRangeError(
            "MPO.from_opsum: the coefficients add up beyond the float range (~1.8e308); "
            "divide them by a common factor and multiply the results by it"
        )


HERMITIAN_TOL = 1e-12
"""The largest relative anti-Hermitian weight ``||H - H^dagger||_F^2 / ||H||_F^2`` of a Hamiltonian
taken as Hermitian (:func:`require_hermitian`; ``MPO.is_hermitian(tol=1e-6)``): the traces of
:func:`hermiticity` cancel to about 1e-15."""


def require_hermitian(ws: list[np.ndarray], what: str) -> float:
    """:class:`NonHermitianError` naming ``what`` unless the MPO with site tensors ``ws`` is
    Hermitian (:func:`hermiticity` at most :data:`HERMITIAN_TOL`): the one test of ``dmrg``, the
    thermal states and the infinite-chain solvers. Returns ``log2`` of ``H``'s scale."""
    defect, log2_scale = hermiticity(ws)
    if defect > HERMITIAN_TOL:
        raise NonHermitianError(
            f"{what} needs a Hermitian Hamiltonian, but H differs from its adjoint (||H - H^dagger|| / ||H|| = "
            f"{math.sqrt(defect):.3g}; at most {math.sqrt(HERMITIAN_TOL):.0e} counts as Hermitian); check the "
            "OpSum: add the Hermitian conjugate of every non-Hermitian term"
        )
    return log2_scale


def hermiticity(ws: list[np.ndarray]) -> tuple[float, float]:
    """``(||H - H^dagger||_F^2 / ||H||_F^2, log2 of sqrt(Tr(H^dagger H) / prod(d)))`` of the
    MPO with site tensors ``ws``: the relative anti-Hermitian weight and the scale of ``H``
    (its root-mean-square eigenvalue when Hermitian); ``(0, -inf)`` for ``H = 0``.

    The traces are taken on a losslessly compressed copy (:func:`compress_mpo_tensors` with
    cutoff 0: orthonormal sites, the norm spread evenly), so that an automaton MPO whose
    couplings sit on single channels (``1`` on the identity strings, ``J = 1e-200`` on one
    transition) does not underflow in ``J**2``; each site is then divided by a power of two
    bringing its largest entry to ``[0.5, 1)`` and the environments are renormalized after
    every site (the logarithm of the factor is kept), so nothing overflows or underflows for
    any finite MPO.
    """
    check_finite_arrays(ws, "MPO")
    key = _content_key(ws)
    held = _HERMITICITY.get(key)
    if held is None:
        held = _hermiticity(ws)
        if len(_HERMITICITY) >= 64:
            _HERMITICITY.clear()
        _HERMITICITY[key] = held
    return held


_HERMITICITY: dict[tuple, tuple[float, float]] = {}
""":func:`hermiticity` of the MPOs seen, by their content (:func:`_content_key`): ``dmrg``, its
excited states and restarts test one Hamiltonian once (3 ms of a 40 ms run of the L = 12
Heisenberg chain)."""


def _content_key(ws: list[np.ndarray]) -> tuple:
    """The shapes, dtypes and a BLAKE2 digest of the entries of ``ws``: equal keys, equal tensors
    (to a collision of a 128-bit digest), whichever arrays hold them."""
    digest = hashlib.blake2b(digest_size=16)
    for w in ws:
        digest.update(np.ascontiguousarray(w).view(np.uint8).reshape(-1))
    return tuple((np.shape(w), np.asarray(w).dtype.str) for w in ws), digest.digest()


def _hermiticity(ws: list[np.ndarray]) -> tuple[float, float]:
    with np.errstate(over="ignore", under="ignore"):
        ws = compress_mpo_tensors(ws, 0.0)
    exps = [exponent(w) for w in ws]
    if any(not np.any(w) for w in ws):
        return 0.0, -math.inf
    log2 = 2.0 * sum(exps)  # log2 of the factor taken out of Tr(H^dagger H)
    hh = np.ones((1, 1))  # Tr(H^dagger H) environment
    h2 = np.ones((1, 1))  # Tr(H H) environment (second factor transposed)
    for w, e in zip(ws, exps):
        w = ldexp(w, -e)
        d = w.shape[1]
        # "ab,astc,bstd->cd" and "ab,astc,btsd->cd", as two tensordots each (einsum would search
        # its path at every site)
        hh = np.tensordot(np.tensordot(hh, w.conj(), axes=(0, 0)), w, axes=([0, 1, 2], [0, 1, 2])) / d
        h2 = np.tensordot(np.tensordot(h2, w, axes=(0, 0)), w, axes=([0, 1, 2], [0, 2, 1])) / d
        m = float(np.max(np.abs(hh)))
        if m == 0.0:
            return 0.0, -math.inf
        k = math.frexp(m)[1]
        hh, h2, log2 = ldexp(hh, -k), ldexp(h2, -k), log2 + k
    a, b = float(hh[0, 0].real), float(h2[0, 0].real)
    if a <= 0.0:
        return 0.0, -math.inf
    return max(2.0 * (a - b), 0.0) / a, 0.5 * (log2 + math.log2(a))


@thread_policy(lambda ws, *_, **__: max((np.shape(w)[3] for w in ws), default=0))
def compress_mpo_tensors(ws: list[np.ndarray], rtol: float = 1e-13) -> list[np.ndarray]:
    """Lossless-up-to-``rtol`` SVD compression of numeric MPO tensors.

    The MPO is treated as an MPS over ``(out, in)`` with each site scaled by ``1/sqrt(d)``
    (so the identity has unit norm); a left-to-right QR sweep (left-orthonormal form)
    is followed by a right-to-left sweep of rank-revealing (column-pivoted) QRs that
    keep the pivots above ``rtol`` times the largest one at each bond. With the left
    part orthonormal these ranks are the numerical ranks an SVD would find, at about
    half the cost of an SVD (what keeps 10^4-term OpSums under a second). The scale is
    restored afterwards.
    """
    ws = [np.asarray(w) / np.sqrt(w.shape[1]) for w in ws]
    L = len(ws)
    for i in range(L - 1):
        dl, d, _, dr = ws[i].shape
        q, r = np.linalg.qr(ws[i].reshape(dl * d * d, dr))
        ws[i] = q.reshape(dl, d, d, q.shape[1])
        ws[i + 1] = np.tensordot(r, ws[i + 1], axes=(1, 0))
    for i in range(L - 1, 0, -1):
        dl, d, _, dr = ws[i].shape
        # rank-revealing QR of M^T: M^T P = Q R, so M = (P R^T) Q^T with orthonormal rows Q^T
        q, r, piv = scipy.linalg.qr(ws[i].reshape(dl, d * d * dr).T, mode="economic", pivoting=True, check_finite=False)
        diag = np.abs(np.diagonal(r))
        keep = max(1, int(np.count_nonzero(diag > rtol * diag[0]))) if diag.size and diag[0] > 0 else 1
        left = np.empty((dl, keep), dtype=r.dtype)
        left[piv] = r[:keep].T
        ws[i] = np.ascontiguousarray(q[:, :keep].T).reshape(keep, d, d, dr)
        ws[i - 1] = np.tensordot(ws[i - 1], left, axes=(3, 0))
    # restore the scale, spreading the overall norm evenly over the sites (in log2, so a
    # norm beyond the float range, from finite couplings near 1e308, spreads as well)
    log_total = _log2_norm(ws[0])
    out = []
    for i, w in enumerate(ws):
        lf = 0.0 if log_total is None else log_total / L - (log_total if i == 0 else 0.0)
        out.append(np.ascontiguousarray(w * (np.sqrt(w.shape[1]) * 2.0**lf)))
    return out


def _log2_norm(a: np.ndarray) -> float | None:
    """``log2`` of the Frobenius norm, without overflow or underflow of the squares (None for 0)."""
    e = exponent(a)
    n = float(np.linalg.norm(ldexp(a, -e)))
    return math.log2(n) + e if n > 0.0 else None


@thread_policy()
def expectation(psi: MPS, H: MPO) -> Any:
    """``<psi|H|psi> / <psi|psi>`` (real part) as a scalar tensor; differentiable in the
    MPS tensors and in the MPO tensors (hence in couplings of ``MPO.from_opsum``).
    A state of norm 0 raises :class:`ZeroNormError`."""
    check_compatible(psi, H)
    sites, ws = psi.tensors, H.tensors
    if psi.symmetric:  # the MPO's tensors on the state's sectors, else the dense state
        ws = mpo_on_sectors(H, sites)
        if ws is None:
            sites, ws = psi.dense().tensors, H.tensors
    ts, _ = scaled_sites(sites)  # the ratio does not change; nothing overflows
    den = tf.real(overlap_tensors(ts, ts))
    check_nonzero_norm(den, "expectation")
    env = None
    for a, w in zip(ts, ws):
        env = transfer_left(env, a, a, w)
    num = tf.real(scalar_of(env))
    return num / den


def mpo_on_sectors(H: MPO, sites: Sequence[Any]) -> list[Any] | None:
    """:func:`symmetric_mpo_sites` of ``H`` on the physical legs of ``sites``, kept on ``H`` for the
    legs last asked (an MPO's tensors do not change): the measurements of a state, and a state
    after another of the same sites, do not convert it again (a third of ``expectation`` on a
    U(1) state, L = 64, chi 128)."""
    if any(is_traced(w) for w in H._tensors):
        return None
    key = tuple(t.legs[1] for t in sites)
    held = H._symmetric
    if held is None or held[0] != key:
        held = H._symmetric = (key, symmetric_mpo_sites(H._tensors, sites))
    return None if held[1] is None else list(held[1])


def symmetric_mpo_sites(ws: Sequence[Any], sites: Sequence[Any]) -> list[Any] | None:
    """The MPO tensors as symmetric tensors ``(left, out, in, right)`` on the physical legs of the
    symmetric MPS ``sites`` (bond states ordered by charge, :func:`mpo_bond_charges`), or None
    when the MPO does not conserve the charge or its tensors are traced."""
    if any(is_traced(w) for w in ws):
        return None
    arrays = [np.asarray(to_numpy(w, "expectation")) for w in ws]
    g = sites[0].symmetry
    if not isinstance(g, (U1, Zn)):
        return None
    modulus = g.n if isinstance(g, Zn) else 0
    phys = [t.legs[1] for t in sites]
    q = [[c for c, d in leg.sectors.items() for _ in range(d)] for leg in phys]
    try:
        charges = mpo_bond_charges(arrays, q, modulus=modulus, what="the MPO")
    except NonConservingError:
        return None
    perms = [np.argsort(c, kind="stable") for c in charges]
    legs = []
    for c, p in zip(charges, perms):
        sectors: dict[int, int] = {}
        for x in c[p]:
            sectors[int(x)] = sectors.get(int(x), 0) + 1
        legs.append(Leg(g, sectors))
    out = []
    for i, w in enumerate(arrays):
        w = w[perms[i]][:, :, :, perms[i + 1]]
        w = _drop_rounding(w, charges[i][perms[i]], q[i], charges[i + 1][perms[i + 1]], modulus)
        out.append(
            SymmetricTensor.from_dense(
                tf.asarray(np.asfortranarray(w)), [legs[i], phys[i], phys[i].dual(), legs[i + 1].dual()], tol=0.0
            )
        )
    return out


def _drop_rounding(w: np.ndarray, cl: np.ndarray, q: Sequence[int], cr: np.ndarray, modulus: int) -> np.ndarray:
    """``w`` with the entries that break ``c_r = c_l + q_s - q_t`` set to zero (the rounding a
    compressed MPO leaves below :func:`mpo_bond_charges`' tolerance)."""
    qa = np.asarray(q)
    want = cl[:, None, None, None] + qa[None, :, None, None] - qa[None, None, :, None]
    if modulus:
        want = want % modulus
    return np.where(want == cr[None, None, None, :], w, 0.0)


def check_compatible(psi: Any, H: Any) -> None:
    """Typed errors unless ``psi`` is an MPS and ``H`` an MPO with the same sites."""
    if not isinstance(psi, MPS):
        hint = " (pass its .state)" if isinstance(getattr(psi, "state", None), MPS) else ""
        raise Tensor4allTypeError(f"expected an MPS, got {type(psi).__name__}{hint}")
    if not isinstance(H, MPO):
        raise Tensor4allTypeError(f"expected an MPO, got {type(H).__name__}")
    if psi.L != H.L:
        raise DimensionMismatchError(f"the MPS has {psi.L} sites but the MPO has {H.L}")
    if psi.phys_dims != H.phys_dims:
        bad = next(i for i, (a, b) in enumerate(zip(psi.phys_dims, H.phys_dims)) if a != b)
        raise DimensionMismatchError(
            f"physical dimension mismatch at site {bad}: the MPS has {psi.phys_dims[bad]}, "
            f"the MPO has {H.phys_dims[bad]} (local space {H.local!r})"
        )


tidu.register_pytree_node(
    MPO,
    lambda m: (list(m._tensors), (m._local, m._conserve)),
    lambda aux, leaves: MPO._from_leaves(aux[0], leaves, aux[1]),
)
