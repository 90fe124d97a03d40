"""The gauge and degeneracy checks of reverse mode in :mod:`tenferro.linalg`.

:func:`gauge_guard` passes a spectral rule's tangents through
:data:`gauge_check_p`, the identity whose transpose checks the cotangents
(:data:`gauge_assert_p` when the gradient is staged by ``tenferro.jit``) with the
rule's ``check`` and warns or raises per ``config.gauge``. The checks are NumPy
(or CuPy) functions of the cotangents and residuals: :func:`gauge_violation` (a
loss that depends on the gauge of degenerate vectors) and
:func:`degeneracy_dependence` (a loss that depends on both the values and the
vectors of a degenerate block), with :func:`degeneracy_tolerance` the threshold
``config.degeneracy_rtol``. See docs/ad/gauge.md.

Derivatives of order >= 2 (forward over anything): a rule binds its decomposition with
:func:`bind_probed`, which tells it whether a JVP rule of an outer transformation ran
for the same decomposition (then this is a higher-order pass), and
:func:`second_order_check` reports a direction that splits a degenerate block there
(docs/ad/gauge.md, "Second and higher derivatives").
"""

from __future__ import annotations

import contextvars
import warnings
from typing import Any, Callable

import numpy as np

import tidu
from tidu import BatchTracer, Zero
from tidu.graph import GraphTracer

from .._aval import xp_of
from .._registry import primitive
from .._batching import trailing_batch
from .._tensor import Tensor

from ._config import config
from ._errors import DegeneracyError, DegeneracyWarning, GaugeError, GaugeWarning
from ._util import FAMILY, aligned, concrete, raw_tangent, raw_value
from ._spectral import degenerate_pairs, effective_rtol


GAUGE_RTOL = 1e-6


gauge_check_p = primitive("linalg_gauge_check", FAMILY, multiple_results=True)
gauge_check_p.def_batch(trailing_batch(gauge_check_p))  # trailing batch axes: tenferro._batching
"""``gauge_check_p(*tangents, *residuals, n_lin, check, policy, rtol, second)``: returns
the ``n_lin`` tangents unchanged. Its transpose passes the cotangents through and
calls ``check(cotangents, residuals, rtol)`` (NumPy arrays) first; its findings
(``None``, a gauge message, or a list of ``(kind, message)`` with ``kind`` "gauge" or
"degeneracy") warn (:class:`GaugeWarning`, :class:`DegeneracyWarning`) or raise
(:class:`GaugeError`, :class:`DegeneracyError`) per ``policy`` — ``config.gauge`` (and
``rtol``, ``config.degeneracy_rtol``)
as they were when the JVP was built, not when the transpose runs. ``second`` (None, or
``(name, r, reach)`` from :func:`second_order_check`): this is the rule of a pass of
order >= 2 whose outer direction splits a degenerate block by ``r``; the transpose
reports it when ``reach`` finds that the cotangents touch that block. See
docs/ad/gauge.md."""


@gauge_check_p.def_impl
def _gauge_impl(*args, n_lin, check, policy, rtol, second=None):
    return list(args[:n_lin])


@gauge_check_p.def_abstract_eval
def _gauge_aval(*avals, n_lin, check, policy, rtol, second=None):
    return list(avals[:n_lin])


@gauge_check_p.def_jvp
def _gauge_jvp(primals, tangents, n_lin, check, policy, rtol, second=None):
    out = gauge_check_p.bind(*primals, n_lin=n_lin, check=check, policy=policy, rtol=rtol, second=second)
    t_lin = [tidu.instantiate(t) for t in tangents[:n_lin]]
    # the derivative of the identity is the identity; its cotangents are not a loss's
    # gradient (higher-order directions), so the copy does not check (check=None)
    t_out = gauge_check_p.bind(*t_lin, *primals[n_lin:], n_lin=n_lin, check=None, policy=policy, rtol=rtol)
    return out, t_out


