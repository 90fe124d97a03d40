"""MPS and MPO to and from TeNPy and quimb; ITensors.jl's HDF5 files are :mod:`.interchange_hdf5`.
The peers are optional (the ``interop`` extra: ``pip install 'tidu-tenferro[interop]'``, with
physics-tenpy, quimb and h5py), imported on first use; a missing one raises
:class:`~tensor4all.OptionalDependencyError` naming the extra::

    from tensor4all.networks.interchange import to_tenpy, from_tenpy, mpo_to_tenpy, to_quimb, from_quimb
    from tensor4all.networks.interchange_hdf5 import save_itensors_hdf5, load_itensors_hdf5

    tpsi = to_tenpy(psi)             # TeNPy MPS: sites from psi's local space and charge
    psi2 = from_tenpy(tpsi)          # symmetric when TeNPy conserves 2*Sz, N, or both
    E = mpo_to_tenpy(H).expectation_value(tpsi)        # TeNPy's energy of our state
    q = to_quimb(psi); psi3 = from_quimb(q, conserve="Sz")
    save_itensors_hdf5(psi, "psi.h5", name="psi")      # ITensors.jl: read(h5open("psi.h5"), "psi", MPS)

TeNPy (finite MPS and MPO): ``to_tenpy`` keeps the state exactly (TeNPy's canonical form, made by
TeNPy's ``canonical_form_finite``, with the norm in ``.norm``); a symmetric MPS (``"Sz"``, ``"N"``,
``"N,Sz"``) keeps its charges on every bond (TeNPy's ``2*Sz`` and ``N`` are our integers), and
``from_tenpy`` of a charged TeNPy MPS is symmetric in the same sector (``symmetric=False``:
dense). Sites (basis orders compared operator by operator, fermion signs included): spin-1/2 =
``SpinHalfSite`` (also a hand-made spin site with ``Sz``, ``Sp``, as XXZChain's), spin-1 =
``SpinSite(S=1)`` (basis reversed: TeNPy counts Sz up), fermion = ``FermionSite``, electron =
``SpinHalfFermionSite``, tj = ``SpinHalfHoleSite``, pauli = ``SpinHalfSite`` without charge.
Other sites (bosons, grouped sites, purifications), parity charges and infinite MPS raise
:class:`UnsupportedSiteError`.

quimb: ``MatrixProductState`` (shape ``'lrp'``), ``MatrixProductOperator`` (shape ``'lrud'``, the
upper index ``k`` the output, as quimb's ``to_dense`` and ``apply`` read it). quimb's tensors carry
no charges: a symmetric MPS goes densely, and ``from_quimb(q, conserve=...)`` reads the sectors
back from the nonzero entries (each bond state must carry one charge, as in a state ``to_quimb``
wrote; else :class:`SymmetryViolationError`).
"""

from __future__ import annotations

import inspect
from typing import Any, Sequence

import numpy as np

import tenferro as tf
from tenferro.checks import import_optional, install_hint

from ..sites.charges import CONSERVED_CHARGES, declared_charges, pack, unpack
from ..sites.local_spaces import local_space
from ..structured import Leg, SymmetricTensor, SymmetryViolationError
from ..tools.checks import to_numpy
from ..tools.errors import DimensionMismatchError, InvalidOptionError, OptionalDependencyError
from ..tools.errors import Tensor4allTypeError, ZeroNormError
from ..tools.threads import thread_policy
from .mpo import MPO
from .mps import MPS
from .symmetric_sites import Grading, grading, order_key, phys_leg

__all__ = [
    "UnsupportedSiteError",
    "to_tenpy",
    "from_tenpy",
    "mpo_to_tenpy",
    "mpo_from_tenpy",
    "to_quimb",
    "from_quimb",
    "mpo_to_quimb",
    "mpo_from_quimb",
]


class UnsupportedSiteError(InvalidOptionError):
    """A site type or conserved charge with no counterpart in the other code (a TeNPy
    ``BosonSite``, a parity charge, a chain of mixed site types); the message lists what is
    supported."""


