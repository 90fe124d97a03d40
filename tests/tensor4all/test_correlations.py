"""Operator products, string operators and correlation matrices of an MPS (``MPS.expect``,
``MPS.correlation``, ``MPS.correlation_matrix``) against exact values computed here.

Every reference is a dense state vector (the vector an MPS was built from, or its site tensors
contracted here with NumPy) and explicit Kronecker-product operators. Fermions are written out
by hand: ``n`` modes with annihilators ``c_m = Z x ... x Z x a x 1 x ...`` (``Z = diag(1, -1)``
on the modes before ``m``), spinless sites one mode each, ``"electron"`` sites the modes
``(j up, j dn)`` in that order, the per-site basis permuted from ``(n_up, n_dn)`` to tensor4all's
``|0>, |up>, |dn>, |up dn>``. No library operator matrix enters a reference.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
import tensor4all as t4a
from tensor4all import MPS
from tidu.testing import check_grads

# ---- explicit matrices ----------------------------------------------------------------------------
SP = np.array([[0.0, 1.0], [0.0, 0.0]])
SPIN_HALF = {
    "Sz": np.diag([0.5, -0.5]),
    "S+": SP,
    "S-": SP.T,
    "Sx": 0.5 * (SP + SP.T),
    "Sy": -0.5j * (SP - SP.T),
    "Id": np.eye(2),
}
R2 = np.sqrt(2.0)
SP1 = np.array([[0.0, R2, 0.0], [0.0, 0.0, R2], [0.0, 0.0, 0.0]])
SPIN_ONE = {"Sz": np.diag([1.0, 0.0, -1.0]), "S+": SP1, "S-": SP1.T, "Sx": 0.5 * (SP1 + SP1.T), "Id": np.eye(3)}
A = np.array([[0.0, 1.0], [0.0, 0.0]])  # one mode: |1> -> |0>
Z = np.diag([1.0, -1.0])


def _kron(ops: dict[int, np.ndarray], dims: list[int]) -> np.ndarray:
    """``prod_k ops[k]`` (identity elsewhere) as a matrix in np.kron order (site 0 most significant)."""
    m = np.ones((1, 1))
    for k, d in enumerate(dims):
        m = np.kron(m, ops.get(k, np.eye(d)))
    return m


def _vector(psi: MPS) -> np.ndarray:
    """The state contracted here from its site tensors (symmetric sites made dense first)."""
    v = np.ones((1, 1))
    for t in psi.tensors:
        a = np.asarray(t.to_dense() if psi.symmetric else t)
        v = np.einsum("na,asb->nsb", v, a).reshape(-1, a.shape[2])
    return v.reshape(-1)


def _mean(v: np.ndarray, op: np.ndarray) -> complex:
    return complex(np.vdot(v, op @ v) / np.vdot(v, v))


def _random_vector(n: int, seed: int, complex_: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(n) + (1j * rng.standard_normal(n) if complex_ else 0.0)
    return v / np.linalg.norm(v)


def _modes(n: int) -> list[np.ndarray]:
    """The annihilators of ``n`` fermionic modes, Jordan-Wigner written out (mode 0 first)."""
    return [_kron({**{k: Z for k in range(m)}, m: A}, [2] * n) for m in range(n)]


def _spinless(L: int) -> dict[str, list[np.ndarray]]:
    """Name -> the operator of every site, as fermions (``"fermion"`` sites: ``|0>, |1>``)."""
    c = _modes(L)
    n = [x.T @ x for x in c]
    return {"C": c, "Cdag": [x.T for x in c], "N": n, "F": [np.eye(2**L) - 2 * x for x in n]}


def _electrons(L: int) -> dict[str, list[np.ndarray]]:
    """Name -> the operator of every ``"electron"`` site, from ``2L`` modes ``(0 up, 0 dn, 1 up, ...)``
    and the basis change ``|0>, |up>, |dn>, |up dn>`` <- ``(n_up, n_dn)``."""
    occupation = [(0, 0), (1, 0), (0, 1), (1, 1)]  # tensor4all's site basis as (n_up, n_dn)
    P = np.zeros((4**L, 4**L))
    for idx in range(4**L):
        digits = [(idx // 4 ** (L - 1 - j)) % 4 for j in range(L)]
        bits = [b for dgt in digits for b in occupation[dgt]]
        P[idx, sum(b << (2 * L - 1 - m) for m, b in enumerate(bits))] = 1.0
    c = [P @ x @ P.T for x in _modes(2 * L)]
    up, dn = c[0::2], c[1::2]
    nup, ndn = [x.T @ x for x in up], [x.T @ x for x in dn]
    one = np.eye(4**L)
    return {
        "Cup": up,
        "Cdn": dn,
        "Cdagup": [x.T for x in up],
        "Cdagdn": [x.T for x in dn],
        "Nup": nup,
        "Ndn": ndn,
        "Ntot": [a + b for a, b in zip(nup, ndn)],
        "F": [(one - 2 * a) @ (one - 2 * b) for a, b in zip(nup, ndn)],
    }


def _electron_state(symmetric: bool, L: int, bond_dim: int, seed_mps: int, seed_vector: int) -> tuple[MPS, np.ndarray]:
    """A complex state of ``L`` electron sites and its vector: a random MPS in the sector N = 3
    (symmetric), or the MPS of a random vector (dense)."""
    if symmetric:
        psi = MPS.random(L, d=4, bond_dim=bond_dim, seed=seed_mps, charge=3, local="electron", dtype=tf.complex128)
        return psi, _vector(psi)
    v = _random_vector(4**L, seed_vector, True)
    return MPS.from_dense(v, L, d=4), v


def _named(ops: dict[str, list[np.ndarray]], product: str, site: int) -> np.ndarray:
    """A product ``"A*B"`` of named operators at ``site`` as one matrix (written order)."""
    out = None
    for name in product.split("*"):
        m = ops[name][site]
        out = m if out is None else out @ m
    return out


def _exact_pair(ops: dict[str, list[np.ndarray]], a: str, b: str, i: int, j: int, string: str | None = None):
    """``A_i (prod_{min<k<max} S_k) B_j`` of physical (fermionic or not) operators."""
    m = _named(ops, a, i)
    if string is not None:
        for k in range(min(i, j) + 1, max(i, j)):
            m = m @ _named(ops, string, k)
    return m @ _named(ops, b, j)


def _c(x) -> complex:
    return complex(np.asarray(x))


# ---- the named string operator ----------------------------------------------------------------------
def test_exp_i_pi_sz_is_the_exponential_of_sz():
    for space, sz in (("spin-1/2", SPIN_HALF["Sz"]), ("spin-1", SPIN_ONE["Sz"])):
        np.testing.assert_allclose(
            t4a.local_space(space).matrix("exp(i pi Sz)"), scipy.linalg.expm(1j * np.pi * sz), atol=1e-15
        )


# ---- products at one site ---------------------------------------------------------------------------
SPIN_PRODUCTS = [
    ("Sx*Sz", SPIN_HALF["Sx"] @ SPIN_HALF["Sz"]),
    (" S- * S+ ", SPIN_HALF["S-"] @ SPIN_HALF["S+"]),
    (["S+", "S-"], SPIN_HALF["S+"] @ SPIN_HALF["S-"]),
    ("Sy*Sy", SPIN_HALF["Sy"] @ SPIN_HALF["Sy"]),
    ([np.diag([2.0, 3.0]), "Sx"], np.diag([2.0, 3.0]) @ SPIN_HALF["Sx"]),
    (("Sz", "Sx", "Sz"), SPIN_HALF["Sz"] @ SPIN_HALF["Sx"] @ SPIN_HALF["Sz"]),
]


@settings(max_examples=25, deadline=None)
@given(
    site=st.integers(0, 4), k=st.integers(0, len(SPIN_PRODUCTS) - 1), seed=st.integers(0, 10**6), complex_=st.booleans()
)
def test_expect_of_a_product_is_the_matrix_product(site, k, seed, complex_):
    op, m = SPIN_PRODUCTS[k]
    v = _random_vector(2**5, seed, complex_)
    psi = MPS.from_dense(v, 5)
    assert _c(psi.expect(op, site)) == pytest.approx(_mean(v, _kron({site: m}, [2] * 5)), abs=1e-12)


@pytest.mark.parametrize("symmetric", [False, True])
def test_even_fermionic_products_at_one_site_need_no_string(symmetric):
    """``Cdagup*Cup`` = n_up, ``Cdagup*Cdn`` = a spin flip, ``Cdagup*Cdagdn`` = a pair: even
    products of fermions at one site, measured like bosons (the electron's in-site signs included)."""
    L = 3
    ops = _electrons(L)
    psi, v = _electron_state(symmetric, L, 6, 4, 11)
    for product in (
        "Cdagup*Cup",
        "Cdagup*Cdn",
        "Cdagdn*Cup",
        "Cdagup*Cdagdn",
        "Cdn*Cup",
        "Cdagup*Cup*Cdagdn*Cdn",
        "Ntot*F",
    ):
        for site in range(L):
            want = _mean(v, _named(ops, product, site))
            assert _c(psi.expect(product, site, local="electron")) == pytest.approx(want, abs=1e-12), (product, site)
    with pytest.raises(t4a.InvalidOptionError, match="odd under the fermion parity"):
        psi.expect("Cdagup*Cup*Cdn", 1, local="electron")


# ---- expectation values at every site ------------------------------------------------------------------
@pytest.fixture
def transfer_calls(monkeypatch):
    """A one-element list counting the transfer-matrix steps of a concrete state's measurements
    (:func:`tensor4all.networks.schmidt_form.transfer`: one call moves a whole batch of rows)."""
    mod = t4a.networks.schmidt_form
    calls = [0]
    real = mod.transfer

    def counting(*args):
        calls[0] += 1
        return real(*args)

    monkeypatch.setattr(mod, "transfer", counting)
    return calls


@pytest.mark.parametrize("kind", ["float64", "complex128", "symmetric"])
def test_expect_at_every_site_is_one_pass_of_environments(kind, transfer_calls):
    """``expect(op)`` (no site) equals the exact ``<op_i>`` of every site with no transfer step at
    all: in the Schmidt form each value is one site's contraction."""
    L = 6
    psi, v = _spinless_state(kind, L, 5)
    ops = _spinless(L)
    calls = transfer_calls
    for product in ("N", "Cdag*C", "F", "C*Cdag"):
        calls[0] = 0
        got = np.asarray(psi.expect(product, local="fermion"))
        assert got.shape == (L,) and calls[0] == 0
        want = [_mean(v, _named(ops, product, i)) for i in range(L)]
        np.testing.assert_allclose(got, want, atol=1e-12, err_msg=product)
    with pytest.raises(t4a.InvalidOptionError, match="odd under the fermion parity"):
        psi.expect("C", local="fermion")


@pytest.mark.parametrize("dtype", [tf.float64, tf.complex128])
def test_expect_at_every_site_is_differentiable(dtype):
    psi = MPS.random(3, bond_dim=2, seed=2, dtype=dtype)
    check_grads(lambda p: tf.sum(p.expect("Sx") * tf.asarray(np.array([1.0, -2.0, 0.5]))), (psi,), order=2)


# ---- fermionic correlation matrices ------------------------------------------------------------------
SPINLESS_PAIRS = [
    ("Cdag", "C"),
    ("C", "Cdag"),
    ("Cdag", "Cdag"),
    ("C", "C"),
    ("N", "N"),
    ("Cdag*C", "N"),
    ("N*Cdag", "C"),
]


def _spinless_state(kind: str, L: int, seed: int) -> tuple[MPS, np.ndarray]:
    if kind == "symmetric":
        psi = MPS.random(L, bond_dim=8, seed=seed, charge=L // 2, local="fermion", dtype=tf.complex128)
        return psi, _vector(psi)
    v = _random_vector(2**L, seed, kind == "complex128")
    return MPS.from_dense(v, L), v


@pytest.mark.parametrize("kind", ["float64", "complex128", "symmetric"])
def test_correlation_matrix_of_spinless_fermions(kind):
    """Every entry (i < j, i > j, i == j) of the Jordan-Wigner-signed correlation matrix, for
    fermion pairs in either order, creation pairs (zero in a symmetric state) and even products."""
    L = 6
    ops = _spinless(L)
    psi, v = _spinless_state(kind, L, 3)
    for a, b in SPINLESS_PAIRS:
        want = np.array([[_mean(v, _exact_pair(ops, a, b, i, j)) for j in range(L)] for i in range(L)])
        got = np.asarray(psi.correlation_matrix(a, b, local="fermion"))
        np.testing.assert_allclose(got, want, atol=1e-12, err_msg=f"{a}, {b}")
    opdm = np.asarray(psi.correlation_matrix("Cdag", "C", local="fermion"))
    np.testing.assert_allclose(opdm, opdm.conj().T, atol=1e-12)  # Hermitian, trace = N
    for i, j in ((0, 5), (5, 0), (2, 2), (3, 1)):
        assert _c(psi.correlation("Cdag", "C", i, j, local="fermion")) == pytest.approx(opdm[i, j], abs=1e-12)


@pytest.mark.parametrize("symmetric", [False, True])
def test_correlation_matrix_of_electrons(symmetric):
    L = 3
    ops = _electrons(L)
    psi, v = _electron_state(symmetric, L, 8, 2, 5)
    for a, b in (
        ("Cdagup", "Cup"),
        ("Cdagdn", "Cdn"),
        ("Cdagup", "Cdn"),
        ("Cdn", "Cdagup"),
        ("Cdagup*Ndn", "Cup"),
        ("Cdagup*Cdagdn", "Cdn*Cup"),
        ("Cup", "Cdagdn*Cdagup*Cdn"),
    ):
        want = np.array([[_mean(v, _exact_pair(ops, a, b, i, j)) for j in range(L)] for i in range(L)])
        got = np.asarray(psi.correlation_matrix(a, b, local="electron"))
        np.testing.assert_allclose(got, want, atol=1e-12, err_msg=f"{a}, {b}")


@settings(max_examples=20, deadline=None)
@given(i=st.integers(0, 5), j=st.integers(0, 5), k=st.integers(0, 3), seed=st.integers(0, 10**6))
def test_fermion_pairs_with_an_even_string(i, j, k, seed):
    """A string between two fermions multiplies their Jordan-Wigner strings:
    ``<c^dag_i (prod n_k) c_j>`` and friends, as products of the physical operators."""
    L = 6
    ops = _spinless(L)
    a, b, string = [("Cdag", "C", "N"), ("C", "Cdag", "F"), ("Cdag", "Cdag", "N*N"), ("N", "N", "F")][k]
    v = _random_vector(2**L, seed, True)
    psi = MPS.from_dense(v, L)
    want = _mean(v, _exact_pair(ops, a, b, i, j, string))
    assert _c(psi.correlation(a, b, i, j, local="fermion", string=string)) == pytest.approx(want, abs=1e-12)
    got = np.asarray(psi.correlation_matrix(a, b, sites=[i, j], string=string, local="fermion"))
    assert got[0, 1] == pytest.approx(want, abs=1e-12)


# ---- string order -------------------------------------------------------------------------------------
def _aklt_chain(L: int) -> MPS:
    """The AKLT state of ``L`` spin-1 sites between two spin-1/2 edge sites that carry its virtual
    bond (so the bulk is the infinite chain's): ``A^+ = sqrt(2/3) s+``, ``A^0 = -sqrt(1/3) sz``,
    ``A^- = -sqrt(2/3) s-`` (Pauli matrices; sum_s A^s A^s+ = sum_s A^s+ A^s = 1)."""
    sp, sz = np.array([[0.0, 1.0], [0.0, 0.0]]), np.diag([1.0, -1.0])
    a = np.stack([np.sqrt(2 / 3) * sp, -np.sqrt(1 / 3) * sz, -np.sqrt(2 / 3) * sp.T], axis=1)
    return MPS([np.eye(2).reshape(1, 2, 2)] + [a] * L + [np.eye(2).reshape(2, 2, 1)])


def test_aklt_string_order_is_minus_four_ninths():
    """Haldane's string order ``<Sz_i exp(i pi sum_{i<k<j} Sz_k) Sz_j>`` of the AKLT state is
    ``-4/9`` at every distance, while ``<Sz_i Sz_j>`` decays as ``(4/3) (-1/3)^|i-j|``; both from
    the exact vector here, and the MPS measurement (edge sites spin-1/2) matches it entry by entry."""
    L = 4
    psi = _aklt_chain(L)
    v = _vector(psi)
    dims = [2] + [3] * L + [2]
    P = scipy.linalg.expm(1j * np.pi * SPIN_ONE["Sz"])
    bulk = list(range(1, L + 1))
    want = np.empty((L, L), dtype=complex)
    for x, i in enumerate(bulk):
        for y, j in enumerate(bulk):
            ops = {k: P for k in range(min(i, j) + 1, max(i, j))}
            m = _kron({**ops, i: SPIN_ONE["Sz"]}, dims) @ _kron({j: SPIN_ONE["Sz"]}, dims)
            want[x, y] = _mean(v, m)
    np.testing.assert_allclose(want, np.where(np.eye(L) > 0, 2 / 3, -4 / 9), atol=1e-13)
    got = np.asarray(psi.correlation_matrix("Sz", "Sz", sites=bulk, string="exp(i pi Sz)"))
    np.testing.assert_allclose(got, want.real, atol=1e-13)
    assert got.dtype == np.float64
    plain = np.asarray(psi.correlation_matrix("Sz", "Sz", sites=bulk))
    r = np.abs(np.subtract.outer(np.arange(L), np.arange(L)))
    np.testing.assert_allclose(plain, np.where(r == 0, 2 / 3, 4 / 3 * (-1 / 3) ** r), atol=1e-13)
    assert float(psi.correlation("Sz", "Sz", 1, L, string="exp(i pi Sz)")) == pytest.approx(-4 / 9, abs=1e-13)


@settings(max_examples=20, deadline=None)
@given(
    sites=st.lists(st.integers(0, 4), min_size=1, max_size=5),
    k=st.integers(0, 3),
    seed=st.integers(0, 10**6),
    complex_=st.booleans(),
)
def test_string_correlations_of_a_random_spin_one_state(sites, k, seed, complex_):
    """Any sites (any order, repeats), strings given by name, as a matrix or as a product."""
    L = 5
    v = _random_vector(3**L, seed, complex_)
    psi = MPS.from_dense(v, L, d=3)
    P = np.diag([-1.0, 1.0, -1.0])
    string, s = [
        ("exp(i pi Sz)", P),
        (P, P),
        ("Sz*Sz", SPIN_ONE["Sz"] @ SPIN_ONE["Sz"]),
        ([P, "Sx"], P @ SPIN_ONE["Sx"]),
    ][k]
    a, b = SPIN_ONE["Sz"], SPIN_ONE["S+"]
    want = np.empty((len(sites), len(sites)), dtype=complex)
    for x, i in enumerate(sites):
        for y, j in enumerate(sites):
            between = {q: s for q in range(min(i, j) + 1, max(i, j))}
            want[x, y] = _mean(v, _kron({**between, i: a}, [3] * L) @ _kron({j: b}, [3] * L))
    got = np.asarray(psi.correlation_matrix("Sz", "S+", sites=sites, string=string))
    np.testing.assert_allclose(got, want, atol=1e-12)
    i, j = sites[0], sites[-1]
    assert _c(psi.correlation("Sz", "S+", i, j, string=string)) == pytest.approx(want[0, -1], abs=1e-12)


def test_a_complex_string_on_a_real_spin_half_state():
    """``exp(i pi Sz) = diag(i, -i)`` on spin-1/2: real state, complex string, complex entries
    (adjacent sites have no string and stay real)."""
    L = 5
    v = _random_vector(2**L, 8, False)
    psi = MPS.from_dense(v, L)
    P = np.diag([1j, -1j])
    want = np.array(
        [
            [
                _mean(
                    v,
                    _kron({**{q: P for q in range(min(i, j) + 1, max(i, j))}, i: SPIN_HALF["Sx"]}, [2] * L)
                    @ _kron({j: SPIN_HALF["Sx"]}, [2] * L),
                )
                for j in range(L)
            ]
            for i in range(L)
        ]
    )
    got = np.asarray(psi.correlation_matrix("Sx", "Sx", string="exp(i pi Sz)"))
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert np.abs(want.imag).max() > 1e-3


def test_symmetric_states_with_operators_of_no_single_charge():
    """``Sx`` has no single charge: the symmetric state is measured densely, same values."""
    L = 5
    psi = MPS.random(L, bond_dim=4, seed=9, charge=0.5, dtype=tf.complex128)
    v = _vector(psi)
    want = np.array(
        [
            [_mean(v, _kron({i: SPIN_HALF["Sx"]}, [2] * L) @ _kron({j: SPIN_HALF["S+"]}, [2] * L)) for j in range(L)]
            for i in range(L)
        ]
    )
    np.testing.assert_allclose(np.asarray(psi.correlation_matrix("Sx", "S+")), want, atol=1e-12)
    want = np.array(
        [
            [_mean(v, _kron({i: SPIN_HALF["S+"]}, [2] * L) @ _kron({j: SPIN_HALF["S-"]}, [2] * L)) for j in range(L)]
            for i in range(L)
        ]
    )
    np.testing.assert_allclose(np.asarray(psi.correlation_matrix("S+", "S-")), want, atol=1e-12)


# ---- cost and derivatives ------------------------------------------------------------------------------
@pytest.mark.parametrize("pair", [("Sz", "Sz"), ("S+", "Sz")])
def test_all_rows_share_one_pass(transfer_calls, pair):
    """All pairs take one left-to-right pass whose steps carry every open row at once: ``L``
    steps starting a row and ``L`` moving the batch, per direction (one direction when the lower
    triangle mirrors the upper, as for ``Sz Sz``; an entry-by-entry computation takes ``~L^3 / 3``
    steps, one pass per row ``~L^2``)."""
    calls = transfer_calls
    directions = 1 if pair[0] == pair[1] else 2
    for L in (12, 24):
        psi = MPS.random(L, bond_dim=2, seed=1)
        psi.schmidt_form()
        calls[0] = 0
        psi.correlation_matrix(*pair)
        assert calls[0] <= directions * 2 * L, (L, calls[0])


@pytest.mark.parametrize("dtype", [tf.float64, tf.complex128])
def test_correlation_matrix_is_differentiable(dtype):
    psi = MPS.random(3, bond_dim=2, seed=2, dtype=dtype)
    check_grads(lambda p: tf.sum(p.correlation_matrix("Sx", "Sz")), (psi,), order=1)


# ---- bad input -------------------------------------------------------------------------------------------
PSI = MPS.random(4, bond_dim=2, seed=7)
FERMIONS = MPS.random(4, bond_dim=2, seed=7)
BAD = [
    ("unknown-name", lambda: PSI.correlation_matrix("Sz", "Q"), t4a.UnknownOperatorError, "'Q'"),
    ("unknown-factor", lambda: PSI.expect("Sz*Q", 1), t4a.UnknownOperatorError, "valid operators"),
    ("empty-factor", lambda: PSI.expect("Sz**Sz", 1), t4a.InvalidOptionError, "empty factor"),
    ("empty-product", lambda: PSI.correlation([], "Sz", 0, 1), t4a.InvalidOptionError, "empty operator product"),
    ("product-of-wrong-shape", lambda: PSI.expect(["Sz", np.eye(3)], 0), t4a.DimensionMismatchError, "must be 2x2"),
    (
        "string-shape",
        lambda: PSI.correlation_matrix("Sz", "Sz", string=np.eye(3)),
        t4a.DimensionMismatchError,
        "must be 2x2, got shape (3, 3)",
    ),
    (
        "string-shape-adjacent",
        lambda: PSI.correlation("Sz", "Sz", 1, 2, string=np.eye(3)),
        t4a.DimensionMismatchError,
        "must be 2x2",
    ),
    ("string-unknown", lambda: PSI.correlation("Sz", "Sz", 0, 3, string="P"), t4a.UnknownOperatorError, "'P'"),
    (
        "string-nan",
        lambda: PSI.correlation_matrix("Sz", "Sz", string=np.full((2, 2), np.nan)),
        t4a.NonFiniteError,
        "NaN",
    ),
    (
        "string-str-matrix",
        lambda: PSI.correlation_matrix("Sz", "Sz", string=np.array([["a", "b"], ["c", "d"]])),
        t4a.Tensor4allTypeError,
        "must hold numbers",
    ),
    (
        "sites-outside",
        lambda: PSI.correlation_matrix("Sz", "Sz", sites=[0, 4]),
        t4a.SiteOutOfRangeError,
        "site 4 is outside 0..3",
    ),
    ("sites-negative", lambda: PSI.correlation_matrix("Sz", "Sz", sites=[-1]), t4a.SiteOutOfRangeError, "-1"),
    ("sites-bool", lambda: PSI.correlation_matrix("Sz", "Sz", sites=[True]), t4a.Tensor4allTypeError, "bool True"),
    ("sites-int", lambda: PSI.correlation_matrix("Sz", "Sz", sites=3), t4a.Tensor4allTypeError, "list of site"),
    ("sites-empty", lambda: PSI.correlation_matrix("Sz", "Sz", sites=[]), t4a.InvalidOptionError, "sites is empty"),
    ("correlation-site", lambda: PSI.correlation("Sz", "Sz", 0, 4, string="Sz"), t4a.SiteOutOfRangeError, "4"),
    ("odd-pair", lambda: FERMIONS.correlation_matrix("Cdag", "N", local="fermion"), t4a.InvalidOptionError, "odd"),
    (
        "odd-product-pair",
        lambda: FERMIONS.correlation("Cdag*C", "C", 0, 2, local="fermion"),
        t4a.InvalidOptionError,
        "changes the fermion parity",
    ),
    ("odd-expect", lambda: FERMIONS.expect("Cdag*C*C", 0, local="fermion"), t4a.InvalidOptionError, "fermionic"),
    (
        "odd-string",
        lambda: FERMIONS.correlation("Cdag", "C", 0, 3, string="C", local="fermion"),
        t4a.InvalidOptionError,
        "string 'C' is odd",
    ),
    (
        "string-breaks-parity",
        lambda: FERMIONS.correlation_matrix("Cdag", "C", string=np.array([[0.0, 1.0], [1.0, 0.0]]), local="fermion"),
        t4a.InvalidOptionError,
        "does not commute with the parity F",
    ),
    (
        "no-space-for-d4",
        lambda: MPS.random(2, d=4, bond_dim=2).correlation_matrix("Cup", "Cdagup"),
        t4a.UnknownLocalSpaceError,
        "pass local=",
    ),
    ("bad-local", lambda: PSI.correlation_matrix("Sz", "Sz", local="spin-7"), t4a.UnknownLocalSpaceError, "spin-7"),
    ("zero-norm", lambda: MPS([np.zeros((1, 2, 1))] * 3).correlation_matrix("Sz", "Sz"), t4a.ZeroNormError, "norm 0"),
]


@pytest.mark.parametrize("call,exc,fragment", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_is_a_typed_error(call, exc, fragment):
    with pytest.raises(exc) as info:
        call()
    assert fragment in str(info.value)
    assert isinstance(info.value, t4a.Tensor4allError)