_FINDINGS = {"gauge": (GaugeError, GaugeWarning), "degeneracy": (DegeneracyError, DegeneracyWarning)}


def _report(findings: Any, policy: str) -> None:
    for kind, message in [("gauge", findings)] if isinstance(findings, str) else findings or ():
        error, warning = _FINDINGS[kind]
        if policy == "raise":
            raise error(message)
        warnings.warn(message, warning, stacklevel=3)


def _staged(x: Any) -> bool:
    """A value known now or when the graph being staged runs (``tenferro.jit``,
    ``make_graph``): a tensor or a graph's tracer, or a ``vmap`` tracer of one, whose
    batch rule hands :data:`gauge_assert_p` the batch as trailing axes (a first-order
    gradient under ``vmap``, or ``jacrev``'s batch of cotangents). Not a JVP tracer: then
    the cotangents are directions of a higher-order pass."""
    while type(x) is BatchTracer:
        x = x.val
    return type(x) is Tensor or type(x) is GraphTracer


@gauge_check_p.def_transpose
def _gauge_transpose(cts, *args, n_lin, check, policy, rtol, second=None):
    res = args[n_lin:]
    out = [None if type(c) is Zero else c for c in cts]
    if second is not None and policy != "ignore":  # order >= 2, reverse underneath (hvp, hessian)
        _second_order_transpose(second, out, res, policy)
    if check is not None and policy != "ignore" and any(c is not None for c in out):
        # first-order reverse mode only: with residuals traced by a transformation
        # (higher orders) the cotangents are directions of a derivative, not a loss's gradient
        ct_arrays = [None if c is None else concrete(c) for c in out]
        res_arrays = [r._data if type(r) is Tensor else None for r in res]
        if all(r is not None for r in res_arrays) and all(a is not None or c is None for a, c in zip(ct_arrays, out)):
            _report(check(ct_arrays, res_arrays, rtol), policy)
        elif all(_staged(r) for r in res) and all(c is None or _staged(c) for c in out):
            # a staged gradient (jit): the check becomes part of the program and runs with it;
            # under vmap its batch rule runs it now on the whole batch (or stages it, jit)
            nz = tuple(i for i, c in enumerate(out) if c is not None)
            checked = gauge_assert_p.bind(
                *[out[i] for i in nz], *res, positions=nz, n_ct=len(out), check=check, policy=policy, rtol=rtol
            )
            for i, c in zip(nz, checked):
                out[i] = c
    return out + [None] * len(res)


gauge_assert_p = primitive("linalg_gauge_assert", FAMILY, multiple_results=True)
gauge_assert_p.def_batch(trailing_batch(gauge_assert_p))  # trailing batch axes: tenferro._batching
"""``gauge_assert_p(*cotangents, *residuals, positions, n_ct, check, policy, rtol)``:
the gauge check of a staged (``tenferro.jit``) gradient. Returns the cotangents
unchanged; evaluating it runs ``check`` on the values (``positions``: which of the
``n_ct`` cotangents of :data:`gauge_check_p` these are) and warns or raises per
``policy``, as eager reverse mode does at the same point."""


@gauge_assert_p.def_impl
def _gauge_assert_impl(*args, positions, n_ct, check, policy, rtol):
    cts = args[: len(positions)]
    ct_arrays: list = [None] * n_ct
    for i, c in zip(positions, cts):
        ct_arrays[i] = c._data
    _report(check(ct_arrays, [r._data for r in args[len(positions) :]], rtol), policy)
    return list(cts)


@gauge_assert_p.def_abstract_eval
def _gauge_assert_aval(*avals, positions, n_ct, check, policy, rtol):
    return list(avals[: len(positions)])


@gauge_assert_p.def_jvp
def _gauge_assert_jvp(primals, tangents, positions, n_ct, check, policy, rtol):
    out = gauge_assert_p.bind(*primals, positions=positions, n_ct=n_ct, check=check, policy=policy, rtol=rtol)
    return out, list(tangents[: len(positions)])  # the identity on cotangents; directions are not checked