_INSTALL = install_hint("interop")
#: a local space by (declared charge, dimension); and the dense default by dimension
_BY_CHARGE = {("2Sz", 2): "spin-1/2", ("2Sz", 3): "spin-1", ("N", 2): "fermion", ("N", 3): "tj", ("N", 4): "electron"}
_BY_CHARGE.update({("N,2Sz", 3): "tj", ("N,2Sz", 4): "electron", ("parity", 2): "pauli"})
_BY_DIM = {2: "spin-1/2", 3: "spin-1", 4: "electron"}
#: TeNPy's charge names -> what we conserve
_CONSERVE_OF_TENPY = {("2*Sz",): "Sz", ("N",): "N", ("N", "2*Sz"): "N,Sz"}
_TENPY_SITES = "spin-1/2, spin-1, fermion, electron, tj, pauli (SpinHalfSite, SpinSite(S=1), FermionSite, ...)"


def _tenpy() -> Any:
    return import_optional(
        ("tenpy", "tenpy.networks.mps", "tenpy.networks.mpo", "tenpy.networks.site", "tenpy.linalg.np_conserved"),
        OptionalDependencyError,
        f"the TeNPy interchange needs TeNPy (physics-tenpy), which is not installed; {_INSTALL}",
    )


def _quimb() -> Any:
    message = f"the quimb interchange needs quimb, which is not installed; {_INSTALL}"
    return import_optional(("quimb", "quimb.tensor"), OptionalDependencyError, message)


# ---- shared by the peers and the HDF5 files ----------------------------------------------------


def site_arrays(chain: Any, what: str) -> list[np.ndarray]:
    """The dense site tensors of an MPS ``(left, physical, right)`` or MPO ``(left, out, in, right)``
    as NumPy arrays (concrete values only: tracers raise :class:`NotDifferentiableError`)."""
    ts = chain.dense().tensors if isinstance(chain, MPS) else chain.tensors
    return [np.array(to_numpy(t, what)) for t in ts]


def local_name(dims: Sequence[int], g: Grading | None, local: Any, what: str) -> str:
    """Our local space of a chain: ``local`` if given (checked against ``dims`` and the charges of
    ``g``), else the space of ``g``'s charge and the dimension, else the default of the dimension."""
    if local is not None:
        space = local_space(local)
        if any(d != space.dim for d in dims):
            raise DimensionMismatchError(f"{what}: local={space.name!r} has dimension {space.dim}, the sites {dims}")
        if g is not None and tuple(declared_charges(space.name, dims).get(g.charge, ())) != g.q:
            raise UnsupportedSiteError(
                f"{what}: the local space {space.name!r} does not declare psi's charges {g.label}"
            )
        return space.name
    if len(set(dims)) != 1:
        raise UnsupportedSiteError(f"{what}: sites of different dimensions {sorted(set(dims))}; one local space only")
    name = _BY_CHARGE.get((g.charge, dims[0])) if g is not None else _BY_DIM.get(dims[0])
    if name is None:
        raise UnsupportedSiteError(
            f"{what}: no local space of dimension {dims[0]}"
            + (f" conserving {g.label}" if g is not None else "")
            + "; pass local= (spin-1/2, spin-1, fermion, electron, tj, pauli)"
        )
    return name


def symmetric_sites_from(arrays: Sequence[np.ndarray], bonds: Sequence[Sequence[int]], g: Grading) -> list[Any]:
    """Symmetric sites from dense ``(left, physical, right)`` arrays and the charge of every bond
    state (``bonds[b]``: bond ``b``, the total charge of sites left of it): each bond's states are
    reordered so that those of one charge are next to each other (the same order on both of its
    sites), the physical legs are those of ``g``. Entries outside the blocks must be zero
    (:class:`SymmetryViolationError` otherwise)."""
    G = g.symmetry
    legs, orders = [], []
    for qs in bonds:
        qs = [G.canonical(int(q)) for q in qs]
        order = sorted(range(len(qs)), key=lambda k: order_key(qs[k]))
        sectors: dict[int, int] = {}
        for k in order:
            sectors[qs[k]] = sectors.get(qs[k], 0) + 1
        legs.append(Leg(G, sectors))
        orders.append(order)
    sites = []
    for i, a in enumerate(arrays):
        a = np.asarray(a)[orders[i]][:, :, orders[i + 1]]
        leg = phys_leg(G, g.q[i], i)[0]
        sites.append(SymmetricTensor.from_dense(tf.asarray(np.asfortranarray(a)), [legs[i], leg, legs[i + 1].dual()]))
    return sites


