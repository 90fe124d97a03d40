"""Gradient specs of tenferro.linalg (trailing-batch layout ``[M, N, B...]``).

Decompositions are checked through gauge-invariant functions of their outputs
(``U diag(S) Vh``, projectors ``V V^H``, functions of eigenvalues), batched and
unbatched, tall, square and wide. Arguments are built to be well conditioned:
distinct singular values / eigenvalues come with probability one from Gaussian
draws; ``solve``/``inv``/triangular solves get a diagonal shift, ``cholesky`` a
positive-definite ``M M^H + n I``.
"""

from __future__ import annotations

import numpy as np

import tenferro as tf
import tenferro.linalg as la
import tidu
from tenferro.linalg._qr import qr_singular_part_p
from tenferro.linalg._matops import as_cols, columns, mH, mm

from . import OpSpec

_TALL_SQUARE_WIDE = [((4, 3),), ((3, 3),), ((3, 4),), ((4, 3, 2),), ((3, 4, 2),)]
_SQUARE = [((3, 3),), ((3, 3, 2),)]


def _rand(rng, dtype, shape):
    v = rng.standard_normal(shape)
    if dtype.is_complex:
        v = v + 1j * rng.standard_normal(shape)
    return np.asarray(v, dtype=dtype.numpy)


def _shifted(shift):
    """Random square matrices plus ``shift * n * I`` (well conditioned)."""

    def make(rng, dtype, shapes):
        out = []
        for i, s in enumerate(shapes):
            a = _rand(rng, dtype, s)
            if i == 0:
                m, n = s[0], s[1] if len(s) > 1 else s[0]
                a = a + shift * max(m, n) * np.eye(m, n).reshape((m, n) + (1,) * (len(s) - 2))
            out.append(tf.asarray(a.astype(dtype.numpy)))
        return out

    return make


def _unitary(rng, dtype, n, batch):
    g = _rand(rng, dtype, batch + (n, n))
    q, r = np.linalg.qr(g)
    return q


def _lstsq_all(a, b):
    """The differentiable outputs of lstsq: x, the residuals (tall) and the singular values."""
    x, res, _, sv = la.lstsq(a, b)
    return x, res, sv


def _low_rank(r):
    """A first argument of rank ``r`` (a product of Gaussian factors); later ones Gaussian."""

    def make(rng, dtype, shapes):
        s0 = shapes[0]
        m, n, batch = s0[0], s0[1], tuple(s0[2:])
        left = _rand(rng, dtype, (m, r) + batch)
        right = _rand(rng, dtype, (r, n) + batch)
        a = np.einsum("ik...,kj...->ij...", left, right)
        return [tf.asarray(a.astype(dtype.numpy))] + [
            tf.asarray(_rand(rng, dtype, s).astype(dtype.numpy)) for s in shapes[1:]
        ]

    return make


def _spectral(kind):
    """Matrices with a well-separated spectrum (random eigen/singular vectors):
    ``"svd"``: singular values spread over [1, 2.5]; ``"herm"``: Hermitian with
    eigenvalues spread over [-1.5, 1.5]; ``"eig"``: ``X diag(w) X^{-1}`` with
    ``X = I + 0.15 G`` and eigenvalues in [1, 3] (complex-shifted for complex).
    Later arguments (right-hand sides) are plain Gaussian."""

    def make(rng, dtype, shapes):
        s0 = shapes[0]
        m, n, batch = s0[0], s0[1], tuple(s0[2:])
        k = min(m, n)
        if kind == "svd":
            u = _unitary(rng, dtype, m, batch)[..., :, :k]
            v = _unitary(rng, dtype, n, batch)[..., :, :k]
            sv = np.linspace(2.5, 1.0, k)
            a = (u * sv) @ np.conj(np.swapaxes(v, -1, -2))
        elif kind == "herm":
            v = _unitary(rng, dtype, n, batch)
            a = (v * np.linspace(-1.5, 1.5, n)) @ np.conj(np.swapaxes(v, -1, -2))
        else:
            x = np.eye(n) + 0.15 * _rand(rng, dtype, batch + (n, n))
            w = np.linspace(1.0, 3.0, n) + (0.5j * np.linspace(-1, 1, n) if dtype.is_complex else 0)
            a = (x * w) @ np.linalg.inv(x)
        a = np.moveaxis(a, (-2, -1), (0, 1)) if batch else a
        out = [tf.asarray(np.asarray(a, dtype=dtype.numpy))]
        out += [tf.asarray(_rand(rng, dtype, sh)) for sh in shapes[1:]]
        return out

    return make