@gauge_assert_p.def_transpose
def _gauge_assert_transpose(cts, *args, positions, n_ct, check, policy, rtol):
    return [None if type(c) is Zero else c for c in cts] + [None] * (len(args) - len(positions))


def gauge_guard(tangents: list, residuals: list, check: Callable[..., str | None], second: tuple | None = None) -> list:
    """Pass ``tangents`` through :data:`gauge_check_p` (one place for all rules),
    capturing the gauge policy and degeneracy tolerance active now (``second``: from
    :func:`second_order_check`)."""
    params = dict(check=check, policy=config.gauge, rtol=float(config.degeneracy_rtol))
    if second is not None:
        params["second"] = second
    return gauge_check_p.bind(*tangents, *residuals, n_lin=len(tangents), **params)


def degeneracy_tolerance(values: np.ndarray, rtol: float) -> tuple[np.ndarray, bool]:
    """``(tol, any_pair)`` for sorted ``values`` ``[B..., K]`` (leading batch):
    ``tol = rtol * max|v|`` per matrix (``[B..., 1]``), and whether two neighbours
    (hence some pair) are degenerate, ``|v_i - v_j| <= tol`` (``O(K)``, one read)."""
    if values.size == 0:
        return np.zeros(values.shape[:-1] + (1,)), False
    scale = np.max(np.abs(values), axis=-1, keepdims=True)
    tol = effective_rtol(rtol, values.dtype) * np.where(scale > 0, scale, 1.0)
    return tol, bool(np.any(np.abs(np.diff(values, axis=-1)) <= tol))


def _spectral_product(pairs: list) -> np.ndarray:
    """``X = sum_k A_k^H B_k`` (leading batch)."""
    return sum(np.matmul(np.conj(np.swapaxes(a, -1, -2)), b) for a, b in pairs)


def _pairs_norm(pairs: list) -> float:
    return sum(float(np.linalg.norm(a)) * float(np.linalg.norm(b)) for a, b in pairs)


def gauge_violation(pairs: list, values: np.ndarray, rtol: float, scale: float = 0.0) -> float:
    """Relative size of the gauge-dependent part of ``X = sum_k A_k^H B_k`` for
    ``pairs = [(A_k, B_k)]`` (leading-batch arrays ``[B..., M, K]``): the
    skew-Hermitian part of ``X`` on the pairs (i, j) of degenerate ``values``
    (``[B..., K]``, degenerate: ``|v_i - v_j| <= rtol * max |v|``), the diagonal
    (phases) included, relative to
    ``sum_k ||A_k|| ||B_k||`` (Frobenius), an upper bound of ``|X|`` — not to
    ``max |X|``, which is itself rounding noise when the loss is invariant (the
    cotangents of a second-order pass are such). The full ``K x K`` product is
    formed only when some off-diagonal pair is degenerate; otherwise only the
    diagonal (``O(M K)``), and nothing at all for real data. ``scale`` adds the size of
    the rest of the loss's cotangent in the same units (for the SVD ``||S|| ||ct_S||``):
    where the vectors' cotangents are themselves rounding noise (a loss all but
    insensitive to the vectors, through ``U diag(S) Vh`` of a nearly rank-one matrix), their
    gauge-dependent part is noise of that noise, not a finding."""
    if values.size == 0 or not pairs:
        return 0.0
    tol, any_off = degeneracy_tolerance(values, rtol)
    is_complex = any(np.iscomplexobj(a) or np.iscomplexobj(b) for a, b in pairs)
    if any_off:
        deg = np.abs(values[..., :, None] - values[..., None, :]) <= tol[..., None]
        x = _spectral_product(pairs)
        skew = x - np.conj(np.swapaxes(x, -1, -2))
        bad = np.max(np.abs(np.where(deg, skew, 0)))
    elif is_complex:
        d = sum(np.sum(np.conj(a) * b, axis=-2) for a, b in pairs)
        bad = 2 * np.max(np.abs(d.imag))
    else:
        return 0.0
    denom = _pairs_norm(pairs) + scale
    return float(bad / denom) if denom > 0 else 0.0