def _bond_charges(psi: MPS) -> list[list[int]]:
    """The charge of every bond state of a symmetric MPS (bond ``b``: left of site ``b``)."""
    legs = [psi.tensors[0].legs[0]] + [t.legs[2] for t in psi.tensors]
    return [[q for q, d in leg.sectors.items() for _ in range(d)] for leg in legs]


def _check(obj: Any, cls: type, what: str) -> None:
    if not isinstance(obj, cls):
        raise Tensor4allTypeError(f"{what} expects a tensor4all {cls.__name__}, got {type(obj).__name__}")


# ---- TeNPy ----------------------------------------------------------------------------------


def _default_site(tp: Any, local: str, conserve: str | None, what: str) -> Any:
    """The TeNPy site of our local space conserving ``conserve``."""
    ts = tp.networks.site
    if local in ("spin-1/2", "spin-1") and conserve in (None, "Sz"):
        return ts.SpinHalfSite(conserve=conserve) if local == "spin-1/2" else ts.SpinSite(S=1, conserve=conserve)
    if local == "pauli" and conserve is None:
        return ts.SpinHalfSite(conserve=None)
    if local == "fermion" and conserve in (None, "N"):
        return ts.FermionSite(conserve=conserve)
    both = {None: (None, None), "N": ("N", None), "N,Sz": ("N", "Sz")}
    if local in ("electron", "tj") and conserve in both:
        cls = ts.SpinHalfFermionSite if local == "electron" else ts.SpinHalfHoleSite
        return cls(*both[conserve])
    raise UnsupportedSiteError(
        f"{what}: no TeNPy site for {local!r} conserving {conserve!r}; supported: {_TENPY_SITES}"
    )


def _site_map(tp: Any, site: Any, what: str) -> tuple[str, np.ndarray]:
    """Our local space of a TeNPy site and its basis map: our state ``j`` is TeNPy's state
    ``m[j]`` in the ``conserve=None`` order."""
    ts = tp.networks.site
    d = site.dim
    if isinstance(site, ts.SpinHalfSite):
        return "spin-1/2", np.arange(2)
    if isinstance(site, ts.SpinSite) and d in (2, 3):
        return ("spin-1/2" if d == 2 else "spin-1"), np.arange(d)[::-1]
    for cls, name in ((ts.FermionSite, "fermion"), (ts.SpinHalfFermionSite, "electron"), (ts.SpinHalfHoleSite, "tj")):
        if isinstance(site, cls):
            return name, np.arange(d)
    if d in (2, 3) and {"Sz", "Sp"} <= set(site.opnames):  # a spin site built by hand (TeNPy's XXZChain)
        space = local_space(_BY_DIM[d])
        for m in (np.arange(d), np.arange(d)[::-1]):
            if all(
                np.allclose(_nc_op(site, op)[np.ix_(m, m)], space.matrix(o)) for op, o in (("Sz", "Sz"), ("Sp", "S+"))
            ):
                return space.name, m
    raise UnsupportedSiteError(
        f"{what}: the TeNPy site {type(site).__name__} (dimension {d}) has no tensor4all local space; "
        f"supported: {_TENPY_SITES}"
    )


def _width(cls: Any, key: str, L: int) -> dict:
    """The unit cell width TeNPy 1.1 asks for (the chain: its length), where the class takes it."""
    return {key: L} if key in inspect.signature(cls.__init__).parameters else {}


def _nc_op(site: Any, name: str) -> np.ndarray:
    """A TeNPy site's operator in its ``conserve=None`` basis order."""
    op = site.get_op(name).to_ndarray()
    out = np.empty_like(op)
    out[np.ix_(site.perm, site.perm)] = op
    return out


def _site_list(sites: Any, L: int, what: str) -> list[Any]:
    sites = list(sites) if isinstance(sites, (list, tuple)) else [sites] * L
    if len(sites) != L:
        raise DimensionMismatchError(f"{what}: {len(sites)} TeNPy sites for a chain of {L} sites")
    return sites


def _rows(qs: Sequence[int], conserve: str) -> np.ndarray:
    """Our integer charges as TeNPy's rows (``N,Sz``: the pair ``(N, 2Sz)``)."""
    return np.array([unpack(q, 2) if conserve == "N,Sz" else (q,) for q in qs], dtype=np.int64).reshape(len(qs), -1)


