"""Small helpers shared by the tenferro op-family tests."""

from __future__ import annotations

import string

import numpy as np

import tenferro as tf


def tensor_of(a):
    """A tenferro tensor with the values of the array-like ``a``."""
    return tf.asarray(np.asarray(a))


def sample(shape, dtype, seed=0):
    """Reproducible values of ``dtype`` (a NumPy dtype name): booleans, integers in -3..3,
    standard normal floats, complex numbers with independent normal parts."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        return rng.integers(-3, 4, shape).astype(dt)
    v = rng.standard_normal(shape)
    if dt.kind == "c":
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(dt)


def rand(shape, seed=0, dtype=np.float64):
    """Standard normal values of ``shape`` (reproducible by ``seed``)."""
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def assert_same(t, expect):
    """``t`` equals ``expect`` exactly, with the same shape, and is column-major contiguous."""
    a = np.asarray(t)
    assert a.shape == np.shape(expect), (a.shape, np.shape(expect))
    np.testing.assert_array_equal(a, expect)
    assert t.is_contiguous


def is_writeable(a) -> bool:
    """NumPy's ``writeable`` flag; device (CuPy) arrays have no read-only mode, so
    they are always writeable."""
    return bool(getattr(a.flags, "writeable", True))


def shares_memory(a, b) -> bool:
    """``np.shares_memory`` for host arrays; for device (CuPy) arrays, whether both
    are views of one allocation (CuPy's own ``shares_memory`` only bounds-checks)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return bool(np.shares_memory(a, b))
    return a.data.mem.ptr == b.data.mem.ptr


# ---------------------------------------------------------------------------
# compiled mode (tenferro.jit) against eager
# ---------------------------------------------------------------------------
MODES = ("eager", "jit")
"""The execution modes the op-family tests are parametrized over."""

JIT_RTOL = 1e-12
"""How far a jitted result may be from the eager one, relative to the largest entry
of the eager result (per compared pytree). Most kernels are the NumPy/BLAS calls of
eager mode (bit-identical results); the passes re-associate work (transposes folded
into contractions, chains of contractions merged into one planned einsum, traced
instead of concrete-value paths such as solve's carried LU factors), which changes
rounding: a few ulps per operation, amplified by at most the conditioning of the
well-conditioned test inputs. Measured over every case of the gradient table (value,
first and second derivatives, both compositions): 748 of 930 cases bit-identical, the
largest difference 1.3e-15 (an SVD derivative), so 1e-12 leaves a margin of ~700x."""


def in_mode(f, mode: str):
    """``f`` itself (``"eager"``), or (``"jit"``) ``tf.jit(f)`` checked against ``f``:
    called on concrete arguments it also runs ``f`` eagerly and asserts the two results
    equal to rounding (:func:`assert_tree_close`) before returning the compiled one;
    called on tracers (under ``grad``, ``jvp``, ...) it is the compiled call, which the
    transformation differentiates through the ``call`` primitive."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")
    if mode == "eager":
        return f
    import tidu

    jf = tf.jit(f)

    def checked(*args, **kwargs):
        got = jf(*args, **kwargs)
        if not any(isinstance(x, tidu.Tracer) for x in tidu.tree_flatten((args, kwargs))[0]):
            assert_tree_close(got, f(*args, **kwargs), f"jit({getattr(f, '__name__', 'f')})")
        return got

    checked.jitted = jf
    return checked


def compiled(f, mode: str):
    """``f`` (``"eager"``) or ``tf.jit(f)`` (``"jit"``) without :func:`in_mode`'s eager
    cross-check: for tests of errors and warnings, which the eager call would raise or
    emit itself (and so satisfy ``pytest.raises``/``pytest.warns`` for the compiled one)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")
    return tf.jit(f) if mode == "jit" else f


def _random_like(x, rng):
    """Standard normal values shaped like the tensor ``x`` (complex if it is), or
    None where ``x`` carries no tangent (integer, bool, or not a tensor)."""
    if not isinstance(x, tf.Tensor) or not (x.dtype.is_floating or x.dtype.is_complex):
        return None
    v = rng.standard_normal(tuple(x.shape))
    if x.dtype.is_complex:
        v = v + 1j * rng.standard_normal(tuple(x.shape))
    return tf.asarray(np.asarray(v, dtype=x.dtype.numpy))


def _tree_random_like(tree, rng):
    import tidu

    leaves, treedef = tidu.tree_flatten(tree)
    return tidu.tree_unflatten(treedef, [_random_like(x, rng) for x in leaves])


def assert_tree_close(got, want, what: str, rtol: float = JIT_RTOL) -> float:
    """``got`` has ``want``'s structure, shapes and dtypes, and its values within
    ``rtol`` times the largest finite entry of ``want`` over the whole tree (not per
    leaf: a leaf that is mathematically zero, e.g. a vanishing second derivative,
    holds rounding of the others' size, 1e-15 against entries of order 1). NaN and
    inf must sit where eager has them. Returns the largest difference relative to
    that scale (0.0 when bit-identical)."""
    import tidu

    g_leaves, g_tree = tidu.tree_flatten(got)
    w_leaves, w_tree = tidu.tree_flatten(want)
    assert g_tree == w_tree, f"{what}: structure {g_tree} != eager {w_tree}"
    g_arr = [np.asarray(x) for x in g_leaves]
    w_arr = [np.asarray(x) for x in w_leaves]
    tree_scale = max(
        [float(np.max(np.abs(w[np.isfinite(w)]), initial=0.0)) if w.dtype.kind in "fc" else 0.0 for w in w_arr],
        default=0.0,
    )
    worst = 0.0
    for k, (g, w) in enumerate(zip(g_arr, w_arr)):
        assert g.shape == w.shape and g.dtype == w.dtype, (
            f"{what}: leaf {k} is {g.dtype}{list(g.shape)}, eager {w.dtype}{list(w.shape)}"
        )
        if g.dtype.kind not in "fc":
            np.testing.assert_array_equal(g, w, err_msg=f"{what}: leaf {k}")
            continue
        same_nonfinite = (np.isnan(g) == np.isnan(w)) & (np.isinf(g) == np.isinf(w))
        assert np.all(same_nonfinite), f"{what}: leaf {k} has NaN/inf where eager has not (or the reverse)"
        finite = np.isfinite(w)
        err = float(np.max(np.abs(g[finite] - w[finite]), initial=0.0))
        inf = np.isinf(w)
        assert np.all(g[inf] == w[inf]), f"{what}: leaf {k}: infinities differ"
        assert err <= rtol * tree_scale, (
            f"{what}: leaf {k}: max |jit - eager| = {err:.3e}, more than {rtol:g} x {tree_scale:.3e}"
        )
        if err:
            worst = max(worst, err / tree_scale)
    return worst


def _derivatives(fun, order: int):
    """``(args, ts, ct, dx, dt, ct2) -> {name: result}``: the value of ``fun`` and its
    derivatives as :func:`check_jit_matches` compares them."""
    import tidu

    def jvp_map(xs, ts):
        return tidu.jvp(fun, xs, ts)[1]

    def vjp_map(xs, ct):
        return tidu.vjp(fun, *xs)[1](ct)

    def run(args, ts, ct, dx, dt, ct2):
        out = {"value": fun(*args), "jvp": jvp_map(args, ts), "vjp": vjp_map(args, ct)}
        if order >= 2:
            out["jvp of jvp"] = tidu.jvp(jvp_map, (args, ts), (dx, dt))
            out["vjp of vjp"] = tidu.vjp(vjp_map, args, ct)[1](ct2)
        return out

    return run


def check_jit_matches(f, args, order: int = 2, seed: int = 0, rtol: float = JIT_RTOL) -> float:
    """``tf.jit`` against eager evaluation of ``f`` at ``args`` (a sequence of tensors),
    comparing each result with :func:`assert_tree_close`: the value, the JVP in a
    random direction ``t`` and the VJP of a random cotangent ``v``; for ``order=2``
    also second derivatives the way ``check_grads`` takes them: forward over forward
    (the JVP of ``(x, t) -> jvp(f, x, t)`` in a random direction) and reverse over
    reverse (the VJP of ``(x, v) -> vjp(f, x)(v)`` of a random cotangent). Both
    compositions are checked: the transformations compiled (``jit(jvp(f))``, ...: one
    compiled function returns every result) and the compiled function differentiated
    (``jvp(jit(f))``, ...: the ``call`` primitive's JVP and transpose rules).

    Returns the largest relative difference seen (0.0: bit-identical everywhere).
    """
    import tidu

    args = tuple(args)
    rng = np.random.default_rng(seed)
    ts = _tree_random_like(args, rng)
    ct = _tree_random_like(f(*args), rng)
    dx, dt = _tree_random_like(args, rng), _tree_random_like(ts, rng)
    ct2 = _tree_random_like(tidu.vjp(f, *args)[1](ct), rng) if order >= 2 else None
    point = (args, ts, ct, dx, dt, ct2)
    want = _derivatives(f, order)(*point)
    jit_derivatives, jf = tf.jit(_derivatives(f, order)), tf.jit(f)
    compiled = jit_derivatives(*point)
    through_call = _derivatives(jf, order)(*point)
    for fn in (jit_derivatives, jf):  # each traced and compiled once (no fallback to running f itself)
        info = fn.cache_info()
        assert info.traces == 1 and info.size == 1, f"{fn!r}: {info}"
    worst = 0.0
    for name, w in want.items():
        worst = max(worst, assert_tree_close(compiled[name], w, f"jit({name}(f))", rtol))
        worst = max(worst, assert_tree_close(through_call[name], w, f"{name}(jit(f))", rtol))
    return worst


def check_derivatives(mode: str, f, args, order: int = 2, **check_grads_kw) -> None:
    """The derivative check of a mode: ``eager``, ``tidu.testing.check_grads`` (finite
    differences and the dot-product test, to ``order``); ``jit``, equality of the
    compiled value and derivatives with eager ones to ``order``
    (:func:`check_jit_matches`), through which the eager check carries over."""
    from tidu.testing import check_grads

    if mode == "jit":
        check_jit_matches(f, args, order=order)
    elif mode == "eager":
        check_grads(f, args, order=order, **check_grads_kw)
    else:
        raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")


#: bond labels of ``lattice_network``: up to 52 bonds (a 5 x 5 lattice has 40)
_LABELS = string.ascii_uppercase + string.ascii_lowercase


def lattice_network(lx, ly, bond, dtype="float64", seed=0):
    """A closed ``lx x ly`` square-lattice network (a scalar, the shape of a PEPS norm): the
    einsum subscripts and Gaussian tensors scaled by ``1/sqrt(bond)``."""
    rng = np.random.default_rng(seed)
    names: dict = {}
    terms = []
    for x in range(lx):
        for y in range(ly):
            t = ""
            for nb in ((x + 1, y), (x, y + 1), (x - 1, y), (x, y - 1)):
                if 0 <= nb[0] < lx and 0 <= nb[1] < ly:
                    t += names.setdefault(frozenset([(x, y), nb]), _LABELS[len(names)])
            terms.append(t)
    ops = []
    for t in terms:
        a = rng.standard_normal((bond,) * len(t))
        if dtype == "complex128":
            a = a + 1j * rng.standard_normal(a.shape)
        ops.append(tf.asarray(a / np.sqrt(bond)))
    return ",".join(terms) + "->", ops
