"""The einsum kernel for diagonal operands: diagonals stay 1-d operands on hyper-edges.

A ``DiagonalTensor`` with labels ``"ij"`` says ``i == j``: its labels are merged into
one equivalence class (union-find over all diagonal operands), every label is renamed
to its class, and the diagonal enters as a 1-d operand. ``"ik,k,kj->ij"``-style
hyper-edges are then contracted by tenferro's einsum without ever building an n x n
array. An output whose labels all fall into one class is returned as a DiagonalTensor.

>>> import numpy as np, tenferro as tf
>>> d = DiagonalTensor(tf.asarray(np.array([1.0, 2.0])))
>>> x = tf.asarray(np.ones((2, 3)))
>>> diagonal_einsum("ij,jk->ik", d, x).tolist()
[[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
"""
from __future__ import annotations

from typing import Any

import tenferro as tf

from ._diagonal import DiagonalTensor
from ._dispatch import structure_name
from ._errors import StructuredShapeError

__all__ = ["diagonal_einsum", "parse_subscripts"]


def parse_subscripts(subscripts: Any, n: int) -> tuple[list[str], str] | None:
    """``(input labels, output labels)`` of a plain subscripts string (implicit output:
    labels seen once, sorted, as NumPy); None for ellipses or non-strings."""
    if not isinstance(subscripts, str) or "." in subscripts:
        return None
    s = subscripts.replace(" ", "")
    lhs, out = s.split("->") if "->" in s else (s, None)
    ins = lhs.split(",") if lhs or n else []
    if len(ins) != n:
        raise StructuredShapeError(f"einsum: {subscripts!r} names {len(ins)} operands, got {n}")
    if out is None:
        flat = lhs.replace(",", "")
        out = "".join(sorted(c for c in set(flat) if flat.count(c) == 1))
    return ins, out


def diagonal_einsum(subscripts: Any, *operands: Any, **kwargs: Any) -> Any:
    """``einsum`` over any mix of DiagonalTensors and dense operands (see module doc)."""
    parsed = parse_subscripts(subscripts, len(operands))
    if parsed is None:
        return NotImplemented
    ins, out = parsed
    parent: dict[str, str] = {}

    def find(c: str) -> str:
        parent.setdefault(c, c)
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    extents: dict[str, list[tuple[int, Any]]] = {}
    for lab, x in zip(ins, operands):
        nd = len(getattr(x, "shape", ()))
        if len(lab) != nd:
            raise StructuredShapeError(f"einsum: {subscripts!r}: labels {lab!r} given to {structure_name(x)} "
                                       f"of ndim {nd}")
        for c, e in zip(lab, getattr(x, "shape", ())):
            extents.setdefault(c, []).append((e, x))
            find(c)
        if isinstance(x, DiagonalTensor):
            for c in lab[1:]:
                parent[find(c)] = find(lab[0])
    classes: dict[str, list[tuple[int, Any]]] = {}
    for c, es in extents.items():
        classes.setdefault(find(c), []).extend(es)
    for rep, es in classes.items():
        if len({e for e, _ in es}) > 1:
            names = "; ".join(f"{structure_name(x)}: {e}" for e, x in es)
            raise StructuredShapeError(f"einsum: {subscripts!r}: indices tied by a diagonal (or repeated) have "
                                       f"different extents ({names})")
    new_ins, new_ops = [], []
    for lab, x in zip(ins, operands):
        if isinstance(x, DiagonalTensor):
            new_ins.append(find(lab[0]))
            new_ops.append(x.diag)
        else:
            new_ins.append("".join(find(c) for c in lab))
            new_ops.append(x)
    new_out = "".join(find(c) for c in out)
    if len(new_out) >= 2 and len(set(new_out)) == 1:
        res = tf.einsum(",".join(new_ins) + "->" + new_out[0], *new_ops, **kwargs)
        return DiagonalTensor(res, len(new_out))
    return tf.einsum(",".join(new_ins) + "->" + new_out, *new_ops, **kwargs)