def degeneracy_dependence(
    pairs: list, values: np.ndarray, value_ct: np.ndarray | None, rtol: float, zero_cluster: bool = False
) -> tuple[float, float]:
    """How much the loss depends on both the values and the vectors of an exactly
    degenerate block (``|v_i - v_j| <= rtol * max|v|``), where the gradient is not
    determined by the decomposition (docs/ad/gauge.md, "Degeneracy warning").
    ``X = sum_k A_k^H B_k`` as in :func:`gauge_violation`, ``value_ct`` ``[B..., K]``
    the cotangent of the values. Returns ``(r, r_null)``:

    * ``r``: per block of size >= 2, the smaller of ``max|v| ||value_ct_B||`` and
      ``||H_B - tr(H_B)/|B| I|| max|v| / max|v_B|`` (``H = (X + X^H)/2``: the traceless
      Hermitian part, a multiple of the identity being exact; per unit of the block's
      own magnitude, since the vector cotangent of ``V f(w) V^H`` is ``f(v_B)`` times
      the in-block data, which a block of zeros shrinks to rounding size), the largest
      over blocks whose traceless part is above rounding relative to ``H_B``;
    * ``r_null`` (``zero_cluster``, svd): blocks of numerically zero values
      (``|v| <= rtol * max|v|``) are left out of ``r`` (their tiny computed values are
      used, exact for ``U f(S) Vh`` with ``f(0) = 0``); ``r_null`` is the size of
      ``X`` on them, i.e. a dependence on the null space's vectors themselves, whose
      gradient then amplifies rounding noise.

    Both relative to ``sum_k ||A_k|| ||B_k|| + max|v| ||value_ct||``. Blocks are read
    row by row through the pairwise relation (array passes, a few reads on a GPU);
    ``(0, 0)`` when no pair is degenerate (``O(K)``)."""
    if values.size == 0 or not pairs:
        return 0.0, 0.0
    tol, any_off = degeneracy_tolerance(values, rtol)
    if not any_off:
        return 0.0, 0.0
    xp = xp_of(values)
    mag = np.abs(values)
    deg = np.abs(values[..., :, None] - values[..., None, :]) <= tol[..., None]  # [B..., K, K]
    size = np.sum(deg, axis=-1)  # [B..., K]
    x = _spectral_product(pairs)
    scale = np.max(mag, axis=-1, keepdims=True)
    rows = size >= 2
    r_null = 0.0
    if zero_cluster:
        small = mag <= tol
        null = np.sqrt(np.sum(np.where(deg, np.abs(x) ** 2, 0), axis=-1))
        r_null = float(np.max(np.where(rows & small, null, 0)))
        rows = rows & ~small
    r = 0.0
    if value_ct is not None:
        h = 0.5 * (x + np.conj(np.swapaxes(x, -1, -2)))
        dh = np.real(np.diagonal(h, axis1=-2, axis2=-1))
        mean = np.sum(np.where(deg, dh[..., None, :], 0), axis=-1) / size  # block mean of diag(H)
        traceless = h - xp.eye(values.shape[-1]) * mean[..., :, None]
        block_mag = np.max(np.where(deg, mag[..., None, :], 0), axis=-1)
        floor = 4 * np.finfo(values.dtype).eps * scale
        tl = np.sqrt(np.sum(np.where(deg, np.abs(traceless) ** 2, 0), axis=-1))
        # a traceless part at rounding size relative to H_B itself is a multiple of the identity
        genuine = tl > GAUGE_RTOL * np.sqrt(np.sum(np.where(deg, np.abs(h) ** 2, 0), axis=-1))
        vec = tl * scale / np.maximum(block_mag, floor)
        val = scale * np.sqrt(np.sum(np.where(deg, np.abs(value_ct[..., None, :]) ** 2, 0), axis=-1))
        r = float(np.max(np.where(rows & genuine, np.minimum(vec, val), 0)))
    denom = _pairs_norm(pairs) + (
        float(np.max(scale)) * float(np.linalg.norm(value_ct)) if value_ct is not None else 0.0
    )
    return (r / denom, r_null / denom) if denom > 0 else (0.0, 0.0)