def _packed(rows: np.ndarray) -> list[int]:
    return [pack(r) for r in np.asarray(rows, dtype=np.int64).reshape(len(rows), -1)]


@thread_policy()  # the norm, TeNPy's canonical form
def to_tenpy(psi: MPS, sites: Any = None, *, local: str | None = None) -> Any:
    """The TeNPy MPS (``tenpy.networks.mps.MPS``, finite) of ``psi``: the same state, in TeNPy's
    canonical form, its norm in ``.norm``. ``sites``: a TeNPy site (for every site) or a list of
    them, default the site of ``psi``'s local space (``local``, else from its charge or dimension)
    conserving what ``psi`` conserves. A symmetric ``psi`` keeps its charges on every bond; a dense
    one gets the charges TeNPy detects when the sites conserve one."""
    _check(psi, MPS, "to_tenpy")  # before the import: a wrong argument is named with or without TeNPy
    tp = _tenpy()
    npc, L = tp.linalg.np_conserved, psi.L
    name = local_name(psi.phys_dims, psi._grading if psi.symmetric else None, local, "to_tenpy")
    if sites is None:
        sites = [_default_site(tp, name, psi.conserve, "to_tenpy")] * L
    sites = _site_list(sites, L, "to_tenpy")
    maps = [_site_map(tp, s, "to_tenpy")[1] for s in sites]
    if [s.dim for s in sites] != psi.phys_dims:
        raise DimensionMismatchError(f"to_tenpy: sites of dimensions {[s.dim for s in sites]}, psi {psi.phys_dims}")
    if float(psi.norm()) == 0.0:
        raise ZeroNormError("to_tenpy: the state has norm 0; TeNPy keeps states in canonical form, which it has not")
    chinfo = sites[0].leg.chinfo
    names = tuple(chinfo.names)
    bonds = None
    if psi.symmetric and names:
        if _CONSERVE_OF_TENPY.get(names) != psi.conserve:
            raise UnsupportedSiteError(f"to_tenpy: psi conserves {psi.conserve}, the TeNPy sites {list(names)}")
        bonds = _bond_charges(psi)
    legL = npc.LegCharge.from_trivial(1, chinfo, qconj=+1)  # charge 0, as our left boundary
    Bs = []
    for i, (a, s, m) in enumerate(zip(site_arrays(psi, "to_tenpy"), sites, maps)):
        b = np.empty_like(a)
        b[:, m, :] = a
        b = b[:, s.perm, :]  # TeNPy's conserve=None order, then the site's
        if bonds is not None:
            legs = [legL, s.leg, npc.LegCharge.from_qflat(chinfo, _rows(bonds[i + 1], psi.conserve), qconj=-1)]
        elif not names:
            legs = [legL, s.leg, npc.LegCharge.from_trivial(b.shape[2], chinfo, qconj=-1)]
        else:
            try:
                legs = npc.detect_legcharge(b, chinfo, [legL, s.leg, None], None, qconj=-1)
            except ValueError as exc:
                raise SymmetryViolationError(f"to_tenpy: site {i} carries no charge of {list(names)}: {exc}") from None
        try:
            Bs.append(npc.Array.from_ndarray(b, legs, dtype=b.dtype, labels=["vL", "p", "vR"]))
        except ValueError as exc:
            raise SymmetryViolationError(f"to_tenpy: site {i} is not in one sector of {list(names)}: {exc}") from None
        legL = legs[2].conj()
    SVs = [np.ones(1)] + [np.ones(d) for d in psi.bond_dims] + [np.ones(1)]
    cls, n = tp.networks.mps.MPS, npc.norm(Bs[0])
    if L == 1:
        return cls(sites, [Bs[0] / n], SVs, bc="finite", form="B", norm=n, **_width(cls, "unit_cell_width", L))
    out = cls(sites, Bs, SVs, bc="finite", form=None, **_width(cls, "unit_cell_width", L))
    out.canonical_form_finite(renormalize=False)
    return out


