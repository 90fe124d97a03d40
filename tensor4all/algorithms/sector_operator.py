"""The effective Hamiltonian of one step of the charge-sector backend (:mod:`._sector_backend`):
``y[m] = sum_w LW[w][m] X[m - c_w] WR[w][m]^T`` over the sectors ``m`` of the cut, two GEMMs
per (MPO state, sector), or a few per block where the absorbed blocks' zero rectangles
(:func:`._sector_absorb.absorb_mpo`) are worth skipping."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..linalg.gemm_list import WORK, X, Y, GemmList, address, native_gemms
from ..tools.device import array_module, is_device_array, to_host
from .sector_dense import Dense, WholeProduct, gathered_matrix

__all__ = ["SectorOperator", "SPARSE_CALL_FLOPS", "DENSE_OPERATOR_BYTES", "GATHER_ENTRIES", "PreparedRectangles"]

Env = list  # per MPO state w: {charge: matrix}


SPARSE_CALL_FLOPS = 1e5
"""What one more GEMM call costs, in floating-point operations (about 3 us at 30 GFLOP/s): a
block of ``LW``/``WR`` is applied rectangle by rectangle when that saves more than this per
extra call (:func:`_rectangles`)."""


class PreparedRectangles:
    """The nonzero rectangles of the blocks of an absorbed ``LW``/``WR`` (``blocks``, with the
    ``regions`` that :func:`._sector_absorb.absorb_mpo` wrote), prepared for the operators that
    use them when first asked for (:meth:`get`), once per block: an operator that multiplies by
    the whole blocks, or holds its matrix (:class:`SectorOperator`), never pays for them."""

    __slots__ = ("blocks", "regions", "transpose", "_done")

    def __init__(self, blocks: Env, regions: list, transpose: bool):
        self.blocks, self.regions, self.transpose = blocks, regions, transpose
        self._done: dict[tuple[int, int], tuple] = {}

    def get(self, w: int, m: int) -> tuple | None:
        """Block ``(w, m)``'s rows times columns, written area and, where that area could pay,
        its rectangles merged where adjacent (their total area, count and views, transposed
        for ``transpose``); None for a block without regions."""
        key = (w, m)
        done = self._done.get(key)
        if done is None:
            rects = self.regions[w].get(m)
            if rects is None:
                return None
            done = self._done[key] = _prepare(self.blocks[w][m], rects, self.transpose)
        return done


def _prepare(mat: Any, rects: list, transpose: bool) -> tuple:
    rc = mat.shape[0] * mat.shape[1]
    area = sum((r1 - r0) * (c1 - c0) for r0, r1, c0, c1 in rects)
    if not rects or area >= 0.81 * rc:  # merging keeps the area: rectangles cannot pay (most blocks)
        return (rc, area, 0, 0, None)
    stacked = _merged(rects)
    views = [
        (r0, r1, c0, c1, mat[r0:r1, c0:c1].T if transpose else mat[r0:r1, c0:c1]) for r0, r1, c0, c1 in sorted(stacked)
    ]
    return (rc, area, sum((r1 - r0) * (c1 - c0) for r0, r1, c0, c1 in stacked), len(stacked), views)


def _merged(rects: list) -> list:
    """Rectangles side by side in one row band joined, then those one above the other in one
    column band."""
    rects = sorted(rects)
    merged = [list(rects[0])]
    for r0, r1, c0, c1 in rects[1:]:  # side by side in one row band
        last = merged[-1]
        if last[0] == r0 and last[1] == r1 and last[3] == c0:
            last[3] = c1
        else:
            merged.append([r0, r1, c0, c1])
    merged.sort(key=lambda r: (r[2], r[3], r[0]))
    stacked = [merged[0]]
    for r0, r1, c0, c1 in merged[1:]:  # one above the other in one column band
        last = stacked[-1]
        if last[2] == c0 and last[3] == c1 and last[1] == r0:
            last[1] = r1
        else:
            stacked.append([r0, r1, c0, c1])
    return stacked


NATIVE_CALL_FLOPS = 5e3
"""What one more GEMM costs in a native :class:`~tensor4all.linalg.gemm_list.GemmList` (about
0.2 us), in floating-point operations: the rectangles of a block pay far sooner there."""

NATIVE_MIN_TERMS = 16
"""The fewest terms for which an operator's products by blocks run natively (where Numba is
installed): below, the one-time start of the kernels (Numba's import, 0.2-0.5 s) is not worth it."""


def _rectangles(prepared: tuple | None, n: int, call: float) -> list | None:
    """A block's nonzero rectangles (views; ``prepared`` by :class:`PreparedRectangles`), or
    None where one product with the whole block (``n`` columns on the other side) is cheaper,
    each GEMM call costing ``call`` flops."""
    if prepared is None:
        return None
    rc, area, stacked_area, count, views = prepared
    dense = rc * n
    if area * n >= 0.8 * dense or views is None:
        return None
    if stacked_area * n + call * (count - 1) >= 0.8 * dense:
        return None
    return views


class SectorOperator:
    """``x -> H_eff x`` on the flattened sectors ``X[m]``: ``y[m] = sum_w LW[w][m] X[m - c_w]
    WR[w][m]^T``.

    Small operators hold their matrix (built once, one Kronecker block per term) and a product is
    one matrix-vector product: where the matrix fits in :data:`DENSE_OPERATOR_BYTES` and the
    flop model (:func:`_holds_matrix`) says that building it and :data:`EXPECTED_PRODUCTS`
    products cost less than as many products by blocks, two GEMM calls per term. That is what
    small chains need: their local problems hold tens to hundreds of states in up to a hundred
    terms, and the calls, not the arithmetic, take the time. Between two small sides held as
    whole arrays (:class:`~.sector_dense.Dense`) such a matrix is gathered from them at once
    (:data:`GATHER_ENTRIES`), without a call per term; a larger one between such sides applies
    itself on their whole arrays (:class:`~.sector_dense.WholeProduct`: two GEMMs a product, the
    zero blocks' flops included) where the flop model (:func:`_whole_products`) says that costs
    less than holding the matrix or the products by blocks.

    Otherwise the products go by blocks. With ``regions`` (the nonzero rectangles of the absorbed
    ``LW``/``WR`` blocks, :class:`PreparedRectangles`, None for a bare side), a block whose zeros
    are worth skipping is applied rectangle by rectangle: an MPO state's operator reaches only
    some pairs of physical states, so most of its absorbed block is zero (skipping every zero
    would save the Hubbard chain's products 2.4x of their operations, the 8x4 cylinder's 1.9x;
    with the cost of the extra calls counted, the cylinder's products at bond dimension 400 do
    1.3x fewer). ``rows``/``cols``: the fused pieces of the two sides (``size[m]`` per sector)."""

    def __init__(
        self,
        lw: Env,
        wr: Env,
        c_mid: Sequence[int],
        sectors: list[int],
        rows: Any,
        cols: Any,
        dtype: Any,
        norm: Callable[[int], int],
        regions: tuple[PreparedRectangles | None, PreparedRectangles | None] = (None, None),
    ):
        self.lw, self.wr, self.c_mid = lw, wr, c_mid
        self.sectors = sectors
        self.shapes, self.offsets, self._views, self.index = _skeleton(sectors, rows, cols)
        n = self._views[-1][1] if self._views else 0
        self.shape = (n, n)
        self.dtype = dtype
        self.matvecs = 0
        self._whole: WholeProduct | None = None
        self.gemms: GemmList | None = None  # the products by blocks as one native call, where they run so
        if _gathers(lw, wr, len(c_mid), n, dtype):  # a small problem between small sides: its matrix at once
            self.matrix_on_host, self.terms = True, []
            self.matrix = gathered_matrix(lw, wr, sectors, rows, cols, n)
            return
        self.matrix = None
        # between two whole-array sides the choice is kept per structure (None: other sides)
        key = _whole_key(lw, wr, c_mid, sectors, rows, cols, dtype, norm)
        use = _whole_held(key, rows, cols, lw, wr)
        if not use:
            found = _found(lw, wr, c_mid, sectors, self.index, norm)
            like = (lw[found[0][2]][found[0][3]], wr[found[0][2]][found[0][3]]) if found else None
            pairs = [(k, kin) for k, kin, *_ in found]
        if use is None and key is not None:  # EXPECTED_PRODUCTS products on whole arrays, or not
            use = _whole_products(_whole_cost(lw, wr, dtype), pairs, self.shapes, n, dtype, like)
            _hold_whole(key, rows, cols, lw, wr, use)
        if use:
            self.matrix_on_host, self.terms = False, []
            self._whole, self._sides = WholeProduct(lw, wr, sectors, rows, cols), (rows, cols)
            return
        self.matrix_on_host = _holds_matrix(pairs, self.shapes, n, dtype, like)
        if self.matrix_on_host:
            self.matrix = self._build([(k, kin, lw[w][m], wr[w][m]) for k, kin, w, m in found])
        # (out sector k, in sector k', LW block, WR block transposed, their rectangles or None)
        self.terms = []
        kernels = None
        if self.matrix is None and len(found) >= NATIVE_MIN_TERMS and not is_device_array(like[0]):
            kernels = native_gemms()
        call = SPARSE_CALL_FLOPS if kernels is None else NATIVE_CALL_FLOPS
        lw_regions, wr_regions = regions
        for k, kin, w, m in found if self.matrix is None else ():  # products by blocks
            a, b = lw[w][m], wr[w][m]
            left = right = None  # rectangles save at most a call's worth on a block below five
            n_in, n_out = self.shapes[kin][1], self.shapes[k][0]
            if lw_regions is not None and a.size * n_in > 5 * call:
                left = _rectangles(lw_regions.get(w, m), n_in, call)
            if wr_regions is not None and b.size * n_out > 5 * call:
                right = _rectangles(wr_regions.get(w, m), n_out, call)
            self.terms.append((k, kin, a, b.T, left, right))
        if kernels is not None:
            self.gemms = _gemm_list(self.terms, self.offsets.tolist(), np.result_type(dtype, *like), kernels)

    def _build(self, found: list) -> np.ndarray:
        """The matrix: the term ``Y[k] += A X[k'] B^T`` is the block ``kron(A, B)`` of rows ``k``
        and columns ``k'`` (row-major flattening), ``A[i, p] B[j, q]`` in the block seen as ``(i,
        j, p, q)``; the terms of one block (one shape) summed by one GEMM over their index."""
        off = self.offsets.tolist()
        if not self.matrix_on_host:
            found = [(k, kin, to_host(a), to_host(b)) for k, kin, a, b in found]
        h = np.zeros(self.shape, dtype=np.result_type(self.dtype, *(t[2] for t in found), *(t[3] for t in found)))
        same: dict[tuple[int, int], list] = {}
        for k, kin, a, b in found:
            same.setdefault((k, kin), []).append((a, b))
        for (k, kin), ab in same.items():
            (rk, rkin), (ck, ckin) = ab[0][0].shape, ab[0][1].shape
            blk = h[off[k] : off[k + 1], off[kin] : off[kin + 1]].reshape(rk, ck, rkin, ckin)
            if len(ab) == 1:
                np.multiply(ab[0][0][:, None, :, None], ab[0][1][None, :, None, :], out=blk)
            else:
                a = np.stack([a for a, _ in ab]).reshape(len(ab), rk * rkin)
                b = np.stack([b for _, b in ab]).reshape(len(ab), ck * ckin)
                blk[...] = (a.T @ b).reshape(rk, rkin, ck, ckin).transpose(0, 2, 1, 3)
        return h

    def views(self, x: np.ndarray) -> list[np.ndarray]:
        return [x[a:b].reshape(shape) for a, b, shape in self._views]

    def matvec(self, x: np.ndarray) -> np.ndarray:
        self.matvecs += 1
        if self.matrix is not None:
            return self.matrix @ x
        if self._whole is not None:
            return self._whole(x)
        if self.gemms is not None and x.dtype == self.gemms.dtype and x.flags.c_contiguous:
            y = np.zeros(self.shape[0], dtype=x.dtype)
            self.gemms.run(x, y)
            return y
        xs = self.views(x)
        xp = array_module(x)
        dtype = np.result_type(self.dtype, x.dtype)
        y = xp.zeros(self.shape[0], dtype=dtype)
        ys = self.views(y)
        for k, kin, a, bt, left, right in self.terms:
            xk = xs[kin]
            if left is None:
                t = a @ xk
            else:
                t = xp.zeros((a.shape[0], xk.shape[1]), dtype=dtype)
                for r0, r1, c0, c1, blk in left:
                    t[r0:r1] += blk @ xk[c0:c1]
            if right is None:
                ys[k] += t @ bt
            else:
                yk = ys[k]
                for p0, p1, q0, q1, blk in right:  # blk: WR[w][m][p0:p1, q0:q1]^T
                    yk[:, p0:p1] += t[:, q0:q1] @ blk
        return y

    def dense(self) -> np.ndarray:
        """The operator as a host matrix (the one it holds, or built from its terms)."""
        if self.matrix is not None:
            return self.matrix
        if self._whole is not None:
            return gathered_matrix(self.lw, self.wr, self.sectors, *self._sides, self.shape[0])
        return self._build([(k, kin, a, bt.T) for k, kin, a, bt, _left, _right in self.terms])


def _gemm_list(terms: list, offsets: list, dtype: Any, kernels: Any) -> GemmList | None:
    """The products by blocks ``Y[k] += A X[k'] B^T`` of ``terms`` (:class:`SectorOperator`) as
    one native :class:`~tensor4all.linalg.gemm_list.GemmList`: ``T = A X[k']`` in the workspace
    (rectangle by rectangle where ``A`` has them), then ``Y[k] += T B^T`` (likewise). None where
    a block is not a C-contiguous array (the NumPy path then applies it). Real blocks of a
    complex operator (a real Hamiltonian, a complex state) are cast once, here."""
    dtype = np.dtype(dtype)
    if dtype not in (np.float64, np.complex128):
        return None
    gemms = GemmList(dtype, kernels)
    gemm, work = gemms.gemm, 0
    for k, kin, a, bt, left, right in terms:
        b = bt.T  # WR's block: (cols k) x (cols k')
        if not (a.flags.c_contiguous and b.flags.c_contiguous):
            return None
        if a.dtype != dtype:
            a = gemms.keep(a.astype(dtype))
        if b.dtype != dtype:
            b = gemms.keep(b.astype(dtype))
        (rk, rkin), (ck, ckin) = a.shape, b.shape
        xo, yo, a0, b0, item = offsets[kin], offsets[k], address(a), address(b), dtype.itemsize
        work = max(work, rk * ckin)
        if left is None:  # T = A X[k']
            gemm(rk, ckin, rkin, 0, a0, rkin, X, xo, ckin, WORK, 0, ckin, False, False)
        else:
            gemms.zero_workspace(0, rk * ckin)
            for r0, r1, c0, c1, _ in left:  # T[r0:r1] += A[r0:r1, c0:c1] X[k'][c0:c1]
                a_rc = a0 + item * (r0 * rkin + c0)
                gemm(r1 - r0, ckin, c1 - c0, 0, a_rc, rkin, X, xo + c0 * ckin, ckin, WORK, r0 * ckin, ckin, True, False)
        if right is None:  # Y[k] += T B^T
            gemm(rk, ck, ckin, WORK, 0, ckin, 0, b0, ckin, Y, yo, ck, True, True)
        else:
            for p0, p1, q0, q1, _ in right:  # Y[k][:, p0:p1] += T[:, q0:q1] B[p0:p1, q0:q1]^T
                b_pq = b0 + item * (p0 * ckin + q0)
                gemm(rk, p1 - p0, q1 - q0, WORK, q0, ckin, 0, b_pq, ckin, Y, yo + p0, ck, True, True)
    gemms.workspace = work
    return gemms


def _found(lw: Env, wr: Env, c_mid: Sequence[int], sectors: list[int], index: dict, norm: Callable) -> list:
    """The terms ``(k, k', w, m)`` of an operator: out sector ``k`` (``m``), in sector ``k'`` (``m -
    c_w``), MPO state ``w``, where both absorbed sides have the block ``m`` of ``w``: ``LW[w][m]`` is
    (rows k) x (rows k'), ``WR[w][m]`` the same of the columns."""
    found = []
    for w, c in enumerate(c_mid):
        lw_w, wr_w = lw[w], wr[w]
        for k, m in enumerate(sectors):
            kin = index.get(norm(m - c))
            if kin is not None and m in lw_w and m in wr_w:
                found.append((k, kin, w, m))
    return found


_WHOLE: dict[tuple, tuple] = {}  # the structure of an operator between Dense sides -> (its parts, decision)


def _whole_key(
    lw: Any, wr: Any, c_mid: Sequence[int], sectors: list[int], rows: Any, cols: Any, dtype: Any, norm: Callable
) -> tuple | None:
    """The structure of an operator between two :class:`~.sector_dense.Dense` sides (None for
    other sides): what the whole-array choice reads (the sides' pieces and block places, shared
    per structure; ``sectors``, ``c_mid``, the arrays' shapes and dtypes)."""
    if not (isinstance(lw, Dense) and isinstance(wr, Dense)):
        return None
    return (
        id(rows),
        id(cols),
        id(lw.where),
        id(wr.where),
        tuple(sectors),
        tuple(c_mid),
        lw.dense.shape,
        wr.dense.shape,
        np.dtype(dtype),
        lw.dense.dtype,
        wr.dense.dtype,
        norm(-1),
    )


def _whole_held(key: tuple | None, rows: Any, cols: Any, lw: Any, wr: Any) -> bool | None:
    """Whether the first operator of this structure applied itself on the whole arrays
    (:func:`_whole_products`); None where none was made yet (or ``key`` is None)."""
    held = None if key is None else _WHOLE.get(key)
    if held is None or not (held[0] is rows and held[1] is cols and held[2] is lw.where and held[3] is wr.where):
        return None
    return held[4]


def _hold_whole(key: tuple, rows: Any, cols: Any, lw: Any, wr: Any, use: bool) -> None:
    """Keep the choice ``use`` for the operators of this structure (:func:`_whole_held`)."""
    if len(_WHOLE) >= MAX_SKELETONS:
        _WHOLE.clear()
    _WHOLE[key] = (rows, cols, lw.where, wr.where, use)


_SKELETONS: dict[tuple, tuple] = {}  # (sides, sectors) -> (rows, cols, skeleton)
MAX_SKELETONS = 1024


def _skeleton(sectors: list[int], rows: Any, cols: Any) -> tuple:
    """The layout of an operator's flat vectors over ``sectors`` between the sides ``rows`` and
    ``cols``: per sector its shape, the offsets, the views ``(start, stop, shape)`` and the
    sector's position. Made once per structure: the sides' pieces are shared per structure
    (:meth:`.sector_sides.SectorSides._pieces`), so a step that recurs finds it."""
    key = (id(rows), id(cols), tuple(sectors))
    held = _SKELETONS.get(key)
    if held is not None and held[0] is rows and held[1] is cols:
        return held[2]
    shapes = [(rows.size[m], cols.size[m]) for m in sectors]
    offsets = np.concatenate([[0], np.cumsum([r * c for r, c in shapes])]).astype(int)
    bounds = offsets.tolist()
    views = [(bounds[k], bounds[k + 1], shape) for k, shape in enumerate(shapes)]
    skeleton = (shapes, offsets, views, {m: k for k, m in enumerate(sectors)})
    if len(_SKELETONS) >= MAX_SKELETONS:
        _SKELETONS.clear()
    _SKELETONS[key] = (rows, cols, skeleton)
    return skeleton


GATHER_ENTRIES = 1 << 17
"""An operator of ``n`` states between :class:`~.sector_dense.Dense` sides of ``W`` MPO states holds
its matrix, gathered from their arrays (:func:`~.sector_dense.gathered_matrix`), where ``W n^2``
is at most this (two gathers of that many entries and a sum over ``W``: about the cost of the
products by blocks that one Lanczos step makes, so the flop model is not asked)."""


def _gathers(lw: Any, wr: Any, w: int, n: int, dtype: Any) -> bool:
    """Whether the operator is gathered from :class:`~.sector_dense.Dense` sides (see
    :data:`GATHER_ENTRIES`), its matrix within :data:`DENSE_OPERATOR_BYTES`."""
    if not (isinstance(lw, Dense) and isinstance(wr, Dense)) or w * n * n > GATHER_ENTRIES:
        return False
    return n * n * np.result_type(dtype, lw.dense, wr.dense).itemsize <= DENSE_OPERATOR_BYTES


DENSE_OPERATOR_BYTES = 4 << 20
"""The largest matrix a :class:`SectorOperator` holds. Measured on one core (Xeon, 2 MiB of L2
per core) over the local problems of two-site TDVP on the Hubbard chain (L = 12, bond dimension
32; 16 to 112 terms): a product with the held matrix against one by blocks took 1 against 30 us at
n = 36, 11 against 320 us at n = 236 (complex), 80 against 300 us at n = 555 (real, 2.4 MiB), 350
against 500 us at n = 754 (complex, 8.7 MiB), and lost beyond (n = 1230, complex: 930 against 500
us); building a matrix of 8 MiB took 12 ms."""

EXPECTED_PRODUCTS = 6
"""The products an operator is assumed to see when it decides whether to hold its matrix (a TDVP
exponential takes 6 to 8 on the chains of ``benchmarks/conserve_small.py``, an eigensolve more)."""

# the flop model of _holds_matrix, in units of SPARSE_CALL_FLOPS (about 3 us), fitted to the
# measurements above: a term of a product by blocks costs 0.9 calls (its two small GEMMs, 2.6 us)
# and its GEMM flops at a quarter of the rate SPARSE_CALL_FLOPS assumes; building the matrix 1.5
# calls per block of terms (4.5 us: the terms of a block are summed by one GEMM) and 100 per entry
# of the block (3 ns, one strided write) per 8 bytes; a product with the matrix one per byte read
# (0.03 ns: 16 us for 1 MiB) and 0.3 calls
_TERM_CALLS, _GEMM_FACTOR, _BUILD_CALLS, _BUILD_ENTRY, _PRODUCT_CALLS = 0.9, 4.0, 1.5, 100.0, 0.3


WHOLE_PRODUCT_FLOP = 0.8
"""The cost of a flop of a :class:`~.sector_dense.WholeProduct` in the units of the flop model
(:data:`SPARSE_CALL_FLOPS` per call): fitted on one core to its products on the two-site problems of
the Heisenberg chain (L = 12 and 16, bond dimension up to 32, 367 to 1013 states between sides
of 32 to 64 rows): 24 to 122 us, 23 us per million flops, about nothing per call; the products
by blocks of the same problems (23 or 28 terms) took 67 to 93 us, so that the whole arrays won
up to about 700 states (2 to 3.5x below 500) and lost beyond (983 states: 122 against 83 us)."""


def _whole_cost(lw: Any, wr: Any, dtype: Any) -> float | None:
    """The cost of :data:`EXPECTED_PRODUCTS` products on the whole arrays of two
    :class:`~.sector_dense.Dense` sides (:class:`~.sector_dense.WholeProduct`; None for other
    sides): a call and ``2 W R C (R + C)`` flops each (complex: four times as many)."""
    if not (isinstance(lw, Dense) and isinstance(wr, Dense)):
        return None
    w, nr, nc = lw.dense.shape[0], lw.dense.shape[1], wr.dense.shape[1]
    complex_ = np.result_type(dtype, lw.dense, wr.dense).kind == "c"
    flops = (4.0 if complex_ else 1.0) * 2.0 * w * nr * nc * (nr + nc)
    return EXPECTED_PRODUCTS * (SPARSE_CALL_FLOPS + WHOLE_PRODUCT_FLOP * flops)


def _whole_products(whole: float, terms: list, shapes: list, n: int, dtype: Any, like: tuple | None) -> bool:
    """Whether an operator between two :class:`~.sector_dense.Dense` sides applies itself on their
    whole arrays (:class:`~.sector_dense.WholeProduct`, costing ``whole``): where that costs less
    than holding the matrix or as many products by blocks (:func:`_costs`)."""
    if not terms or is_device_array(like[0]):
        return False
    return whole < min(_costs(terms, shapes, n, dtype, like))


def _holds_matrix(terms: list, shapes: list, n: int, dtype: Any, like: tuple | None) -> bool:
    """Whether an operator holds its matrix: building it and :data:`EXPECTED_PRODUCTS` products
    with it cost less than as many products by blocks (:func:`_costs`)."""
    if not terms or n * n * 8 > DENSE_OPERATOR_BYTES:  # too large to hold, whatever its dtype: no model to ask
        return False
    held, blocks = _costs(terms, shapes, n, dtype, like)
    return held < blocks


def _costs(terms: list, shapes: list, n: int, dtype: Any, like: tuple | None) -> tuple[float, float]:
    """The costs, by a flop model in which each call costs :data:`SPARSE_CALL_FLOPS` (see the
    constants above), of an operator on ``n`` states with the ``terms`` ``(k, k')`` (out and in
    sector; the sectors' ``shapes`` are ``(rows, cols)``: the term's ``LW`` block is rows k x rows
    k', its ``WR`` block cols k x cols k'): building its matrix and :data:`EXPECTED_PRODUCTS`
    products with it (infinite where it may not be held: on a device, beyond
    :data:`DENSE_OPERATOR_BYTES`), and as many products by blocks. Without a cost per call
    (``SPARSE_CALL_FLOPS = 0``) the blocks always win. ``like``: one term's ``LW`` and ``WR``
    blocks (where they live, their dtype)."""
    complex_ = np.result_type(dtype, like[0].dtype, like[1].dtype).kind == "c"  # the blocks share a dtype
    itemsize = 16 if complex_ else 8
    nbytes = n * n * itemsize
    call, rate = SPARSE_CALL_FLOPS, _GEMM_FACTOR * (4.0 if complex_ else 1.0)
    products = 0.0
    blocks: dict[tuple[int, int], int] = {}
    for k, kin in terms:
        (rk, ck), (rkin, ckin) = shapes[k], shapes[kin]
        blocks[(k, kin)] = rk * ck * rkin * ckin
        products += _TERM_CALLS * call + rate * 2.0 * (rk * rkin * ckin + rk * ckin * ck)
    build = len(blocks) * _BUILD_CALLS * call + _BUILD_ENTRY * (itemsize // 8) * sum(blocks.values())
    dense = nbytes + _PRODUCT_CALLS * call
    if is_device_array(like[0]) or nbytes > DENSE_OPERATOR_BYTES:
        return float("inf"), EXPECTED_PRODUCTS * products
    return build + EXPECTED_PRODUCTS * dense, EXPECTED_PRODUCTS * products
