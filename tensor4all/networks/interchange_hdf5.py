"""MPS and MPO files in the HDF5 layout of ITensors.jl: :func:`save_itensors_hdf5` writes a state
computed here so that ITensors.jl opens it (``h5open(f) do fid; read(fid, "psi", MPS); end``), and
:func:`load_itensors_hdf5` reads what ITensors.jl writes (``write(fid, "psi", psi)``). Needs h5py
(the ``interop`` extra).

The layout, from ITensors.jl's ``HDF5.write``/``HDF5.read`` methods (``ext/ITensorsHDF5Ext``:
``ITensorMPS/mps.jl``, ``mpo.jl``, ``itensor.jl``, ``indexset.jl``, ``index.jl``, ``tagset.jl``,
``qn.jl``, ``qnindex.jl``; ``NDTensors/ext/NDTensorsHDF5Ext``: ``dense.jl``, ``blocksparse.jl``).
Every group has the attributes ``type`` and ``version`` (``1``); strings are scalar UTF-8 strings
(HDF5.jl writes them fixed-length, null-terminated), integers ``Int64`` (ids ``UInt64``)::

    psi        type="MPS" (or "MPO")     length, rlim, llim; groups MPS[1] ... MPS[N] (MPO[n])
    MPS[n]     type="ITensor"            groups inds, storage
    inds       type="IndexSet"           length; groups index_1 ... index_k
    index_k    type="Index"              id, dim, dir (In -1, Out 1, Neither 0), plev; group tags
               attribute space_type      "Int", or "QNBlocks" with the group space
    tags       type="TagSet"             tags (comma-separated: "S=1/2,Site,n=1", "Link,l=1")
    space      type="QNBlocks"           length, dims; groups QN[1] ... (type="QN": names, vals,
                                         mods, four of each; an empty slot is "", 0, 0)
    storage    type="Dense{Float64}"     data: the entries in column-major order of inds
               "Dense{ComplexF64}"       (complex: compound {r, i})
               "BlockSparse{Float64}"    ndims, data, offsets: per stored block its block
                                         numbers (1-based, one per index) and its 0-based
                                         offset into data, where it lies column-major

What is written: ITensor's MPS has no boundary bonds, so site 1 has indices ``(s1, l1)``, site
``n`` ``(l(n-1), sn, ln)``, site ``N`` ``(l(N-1), sN)``; an MPO site ``(l(n-1), sn', sn, ln)``
(the output index primed, ``plev = 1``). Site indices carry ITensor's tags (``S=1/2``, ``S=1``,
``Electron``, ``Fermion``, ``tJ``, ``Qubit``, then ``Site`` and ``n=..``) and, by default,
ids that depend only on the position (``SITE_ID + n``), so a state and a Hamiltonian saved here
share their site indices in ITensors.jl (``inner(psi', H, psi)``); link ids are random.
``rlim = N + 1`` and ``llim = 0`` (no orthogonality centre claimed). A symmetric MPS is written
block-sparse with QN indices, as ITensor's QN MPS: charges ``"Sz"`` (twice Sz, as ITensors' spin
sites), ``"Nf"`` (modulus -1: fermionic, for fermion/electron/tj; ``"N"`` otherwise), ``"Parity"``
(modulus 2); link ``l`` points In at site ``l`` and Out at site ``l + 1``, the site indices Out, its
QNs the total charge of the sites to its left, so the last tensor's flux is the state's sector.
MPOs are written dense.

What is read: MPS and MPO groups of either the ``storage`` or the older ``store`` key with Dense or
BlockSparse storage of Float32/64 or ComplexF32/64 (also C++ ITensor's ``__complex__`` data), the
indices of each tensor in any order (links are the indices a neighbour shares, by id and prime
level). A QN MPS whose site charges we know (``Sz``; ``Nf`` or ``N``; both; ``Parity``) comes back
symmetric (the flux of every tensor moved onto the bonds); other QNs, and ``symmetric=False``,
give a dense MPS. Diag, Combiner and empty storage are not read.

>>> save_itensors_hdf5(psi, "state.h5", name="psi")        # doctest: +SKIP
>>> psi2 = load_itensors_hdf5("state.h5", name="psi")       # doctest: +SKIP
"""