def from_tenpy(tenpy_mps: Any, *, symmetric: bool = True) -> MPS:
    """Our MPS of a finite TeNPy MPS (its norm included). With charges TeNPy conserves and we know
    (``2*Sz``, ``N``, ``N`` and ``2*Sz``) the MPS is symmetric in the same sector; with
    ``symmetric=False``, or sites without charges, dense."""
    tp = _tenpy()
    if not isinstance(tenpy_mps, tp.networks.mps.MPS):
        raise Tensor4allTypeError(f"from_tenpy expects a tenpy.networks.mps.MPS, got {type(tenpy_mps).__name__}")
    if tenpy_mps.bc != "finite" or list(getattr(tenpy_mps, "_p_label", ["p"])) != ["p"]:
        raise UnsupportedSiteError(
            f"from_tenpy: only finite MPS with one physical leg per site, got bc={tenpy_mps.bc!r} "
            f"and legs {getattr(tenpy_mps, '_p_label', None)}"
        )
    sites = list(tenpy_mps.sites)
    found = [_site_map(tp, s, "from_tenpy") for s in sites]
    arrays, Bs = [], []
    for i, (s, (_, m)) in enumerate(zip(sites, found)):
        B = tenpy_mps.get_B(i, form="B").transpose(["vL", "p", "vR"])
        b = B.to_ndarray()
        nc = np.empty_like(b)
        nc[:, s.perm, :] = b
        arrays.append(nc[:, m, :])
        Bs.append(B)
    arrays[0] = arrays[0] * tenpy_mps.norm
    names = tuple(sites[0].leg.chinfo.names)
    if not symmetric or not names:
        return MPS(arrays)
    conserve = _CONSERVE_OF_TENPY.get(names)
    locals_ = {name for name, _ in found}
    if conserve is None or len(locals_) != 1:
        raise UnsupportedSiteError(
            f"from_tenpy: the TeNPy charges {list(names)} on sites {sorted(locals_)} have no tensor4all sectors "
            "(conserved: 2*Sz, N, or N and 2*Sz on one site type); pass symmetric=False for a dense MPS"
        )
    g = grading(conserve, locals_.pop(), [s.dim for s in sites], "from_tenpy")
    G = g.symmetry
    start = _packed(Bs[0].get_leg("vL").to_qflat())[0]
    bonds, total = [[G.identity]], 0
    for i, (B, s, (_, m)) in enumerate(zip(Bs, sites, found)):
        nc = np.empty(s.dim, dtype=np.int64)
        nc[s.perm] = _packed(s.leg.to_qflat())
        if tuple(G.canonical(int(q)) for q in nc[m]) != g.q[i]:
            raise UnsupportedSiteError(f"from_tenpy: site {i} has the charges {list(nc[m])}, expected {list(g.q[i])}")
        total += pack(B.qtotal)
        bonds.append([q - start + total for q in _packed(B.get_leg("vR").to_qflat())])
    return MPS._symmetric(symmetric_sites_from(arrays, bonds, g), g)


@thread_policy()  # TeNPy's MPO set-up (its charge detection, identity checks)
def mpo_to_tenpy(H: MPO, sites: Any = None) -> Any:
    """The TeNPy MPO (finite) of ``H``; ``sites`` as in :func:`to_tenpy` (default: the site of
    ``H.local`` conserving ``H.conserve``, whose bond charges TeNPy detects)."""
    _check(H, MPO, "mpo_to_tenpy")
    tp = _tenpy()
    npc, L = tp.linalg.np_conserved, H.L
    dims = [t.shape[1] for t in H.tensors]
    if sites is None:
        sites = [_default_site(tp, local_name(dims, None, H.local, "mpo_to_tenpy"), H.conserve, "mpo_to_tenpy")] * L
    sites = _site_list(sites, L, "mpo_to_tenpy")
    chinfo = sites[0].leg.chinfo
    legL = npc.LegCharge.from_trivial(1, chinfo, qconj=+1)
    Ws = []
    for i, (w, s) in enumerate(zip(site_arrays(H, "mpo_to_tenpy"), sites)):
        m = _site_map(tp, s, "mpo_to_tenpy")[1]
        if s.dim != w.shape[1]:
            raise DimensionMismatchError(f"mpo_to_tenpy: site {i} has dimension {w.shape[1]}, its TeNPy site {s.dim}")
        nc = np.empty_like(w)
        nc[np.ix_(range(w.shape[0]), m, m, range(w.shape[3]))] = w
        nc = nc[:, s.perm][:, :, s.perm]
        try:
            legs = npc.detect_legcharge(nc, chinfo, [legL, s.leg, s.leg.conj(), None], None, qconj=-1)
            Ws.append(npc.Array.from_ndarray(nc, legs, dtype=nc.dtype, labels=["wL", "p", "p*", "wR"]))
        except ValueError as exc:
            raise SymmetryViolationError(f"mpo_to_tenpy: site {i} does not conserve {chinfo.names}: {exc}") from None
        legL = legs[3].conj()
    cls, ids = tp.networks.mpo.MPO, {"IdL": [0] + [None] * L, "IdR": [None] * L + [0]}
    return cls(sites, Ws, bc="finite", **ids, **_width(cls, "mps_unit_cell_width", L))


