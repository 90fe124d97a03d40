"""Matrix product states: :class:`MPS` (a tidu pytree over its site tensors) and
:func:`overlap`.

Site tensors are tenferro tensors with index order ``(left bond, physical, right
bond)``; the boundary bonds have dimension 1. Functions that return numbers built
from the tensors (``overlap``, ``norm``, ``expect``, ``correlation``, ``to_dense``)
are written with tenferro operations and are differentiable with tidu;
``canonicalize`` and ``normalize`` are too (QR/LQ from ``tenferro.linalg``).
``compress``, ``from_dense`` and ``entanglement_entropy`` are numerical tools on
concrete values (SciPy SVD) and raise :class:`NotDifferentiableError` on tracers.
"""
from __future__ import annotations

import os
import re
from typing import Any, Sequence

import numpy as np
import scipy.linalg

import tenferro as tf
import tidu

from ._chain import SiteChain
from ._errors import (
    DimensionMismatchError, MPSFileError, MPSFileNotFoundError, SiteOutOfRangeError, Tensor4allTypeError,
    UnsupportedFileFormatError,
)
from ._local_ops import default_local_space, local_space
from ._truncation import svd_truncated
from ._util import as_tensor, check_positive_int, np_dtype, to_numpy

__all__ = ["MPS", "overlap"]


def _shape(t: Any) -> tuple[int, ...]:
    return tuple(t.shape)