def exact_zero_dependence(pairs: list, outside: list, values: np.ndarray, value_ct: np.ndarray | None) -> float:
    """How much a loss needs the terms the svd rule drops at an exactly zero singular
    value (docs/ad/gauge.md, "Exact zeros"): ``S^{-1}`` is 0 there, so a tall (wide)
    matrix loses ``(I - U U^H) dA v_z / s_z`` (``u_z^H dA (I - V V^H) / s_z``), a complex one
    the phase term, and two exact zeros their mutual rotation. ``pairs``: ``(U, G_U)``
    and/or ``(V, G_V)`` (leading batch, ``[B..., M, K]``, as in :func:`gauge_violation`),
    ``outside[i]``: whether pair ``i``'s matrix has more rows than ``K`` (tall for ``U``,
    wide for ``V``), i.e. a complement whose terms are dropped. Per exact zero of a matrix
    where a term is dropped, the larger of

    * ``max|s| |value_ct_z|``: the loss depends on ``s_z`` and (the caller has vector
      cotangents) on the vectors, e.g. ``U f(S) Vh`` with ``f'(0) != 0``; its vector
      cotangent there is ``f(0) = 0`` times the data, so this is the one trace left of the
      dropped ``f'(0) (I - U U^H) C v_z``, and
    * ``||(I - U U^H) G_U e_z||`` (tall; ``V`` for wide): a loss of the vectors themselves,
      whose derivative there is infinite,

    relative to ``sum_k ||A_k|| ||B_k|| + max|s| ||value_ct||``; 0 without exact zeros."""
    zero = values == 0
    if values.size == 0 or not zero.any():
        return 0.0
    cplx = any(np.iscomplexobj(a) or np.iscomplexobj(b) for a, b in pairs)
    dropped = np.sum(zero, axis=-1, keepdims=True) >= 2
    if any(outside) or cplx:
        dropped = np.ones_like(dropped)
    zero = zero & dropped
    if not zero.any():
        return 0.0
    scale = np.max(np.abs(values), axis=-1, keepdims=True)
    scale = np.where(scale > 0, scale, 1.0)  # (a zero matrix: the value cotangent alone)
    r = xp_of(values).zeros(values.shape)
    if value_ct is not None:
        r = np.maximum(r, scale * np.abs(value_ct))
    for (a, g), out in zip(pairs, outside):
        if out:  # the part of the cotangent outside the range, per column
            rest = g - np.matmul(a, np.matmul(np.conj(np.swapaxes(a, -1, -2)), g))
            r = np.maximum(r, np.sqrt(np.sum(np.abs(rest) ** 2, axis=-2)))
    denom = _pairs_norm(pairs) + (
        float(np.max(scale)) * float(np.linalg.norm(value_ct)) if value_ct is not None else 0.0
    )
    return float(np.max(np.where(zero, r, 0))) / denom if denom > 0 else 0.0


# ---------------------------------------------------------------------------
# derivatives of order >= 2 through a degenerate block (docs/ad/gauge.md)
# ---------------------------------------------------------------------------
_PROBE: contextvars.ContextVar = contextvars.ContextVar("tenferro_linalg_spectral_probe", default=None)


