"""Which public functions may return NaN or inf for finite input (issue 9).

Only IEEE arithmetic does: a pole (``log(0) = -inf``, ``1/0 = inf``), an argument
outside a real function's domain (``sqrt(-1) = nan``), or overflow (``exp(1000)``).
ALLOWED names each such function with the finite input that shows it; every other
public function returns finite values on a sample of finite inputs (moderate
magnitudes, zeros, ones and singular matrices included), or raises a typed error."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
import tenferro.linalg as la

#: function -> (finite arguments giving a non-finite value, why)
ALLOWED = {
    "log": ((0.0,), "pole: log(0) = -inf; log(-1) = nan (domain)"),
    "log1p": ((-1.0,), "pole: log1p(-1) = -inf; below -1: nan (domain)"),
    "sqrt": ((-1.0,), "domain: sqrt of a negative real is nan (use complex input)"),
    "rsqrt": ((0.0,), "pole: 1/sqrt(0) = inf; negative: nan"),
    "reciprocal": ((0.0,), "pole: 1/0 = inf"),
    "divide": ((1.0, 0.0), "pole: x/0 = inf, 0/0 = nan"),
    "div": ((1.0, 0.0), "pole: x/0 = inf, 0/0 = nan"),
    "power": ((0.0, -1.0), "pole: 0**-1 = inf; negative base, fractional exponent: nan"),
    "pow": ((0.0, -1.0), "pole: 0**-1 = inf"),
    "arcsin": ((2.0,), "domain: |x| > 1 is nan"),
    "arccos": ((2.0,), "domain: |x| > 1 is nan"),
    "exp": ((1000.0,), "overflow"),
    "expm1": ((1000.0,), "overflow"),
    "sinh": ((1000.0,), "overflow"),
    "cosh": ((1000.0,), "overflow"),
    "square": ((1e200,), "overflow"),
    "multiply": ((1e200, 1e200), "overflow"),
    "mul": ((1e200, 1e200), "overflow"),
    "add": ((1e308, 1e308), "overflow"),
    "subtract": ((-1e308, 1e308), "overflow"),
    "sub": ((-1e308, 1e308), "overflow"),
    "tan": ((np.pi / 2,), "near the pole the value is huge but finite; overflow only in float32"),
}

UNARY = [
    "abs",
    "absolute",
    "arccos",
    "arcsin",
    "arctan",
    "conj",
    "conjugate",
    "cos",
    "cosh",
    "exp",
    "expm1",
    "imag",
    "log",
    "log1p",
    "neg",
    "negative",
    "real",
    "reciprocal",
    "rsqrt",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "tan",
    "tanh",
    "sum",
    "prod",
    "mean",
    "max",
    "min",
    "amax",
    "amin",
    "logsumexp",
    "isfinite",
    "isnan",
    "isinf",
]
BINARY = [
    "add",
    "sub",
    "subtract",
    "mul",
    "multiply",
    "div",
    "divide",
    "pow",
    "power",
    "maximum",
    "minimum",
    "logaddexp",
    "less",
    "greater",
    "equal",
    "not_equal",
    "less_equal",
    "greater_equal",
    "inner",
    "outer",
    "vdot",
    "dot",
    "matmul",
]
SAMPLE = np.array([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.5, 3.0])


def _finite(out) -> bool:
    leaves = out if isinstance(out, tuple) else (out,)
    return all(np.all(np.isfinite(np.asarray(t.numpy(), dtype=complex))) for t in leaves)


@pytest.mark.parametrize("name", UNARY)
def test_unary_functions_are_finite_on_finite_input(name):
    fn = getattr(tf, name)
    x = SAMPLE
    if name in ("log", "log1p", "sqrt", "rsqrt", "reciprocal", "arcsin", "arccos"):
        x = np.array([0.1, 0.5, 0.9]) if name in ("arcsin", "arccos") else np.array([0.1, 0.5, 1.0, 3.0])
    assert _finite(fn(tf.asarray(x))), name


@pytest.mark.parametrize("name", BINARY)
def test_binary_functions_are_finite_on_finite_input(name):
    fn = getattr(tf, name)
    x = tf.asarray(SAMPLE)
    y = tf.asarray(SAMPLE[::-1] + (0.25 if name in ("div", "divide", "pow", "power") else 0.0))
    if name in ("pow", "power"):
        x = tf.asarray(np.abs(SAMPLE) + 0.5)
    assert _finite(fn(x, y)), name


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_the_allow_list_is_exact(name):
    """Each allowed function really gives a non-finite value at its stated input
    (so the list does not hide anything else); tan is the documented exception."""
    args, why = ALLOWED[name]
    assert why
    with np.errstate(all="ignore"):
        out = getattr(tf, name)(*[tf.asarray(a) for a in args])
    assert _finite(out) == (name == "tan"), name


def _matrices():
    rng = np.random.default_rng(3)
    g = rng.standard_normal((4, 4))
    return {
        "random": g,
        "spd": g @ g.T + 4 * np.eye(4),
        "singular": np.outer(g[0], g[1]),
        "zero": np.zeros((4, 4)),
        "tall": rng.standard_normal((5, 3)),
        "identity": np.eye(4),
    }


LINALG = {
    "svd": la.svd,
    "svdvals": la.svdvals,
    "qr": la.qr,
    "lq": la.lq,
    "pinv": la.pinv,
    "det": la.det,
    "expm": la.expm,
    "norm": la.norm,
    "norm2": lambda a: la.norm(a, 2),
    "nuc": lambda a: la.norm(a, "nuc"),
    "eigvalsh": la.eigvalsh,
    "eigh": la.eigh,
    "eig": la.eig,
    "eigvals": la.eigvals,
    "lu": la.lu,
    "lstsq": lambda a: la.lstsq(a, tf.ones((a.shape[0],))),
    "truncated_svd": lambda a: la.truncated_svd(a, cutoff=1e-8),
    "cholesky": la.cholesky,
    "inv": la.inv,
    "solve": lambda a: la.solve(a, tf.ones((a.shape[0],))),
    "slogdet": la.slogdet,
    "expm_frechet": lambda a: la.expm_frechet(a, tf.ones(a.shape)),
    "triangular_solve": lambda a: la.triangular_solve(a, tf.ones((a.shape[0], 1))),
}


#: linalg functions that may return inf for finite input: (matrix kind, why)
LINALG_ALLOWED = {"slogdet": ("zero", "pole: log|det| = -inf at an exactly singular matrix, as NumPy")}


#: linalg functions defined for square matrices only
SQUARE_ONLY = {
    "det",
    "expm",
    "eigvalsh",
    "eigh",
    "eig",
    "eigvals",
    "cholesky",
    "inv",
    "solve",
    "slogdet",
    "expm_frechet",
    "triangular_solve",
}
# every function against every sample matrix it is defined for (square-only ones: square matrices)
LINALG_CASES = [
    (name, kind)
    for name in sorted(LINALG)
    for kind, a in sorted(_matrices().items())
    if name not in SQUARE_ONLY or a.shape[0] == a.shape[1]
]


@pytest.mark.parametrize("name,kind", LINALG_CASES)
def test_linalg_is_finite_or_a_typed_error_on_finite_input(name, kind):
    a = _matrices()[kind]
    if name in ("eigvalsh", "eigh"):
        a = a + a.T
    try:
        out = LINALG[name](tf.asarray(a))
    except la.LinalgError:  # singular / not positive definite / not converged: typed, never NaN
        return
    allowed = LINALG_ALLOWED.get(name, (None,))[0] == kind
    assert _finite(out) != allowed, (name, kind)