class MPS(SiteChain):
    """A matrix product state on ``L`` sites.

    ``MPS(tensors)`` takes site tensors of shape ``(left, physical, right)`` (tenferro
    tensors, NumPy arrays or tidu tracers) with boundary bonds of dimension 1. An MPS
    is a tidu pytree over its site tensors: ``tidu.grad`` of a function of an MPS
    returns an MPS of gradients. ``canonicalize``, ``normalize`` and ``compress``
    change the MPS in place (the site tensors themselves are immutable values).
    """

    __slots__ = ("_tensors",)

    def __init__(self, tensors: Sequence[Any]):
        ts = [as_tensor(t) for t in tensors]
        if not ts:
            raise DimensionMismatchError("an MPS needs at least one site tensor, got none")
        for i, t in enumerate(ts):
            if len(_shape(t)) != 3:
                raise DimensionMismatchError(
                    f"MPS site tensor {i} must have 3 indices (left bond, physical, right bond), "
                    f"got shape {_shape(t)}"
                )
        if _shape(ts[0])[0] != 1 or _shape(ts[-1])[2] != 1:
            raise DimensionMismatchError(
                f"MPS boundary bonds must have dimension 1, got left {_shape(ts[0])[0]} and "
                f"right {_shape(ts[-1])[2]}"
            )
        for i in range(len(ts) - 1):
            if _shape(ts[i])[2] != _shape(ts[i + 1])[0]:
                raise DimensionMismatchError(
                    f"MPS bond {i} mismatch: site {i} has right bond {_shape(ts[i])[2]}, "
                    f"site {i + 1} has left bond {_shape(ts[i + 1])[0]}"
                )
        self._tensors = ts

    @classmethod
    def _from_leaves(cls, leaves: Sequence[Any]) -> "MPS":
        obj = cls.__new__(cls)
        obj._tensors = list(leaves)
        return obj

    # ---- constructors ---------------------------------------------------------------
    @classmethod
    def random(cls, L: int, d: int = 2, bond_dim: int = 8, seed: int = 0, dtype: Any = tf.float64) -> "MPS":
        """A normalized random MPS (Gaussian entries, then right-canonicalized).

        Bond ``b`` has dimension ``min(bond_dim, d**(b+1), d**(L-b-1))``.
        """
        L = check_positive_int(L, "L (number of sites)")
        d = check_positive_int(d, "d (physical dimension)")
        bond_dim = check_positive_int(bond_dim, "bond_dim")
        dt = np_dtype(dtype)
        rng = np.random.default_rng(seed)
        dims = [1] + [min(bond_dim, d ** min(b + 1, L - b - 1, 60)) for b in range(L - 1)] + [1]
        ts = []
        for i in range(L):
            shape = (dims[i], d, dims[i + 1])
            a = rng.standard_normal(shape)
            if np.issubdtype(dt, np.complexfloating):
                a = a + 1j * rng.standard_normal(shape)
            ts.append(a.astype(dt))
        ts = _right_canonical_numpy(ts)
        return cls(ts)

    @classmethod
    def product_state(cls, states: Sequence[Any], d: int = 2) -> "MPS":
        """A product state; each entry of ``states`` is a basis index or a local vector of length ``d``."""
        d = check_positive_int(d, "d (physical dimension)")
        if len(states) == 0:
            raise DimensionMismatchError("product_state needs at least one site, got an empty list")
        vecs = []
        for i, s in enumerate(states):
            if isinstance(s, (int, np.integer)) and not isinstance(s, bool):
                if not 0 <= s < d:
                    raise SiteOutOfRangeError(f"product_state: site {i} state index {s} is outside 0..{d - 1}")
                v = np.zeros(d)
                v[s] = 1.0
            else:
                v = np.asarray(s)
                if v.shape != (d,):
                    raise DimensionMismatchError(
                        f"product_state: site {i} local vector must have shape ({d},), got {v.shape}"
                    )
            vecs.append(v)
        dt = np.result_type(*vecs, np.float64)
        return cls([v.astype(dt).reshape(1, d, 1) for v in vecs])

    @classmethod
    def from_dense(cls, vector: Any, L: int, d: int = 2, max_bond: int | None = None, cutoff: float = 0.0) -> "MPS":
        """The MPS of a dense ``d**L`` vector in ``np.kron`` order (site 0 most significant),
        by successive truncated SVDs."""
        L = check_positive_int(L, "L (number of sites)")
        d = check_positive_int(d, "d (physical dimension)")
        if max_bond is not None:
            max_bond = check_positive_int(max_bond, "max_bond")
        v = np.asarray(to_numpy(vector, "MPS.from_dense")).reshape(-1)
        if v.size != d**L:
            raise DimensionMismatchError(f"from_dense: vector has {v.size} entries, expected d**L = {d**L}")
        ts = []
        rest = v.reshape(1, -1)
        left = 1
        for _ in range(L - 1):
            m = rest.reshape(left * d, -1)
            u, s, vh, _ = svd_truncated(m, max_bond, cutoff)
            k = len(s)
            ts.append(u.reshape(left, d, k))
            rest = s[:, None] * vh
            left = k
        ts.append(rest.reshape(left, d, 1))
        return cls(ts)

    # ---- properties -----------------------------------------------------------------
    def __repr__(self) -> str:
        return f"MPS(L={self.L}, phys_dims={sorted(set(self.phys_dims))}, bond_dims={self.bond_dims}, dtype={self.dtype})"

    # ---- dense conversion -----------------------------------------------------------
    def to_dense(self) -> Any:
        """The state as a ``prod(d)`` vector in ``np.kron`` order (site 0 most significant)."""
        t0 = self._tensors[0]
        v = tf.reshape(t0, (_shape(t0)[1], _shape(t0)[2]))
        for a in self._tensors[1:]:
            n, (_, d, r) = _shape(v)[0], _shape(a)
            v = tf.reshape(tf.einsum("nc,csd->nsd", v, a), (n * d, r), order="C")
        return tf.reshape(v, (_shape(v)[0],))

    # ---- canonical forms ------------------------------------------------------------
    def canonicalize(self, center: int) -> "MPS":
        """Bring the MPS to mixed canonical form around ``center`` (QR sweeps from both ends),
        in place; returns ``self``."""
        center = self._check_site(center, "canonicalize: center")
        ts = self._tensors
        for i in range(center):
            dl, d, dr = _shape(ts[i])
            q, r = tf.linalg.qr(tf.reshape(ts[i], (dl * d, dr)))
            ts[i] = tf.reshape(q, (dl, d, _shape(q)[1]))
            ts[i + 1] = tf.einsum("ab,bsc->asc", r, ts[i + 1])
        for i in range(len(ts) - 1, center, -1):
            dl, d, dr = _shape(ts[i])
            lo, q = tf.linalg.lq(tf.reshape(ts[i], (dl, d * dr)))
            ts[i] = tf.reshape(q, (_shape(q)[0], d, dr))
            ts[i - 1] = tf.einsum("asb,bc->asc", ts[i - 1], lo)
        return self

    def norm(self) -> Any:
        """``sqrt(<psi|psi>)`` as a real scalar tensor (differentiable)."""
        return tf.sqrt(tf.real(overlap(self, self)))

    def normalize(self) -> "MPS":
        """Scale to unit norm in place (the first site tensor is divided); returns ``self``."""
        self._tensors[0] = self._tensors[0] / self.norm()
        return self

    def compress(self, max_bond: int | None = None, cutoff: float = 0.0) -> float:
        """Truncate bonds by SVD in place (left-canonical sweep, then right-to-left SVDs).

        Returns the discarded weight: the sum over bonds of the relative discarded
        squared singular values. The norm is not restored after truncation.
        """
        if max_bond is not None:
            max_bond = check_positive_int(max_bond, "max_bond")
        ts = [to_numpy(t, "MPS.compress") for t in self._tensors]
        ts = _left_canonical_numpy(ts)
        total = 0.0
        for i in range(len(ts) - 1, 0, -1):
            dl, d, dr = ts[i].shape
            u, s, vh, w = svd_truncated(ts[i].reshape(dl, d * dr), max_bond, cutoff)
            total += w
            ts[i] = vh.reshape(len(s), d, dr)
            ts[i - 1] = np.tensordot(ts[i - 1], u * s, axes=(2, 0))
        self._tensors = [tf.asarray(np.asfortranarray(t)) for t in ts]
        return total

    # ---- files ----------------------------------------------------------------------
    def save(self, path: Any, format: str | None = None) -> None:  # noqa: A002
        """Write the site tensors to ``path``; the format follows the extension unless given.

        * ``.arrow`` (Arrow IPC, via :func:`tenferro.save`) or ``.parquet``: one entry
          ``site_0000``, ``site_0001``, ... per site, dimension names
          ``("left", "physical", "right")``; needs pyarrow (the ``arrow`` extra).
        * ``.npz`` (NumPy): arrays ``site_0000``, ... of the same shapes.

        The values are saved, not gradients: an MPS of tidu tracers cannot be saved.
        """
        fmt = _file_format(path, format)
        arrays = {_site_key(i): np.asarray(to_numpy(t, "MPS.save")) for i, t in enumerate(self._tensors)}
        if fmt == "npz":
            with open(os.fspath(path), "wb") as fh:  # np.savez would append ".npz" to other names
                np.savez(fh, **arrays)
            return
        tf.save(path, {k: tf.asarray(v) for k, v in arrays.items()}, format=fmt,
                dim_names={k: _DIM_NAMES for k in arrays})

    @classmethod
    def load(cls, path: Any, format: str | None = None) -> "MPS":  # noqa: A002
        """Read an MPS written by :meth:`save` (format from the extension unless given).
        The tensors are read into memory (not memory-mapped views of the file)."""
        fmt = _file_format(path, format)
        if not os.path.isfile(os.fspath(path)):
            raise MPSFileNotFoundError(f"MPS.load: no file {os.fspath(path)!r}; expected a file written by MPS.save "
                                       "(or tensor4all dmrg --save)")
        if fmt == "npz":
            with np.load(os.fspath(path), allow_pickle=False) as data:
                entries = {k: np.asfortranarray(data[k]) for k in data.files}
        else:
            entries = dict(tf.load(path, mmap=False))
        keys = sorted(k for k in entries if _SITE_KEY.fullmatch(k))
        if not keys or keys != [_site_key(i) for i in range(len(keys))]:
            raise MPSFileError(
                f"MPS.load: {os.fspath(path)!r} holds no MPS: expected entries site_0000, site_0001, ..., "
                f"got {sorted(entries)[:6]}"
            )
        return cls([entries[k] for k in keys])

    # ---- measurements ---------------------------------------------------------------
    def expect(self, op: Any, site: int, local: Any = None) -> Any:
        """``<psi|op_site|psi> / <psi|psi>``; ``op`` is a name of the local space
        (default by dimension: 2 -> spin-1/2, 3 -> spin-1) or a matrix. The result is
        real for Hermitian operators."""
        site = self._check_site(site, "expect: site")
        m = self._op_matrix(op, site, local)
        return self._ratio({site: m}, _is_hermitian(m))

    def correlation(self, op_a: Any, op_b: Any, i: int, j: int, local: Any = None) -> Any:
        """``<psi|A_i B_j|psi> / <psi|psi>`` (for ``i == j`` the product ``A B`` at site ``i``)."""
        i = self._check_site(i, "correlation: site i")
        j = self._check_site(j, "correlation: site j")
        a = self._op_matrix(op_a, i, local)
        b = self._op_matrix(op_b, j, local)
        ops = {i: a @ b} if i == j else {i: a, j: b}
        herm = all(_is_hermitian(m) for m in ops.values()) and (
            i != j or np.allclose(a @ b, (a @ b).conj().T)
        )
        return self._ratio(ops, herm)

    def entanglement_entropy(self, bond: int | None = None) -> Any:
        """Von Neumann entropy (natural log) of the Schmidt spectrum at ``bond`` (between
        sites ``bond`` and ``bond + 1``); ``bond=None`` gives the list for all bonds."""
        if bond is not None and not (isinstance(bond, (int, np.integer)) and 0 <= bond < self.L - 1):
            raise SiteOutOfRangeError(f"entanglement_entropy: bond {bond!r} is outside 0..{self.L - 2}")
        spectra = self.schmidt_values()
        ents = [float(-np.sum(p * np.log(p))) for p in (s * s / np.sum(s * s) for s in spectra) for p in [p[p > 0]]]
        return ents if bond is None else ents[bond]

    def schmidt_values(self) -> list[np.ndarray]:
        """The Schmidt values (singular values of the normalized state) at every bond."""
        ts = _right_canonical_numpy([to_numpy(t, "MPS.schmidt_values") for t in self._tensors])
        out = []
        for i in range(len(ts) - 1):
            dl, d, dr = ts[i].shape
            u, s, vh = scipy.linalg.svd(ts[i].reshape(dl * d, dr), full_matrices=False)
            out.append(s / np.linalg.norm(s))
            ts[i + 1] = np.tensordot(s[:, None] * vh, ts[i + 1], axes=(1, 0))
        return out

    # ---- helpers --------------------------------------------------------------------
    def _check_site(self, site: Any, what: str) -> int:
        if not isinstance(site, (int, np.integer)) or isinstance(site, bool) or not 0 <= site < self.L:
            raise SiteOutOfRangeError(f"{what} {site!r} is outside 0..{self.L - 1}")
        return int(site)

    def _op_matrix(self, op: Any, site: int, local: Any) -> np.ndarray:
        d = self.phys_dims[site]
        if isinstance(op, str):
            space = default_local_space(d) if local is None else local_space(local)
            m = space.matrix(op)
        else:
            m = np.asarray(to_numpy(op, "operator matrix"))
        if m.shape != (d, d):
            raise DimensionMismatchError(f"operator at site {site} must be {d}x{d}, got shape {m.shape}")
        return m

    def _ratio(self, ops: dict[int, np.ndarray], hermitian: bool) -> Any:
        num = _sandwich(self, ops)
        den = tf.real(overlap(self, self))
        val = num / den
        return tf.real(val) if hermitian else val


