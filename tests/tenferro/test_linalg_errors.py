"""tenferro.linalg's typed errors: non-square and non-matrix input, matrices that are not
positive definite or are singular, mismatched batches; the regressions found in review
(storage mutated under solve, derivatives at zero norms and at singular matrices,
gauge policy and settings per context, transpose rules); and non-finite input, which
every function refuses through one shared check.

Tests parametrized over ``mode`` (``helpers.MODES``) also run compiled: under
``jit`` each function (or gradient) is ``tenferro.jit``-compiled and every call is
checked equal to eager to rounding (``helpers.in_mode``) before the test's own
assertions run on the compiled result. Where a known library bug makes the compiled
run differ, the ``jit`` case is a strict expected failure naming it (``_modes``)."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
import scipy.linalg

import tenferro as tf
import tenferro.linalg as la
import tidu

from helpers import MODES, compiled, in_mode
from test_linalg_degeneracy_and_gauge import _fd_grad

RNG = np.random.default_rng(7)


def _rand(shape, complex_=False):
    v = RNG.standard_normal(shape)
    return v + 1j * RNG.standard_normal(shape) if complex_ else v


# Known library bugs that make a compiled run differ from eager (issue 11's jit); the
# jit cases they affect are strict expected failures, so fixing a bug fails them and
# the marker must go.
JIT_CONCRETE_BUG = (
    "derivative rules that read concrete values while they are traced (eig's defective V, det's "
    "third and slogdet's first derivative at a singular matrix) cannot check under jit, where values "
    "are abstract: the compiled derivative raises later under another primitive's name (inv, solve) "
    "or returns a number, instead of the eager typed error"
)


def _modes(jit_bug: str | None = None, raises: type = AssertionError) -> list:
    """``MODES``, with the ``jit`` case a strict expected failure (raising ``raises``)
    when ``jit_bug`` names a known bug."""
    if jit_bug is None:
        return list(MODES)
    return ["eager", pytest.param("jit", marks=pytest.mark.xfail(strict=True, raises=raises, reason=jit_bug))]


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [la.eigh, la.cholesky, la.det, la.slogdet, la.inv, la.eigvalsh, la.eig, la.expm])
@pytest.mark.parametrize("mode", MODES)
def test_non_square(fn, mode):
    with pytest.raises(la.LinalgShapeError, match=r"must be square.*\(3, 4\)") as e:
        compiled(fn, mode)(tf.asarray(_rand((3, 4))))
    assert isinstance(e.value, tf.ShapeError)


@pytest.mark.parametrize("mode", MODES)
def test_non_matrix_and_dtype(mode):
    with pytest.raises(la.LinalgShapeError, match=r"svd: a must be a matrix.*\(3,\)"):
        compiled(la.svd, mode)(tf.asarray(_rand(3)))
    with pytest.raises(la.LinalgDTypeError, match="qr: a must be float"):
        compiled(la.qr, mode)(tf.asarray(np.ones((3, 3), dtype=np.int64)))


@pytest.mark.parametrize("mode", MODES)
def test_cholesky_not_pd(mode):
    with pytest.raises(la.NonPositiveDefiniteError, match=r"cholesky: .*\(2, 2\).*not positive definite"):
        compiled(la.cholesky, mode)(tf.asarray(np.array([[1.0, 2.0], [2.0, 1.0]])))


@pytest.mark.parametrize("mode", MODES)
def test_singular_solve(mode):
    run = functools.partial(compiled, mode=mode)  # errors: the compiled function alone
    a = tf.asarray(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(la.SingularMatrixError, match=r"solve: .*\(2, 2\).*singular"):
        run(la.solve)(a, tf.asarray(np.ones((2, 1))))
    with pytest.raises(la.SingularMatrixError, match="inv"):
        run(la.inv)(a)
    with pytest.raises(la.SingularMatrixError, match="triangular_solve"):
        run(la.triangular_solve)(tf.asarray(np.array([[0.0, 1.0], [0.0, 1.0]])), tf.asarray(np.ones((2, 1))))


@pytest.mark.parametrize("mode", MODES)
def test_mismatched_batch(mode):
    run = functools.partial(compiled, mode=mode)  # errors: the compiled function alone
    with pytest.raises(la.LinalgShapeError, match=r"solve: batch dimensions.*\(3, 3, 2\).*\(3, 1, 4\)"):
        run(la.solve)(tf.asarray(_rand((3, 3, 2))), tf.asarray(_rand((3, 1, 4))))
    with pytest.raises(la.LinalgShapeError, match=r"solve: b \(4, 1\) must have 3 rows"):
        run(la.solve)(tf.asarray(_rand((3, 3))), tf.asarray(_rand((4, 1))))
    with pytest.raises(la.LinalgShapeError, match="triangular_solve: batch"):
        run(la.triangular_solve)(tf.asarray(_rand((3, 3, 2))), tf.asarray(_rand((3, 1, 3))))


@pytest.mark.parametrize("mode", MODES)
def test_det_singular_adjugate_gradient(mode):
    # rank-deficient: grad det = adj(A)^T, finite
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    g = in_mode(tidu.grad(la.det), mode)(tf.asarray(a)).numpy()
    adj = np.array(
        [[np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) * (-1) ** (i + j) for j in range(3)] for i in range(3)]
    )  # cofactor matrix = adj^T
    assert np.all(np.isfinite(g)) and np.allclose(g, adj)
    z = np.zeros((3, 3))
    z[0, 0] = 1.0  # rank 1: adjugate 0
    assert np.allclose(in_mode(tidu.grad(la.det), mode)(tf.asarray(z)).numpy(), 0)


def test_qr_bad_mode_and_exports():
    with pytest.raises(tf.TenferroValueError, match="qr: mode"):
        la.qr(tf.asarray(_rand((3, 3))), mode="r")
    assert tf.linalg is la
    for name in la.__all__:
        assert hasattr(la, name)


# ---------------------------------------------------------------------------
# review regressions
# ---------------------------------------------------------------------------
@pytest.mark.cpu_only  # mutates host storage through numpy()
@pytest.mark.parametrize("n", [3, 20])
def test_solve_sees_mutated_storage(n):
    # tenferro wraps column-major arrays without copying: writing through .numpy()
    # must change later solves (a cache keyed by the array's identity went stale)
    a0 = np.asfortranarray(_rand((n, n)) + n * np.eye(n))
    a1 = np.asfortranarray(_rand((n, n)) + n * np.eye(n))
    b, c = _rand((n, 2)), _rand((n, 2))
    A, B = tf.asarray(a0), tf.asarray(b)
    assert np.shares_memory(A.numpy(), A.numpy())
    loss = lambda x, y: tf.sum(tf.multiply(la.solve(x, y), tf.asarray(c)))  # noqa: E731
    assert np.allclose(la.solve(A, B).numpy(), np.linalg.solve(a0, b))
    tidu.grad(loss, argnums=(0, 1))(A, B)
    A.numpy()[:] = a1
    assert np.allclose(la.solve(A, B).numpy(), np.linalg.solve(a1, b))
    ga, gb = tidu.grad(loss, argnums=(0, 1))(A, B)
    gb_ref = np.linalg.solve(a1.T, c)  # d/db sum(c * A^{-1} b) = A^{-T} c
    assert np.allclose(gb.numpy(), gb_ref)
    assert np.allclose(ga.numpy(), -gb_ref @ np.linalg.solve(a1, b).T)


@pytest.mark.parametrize("mode", MODES)
def test_solve_constant_a_lu_solve_transpose_complex(mode):
    # the carried LU factors transpose to A^{-T} (bilinear pairing), not A^{-H}
    n = 20
    a = _rand((n, n), True) + n * np.eye(n)
    c = _rand((n, 1), True)
    g = in_mode(tidu.grad(lambda y: tf.real(tf.sum(tf.multiply(la.solve(tf.asarray(a), y), tf.asarray(c))))), mode)(
        tf.asarray(_rand((n, 1), True))
    )
    # L = Re sum(w * y), w = A^{-T} c: tidu's gradient dL/dx - i dL/dy is w itself
    assert np.allclose(g.numpy(), np.linalg.solve(a.T, c))
    assert not np.allclose(g.numpy(), np.linalg.solve(a.conj().T, c))


@pytest.mark.parametrize("mode", MODES)
def test_solve_singular_in_jvp_path(mode):
    a = tf.asarray(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(la.SingularMatrixError, match=r"solve: .*singular"):
        compiled(tidu.grad(lambda x: tf.sum(la.solve(x, tf.asarray(np.ones((2, 1)))))), mode)(a)


@pytest.mark.parametrize("mode", MODES)
def test_expm_frechet_promotes_and_checks(mode):
    run = functools.partial(in_mode, mode=mode)  # eager, or compiled and checked against eager
    a, e = _rand((3, 3), True) * 0.5, _rand((3, 3)) * 0.5
    out = run(la.expm_frechet)(tf.asarray(a), tf.asarray(e))
    assert out.dtype == tf.complex128
    assert np.allclose(out.numpy(), scipy.linalg.expm_frechet(a, e.astype(complex), compute_expm=False))
    ct = tf.asarray(_rand((3, 3), True))
    _, f = tidu.vjp(run(la.expm_frechet), tf.asarray(a), tf.asarray(e))  # jit: through the compiled call
    ga, ge = f(ct)  # was a TangentMismatchError (f64 aval, c128 value)
    assert ga.dtype == tf.complex128 and ge.dtype == tf.float64
    with pytest.raises(la.LinalgDTypeError, match="expm_frechet: e must be float"):
        compiled(la.expm_frechet, mode)(tf.asarray(a), tf.asarray(np.ones((3, 3), dtype=np.int64)))
    with pytest.raises(la.LinalgShapeError, match=r"expm_frechet: the direction e must have a's shape \(3, 3\)"):
        compiled(la.expm_frechet, mode)(tf.asarray(a), tf.asarray(_rand((3, 3, 2))))
    with pytest.raises(la.LinalgShapeError, match=r"expm_frechet: e must be square"):
        compiled(la.expm_frechet, mode)(tf.asarray(a), tf.asarray(_rand((3, 2))))


_NORMS_AT_ZERO = [
    ("2-vector", (4,), lambda x: la.norm(x)),
    ("all", (2, 3), lambda x: la.norm(x)),
    ("fro", (2, 3), lambda x: la.norm(x, "fro")),
    ("axis", (2, 3), lambda x: tf.sum(la.norm(x, axis=0))),
    ("p=3", (4,), lambda x: la.norm(x, 3)),
    ("p=1.5", (4,), lambda x: la.norm(x, 1.5)),
]


@pytest.mark.parametrize("name,shape,fn", _NORMS_AT_ZERO, ids=[n for n, _, _ in _NORMS_AT_ZERO])
@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_norm_derivatives_at_zero(name, shape, fn, cplx, mode):
    # subgradient 0 at x = 0 to every order (double where), never NaN
    run = functools.partial(in_mode, mode=mode)  # eager, or compiled and checked against eager
    z = tf.asarray(np.zeros(shape, dtype=complex if cplx else float))
    assert float(run(fn)(z).numpy()) == 0.0
    g = run(tidu.grad(fn))(z).numpy()
    assert np.all(g == 0)
    h = run(tidu.grad(lambda x: tf.real(tf.sum(tidu.grad(fn)(x)))))(z).numpy()  # second order
    assert np.all(np.isfinite(h))
    # and unchanged away from zero
    x = _rand(shape, cplx)
    assert np.allclose(run(tidu.grad(fn))(tf.asarray(x)).numpy(), _fd_grad(fn, x, cplx), atol=1e-6)  # FD accuracy


@pytest.mark.parametrize("mode", MODES)
def test_det_derivatives_at_singular_matrix(mode):
    run = functools.partial(in_mode, mode=mode)  # eager, or compiled and checked against eager
    a = tf.asarray(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]))
    assert np.all(np.isfinite(run(tidu.grad(la.det))(a).numpy()))  # first order: the adjugate
    # second order: exact at the singular matrix (3x3: adj is quadratic, so central
    # differences of it are exact up to rounding; the Hessian at rank n-1 and n-2 in
    # every dtype is in test_linalg_nasty.py)
    h = run(tidu.grad(lambda x: tf.sum(tidu.grad(la.det)(x))))(a).numpy()
    assert np.allclose(h, _fd_grad(lambda x: tf.sum(tidu.grad(la.det)(x)), a.numpy(), False), atol=1e-6)
    # invertible: second derivatives still exact (d/dA sum(adj(A)^T) against finite differences)
    b = _rand((3, 3)) + 3 * np.eye(3)
    h = run(tidu.grad(lambda x: tf.sum(tidu.grad(la.det)(x))))(tf.asarray(b)).numpy()
    assert np.allclose(h, _fd_grad(lambda x: tf.sum(tidu.grad(la.det)(x)), b, False), atol=1e-6)  # FD accuracy


@pytest.mark.parametrize("mode", _modes(JIT_CONCRETE_BUG))  # jit: both raise "inv: the matrix a ... is singular"
def test_det_third_derivative_at_singular_matrix_raises(mode):
    a = tf.asarray(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]))
    third = lambda x: tidu.jvp(lambda y: tidu.jvp(la.det, (y,), (y,))[1], (x,), (x,))[1]  # noqa: E731
    with pytest.raises(la.SingularMatrixError, match="det: third .*singular matrix"):
        compiled(lambda x: tidu.jvp(third, (x,), (x,)), mode)(a)
    with pytest.raises(la.SingularMatrixError, match="slogdet: the derivative .*singular"):
        compiled(tidu.grad(lambda x: la.slogdet(x)[1]), mode)(tf.asarray(np.array([[1.0, 2.0], [2.0, 4.0]])))


@pytest.mark.parametrize(
    "fn,name",
    [
        (la.svd, "svd"),
        (la.eigh, "eigh"),
        (la.eig, "eig"),
        (la.cholesky, "cholesky"),
        (la.inv, "inv"),
        (lambda x: la.solve(x, x), "solve"),
        (la.eigvalsh, "eigvalsh"),
        (la.svdvals, "svdvals"),
    ],
)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("mode", MODES)
def test_non_finite_input(fn, name, bad, mode, request):
    x = np.eye(3)
    x[1, 2] = bad
    with pytest.raises(la.NonFiniteError, match=rf"{name}: the input .*\(3, 3\) contains NaN or inf"):
        compiled(fn, mode)(tf.asarray(x))


# jit: on the CPU solve's own check raises "solve: ... numerically singular" (V); on a GPU nothing raises
@pytest.mark.parametrize("mode", _modes(JIT_CONCRETE_BUG, raises=(AssertionError, pytest.fail.Exception)))
def test_eig_defective_names_eig(mode):
    for a in ([[1.0, 1.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 0.0]]):
        with pytest.raises(la.SingularMatrixError, match="eig: .*defective"):
            compiled(tidu.grad(lambda x: tf.sum(tf.real(la.eigvals(x)))), mode)(tf.asarray(np.array(a)))


def _count_dot_generals(fn, *args):
    g = tidu.make_graph(fn, *args)
    return sum(e.prim.name == "dot_general" for e in g.eqns)


def test_selection_uses_slices_not_matmuls():
    a = tf.asarray(_rand((6, 5)))
    assert _count_dot_generals(lambda x: la.truncated_svd(x, max_rank=2), a) == 0
    assert _count_dot_generals(la.pinv, tf.asarray(_rand((6, 5)))) <= 1  # only V S^-1 U^H
    assert _count_dot_generals(la.expm_frechet, tf.asarray(_rand((3, 3))), tf.asarray(_rand((3, 3)))) == 0


def test_gauge_policy_captured_when_jvp_is_built():
    a = tf.asarray(_rand((4, 3), True))

    def loss(x):
        u, s, vh = la.svd(x)
        return tf.sum(tf.real(u))  # gauge dependent

    with la.settings(gauge="raise"):
        out, f = tidu.vjp(loss, a)
    with pytest.raises(la.GaugeError, match="svd"):
        f(tf.asarray(1.0))
    with la.settings(gauge="ignore"):
        out, f = tidu.vjp(loss, a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(tf.asarray(1.0))


def test_settings_are_context_local():
    import threading

    inside, release, seen = threading.Event(), threading.Event(), {}

    def worker():
        with la.settings(gauge="raise", broadening=0.5):
            seen["worker"] = (la.config.gauge, la.config.broadening)
            inside.set()
            release.wait(5)

    t = threading.Thread(target=worker)
    t.start()
    inside.wait(5)
    seen["main"] = (la.config.gauge, la.config.broadening)  # the other thread's override is invisible
    release.set()
    t.join()
    assert seen["worker"] == ("raise", 0.5)
    assert seen["main"] == ("warn", None)  # the default: exact outside the degeneracy threshold
    old = la.config.degeneracy_rtol
    try:  # assignment sets the process-wide default
        la.config.degeneracy_rtol = 1e-6
        with la.settings(degeneracy_rtol=1e-3):
            assert la.config.degeneracy_rtol == 1e-3
        assert la.config.degeneracy_rtol == 1e-6
    finally:
        la.config.degeneracy_rtol = old


def test_transpose_rules_reject_undefined_matrix():
    from tenferro.linalg import _expm, _solve

    aval = tidu.aval_of(tf.asarray(np.eye(2)))
    und, b = tidu.UndefinedPrimal(aval), tf.asarray(np.ones((2, 2)))
    with pytest.raises(tf.TenferroValueError, match="solve: the transpose exists only in"):
        _solve._solve_transpose(b, und, b, transposed=False)
    with pytest.raises(tf.TenferroValueError, match="triangular_solve: the transpose exists only in"):
        _solve._triangular_solve_transpose(
            b, und, b, lower=True, left=True, transpose_a=False, conjugate_a=False, unit_diagonal=False
        )
    with pytest.raises(tf.TenferroValueError, match="expm_frechet: the transpose exists only in"):
        _expm.expm_frechet_p.transpose_rule(b, und, b)


# ---------------------------------------------------------------------------
# non-finite input: every function refuses it through the one shared check
# ---------------------------------------------------------------------------
def _nonfinite_calls():
    """``(public name, function, argument builders)``: each builder makes one argument
    from the bad value, so the compiled function gets the bad matrix as an argument."""
    sq = lambda bad: tf.asarray(np.where(np.eye(3, k=1) > 0, bad, np.eye(3) * 2.0))  # noqa: E731
    tall = lambda bad: tf.asarray(np.vstack([np.eye(3), [bad, 1.0, 0.0]]))  # noqa: E731
    good3 = lambda bad: tf.asarray(np.eye(3) * 2.0)  # noqa: E731
    ones = lambda *shape: lambda bad: tf.ones(shape)  # noqa: E731
    P = functools.partial
    return [
        ("svd", la.svd, (tall,)),
        ("svdvals", la.svdvals, (tall,)),
        ("truncated_svd", P(la.truncated_svd, max_rank=2), (tall,)),
        ("qr", la.qr, (tall,)),
        ("lq", la.lq, (tall,)),
        ("eigh", la.eigh, (sq,)),
        ("eigvalsh", la.eigvalsh, (sq,)),
        ("eig", la.eig, (sq,)),
        ("eigvals", la.eigvals, (sq,)),
        ("cholesky", la.cholesky, (sq,)),
        ("solve", la.solve, (sq, ones(3))),
        ("solve", la.solve, (good3, lambda v: tf.asarray([v, 1.0, 1.0]))),
        ("triangular_solve", la.triangular_solve, (sq, ones(3, 1))),
        ("triangular_solve", la.triangular_solve, (good3, lambda v: tf.asarray([[v], [1.0], [1.0]]))),
        ("lu", la.lu, (sq,)),
        ("inv", la.inv, (sq,)),
        ("pinv", la.pinv, (tall,)),
        ("lstsq", la.lstsq, (tall, ones(4))),
        ("lstsq", la.lstsq, (lambda v: tall(1.0), lambda v: tf.asarray([v, 1.0, 1.0, 1.0]))),
        ("det", la.det, (sq,)),
        ("slogdet", la.slogdet, (sq,)),
        ("expm", la.expm, (sq,)),
        ("expm_frechet", la.expm_frechet, (sq, good3)),
        ("expm_frechet", la.expm_frechet, (good3, sq)),
        ("norm", la.norm, (tall,)),
        ("norm", P(la.norm, ord=2), (tall,)),
        ("norm", P(la.norm, ord=1), (tall,)),
        ("norm", la.norm, (lambda v: tf.asarray([v, 1.0]),)),
    ]


def _nonfinite_cases():
    # under jit the input is abstract when the program is built: the check is staged into
    # it (linalg_finite_check) and raises at run time under the public function's name
    return [
        pytest.param(name, fn, builders, mode, id=f"{mode}-{name}{i}")
        for i, (name, fn, builders) in enumerate(_nonfinite_calls())
        for mode in MODES
    ]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("name,fn,builders,mode", _nonfinite_cases())
def test_every_linalg_function_refuses_nonfinite_input(name, fn, builders, mode, bad):
    args = [b(bad) for b in builders]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy RuntimeWarning leaks either
        with pytest.raises(la.NonFiniteError, match=rf"{name}: the input \w+ of shape .* contains NaN or inf"):
            compiled(fn, mode)(*args)


def test_nonfinite_check_under_differentiation():
    a = tf.asarray(np.array([[1.0, np.nan], [0.0, 2.0]]))
    for f in (la.det, lambda x: la.qr(x)[0], la.expm, lambda x: la.norm(x)):
        with pytest.raises(la.NonFiniteError):
            tidu.grad(lambda x: tf.sum(tf.real(f(x))))(a)
