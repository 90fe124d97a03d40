"""Gradient specs of the reductions family: sum, prod (with zeros), max, min, mean,
logsumexp, var, std, over single axes, several axes, all axes, keepdims, 0-d and size-0;
cumsum along one axis (argmax/argmin have a zero derivative: test_grad_table's
ZERO_DERIVATIVE_CALLS)."""

from __future__ import annotations

import numpy as np

import tenferro as tf

from . import OpSpec

REAL = ("float64",)
# (shape, axis) cases; the spec functions close over the axis
AXES = [
    ((), None),
    ((0,), None),
    ((5,), 0),
    ((2, 3), 0),
    ((2, 3), 1),
    ((2, 3), None),
    ((2, 3, 2), (0, 2)),
    ((4, 2), -2),
    ((0, 3), 0),
]


def _case_covers(covers, shape, keepdims):
    """What one case really binds: a full reduction of a 0-d tensor is the identity
    (nothing), a size-0 product needs no pairwise tree (no stride2_*), and only
    keepdims reshapes."""
    if shape == ():
        return ()
    return tuple(
        c for c in covers if not (0 in shape and c.startswith("stride2_")) and not (c == "reshape" and not keepdims)
    )


def _specs(prefix, fn, covers, cases=AXES, **kw):
    out = []
    for shape, axis in cases:
        for keepdims in (False, True):
            name = f"{prefix}_ax{'all' if axis is None else axis}{'_keep' if keepdims else ''}".replace(" ", "")

            def f(x, axis=axis, keepdims=keepdims):
                return fn(x, axis=axis, keepdims=keepdims)

            out.append(OpSpec(name, f, [(shape,)], _case_covers(covers, shape, keepdims), **kw))
    return out


def _t(v, dtype):
    return tf.asarray(np.asarray(v, dtype=dtype.numpy))


def _with_zeros(count):
    """Random entries with ``count`` exact zeros per reduced row (prod's hard case)."""

    def make(rng, dtype, shapes):
        (shape,) = shapes
        v = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype.is_complex else 0)
        flat = v.reshape(-1)
        if flat.size:
            flat[rng.choice(flat.size, size=min(count, flat.size), replace=False)] = 0
        return [_t(flat.reshape(shape), dtype)]

    return make


def _distinct(rng, dtype, shapes):
    """Entries spaced at least 0.5 apart: no ties, so max/min are smooth."""
    (shape,) = shapes
    n = int(np.prod(shape))
    v = rng.permutation(n) * 0.5 + 0.1 * rng.random(n)
    return [_t(v.reshape(shape), dtype)]


# size-0 reductions: max/min raise; mean (NaN) and logsumexp (-inf) have no finite
# neighbourhood to difference -- their values are tested in test_reductions.py
_NONEMPTY = [c for c in AXES if 0 not in c[0]]
# var with ddof=1 and std need two or more entries per reduction (ddof < count; var > 0)
_SEVERAL = [c for c in _NONEMPTY if c[0] != ()]

SPECS = (
    _specs("red_sum", tf.sum, ("sum", "reshape", "broadcast_in_dim"))
    + _specs("red_prod", tf.prod, ("prod", "stride2_slice", "stride2_scatter"))
    + _specs("red_mean", tf.mean, ("sum", "mul"), cases=_NONEMPTY)
    + _specs("red_max", tf.max, ("max",), cases=_NONEMPTY, dtypes=REAL, make_args=_distinct)
    + _specs("red_min", tf.min, ("min",), cases=_NONEMPTY, dtypes=REAL, make_args=_distinct)
    + _specs("red_logsumexp", tf.logsumexp, ("logsumexp", "exp"), cases=_NONEMPTY, dtypes=REAL)
    + _specs("red_var", tf.var, ("sum", "mul", "conj", "real"), cases=_NONEMPTY)
    + _specs("red_var_ddof1", lambda x, **kw: tf.var(x, ddof=1, **kw), ("sum", "mul"), cases=_SEVERAL)
    + _specs("red_std", tf.std, ("sum", "sqrt"), cases=_SEVERAL)
    + [
        OpSpec(
            f"red_cumsum_ax{'all' if axis is None else axis}",
            lambda x, axis=axis: tf.cumsum(x, axis=axis),
            [(shape,)],
            ("cumsum",),
        )
        for shape, axis in [
            ((), None),
            ((0,), None),
            ((5,), 0),
            ((2, 3), 0),
            ((2, 3), -1),
            ((2, 3), None),
            ((2, 0, 2), 2),
        ]
    ]
    + [
        OpSpec("red_prod_one_zero", tf.prod, [((5,),), ((2, 2),)], ("prod",), make_args=_with_zeros(1)),
        OpSpec("red_prod_two_zeros", tf.prod, [((5,),), ((3, 2),)], ("prod",), make_args=_with_zeros(2)),
        OpSpec("red_prod_three_zeros", lambda x: tf.prod(x, axis=1), [((2, 4),)], ("prod",), make_args=_with_zeros(3)),
        OpSpec("red_prod_big_odd", lambda x: tf.prod(x, axis=0), [((7, 2),), ((9,),)], ("prod",)),
    ]
)
