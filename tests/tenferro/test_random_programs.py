"""Random-program tests: hypothesis builds random straight-line tensor programs and
checks the whole stack end to end (eager evaluation, staging, graph simplification,
forward and reverse mode, linearize, second-order derivatives). This module holds the
programs, their generator and the second-order check; the exact comparisons are in
test_random_programs_agreement.py.

A program is plain data (:class:`Program`: input shapes, a seed for the input values,
a list of :class:`Op` records, and which values are returned), so hypothesis can
shrink it and a failure prints it as a readable listing, e.g.::

    Program(complex128; seed=0)
      v0: complex128[2, 1]
      v1: float64[1]
      v2 = sin(v0)
      v3 = einsum('ab,ab->b', v0, v2) * 0.5
      v4 = mul(v3, v1)
      return sum(v4), v2

The scalar output sums every sink (an op result no later op reads), so no op is dead;
the second output is a chosen non-scalar value.

The op menu is smooth and everywhere differentiable (add, sub, mul, sin, cos, tanh,
exp(tanh(.)), sum over axes, transpose, column-/row-major reshape, basic slicing,
matmul, two-operand einsum, conj/real/imag for complex values); binary ops only pair
values whose shapes broadcast (or contract).

Conditioning. Inputs are bounded (|x| <= 1, |z| <= sqrt 2) and the generator tracks an
upper bound on the magnitude of every value. An op whose result bound would exceed
``BOUND`` gets a power-of-two scale factor (exact in floating point) that brings it
back under; complex ``tanh`` is only applied where |z| <= 1 (its poles are at
|Im z| = pi/2; a scale step is inserted before it). So values and their low-order
derivatives stay moderate, which keeps the finite-difference checks of ``check_grads`` (eps 1e-4, rtol/atol 1e-5)
far from their truncation error. The exact comparisons (no finite differences) use
``EXACT`` (1e-12 relative for values, 1e-10 for derivative identities, which sum more
rounding-error terms).

Every property runs for float64 and complex128 programs, and in both modes
(``helpers.MODES``): ``eager`` runs the program as it is, ``jit`` runs it compiled by
``tenferro.jit`` (the same properties then hold through the ``call`` primitive's
derivative rules, and the second-order check compares the compiled value and first
and second derivatives with eager ones, see ``helpers.check_jit_matches``). In a complex program v0 is
complex128 and the other inputs are complex128 or float64, and ``real``/``imag`` make
real intermediates, so real and complex values mix (promotion under AD).

Margins (measured with 1500 examples per property): check_grads passes with
rtol = atol = 1e-6 (the default 1e-5 is used), and the exact comparisons pass at 1e-14
(values) and 1e-12 (derivative identities): at least 10x margin for the finite-difference
checks and 100x for the exact ones.
``RANDOM_PROGRAM_EXAMPLES=200`` (environment) runs a longer local hunt.
"""

from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tenferro as tf

from helpers import MODES, check_derivatives

BOUND = 4.0  # magnitude bound for every intermediate value (see module docstring)
EXACT = 1e-12  # relative tolerance of comparisons between two exact evaluations
EXACT_DERIV = 1e-10  # relative tolerance of identities between AD-computed derivatives