def _pd(rng, dtype, shapes):
    (s,) = shapes
    m = _rand(rng, dtype, s)
    n = s[0]
    a = np.einsum("ik...,jk...->ij...", m, m.conj()) + n * np.eye(n).reshape((n, n) + (1,) * (len(s) - 2))
    return [tf.asarray(a.astype(dtype.numpy))]


def _svd_reconstruct(a):
    u, s, vh = la.svd(a)
    return mm(tf.multiply(u, as_cols(s, u.shape[0])), vh)


def _svd_projectors(a):
    u, s, vh = la.svd(a)
    return mm(u, mH(u)), s, mm(mH(vh), vh)


def _staged_projector_gradient(a):
    """The gradient of a gauge-invariant SVD loss, compiled: its gauge check is staged
    into the program (``linalg_gauge_assert``), and differentiating it goes through it."""
    m = a.shape[0]
    c = tf.asarray(np.cos(np.arange(m * m)).reshape(m, m))

    def loss(a):
        u, s, vh = la.svd(a)
        return tf.sum(tf.real(mm(u, mH(u))) * c) + tf.sum(s**2)

    return tf.jit(tidu.grad(loss))(a)


def _svd_polar(a):
    # U Vh (the polar factor for square a): smooth even at repeated singular values
    u, s, vh = la.svd(a)
    return mm(u, vh)


def _svd_weighted(a):
    # U diag(S^2) U^H: invariant, weights the columns differently (exercises the F matrix)
    u, s, vh = la.svd(a)
    return mm(tf.multiply(u, as_cols(tf.multiply(s, s), u.shape[0])), mH(u))


def _svd_full(a):
    u, s, vh = la.svd(a, full_matrices=True)
    k = s.shape[0]
    u1, vh1 = columns(u, 0, k), mH(columns(mH(vh), 0, k))
    return mm(tf.multiply(u1, as_cols(s, u1.shape[0])), vh1), mm(u, mH(u))


def _qr_complete(a):
    q, r = la.qr(a, mode="complete")
    k = min(a.shape[0], a.shape[1])
    return columns(q, 0, k), r


def _qr_singular_part_at_zero(a):
    """qr's singular-part map on its domain (zero tangents and cotangents, at every
    order): what a loss on the leading factors of a rank-deficient qr sends through
    it. Its errors on nonzero input: tests/tenferro/test_linalg_nasty.py."""
    z = qr_singular_part_p.bind(tf.multiply(a, 0.0), shape=tuple(a.shape), role="tangent", where="spec")
    return tf.add(a, tf.multiply(z, 0.0))


def _det_gradient(a):
    """The gradient of det, adj(a)^T per matrix (the vjp of a cotangent 1, which is the
    holomorphic derivative for complex a): its derivatives are the Hessian of det."""
    d, pullback = tidu.vjp(la.det, a)
    return pullback(tf.ones(d.shape, dtype=d.dtype))[0]


def _eigh_functions(a):
    w, v = la.eigh(a)
    return w, mm(tf.multiply(v, as_cols(tf.multiply(w, w), v.shape[0])), mH(v))


def _eigh_projector_lowest(a):
    w, v = la.eigh(a)
    v0 = columns(v, 0, 1)
    return mm(v0, mH(v0))


def _tri(lower, left, transpose_a, conjugate_a, unit_diagonal):
    def f(a, b):
        return la.triangular_solve(
            a, b, lower=lower, left=left, transpose_a=transpose_a, conjugate_a=conjugate_a, unit_diagonal=unit_diagonal
        )

    f.__name__ = f"triangular_solve_{lower}_{left}_{transpose_a}_{conjugate_a}_{unit_diagonal}"
    return f