from __future__ import annotations

import numbers
import os
import re
from typing import Any

import numpy as np

from tenferro.checks import import_optional, install_hint

from ..sites.charges import pack, unpack
from ..tools.errors import DimensionMismatchError, InvalidOptionError, OptionalDependencyError, Tensor4allTypeError
from .files import MPSFileError, MPSFileIOError, MPSFileNotFoundError, file_path
from .interchange import UnsupportedSiteError, local_name, site_arrays, symmetric_sites_from
from .mpo import MPO
from .mps import MPS
from .symmetric_sites import grading

__all__ = ["ITensorsFileError", "save_itensors_hdf5", "load_itensors_hdf5", "SITE_ID", "SITE_TAGS"]


class ITensorsFileError(MPSFileError):
    """An HDF5 file that holds no MPS or MPO of ITensors.jl's layout under the name asked for: no
    such group, a group of another type, missing or malformed entries, or not an HDF5 file."""


#: the id of site ``n`` (1-based) is ``SITE_ID + n`` unless ``site_ids`` are given
SITE_ID = 0x7434_6153_6974_6500
#: ITensors.jl's site tags of our local spaces
SITE_TAGS = {"spin-1/2": "S=1/2", "spin-1": "S=1", "electron": "Electron", "fermion": "Fermion", "tj": "tJ"}
SITE_TAGS["pauli"] = "Qubit"
_FERMIONIC = ("fermion", "electron", "tj")
_ELTYPES = {"float64": "Float64", "complex128": "ComplexF64", "float32": "Float32", "complex64": "ComplexF32"}
_STORAGE = re.compile(r"(Dense|BlockSparse)\{(Float64|ComplexF64|Float32|ComplexF32)\}")
#: ITensor's QN names -> what we conserve, and the names of its parts in our order
_CONSERVE_OF_QN = {
    frozenset({"Sz"}): ("Sz", ("Sz",)),
    frozenset({"Nf"}): ("N", ("Nf",)),
    frozenset({"N"}): ("N", ("N",)),
    frozenset({"Nf", "Sz"}): ("N,Sz", ("Nf", "Sz")),
    frozenset({"N", "Sz"}): ("N,Sz", ("N", "Sz")),
    frozenset({"Parity"}): ("parity", ("Parity",)),
}


def _h5py() -> Any:
    return import_optional(
        "h5py",
        OptionalDependencyError,
        f"ITensors.jl HDF5 files need h5py, which is not installed; {install_hint('interop')}",
    )


# ---- writing ------------------------------------------------------------------------------------


def _put_str(h5: Any, obj: Any, name: str, text: str, attr: bool = False) -> None:
    """A scalar fixed-length null-terminated UTF-8 string, as HDF5.jl writes a ``String``."""
    data = text.encode("utf-8")
    tid = h5.h5t.C_S1.copy()
    tid.set_size(max(len(data), 1))
    tid.set_strpad(h5.h5t.STR_NULLTERM)
    tid.set_cset(h5.h5t.CSET_UTF8)
    arr = np.array(data, dtype=f"S{max(len(data), 1)}")
    space = h5.h5s.create(h5.h5s.SCALAR)
    if attr:
        h5.h5a.create(obj.id, name.encode(), tid, space).write(arr, mtype=tid)
    else:
        h5.h5d.create(obj.id, name.encode(), tid, space).write(h5.h5s.ALL, h5.h5s.ALL, arr, mtype=tid)


def _group(h5: Any, parent: Any, name: str, kind: str) -> Any:
    g = parent.create_group(name)
    _put_str(h5, g, "type", kind, attr=True)
    g.attrs.create("version", np.int64(1))
    return g