def bind_probed(p: Any, *args: Any, **params: Any) -> tuple[Any, list | None, list]:
    """``p.bind(*args, **params)`` from the JVP rule of the spectral primitive ``p``, and
    ``(outputs, parent, probe)``. Where the primal is a tracer of an outer
    differentiation (a pass of order >= 2), this bind runs that outer transformation's
    JVP rule of ``p``, which puts into ``probe`` how much its direction splits the
    degenerate blocks (:func:`second_order_check`); ``probe`` stays empty at first order
    (the bind evaluates, or batches). ``parent``: the probe of the rule whose bind runs
    this one (None: this rule is not the outer rule of a higher-order pass)."""
    parent = _PROBE.get()
    probe: list = []
    token = _PROBE.set(probe)
    try:
        out = p.bind(*args, **params)
    finally:
        _PROBE.reset(token)
    return out, parent, probe


def block_splitting(
    values: Any, m: Any, whole: Any, zero_cluster: bool = False, hermitian: bool = True
) -> tuple | None:
    """How much a direction splits the degenerate blocks of ``values`` ``[K, B...]``:
    ``(r, blind)``, ``r`` the Frobenius norm of the off-diagonal in-block part of
    ``herm(m)`` (``m`` ``[K, K, B..., E...]``: ``V^H dA_h V`` for eigh, ``U^H dA V`` for
    svd; the pairs :func:`._spectral.degenerate_pairs` masks) relative to that of the whole
    perturbation ``whole`` (``dA_h``, ``dA``), per matrix, the largest (NumPy or CuPy
    arrays; ``E...``: axes of vmapped directions); ``blind``: some matrix is split above
    ``GAUGE_RTOL`` and no direction has a diagonal in the blocks (then the derivative of
    the values' cotangent there, ``f''(w) diag(m)``, is 0 whatever ``f''`` and tells
    nothing, see :func:`block_reach`; a Hessian's basis directions ``e_ii`` have one). None
    when abstract or under broadening. ``hermitian=False`` (eig: ``m = V^{-1} dA V``, no
    symmetry): ``|m|`` in place of ``herm(m)``, every in-block coupling counted."""
    if values is None or m is None or whole is None:
        return None
    mask = degenerate_pairs(values, zero_cluster)
    xp = xp_of(m)
    if mask is None:
        return None
    if not bool(mask.any()):
        return 0.0, False
    try:
        mask = mask.reshape(mask.shape + (1,) * (m.ndim - mask.ndim))  # vmapped directions: trailing axes
        h = 0.5 * (m + xp.conj(xp.swapaxes(m, 0, 1))) if hermitian else xp.abs(m)
        off = xp.sqrt(xp.sum(xp.where(mask, xp.abs(h) ** 2, 0), axis=(0, 1)))
        total = xp.sqrt(xp.sum(xp.abs(whole) ** 2, axis=(0, 1)))
        total = total.reshape(total.shape + (1,) * (off.ndim - total.ndim))
        r = xp.where(total > 0, off / xp.where(total > 0, total, 1), 0)
        k = values.shape[0]
        on = xp.any(mask, axis=1)  # [K, B..., 1...]: rows in a block
        diag = xp.sqrt(xp.sum(xp.where(on, xp.abs(h[xp.arange(k), xp.arange(k)]) ** 2, 0), axis=0))
        informative = diag > GAUGE_RTOL * xp.where(total > 0, total, 1)  # directions with an in-block diagonal
        blind = bool(xp.any(r > GAUGE_RTOL)) and not bool(xp.any(informative))
    except ValueError:  # batch axes that do not line up (nested vmaps of different operands)
        return None
    return (float(xp.max(r)), blind) if r.size else (0.0, False)


