"""Finite-difference and dot-product checks of derivatives (see package docstring)."""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from .._api import _flatten_like, jvp, vjp
from .._errors import InvalidArgumentError, NonDifferentiableError, TiduError
from .._pytree import tree_flatten, tree_unflatten
from .._tracer import aval_of
from .._vspace import vspace_of_aval

__all__ = ["check_jvp", "check_vjp", "check_grads", "numerical_jvp", "GradientCheckError"]


class GradientCheckError(TiduError, AssertionError):
    """A derivative disagrees with finite differences or with its transpose."""


def _leaf_info(x: Any):
    a = aval_of(x)
    vs = vspace_of_aval(a)
    return a, vs, vs.tangent_aval(a)


def _rand_like(leaves: list, rng: np.random.Generator) -> list:
    out = []
    for x in leaves:
        a, vs, ta = _leaf_info(x)
        out.append(None if ta is None else vspace_of_aval(ta).randn(ta, rng))
    return out


def _axpy(alpha: float, t: Any, x: Any) -> Any:
    """x + alpha * t (t may be None: no tangent)."""
    if t is None:
        return x
    vs = vspace_of_aval(aval_of(x))
    return vs.add(x, vs.scale(t, alpha))


def _default_eps(leaves: list) -> float:
    mach = max((vspace_of_aval(aval_of(x)).machine_epsilon(aval_of(x)) for x in leaves), default=2.0**-52)
    return 1e-4 if mach < 1e-10 else 1e-2 if mach < 1e-5 else 1e-1


def _default_tol(leaves: list) -> float:
    mach = max((vspace_of_aval(aval_of(x)).machine_epsilon(aval_of(x)) for x in leaves), default=2.0**-52)
    return 1e-5 if mach < 1e-10 else 2e-2


def numerical_jvp(f: Callable[..., Any], args: Sequence[Any], tangents: Sequence[Any], eps: float) -> list:
    """Central difference ``(f(x + eps t) - f(x - eps t)) / (2 eps)`` on flat outputs."""
    flat, tree = tree_flatten(tuple(args))
    t_flat = tangents
    plus = tree_flatten(f(*tree_unflatten(tree, [_axpy(eps, t, x) for x, t in zip(flat, t_flat)])))[0]
    minus = tree_flatten(f(*tree_unflatten(tree, [_axpy(-eps, t, x) for x, t in zip(flat, t_flat)])))[0]
    out = []
    for p, m in zip(plus, minus):
        vs = vspace_of_aval(aval_of(p))
        a = aval_of(p)
        if vs.tangent_aval(a) is None:
            out.append(None)
            continue
        out.append(vs.scale(vs.add(p, vs.scale(m, -1.0)), 0.5 / eps))
    return out


def _norm(x: Any) -> float:
    return math.sqrt(max(vspace_of_aval(aval_of(x)).inner(x, x), 0.0))


def _close(what: str, got: list, want: list, atol: float, rtol: float) -> None:
    for i, (g, w) in enumerate(zip(got, want)):
        if w is None:
            continue
        vs = vspace_of_aval(aval_of(w))
        diff = _norm(vs.add(g, vs.scale(w, -1.0)))
        scale = _norm(w)
        if not diff <= atol + rtol * scale or math.isnan(diff):
            raise GradientCheckError(
                f"{what}: output leaf {i} differs: |got - expected| = {diff:.3e}, |expected| = {scale:.3e}, "
                f"allowed {atol + rtol * scale:.3e}"
            )


def _validate(where: str, args: Any, eps: Any, atol: Any, rtol: Any, order: Any = 1) -> None:
    """Typed errors for arguments that would make a check meaningless or fail falsely."""
    if not isinstance(args, (tuple, list)):
        raise InvalidArgumentError(
            f"{where}: args must be a tuple (or list) of the function's arguments, got a "
            f"{type(args).__name__}; write ({type(args).__name__.lower()},) for one argument"
        )
    for name, v, positive in (("eps", eps, True), ("atol", atol, False), ("rtol", rtol, False)):
        if v is None:
            continue
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, float, np.integer, np.floating))
            or not math.isfinite(v)
            or v < 0
            or (positive and v == 0)
        ):
            raise InvalidArgumentError(
                f"{where}: {name} must be a finite float {'> 0' if positive else '>= 0'} or "
                f"None (the default), got {v!r}"
            )
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order < 1:
        raise InvalidArgumentError(f"{where}: order must be an int >= 1, got {order!r}")
    flat = tree_flatten(tuple(args))[0]
    if flat and not any(_leaf_info(x)[2] is not None for x in flat):  # (no leaves at all: nothing to miss)
        raise NonDifferentiableError(
            f"{where}: no argument is differentiable (got {', '.join(str(aval_of(x)) for x in flat)}); "
            "a check over integer or boolean inputs checks nothing: pass float or complex values"
        )


def check_jvp(
    f: Callable[..., Any],
    args: Sequence[Any],
    *,
    eps: float | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    seed: int = 0,
) -> None:
    """Check ``jvp(f)`` against central finite differences in a random direction."""
    _validate("check_jvp", args, eps, atol, rtol)
    flat, tree = tree_flatten(tuple(args))
    rng = np.random.default_rng(seed)
    eps = _default_eps(flat) if eps is None else eps
    tol = _default_tol(flat)
    atol = tol if atol is None else atol
    rtol = tol if rtol is None else rtol
    t_flat = _rand_like(flat, rng)
    _, t_out = jvp(f, tuple(args), tree_unflatten(tree, t_flat))
    t_out_flat = _flatten_outputs(t_out)
    want = numerical_jvp(f, args, t_flat, eps)
    _close(f"check_jvp({getattr(f, '__name__', 'f')})", t_out_flat, want, atol, rtol)


