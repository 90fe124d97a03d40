"""Quantics operators as MPOs: shift, flip and the quantum Fourier transform on the bits
of one dimension of a :class:`~tensor4all.quantics.Grid`, and :func:`apply` of an MPO to
a quantics tensor train.

An operator acts on a function ``f`` given on the grid as ``(A f)(x) = sum_x' A[x, x'] f(x')``:
the MPO's ``out`` index carries the bits of ``x``, its ``in`` index those of ``x'``.
Each is built on the ``R`` bits of one dimension (site tensors ``(left, out, in, right)``,
most significant bit first) and then laid on the grid's sites (:func:`embed`): with the
fused unfolding every site acts on its bit of that dimension and as the identity on the
others; with the interleaved one the sites of the other dimensions pass the bond on.

* shift (:func:`shift_mpo`): ``(S f)(x) = f(x + offset)``, an adder with a carry (bond
  dimension 2), as Quantics.jl's ``shiftaxismpo``;
* flip (:func:`flip_mpo`): ``(F f)(x) = f(2**R - x)``, i.e. ``x -> -x`` modulo ``2**R``
  (``0`` stays at ``0``), as Quantics.jl's ``flipop``;
* Fourier (:func:`fourier_mpo`): the discrete Fourier transform with the output bits in
  reversed order (see there), compressed to a bond dimension of about 10-15 at 1e-14.

Beyond the grid, ``boundary="periodic"`` wraps around, ``"antiperiodic"`` wraps with a
factor -1 per wrap and ``"open"`` gives 0.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

import tenferro as tf

from ..tools.errors import DimensionMismatchError, InvalidOptionError, Tensor4allTypeError
from ..networks.mpo import MPO, compress_mpo_tensors
from ..networks.mps import MPS
from .grid import Grid, check_grid
from ..tools.threads import bond_of, thread_policy
from ..tools.checks import check_cutoff, check_positive_int, check_rtol, to_numpy

__all__ = ["BOUNDARIES", "shift_mpo", "flip_mpo", "fourier_mpo", "apply", "reverse_bits", "embed"]

#: what an operator does with points it moves off the grid
BOUNDARIES = ("periodic", "antiperiodic", "open")


def _check_boundary(boundary: Any, what: str) -> str:
    if not isinstance(boundary, str) or boundary not in BOUNDARIES:
        raise InvalidOptionError(
            f"{what}: boundary must be one of {', '.join(map(repr, BOUNDARIES))}, got {boundary!r}"
        )
    return boundary


def _check_int(value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise Tensor4allTypeError(f"{what} must be an integer, got {type(value).__name__} {value!r}")
    return int(value)


# ---- carry chains: shift and flip ------------------------------------------------------------
def _carry_chain(
    R: int, digit: Callable[[int, int, int], int], carry_in: int, wrap_weight: Callable[[int], float]
) -> list[np.ndarray]:
    """The MPO of ``x -> x'`` computed bit by bit from the least significant bit: at bit
    ``k`` (site ``k``, ``0`` the most significant) ``digit(k, x_k, c) = x'_k + 2 c'`` takes the
    carry ``c`` from site ``k + 1`` and passes ``c'`` to site ``k - 1``. The tensors are
    ``W[c', x_k, x'_k, c]`` (a bond is the carry; ``carry_in`` enters at the last site), and the
    carry leaving site 0 is weighted by ``wrap_weight(c)``."""
    ws = []
    for k in range(R):
        w = np.zeros((2, 2, 2, 2))
        for x in (0, 1):
            for c in (0, 1):
                s = digit(k, x, c)
                w[s >> 1, x, s & 1, c] = 1.0
        ws.append(w)
    ws[-1] = ws[-1][:, :, :, carry_in : carry_in + 1]
    ws[0] = np.tensordot(np.array([wrap_weight(0), wrap_weight(1)]), ws[0], axes=(0, 0))[None]
    return ws


def _wrap_weight(boundary: str, wraps: int) -> float:
    if boundary == "periodic":
        return 1.0
    if boundary == "antiperiodic":
        return -1.0 if wraps % 2 else 1.0
    return 1.0 if wraps == 0 else 0.0


def _shift_tensors(R: int, offset: int, boundary: str) -> list[np.ndarray]:
    N = 2**R
    q, m = divmod(offset, N)  # x + offset = x + m + q N, 0 <= m < N
    if boundary == "open" and q not in (0, -1) or (boundary == "open" and offset == -N):
        raise InvalidOptionError(
            f"shift_mpo: offset {offset} moves every point of the 2**{R} = {N} grid points "
            "off the grid (boundary='open' would give the zero operator); |offset| must be "
            f"below {N}"
        )
    bits = [(m >> (R - 1 - k)) & 1 for k in range(R)]
    return _carry_chain(R, lambda k, x, c: x + bits[k] + c, 0, lambda c: _wrap_weight(boundary, q + c))


def _flip_tensors(R: int, boundary: str) -> list[np.ndarray]:
    # 2**R - x = (2**R - 1 - x) + 1: the complement of every bit, plus one at the last bit;
    # the carry out of the top bit is 1 only for x = 0 (which lands on 2**R, one wrap)
    return _carry_chain(R, lambda k, x, c: (1 - x) + c, 1, lambda c: _wrap_weight(boundary, c))


# ---- the Fourier transform -----------------------------------------------------------------
def _fourier_tensors(R: int, sign: int, rtol: float) -> list[np.ndarray]:
    """The bit-reversed DFT ``T[y', x] = 2**(-R/2) prod_{n <= i} exp(sign 2 pi i x_i y'_n / 2**(i-n+1))``
    (``x_i``: bit ``i`` of ``x``, most significant first; ``y'_n``: the bit of weight ``2**n`` of
    ``y``) as an MPO: the Hadamard-like factors ``n = i`` on every site, then for each output bit
    ``n`` a layer of bond dimension 2 that carries ``y'_n`` to the sites ``i > n`` (an
    elementwise product of MPOs), compressed after each layer (:func:`compress_mpo_tensors`).
    The exact operator needs bond dimension ``2**min(k, R-k)``; its singular values decay
    exponentially (Chen & Lindsey, arXiv:2404.03182; Shinaoka et al., PRX 13, 021015 (2023)),
    so the compressed bond dimension stays at about 10-15 for any ``R``."""
    bit = np.array([0, 1])
    h = np.exp(sign * 1j * np.pi * np.outer(bit, bit)) / math.sqrt(2.0)  # [y'_n, x_n]
    ws = [h.reshape(1, 2, 2, 1).astype(np.complex128) for _ in range(R)]
    for n in range(R - 1):
        layer = []
        for i in range(R):
            if i < n:
                layer.append(np.ones((1, 2, 2, 1)))
            elif i == n:
                b = np.zeros((1, 2, 2, 2))
                b[0, 0, :, 0] = b[0, 1, :, 1] = 1.0  # the bond carries y'_n (the out index)
                layer.append(b)
            else:
                phase = np.exp(sign * 2j * np.pi * np.outer(bit, bit) / 2 ** (i - n + 1))  # [y'_n, x_i]
                b = np.zeros((2, 2, 2, 2 if i < R - 1 else 1), dtype=np.complex128)
                for c in (0, 1):
                    b[c, :, :, c if i < R - 1 else 0] = phase[c][None, :]
                layer.append(b)
        ws = [_hadamard(w, b) for w, b in zip(ws, layer)]
        ws = compress_mpo_tensors(ws, rtol)
    return ws


def _hadamard(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The site tensor of the elementwise product of two operators (bonds multiply)."""
    la, d, _, ra = a.shape
    lb, _, _, rb = b.shape
    return np.einsum("astc,bstd->abstcd", a, b).reshape(la * lb, d, d, ra * rb)


