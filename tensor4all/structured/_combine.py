"""Composition of shapes through index strings (seed 001's ``s1("i,k") = ...``):
``combine("ij,jk->ik", a, b)`` returns the result shape or raises
:class:`ShapeCombineError`.

>>> combine("ij,jk->ik", Shape(2, 3), Shape(3, 4))
Shape(2, 4)
"""

from __future__ import annotations

from typing import Any, Sequence

from tenferro import Shape

from ._errors import ShapeCombineError, StructuredTypeError
from ._shapes import JaggedShape, Nested, TiledShape

__all__ = ["combine"]


def _parse(spec: str, n: int) -> tuple[list[str], str]:
    if not isinstance(spec, str):
        raise StructuredTypeError(f"combine: the index expression must be a string ('ij,jk->ik'), got {spec!r}")
    if spec.count("->") != 1:
        raise ShapeCombineError(f"combine: {spec!r} needs exactly one explicit output ('ij,jk->ik')")
    lhs, out = spec.replace(" ", "").split("->")
    ins = lhs.split(",") if lhs else []
    if len(ins) != n:
        raise ShapeCombineError(f"combine: {spec!r} names {len(ins)} operands, got {n} shapes")
    for lab in ins + [out]:
        if not all(c.isalpha() for c in lab) or len(set(lab)) != len(lab):
            raise ShapeCombineError(f"combine: {spec!r}: labels must be distinct letters per operand")
    if set(out) - set("".join(ins)):
        raise ShapeCombineError(
            f"combine: {spec!r}: output labels {sorted(set(out) - set(''.join(ins)))} appear in no operand"
        )
    return ins, out


def combine(spec: str, *shapes: Any) -> Any:
    """The shape of the index expression ``spec`` (``"ij,jk->ik"``) over ``shapes``.

    Labels shared by several operands must have equal extents (for tiled shapes, equal
    tilings). Smooth shapes give a Shape; tiled operands give a TiledShape; jagged
    operands are combined slice by slice along a shared outer label that leads the
    output; :class:`Nested` operands give a Nested result whose modes keep the
    outermost layer any operand gives them (an elementwise expression -- the same
    labels everywhere -- needs identical layerings).
    """
    shapes = tuple(_as_shape(k, s) for k, s in enumerate(shapes))
    ins, out = _parse(spec, len(shapes))
    for lab, s in zip(ins, shapes):
        if s.rank != len(lab):
            raise ShapeCombineError(f"combine: operand {lab!r} of {spec!r} has rank {s.rank}: {s!r}")
    if any(isinstance(s, Nested) for s in shapes):
        return _combine_nested(spec, ins, out, shapes)
    return _combine(spec, ins, out, list(shapes))


def _as_shape(k: int, s: Any) -> Any:
    """A shape operand of ``combine``: a Shape, JaggedShape, TiledShape or Nested, or a
    tuple of extents (a Shape)."""
    if isinstance(s, (Shape, JaggedShape, TiledShape, Nested)):
        return s
    if isinstance(s, tuple):
        return Shape(s)
    raise StructuredTypeError(
        f"combine: shape {k} must be a Shape, JaggedShape, TiledShape, Nested or a tuple of extents, got {s!r}"
    )


def _combine_nested(spec: str, ins: list[str], out: str, shapes: Sequence[Any]) -> Nested:
    inner = combine(spec, *(s.shape if isinstance(s, Nested) else s for s in shapes))
    nested = [(lab, s) for lab, s in zip(ins, shapes) if isinstance(s, Nested)]
    if all(set(lab) == set(out) for lab in ins):  # elementwise: layers must agree
        lays = {tuple(s.layer_of(lab.index(c)) for c in out) for lab, s in nested}
        if len(lays) > 1:
            raise ShapeCombineError(
                f"combine: {spec!r} is elementwise but the operands are layered differently: {[s for _, s in nested]}"
            )
    n_layers = max(s.n_layers for _, s in nested)
    layer = [min(s.layer_of(lab.index(c)) for lab, s in nested if c in lab) for c in out]
    if any(a > b for a, b in zip(layer, layer[1:])):
        raise ShapeCombineError(
            f"combine: {spec!r}: output modes would have layers {layer}, which do "
            "not increase left to right; permute the output labels"
        )
    return Nested([layer.count(k) for k in range(n_layers)], inner)


def _combine(spec: str, ins: list[str], out: str, shapes: list[Any]) -> Any:
    shapes = [s.to_shape() if isinstance(s, JaggedShape) and s.to_shape() is not None else s for s in shapes]
    shapes = [Shape(s) if isinstance(s, tuple) and not isinstance(s, Shape) else s for s in shapes]
    jagged = [k for k, s in enumerate(shapes) if isinstance(s, JaggedShape)]
    if not jagged:
        return _combine_smooth(spec, ins, out, shapes)
    lead = {ins[k][0] for k in jagged}
    if len(lead) != 1 or not out or out[0] not in lead:
        raise ShapeCombineError(
            f"combine: {spec!r}: jagged operands combine only slice by slice along one "
            f"shared outer label that leads the output; got {[shapes[k] for k in jagged]}"
        )
    o = lead.pop()
    ext = {shapes[k].extent for k, lab in enumerate(ins) if o in lab and isinstance(shapes[k], JaggedShape)}
    ext |= {shapes[k][lab.index(o)] for k, lab in enumerate(ins) if o in lab and isinstance(shapes[k], Shape)}
    if len(ext) != 1:
        raise ShapeCombineError(f"combine: {spec!r}: label {o!r} has extents {sorted(ext)} in {shapes}")
    n = ext.pop()
    sub_ins = [lab.replace(o, "") for lab in ins]
    sub_spec = ",".join(sub_ins) + "->" + out[1:]
    elems = []
    for i in range(n):
        chips = [_chip_label(s, lab, o, i) for s, lab in zip(shapes, ins)]
        elems.append(_combine(sub_spec, sub_ins, out[1:], chips))
    return JaggedShape(elems)


def _chip_label(s: Any, lab: str, o: str, i: int) -> Any:
    if o not in lab:
        return s
    if isinstance(s, JaggedShape):
        return s.elements[i]
    m = lab.index(o)
    return Shape(tuple(e for k, e in enumerate(s) if k != m))


def _combine_smooth(spec: str, ins: list[str], out: str, shapes: list[Any]) -> Any:
    tiling: dict[str, tuple[int, ...] | None] = {}
    extent: dict[str, int] = {}
    for lab, s in zip(ins, shapes):
        tl = s.tilings if isinstance(s, TiledShape) else (None,) * len(lab)
        ext = s.shape if isinstance(s, TiledShape) else s
        for c, t, e in zip(lab, tl, ext):
            if c in extent and extent[c] != e:
                raise ShapeCombineError(
                    f"combine: {spec!r}: label {c!r} has extent {extent[c]} and {e} (shapes {shapes})"
                )
            extent[c] = e
            if t is not None:
                if tiling.get(c) is not None and tiling[c] != t:
                    raise ShapeCombineError(
                        f"combine: {spec!r}: label {c!r} is tiled {list(tiling[c])} and {list(t)} (shapes {shapes})"
                    )
                tiling[c] = t
    if any(tiling.get(c) is not None for c in out):
        return TiledShape(*(tiling.get(c) or (extent[c],) for c in out))
    return Shape(tuple(extent[c] for c in out))