def _write_qn(h5: Any, parent: Any, name: str, parts: list[tuple[str, int, int]]) -> None:
    g = _group(h5, parent, name, "QN")
    parts = sorted(parts) + [("", 0, 0)] * (4 - len(parts))
    g.create_dataset("names", data=[p[0] for p in parts], dtype=h5.string_dtype("utf-8"))
    g["vals"] = np.array([p[1] for p in parts], dtype=np.int64)
    g["mods"] = np.array([p[2] for p in parts], dtype=np.int64)


def _write_index(h5: Any, parent: Any, name: str, ix: dict) -> None:
    g = _group(h5, parent, name, "Index")
    g["id"] = np.uint64(ix["id"])
    g["dim"] = np.int64(ix["dim"])
    g["dir"] = np.int64(ix["dir"])
    _put_str(h5, _group(h5, g, "tags", "TagSet"), "tags", ix["tags"])
    g["plev"] = np.int64(ix["plev"])
    _put_str(h5, g, "space_type", "Int" if ix["space"] is None else "QNBlocks", attr=True)
    if ix["space"] is not None:
        s = _group(h5, g, "space", "QNBlocks")
        s["length"] = np.int64(len(ix["space"]))
        s["dims"] = np.array([d for _, d in ix["space"]], dtype=np.int64)
        for k, (qn, _) in enumerate(ix["space"]):
            _write_qn(h5, s, f"QN[{k + 1}]", qn)


def _write_itensor(h5: Any, parent: Any, name: str, inds: list[dict], storage: tuple) -> None:
    g = _group(h5, parent, name, "ITensor")
    s = _group(h5, g, "inds", "IndexSet")
    s["length"] = np.int64(len(inds))
    for k, ix in enumerate(inds):
        _write_index(h5, s, f"index_{k + 1}", ix)
    data = storage[1]
    st = _group(h5, g, "storage", f"{storage[0]}{{{_ELTYPES[data.dtype.name]}}}")
    if storage[0] == "BlockSparse":
        st["ndims"] = np.int64(len(inds))
    st["data"] = data
    if storage[0] == "BlockSparse":
        st["offsets"] = np.asarray(storage[2], dtype=np.int64)


def _qn_parts(q: int, conserve: str, local: str) -> list[tuple[str, int, int]]:
    """Our integer charge as ITensor's QN: (name, value, modulus) per part."""
    n_name, n_mod = ("Nf", -1) if local in _FERMIONIC else ("N", 1)
    if conserve == "Sz":
        return [("Sz", q, 1)]
    if conserve == "N":
        return [(n_name, q, n_mod)]
    if conserve == "N,Sz":
        n, sz = unpack(q, 2)
        return [(n_name, n, n_mod), ("Sz", sz, 1)]
    if conserve == "parity":
        return [("Parity", q, 2)]
    raise UnsupportedSiteError(f"save_itensors_hdf5: no ITensor QN for a state conserving {conserve!r}")


def _space(leg: Any, conserve: str | None, local: str) -> list | None:
    if conserve is None:
        return None
    return [(_qn_parts(q, conserve, local), d) for q, d in leg.sectors.items()]


def _block_sparse(t: Any, i: int, L: int) -> tuple:
    """The blocks of symmetric site ``i`` without its boundary legs: ``("BlockSparse", data,
    offsets)``, blocks in the order of their block numbers."""
    keep = [k for k in range(3) if (k != 0 or i > 0) and (k != 2 or i < L - 1)]
    rows = []
    for key, b in t.blocks.items():
        nums = tuple(list(t.legs[k].sectors).index(key[k]) + 1 for k in keep)
        rows.append((nums, np.asarray(b).reshape([b.shape[k] for k in keep])))
    rows.sort(key=lambda r: r[0])
    data, offsets, off = [], [], 0
    for nums, b in rows:
        data.append(b.ravel(order="F"))
        offsets += [*nums, off]
        off += b.size
    dtype = np.result_type(*[d.dtype for d in data]) if data else np.dtype(str(t.dtype))
    return "BlockSparse", np.concatenate(data).astype(dtype) if data else np.zeros(0, dtype), offsets