# RANDOM_PROGRAM_EXAMPLES=200 for a longer local hunt; CI uses 25 per property and dtype
SETTINGS = settings(
    max_examples=int(os.environ.get("RANDOM_PROGRAM_EXAMPLES", "25")),
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
DTYPES = ["float64", "complex128"]


# --------------------------------------------------------------------------------------
# programs as data
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Op:
    kind: str  # "unary" | "binary" | "sum" | "transpose" | "reshape" | "index" | "matmul" | "einsum"
    args: tuple  # indices of earlier values
    param: object = None  # kind-specific parameter (hashable, printable)
    scale: float = 1.0  # the result is multiplied by this (a power of two)

    def describe(self) -> str:
        a = [f"v{i}" for i in self.args]
        k, p = self.kind, self.param
        if k == "unary":
            s = f"{p}({a[0]})"
        elif k == "binary":
            s = f"{p}({a[0]}, {a[1]})"
        elif k == "sum":
            axes, keep = p
            s = f"sum({a[0]}, axis={axes}, keepdims={keep})"
        elif k == "transpose":
            s = f"transpose({a[0]}, {p})"
        elif k == "reshape":
            shape, order = p
            s = f"reshape({a[0]}, {shape}, order={order!r})"
        elif k == "index":
            s = f"{a[0]}[{_fmt_index(p)}]"
        elif k == "matmul":
            s = f"matmul({a[0]}, {a[1]})"
        elif k == "einsum":
            s = f"einsum({p!r}, {a[0]}, {a[1]})"
        else:  # pragma: no cover
            s = f"{k}{tuple(a)} {p}"
        return s if self.scale == 1.0 else f"{s} * {self.scale!r}"


def _fmt_index(idx: tuple) -> str:
    parts = []
    for e in idx:
        if isinstance(e, int):
            parts.append(str(e))
        else:
            start, stop, step = e
            s = f"{'' if start is None else start}:{'' if stop is None else stop}"
            parts.append(s if step is None else f"{s}:{step}")
    return ", ".join(parts) if parts else "()"


def _to_index(idx: tuple) -> tuple:
    return tuple(e if isinstance(e, int) else slice(*e) for e in idx)


@dataclass(frozen=True)
class Program:
    dtype: str
    input_shapes: tuple
    seed: int
    ops: tuple
    in_cplx: tuple  # per input: complex128 (else float64)
    shapes: tuple = field(repr=False)  # the generator's shape of every value (an oracle)
    scalar_of: tuple = ()  # the first output is sum(v[k]) summed over these k
    nonscalar_of: int = 0  # the second output is v[nonscalar_of] (as 1-d if 0-d)

    def __repr__(self) -> str:
        lines = [f"Program({self.dtype}; seed={self.seed})"]
        for i, (s, c) in enumerate(zip(self.input_shapes, self.in_cplx)):
            lines.append(f"  v{i}: {'complex128' if c else 'float64'}{list(s)}")
        n = len(self.input_shapes)
        for j, op in enumerate(self.ops):
            lines.append(f"  v{n + j} = {op.describe()}")
        total = " + ".join(f"sum(v{k})" for k in self.scalar_of)
        lines.append(f"  return {total}, v{self.nonscalar_of}")
        return "\n".join(lines)

    def _repr_pretty_(self, p, cycle) -> None:  # hypothesis prints drawn values with this
        p.text(repr(self))

    # ---- inputs -----------------------------------------------------------------
    def numpy_args(self) -> list[np.ndarray]:
        rng = np.random.default_rng(self.seed)
        out = []
        for s, c in zip(self.input_shapes, self.in_cplx):
            if c:
                v = rng.uniform(-1, 1, s) + 1j * rng.uniform(-1, 1, s)
            else:
                v = rng.uniform(-1, 1, s)
            out.append(
                np.array(v, dtype=np.complex128 if c else np.float64, order="F")
            )  # (asfortranarray makes 0-d 1-d)
        return out

    def args(self) -> list:
        return [tf.asarray(a) for a in self.numpy_args()]

    # ---- evaluation ---------------------------------------------------------------
    def values(self, backend, *inputs) -> list:
        """Every value of the program (inputs first, then one per op)."""
        vals = list(inputs)
        for op in self.ops:
            vals.append(backend.apply(op, [vals[i] for i in op.args]))
        return vals

    def run(self, backend, *inputs):
        vals = self.values(backend, *inputs)
        return backend.outputs([vals[k] for k in self.scalar_of], vals[self.nonscalar_of])

    def __call__(self, *inputs):
        """The program on tenferro tensors (or tidu tracers): (complex or real scalar, tensor)."""
        return self.run(TF, *inputs)


class _TenferroBackend:
    UNARY = {
        "sin": tf.sin,
        "cos": tf.cos,
        "tanh": tf.tanh,
        "exp_tanh": lambda x: tf.exp(tf.tanh(x)),
        "conj": tf.conj,
        "real": tf.real,
        "imag": tf.imag,
    }
    BINARY = {"add": tf.add, "sub": tf.subtract, "mul": tf.multiply}

    def apply(self, op: Op, a: list):
        k, p = op.kind, op.param
        if k == "unary":
            r = self.UNARY[p](a[0])
        elif k == "binary":
            r = self.BINARY[p](a[0], a[1])
        elif k == "sum":
            r = tf.sum(a[0], axis=p[0], keepdims=p[1])
        elif k == "transpose":
            r = tf.transpose(a[0], p)
        elif k == "reshape":
            r = tf.reshape(a[0], p[0], order=p[1])
        elif k == "index":
            r = a[0][_to_index(p)]
        elif k == "matmul":
            r = a[0] @ a[1]
        elif k == "einsum":
            r = tf.einsum(p, a[0], a[1])
        else:  # pragma: no cover
            raise AssertionError(k)
        return r if op.scale == 1.0 else r * op.scale

    def outputs(self, ss, t):
        total = tf.sum(ss[0])
        for s in ss[1:]:
            total = total + tf.sum(s)
        return total, (tf.reshape(t, (1,)) if len(t.shape) == 0 else t)


class _NumpyBackend:
    """The reference semantics (NumPy; reshape honours ``order``)."""

    UNARY = {
        "sin": np.sin,
        "cos": np.cos,
        "tanh": np.tanh,
        "exp_tanh": lambda x: np.exp(np.tanh(x)),
        "conj": np.conj,
        "real": np.real,
        "imag": np.imag,
    }
    BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply}

    def apply(self, op: Op, a: list):
        k, p = op.kind, op.param
        if k == "unary":
            r = self.UNARY[p](a[0])
        elif k == "binary":
            r = self.BINARY[p](a[0], a[1])
        elif k == "sum":
            r = np.sum(a[0], axis=p[0], keepdims=p[1])
        elif k == "transpose":
            r = np.transpose(a[0], p)
        elif k == "reshape":
            r = np.reshape(a[0], p[0], order=p[1])
        elif k == "index":
            r = a[0][_to_index(p)]
        elif k == "matmul":
            r = np.matmul(a[0], a[1])
        elif k == "einsum":
            r = np.einsum(p, a[0], a[1])
        else:  # pragma: no cover
            raise AssertionError(k)
        return np.asarray(r if op.scale == 1.0 else r * op.scale)

    def outputs(self, ss, t):
        total = np.sum(ss[0])
        for s in ss[1:]:
            total = total + np.sum(s)
        return np.asarray(total), (np.reshape(t, (1,)) if t.ndim == 0 else t)


