"""Reviewed defects of tensor4all.spectra: given Chebyshev bounds that miss the spectrum, and the message
for a time step that is not positive. Exact values come from the explicit Heisenberg matrix built here."""

from __future__ import annotations

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all import models

SZ = np.diag([0.5, -0.5])  # spin-1/2 basis: index 0 is up
SP = np.array([[0.0, 1.0], [0.0, 0.0]])
L = 6


def site(op: np.ndarray, i: int) -> np.ndarray:
    return np.kron(np.kron(np.eye(2**i), op), np.eye(2 ** (L - i - 1)))


def heisenberg_matrix() -> np.ndarray:
    return sum(
        site(SZ, i) @ site(SZ, i + 1) + 0.5 * (site(SP, i) @ site(SP.T, i + 1) + site(SP.T, i) @ site(SP, i + 1))
        for i in range(L - 1)
    )


@pytest.fixture(scope="module")
def chain():
    H = models.heisenberg(L, conserve="Sz")
    gs = t4a.dmrg(H, max_bond=32, cutoff=1e-14, tol=1e-12).state
    return H, gs, np.linalg.eigvalsh(heisenberg_matrix())


# ---- 4. given Chebyshev bounds ---------------------------------------------------------------
def test_chebyshev_bounds_that_miss_the_spectrum_are_refused(chain):
    """Before: bounds=(-1, 0) with E0 = -2.49 ran, the moments grew to 4e43 and |S| to 3e41, no error.
    Refused since by the ground energy E0 (which B_c|0> need not reach: test_spectra_fixes_bounds_normalization),
    now by the mean energy <0|Sz_c H Sz_c|0> / <0|Sz_c Sz_c|0> = -1.316 (ED), outside both pairs below."""
    H, gs, e = chain
    Hm = heisenberg_matrix()
    g0 = np.linalg.eigh(Hm)[1][:, 0]
    phi = site(SZ, L // 2) @ g0
    mean = (phi @ Hm @ phi) / (phi @ phi)
    assert not -1.0 <= mean <= 0.0 and not -10.0 <= mean <= -3.0
    with pytest.raises(t4a.InvalidOptionError, match="do not contain the mean energy") as info:
        t4a.spectral_function_chebyshev(H, gs, "Sz", "Sz", n_moments=60, bounds=(-1.0, 0.0))
    assert "wider bounds" in str(info.value)
    assert float(str(info.value).split("<B_c 0|B_c 0> = ")[1].split(" ")[0]) == pytest.approx(mean, abs=1e-8)
    with pytest.raises(t4a.InvalidOptionError, match="do not contain the mean energy"):
        t4a.spectral_function_chebyshev(H, gs, "Sz", "Sz", n_moments=60, bounds=(-10.0, -3.0))


def test_chebyshev_bounds_below_the_top_of_the_spectrum_are_refused(chain):
    """Before: bounds containing E0 but ending at 0, below the highest energies that Sz_c|0> reaches
    (the exact spectrum goes up to 1.25), made the moments grow exponentially with no error."""
    H, gs, e = chain
    assert e[-1] > 1.0
    with pytest.raises(t4a.InvalidOptionError, match=r"Chebyshev moment \d+ grew beyond its bound.*wider bounds"):
        t4a.spectral_function_chebyshev(H, gs, "Sz", "Sz", n_moments=60, bounds=(e[0] - 0.1, 0.0))


def test_chebyshev_bounds_must_be_finite(chain):
    H, gs, _ = chain
    with pytest.raises(t4a.InvalidOptionError, match="finite"):
        t4a.spectral_function_chebyshev(H, gs, "Sz", "Sz", n_moments=10, bounds=(-np.inf, 2.0))


def test_exact_chebyshev_bounds_pass_and_keep_the_sum_rule(chain):
    """Bounds equal to the exact extreme eigenvalues (E_min = E0 up to DMRG's 1e-12) pass the checks, and
    the local spectral weight integrates to <0|Sz_c Sz_c|0> = 1/4 (Jackson kernel: mu_0 is exact)."""
    H, gs, e = chain
    c = L // 2
    S = t4a.spectral_function_chebyshev(
        H, gs, "Sz", "Sz", n_moments=60, bounds=(float(e[0]), float(e[-1])), q=[0.0], cutoff=1e-14, max_bond=64
    )
    mu = S.details["moments"]
    assert np.max(np.abs(mu)) <= abs(mu[0, c]) * (1 + 1e-8) + 1e-12  # |mu_n(x)| <= ||Sz_x 0|| ||Sz_c 0|| = 1/4
    assert mu[0, c].real == pytest.approx(0.25, abs=1e-9)


# ---- 5. the message for a time step that is not positive --------------------------------------
@pytest.mark.parametrize("dt", [-0.1, 0.0])
def test_dynamical_correlation_dt_message_says_positive(chain, dt):
    """Before: dt=-0.1 said "must be >= 0" although 0 is refused too."""
    H, gs, _ = chain
    with pytest.raises(t4a.InvalidOptionError, match=r"dt must be positive \(> 0") as info:
        t4a.dynamical_correlation(H, gs, "Sz", "Sz", t_final=0.2, dt=dt)
    assert ">= 0" not in str(info.value)


def test_time_window_messages_say_positive(chain):
    """Before: t_final=-0.2 and window_resolution(t_final=-1) said "must be >= 0" (0 is refused too)."""
    H, gs, _ = chain
    with pytest.raises(t4a.InvalidOptionError, match=r"t_final must be positive \(> 0") as info:
        t4a.dynamical_correlation(H, gs, "Sz", "Sz", t_final=-0.2, dt=0.1)
    assert ">= 0" not in str(info.value)
    with pytest.raises(t4a.InvalidOptionError, match=r"t_final must be positive \(> 0\), got -1.0"):
        t4a.window_resolution("hann", -1.0)
