"""Gradient specs of the elementwise family (arithmetic, complex parts, abs/sign,
maximum/minimum, select, clip, power, the transcendental table, logaddexp), and of
``convert_element_type``/``broadcast_in_dim`` as reached through promotion and
broadcasting."""

from __future__ import annotations

import numpy as np

import tenferro as tf

from . import OpSpec

UNARY = [((),), ((0,),), ((2, 3),)]
BINARY = [((), ()), ((0,), (0,)), ((2, 3), (2, 3)), ((3,), (2, 3)), ((2, 1), (1, 3)), ((), (2, 3))]


def _sample(rng, dtype, shape):
    v = rng.standard_normal(shape)
    if dtype.is_complex:
        v = v + 1j * rng.standard_normal(shape)
    return v


def _t(v, dtype):
    return tf.asarray(np.asarray(v, dtype=dtype.numpy))


def _away_from_zero(rng, dtype, shapes):
    """|x| >= 0.5 (real or complex): abs and sign are smooth there."""
    out = []
    for s in shapes:
        v = _sample(rng, dtype, s)
        v = v / np.maximum(np.abs(v), 1e-300) * (np.abs(v) + 0.5)
        out.append(_t(v, dtype))
    return out


def _upper_half_plane(rng, dtype, shapes):
    """``(y, x)`` with ``y >= 0.3``: away from the origin and from arctan2's jump on the
    negative x axis (for any broadcast shapes)."""
    (sy, sx) = shapes
    return [_t(np.abs(rng.standard_normal(sy)) + 0.3, dtype), _t(rng.standard_normal(sx), dtype)]


def _off_the_cut(rng, dtype, shapes):
    """``|z|`` in [0.5, 2] and ``arg z`` in (-2.8, 2.8): angle is smooth there (real input:
    positive entries, where angle is the constant 0)."""
    (s,) = shapes
    r, th = 0.5 + 1.5 * rng.random(s), rng.uniform(-2.8, 2.8, s)
    return [_t(r * np.exp(1j * th) if dtype.is_complex else r, dtype)]


def _distinct_pairs(rng, dtype, shapes):
    """Two real operands that differ by at least 0.6 wherever they meet under
    broadcasting (no ties): x near even integers, y near odd ones."""
    x = 2.0 * rng.integers(-2, 3, shapes[0]) + 0.2 * rng.random(shapes[0])
    y = 2.0 * rng.integers(-2, 3, shapes[1]) + 1.0 + 0.2 * rng.random(shapes[1])
    return [_t(x, dtype), _t(y, dtype)]


def _positive_base(rng, dtype, shapes):
    """Base with real part >= 0.5 (away from 0 and the branch cut of log), exponent any."""
    x = _sample(rng, dtype, shapes[0])
    x = np.abs(x.real) + 0.5 + (1j * x.imag if dtype.is_complex else 0)
    return [_t(x, dtype), _t(_sample(rng, dtype, shapes[1]), dtype)]


def _float_and_complex(rng, dtype, shapes):
    """float64 x and complex128 y: promotion through convert_element_type."""
    return [_t(rng.standard_normal(shapes[0]), tf.float64), _t(_sample(rng, tf.complex128, shapes[1]), tf.complex128)]


def _away_from_bounds(rng, dtype, shapes):
    """Values at least 0.1 away from the clip bounds +-0.5."""
    v = rng.uniform(-1.5, 1.5, shapes[0])
    v = np.where(np.abs(np.abs(v) - 0.5) < 0.1, v + 0.25, v)
    return [_t(v, dtype)]


REAL = ("float64",)

SPECS = [
    OpSpec("ew_add", tf.add, BINARY, ("add", "broadcast_in_dim")),
    OpSpec("ew_subtract", tf.subtract, BINARY, ("sub", "broadcast_in_dim")),
    OpSpec("ew_multiply", tf.multiply, BINARY, ("mul", "broadcast_in_dim")),
    OpSpec("ew_divide", tf.divide, BINARY, ("div",), domain="positive"),
    OpSpec("ew_negative", tf.negative, UNARY, ("neg",)),
    OpSpec("ew_conj", tf.conj, UNARY, ("conj",)),
    OpSpec("ew_real", tf.real, UNARY, ("real",)),
    OpSpec("ew_imag", tf.imag, UNARY, ("imag",)),
    OpSpec(
        "ew_scalar_ops",
        lambda x: 2.0 * x - x / 3.0 + 1j * x if x.dtype.is_complex else 2.0 * x - x / 3.0,
        UNARY,
        ("mul", "sub", "div", "add"),
    ),
    OpSpec(
        "ew_promote_mul",
        tf.multiply,
        [((2, 3), (2, 3)), ((3,), (2, 3)), ((), ())],
        ("convert_element_type", "mul", "broadcast_in_dim"),
        dtypes=("complex128",),
        make_args=_float_and_complex,
    ),
    OpSpec("ew_abs", tf.abs, UNARY, ("abs", "div", "real", "convert_element_type"), make_args=_away_from_zero),
    OpSpec(
        "ew_sign_complex",
        tf.sign,
        UNARY,
        ("abs", "div", "select", "eq"),
        dtypes=("complex128",),
        make_args=_away_from_zero,
    ),
    OpSpec("ew_maximum", tf.maximum, BINARY, ("maximum", "select", "gt"), dtypes=REAL, make_args=_distinct_pairs),
    OpSpec("ew_minimum", tf.minimum, BINARY, ("minimum", "select", "lt"), dtypes=REAL, make_args=_distinct_pairs),
    OpSpec("ew_where", lambda x, y: tf.where(tf.real(x) > 0, x, y), BINARY, ("select", "gt", "broadcast_in_dim")),
    OpSpec("ew_where_scalar", lambda x: tf.where(tf.real(x) > 0, x, 0.0), UNARY, ("select",)),
    OpSpec(
        "ew_clip",
        lambda x: tf.clip(x, -0.5, 0.5),
        [((),), ((0,),), ((4, 3),)],
        ("select", "lt", "gt"),
        dtypes=REAL,
        make_args=_away_from_bounds,
    ),
    OpSpec("ew_power", tf.power, BINARY, ("pow", "log", "select", "eq"), make_args=_positive_base),
    OpSpec("ew_power_int_exponent", lambda x: x**3, UNARY, ("pow",)),
    OpSpec("ew_rpow", lambda x: 2.0**x, UNARY, ("pow",)),
    OpSpec("ew_logaddexp", tf.logaddexp, BINARY, ("logaddexp", "exp"), dtypes=REAL),
    OpSpec("ew_arctan2", tf.arctan2, BINARY, ("atan2",), dtypes=REAL, make_args=_upper_half_plane),
    OpSpec("ew_angle", tf.angle, UNARY, ("atan2", "imag"), make_args=_off_the_cut),
    OpSpec("ew_angle_deg", lambda z: tf.angle(z, deg=True), UNARY, ("atan2",), make_args=_off_the_cut),
]

# the transcendental table: name -> domain that keeps the function smooth
_DOMAINS = {
    "exp": "any",
    "log": "positive",
    "sin": "any",
    "cos": "any",
    "tan": "unit",
    "sinh": "any",
    "cosh": "any",
    "tanh": "unit",
    "arcsin": "unit",
    "arccos": "unit",
    "arctan": "unit",
    "sqrt": "positive",
    "rsqrt": "positive",
    "expm1": "any",
    "log1p": "positive",
    "square": "any",
    "reciprocal": "positive",
}
SPECS += [OpSpec(f"ew_{name}", getattr(tf, name), UNARY, (name,), domain=dom) for name, dom in _DOMAINS.items()]