def _eig_invariant(a):
    # eigenvalues and |V_ik|^2 (invariant under the phase of each unit-norm column)
    w, v = la.eig(a)
    return w, tf.real(tf.multiply(v, tf.conj(v)))


def _scaled(c):
    def make(rng, dtype, shapes):
        return [tf.asarray((c * _rand(rng, dtype, s)).astype(dtype.numpy)) for s in shapes]

    return make


def _truncated(a):
    # rank-2 truncation: the derivative includes the discarded subspace
    u, s, vh = la.truncated_svd(a, max_rank=2)
    return mm(tf.multiply(u, as_cols(s, u.shape[0])), vh), s


def _eye_like(rng, dtype, shapes):
    """Size-0 cases: any content works (there is none); identity-like otherwise."""
    return [tf.asarray(np.zeros(s, dtype=dtype.numpy)) for s in shapes]


def _lu_args(rng, dtype, shapes):
    """``A = P0 L0 U0`` with a random row permutation ``P0`` per batch entry, ``L0``
    unit lower trapezoidal with ``|entries| <= 0.5`` below the diagonal and ``U0``
    upper trapezoidal with ``|diagonal|`` in [1, 2]: partial pivoting then picks
    ``P0`` with a margin (pivot ratio ``>= 2``), so the pivot order is constant
    around ``A`` and L, U are smooth there."""
    (s,) = shapes
    m, n, batch = s[0], s[1], tuple(s[2:])
    k = min(m, n)
    out = np.empty(batch + (m, n), dtype=dtype.numpy)
    for idx in np.ndindex(*batch):
        g = _rand(rng, dtype, (m, k))
        l0 = np.tril(0.5 * g / np.maximum(np.abs(g), 1.0), -1) + np.eye(m, k)
        u0 = np.triu(_rand(rng, dtype, (k, n)), 1)
        u0[np.arange(k), np.arange(k)] = rng.uniform(1.0, 2.0, k) * rng.choice([-1.0, 1.0], k)
        out[idx] = (l0 @ u0)[rng.permutation(m)]
    out = np.moveaxis(out, (-2, -1), (0, 1)) if batch else out
    return [tf.asarray(np.asarray(out, dtype=dtype.numpy))]


def _lu_factors(a):
    # P is piecewise constant (zero derivative): only L and U carry derivatives
    p, l, u = la.lu(a)
    return l, u


def _solve_self(a):
    return la.solve(a, a)


def _solve_constant_a(b):
    n = b.shape[0]
    a = n * np.eye(n) + np.cos(np.arange(n * n)).reshape(n, n)  # fixed, well conditioned
    return la.solve(tf.asarray(a), b)


# size-0 matrices and batches: the rules must produce empty, well-shaped derivatives
_EMPTY = [((0, 0),), ((3, 0),), ((0, 3),), ((3, 3, 0),)]
_EMPTY_SQUARE = [((0, 0),), ((3, 3, 0),)]