def _site_ids(site_ids: Any, L: int, what: str) -> list[int]:
    """The ITensors.jl ids of the ``L`` site indices: distinct integers in ``1 .. 2**64 - 1`` (an
    ``Index``'s ``UInt64`` id; equal ids would make one index of two, which the loader refuses)."""
    if isinstance(site_ids, (str, bytes)) or not hasattr(site_ids, "__len__"):
        raise Tensor4allTypeError(f"{what}: site_ids must be a sequence of {L} integers, got {type(site_ids).__name__}")
    ids = list(site_ids)
    if len(ids) != L:
        raise DimensionMismatchError(f"{what}: {len(ids)} site_ids for {L} sites")
    for n, x in enumerate(ids):
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
            raise Tensor4allTypeError(f"{what}: site_ids[{n}] must be an integer, got {type(x).__name__} {x!r}")
        if not 0 < x < 2**64:
            raise InvalidOptionError(f"{what}: site_ids[{n}] must be in 1 .. 2**64 - 1 (a UInt64 id), got {x}")
    if len(set(ids)) != L:
        raise InvalidOptionError(f"{what}: site_ids must be distinct (each names one site index), got {ids}")
    return [int(x) for x in ids]


def save_itensors_hdf5(
    psi_or_mpo: Any, path: Any, name: str = "psi", *, local: str | None = None, site_ids: Any = None
) -> None:
    """Write an MPS (dense or symmetric) or an MPO under the group ``name`` of the HDF5 file
    ``path`` in ITensors.jl's layout (see the module). The file is created if missing, other
    groups are kept and a group ``name`` is replaced: written under another name first and then
    renamed over it, so an error or an interrupt midway leaves the group that was there (the
    file itself is changed in place, not replaced as :meth:`MPS.save` replaces its file). ``local``: the local space (its ITensor
    tags; default from the charge or the dimension); ``site_ids``: the ``N`` site index ids
    (default ``SITE_ID + n``)."""
    what = "save_itensors_hdf5"
    if not isinstance(psi_or_mpo, (MPS, MPO)):
        raise Tensor4allTypeError(f"{what} expects an MPS or an MPO, got {type(psi_or_mpo).__name__}")
    if not isinstance(name, str) or not name:
        raise Tensor4allTypeError(f"{what}: name must be a non-empty string, got {name!r}")
    h5 = _h5py()
    path = file_path(path, what)
    obj, L = psi_or_mpo, psi_or_mpo.L
    is_mps = isinstance(obj, MPS)
    dims = obj.phys_dims if is_mps else [t.shape[1] for t in obj.tensors]
    g = obj._grading if is_mps and obj.symmetric else None
    if is_mps and obj.symmetric and g is None:
        raise UnsupportedSiteError(f"{what}: a symmetric MPS of unnamed charges; save psi.dense()")
    loc = local_name(dims, g, local if local is not None or is_mps else obj.local, what)
    ids = [SITE_ID + n + 1 for n in range(L)] if site_ids is None else _site_ids(site_ids, L, what)
    conserve = obj.conserve if g is not None else None
    tags = ",".join(sorted(filter(None, [SITE_TAGS.get(loc, ""), "Site"])))
    rng = np.random.default_rng()
    link_ids = [int(x) for x in rng.integers(1, 2**63, size=max(L - 1, 0))]
    if np.dtype(str(obj.dtype)).name not in _ELTYPES:
        raise Tensor4allTypeError(f"{what}: entries of dtype {obj.dtype} have no ITensors.jl storage")
    arrays = None if conserve is not None else site_arrays(obj, what)
    tensors = []
    for i in range(L):
        t = obj.tensors[i]
        shapes = [leg.dim for leg in t.legs] if conserve is not None else arrays[i].shape
        space = (lambda k: _space(t.legs[k], conserve, loc)) if conserve is not None else (lambda k: None)
        site = {"id": ids[i], "dim": dims[i], "dir": 1 if conserve else 0, "tags": f"{tags},n={i + 1}", "plev": 0}
        site["space"] = space(1)
        inds = [dict(site, plev=1), site] if not is_mps else [site]
        if i > 0:  # links point In at their left site, Out at their right one (ITensor's productMPS)
            inds.insert(0, _link(link_ids[i - 1], i, shapes[0], 1 if conserve else 0, space(0)))
        if i < L - 1:
            inds.append(_link(link_ids[i], i + 1, shapes[-1], -1 if conserve else 0, space(2)))
        if conserve is not None:
            storage = _block_sparse(t, i, L)
        else:
            a = arrays[i][0] if i == 0 else arrays[i]
            a = a[..., 0] if i == L - 1 else a
            storage = ("Dense", np.asarray(a).ravel(order="F"))
        tensors.append((inds, storage))
    try:
        if os.path.exists(path) and not os.path.isdir(path) and not h5.is_hdf5(path):
            raise ITensorsFileError(f"{what}: {path!r} exists and is not an HDF5 file; not overwritten")
        with h5.File(path, "a") as f:
            # written under a fresh name beside it, then renamed over it: an error or an interrupt
            # midway leaves the group that was there (before: deleted first, then nothing whole)
            draft = f"{name}.tensor4all-draft-{rng.integers(2**62):x}"
            kind = "MPS" if is_mps else "MPO"
            try:
                top = _group(h5, f, draft, kind)
                top["length"] = np.int64(L)
                top["rlim"] = np.int64(L + 1)
                top["llim"] = np.int64(0)
                for i, (inds, storage) in enumerate(tensors):
                    _write_itensor(h5, top, f"{kind}[{i + 1}]", inds, storage)
            except BaseException:
                if draft in f:
                    del f[draft]
                raise
            if name in f:
                del f[name]
            f.move(draft, name)
    except OSError as exc:
        raise MPSFileIOError(f"{what}: cannot write {path!r}: {exc}") from None


