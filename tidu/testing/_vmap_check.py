"""``check_vmap``: :func:`tidu.vmap` against a Python loop over the examples."""

from __future__ import annotations

from typing import Any, Callable

from .._batching import _normalize, _prefix_axes, vmap
from .._pytree import tree_flatten, tree_unflatten
from .._tracer import aval_of, vspace_of
from ._check import GradientCheckError, _close

__all__ = ["check_vmap", "VmapCheckError", "take_example"]


class VmapCheckError(GradientCheckError):
    """``vmap(f)`` disagrees with ``f`` applied to each example."""


def take_example(x: Any, axis: int, i: int) -> Any:
    """Example ``i`` of ``x`` along ``axis`` (the axis moved first, then indexed)."""
    vs = vspace_of(x)
    return (vs.move_axis(x, axis, 0) if axis else x)[i]


def check_vmap(
    f: Callable[..., Any], args: tuple, in_axes: Any = 0, out_axes: Any = 0, *, atol: float = 1e-12, rtol: float = 1e-12
) -> Any:
    """Compare ``vmap(f, in_axes, out_axes)(*args)`` with ``f`` on each example (the mapped
    arguments indexed along their axes), output leaf by leaf, to ``atol + rtol * |want|``;
    raises :class:`VmapCheckError` naming the example and the leaf. Returns the batched output."""
    batched = vmap(f, in_axes, out_axes)(*args)
    flat, tree = tree_flatten(tuple(args))
    axes = _prefix_axes(in_axes, tree, "in_axes", "")
    size = None
    for k, (x, ax) in enumerate(zip(flat, axes)):
        if ax is not None:
            axes[k] = _normalize(ax, vspace_of(x).ndim(aval_of(x)), "in_axes")
            size = vspace_of(x).axis_size(aval_of(x), axes[k])
    if size is None:
        raise VmapCheckError("check_vmap: no argument is mapped; nothing to compare")
    out_flat, out_tree = tree_flatten(batched)
    oaxes = _prefix_axes(out_axes, out_tree, "out_axes", "")
    for i in range(size):
        example = [x if ax is None else take_example(x, ax, i) for x, ax in zip(flat, axes)]
        want, want_tree = tree_flatten(f(*tree_unflatten(tree, example)))
        if want_tree != out_tree:
            raise VmapCheckError(f"check_vmap: example {i} returns structure {want_tree}, vmap {out_tree}")
        got = [
            o if oa is None else take_example(o, _normalize(oa, vspace_of(o).ndim(aval_of(o)), "out_axes"), i)
            for o, oa in zip(out_flat, oaxes)
        ]
        try:
            _close(f"check_vmap (example {i})", got, want, atol, rtol)
        except GradientCheckError as e:
            raise VmapCheckError(str(e)) from None
    return batched