TF = _TenferroBackend()
NP = _NumpyBackend()


# --------------------------------------------------------------------------------------
# the generator
# --------------------------------------------------------------------------------------
@dataclass
class _Val:
    shape: tuple
    cplx: bool
    bound: float


def _scaled(bound: float) -> tuple[float, float]:
    """(scale, new bound): a power-of-two scale that brings ``bound`` under BOUND."""
    if bound <= BOUND:
        return 1.0, bound
    k = math.ceil(math.log2(bound / BOUND))
    return 2.0**-k, bound * 2.0**-k


def _reshape_targets(size: int) -> list[tuple]:
    out = [()] if size == 1 else []
    for rank in (1, 2, 3):
        for dims in itertools.product(range(1, size + 1), repeat=rank):
            if math.prod(dims) == size:
                out.append(dims)
    return out


def _broadcasts(a: tuple, b: tuple) -> bool:
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def _matmul_shape(a: tuple, b: tuple):
    if not a or not b:
        return None
    try:
        return np.matmul(np.zeros(a), np.zeros(b)).shape
    except ValueError:
        return None


shapes_st = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


@st.composite
def programs(draw, dtype: str) -> Program:
    cplx = dtype == "complex128"
    n_in = draw(st.integers(1, 3), label="n_inputs")
    in_shapes = tuple(draw(shapes_st, label=f"shape v{i}") for i in range(n_in))
    # complex programs: v0 is complex, the other inputs complex or real (mixed promotion)
    in_cplx = tuple(cplx and (i == 0 or draw(st.booleans(), label=f"v{i} complex?")) for i in range(n_in))
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    vals = [_Val(s, c, math.sqrt(2.0) if c else 1.0) for s, c in zip(in_shapes, in_cplx)]
    ops: list[Op] = []
    n_ops = draw(st.integers(3, 8), label="n_ops")

    for _ in range(n_ops):
        n = len(vals)
        bin_pairs = [(i, j) for i in range(n) for j in range(n) if _broadcasts(vals[i].shape, vals[j].shape)]
        mm_pairs = [
            (i, j) for i in range(n) for j in range(n) if _matmul_shape(vals[i].shape, vals[j].shape) is not None
        ]
        ein_pairs = [(i, j) for i in range(n) for j in range(n) if set(vals[i].shape) & set(vals[j].shape)]
        kinds = ["unary", "binary", "sum", "transpose", "reshape", "index"]
        if mm_pairs:
            kinds.append("matmul")
        if ein_pairs:
            kinds.append("einsum")
        kind = draw(st.sampled_from(kinds), label="kind")

        if kind == "unary":
            i = draw(st.integers(0, n - 1), label="arg")
            v = vals[i]
            names = ["sin", "cos", "tanh", "exp_tanh"]
            if v.cplx:
                names += ["conj", "real", "imag"]
            name = draw(st.sampled_from(names), label="fn")
            if v.cplx and name in ("tanh", "exp_tanh") and v.bound > 1.0:
                # complex tanh has poles at |Im z| = pi/2: shrink the argument first
                s = 2.0 ** -math.ceil(math.log2(v.bound))  # brings the bound to <= 1
                ops.append(Op("binary", (i, i), "add", s / 2))  # (v + v) * s/2 == v * s, exactly
                vals.append(_Val(v.shape, v.cplx, v.bound * s))
                i, v = len(vals) - 1, vals[-1]
            if name in ("conj", "real", "imag"):
                bound, out_cplx = v.bound, name == "conj"
            elif not v.cplx:
                bound, out_cplx = (math.e if name == "exp_tanh" else 1.0), False
            elif name in ("sin", "cos"):
                bound, out_cplx = math.cosh(v.bound), True
            else:  # |tanh z| <= tan |z| for |z| < pi/2
                t = math.tan(v.bound)
                bound, out_cplx = (math.exp(t) if name == "exp_tanh" else t), True
            scale, bound = _scaled(bound)
            ops.append(Op("unary", (i,), name, scale))
            vals.append(_Val(v.shape, out_cplx, bound))

        elif kind == "binary":
            i, j = draw(st.sampled_from(bin_pairs), label="args")
            name = draw(st.sampled_from(["add", "sub", "mul"]), label="fn")
            a, b = vals[i], vals[j]
            bound = a.bound * b.bound if name == "mul" else a.bound + b.bound
            scale, bound = _scaled(bound)
            ops.append(Op("binary", (i, j), name, scale))
            vals.append(_Val(np.broadcast_shapes(a.shape, b.shape), a.cplx or b.cplx, bound))

        elif kind == "sum":
            i = draw(st.integers(0, n - 1), label="arg")
            v = vals[i]
            r = len(v.shape)
            axes = tuple(sorted(draw(st.sets(st.integers(0, r - 1), max_size=r), label="axes"))) if r else ()
            if axes and draw(st.booleans(), label="negative axes"):
                axes = tuple(ax - r for ax in axes)
            keep = draw(st.booleans(), label="keepdims")
            count = math.prod(v.shape[ax] for ax in axes)
            shape = tuple(
                1 if (ax in axes or ax - r in axes) else d
                for ax, d in enumerate(v.shape)
                if keep or not (ax in axes or ax - r in axes)
            )
            scale, bound = _scaled(count * v.bound)
            ops.append(Op("sum", (i,), (axes, keep), scale))
            vals.append(_Val(shape, v.cplx, bound))

        elif kind == "transpose":
            i = draw(st.integers(0, n - 1), label="arg")
            v = vals[i]
            perm = tuple(draw(st.permutations(range(len(v.shape))), label="perm"))
            ops.append(Op("transpose", (i,), perm))
            vals.append(_Val(tuple(v.shape[p] for p in perm), v.cplx, v.bound))

        elif kind == "reshape":
            i = draw(st.integers(0, n - 1), label="arg")
            v = vals[i]
            shape = draw(st.sampled_from(_reshape_targets(math.prod(v.shape))), label="shape")
            order = draw(st.sampled_from(["F", "C"]), label="order")
            ops.append(Op("reshape", (i,), (shape, order)))
            vals.append(_Val(shape, v.cplx, v.bound))

        elif kind == "index":
            i = draw(st.integers(0, n - 1), label="arg")
            v = vals[i]
            n_idx = draw(st.integers(0, len(v.shape)), label="n_index")
            idx = []
            for d in v.shape[:n_idx]:
                if draw(st.booleans(), label="integer?"):
                    idx.append(draw(st.integers(-d, d - 1), label="int"))
                    continue
                bound_st = st.one_of(st.none(), st.integers(-d - 1, d + 1))
                sl = (
                    draw(bound_st, label="start"),
                    draw(bound_st, label="stop"),
                    draw(st.sampled_from([None, 1, 2, -1, -2]), label="step"),
                )
                if len(range(d)[slice(*sl)]) == 0:
                    sl = (None, None, sl[2])  # keep every value nonempty
                idx.append(sl)
            idx = tuple(idx)
            shape = np.zeros(v.shape)[_to_index(idx)].shape
            ops.append(Op("index", (i,), idx))
            vals.append(_Val(shape, v.cplx, v.bound))

        elif kind == "matmul":
            i, j = draw(st.sampled_from(mm_pairs), label="args")
            a, b = vals[i], vals[j]
            k = a.shape[-1]
            scale, bound = _scaled(k * a.bound * b.bound)
            ops.append(Op("matmul", (i, j), None, scale))
            vals.append(_Val(_matmul_shape(a.shape, b.shape), a.cplx or b.cplx, bound))

        else:  # einsum: contract one shared extent, optionally keep a shared batch label
            i, j = draw(st.sampled_from(ein_pairs), label="args")
            a, b = vals[i], vals[j]
            matches = [(p, q) for p in range(len(a.shape)) for q in range(len(b.shape)) if a.shape[p] == b.shape[q]]
            p, q = draw(st.sampled_from(matches), label="contract")
            la = list("abc"[: len(a.shape)])
            lb = list("def"[: len(b.shape)])
            lb[q] = la[p]
            rest = [(p2, q2) for p2, q2 in matches if p2 != p and q2 != q]
            batch = None
            if rest and draw(st.booleans(), label="batch?"):
                p2, q2 = draw(st.sampled_from(rest), label="batch")
                lb[q2] = la[p2]
                batch = la[p2]
            free = [c for c in la if c != la[p]] + [c for c in lb if c not in la]
            out = ([batch] if batch else []) + [c for c in free if c != batch]
            out = out[:3]  # rank <= 3: a dropped free label is summed over (counted in the bound below)
            out = list(draw(st.permutations(out), label="out order"))
            spec = f"{''.join(la)},{''.join(lb)}->{''.join(out)}"
            summed = [c for c in set(la + lb) if c not in out]
            ext = {c: d for c, d in zip(la, a.shape)} | {c: d for c, d in zip(lb, b.shape)}
            count = math.prod(ext[c] for c in summed)
            scale, bound = _scaled(count * a.bound * b.bound)
            ops.append(Op("einsum", (i, j), spec, scale))
            vals.append(_Val(tuple(ext[c] for c in out), a.cplx or b.cplx, bound))

    n = len(vals)
    # every op result that no later op reads (a sink) feeds the scalar output, so no op is dead
    used = {i for op in ops for i in op.args}
    scalar_of = tuple(k for k in range(len(in_shapes), n) if k not in used)
    nonscalar = [k for k in range(n) if vals[k].shape]
    nonscalar_of = draw(st.sampled_from(nonscalar or [n - 1]), label="nonscalar output")
    return Program(dtype, in_shapes, seed, tuple(ops), in_cplx, tuple(v.shape for v in vals), scalar_of, nonscalar_of)


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------
def _np(x) -> np.ndarray:
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _assert_close(got, want, rtol: float, what: str, prog: Program) -> None:
    got, want = _np(got), _np(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}\n{prog!r}"
    err = float(np.max(np.abs(got - want), initial=0.0))
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    assert err <= rtol * scale, f"{what}: max |got - want| = {err:.3e} (scale {scale:.3g})\n{prog!r}"


def _real_loss(prog: Program):
    def loss(*xs):
        return tf.real(prog(*xs)[0])

    return loss


def _random_like(x, rng: np.random.Generator):
    a = _np(x)
    v = rng.standard_normal(a.shape)
    if np.iscomplexobj(a):
        v = v + 1j * rng.standard_normal(a.shape)
    return tf.asarray(np.array(v, dtype=a.dtype, order="F"))


def _inner_re(xs, ys) -> float:
    """Re sum_k <x_k, y_k> with the conjugate on x (the real inner product)."""
    return float(sum(np.real(np.vdot(_np(x), _np(y))) for x, y in zip(xs, ys)))


# --------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@SETTINGS
@given(data=st.data())
def test_check_grads_second_order(dtype, mode, data):
    """``eager``: finite differences (JVP) and the dot-product test (VJP), to second
    order. ``jit``: the compiled program's value, first and second derivatives (JVP and
    VJP; compiled around the transformations and differentiated through the compiled
    call) equal eager ones to rounding, so the eager check carries over."""
    prog = data.draw(programs(dtype), label="program")
    check_derivatives(mode, prog, prog.args(), order=2)