def _link(ident: int, n: int, dim: int, direction: int, space: Any) -> dict:
    return {"id": ident, "dim": dim, "dir": direction, "tags": f"Link,l={n}", "plev": 0, "space": space or None}


# ---- reading ------------------------------------------------------------------------------------


def _text(x: Any) -> str:
    x = x.item() if isinstance(x, np.ndarray) else x
    return x.decode("utf-8") if isinstance(x, (bytes, np.bytes_)) else str(x)


def _typed(g: Any, kind: str, where: str) -> Any:
    found = _text(g.attrs["type"]) if "type" in g.attrs else None
    if found != kind:
        raise ITensorsFileError(f"{where}: expected a group of type {kind!r}, found {found!r}")
    return g


def _read_index(g: Any, where: str) -> dict:
    _typed(g, "Index", where)
    ix = {k: int(g[k][()]) for k in ("id", "dim", "dir", "plev")}
    ix["tags"] = _text(_typed(g["tags"], "TagSet", where)["tags"][()])
    space_type = _text(g.attrs["space_type"]) if "space_type" in g.attrs else "Int"
    ix["space"] = None
    if space_type == "QNBlocks":
        s = _typed(g["space"], "QNBlocks", where)
        dims = np.asarray(s["dims"][()]).reshape(-1)
        ix["space"] = []
        for k, d in enumerate(dims):
            qg = _typed(s[f"QN[{k + 1}]"], "QN", where)
            names, vals, mods = ([_text(x) for x in qg["names"][()]], qg["vals"][()], qg["mods"][()])
            qn = {n: (int(v), int(m)) for n, v, m in zip(names, vals, mods) if int(m) != 0}
            ix["space"].append((qn, int(d)))
    return ix