def _flatten_outputs(out: Any) -> list:
    return tree_flatten(out)[0]


def _inner_flat(xs: list, ys: list) -> float:
    total = 0.0
    for x, y in zip(xs, ys):
        if x is None or y is None:
            continue
        total += vspace_of_aval(aval_of(x)).inner(x, y)
    return total


def check_vjp(
    f: Callable[..., Any],
    args: Sequence[Any],
    *,
    eps: float | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    seed: int = 0,
) -> None:
    """Dot-product test ``Re<J u, v> == Re<u, J* v>`` with ``J u`` by finite differences
    and ``J* v = conj(vjp(conj v))``."""
    _validate("check_vjp", args, eps, atol, rtol)
    flat, tree = tree_flatten(tuple(args))
    rng = np.random.default_rng(seed)
    eps = _default_eps(flat) if eps is None else eps
    tol = _default_tol(flat)
    atol = tol if atol is None else atol
    rtol = tol if rtol is None else rtol
    out, vjp_fn = vjp(f, *args)
    out_flat, out_tree = tree_flatten(out)
    u = _rand_like(flat, rng)
    v = _rand_like(out_flat, rng)
    ju = numerical_jvp(f, args, u, eps)
    v_conj = [None if x is None else vspace_of_aval(aval_of(x)).conj(x) for x in v]
    # vjp_fn returns None for leaves without tangents; realign with the inputs' leaves
    ct_in = _realign(vjp_fn(tree_unflatten(out_tree, v_conj)), tree, flat)
    jstar_v = [None if c is None else vspace_of_aval(aval_of(c)).conj(c) for c in ct_in]
    lhs = _inner_flat(ju, v)
    rhs = _inner_flat(u, jstar_v)
    scale = math.sqrt(sum(_norm(x) ** 2 for x in ju if x is not None)) * math.sqrt(
        sum(_norm(x) ** 2 for x in v if x is not None)
    )
    if not abs(lhs - rhs) <= atol + rtol * max(scale, abs(lhs)) or math.isnan(lhs - rhs):
        raise GradientCheckError(
            f"check_vjp({getattr(f, '__name__', 'f')}): dot-product test failed: <Ju, v> = {lhs:.10g}, "
            f"<u, J*v> = {rhs:.10g} (difference {abs(lhs - rhs):.3e}, scale {scale:.3e})"
        )


def _realign(ct_tree: Any, tree, flat: list) -> list:
    """Flatten a cotangent tuple to ``flat``'s leaves (``None`` where no tangent)."""
    return _flatten_like(ct_tree, tree, "check_vjp")


def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    order: int = 2,
    modes: Sequence[str] = ("fwd", "rev"),
    *,
    eps: float | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    seed: int = 0,
) -> None:
    """Check derivatives of ``f`` at ``args`` to ``order`` in the given ``modes``.

    Order ``k > 1`` checks the JVP map ``(x, t) -> jvp(f, x, t)`` (for ``"fwd"``) and
    the VJP map ``(x, v) -> vjp(f, x)(v)`` (for ``"rev"``) to order ``k - 1``.
    """
    _validate("check_grads", args, eps, atol, rtol, order)
    args = tuple(args)
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise InvalidArgumentError(f"check_grads: unknown mode {mode!r}; expected 'fwd' or 'rev'")
    kw = dict(eps=eps, atol=atol, rtol=rtol, seed=seed)
    flat, tree = tree_flatten(args)
    rng = np.random.default_rng(seed + 1000 * order)
    if "fwd" in modes:
        check_jvp(f, args, **kw)
        if order > 1:
            t = _rand_like(flat, rng)
            diff = [i for i, x in enumerate(t) if x is not None]

            def f_jvp(*xs_and_ts):
                xs = xs_and_ts[: len(args)]
                ts_d = xs_and_ts[len(args) :]
                ts = [None] * len(flat)
                for i, tt in zip(diff, ts_d):
                    ts[i] = tt
                return jvp(f, xs, tree_unflatten(tree, ts))[1]

            f_jvp.__name__ = f"jvp({getattr(f, '__name__', 'f')})"
            check_grads(f_jvp, args + tuple(t[i] for i in diff), order - 1, ("fwd",), **kw)
    if "rev" in modes:
        check_vjp(f, args, **kw)
        if order > 1:
            out, _ = vjp(f, *args)
            out_flat, out_tree = tree_flatten(out)
            v = _rand_like(out_flat, rng)
            diff = [i for i, x in enumerate(v) if x is not None]

            def f_vjp(*xs_and_vs):
                xs = xs_and_vs[: len(args)]
                vs = [None] * len(out_flat)
                for i, vv in zip(diff, xs_and_vs[len(args) :]):
                    vs[i] = vv
                _, fn = vjp(f, *xs)
                return fn(tree_unflatten(out_tree, vs))

            f_vjp.__name__ = f"vjp({getattr(f, '__name__', 'f')})"
            check_grads(f_vjp, args + tuple(v[i] for i in diff), order - 1, ("rev",), **kw)