def mpo_from_tenpy(tenpy_mpo: Any) -> MPO:
    """Our (dense) MPO of a finite TeNPy MPO; the boundary rows are those TeNPy's ``IdL[0]`` and
    ``IdR[L]`` select."""
    tp = _tenpy()
    if not isinstance(tenpy_mpo, tp.networks.mpo.MPO):
        raise Tensor4allTypeError(f"mpo_from_tenpy expects a tenpy.networks.mpo.MPO, got {type(tenpy_mpo).__name__}")
    if tenpy_mpo.bc != "finite":
        raise UnsupportedSiteError(f"mpo_from_tenpy: only finite MPOs, got bc={tenpy_mpo.bc!r}")
    L = tenpy_mpo.L
    ws, names = [], set()
    for i, s in enumerate(tenpy_mpo.sites):
        name, m = _site_map(tp, s, "mpo_from_tenpy")
        names.add(name)
        w = tenpy_mpo.get_W(i).transpose(["wL", "p", "p*", "wR"]).to_ndarray()
        nc = np.empty_like(w)
        nc[np.ix_(range(w.shape[0]), s.perm, s.perm, range(w.shape[3]))] = w
        ws.append(nc[:, m][:, :, m])
    left, right = tenpy_mpo.get_IdL(0), tenpy_mpo.get_IdR(L - 1)
    if left is None or right is None:
        raise UnsupportedSiteError("mpo_from_tenpy: the TeNPy MPO has no IdL[0] or IdR[L] to close its boundaries")
    ws[0] = ws[0][left : left + 1]
    ws[-1] = ws[-1][..., right : right + 1]
    return MPO(ws, local=names.pop() if len(names) == 1 else None)


# ---- quimb ------------------------------------------------------------------------------------


def to_quimb(psi: MPS) -> Any:
    """The quimb ``MatrixProductState`` (shape ``'lrp'``, site indices ``k0, k1, ...``) of ``psi``
    (a symmetric MPS goes densely)."""
    _check(psi, MPS, "to_quimb")
    qtn = _quimb().tensor
    arrays = site_arrays(psi, "to_quimb")
    if psi.L == 1:
        return qtn.MatrixProductState([arrays[0][0, :, 0]], shape="lrp")
    out = [arrays[0][0].T] + [a.transpose(0, 2, 1) for a in arrays[1:-1]] + [arrays[-1][:, :, 0]]
    return qtn.MatrixProductState(out, shape="lrp")


def _quimb_arrays(q: Any, site_inds: Sequence[Any], what: str) -> list[np.ndarray]:
    """The site tensors of a quimb MPS/MPO as arrays ``(left, site indices..., right)``."""
    qtn = _quimb().tensor
    if getattr(q, "cyclic", False):
        raise UnsupportedSiteError(f"{what}: only open chains, the quimb network is cyclic")
    ts = []
    for i in range(q.L):
        t = q[q.site_tag(i)]
        if not isinstance(t, qtn.Tensor):
            raise UnsupportedSiteError(f"{what}: site {i} holds {len(t.tensors)} tensors; one per site expected")
        ts.append(t)
    out = []
    for i, t in enumerate(ts):
        inds = list(site_inds[i])
        bonds = [set(t.inds) & set(ts[j].inds) if 0 <= j < q.L else set() for j in (i - 1, i + 1)]
        if any(len(b) > 1 for b in bonds) or len(t.inds) != len(inds) + sum(map(len, bonds)):
            raise UnsupportedSiteError(f"{what}: site {i} has the indices {t.inds}; not a chain")
        order = [*bonds[0], *inds, *bonds[1]]
        a = np.asarray(t.transpose(*order).data)
        if not bonds[0]:
            a = a[None]
        out.append(a if bonds[1] else a[..., None])
    return out


