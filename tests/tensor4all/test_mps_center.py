"""``MPS.center``: the orthogonality centre a state knows, checked on its dense site arrays."""

from __future__ import annotations

import numpy as np
import pytest

from tensor4all import MPS


def _sites(psi: MPS) -> list[np.ndarray]:
    return [np.asarray(t) for t in psi.dense().tensors]


def _is_centered(ts: list[np.ndarray], center: int) -> bool:
    """Sites left of ``center`` left-orthonormal, right of it right-orthonormal (explicit sums)."""
    for i, a in enumerate(ts):
        dl, d, dr = a.shape
        if i < center:
            m = a.reshape(dl * d, dr)
            if not np.allclose(m.conj().T @ m, np.eye(dr), atol=1e-12):
                return False
        elif i > center:
            m = a.reshape(dl, d * dr)
            if not np.allclose(m @ m.conj().T, np.eye(dl), atol=1e-12):
                return False
    return True


@pytest.mark.parametrize("conserve", [None, "Sz"])
def test_random_state_knows_its_centre(conserve: str | None) -> None:
    psi = MPS.random(8, 2, bond_dim=6, seed=3, conserve=conserve)
    assert psi.center == 0
    assert _is_centered(_sites(psi), 0)
    assert np.isclose(float(psi.norm()), 1.0, atol=1e-12)


@pytest.mark.parametrize("conserve", [None, "Sz"])
def test_canonicalize_moves_the_centre(conserve: str | None) -> None:
    psi = MPS.random(7, 2, bond_dim=5, seed=1, conserve=conserve)
    psi.canonicalize(4)
    assert psi.center == 4
    ts = _sites(psi)
    assert _is_centered(ts, 4)
    assert not _is_centered(ts, 0)  # the check can fail: site 4 holds the weights now


def test_a_state_of_unknown_form_has_no_centre() -> None:
    rng = np.random.default_rng(0)
    psi = MPS([rng.standard_normal(s) for s in [(1, 2, 3), (3, 2, 3), (3, 2, 1)]])
    assert psi.center is None


def test_norm_of_a_centred_symmetric_state_equals_the_full_contraction() -> None:
    psi = MPS.random(9, 2, bond_dim=6, seed=4, conserve="Sz")
    psi.canonicalize(5)
    scaled = psi * 3.0  # a new state: its centre is not known, the norm contracts the chain
    assert scaled.center is None
    full = np.linalg.norm(psi.dense().to_dense())
    assert np.isclose(float(psi.norm()), full, rtol=1e-13)
    assert np.isclose(float(scaled.norm()), 3.0 * full, rtol=1e-13)