# ---- laying a one-dimensional operator on a grid --------------------------------------------
def embed(ws: list[np.ndarray], grid: Grid, dim: int) -> list[np.ndarray]:
    """The site tensors of the operator ``ws`` (on the ``R`` bits of one dimension) acting on
    dimension ``dim`` of ``grid`` and as the identity on the others."""
    D = grid.dims
    if D == 1:
        return ws
    if grid.unfolding == "fused":
        digits = np.arange(2**D)
        b = (digits >> dim) & 1
        rest = digits & ~(1 << dim)
        mask = (rest[:, None] == rest[None, :]).astype(float)
        return [w[:, b[:, None], b[None, :], :] * mask[None, :, :, None] for w in ws]
    out = []
    for k, w in enumerate(ws):
        for e in range(D):
            if e == dim:
                out.append(w)
            else:
                chi = w.shape[0] if e < dim else w.shape[3]  # the bond this site passes on
                out.append(np.einsum("ab,st->astb", np.eye(chi), np.eye(2)).astype(w.dtype))
    return out


def _mpo(ws: list[np.ndarray], grid: Grid, dim: int) -> MPO:
    return MPO([tf.asarray(np.ascontiguousarray(w)) for w in embed(ws, grid, dim)])


# ---- public builders -----------------------------------------------------------------------
@thread_policy()  # the carry chain's compression
def shift_mpo(grid: Any, offset: int, *, dim: int = 0, boundary: str = "periodic") -> MPO:
    """The MPO of ``(S f)(x) = f(x + offset)`` along dimension ``dim`` of ``grid`` (a
    :class:`Grid`, or ``R`` for the one-dimensional grid of ``2**R`` points); ``offset`` counts
    grid points and may be negative. Points that ``x + offset`` moves off ``0..2**R - 1`` wrap
    around (``boundary="periodic"``), wrap with a sign -1 per wrap (``"antiperiodic"``) or give
    0 (``"open"``, where ``|offset| < 2**R``). Bond dimension 2."""
    g = check_grid(grid, "shift_mpo")
    offset = _check_int(offset, "shift_mpo: offset")
    dim = g._check_dim(dim)
    boundary = _check_boundary(boundary, "shift_mpo")
    return _mpo(_shift_tensors(g.R, offset, boundary), g, dim)