def _charges_of(arrays: list[np.ndarray], g: Grading, what: str) -> tuple[list[np.ndarray], list[list[int]]]:
    """The charge of every bond state from its entries above 1e-12 of its own largest (bond states
    that are exactly zero dropped). Per bond state, not per site: a gauge that scales a bond state
    down on one site and up on the next leaves the state unchanged (a column of 1e-13 of the site's
    largest entry is not zero, and dropping it lost half of the state)."""
    G, arrays = g.symmetry, list(arrays)
    bonds = [[G.identity]]
    for i in range(len(arrays)):
        a = arrays[i]
        column = np.abs(a).max(axis=(0, 1), initial=0.0)
        nz = np.abs(a) > 1e-12 * column[None, None, :]
        keep = column > 0.0
        if i + 1 < len(arrays):
            a, arrays[i + 1] = a[:, :, keep], arrays[i + 1][keep]
            nz = nz[:, :, keep]
        charges = []
        for r in range(a.shape[2]):
            found = {G.add(bonds[-1][x], g.q[i][s]) for x, s in zip(*np.nonzero(nz[:, :, r]))}
            if len(found) != 1:
                raise SymmetryViolationError(
                    f"{what}: state {r} of bond {i + 1} carries the charges {sorted(found)} of {g.label} "
                    "(twice the value for Sz); the state is not in one sector in this gauge"
                )
            charges.append(found.pop())
        arrays[i] = a
        bonds.append(charges)
    return arrays, bonds


def from_quimb(q_mps: Any, *, conserve: str | None = None, local: str | None = None) -> MPS:
    """Our MPS of a quimb ``MatrixProductState`` (open boundaries). With ``conserve`` (``"Sz"``,
    ``"N"``, ``"N,Sz"``, ``"parity"``) the MPS is symmetric, its sectors read from the tensors
    (``local``: the local space, default by dimension)."""
    qtn = _quimb().tensor
    if not isinstance(q_mps, qtn.MatrixProductState):
        raise Tensor4allTypeError(f"from_quimb expects a quimb.tensor.MatrixProductState, got {type(q_mps).__name__}")
    arrays = _quimb_arrays(q_mps, [[q_mps.site_ind(i)] for i in range(q_mps.L)], "from_quimb")
    if conserve is None:
        return MPS(arrays)
    dims = [a.shape[1] for a in arrays]
    if local is None:
        local = _BY_CHARGE.get((CONSERVED_CHARGES.get(conserve, ("",))[0], dims[0]))
    g = grading(conserve, None if local is None else local_space(local).name, dims, "from_quimb")
    arrays, bonds = _charges_of(arrays, g, "from_quimb")
    return MPS._symmetric(symmetric_sites_from(arrays, bonds, g), g)


def mpo_to_quimb(H: MPO) -> Any:
    """The quimb ``MatrixProductOperator`` (shape ``'lrud'``: upper index ``k`` the output, lower
    ``b`` the input, as ``to_dense`` and ``apply`` read them) of ``H``."""
    _check(H, MPO, "mpo_to_quimb")
    qtn = _quimb().tensor
    ws = site_arrays(H, "mpo_to_quimb")
    if H.L == 1:
        return qtn.MatrixProductOperator([ws[0][0, :, :, 0]], shape="lrud")
    out = [ws[0][0].transpose(2, 0, 1)] + [w.transpose(0, 3, 1, 2) for w in ws[1:-1]] + [ws[-1][..., 0]]
    return qtn.MatrixProductOperator(out, shape="lrud")


def mpo_from_quimb(q_mpo: Any, *, local: str | None = None) -> MPO:
    """Our MPO ``(left, out, in, right)`` of a quimb ``MatrixProductOperator`` (upper index the
    output)."""
    qtn = _quimb().tensor
    if not isinstance(q_mpo, qtn.MatrixProductOperator):
        raise Tensor4allTypeError(f"mpo_from_quimb expects a quimb MatrixProductOperator, got {type(q_mpo).__name__}")
    inds = [[q_mpo.upper_ind(i), q_mpo.lower_ind(i)] for i in range(q_mpo.L)]
    return MPO(_quimb_arrays(q_mpo, inds, "mpo_from_quimb"), local=local)