def second_order_check(
    name: str,
    values: Any,
    m: Any,
    whole: Any,
    parent: list | None,
    probe: list,
    reach: Callable[..., float],
    zero_cluster: bool = False,
    hermitian: bool = True,
) -> tuple | None:
    """The check of a derivative of order >= 2 through a decomposition, from its JVP rule
    (``parent``, ``probe`` from :func:`bind_probed`; ``values``, ``m``, ``whole`` as for
    :func:`block_splitting`, tensors or tracers). An outer rule (``parent``) puts there
    how much its direction splits the degenerate blocks. A rule whose probe an outer rule
    filled (this is a higher-order pass) with directions that split a block by ``r``
    above ``GAUGE_RTOL``:

    * its own direction concrete (forward over forward): reports now, per
      ``config.gauge``, with ``r = min(inner, outer)`` (the missing term is bilinear in the
      two directions' in-block parts); there is no cotangent to see the function;
    * its own direction abstract (reverse mode underneath: ``hvp``, ``hessian``): returns
      ``(name, r, reach, blind)`` for :func:`gauge_guard`; the transpose reports when
      ``reach`` finds that the cotangents (or their derivatives along the outer direction)
      touch the block, so a function of the other eigenvalues (``eigvalsh(a)[0]`` beside a
      degenerate excited block) stays exact and quiet (``blind``: see
      :func:`block_splitting`).

    An outer direction that is abstract (reverse mode on top) is left to that pass's own
    first-order check, which sees the outer gradient as a function of the values and
    vectors of the block; abstract values (jit) are not checked. First order: nothing is
    read."""
    if (parent is None and not probe) or config.gauge == "ignore":
        return None
    split = block_splitting(*aligned([raw_value(values), raw_value(m), raw_value(whole)]), zero_cluster, hermitian)
    if parent is not None:
        parent.append(split)
    if not probe or any(x is None for x in probe):
        return None
    r = min(x[0] for x in probe)
    if r <= GAUGE_RTOL:
        return None
    if split is None:
        return (name, r, reach, any(x[1] for x in probe))
    r = min(r, split[0])
    if r > GAUGE_RTOL:
        _report(
            [("degeneracy", _second_order_message(name, r, "singular values" if zero_cluster else "eigenvalues"))],
            config.gauge,
        )
    return None


def _second_order_message(name: str, r: float, what: str) -> str:
    return (
        f"{name}: a derivative of order >= 2 goes through a degenerate block of {what} (within "
        f"degeneracy_rtol={config.degeneracy_rtol:g}) in a direction that splits it (the in-block "
        f"perturbation is not a multiple of the identity; relative size {r:.2e}): the second "
        f"derivative through a degenerate block of {what} is not determined by the decomposition "
        f"(inside the block the {what} move as the eigenvalues of the in-block perturbation, which "
        "a rule linear in it cannot give), so this result misses part of it (docs/ad/gauge.md). "
        "Write the function as a matrix function, whose rule is exact there: "
        "tenferro.linalg.funm_hermitian(a, f) for tr f(A) or V f(w) V^H (of a^H a for singular "
        "values), traces of matrix products (tr A^3 = tr(A @ A @ A), ||A||_F^2 = sum |a|^2), "
        "log|det| by tenferro.linalg.slogdet, expm, sqrtm_psd, polar."
    )


def _second_order_transpose(second: tuple, cts: list, res: Any, policy: str) -> None:
    """The deferred report of :func:`second_order_check` (reverse mode underneath): the
    cotangents ``cts`` (None: zero) and residuals ``res`` of the rule's
    :data:`gauge_check_p`, tracers of the outer differentiation, read as their values and
    their tangents along the outer direction."""
    name, r, reach, blind = second
    n, k = len(cts), len(res)
    raws = [None if c is None else raw_value(c) for c in cts] + [raw_value(x) for x in res]
    if any(x is None for x in raws[n:]) or any(c is not None and v is None for c, v in zip(cts, raws)):
        return
    raws += [None if c is None else raw_tangent(c) for c in cts] + [raw_tangent(x) for x in res]
    a = aligned(raws)
    try:
        hit = reach(a[:n], a[n + k : 2 * n + k], a[n : n + k], a[2 * n + k :], blind)
    except ValueError:  # batch axes that do not line up: say so rather than stay silent
        hit = 1.0
    if hit > GAUGE_RTOL:
        what = "singular values" if name == "svd" else "eigenvalues"
        _report([("degeneracy", _second_order_message(name, r, what))], policy)


