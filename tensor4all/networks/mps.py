"""Matrix product states: :class:`MPS` (a tidu pytree over its site tensors) and
:func:`overlap`.

Site tensors are tenferro tensors with index order ``(left bond, physical, right
bond)``; the boundary bonds have dimension 1. Functions that return numbers built
from the tensors (``overlap``, ``norm``, ``expect``, ``correlation``, ``to_dense``)
are written with tenferro operations and are differentiable with tidu;
``canonicalize`` and ``normalize`` are too (QR/LQ from ``tenferro.linalg``).
``compress``, ``from_dense`` and ``entanglement_entropy`` are numerical tools on
concrete values (SciPy SVD) and raise :class:`NotDifferentiableError` on tracers;
``compress`` is the one compression sweep of :mod:`.site_ops` (as ``add`` and ``apply``), run
on NumPy arrays for a dense MPS (the differentiable ``add`` runs it on tenferro tensors).

Every method validates its input before it changes the MPS, so a failing call
leaves it as it was; norms and ratios are computed on site tensors scaled by powers
of two (exact), so states with entries near the ends of the float range give the
right numbers instead of overflowing to inf or NaN.

The methods delegate: the constructors' sites come from :mod:`.mps_factories`, the
measurements (``expect``, ``correlation``, Schmidt values, entanglement) from
:mod:`.mps_measurements`, the canonical forms, norms, compression and ``to_dense`` from
:mod:`.mps_forms`.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import tenferro as tf
import tidu

from ..sites.charges import unpack
from ..structured import SymmetricTensor
from ..tools.checks import check_cutoff, check_finite_arrays, check_index, check_positive_int, to_numpy
from ..tools.errors import DimensionMismatchError, Tensor4allTypeError, ZeroNormError
from ..tools.device import to_host
from ..tools.threads import bond_of, thread_policy
from .arithmetic import check_summands, scaled, summed
from .chain import SiteChain, leaves_of, site_tensors
from .contractions import scaled_overlap
from .files import read_mps, write_mps
from . import mps_forms as forms
from .mps_factories import (
    dense_vector_bond,
    dense_vector_sites,
    product_state_sites,
    random_state_bond,
    random_state_sites,
)
from .mps_forms import dense_size
from .mps_measurements import (
    correlation,
    correlation_matrix,
    entanglement_entropy,
    entanglement_spectrum,
    expect,
    schmidt_values,
)
from .schmidt_form import SchmidtForm, schmidt_form
from .site_ops import compress_sweep, rescaled, unit_scaled
from .symmetric_sites import Grading, check_symmetric_chain, is_symmetric

__all__ = ["MPS", "overlap", "add"]


def _shape(t: Any) -> tuple[int, ...]:
    return tuple(t.shape)


class MPS(SiteChain):
    """A matrix product state on ``L`` sites.

    ``MPS(tensors)`` takes site tensors of shape ``(left, physical, right)`` (tenferro
    tensors, NumPy arrays or tidu tracers; float or complex, integers become float64,
    no NaN or infinity) with boundary bonds of dimension 1. An MPS
    is a tidu pytree over its site tensors: ``tidu.grad`` of a function of an MPS
    returns an MPS of gradients. ``canonicalize``, ``normalize`` and ``compress``
    change the MPS in place (the site tensors themselves are immutable values: NumPy arrays
    passed in are copied, and ``np.asarray(psi.tensors[i])`` is not to be written into).

    A symmetric MPS (``MPS.product_state(..., conserve="Sz")``, ``MPS.random(..., charge=1)``,
    the state of a conserved ``dmrg`` run, or ``MPS(tensors)`` of
    :class:`~tensor4all.SymmetricTensor` sites) keeps one dense block per charge sector: legs
    ``(left bond, physical, right bond)`` with the right bond outgoing (``dual=True``), sites of
    charge 0, the left boundary the single sector of charge 0 and the right boundary the single
    sector of the state's total charge (:attr:`sector`). Every method works on it as on a dense
    MPS and keeps the sectors (canonical forms and compression act per sector); ``dense()`` drops them.
    """

    __slots__ = ("_sites", "_grading", "_form", "_center", "_dims")

    @property
    def _tensors(self) -> list[Any]:
        return self._sites

    @_tensors.setter
    def _tensors(self, ts: list[Any]) -> None:
        """New site tensors: the Schmidt form and the known centre no longer hold."""
        self._sites = ts
        self._form: SchmidtForm | None = None
        self._center: int | None = None
        self._dims: tuple[list[int], list[int]] | None = None

    @property
    def bond_dims(self) -> list[int]:
        """The ``L - 1`` inner bond dimensions."""
        return list(self._shapes()[1])

    @property
    def center(self) -> int | None:
        """The orthogonality centre where it is known, else None: the sites left of it are
        left-orthonormal, those right of it right-orthonormal (after :meth:`canonicalize`, of a
        state from :meth:`random`, of the states the sweeps return). A change of the sites
        forgets it."""
        return self._center

    @property
    def phys_dims(self) -> list[int]:
        return list(self._shapes()[0])

    def _shapes(self) -> tuple[list[int], list[int]]:
        """The physical and the inner bond dimensions, read once per set of site tensors."""
        if self._dims is None:
            shapes = [tuple(t.shape) for t in self._sites]
            self._dims = ([s[1] for s in shapes], [s[2] for s in shapes[:-1]])
        return self._dims

    def __init__(self, tensors: Sequence[Any]):
        ts = site_tensors(tensors, "MPS", 3, "(left bond, physical, right bond)")
        self._grading: Grading | None = None
        if is_symmetric(ts):
            check_symmetric_chain(ts)
            self._tensors = ts
            return
        if _shape(ts[0])[0] != 1 or _shape(ts[-1])[2] != 1:
            raise DimensionMismatchError(
                f"MPS boundary bonds must have dimension 1, got left {_shape(ts[0])[0]} and right {_shape(ts[-1])[2]}"
            )
        for i in range(len(ts) - 1):
            if _shape(ts[i])[2] != _shape(ts[i + 1])[0]:
                raise DimensionMismatchError(
                    f"MPS bond {i} mismatch: site {i} has right bond {_shape(ts[i])[2]}, "
                    f"site {i + 1} has left bond {_shape(ts[i + 1])[0]}"
                )
        self._tensors = ts

    @classmethod
    def _from_leaves(cls, leaves: Sequence[Any], grading: Grading | None = None) -> "MPS":
        obj = cls.__new__(cls)
        obj._tensors = list(leaves)
        obj._grading = grading
        return obj

    @classmethod
    def _symmetric(cls, sites: Sequence[SymmetricTensor], g: Grading) -> "MPS":
        obj = cls(sites)
        obj._grading = g
        return obj

    # ---- constructors ---------------------------------------------------------------
    @classmethod
    @thread_policy(random_state_bond)  # the QR sweep at bond_dim
    def random(
        cls,
        L: int,
        d: int | None = None,
        bond_dim: int = 8,
        seed: int | None = 0,
        dtype: Any = tf.float64,
        *,
        conserve: str | None = None,
        charge: Any = None,
        local: str | None = None,
    ) -> "MPS":
        """A normalized random MPS (Gaussian entries, then right-canonicalized).

        ``d`` defaults to the dimension of ``local`` (``local="electron"``: 4), else 2. Bond ``b``
        has dimension ``min(bond_dim, d**(b+1), d**(L-b-1))``. ``seed`` is a
        non-negative integer or ``None`` (fresh entropy); ``dtype`` float32/64 or complex64/128.

        With ``conserve`` (``"Sz"``, ``"parity"``, ``"N"``, ``"N,Sz"``) or ``charge`` the state is
        symmetric, in the sector ``charge`` (physical units as ``dmrg``'s ``sector``: ``Sz = 1``,
        ``0.5``; parity 0 or 1; ``N``; ``(N, Sz)`` or ``{"N": .., "Sz": ..}``; default the lowest
        ``|Sz|`` the chain reaches, half filling, the even parity) of the charge the local space
        ``local`` (default: by dimension) declares; ``charge`` alone conserves the first charge
        the space declares of its kind (``"electron"``: a number is ``N``, a pair ``(N, Sz)``).
        Each bond holds the charges reachable from both ends, ``bond_dim`` shared among them in
        proportion to their numbers of states.
        A sector with no states raises :class:`SymmetryViolationError`.
        """
        sites, g = random_state_sites(L, d, bond_dim, seed, dtype, conserve, charge, local)
        return (cls(sites) if g is None else cls._symmetric(sites, g))._set_center(0)  # right-canonical

    @classmethod
    def product_state(
        cls, states: Sequence[Any], d: int | None = None, *, conserve: str | None = None, local: str | None = None
    ) -> "MPS":
        """A product state; each entry of ``states`` is a basis index or a local vector of length ``d``.

        ``d`` defaults to the dimension of ``local`` (``local="spin-1"``: 3, ``"electron"``: 4), else 2.
        With ``conserve`` (``"Sz"``, ``"parity"``, ``"N"``, ``"N,Sz"``; basis indices only) the state is symmetric, its
        sector the total charge of the basis states (``local``: the local space, default by
        dimension)."""
        sites, g = product_state_sites(states, d, conserve, local)
        return cls(sites) if g is None else cls._symmetric(sites, g)

    @classmethod
    @thread_policy(dense_vector_bond)  # the largest matrix the SVDs factor
    def from_dense(cls, vector: Any, L: int, d: int = 2, max_bond: int | None = None, cutoff: float = 0.0) -> "MPS":
        """The MPS of a dense ``d**L`` vector in ``np.kron`` order (site 0 most significant),
        by successive truncated SVDs."""
        return cls(dense_vector_sites(vector, L, d, max_bond, cutoff))

    # ---- properties -----------------------------------------------------------------
    def __repr__(self) -> str:
        sym = f", {self.symmetry!r}, sector={self.sector}" if self.symmetric else ""
        return (
            f"MPS(L={self.L}, phys_dims={sorted(set(self.phys_dims))}, bond_dims={self.bond_dims}, "
            f"dtype={self.dtype}{sym})"
        )

    @property
    def symmetric(self) -> bool:
        """Whether the sites are :class:`~tensor4all.SymmetricTensor` (charge sectors kept)."""
        return is_symmetric(self._tensors)

    @property
    def symmetry(self) -> Any:
        """The group of a symmetric MPS (``U1()``, ``Zn(2)``), None for a dense one."""
        return self._tensors[0].symmetry if self.symmetric else None

    @property
    def conserve(self) -> str | None:
        """What a symmetric MPS conserves (``"Sz"``, ``"parity"``; ``"charge"`` for sites given
        directly), None for a dense one."""
        if not self.symmetric:
            return None
        return self._grading.label if self._grading is not None else "charge"

    @property
    def charge(self) -> Any:
        """The total charge of a symmetric MPS as the group element (``2Sz`` for Sz; for
        ``"N,Sz"`` the pair of integers ``(N, 2Sz)``), None if dense. :attr:`sector` gives it in
        physical units."""
        if not self.symmetric:
            return None
        q = self._group_charge
        g = self._grading
        return unpack(q, len(g.unit)) if g is not None and g.is_product else q

    @property
    def _group_charge(self) -> Any:
        """The total charge as the symmetric tensors carry it (packed for a product charge)."""
        return self._tensors[-1].legs[2].charges[0]

    @property
    def sector(self) -> dict[str, Any]:
        """``{label: value}`` of a symmetric MPS in physical units (``{"Sz": 0.5}``; ``{"N": 8,
        "Sz": 0.0}`` for ``"N,Sz"``; as ``DMRGResult.sector``), ``{}`` for a dense one."""
        if not self.symmetric:
            return {}
        if self._grading is None:
            return {"charge": self.charge}
        return self._grading.sector(self._group_charge)

    def dense(self) -> "MPS":
        """The same state with dense site tensors (sectors dropped; ITensor's ``dense``);
        a dense MPS returns itself."""
        if not self.symmetric:
            return self
        return MPS([t.to_dense() for t in self._tensors])

    # ---- arithmetic (tensor4all.networks.arithmetic) -------------------------------------
    __array_ufunc__ = None  # NumPy scalars defer to MPS.__rmul__

    def __add__(self, other: Any) -> "MPS":
        """The exact sum (bond dimensions add); :meth:`add` compresses."""
        return _sum([self, other], "MPS + MPS")

    def __radd__(self, other: Any) -> "MPS":
        if isinstance(other, int) and not isinstance(other, bool) and other == 0:  # sum([a, b, ...])
            return MPS._from_leaves(self._tensors, self._grading)
        return _sum([other, self], "MPS + MPS")

    def __sub__(self, other: Any) -> "MPS":
        return _sum([self, other], "MPS - MPS", signs=(1, -1))

    def __neg__(self) -> "MPS":
        return MPS._from_leaves(scaled(self._tensors, -1, "-MPS"), self._grading)

    def __mul__(self, c: Any) -> "MPS":
        """The state times a scalar (on its first site; complex and traced scalars too). A
        tenferro scalar or tidu tracer ``c`` goes on the right, ``a * c``: ``c * a`` asks tenferro
        first, which refuses an MPS."""
        return MPS._from_leaves(scaled(self._tensors, c, "MPS * c"), self._grading)

    __rmul__ = __mul__

    def __truediv__(self, c: Any) -> "MPS":
        return MPS._from_leaves(scaled(self._tensors, c, "MPS / c", divide=True), self._grading)

    def add(self, *others: "MPS", max_bond: int | None = None, cutoff: float = 1e-12) -> "MPS":
        """``self + others[0] + ...`` compressed (see :func:`add`)."""
        return add(self, *others, max_bond=max_bond, cutoff=cutoff)

    # ---- dense conversion -----------------------------------------------------------
    @thread_policy(dense_size)  # sized by the output, not the bonds
    def to_dense(self) -> Any:
        """The state as a ``prod(d)`` vector in ``np.kron`` order (site 0 most significant)."""
        return forms.to_dense(self)

    # ---- canonical forms ------------------------------------------------------------
    @thread_policy()
    def canonicalize(self, center: int) -> "MPS":
        """Bring the MPS to mixed canonical form around ``center`` (QR sweeps from both ends),
        in place; returns ``self``. On an error the MPS is unchanged."""
        return forms.canonicalize(self, center)

    @thread_policy()
    def norm(self) -> Any:
        """``sqrt(<psi|psi>)`` as a real scalar tensor (differentiable). Computed on site
        tensors scaled by powers of two, so it overflows to inf only when the norm itself
        exceeds the float range."""
        return forms.norm(self)

    @thread_policy()
    def normalize(self) -> "MPS":
        """Scale to unit norm in place (the first site tensor is divided by the norm; if
        the norm lies beyond the float range, every site is first scaled by a power of
        two); returns ``self``. A state of norm 0 raises :class:`ZeroNormError` and stays
        as it was."""
        return forms.normalize(self)

    @thread_policy()
    def compress(self, max_bond: int | None = None, cutoff: float = 0.0) -> float:
        """Truncate bonds by SVD in place: the one compression sweep,
        :func:`~tensor4all.networks.site_ops.compress_sweep` (QR to left-orthonormal form, then
        right-to-left truncated SVDs; a symmetric MPS keeps its sectors, one truncation across
        those of each bond, and sectors may vanish), on sites scaled by powers of two (exact), so
        that long chains neither overflow nor underflow.

        Returns the discarded weight: the sum over bonds of the relative discarded
        squared singular values. The norm is not restored after truncation. On an error
        the MPS is unchanged.
        """
        return forms.compress(self, max_bond, cutoff)

    # ---- files ----------------------------------------------------------------------
    def save(self, path: Any, format: str | None = None) -> None:  # noqa: A002
        """Write the site tensors to ``path``; the format follows the extension unless given.

        * ``.arrow`` (Arrow IPC, via :func:`tenferro.save`) or ``.parquet``: one entry
          ``site_0000``, ``site_0001``, ... per site, dimension names
          ``("left", "physical", "right")``; needs pyarrow (the ``arrow`` extra).
        * ``.npz`` (NumPy): arrays ``site_0000``, ... of the same shapes.

        The write is atomic: the data go to a temporary file in the same directory,
        which then replaces ``path``, so a failed write leaves an existing file intact
        and no temporary file behind; a symbolic link at ``path`` keeps pointing at the
        new data (the file it points to is replaced). The operating system refusing the
        write, and a path no MPS file can have (a NUL character, a trailing separator, an
        existing FIFO, socket or device), raise :class:`MPSFileIOError` (an ``OSError``)
        naming the path. The values are saved, not gradients: an MPS of tidu tracers
        cannot be saved.

        A symmetric MPS (U(1) or Z_n) writes its sites densely (readable as a dense MPS) and
        its sectors: ``symmetry`` (the modulus, 0 for U(1), what it conserves and its unit),
        ``sectors_bond_0000..L`` and ``sectors_phys_0000..`` (rows ``charge, dimension``);
        :meth:`load` rebuilds the blocks from them.
        """
        write_mps(self, path, format)

    @classmethod
    def load(cls, path: Any, format: str | None = None) -> "MPS":  # noqa: A002
        """Read an MPS written by :meth:`save` (format from the extension unless given).
        The tensors are read into memory (not memory-mapped views of the file).

        Errors name the file and what was wrong: :class:`MPSFileNotFoundError` (no such
        file), :class:`MPSFileIOError` (a directory, a path ending in a separator, a FIFO,
        socket or device, which is never opened, no permission), :class:`MPSFileError`
        (empty, truncated or corrupt; a file of another format; no entries
        ``site_0000, site_0001, ...``; entries that do not form an MPS). Other entries
        are ignored. A file of a symmetric MPS comes back symmetric."""
        return read_mps(cls, path, format)

    # ---- measurements ---------------------------------------------------------------
    @thread_policy()
    def expect(self, op: Any, site: int | None = None, local: Any = None) -> Any:
        """``<psi|op_site|psi> / <psi|psi>`` (``site=None``: at every site, a 1D tensor of length
        ``L`` from one pass of environments, as ITensor's ``expect(psi, op)`` and TeNPy's
        ``expectation_value``); ``op`` is a name of the local space ``local``
        (default by dimension: 2 -> spin-1/2, 3 -> spin-1; a symmetric state whose charges only
        one built-in space of its dimension declares: that space, "tj" for a conserved t-J
        state), a matrix, or a product of them at
        the site, written ``"Cdagup*Cup"`` or ``["Cdagup", "Cup"]`` (matrix product in written
        order: the last factor acts first). The result is real for Hermitian operators. An
        operator odd under the fermion parity (a lone ``"C"``, ``"Cdagup*Cup*Cdn"``) raises
        :class:`InvalidOptionError`; even products such as ``"Cdagup*Cdn"`` need no string. A
        state of norm 0 raises :class:`ZeroNormError` (:mod:`tensor4all.networks.correlations`)."""
        return expect(self, op, site, local)

    @thread_policy()
    def correlation(self, op_a: Any, op_b: Any, i: int, j: int, local: Any = None, string: Any = None) -> Any:
        """``<psi|A_i (prod_{min(i,j)<k<max(i,j)} S_k) B_j|psi> / <psi|psi>`` (for ``i == j`` the
        product ``A B`` at site ``i``). ``op_a``, ``op_b`` and ``string`` are names, matrices or
        products as in :meth:`expect`; ``string`` (default none) sits on every site strictly
        between ``i`` and ``j``: the string order of the spin-1 chain is ``correlation("Sz",
        "Sz", i, j, string="exp(i pi Sz)")``.

        Fermionic operators of the local space (``"Cdag"``, ``"C"`` of ``"fermion"``, ``"Cdagup"``
        ... of ``"electron"``) are fermions with their Jordan-Wigner strings, in either order:
        ``correlation("Cdag", "C", i, j, local="fermion")`` is the one-particle density matrix
        ``<c_i^dagger c_j>``. A ``string`` then multiplies the Jordan-Wigner string and must be
        even under the fermion parity (a fermionic name, or a matrix that does not commute with
        ``F``, raises :class:`InvalidOptionError`, as does a pair of odd total parity)."""
        return correlation(self, op_a, op_b, i, j, local, string)

    @thread_policy()
    def correlation_matrix(
        self, op_a: Any, op_b: Any, sites: Sequence[int] | None = None, string: Any = None, local: Any = None
    ) -> Any:
        """The matrix ``C[x, y] =`` :meth:`correlation` ``(op_a, op_b, sites[x], sites[y], local,
        string)`` over ``sites`` (default all, in the order given), as one tenferro tensor
        (differentiable; real where every operator is Hermitian). One left-to-right sweep of
        transfer matrices per row and per direction (one direction when ``B = A^dagger`` and the
        string is Hermitian: the lower triangle is then the conjugate of the upper), as TeNPy's
        ``correlation_function``:
        ``O(L^2)`` contractions for all pairs, not ``O(L^3)``. The diagonal is ``<(A B)_i>``; for
        fermions ``i > j`` entries carry their Jordan-Wigner sign, so
        ``correlation_matrix("Cdag", "C", local="fermion")`` is the one-particle density matrix.
        Symmetric states are measured blockwise when every operator has one charge."""
        return correlation_matrix(self, op_a, op_b, sites, string, local)

    @thread_policy()
    def entanglement_entropy(self, bond: int | None = None) -> Any:
        """Von Neumann entropy (natural log) of the Schmidt spectrum at ``bond`` (between
        sites ``bond`` and ``bond + 1``); ``bond=None`` gives the list for all bonds."""
        return entanglement_entropy(self, bond)

    @thread_policy()
    def schmidt_values(self) -> list[np.ndarray]:
        """The Schmidt values (singular values of the normalized state) at every bond.
        A state of norm 0 has none and raises :class:`ZeroNormError`."""
        return schmidt_values(self)

    @thread_policy()
    def entanglement_spectrum(self, bond: int) -> dict[Any, np.ndarray]:
        """The Schmidt values at ``bond`` (between sites ``bond`` and ``bond + 1``) of a symmetric
        MPS by sector: charge of the left half (physical units, as :attr:`sector`: ``Sz`` of
        sites ``0..bond``; a tuple ``(N, Sz)`` for ``"N,Sz"``) -> its singular values, descending;
        sectors ordered by ``|charge|``.
        A dense MPS has no sectors (:class:`InvalidOptionError`: build it with ``conserve=``)."""
        return entanglement_spectrum(self, bond)

    @thread_policy()
    def schmidt_form(self) -> SchmidtForm:
        """The state in left-canonical form with a Schmidt basis and the Schmidt values on every
        bond (:class:`~tensor4all.networks.schmidt_form.SchmidtForm`): computed once (one QR and
        one SVD sweep, or the SVD sweep alone where the sites are known to be right-canonical, as
        after :meth:`canonicalize` ``(0)`` and in the states that ``dmrg`` returns, which come
        with it) and kept until a site tensor changes. Entropies and spectra read it; expectation
        values and correlations contract it (G. Vidal, PRL 91, 147902 (2003); the ``S`` TeNPy
        keeps on its MPS). Concrete values only (:class:`NotDifferentiableError` on tracers); a
        state of norm 0 raises :class:`ZeroNormError`."""
        return self._schmidt_form("MPS.schmidt_form")

    def _schmidt_form(self, what: str) -> SchmidtForm:
        if self._form is None:
            leaves = [to_numpy(b, what) for b in leaves_of(self._tensors)]
            check_finite_arrays(leaves, what)
            ts = self._tensors if self.symmetric else [to_host(t) for t in self._tensors]
            form = schmidt_form(ts, right_canonical=self._center == 0)
            if form is None:
                raise ZeroNormError(
                    f"{what}: the state has norm 0, so it has no Schmidt values, no entanglement and no "
                    "<psi|...|psi> / <psi|psi>"
                )
            self._form = form
        return self._form

    def _set_center(self, center: int) -> "MPS":
        """Record that the sites right of ``center`` are right-orthonormal and those left of it
        left-orthonormal (what a sweep that just ended there guarantees)."""
        self._center = center
        return self

    # ---- helpers --------------------------------------------------------------------
    def _check_site(self, site: Any, what: str) -> int:
        return check_index(site, self.L, what)


@thread_policy()
def overlap(a: MPS, b: MPS) -> Any:
    """``<a|b>`` (``a`` conjugated) as a scalar tensor; differentiable in both."""
    if not (isinstance(a, MPS) and isinstance(b, MPS)):
        raise Tensor4allTypeError(f"overlap expects two MPS, got {type(a).__name__} and {type(b).__name__}")
    if a.L != b.L or a.phys_dims != b.phys_dims:
        raise DimensionMismatchError(
            f"overlap: the states differ in length or physical dimensions: L={a.L} with {a.phys_dims} "
            f"vs L={b.L} with {b.phys_dims}"
        )
    if (
        a.symmetric
        and b.symmetric
        and a.symmetry == b.symmetry
        and all(x.legs[1].same_space(y.legs[1]) for x, y in zip(a._tensors, b._tensors))
    ):
        if a._group_charge != b._group_charge:  # states of different sectors are orthogonal
            return tf.asarray(np.zeros((), dtype=np.result_type(np.dtype(str(a.dtype)), np.dtype(str(b.dtype)))))
        return scaled_overlap(a._tensors, b._tensors, "overlap")
    return scaled_overlap(a.dense()._tensors, b.dense()._tensors, "overlap")


@thread_policy(lambda *states, **_: sum(bond_of(s) for s in states))  # QR of the direct sum
def add(*states: MPS, max_bond: int | None = None, cutoff: float = 1e-12) -> MPS:
    """The sum of the states, compressed: the exact direct sum (``a + b``), brought to
    left-orthonormal form by QR and truncated by right-to-left SVDs to at most ``max_bond``
    and a relative discarded weight ``cutoff`` per bond (the default drops only what the
    direct sum holds twice; ``max_bond=None, cutoff=0`` keeps the exact sum). Differentiable;
    symmetric states of one sector add per sector."""
    if max_bond is not None:
        max_bond = check_positive_int(max_bond, "add: max_bond")
    cutoff = check_cutoff(cutoff, "add: cutoff")
    check_summands(states, "add", MPS)
    if max_bond is None and cutoff == 0.0:
        return _sum(list(states), "add")
    # each state unit-scaled (exact powers of two, as MPS.compress), 2**(e - top) on its first site
    scaled = [unit_scaled(s._tensors) for s in states]
    top = max(e for _, e in scaled)
    parts = [MPS._from_leaves(rescaled(ts, e - top), s._grading) for (ts, e), s in zip(scaled, states)]
    out = _sum(parts, "add")
    ts, _ = compress_sweep(out._tensors, max_bond, cutoff)
    out._tensors = rescaled(ts, top)
    return out


def _sum(states: list[Any], what: str, signs: Sequence[int] | None = None) -> MPS:
    return MPS._from_leaves(*summed(states, what, MPS, signs))


tidu.register_pytree_node(
    MPS, lambda m: (list(m._tensors), m._grading), lambda grading, leaves: MPS._from_leaves(leaves, grading)
)
