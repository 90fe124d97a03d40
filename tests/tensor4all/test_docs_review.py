"""Defects a review of the documentation's claims found (each test fails on the code before the
fix). Oracles: the free-fermion closed form of the XX chain; NumPy's einsum sizes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import tenferro as tf

import tensor4all as t4a
from tensor4all import models


def _xx_specific_heat(L: int, betas: np.ndarray) -> np.ndarray:
    """C(beta) of the open XX chain (free fermions of hopping 1/2), in closed form."""
    eps = np.linalg.eigvalsh(np.diag(np.full(L - 1, 0.5), 1) + np.diag(np.full(L - 1, 0.5), -1))
    return np.array([np.sum(b**2 * eps**2 * np.exp(b * eps) / (1 + np.exp(b * eps)) ** 2) for b in betas])


@pytest.mark.parametrize("cutoff", [0.0, 1e-300])
def test_thermodynamics_tangent_engine_at_cutoff_zero(cutoff):
    """The default (tangent) engine divided by singular values at the rounding level: C was 8e3
    off at L = 8, beta = 3 (1e9 at L = 10), finite and silent."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        th = t4a.thermodynamics(models.xx(8), 3.0, dbeta=0.25, cutoff=cutoff)
    exact = _xx_specific_heat(8, np.asarray(th.betas))
    np.testing.assert_allclose(np.asarray(th.specific_heat), exact, atol=1e-5)


@pytest.mark.parametrize(("spec", "n"), [("a,b->ab", 2), ("a->aa", 1), ("ab,cd->abcd", 2)])
def test_einsum_of_one_or_two_operands_checks_its_size(spec, n):
    """A one- or two-operand einsum whose result exceeds memory raised NumPy's raw
    _ArrayMemoryError from deep inside (three operands were checked)."""
    if spec == "ab,cd->abcd":
        ops = [tf.ones((400, 400)), tf.ones((400, 400))]  # 25.6e9 entries
    else:
        ops = [tf.ones((10**6,))] * n
    with pytest.raises(tf.TenferroMemoryError):
        tf.einsum(spec, *ops)
