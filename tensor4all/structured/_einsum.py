"""The einsum kernels: diagonals stay 1-d operands on hyper-edges; a block-diagonal
operand splits the einsum into one einsum per block.

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

from ._blockdiag import BlockDiagonal
from ._checks import parse_einsum_subscripts
from ._diagonal import DiagonalTensor
from ._dispatch import structure_name
from ._errors import StructuredShapeError

__all__ = ["diagonal_einsum", "block_einsum", "merge_diagonals", "parse_subscripts"]


def parse_subscripts(subscripts: Any, n: int) -> tuple[list[str], str] | None:
    """``(input labels, output labels)`` of a plain subscripts string (implicit output:
    labels seen once, sorted, as NumPy); None for ellipses or non-strings. The syntax
    is checked by tenferro's own parser (``EinsumSubscriptError``, as dense)."""
    if not isinstance(subscripts, str):
        return None
    parsed = parse_einsum_subscripts(subscripts)
    if "." in subscripts:
        return None
    ins = ["".join(t) for t in parsed.terms] if subscripts.split("->")[0].strip() or n else []
    if len(ins) != n:
        raise StructuredShapeError(f"einsum: {subscripts!r} names {len(ins)} operands, got {n}")
    if parsed.output is None:
        flat = "".join(ins)
        return ins, "".join(sorted(c for c in set(flat) if flat.count(c) == 1))
    for c, pos in zip(parsed.output, parsed.out_positions):
        if not any(c in lab for lab in ins):  # as tenferro's einsum says it, before labels are merged
            raise tf.EinsumSubscriptError(
                f"einsum: output label {c!r} does not appear in any input term", subscripts, pos
            )
    return ins, "".join(parsed.output)


def merge_diagonals(subscripts: Any, ins: list[str], out: str, operands: tuple) -> tuple[list[str], list[Any], str]:
    """Tie the labels of every DiagonalTensor into one class (union-find), rename every
    label to its class and replace each diagonal by its 1-d leaf. Other operands are kept
    (with renamed labels). Raises StructuredShapeError when tied labels differ in extent."""
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
            raise StructuredShapeError(
                f"einsum: {subscripts!r}: labels {lab!r} given to {structure_name(x)} of ndim {nd}"
            )
        for c, e in zip(lab, getattr(x, "shape", ())):
            extents.setdefault(c, []).append((e, x))
            find(c)
        if isinstance(x, DiagonalTensor):
            for c in lab[1:]:
                parent[find(c)] = find(lab[0])
    classes: dict[str, list[tuple[int, Any]]] = {}
    for c, es in extents.items():
        classes.setdefault(find(c), []).extend(es)
    for es in classes.values():
        if len({e for e, _ in es}) > 1:
            names = "; ".join(f"{structure_name(x)}: {e}" for e, x in es)
            raise StructuredShapeError(
                f"einsum: {subscripts!r}: indices tied by a diagonal (or repeated) have different extents ({names})"
            )
    new_ins, new_ops = [], []
    for lab, x in zip(ins, operands):
        if isinstance(x, DiagonalTensor):
            new_ins.append(find(lab[0]))
            new_ops.append(x.diag)
        else:
            new_ins.append("".join(find(c) for c in lab))
            new_ops.append(x)
    return new_ins, new_ops, "".join(find(c) for c in out)


def diagonal_einsum(subscripts: Any, *operands: Any, **kwargs: Any) -> Any:
    """``einsum`` over any mix of DiagonalTensors and dense operands (see module doc)."""
    parsed = parse_subscripts(subscripts, len(operands))
    if parsed is None:
        return NotImplemented
    new_ins, new_ops, new_out = merge_diagonals(subscripts, *parsed, operands)
    if len(new_out) >= 2 and len(set(new_out)) == 1:
        res = tf.einsum(",".join(new_ins) + "->" + new_out[0], *new_ops, **kwargs)
        return DiagonalTensor(res, len(new_out))
    return tf.einsum(",".join(new_ins) + "->" + new_out, *new_ops, **kwargs)


def block_einsum(subscripts: Any, *operands: Any, **kwargs: Any) -> Any:
    """``einsum`` with one BlockDiagonal operand (labels ``a b``), any diagonals and dense
    operands: one einsum per block, with every other operand cut to the block's rows along
    ``a`` and to its columns along ``b``. The per-block results are summed (``a`` and ``b``
    contracted), concatenated (one of them kept) or returned as a BlockDiagonal (output
    exactly ``ab`` or ``ba``). Other cases (several block-diagonals, ...) fall back."""
    parsed = parse_subscripts(subscripts, len(operands))
    if parsed is None or sum(isinstance(x, BlockDiagonal) for x in operands) != 1:
        return NotImplemented
    ins, ops, out = merge_diagonals(subscripts, *parsed, operands)
    p = next(i for i, x in enumerate(ops) if isinstance(x, BlockDiagonal))
    blk, (a, b) = ops[p], ins[p]
    keep_a, keep_b = a in out, b in out
    if a == b or len(set(out)) != len(out) or (keep_a and keep_b and len(out) != 2):
        return NotImplemented
    spec = ",".join(ins) + "->" + out
    ro, co = blk.row_offsets, blk.col_offsets
    parts = []
    for k, block in enumerate(blk.blocks):
        cut = {a: slice(ro[k], ro[k + 1]), b: slice(co[k], co[k + 1])}
        args = [
            block if i == p else (x[tuple(cut.get(c, slice(None)) for c in lab)] if set(lab) & {a, b} else x)
            for i, (lab, x) in enumerate(zip(ins, ops))
        ]
        parts.append(tf.einsum(spec, *args, **kwargs))
    if keep_a and keep_b:
        return BlockDiagonal(parts)
    if keep_a or keep_b:
        return parts[0] if len(parts) == 1 else tf.concatenate(parts, axis=out.index(a if keep_a else b))
    total = parts[0]
    for part in parts[1:]:
        total = tf.add(total, part)
    return total