def _is_hermitian(m: np.ndarray) -> bool:
    return bool(np.allclose(m, m.conj().T, rtol=0, atol=1e-14))


def _sandwich(psi: MPS, ops: dict[int, np.ndarray]) -> Any:
    """``<psi| prod_i ops[i] |psi>`` (unnormalized), left to right."""
    env = None
    for i, a in enumerate(psi._tensors):
        ca = tf.conj(a)
        if i in ops:
            o = tf.asarray(ops[i])
            env = (tf.einsum("asc,st,atd->cd", ca, o, a) if env is None
                   else tf.einsum("ab,asc,st,btd->cd", env, ca, o, a))
        else:
            env = tf.einsum("asc,asd->cd", ca, a) if env is None else tf.einsum("ab,asc,bsd->cd", env, ca, a)
    return tf.reshape(env, ())


def overlap(a: MPS, b: MPS) -> Any:
    """``<a|b>`` (``a`` conjugated) as a scalar tensor; differentiable in both."""
    if not (isinstance(a, MPS) and isinstance(b, MPS)):
        raise Tensor4allTypeError(f"overlap expects two MPS, got {type(a).__name__} and {type(b).__name__}")
    if a.L != b.L or a.phys_dims != b.phys_dims:
        raise DimensionMismatchError(
            f"overlap: the states differ in length or physical dimensions: L={a.L} with {a.phys_dims} "
            f"vs L={b.L} with {b.phys_dims}"
        )
    env = None
    for x, y in zip(a._tensors, b._tensors):
        cx = tf.conj(x)
        env = tf.einsum("asc,asd->cd", cx, y) if env is None else tf.einsum("ab,asc,bsd->cd", env, cx, y)
    return tf.reshape(env, ())