@thread_policy()
def flip_mpo(grid: Any, *, dim: int = 0, boundary: str = "periodic") -> MPO:
    """The MPO of ``(F f)(x) = f(2**R - x)`` along dimension ``dim``: ``x -> -x`` modulo
    ``2**R``. The point ``x = 0`` reads ``f(2**R)``, which is ``f(0)`` (``"periodic"``),
    ``-f(0)`` (``"antiperiodic"``) or 0 (``"open"``). On a periodic grid this is the reflection
    ``f(-x)``; the reversal ``f(2**R - 1 - x)`` is this flip applied after ``shift_mpo(grid, -1)``
    (both periodic). Bond dimension 2."""
    g = check_grid(grid, "flip_mpo")
    dim = g._check_dim(dim)
    boundary = _check_boundary(boundary, "flip_mpo")
    return _mpo(_flip_tensors(g.R, boundary), g, dim)


@thread_policy()  # the Hadamard products, the compression
def fourier_mpo(grid: Any, *, sign: int = -1, dim: int = 0, rtol: float = 1e-14, cutoff: float | None = None) -> MPO:
    """The discrete Fourier transform along dimension ``dim`` as an MPO, with the output bits
    in **reversed order**.

    With ``N = 2**R``, ``x`` and ``y`` grid indices of dimension ``dim``,

        ``(T f)(y) = N**-0.5 * sum_x exp(sign * 2j * pi * x * y / N) f(x)``,

    so ``sign=-1`` is ``numpy.fft.fft(f, norm="ortho")`` and ``sign=+1`` its inverse. The
    output index of the MPO holds the bits of ``y`` least significant first: the site that
    carries bit ``k`` of ``x`` (weight ``2**(R-1-k)``) carries the bit of weight ``2**k`` of
    ``y``. For a one-dimensional QTT ``psi`` of ``f``, ``apply(T, psi).to_dense()[rev(y)]`` is
    ``fft(f, norm="ortho")[y]`` (``rev``: the ``R``-bit reversal), and
    ``reverse_bits(apply(T, psi))`` is the QTT of the transform in the natural order.

    The exact operator is compressed (pivots below ``rtol`` relative to the largest dropped per
    bond; see :func:`~tensor4all.networks.mpo.compress_mpo_tensors`): its bond dimension stays about 10-15
    at the default 1e-14 for any ``R``. ``cutoff=``, the older name of ``rtol``, still works with
    a :class:`DeprecationWarning` (``cutoff`` means the discarded weight across tensor4all).
    """
    g = check_grid(grid, "fourier_mpo")
    if isinstance(sign, (bool, np.bool_)) or sign not in (-1, 1):
        raise InvalidOptionError(f"fourier_mpo: sign must be -1 (numpy.fft.fft) or +1 (its inverse), got {sign!r}")
    dim = g._check_dim(dim)
    rtol = check_rtol(rtol, cutoff, "fourier_mpo")
    return _mpo(_fourier_tensors(g.R, int(sign), rtol), g, dim)


