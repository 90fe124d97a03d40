"""A toy value type and primitive set used only by tidu's own tests.

Values are NumPy arrays (0-d for scalars); the aval is (shape, dtype). The
primitive set is small but covers every rule kind: nonlinear unary ops, a
bilinear product, linear ops (incl. conj/real/imag for complex numbers),
reductions, broadcasting, stacking and a non-differentiable op.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import tidu
from tidu import Primitive, Zero, is_undefined


@dataclass(frozen=True)
class ToyAval:
    shape: tuple
    dtype: np.dtype

    def __str__(self) -> str:
        return f"{self.dtype.name}{list(self.shape)}"


class ToyVSpace(tidu.VSpace):
    def aval(self, x):
        x = np.asarray(x)
        return ToyAval(x.shape, x.dtype)

    def tangent_aval(self, a):
        return a if a.dtype.kind in "fc" else None

    def is_complex(self, a):
        return a.dtype.kind == "c"

    def is_scalar(self, a):
        return a.shape == ()

    def size(self, a):
        return int(np.prod(a.shape))

    def machine_epsilon(self, a):
        return float(np.finfo(a.dtype).eps)

    def zeros(self, a):
        return np.zeros(a.shape, a.dtype)

    def ones(self, a):
        return np.ones(a.shape, a.dtype)

    def add(self, x, y):
        return add(x, y)

    def scale(self, x, alpha):
        return mul(x, np.asarray(alpha, dtype=np.asarray(x).dtype if not isinstance(x, tidu.Tracer) else x.aval.dtype))

    def conj(self, x):
        return conj(x)

    def standard_basis(self, a):
        out = []
        for i in range(self.size(a)):
            e = np.zeros(self.size(a), a.dtype)
            e[i] = 1
            out.append(e.reshape(a.shape))
        return out

    def stack_basis(self, values, basis_aval, leading):
        s = stack(*values)  # new leading axis of length size(basis)
        inner = tuple(s.aval.shape[1:]) if isinstance(s, tidu.Tracer) else s.shape[1:]
        s = reshape(s, tuple(basis_aval.shape) + tuple(inner))
        if not leading:
            nb = len(basis_aval.shape)
            perm = tuple(range(nb, nb + len(inner))) + tuple(range(nb))
            s = transpose(s, perm)
        return s

    def inner(self, x, y):
        return float(np.real(np.vdot(np.asarray(x), np.asarray(y))))

    def randn(self, a, rng):
        if a.dtype.kind == "c":
            return (rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)).astype(a.dtype)
        return rng.standard_normal(a.shape).astype(a.dtype)

    def tracer_getattr(self, tracer, name):
        table = {
            "__add__": lambda o: add(tracer, o),
            "__radd__": lambda o: add(o, tracer),
            "__mul__": lambda o: mul(tracer, o),
            "__rmul__": lambda o: mul(o, tracer),
            "__sub__": lambda o: add(tracer, neg(o)),
            "__rsub__": lambda o: add(o, neg(tracer)),
            "__neg__": lambda: neg(tracer),
            "__gt__": lambda o: greater(tracer, o),
        }
        if name in table:
            return table[name]
        if name == "shape":
            return tracer.aval.shape
        raise AttributeError(name)


tidu.register_vspace(ToyVSpace(), [np.ndarray, np.generic], [ToyAval])


def _a(x):
    return np.asarray(x)


def _same(*avals):
    return avals[0]


def _unbroadcast(ct, aval):
    """Sum ``ct`` down to ``aval``'s shape and take its real part when ``aval`` is
    real (the transpose of NumPy broadcasting and of real -> complex promotion)."""
    ct_aval = ct.aval if isinstance(ct, tidu.Tracer) else ToyAval(np.shape(ct), np.asarray(ct).dtype)
    if ct_aval.dtype.kind == "c" and aval.dtype.kind != "c":
        ct = real(ct)
    shape = ct_aval.shape
    if tuple(shape) == tuple(aval.shape):
        return ct
    lead = len(shape) - len(aval.shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(aval.shape) if n == 1 and shape[i + lead] != 1)
    return reshape(reduce_sum(ct, axes), aval.shape)


def _bcast_aval(x, y):
    return ToyAval(np.broadcast_shapes(x.shape, y.shape), np.result_type(x.dtype, y.dtype))


# ---- linear primitives -------------------------------------------------------
add_p = Primitive("add")
add_p.def_impl(lambda x, y: _a(np.add(x, y)))
add_p.def_abstract_eval(_bcast_aval)


@add_p.def_linear
def _add_transpose(ct, x, y):
    return [
        _unbroadcast(ct, x.aval) if is_undefined(x) else None,
        _unbroadcast(ct, y.aval) if is_undefined(y) else None,
    ]


@add_p.def_jvp
def _add_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = add(x, y)
    if type(tx) is Zero and type(ty) is Zero:
        return out, Zero.like(out)
    if type(tx) is Zero:
        return out, broadcast_to(ty, np.shape(out) if not isinstance(out, tidu.Tracer) else out.aval.shape)
    if type(ty) is Zero:
        return out, broadcast_to(tx, np.shape(out) if not isinstance(out, tidu.Tracer) else out.aval.shape)
    return out, add(tx, ty)


neg_p = Primitive("neg")
neg_p.def_impl(lambda x: _a(np.negative(x)))
neg_p.def_abstract_eval(_same)
neg_p.def_linear(lambda ct, x: [neg(ct)])

conj_p = Primitive("conj")
conj_p.def_impl(lambda x: _a(np.conj(x)))
conj_p.def_abstract_eval(_same)
conj_p.def_linear(lambda ct, x: [conj(ct)])

real_p = Primitive("real")
real_p.def_impl(lambda x: _a(np.real(x)).copy())
real_p.def_abstract_eval(lambda a: ToyAval(a.shape, np.empty((), a.dtype).real.dtype))


@real_p.def_linear
def _real_transpose(ct, x):
    return [to_complex(ct, 1.0) if x.aval.dtype.kind == "c" else ct]


imag_p = Primitive("imag")
imag_p.def_impl(lambda x: _a(np.imag(x)).copy())
imag_p.def_abstract_eval(lambda a: ToyAval(a.shape, np.empty((), a.dtype).real.dtype))
imag_p.def_linear(lambda ct, x: [to_complex(ct, -1j)])

to_complex_p = Primitive("to_complex")  # real -> complex times a constant c
to_complex_p.def_impl(lambda x, c: _a(x * c).astype(np.result_type(np.asarray(x).dtype, np.complex64)))
to_complex_p.def_abstract_eval(lambda a, c: ToyAval(a.shape, np.result_type(a.dtype, np.complex64)))
to_complex_p.def_linear(
    lambda ct, x, c: [real(mul(ct, np.asarray(c, ct.aval.dtype if isinstance(ct, tidu.Tracer) else ct.dtype)))]
)

reduce_sum_p = Primitive("reduce_sum")
reduce_sum_p.def_impl(lambda x, axes: _a(np.sum(x, axis=axes)))
reduce_sum_p.def_abstract_eval(
    lambda a, axes: ToyAval(tuple(n for i, n in enumerate(a.shape) if i not in axes), a.dtype)
)


@reduce_sum_p.def_linear
def _sum_transpose(ct, x, axes):
    shape = x.aval.shape
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    return [broadcast_to(reshape(ct, kept), shape)]


broadcast_to_p = Primitive("broadcast_to")
broadcast_to_p.def_impl(lambda x, shape: np.broadcast_to(x, shape).copy())
broadcast_to_p.def_abstract_eval(lambda a, shape: ToyAval(tuple(shape), a.dtype))
broadcast_to_p.def_linear(lambda ct, x, shape: [_unbroadcast(ct, x.aval)])

reshape_p = Primitive("reshape")
reshape_p.def_impl(lambda x, shape: np.reshape(x, shape).copy())
reshape_p.def_abstract_eval(lambda a, shape: ToyAval(tuple(shape), a.dtype))
reshape_p.def_linear(lambda ct, x, shape: [reshape(ct, x.aval.shape)])

transpose_p = Primitive("transpose")
transpose_p.def_impl(lambda x, perm: np.transpose(x, perm).copy())
transpose_p.def_abstract_eval(lambda a, perm: ToyAval(tuple(a.shape[p] for p in perm), a.dtype))
transpose_p.def_linear(lambda ct, x, perm: [transpose(ct, tuple(np.argsort(perm)))])

stack_p = Primitive("stack")
stack_p.def_impl(lambda *xs: np.stack(xs))
stack_p.def_abstract_eval(lambda *avals: ToyAval((len(avals),) + tuple(avals[0].shape), avals[0].dtype))
stack_p.def_linear(lambda ct, *xs: [index(ct, i) if is_undefined(x) else None for i, x in enumerate(xs)])

index_p = Primitive("index")  # x[i] along the leading axis
index_p.def_impl(lambda x, i: np.array(x[i]))
index_p.def_abstract_eval(lambda a, i: ToyAval(tuple(a.shape[1:]), a.dtype))


@index_p.def_linear
def _index_transpose(ct, x, i):
    n = x.aval.shape[0]
    z = np.zeros(tuple(x.aval.shape[1:]), x.aval.dtype)
    return [stack(*[ct if j == i else z for j in range(n)])]


# ---- nonlinear primitives -------------------------------------------------------
mul_p = Primitive("mul")
mul_p.def_impl(lambda x, y: _a(np.multiply(x, y)))
mul_p.def_abstract_eval(_bcast_aval)
mul_p.def_jvp_per_arg(lambda tx, out, x, y: mul(tx, y), lambda ty, out, x, y: mul(x, ty))


@mul_p.def_transpose
def _mul_transpose(ct, x, y):
    if is_undefined(x):
        return [_unbroadcast(mul(ct, y), x.aval), None]
    return [None, _unbroadcast(mul(x, ct), y.aval)]


sin_p = Primitive("sin")
sin_p.def_impl(lambda x: _a(np.sin(x)))
sin_p.def_abstract_eval(_same)
sin_p.def_jvp_per_arg(lambda t, out, x: mul(t, cos(x)))

cos_p = Primitive("cos")
cos_p.def_impl(lambda x: _a(np.cos(x)))
cos_p.def_abstract_eval(_same)
cos_p.def_jvp_per_arg(lambda t, out, x: neg(mul(t, sin(x))))

exp_p = Primitive("exp")
exp_p.def_impl(lambda x: _a(np.exp(x)))
exp_p.def_abstract_eval(_same)
exp_p.def_jvp_per_arg(lambda t, out, x: mul(t, out))

log_p = Primitive("log")
log_p.def_impl(lambda x: _a(np.log(x)))
log_p.def_abstract_eval(_same)
log_p.def_jvp_per_arg(lambda t, out, x: mul(t, reciprocal(x)))

reciprocal_p = Primitive("reciprocal")
reciprocal_p.def_impl(lambda x: _a(1.0 / x))
reciprocal_p.def_abstract_eval(_same)
reciprocal_p.def_jvp_per_arg(lambda t, out, x: neg(mul(t, mul(out, out))))

matmul_p = Primitive("matmul")
matmul_p.def_impl(lambda x, y: _a(x @ y))
matmul_p.def_abstract_eval(lambda a, b: ToyAval((a.shape[0], b.shape[1]), np.result_type(a.dtype, b.dtype)))
matmul_p.def_jvp_per_arg(lambda tx, out, x, y: matmul(tx, y), lambda ty, out, x, y: matmul(x, ty))


@matmul_p.def_transpose
def _matmul_transpose(ct, x, y):
    if is_undefined(x):
        return [matmul(ct, transpose(y, (1, 0))), None]
    return [None, matmul(transpose(x, (1, 0)), ct)]


greater_p = Primitive("greater")
greater_p.def_impl(lambda x, y: _a(np.greater(x, y)))
greater_p.def_abstract_eval(lambda a, b: ToyAval(np.broadcast_shapes(a.shape, b.shape), np.dtype(bool)))
greater_p.def_nondiff("comparison", zero_tangent=True)

round_p = Primitive("round_half_even")
round_p.def_impl(lambda x: _a(np.round(x)))
round_p.def_abstract_eval(_same)
round_p.def_nondiff("piecewise constant with jumps; no derivative is defined here", zero_tangent=False)

sincos_p = Primitive("sincos", multiple_results=True)
sincos_p.def_impl(lambda x: [_a(np.sin(x)), _a(np.cos(x))])
sincos_p.def_abstract_eval(lambda a: [a, a])


@sincos_p.def_jvp
def _sincos_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    s, c = sincos(x)
    return [s, c], [mul(t, c), neg(mul(t, s))]


# ---- user-facing wrappers ---------------------------------------------------------
def _arr(x):
    if isinstance(x, (tidu.Tracer, np.ndarray)):
        return x
    return np.asarray(x, dtype=np.result_type(x))


def add(x, y):
    return add_p.bind(_arr(x), _arr(y))


def mul(x, y):
    return mul_p.bind(_arr(x), _arr(y))


def neg(x):
    return neg_p.bind(_arr(x))


def conj(x):
    return conj_p.bind(_arr(x))


def real(x):
    return real_p.bind(_arr(x))


def imag(x):
    return imag_p.bind(_arr(x))


def to_complex(x, c):
    return to_complex_p.bind(_arr(x), c=c)


def sin(x):
    return sin_p.bind(_arr(x))


def cos(x):
    return cos_p.bind(_arr(x))


def exp(x):
    return exp_p.bind(_arr(x))


def log(x):
    return log_p.bind(_arr(x))


def reciprocal(x):
    return reciprocal_p.bind(_arr(x))


def matmul(x, y):
    return matmul_p.bind(_arr(x), _arr(y))


def greater(x, y):
    return greater_p.bind(_arr(x), _arr(y))


def round_(x):
    return round_p.bind(_arr(x))


def sincos(x):
    return sincos_p.bind(_arr(x))


def reduce_sum(x, axes=None):
    nd = len(x.aval.shape) if isinstance(x, tidu.Tracer) else np.ndim(x)
    axes = tuple(range(nd)) if axes is None else tuple(axes)
    return reduce_sum_p.bind(_arr(x), axes=axes)


def broadcast_to(x, shape):
    return broadcast_to_p.bind(_arr(x), shape=tuple(shape))


def reshape(x, shape):
    return reshape_p.bind(_arr(x), shape=tuple(shape))


def transpose(x, perm):
    return transpose_p.bind(_arr(x), perm=tuple(perm))


def stack(*xs):
    return stack_p.bind(*[_arr(x) for x in xs])


def index(x, i):
    return index_p.bind(_arr(x), i=i)


def abs2(z):
    return real(mul(z, conj(z)))


ALL_PRIMITIVES = [
    add_p,
    neg_p,
    conj_p,
    real_p,
    imag_p,
    to_complex_p,
    reduce_sum_p,
    broadcast_to_p,
    reshape_p,
    transpose_p,
    stack_p,
    index_p,
    mul_p,
    sin_p,
    cos_p,
    exp_p,
    log_p,
    reciprocal_p,
    matmul_p,
    greater_p,
    round_p,
    sincos_p,
]