def _read_itensor(g: Any, where: str) -> tuple[list[dict], np.ndarray]:
    """The indices of an ITensor group and its entries as a dense array over them."""
    _typed(g, "ITensor", where)
    s = _typed(g["inds"], "IndexSet", where)
    inds = [_read_index(s[f"index_{k + 1}"], where) for k in range(int(s["length"][()]))]
    key = next((k for k in ("storage", "store") if k in g), None)
    if key is None:
        raise ITensorsFileError(f"{where}: no storage (neither 'storage' nor 'store')")
    st = g[key]
    kind = _text(st.attrs.get("type", b""))
    m = _STORAGE.fullmatch(kind)
    if m is None:
        raise ITensorsFileError(f"{where}: storage of type {kind!r} is not read (Dense and BlockSparse only)")
    raw = st["data"]
    data = np.asarray(raw[()])
    if "__complex__" in raw.attrs:  # C++ ITensor: (re, im) pairs
        data = data.reshape(-1, 2) @ np.array([1.0, 1j])
    data = data.reshape(-1)
    dims = [ix["dim"] for ix in inds]
    if m.group(1) == "Dense":
        if data.size != int(np.prod(dims)):
            raise ITensorsFileError(f"{where}: {data.size} entries for indices of dimensions {dims}")
        return inds, data.reshape(dims, order="F")
    out = np.zeros(dims, dtype=data.dtype)
    if any(ix["space"] is None for ix in inds):
        raise ITensorsFileError(f"{where}: block-sparse storage over indices without QN blocks")
    starts = [np.cumsum([0] + [d for _, d in ix["space"]]) for ix in inds]
    for row in np.asarray(st["offsets"][()], dtype=np.int64).reshape(-1, len(inds) + 1):
        nums, off = row[:-1] - 1, int(row[-1])
        shape = [ix["space"][b][1] for ix, b in zip(inds, nums)]
        block = data[off : off + int(np.prod(shape))].reshape(shape, order="F")
        out[tuple(slice(s[b], s[b] + d) for s, b, d in zip(starts, nums, shape))] = block
    return inds, out


def _chain(tensors: list, n_site: int, where: str) -> list[tuple[list[int], int | None, int | None]]:
    """Per tensor: the axes of its site indices (the output first for an MPO) and of its links."""
    keys = [[(ix["id"], ix["plev"]) for ix in inds] for inds, _ in tensors]
    out = []
    for i, ks in enumerate(keys):
        links = []
        for j in (i - 1, i + 1):
            shared = [a for a, k in enumerate(ks) if 0 <= j < len(keys) and k in keys[j]]
            if len(shared) > 1:
                raise ITensorsFileError(f"{where}: tensors {i + 1} and {j + 1} share {len(shared)} indices")
            links.append(shared[0] if shared else None)
        site = [a for a in range(len(ks)) if a not in links]
        if len(site) != n_site:
            raise ITensorsFileError(f"{where}: tensor {i + 1} has {len(site)} site indices, expected {n_site}")
        site.sort(key=lambda a: -tensors[i][0][a]["plev"])
        out.append((site, *links))
    return out


def _ours(tensors: list, layout: list) -> list[np.ndarray]:
    """The tensors as ``(left, site..., right)`` arrays, dimension-1 bonds where none is stored."""
    arrays = []
    for (inds, x), (site, left, right) in zip(tensors, layout):
        axes = [a for a in (left, *site, right) if a is not None]
        a = np.transpose(x, axes)
        a = a if left is not None else a[None]
        arrays.append(a if right is not None else a[..., None])
    return arrays


