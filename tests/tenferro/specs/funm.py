"""Gradient specs of the matrix functions of tenferro.linalg (funm_hermitian,
sqrtm_psd, logm_pd, powm_psd, polar, sqrtm, logm) at well-conditioned inputs;
exactness at degenerate spectra is tested in tests/tenferro/test_linalg_funm.py."""

from __future__ import annotations

import numpy as np

import tenferro as tf
import tenferro.linalg as la

from . import OpSpec
from .linalg import _pd, _spectral

_SQUARE = [((3, 3),), ((3, 3, 2),)]


def _shifted_general(rng, dtype, shapes):
    """Gaussian plus ``2 n I``: eigenvalues in the right half-plane, well away from 0."""
    (s,) = shapes
    a = rng.standard_normal(s) + (1j * rng.standard_normal(s) if dtype.is_complex else 0)
    n = s[0]
    a = a + 2 * n * np.eye(n).reshape((n, n) + (1,) * (len(s) - 2))
    return [tf.asarray(np.asarray(a, dtype=dtype.numpy))]


def _sin_cubic(w):
    return tf.sin(w) + w * w * w


SPECS = [
    OpSpec(
        "linalg_funm_hermitian",
        lambda a: la.funm_hermitian(a, _sin_cubic),
        _SQUARE,
        covers=("funm_hermitian", "eigh"),
        make_args=_spectral("herm"),
    ),
    OpSpec("linalg_sqrtm_psd", la.sqrtm_psd, _SQUARE, covers=("funm_hermitian",), make_args=_pd),
    OpSpec("linalg_logm_pd", la.logm_pd, _SQUARE, covers=("funm_hermitian",), make_args=_pd),
    OpSpec("linalg_powm_psd", lambda a: la.powm_psd(a, -0.7), [((3, 3),)], covers=("funm_hermitian",), make_args=_pd),
    OpSpec(
        "linalg_polar_right",
        la.polar,
        [((3, 3),), ((4, 3),), ((3, 4, 2),)],
        covers=("funm_hermitian", "svd"),
        make_args=_spectral("svd"),
    ),
    OpSpec(
        "linalg_polar_left",
        lambda a: la.polar(a, "left"),
        [((4, 3),), ((3, 4),)],
        covers=("funm_hermitian", "qr"),
        make_args=_spectral("svd"),
    ),
    OpSpec("linalg_sqrtm", la.sqrtm, _SQUARE, covers=("sqrtm", "sylvester"), make_args=_shifted_general),
    OpSpec("linalg_logm", la.logm, [((3, 3),)], covers=("logm", "logm_frechet"), make_args=_shifted_general),
]
