"""Reviewed defects of the infinite systems (tensor4all.infinite): gauge-rotated start states of
iTEBD, non-Hermitian Hamiltonians, keywords that do not apply, flags, typed errors, the checks of
the iMPS constructor and of the transfer-matrix measurements, and mixed local spaces."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate

import tensor4all as t4a
from tensor4all import infinite as inf
from tensor4all.operators.opsum import OpSum

PAULI_X = np.array([[0.0, 1.0], [1.0, 0.0]])
PAULI_Z = np.diag([1.0, -1.0])


def tfim_energy(g: float) -> float:
    """Exact energy per site of ``-sum Z Z - g sum X``: ``-(1/pi) int_0^pi sqrt(1 + g^2 - 2 g cos k) dk``."""
    return -scipy.integrate.quad(lambda k: np.sqrt(1 + g * g - 2 * g * np.cos(k)), 0, np.pi)[0] / np.pi


def random_unitary(D: int, seed: int) -> np.ndarray:
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((D, D)))
    return q


def rotated(psi: t4a.iMPS, U: np.ndarray, V: np.ndarray) -> t4a.iMPS:
    """The same state (one-site cell) in another gauge: ``AL -> U^T AL U``, ``AR -> V^T AR V``, ``C -> U^T C V``."""
    AL = [np.einsum("ab,bsc,cd->asd", U.T, psi.AL[0], U)]
    AR = [np.einsum("ab,bsc,cd->asd", V.T, psi.AR[0], V)]
    return t4a.iMPS(AL, AR, [U.T @ psi.C[0] @ V], psi.local)


def pauli_field(g: float) -> t4a.InfiniteMPO:
    """``H = -g sum X`` on Pauli sites."""
    os = OpSum()
    os += (-g, "X", 0)
    return t4a.InfiniteMPO.from_opsum(os, 1, "pauli")


# ---- 1. iTEBD from a start whose C is not diagonal ---------------------------------------------
def test_itebd_from_a_gauge_rotated_product_state_follows_the_exact_precession():
    """Before, itebd took |diag(C)| as the Schmidt values: for the spin-up product state written
    with D = 2 in a rotated gauge (C = U^T diag(1, 0) V) it measured and evolved the wrong state.
    Under H = -g sum X the exact <Z(t)> = cos(2 g t) from spin up."""
    A = np.zeros((2, 2, 2))
    A[0, 0, 0] = 1.0  # the state: spin up (Z = +1) on the Schmidt direction of weight 1
    A[1, 1, 1] = 1.0  # an isometric completion of weight 0
    U, V = random_unitary(2, 1), random_unitary(2, 2)
    AL = [np.einsum("ab,bsc,cd->asd", U.T, A, U)]
    AR = [np.einsum("ab,bsc,cd->asd", V.T, A, V)]
    psi = t4a.iMPS(AL, AR, [U.T @ np.diag([1.0, 0.0]) @ V], "pauli")
    assert np.abs(psi.C[0] - np.diag(np.diag(psi.C[0]))).max() > 0.1  # the start's C is far from diagonal
    g = 0.7
    res = t4a.itebd(pauli_field(g), psi, 1.0, 0.05, observables={"Z": "Z"})
    np.testing.assert_allclose(res.expectations["Z"], np.cos(2 * g * res.times)[:, None] * np.ones((1, 2)), atol=1e-10)


def test_itebd_measures_a_gauge_rotated_ground_state_at_t0():
    """Before, <X> at t = 0 of a gauge-rotated TFIM state was 0.0128 instead of 0.8773 (t10). The
    reference is contracted by hand from the gauge-invariant A_C = A_L C of the rotated tensors."""
    H = t4a.infinite_model("tfim", g=1.5)
    psi = t4a.vumps(H, max_bond=6, tol=1e-10, seed=1).state
    D = psi.bond_dims[0]
    g = rotated(psi, random_unitary(D, 0), random_unitary(D, 3))
    AC = np.tensordot(g.AL[0], g.C[0], (2, 0))
    x_exact = np.einsum("asb,st,atb->", AC.conj(), PAULI_X, AC).real
    assert x_exact > 0.8
    res = t4a.itebd(H, g, 0.05, 0.05, max_bond=64, cutoff=1e-15, observables={"X": "X"})
    np.testing.assert_allclose(res.expectations["X"][0], [x_exact, x_exact], atol=1e-12)
    ref = t4a.itebd(H, psi, 0.05, 0.05, max_bond=64, cutoff=1e-15, observables={"X": "X"})
    np.testing.assert_allclose(res.expectations["X"], ref.expectations["X"], atol=1e-10)


# ---- 2. non-Hermitian Hamiltonians -------------------------------------------------------------
def _non_hermitian() -> t4a.InfiniteMPO:
    os = OpSum()
    os += (-1.0, "Z", 0, "Z", 1)
    os += (1.5j, "X", 0)
    return t4a.InfiniteMPO.from_opsum(os, 1, "pauli")


@pytest.mark.parametrize(
    "call",
    [
        lambda H: t4a.vumps(H, max_bond=4, max_iter=2),
        lambda H: t4a.idmrg(H, max_bond=4, sweeps=1),
        lambda H: t4a.itebd(H, t4a.iMPS.product_state([0], local="pauli"), 0.1, 0.1, imaginary=True),
        lambda H: t4a.itebd(H, t4a.iMPS.product_state([0], local="pauli"), 0.1, 0.1),
        lambda H: t4a.itdvp(H, t4a.iMPS.product_state([0], local="pauli"), 0.1, 0.1, max_bond=2),
        lambda H: t4a.itdvp(H, t4a.iMPS.product_state([0], local="pauli"), 0.1, 0.1, max_bond=2, imaginary=True),
    ],
    ids=["vumps", "idmrg", "itebd-imaginary", "itebd-real", "itdvp-real", "itdvp-imaginary"],
)
def test_non_hermitian_hamiltonian_is_refused(call):
    """Before, -Z0 Z1 + 1.5i X0 ran silently (vumps returned e = 0.0238, idmrg -1.0, imaginary-time
    itebd -0.61): the finite dmrg and real-time tebd/tdvp refuse such an H."""
    with pytest.raises(t4a.NonHermitianError, match="Hermitian"):
        call(_non_hermitian())


def test_complex_hermitian_hamiltonians_pass_the_check():
    """A complex but Hermitian H (the TFIM with its field along Y, unitarily equivalent to the one
    along X) runs, and a Hermitian pair of terms crossing the cell boundary is recognized."""
    os = OpSum()
    os += (-1.0, "Z", 0, "Z", 1)
    os += (-1.5, "Y", 0)
    H = t4a.InfiniteMPO.from_opsum(os, 1, "pauli")
    assert abs(t4a.vumps(H, max_bond=8, tol=1e-8, seed=1).energy - tfim_energy(1.5)) < 1e-8
    pair = OpSum()
    pair += (0.5, "S+", 1, "S-", 2)
    pair += (0.5, "S-", 1, "S+", 2)
    pair += (0.5, "S+", 0, "S-", 1)
    pair += (0.5, "S-", 0, "S+", 1)
    psi = t4a.iMPS.product_state([0, 1])
    t4a.itebd(t4a.InfiniteMPO.from_opsum(pair, 2), psi, 0.0, 0.1)  # no error
    half = OpSum()
    half += (0.5, "S+", 1, "S-", 2)
    half += (0.5, "S-", 0, "S+", 1)
    with pytest.raises(t4a.NonHermitianError):
        t4a.itebd(t4a.InfiniteMPO.from_opsum(half, 2), psi, 0.0, 0.1)


# ---- 3. keywords that do not apply to the model -----------------------------------------------
@pytest.mark.parametrize(
    "name, kwargs, word", [("xx", {"Jz": 1.0}, "Jz"), ("tfim", {"spin": "1"}, "spin"), ("j1j2", {"spin": "1"}, "spin")]
)
def test_infinite_model_refuses_keywords_that_do_not_apply(name, kwargs, word):
    """Before, infinite_model("xx", Jz=1.0) dropped Jz, and tfim and j1j2 ignored spin="1"."""
    with pytest.raises(t4a.InvalidOptionError, match=word) as e:
        t4a.infinite_model(name, **kwargs)
    assert repr(name) in str(e.value)
    assert t4a.infinite_model("heisenberg", spin="1").local == "spin-1"  # where spin applies, it still works


# ---- 4. non-bool flags -------------------------------------------------------------------------
@pytest.mark.parametrize("evolve", [t4a.itebd, t4a.itdvp], ids=["itebd", "itdvp"])
def test_imaginary_must_be_a_bool(evolve):
    """Before, imaginary="no" ran imaginary time (a non-empty string is true)."""
    H = t4a.infinite_model("tfim", g=1.5)
    with pytest.raises(t4a.Tensor4allTypeError, match="imaginary must be True or False"):
        evolve(H, t4a.iMPS.product_state([0], local="pauli"), 0.1, 0.1, imaginary="no")


# ---- 5. typed errors for bad arguments ---------------------------------------------------------
@pytest.fixture(scope="module")
def tfim_state():
    return t4a.vumps(t4a.infinite_model("tfim", g=1.5), max_bond=8, tol=1e-8, seed=1).state


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda psi: inf.expect(psi, "Z", 0.5), t4a.Tensor4allTypeError),
        (lambda psi: inf.expect(psi, "Z", "a"), t4a.Tensor4allTypeError),
        (lambda psi: inf.correlation(psi, "Z", "Z", 3, site=0.5), t4a.Tensor4allTypeError),
        (lambda psi: inf.structure_factor(psi, "Z", "a"), t4a.Tensor4allTypeError),
        (lambda psi: t4a.iMPS.from_tensors([np.zeros((2, 2, 2))]), t4a.ZeroNormError),
        (
            lambda psi: t4a.itebd(t4a.infinite_model("tfim", g=1.5), psi, 0.1, 0.1, observables=["X"]),
            t4a.Tensor4allTypeError,
        ),
        (
            lambda psi: t4a.itdvp(t4a.infinite_model("tfim", g=1.5), psi, 0.1, 0.1, observables=["X"]),
            t4a.Tensor4allTypeError,
        ),
    ],
    ids=["expect-site-float", "expect-site-str", "correlation-site", "sf-q-str", "zero-cell", "itebd-obs", "itdvp-obs"],
)
def test_bad_arguments_raise_typed_errors(tfim_state, call, error):
    """Before, these raised bare TypeError or ValueError (list indices, string formatting, float
    conversion, LAPACK's "array must not contain infs or NaNs", dict update)."""
    with pytest.raises(error) as e:
        call(tfim_state)
    assert isinstance(e.value, t4a.Tensor4allError)


# ---- 6. the iMPS constructor checks its tensors ------------------------------------------------
def test_imps_constructor_checks_shapes_values_and_the_canonical_form(tfim_state):
    """Before, iMPS(AL, AR, C, local) took anything: bond dimensions that do not match (then a bare
    ValueError in expect), NaN, and a non-isometric cell (<Id> = 3.47)."""
    with pytest.raises(t4a.DimensionMismatchError, match="shape"):
        t4a.iMPS([np.ones((2, 2, 2))], [np.ones((2, 2, 2))], [np.eye(3)], "pauli")
    with pytest.raises(t4a.NonFiniteError):
        t4a.iMPS([np.full((1, 2, 1), np.nan)], [np.ones((1, 2, 1))], [np.ones((1, 1))])
    A = np.random.default_rng(0).normal(size=(2, 2, 2))
    with pytest.raises(t4a.InvalidOptionError, match="left-isometric AL"):
        t4a.iMPS([A], [A], [np.eye(2) / np.sqrt(2)], "pauli")
    psi = tfim_state
    with pytest.raises(t4a.InvalidOptionError, match="unit norm"):
        t4a.iMPS(psi.AL, psi.AR, [2 * psi.C[0]], "pauli")
    with pytest.raises(t4a.InvalidOptionError, match="AL C"):  # a valid AL and AR of another C
        t4a.iMPS(psi.AL, psi.AR, [np.eye(psi.bond_dims[0]) / np.sqrt(psi.bond_dims[0])], "pauli")
    # a gauge-rotated state is a valid one: its <X> is the hand-contracted one
    g = rotated(psi, random_unitary(psi.bond_dims[0], 5), random_unitary(psi.bond_dims[0], 6))
    AC = np.tensordot(psi.AL[0], psi.C[0], (2, 0))
    assert abs(inf.expect(g, "X") - np.einsum("asb,st,atb->", AC.conj(), PAULI_X, AC).real) < 1e-12


# ---- 7. NaN and non-Hermitian operators in measurements ---------------------------------------
def test_measurements_refuse_nan_and_non_hermitian_operators(tfim_state):
    """Before, expect with a NaN matrix returned nan, structure_factor at q = nan returned [nan],
    and structure_factor took the non-Hermitian [[0, 1], [0, 0]] its docstring excludes."""
    psi = tfim_state
    with pytest.raises(t4a.NonFiniteError):
        inf.expect(psi, np.full((2, 2), np.nan))
    with pytest.raises(t4a.NonFiniteError):
        inf.structure_factor(psi, "Z", float("nan"))
    with pytest.raises(t4a.NonHermitianError):
        inf.structure_factor(psi, [[0, 1], [0, 0]], 0.0)
    # a Hermitian matrix still works: S(q) of Z at q = pi of the product state |up up ...> is 0
    up = t4a.iMPS.product_state([0], local="pauli")
    np.testing.assert_allclose(inf.structure_factor(up, PAULI_Z, [0.0, np.pi], r_max=5), [0.0, 0.0], atol=1e-14)


# ---- 8. the state's and the MPO's local spaces -------------------------------------------------


# ---- energy_per_site: the state's local space against the MPO's ------------------------------
def test_energy_per_site_refuses_a_fermion_mpo_on_a_spin_state():
    """A spinless-fermion MPO (basis empty, occupied) on a spin-1/2 state (up, down) has one local
    dimension and another basis: the energy was computed without a word. Spaces of one kind
    (spin-1/2 and pauli: both up, down) still mix."""
    os = OpSum()
    os += (1.0, "N", 0)  # <n> of the fermion basis state 1
    H_f = t4a.InfiniteMPO.from_opsum(os, 1, "fermion")
    up = inf.iMPS.product_state([0])  # spin-1/2 up
    with pytest.raises(t4a.DimensionMismatchError, match="'spin-1/2', the MPO on 'fermion'"):
        inf.energy_per_site(up, H_f)
    empty = inf.iMPS.product_state([0], "fermion")
    assert inf.energy_per_site(empty, H_f) == 0.0
    assert inf.energy_per_site(inf.iMPS.product_state([1], "fermion"), H_f) == 1.0
    assert inf.energy_per_site(up, pauli_field(0.5)) == 0.0  # <X> of up: 0; pauli and spin-1/2 mix


def test_energy_per_site_checks_every_site_of_the_cell():
    """Only the first site's dimension was compared with the MPO's: a two-site cell of a spin-1/2
    and a spin-1 site against a spin-1/2 MPO."""
    A = np.zeros((1, 2, 1))
    A[0, 0, 0] = 1.0
    B = np.zeros((1, 3, 1))
    B[0, 0, 0] = 1.0
    psi = inf.iMPS([A, B], [A, B], [np.ones((1, 1)), np.ones((1, 1))])
    with pytest.raises(t4a.DimensionMismatchError, match=r"local dimensions \[2, 3\]"):
        inf.energy_per_site(psi, pauli_field(0.5))