def _left_canonical_numpy(ts: list[np.ndarray]) -> list[np.ndarray]:
    ts = list(ts)
    for i in range(len(ts) - 1):
        dl, d, dr = ts[i].shape
        q, r = np.linalg.qr(ts[i].reshape(dl * d, dr))
        ts[i] = q.reshape(dl, d, q.shape[1])
        ts[i + 1] = np.tensordot(r, ts[i + 1], axes=(1, 0))
    return ts


def _right_canonical_numpy(ts: list[np.ndarray]) -> list[np.ndarray]:
    ts = list(ts)
    for i in range(len(ts) - 1, 0, -1):
        dl, d, dr = ts[i].shape
        q, r = np.linalg.qr(ts[i].reshape(dl, d * dr).T)
        ts[i] = q.T.reshape(q.shape[1], d, dr)
        ts[i - 1] = np.tensordot(ts[i - 1], r.T, axes=(2, 0))
    n = np.linalg.norm(ts[0])
    if n > 0:
        ts[0] = ts[0] / n
    return ts


_DIM_NAMES = ("left", "physical", "right")
_SITE_KEY = re.compile(r"site_\d{4,}")
#: file formats of :meth:`MPS.save` by extension
FILE_FORMATS = {".arrow": "arrow", ".parquet": "parquet", ".npz": "npz"}


def _site_key(i: int) -> str:
    return f"site_{i:04d}"


def _file_format(path: Any, format: str | None) -> str:  # noqa: A002
    valid = sorted(set(FILE_FORMATS.values()))
    if format is not None:
        if format not in valid:
            raise UnsupportedFileFormatError(f"unknown MPS file format {format!r}; valid formats: {', '.join(valid)}")
        return format
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in FILE_FORMATS:
        raise UnsupportedFileFormatError(
            f"cannot tell the MPS file format from {os.fspath(path)!r}; use one of the extensions "
            f"{', '.join(FILE_FORMATS)} or pass format= ({', '.join(valid)})"
        )
    return FILE_FORMATS[suffix]


tidu.register_pytree_node(MPS, lambda m: (list(m._tensors), None), lambda _, leaves: MPS._from_leaves(leaves))
