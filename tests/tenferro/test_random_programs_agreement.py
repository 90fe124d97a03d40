"""Random-program properties that compare exact evaluations, without finite differences:
eager or compiled values against NumPy and against the staged and simplified graphs,
reverse mode against forward mode, and ``linearize`` against ``jvp``, for float64 and
complex128 programs in both modes (``helpers.MODES``). The programs, their generator,
the conditioning that keeps values moderate and the tolerances ``EXACT`` and
``EXACT_DERIV`` are test_random_programs.py's (see its docstring)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tenferro as tf
import tidu

from helpers import MODES, in_mode
from test_random_programs import (
    DTYPES,
    EXACT,
    EXACT_DERIV,
    NP,
    SETTINGS,
    TF,
    _assert_close,
    _inner_re,
    _np,
    _random_like,
    _real_loss,
    programs,
)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@SETTINGS
@given(data=st.data())
def test_eager_graph_simplified_and_numpy_agree(dtype, mode, data):
    """Evaluated (eager or compiled) == NumPy reference == make_graph evaluated ==
    simplify() evaluated; the same for the staged graph of ``value_and_grad`` (many
    duplicate subexpressions for CSE). Under ``jit`` the staged graphs hold ``call``
    equations of the compiled program and of its derivative graphs."""
    prog = data.draw(programs(dtype), label="program")
    run = in_mode(prog, mode)
    args = prog.args()
    eager = run(*args)
    ref = prog.run(NP, *prog.numpy_args())
    for g, w, what in zip(eager, ref, ("scalar", "tensor")):
        _assert_close(g, w, EXACT, f"{mode} vs numpy ({what})", prog)
    if (
        mode == "eager"
    ):  # every intermediate (not a mode's concern): shape (against the generator's model too), dtype, value
        for k, (g, w, shape) in enumerate(
            zip(prog.values(TF, *args), prog.values(NP, *prog.numpy_args()), prog.shapes)
        ):
            assert tuple(g.shape) == w.shape == tuple(shape), (
                f"v{k}: shape {tuple(g.shape)}, numpy {w.shape}, model {shape}\n{prog!r}"
            )
            assert _np(g).dtype == w.dtype, f"v{k}: dtype {_np(g).dtype}, numpy {w.dtype}\n{prog!r}"
            _assert_close(g, w, EXACT, f"eager vs numpy (v{k})", prog)

    graph = tidu.make_graph(run, *args)
    simple = graph.simplify()
    assert len(simple.eqns) <= len(graph.eqns)
    for name, gr in (("graph", graph), ("simplified", simple)):
        out = gr(*args)
        for g, w, what in zip(out, eager, ("scalar", "tensor")):
            _assert_close(g, w, EXACT, f"{name} vs {mode} ({what})", prog)

    # derivative graphs: staged value_and_grad, simplified, against evaluated
    vg = tidu.value_and_grad(_real_loss(run), argnums=tuple(range(len(args))))
    want_v, want_g = vg(*args)
    dgraph = tidu.make_graph(vg, *args)
    for name, gr in (("grad graph", dgraph), ("simplified grad graph", dgraph.simplify())):
        got_v, got_g = gr(*args)
        _assert_close(got_v, want_v, EXACT, f"{name}: value", prog)
        for k, (g, w) in enumerate(zip(got_g, want_g)):
            _assert_close(g, w, EXACT, f"{name}: grad wrt v{k}", prog)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@SETTINGS
@given(data=st.data())
def test_reverse_mode_agrees_with_forward_mode(dtype, mode, data):
    """Exact (no finite differences) agreement between reverse and forward mode:

    * grad of the real loss ``Re sum(out)`` against JVPs: ``dL[t] = Re sum_k g_k t_k``
      (JAX convention, g = dL/dx - i dL/dy) in random directions, and against every
      basis direction (real and, for complex inputs, imaginary units) when there are
      at most 12 real coordinates;
    * ``jacrev`` against ``jacfwd`` for the real programs (tiny sizes);
    * the duality ``Re <v, J u> == Re <J* v, u>`` for both outputs, J u from ``jvp`` and
      J* v = conj(vjp(conj v)).

    Under ``jit`` every derivative goes through the compiled call's rules.
    """
    prog = data.draw(programs(dtype), label="program")
    run = in_mode(prog, mode)
    args = prog.args()
    rng = np.random.default_rng(prog.seed ^ 0x5EED)
    loss = _real_loss(run)
    argnums = tuple(range(len(args)))
    grads = tidu.grad(loss, argnums=argnums)(*args)
    scale = max(1.0, math.sqrt(sum(float(np.sum(np.abs(_np(g)) ** 2)) for g in grads)))

    def directional(ts) -> float:
        return float(_np(tidu.jvp(loss, tuple(args), tuple(ts))[1]))

    def predicted(ts) -> float:
        return float(sum(np.real(np.sum(_np(g) * _np(t))) for g, t in zip(grads, ts)))

    for _ in range(2):
        ts = [_random_like(a, rng) for a in args]
        tnorm = math.sqrt(sum(float(np.sum(np.abs(_np(t)) ** 2)) for t in ts))
        got, want = directional(ts), predicted(ts)
        assert abs(got - want) <= EXACT_DERIV * scale * tnorm, f"jvp {got!r} != <grad, t> {want!r}\n{prog!r}"

    def units(a):
        return [1.0, 1j] if np.iscomplexobj(_np(a)) else [1.0]

    n_coords = sum(int(np.prod(a.shape, dtype=int)) * len(units(a)) for a in args)
    if n_coords <= 12:
        for k, a in enumerate(args):
            g = _np(grads[k]).reshape(-1, order="F")
            for flat in range(g.size):
                for u in units(a):
                    ts = [tf.zeros_like(x) for x in args]
                    e = np.zeros(g.size, dtype=_np(a).dtype)
                    e[flat] = u
                    ts[k] = tf.asarray(np.reshape(e, tuple(a.shape), order="F"))
                    got = directional(ts)
                    want = float(np.real(g[flat] * u))
                    assert abs(got - want) <= EXACT_DERIV * scale, (
                        f"d loss / d v{k}[{flat}] ({u}): jvp {got!r} != grad {want!r}\n{prog!r}"
                    )

    if dtype == "float64" and n_coords <= 12:
        f = lambda *xs: run(*xs)[1]  # noqa: E731
        jf = tidu.jacfwd(f, argnums=argnums)(*args)
        jr = tidu.jacrev(f, argnums=argnums)(*args)
        for k, (x, y) in enumerate(zip(jf, jr)):
            _assert_close(x, y, EXACT_DERIV, f"jacfwd vs jacrev wrt v{k}", prog)

    out, vjp_fn = tidu.vjp(run, *args)
    us = [_random_like(a, rng) for a in args]
    vs = [_random_like(o, rng) for o in out]
    _, ju = tidu.jvp(run, tuple(args), tuple(us))
    ct = vjp_fn(tuple(tf.conj(v) for v in vs))
    jstar_v = [tf.conj(c) for c in ct]
    lhs, rhs = _inner_re(vs, ju), _inner_re(jstar_v, us)
    norm = math.sqrt(sum(float(np.sum(np.abs(_np(x)) ** 2)) for x in list(ju) + list(jstar_v)))
    vnorm = math.sqrt(sum(float(np.sum(np.abs(_np(x)) ** 2)) for x in vs + us))
    assert abs(lhs - rhs) <= EXACT_DERIV * max(1.0, norm * vnorm), (
        f"Re<v, J u> = {lhs!r} != Re<J* v, u> = {rhs!r}\n{prog!r}"
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
@SETTINGS
@given(data=st.data())
def test_linearize_agrees_with_jvp(dtype, mode, data):
    """``linearize`` gives the eager primal, and its linear function equals ``jvp`` on
    random tangents (twice, reusing the residuals), on a symbolic-zero tangent for the
    first input, and is linear (f(a t + s) == a f(t) + f(s)); under ``jit``, of the
    compiled program (its forward and linear graphs, one split per pattern of zero
    tangents)."""
    prog = data.draw(programs(dtype), label="program")
    run = in_mode(prog, mode)
    args = prog.args()
    rng = np.random.default_rng(prog.seed ^ 0x11EA)
    primal, f_lin = tidu.linearize(run, *args)
    eager = run(*args)
    for g, w in zip(primal, eager):
        _assert_close(g, w, EXACT, "linearize primal vs eager", prog)
    ts_all = []
    for _ in range(2):
        ts = [_random_like(a, rng) for a in args]
        ts_all.append(ts)
        got = f_lin(*ts)
        _, want = tidu.jvp(run, tuple(args), tuple(ts))
        for g, w in zip(got, want):
            _assert_close(g, w, EXACT_DERIV, "linearize vs jvp", prog)
    # a None tangent is a symbolic zero
    ts0 = [None] + ts_all[0][1:]
    got = f_lin(*ts0)
    _, want = tidu.jvp(run, tuple(args), tuple([tf.zeros_like(args[0])] + ts_all[0][1:]))
    for g, w in zip(got, want):
        _assert_close(g, w, EXACT_DERIV, "linearize with a None tangent vs jvp with zeros", prog)
    # linearity
    alpha = 0.75
    comb = [t * alpha + s for t, s in zip(ts_all[0], ts_all[1])]
    lhs = f_lin(*comb)
    r0, r1 = f_lin(*ts_all[0]), f_lin(*ts_all[1])
    for g, a, b in zip(lhs, r0, r1):
        _assert_close(g, _np(a) * alpha + _np(b), EXACT_DERIV, "linearity of the linearized function", prog)