SPECS = (
    [
        OpSpec(
            "linalg_svd_reconstruct",
            _svd_reconstruct,
            _TALL_SQUARE_WIDE,
            covers=("svd", "linalg_gauge_check", "svd_vector_terms", "linalg_finite_check"),
            make_args=_spectral("svd"),
        ),
        OpSpec(
            "linalg_svd_projectors",
            _svd_projectors,
            _TALL_SQUARE_WIDE,
            covers=("svd", "linalg_gauge_check"),
            make_args=_spectral("svd"),
        ),
        OpSpec(
            "linalg_svd_staged_gradient",
            _staged_projector_gradient,
            [((4, 3),)],
            covers=("svd", "linalg_gauge_assert"),
            make_args=_spectral("svd"),
        ),
        OpSpec(
            "linalg_svd_weighted", _svd_weighted, [((4, 3),), ((3, 4, 2),)], covers=("svd",), make_args=_spectral("svd")
        ),
        OpSpec(
            "linalg_svd_full",
            _svd_full,
            [((4, 3),), ((3, 4),), ((3, 4, 2),)],
            covers=("svd",),
            make_args=_spectral("svd"),
        ),
        OpSpec("linalg_svdvals", la.svdvals, _TALL_SQUARE_WIDE, covers=("svd",), make_args=_spectral("svd")),
        OpSpec("linalg_qr", la.qr, _TALL_SQUARE_WIDE, covers=("qr", "triangular_solve"), make_args=_shifted(0.5)),
        OpSpec("linalg_qr_complete", _qr_complete, [((4, 3),), ((3, 4, 2),)], covers=("qr",), make_args=_shifted(0.5)),
        OpSpec(
            "linalg_qr_singular_part",
            _qr_singular_part_at_zero,
            [((4, 3),), ((3, 4, 2),)],
            covers=("qr_singular_part",),
        ),
        OpSpec("linalg_lq", la.lq, [((4, 3),), ((3, 4),), ((3, 4, 2),)], covers=("qr",), make_args=_shifted(0.5)),
        OpSpec(
            "linalg_eigh", _eigh_functions, _SQUARE, covers=("eigh", "linalg_gauge_check"), make_args=_spectral("herm")
        ),
        OpSpec("linalg_eigh_projector", _eigh_projector_lowest, _SQUARE, covers=("eigh",), make_args=_spectral("herm")),
        OpSpec("linalg_eigvalsh", la.eigvalsh, _SQUARE, covers=("eigh",), make_args=_spectral("herm")),
        OpSpec("linalg_cholesky", la.cholesky, _SQUARE, covers=("cholesky", "triangular_solve"), make_args=_pd),
        # single concrete matrices: the JVP carries the LU factors (lu_solve) into the
        # reverse pass; traced a (higher orders, make_graph) differentiates solve itself
        OpSpec(
            "linalg_solve",
            la.solve,
            [((3, 3), (3, 2)), ((3, 3, 2), (3, 1, 2)), ((3, 3), (3,)), ((20, 20), (20, 2))],
            covers=("solve",),
            make_args=_spectral("eig"),
        ),
        # a constant: every order differentiates lu_solve itself (its JVP and transpose)
        OpSpec("linalg_solve_constant_a", _solve_constant_a, [((3, 2),), ((20,),)], covers=("lu_solve",)),
        OpSpec(
            "linalg_expm_frechet",
            la.expm_frechet,
            [((3, 3), (3, 3)), ((3, 3, 2), (3, 3, 2))],
            covers=("expm_frechet", "concatenate", "slice_embed", "slice"),
            make_args=_scaled(0.5),
        ),
        OpSpec("linalg_inv", la.inv, _SQUARE, covers=("inv",), make_args=_spectral("eig")),
        OpSpec(
            "linalg_det",
            la.det,
            [((3, 3),), ((3, 3, 2),), ((1, 1),)],
            covers=("det", "adjugate"),
            make_args=_spectral("eig"),
        ),
        OpSpec(
            "linalg_det_gradient",
            _det_gradient,
            [((3, 3),), ((3, 3, 2),)],
            covers=("adjugate", "adjugate_jvp"),
            make_args=_spectral("eig"),
        ),
        # at singular matrices (3x3 of rank 2 = N-1, 4x4 of rank 2 = N-2) the Hessian of det is exact;
        # third derivatives there raise (test_linalg_errors.py), hence order 1 of the gradient
        OpSpec(
            "linalg_det_gradient_singular",
            _det_gradient,
            [((3, 3),), ((4, 4),), ((4, 4, 2),)],
            covers=("adjugate_jvp",),
            order=1,
            make_args=_low_rank(2),
        ),
        OpSpec("linalg_slogdet", la.slogdet, _SQUARE, covers=("slogdet", "inv"), make_args=_spectral("eig")),
        OpSpec(
            "linalg_eig",
            _eig_invariant,
            _SQUARE,
            covers=("eig", "solve", "linalg_gauge_check"),
            make_args=_spectral("eig"),
        ),
        OpSpec("linalg_eigvals", la.eigvals, _SQUARE, covers=("eig",), make_args=_spectral("eig")),
        OpSpec("linalg_expm", la.expm, _SQUARE, covers=("expm", "expm_frechet"), make_args=_scaled(0.5)),
        # tall (L trapezoidal), square, wide (U trapezoidal), batched; pivot order kept fixed by _lu_args
        OpSpec(
            "linalg_lu",
            _lu_factors,
            [((5, 3),), ((3, 3),), ((3, 5),), ((5, 3, 2),), ((3, 3, 2),), ((3, 5, 2, 2),)],
            covers=("lu", "triangular_solve", "concatenate", "slice"),
            make_args=_lu_args,
        ),
        OpSpec(
            "linalg_lstsq",
            _lstsq_all,
            [((4, 3), (4, 2)), ((3, 4), (3, 2)), ((4, 3, 2), (4, 1, 2)), ((4, 3), (4,))],
            covers=("lstsq", "svd"),
            make_args=_shifted(0.5),
        ),
        # rank 2 of 4: the derivative of pinv(a) @ b at fixed rank (finite-difference steps stay
        # far below rcond * s_max, so the rank does not change)
        OpSpec(
            "linalg_lstsq_rank_deficient",
            lambda a, b: la.lstsq(a, b, rcond=1e-3)[0],
            [((5, 4), (5, 2)), ((4, 5), (4, 2)), ((5, 4, 2), (5, 1, 2))],
            covers=("lstsq",),
            make_args=_low_rank(2),
        ),
        OpSpec("linalg_pinv", la.pinv, _TALL_SQUARE_WIDE, covers=("pinv",), make_args=_spectral("svd")),
        OpSpec(
            "linalg_truncated_svd",
            _truncated,
            [((4, 3),), ((3, 5),), ((4, 4, 2),)],
            covers=("svd",),
            make_args=_spectral("svd"),
        ),
        OpSpec(
            "linalg_norm_fro_nuc_2",
            lambda a: (la.norm(a), la.norm(a, "nuc"), la.norm(a, 2), la.norm(a, -2)),
            [((3, 4),), ((4, 3, 2),)],
            covers=("svd",),
            make_args=_spectral("svd"),
        ),
        OpSpec(
            "linalg_norm_vector", lambda a: (la.norm(a, axis=0), la.norm(a, 3, axis=1)), [((3, 4),)], covers=("sum",)
        ),
        OpSpec("linalg_svd_polar", _svd_polar, _TALL_SQUARE_WIDE, covers=("svd",), make_args=_spectral("svd")),
    ]
    + [
        OpSpec(f"linalg_empty_{name}", fn, shapes, covers=cov, make_args=_eye_like)
        for name, fn, shapes, cov in [
            ("svd", _svd_reconstruct, _EMPTY, ("svd",)),
            ("qr", la.qr, _EMPTY, ("qr",)),
            ("eigh", _eigh_functions, _EMPTY_SQUARE, ("eigh",)),
            ("cholesky", la.cholesky, _EMPTY_SQUARE, ("cholesky",)),
            ("inv", la.inv, _EMPTY_SQUARE, ("inv",)),
            ("det", la.det, _EMPTY_SQUARE, ("det",)),
            ("slogdet", la.slogdet, _EMPTY_SQUARE, ("slogdet",)),
            ("expm", la.expm, [((0, 0),)], ("expm",)),
            ("solve", _solve_self, _EMPTY_SQUARE, ("solve",)),
            ("lu", _lu_factors, _EMPTY, ("lu",)),
        ]
    ]
    + [
        OpSpec(
            f"linalg_triangular_solve_{int(lo)}{int(le)}{int(t)}{int(c)}{int(u)}",
            _tri(lo, le, t, c, u),
            [((3, 3), (3, 2) if le else (2, 3)), ((3, 3, 2), (3, 2, 2) if le else (2, 3, 2))],
            covers=("triangular_solve",),
            make_args=_shifted(1.0),
        )
        for lo, le, t, c, u in [
            (True, True, False, False, False),
            (False, True, True, True, False),
            (True, False, False, True, True),
            (False, False, True, False, False),
        ]
    ]
)