def _symmetric(tensors: list, layout: list, arrays: list, local: Any, where: str) -> MPS:
    """A symmetric MPS from the QN indices: charges ``dir * QN`` per basis state, each tensor's
    flux moved onto the bonds to its right."""
    spaces = [inds[site[0]]["space"] for (inds, _), (site, _, _) in zip(tensors, layout)]
    names = frozenset(n for sp in spaces for qn, _ in sp for n in qn)
    if names not in _CONSERVE_OF_QN:
        raise UnsupportedSiteError(
            f"{where}: no tensor4all sectors for the QNs {sorted(names)} (known: Sz; Nf or N; both; Parity); "
            "pass symmetric=False for a dense MPS"
        )
    conserve, parts = _CONSERVE_OF_QN[names]
    dims = [a.shape[1] for a in arrays]
    tag = next((k for k, v in SITE_TAGS.items() if v in tensors[0][0][layout[0][0][0]]["tags"].split(",")), None)
    g = grading(conserve, local_name(dims, None, local or tag, where) if (local or tag) else None, dims, where)
    G = g.symmetry

    def charges(ix: dict) -> list[int]:
        return [
            G.canonical(ix["dir"] * pack([qn.get(p, (0, 0))[0] for p in parts]))
            for qn, d in ix["space"]
            for _ in range(d)
        ]

    bonds, total = [[G.identity]], G.identity
    for i, ((inds, x), (site, left, right)) in enumerate(zip(tensors, layout)):
        per = [charges(ix) for ix in inds]
        if tuple(per[site[0]]) != g.q[i]:
            raise UnsupportedSiteError(f"{where}: site {i + 1} has the charges {per[site[0]]}, expected {list(g.q[i])}")
        pos = np.unravel_index(int(np.argmax(np.abs(x))), x.shape) if x.size else ()
        for k, p in enumerate(pos):  # the tensor's flux
            total = G.add(total, per[k][p]) if np.abs(x).max() > 0 else total
        if i < len(tensors) - 1:
            bonds.append([G.add(G.negate(c), total) for c in per[right]] if right is not None else [total])
    bonds.append([total])
    return MPS._symmetric(symmetric_sites_from(arrays, bonds, g), g)


def load_itensors_hdf5(path: Any, name: str = "psi", *, symmetric: bool = True, local: str | None = None) -> Any:
    """Read the MPS or MPO that ITensors.jl (or :func:`save_itensors_hdf5`) wrote under ``name``
    in the HDF5 file ``path``: an :class:`MPS` (symmetric for a QN MPS of known charges unless
    ``symmetric=False``) or an :class:`MPO` (dense). ``local``: the local space, default from the
    site tags (``S=1/2``, ``Electron``, ...) or the dimension."""
    what = "load_itensors_hdf5"
    path = file_path(path, what)
    if not os.path.exists(path):
        raise MPSFileNotFoundError(f"{what}: no file {path!r}")
    if os.path.isdir(path):
        raise MPSFileIOError(f"{what}: {path!r} is a directory; expected an HDF5 file")
    h5 = _h5py()
    if not h5.is_hdf5(path):
        raise ITensorsFileError(f"{what}: {path!r} is not an HDF5 file")
    where = f"{what}: {path!r}, group {name!r}"
    try:
        with h5.File(path, "r") as f:
            if not isinstance(name, str) or name not in f or not isinstance(f[name], h5.Group):
                found = [
                    k for k in f if isinstance(f[k], h5.Group) and _text(f[k].attrs.get("type", b"")) in ("MPS", "MPO")
                ]
                raise ITensorsFileError(f"{where}: no such group; the file's MPS and MPO groups: {found}")
            top = f[name]
            kind = _text(top.attrs.get("type", b""))
            if kind not in ("MPS", "MPO"):
                raise ITensorsFileError(f"{where}: holds type {kind!r}, not an MPS or an MPO")
            L = int(top["length"][()])
            tensors = [_read_itensor(top[f"{kind}[{n + 1}]"], f"{where}, tensor {n + 1}") for n in range(L)]
    except KeyError as exc:
        raise ITensorsFileError(f"{where}: a missing entry ({exc})") from None
    except OSError as exc:
        raise MPSFileIOError(f"{what}: cannot read {path!r}: {exc}") from None
    layout = _chain(tensors, 1 if kind == "MPS" else 2, where)
    arrays = _ours(tensors, layout)
    if kind == "MPO":
        tag = next((k for k, v in SITE_TAGS.items() if v in tensors[0][0][layout[0][0][0]]["tags"].split(",")), None)
        return MPO(arrays, local=local or tag)
    qn = all(ix["space"] is not None for inds, _ in tensors for ix in inds)
    if symmetric and qn:
        return _symmetric(tensors, layout, arrays, local, where)
    return MPS(arrays)