def _widen(x: Any, ndim: int) -> Any:
    """``x`` with singleton axes appended up to ``ndim`` (vmapped directions: trailing axes)."""
    return None if x is None else x.reshape(x.shape + (1,) * (ndim - x.ndim))


def block_reach(values: Any, value_ct: tuple, vectors: list, blind: bool = False, zero_cluster: bool = False) -> float:
    """How much a cotangent touches the degenerate blocks of ``values`` ``[K, B...]`` (rows
    of :func:`._spectral.degenerate_pairs`), relative to its size: ``value_ct = (c, dc)``
    the values' cotangent and its derivative along the outer direction (``max|v|`` times
    them: units of the loss), ``vectors = [(Q, dQ, G, dG)]``: a factor of orthonormal
    columns ``[M, K, B...]``, its derivative, the PyTorch-style gradient ``G`` of it and
    ``dG`` (arrays, trailing batch; ``dQ``, ``G``, ``dG`` may be None). The block is
    touched through ``c_B``, the columns ``G e_B`` and the rows ``Q_B^H G`` (the couplings
    the rule divides by gaps), and their derivatives (``Q_B^H dG + dQ_B^H G``): when all
    vanish the rule's output is zero in the block's rows and columns to first order along
    the outer direction, and the terms it cannot determine there do not enter; a values'
    cotangent uniform on a block (``tr A``, the nuclear norm) enters as ``c P_B`` (``c U_B
    V_B^H``), whose derivative is exact, so only its spread counts. ``blind``
    (the direction has no diagonal in a block it splits): the derivative of the values'
    cotangent, ``f''(w) diag(V^H dA V)`` for ``sum f(w)``, is 0 there whatever ``f''``, so
    a values' cotangent that varies at all (``dc`` not None) counts as touching (1)."""
    mask = degenerate_pairs(values, zero_cluster)
    if mask is None or not mask.any():
        return 0.0
    if blind and value_ct[1] is not None:
        return 1.0
    rows = mask.any(axis=1)  # [K, B...]
    xp = xp_of(values)
    scale = xp.max(xp.abs(values)) if values.size else 1.0
    scale = scale if scale > 0 else 1.0
    touch, total = 0.0, 0.0
    for i, c in enumerate(value_ct):
        if c is not None:
            c = c * scale
            part = c
            if i == 0:  # the cotangent itself: uniform on a block is exact (V_B c V_B^H = c P_B)
                m = _widen(mask, c.ndim + 1)
                part = c - (c + xp.sum(xp.where(m, c[None], 0), axis=1)) / (1 + xp.sum(m, axis=1))
            touch += float(xp.sum(xp.abs(xp.where(_widen(rows, c.ndim), part, 0)) ** 2))
            total += float(xp.sum(xp.abs(c) ** 2))
    for q, dq, g, dg in vectors:
        for dv in (g, dg):
            if dv is not None:
                cols = _widen(rows, dv.ndim - 1)[None]
                touch += float(xp.sum(xp.abs(xp.where(cols, dv, 0)) ** 2))
                total += float(xp.sum(xp.abs(dv) ** 2))
        proj = 0
        for a, b in ((q, dg), (dq, g)):
            if a is not None and b is not None:
                n = max(a.ndim, b.ndim)
                proj = proj + xp.einsum("mk...,mj...->kj...", xp.conj(_widen(a, n)), _widen(b, n))
        if g is not None:
            n = max(q.ndim, g.ndim)
            x = xp.einsum("mk...,mj...->kj...", xp.conj(_widen(q, n)), _widen(g, n))
            touch += float(xp.sum(xp.abs(xp.where(_widen(rows, x.ndim - 1)[:, None], x, 0)) ** 2))
        if type(proj) is not int:
            touch += float(xp.sum(xp.abs(xp.where(_widen(rows, proj.ndim - 1)[:, None], proj, 0)) ** 2))
    return (touch / total) ** 0.5 if total > 0 else 0.0