def reverse_bits(psi: MPS) -> MPS:
    """The MPS with its sites in reverse order (each site tensor's bonds swapped). For a
    one-dimensional QTT it is the function of the bit-reversed index: the natural order of
    the output of :func:`fourier_mpo` (for a fused grid, of every dimension at once)."""
    if not isinstance(psi, MPS) or psi.symmetric:
        raise Tensor4allTypeError(f"reverse_bits expects a dense MPS, got {type(psi).__name__}")
    return MPS([tf.permute_dims(t, (2, 1, 0)) for t in reversed(psi.tensors)])


@thread_policy(lambda mpo, psi, *_, **__: bond_of(mpo) * bond_of(psi))  # the product's bonds
def apply(mpo: MPO, psi: MPS, *, max_bond: int | None = None, cutoff: float = 1e-24) -> MPS:
    """``mpo |psi>`` as an MPS: the exact product (bond dimensions multiply), then compressed
    by :meth:`MPS.compress` (at most ``max_bond``; ``cutoff`` the relative discarded squared
    weight per bond, 1e-24 keeping about 12 digits). A naive product-then-compress; not
    differentiable (the compression works on concrete values)."""
    if not isinstance(mpo, MPO):
        raise Tensor4allTypeError(f"apply: expected an MPO first, got {type(mpo).__name__}")
    if not isinstance(psi, MPS):
        raise Tensor4allTypeError(f"apply: expected an MPS second, got {type(psi).__name__}")
    if psi.symmetric:
        psi = psi.dense()
    if mpo.L != psi.L or mpo.phys_dims != psi.phys_dims:
        raise DimensionMismatchError(
            f"apply: the MPO acts on {mpo.L} sites of dimensions {mpo.phys_dims}, the MPS "
            f"has {psi.L} sites of dimensions {psi.phys_dims}"
        )
    if max_bond is not None:
        max_bond = check_positive_int(max_bond, "apply: max_bond")
    cutoff = check_cutoff(cutoff, "apply: cutoff")
    ws = [to_numpy(w, "apply") for w in mpo.tensors]
    ts = [to_numpy(t, "apply") for t in psi.tensors]
    out = []
    for w, t in zip(ws, ts):
        lw, d, _, rw = w.shape
        lt, _, rt = t.shape
        out.append(np.einsum("astc,btd->abscd", w, t).reshape(lw * lt, d, rw * rt))
    res = MPS([np.ascontiguousarray(a) for a in out])
    res.compress(max_bond=max_bond, cutoff=cutoff)
    return res
