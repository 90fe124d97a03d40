"""Bad-input rows of tenferro.linalg: every function on integer, vector, NaN, inf and str input; options; domains."""

from __future__ import annotations

import numpy as np

import tenferro as tf
import tenferro.linalg as la

from .common import I2, INFM, NANM, F, M, new_table

ROWS, row = new_table()


# ---- tenferro.linalg: every function x (integer input, vector input, NaN, inf, str) ----------
LINALG_1 = {
    "svd": la.svd,
    "svdvals": la.svdvals,
    "truncated_svd": lambda a: la.truncated_svd(a, max_rank=1),
    "qr": la.qr,
    "lq": la.lq,
    "eigh": la.eigh,
    "eigvalsh": la.eigvalsh,
    "eig": la.eig,
    "eigvals": la.eigvals,
    "cholesky": la.cholesky,
    "lu": la.lu,
    "inv": la.inv,
    "pinv": la.pinv,
    "det": la.det,
    "slogdet": la.slogdet,
    "expm": la.expm,
    "solve": lambda a: la.solve(a, tf.ones((2,))),
    "triangular_solve": lambda a: la.triangular_solve(a, tf.ones((2, 1))),
    "lstsq": lambda a: la.lstsq(a, tf.ones((2,))),
    "expm_frechet": lambda a: la.expm_frechet(a, tf.ones((2, 2))),
    "funm_hermitian": lambda a: la.funm_hermitian(a, tf.exp),
    "sqrtm_psd": la.sqrtm_psd,
    "logm_pd": la.logm_pd,
    "powm_psd": lambda a: la.powm_psd(a, 0.5),
    "polar": la.polar,
    "sqrtm": la.sqrtm,
    "logm": la.logm,
}
for name, fn in LINALG_1.items():
    row(f"linalg-{name}-int", fn, (I2,), la.LinalgDTypeError, "must be float32/64 or complex64/128")
    row(f"linalg-{name}-nan", fn, (NANM,), la.NonFiniteError, "contains NaN or inf")
    row(f"linalg-{name}-inf", fn, (INFM,), la.NonFiniteError, "contains NaN or inf")
    row(f"linalg-{name}-str", fn, ("a",), tf.TenferroTypeError, "expected a Tensor")
    if name not in ("solve", "triangular_solve", "lstsq", "expm_frechet"):
        row(f"linalg-{name}-vector", fn, (F,), la.LinalgShapeError, "must be a matrix")
row("linalg-norm-nan", la.norm, (NANM,), la.NonFiniteError, "contains NaN or inf")
row("linalg-norm-ord-nan", la.norm, (M, float("nan")), tf.TenferroValueError, "invalid ord nan")
row("linalg-norm-vector-ord-nan", la.norm, (F, float("nan")), tf.TenferroValueError, "ord is NaN")
row("linalg-norm-ord-str", la.norm, (M, "abc"), tf.TenferroValueError, "invalid ord 'abc'")
for bad in (float("nan"), -1.0, float("inf"), "a"):
    row(f"pinv-rtol-{bad!r}", la.pinv, (M,), tf.TenferroValueError, "rtol must be", rtol=bad)
    row(f"lstsq-rcond-{bad!r}", la.lstsq, (M, F), tf.TenferroValueError, "rcond must be", rcond=bad)
    row(
        f"truncated_svd-cutoff-{bad!r}",
        la.truncated_svd,
        (M,),
        tf.TenferroValueError,
        "cutoff (the discarded weight) must be",
        cutoff=bad,
    )
for bad in (2.5, 0, -1, "2", True):
    row(
        f"truncated_svd-max_rank-{bad!r}",
        la.truncated_svd,
        (M,),
        tf.TenferroValueError,
        "max_rank must be",
        max_rank=bad,
    )
row("solve-int-matrix", la.solve, (I2, tf.ones((2,))), la.LinalgDTypeError, "must be float")
row("solve-singular", la.solve, (tf.zeros((2, 2)), tf.ones((2,))), la.SingularMatrixError, "singular")
row("inv-singular", la.inv, (tf.zeros((2, 2)),), la.SingularMatrixError, "singular")
row("cholesky-indefinite", la.cholesky, (tf.asarray(-np.eye(2)),), la.NonPositiveDefiniteError, "positive definite")
row("lstsq-rows", la.lstsq, (M, tf.ones((2,))), la.LinalgShapeError, "rows")
row("solve-square", la.solve, (tf.ones((2, 3)), tf.ones((2,))), la.LinalgShapeError, "square")
row("settings-gauge", lambda: la.settings(gauge="loud").__enter__(), (), tf.TenferroValueError, "gauge must be")
NEG = tf.asarray(np.diag([1.0, -1.0]))
row("sqrtm_psd-negative", la.sqrtm_psd, (NEG,), la.DomainError, "positive semidefinite")
row("powm_psd-negative", la.powm_psd, (NEG, 0.5), la.DomainError, "positive semidefinite")
row("logm_pd-singular", la.logm_pd, (tf.asarray(np.diag([1.0, 0.0])),), la.DomainError, "positive definite")
row("funm_hermitian-log-negative", la.funm_hermitian, (NEG, tf.log), la.DomainError, "not finite")
row("funm_hermitian-not-callable", la.funm_hermitian, (M, 2.0), tf.TenferroTypeError, "must be a callable")
row("powm_psd-p-str", la.powm_psd, (M, "2"), tf.TenferroValueError, "p must be a finite real number")
row("powm_psd-p-nan", la.powm_psd, (M, float("nan")), tf.TenferroValueError, "p must be a finite real number")
row("polar-side", la.polar, (M,), tf.TenferroValueError, "side must be", side="up")
row("sqrtm-real-negative", la.sqrtm, (NEG,), la.DomainError, "not real")
row("logm-real-negative", la.logm, (NEG,), la.DomainError, "not real")
row("logm-singular", la.logm, (tf.asarray(np.diag([1.0, 0.0])),), la.DomainError, "singular")
row(
    "sqrtm-nilpotent",
    la.sqrtm,
    (tf.asarray(np.array([[0.0, 1.0], [0.0, 0.0]])),),
    la.DomainError,
    "no finite principal square root",
)
