"""Every evolution method keeps the norm of a state that is not normalized (issue 47: the
charge-conserving TDVP squared it): TDVP (two-site, one-site) and TEBD, dense and conserved,
real and imaginary time, checked against the explicit Hamiltonian matrix exponentiated here."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg

import tensor4all as t4a
from tensor4all import models

L, T, DT = 6, 0.2, 0.05
SX = np.array([[0, 0.5], [0.5, 0]])
SY = np.array([[0, -0.5j], [0.5j, 0]])
SZ = np.diag([0.5, -0.5])


def _heisenberg_matrix() -> np.ndarray:
    """``sum_i S_i . S_{i+1}`` from Kronecker products (site 0 most significant, state 0 up)."""

    def site(op, i):
        return np.kron(np.kron(np.eye(2**i), op), np.eye(2 ** (L - i - 1)))

    return sum(site(op, i) @ site(op, i + 1) for i in range(L - 1) for op in (SX, SY, SZ))


def _vector(psi: t4a.MPS) -> np.ndarray:
    return np.asarray((psi.dense() if psi.symmetric else psi).to_dense()).reshape(-1)


def _start(conserve: str | None, scale: float, spread: bool) -> t4a.MPS:
    """Neel state times ``scale``; for TDVP (exact only on full bonds) first spread by a
    two-site evolution so that its bonds are full in the sector and the TDVP projection is exact."""
    psi = t4a.MPS.product_state([0, 1] * (L // 2), conserve=conserve)
    if spread:
        psi = t4a.tdvp(models.heisenberg(L, conserve=conserve), psi, 1.0, 0.5, max_bond=64, cutoff=0.0).state
        psi = psi.normalize()
    return psi * scale


def _evolve(method: str, conserve: str | None, psi: t4a.MPS, imaginary: bool) -> t4a.MPS:
    H = models.heisenberg(L, conserve=conserve)
    kw = dict(max_bond=64, cutoff=0.0, imaginary=imaginary, normalize=False)
    if method == "tebd":
        return t4a.tebd(H, psi, T, DT / 5, order=4, **kw).state
    return t4a.tdvp(H, psi, T, DT, two_site=(method == "tdvp2"), **kw).state


@pytest.mark.parametrize("imaginary", [False, True], ids=["real", "imag"])
@pytest.mark.parametrize("scale", [0.5, 2.0, 3.0])
@pytest.mark.parametrize("conserve", [None, "Sz"], ids=["dense", "Sz"])
@pytest.mark.parametrize("method", ["tdvp2", "tdvp1", "tebd"])
def test_an_unnormalized_state_keeps_its_norm(method, conserve, scale, imaginary):
    psi = _start(conserve, scale, method != "tebd")
    v0 = _vector(psi)
    assert np.linalg.norm(v0) == pytest.approx(scale, rel=1e-12)
    H = _heisenberg_matrix()
    exact = scipy.linalg.expm((-T if imaginary else -1j * T) * H) @ v0
    out = _evolve(method, conserve, psi, imaginary)
    assert out.symmetric == (conserve is not None)
    assert float(out.norm()) == pytest.approx(np.linalg.norm(exact), rel=1e-8)
    # the state itself, not only its norm (TEBD: fourth-order Trotter error of dt = 0.01)
    np.testing.assert_allclose(_vector(out), exact, atol=1e-7 * scale)


@pytest.mark.parametrize("conserve", [None, "Sz"], ids=["dense", "Sz"])
def test_one_site_tdvp_from_a_product_state_warns_that_it_stays_one(conserve):
    H = models.heisenberg(L, conserve=conserve)
    psi = t4a.MPS.product_state([0, 1] * (L // 2), conserve=conserve)
    with pytest.warns(t4a.FrozenBondsWarning, match="stays a product state"):
        res = t4a.tdvp(H, psi, 0.1, 0.05, two_site=False)
    assert res.state.bond_dims == [1] * (L - 1)  # what the warning says
    with warnings.catch_warnings():
        warnings.simplefilter("error", t4a.FrozenBondsWarning)
        t4a.tdvp(H, psi, 0.1, 0.05)  # two-site: the bonds grow, no warning
        t4a.tdvp(H, _start(conserve, 1.0, True), 0.1, 0.05, two_site=False)  # full bonds: none
        # the only state of its sector (all up) is a product state with full bonds: none
        up = t4a.MPS.product_state([0] * L, conserve=conserve)
        if conserve is not None:
            t4a.tdvp(H, up, 0.1, 0.05, two_site=False)
