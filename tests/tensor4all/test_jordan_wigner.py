"""Automatic Jordan-Wigner strings in ``MPO.from_opsum`` and the fermionic local spaces (issue 23,
items 1 and 2) against operators built here, independently of the library: the Fock space of
the fermionic modes with explicit Jordan-Wigner matrices.

Mode ``m`` has ``c_m = Z x ... x Z x sigma^- x 1 x ... x 1`` (``m`` factors ``Z = diag(1, -1)``
before it) on the mode basis ``(|0>, |1>)``; the Fock state ``|n_0 n_1 ...>`` is
``(c^dag_0)^{n_0} (c^dag_1)^{n_1} ... |vac>``, mode 0 the most significant bit. ``"fermion"``:
one mode per site, the site basis ``|0>, |1>`` is the mode's, so the MPO's dense basis is the Fock
basis. ``"electron"``: modes ``(0 up, 0 dn, 1 up, ...)``, site digit ``s`` in ``(|0>, |up>,
|dn>, |up dn>)`` holds the Fock bits ``2 n_up + n_dn = SITE_TO_FOCK[s]`` (ITensor's ``|up dn> =
c^dag_up c^dag_dn |0>``). ``"tj"``: the electron with the doubly occupied states removed.
"""

from __future__ import annotations

import itertools
import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
import tensor4all as t4a
import tidu
from tensor4all import MPO, LocalSpace, OpSum, models
from tensor4all.operators.jordan_wigner import jordan_wigner_term

sys.path.insert(0, os.path.dirname(__file__))  # the reference beside this file (no package __init__)
from fock_hubbard import annihilators, mpo_order as electron_order  # noqa: E402


# ---- the independent reference ------------------------------------------------------------------
def fock_ops(local: str, L: int) -> dict[tuple[str, int], np.ndarray]:
    """``(name, site) -> `` the operator on the Fock space, from the mode operators only."""
    if local == "fermion":
        c = annihilators(L)
        one = np.eye(2**L)
        out = {}
        for i in range(L):
            n = c[i].T @ c[i]
            out.update({("C", i): c[i], ("Cdag", i): c[i].T, ("N", i): n, ("F", i): one - 2 * n, ("Id", i): one})
        return out
    c = annihilators(2 * L)
    one = np.eye(4**L)
    out = {}
    for i in range(L):
        up, dn = c[2 * i], c[2 * i + 1]
        nup, ndn = up.T @ up, dn.T @ dn
        out.update(
            {
                ("Cup", i): up,
                ("Cdn", i): dn,
                ("Cdagup", i): up.T,
                ("Cdagdn", i): dn.T,
                ("Nup", i): nup,
                ("Ndn", i): ndn,
                ("Ntot", i): nup + ndn,
                ("Nupdn", i): nup @ ndn,
                ("Sz", i): 0.5 * (nup - ndn),
                ("S+", i): up.T @ dn,
                ("S-", i): dn.T @ up,
                ("F", i): (one - 2 * nup) @ (one - 2 * ndn),
                ("Id", i): one,
            }
        )
    return out


def exact(terms, L: int, local: str) -> np.ndarray:
    """``sum_k coef_k O_1 O_2 ...`` (written order, fermion operators) in the MPO's basis."""
    ops = fock_ops("fermion" if local == "fermion" else "electron", L)
    H = 0
    for coef, *rest in terms:
        m = np.eye(len(ops[("Id", 0)]))
        for name, site in zip(rest[::2], rest[1::2]):
            m = m @ ops[(name, site)]
        H = H + coef * m
    if local == "fermion":
        return H
    perm = electron_order(L)
    H = H[np.ix_(perm, perm)]
    if local == "tj":
        keep = [b for b, d in enumerate(itertools.product(range(4), repeat=L)) if 3 not in d]
        H = H[np.ix_(keep, keep)]
    return H


def dense(terms, L: int, local: str) -> np.ndarray:
    return np.asarray(MPO.from_opsum(OpSum(terms), L, local).to_dense())


def check(terms, L: int, local: str, tol: float = 1e-12) -> None:
    a, b = dense(terms, L, local), exact(terms, L, local)
    assert np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max()), np.abs(a - b).max()


# ---- spinless fermions ---------------------------------------------------------------------------
def test_nearest_neighbour_hopping_and_density_density():
    L = 6
    terms = [(-1.0, "Cdag", i, "C", i + 1) for i in range(L - 1)] + [
        (-1.0, "Cdag", i + 1, "C", i) for i in range(L - 1)
    ]
    terms += [(0.7, "N", i, "N", i + 1) for i in range(L - 1)] + [(-0.3, "N", i) for i in range(L)]
    check(terms, L, "fermion")
    # spectrum of the free part: sum of negative single-particle energies
    free = terms[: 2 * (L - 1)]
    h1 = np.diag(-np.ones(L - 1), 1) + np.diag(-np.ones(L - 1), -1)
    e0 = np.linalg.eigvalsh(h1)
    assert abs(np.linalg.eigvalsh(dense(free, L, "fermion"))[0] - e0[e0 < 0].sum()) < 1e-12


@pytest.mark.parametrize("i,j", [(0, 5), (5, 0), (1, 4), (4, 1), (0, 1), (2, 2)])
def test_long_range_and_reversed_hopping(i, j):
    check([(0.8, "Cdag", i, "C", j)], 6, "fermion")
    check([(0.8, "C", i, "Cdag", j)], 6, "fermion")  # annihilator written first
    check([(1.1, "Cdag", i, "C", j), (1.1, "Cdag", j, "C", i)], 6, "fermion")


@pytest.mark.parametrize("order", list(itertools.permutations(range(4))))
def test_four_fermion_terms_in_every_order(order):
    names, sites = ("Cdag", "Cdag", "C", "C"), (1, 4, 0, 5)
    term = (0.6,) + tuple(x for k in order for x in (names[k], sites[k]))
    check([term], 6, "fermion")


@pytest.mark.parametrize(
    "term",
    [
        (1.0, "Cdag", 0, "Cdag", 2, "C", 2, "C", 0),  # repeated sites
        (1.0, "Cdag", 3, "C", 3, "Cdag", 1, "C", 4),
        (0.5, "Cdag", 2, "Cdag", 2, "C", 0, "C", 1),  # zero: (c^dag)^2 = 0
        (2.0, "C", 1, "N", 3, "Cdag", 5, "N", 0),  # bosons between and around
    ],
)
def test_repeated_and_mixed_sites(term):
    check([term], 6, "fermion")


def test_odd_fermion_number_is_a_typed_error():
    with pytest.raises(t4a.OpSumTermError, match="odd number"):
        MPO.from_opsum(OpSum([(1.0, "Cdag", 0, "C", 1, "C", 2)]), 4, "fermion")
    with pytest.raises(t4a.OpSumTermError, match="fermionic operators"):
        MPO.from_opsum(OpSum([(1.0, "C", 2)]), 4, "fermion")


def test_terms_without_fermions_are_unchanged():
    space = t4a.local_space("fermion")
    ops = (("N", 3), ("N", 0), ("Id", 2))
    assert jordan_wigner_term(ops, space) == (1, ops)
    spin = t4a.local_space("spin-1/2")
    assert jordan_wigner_term((("S+", 2), ("S-", 0)), spin) == (1, (("S+", 2), ("S-", 0)))
    assert jordan_wigner_term((("Cdag", 2), ("C", 0)), space) == (-1, (("C", 0), ("F", 0), ("F", 1), ("Cdag", 2)))


def test_hopping_bond_dimension_is_minimal():
    L = 8
    os = OpSum()
    for i in range(L - 1):
        os += (-1.0, "Cdag", i, "C", i + 1)
        os += (-1.0, "Cdag", i + 1, "C", i)
        os += (0.5, "N", i, "N", i + 1)
    H = MPO.from_opsum(os, L, "fermion")
    assert max(H.bond_dims) == 5
    # long-range hopping i -> i + 3: the string states add no bond dimension beyond the hops
    terms = [(-1.0, "Cdag", i, "C", i + 3) for i in range(L - 3)] + [
        (-1.0, "Cdag", i + 3, "C", i) for i in range(L - 3)
    ]
    check(terms, L, "fermion")
    assert max(MPO.from_opsum(OpSum(terms), L, "fermion").bond_dims) <= 2 + 2 * 3


def test_traced_coefficient_keeps_one_symbol():
    L = 4

    def energy_entry(t):
        os = OpSum()
        for i in range(L - 1):
            os += (t, "Cdag", i + 1, "C", i)  # sign -1 from the reordering
            os += (t, "Cdag", i, "C", i + 1)
        return tf.sum(MPO.from_opsum(os, L, "fermion").to_dense())

    ref = exact(
        [(1.0, "Cdag", i + 1, "C", i) for i in range(L - 1)] + [(1.0, "Cdag", i, "C", i + 1) for i in range(L - 1)],
        L,
        "fermion",
    )
    assert abs(float(tidu.grad(energy_entry)(tf.asarray(0.3))) - ref.sum()) < 1e-12


# ---- electrons -----------------------------------------------------------------------------------
SPINS = ("up", "dn")


@pytest.mark.parametrize("i,j", [(0, 1), (1, 0), (0, 2), (2, 0), (1, 1)])
@pytest.mark.parametrize("s", SPINS)
def test_electron_hopping(i, j, s):
    check([(0.9, f"Cdag{s}", i, f"C{s}", j)], 3, "electron")
    check([(0.9, f"C{s}", i, f"Cdag{s}", j)], 3, "electron")


@pytest.mark.parametrize(
    "term",
    [
        (1.0, "Cdagup", 0, "Cdn", 0),  # same-site products
        (1.0, "Cdn", 1, "Cdagup", 1),
        (1.0, "Cdagup", 0, "Cdn", 0, "Cdagdn", 2, "Cup", 2),
        (0.7, "Cdagup", 0, "Cdagdn", 0, "Cdn", 2, "Cup", 2),  # pair hopping
        (0.7, "Cup", 2, "Cdagdn", 0, "Cdn", 2, "Cdagup", 0),
        (0.4, "Cdagup", 2, "Cdn", 0, "Sz", 1),
        (0.3, "Cdagup", 0, "Cdagdn", 1, "Cup", 2, "Cdn", 1),
        (1.2, "Cdagdn", 2, "Cup", 0, "Ntot", 1, "S+", 2, "Cdagup", 1, "Cdn", 1),
    ],
)
def test_electron_products(term):
    check([term], 3, "electron")


def test_hubbard_equals_plain_terms():
    L, t, U, mu = 4, 0.8, 3.0, 0.4
    os = OpSum()
    for i in range(L - 1):
        for s in SPINS:
            os += (-t, f"Cdag{s}", i, f"C{s}", i + 1)
            os += (-t, f"Cdag{s}", i + 1, f"C{s}", i)
    for i in range(L):
        os += (U, "Nupdn", i)
        os += (-mu, "Ntot", i)
    a = np.asarray(MPO.from_opsum(os, L, "electron").to_dense())
    b = np.asarray(models.hubbard(L, t=t, U=U, mu=mu).to_dense())
    assert np.abs(a - b).max() < 1e-12
    terms = [(x.coef,) + tuple(y for op in x.ops for y in op) for x in os]
    assert np.abs(a - exact(terms, L, "electron")).max() < 1e-12


# ---- t-J -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "term",
    [
        (1.0, "Cdagup", 0, "Cup", 2),
        (1.0, "Cdagdn", 2, "Cdn", 0),
        (0.5, "Cdn", 1, "Cdagdn", 0),
        (0.5, "S+", 0, "S-", 2),
        (0.3, "Sz", 1, "Ntot", 2),
        (0.2, "Cdagup", 0, "Cdagdn", 1, "Cdn", 2, "Cup", 0),
        (0.7, "Nup", 1),
        (0.7, "Ndn", 1),
    ],
)
def test_tj_is_the_projected_electron(term):
    check([term], 3, "tj")


def test_tj_space():
    tj = t4a.local_space("tj")
    assert tj.dim == 3 and tj.charges == {"N": (0, 1, 1), "2Sz": (0, 1, -1)}
    assert tj.fermionic == {"Cup", "Cdagup", "Cdn", "Cdagdn"} and tj.string == "F"
    el = t4a.local_space("electron")
    for name in ("Cup", "Cdagup", "Cdn", "Cdagdn", "Nup", "Ndn", "Ntot", "Sz", "S+", "S-", "F", "Id"):
        assert np.array_equal(tj.matrix(name), el.matrix(name)[:3, :3]), name
    assert el.fermionic == {"Cup", "Cdagup", "Cdn", "Cdagdn"}  # A* are bosonic, as in ITensor
    assert t4a.local_space("fermion").fermionic == {"C", "Cdag"}


# ---- random terms --------------------------------------------------------------------------------
def _random_term(draw, L, fermions, bosons):
    n = draw(st.integers(1, 6))
    ops = [(draw(st.sampled_from(fermions + bosons)), draw(st.integers(0, L - 1))) for _ in range(n)]
    if sum(name in fermions for name, _ in ops) % 2:
        ops.insert(draw(st.integers(0, len(ops))), (draw(st.sampled_from(fermions)), draw(st.integers(0, L - 1))))
    coef = draw(st.floats(-2, 2, allow_nan=False))
    return (coef,) + tuple(x for op in ops for x in op)


@st.composite
def fermion_terms(draw):
    return [_random_term(draw, 6, ["C", "Cdag"], ["N", "Id"]) for _ in range(draw(st.integers(1, 3)))]


@st.composite
def electron_terms(draw):
    return [
        _random_term(
            draw, 3, ["Cup", "Cdn", "Cdagup", "Cdagdn"], ["Nup", "Ndn", "Ntot", "Nupdn", "Sz", "S+", "S-", "Id"]
        )
        for _ in range(draw(st.integers(1, 3)))
    ]


@settings(max_examples=40, deadline=None)
@given(fermion_terms())
def test_random_fermion_terms(terms):
    check(terms, 6, "fermion")


@settings(max_examples=30, deadline=None)
@given(electron_terms())
def test_random_electron_terms(terms):
    check(terms, 3, "electron")


# ---- a user-declared space -----------------------------------------------------------------------
def test_user_declared_fermionic_space():
    a = np.array([[0.0, 1.0], [0.0, 0.0]])
    space = LocalSpace(
        "my-fermion",
        2,
        {"Id": (1, np.eye(2)), "a": (1, a), "ad": (1, a.T.copy()), "P": (1, np.diag([1.0, -1.0]))},
        charges={"N": (0, 1)},
        fermionic={"a", "ad"},
        string="P",
    )
    mine = np.asarray(MPO.from_opsum(OpSum([(0.5, "ad", 4, "a", 1), (0.25, "a", 0, "ad", 3)]), 5, space).to_dense())
    ref = exact([(0.5, "Cdag", 4, "C", 1), (0.25, "C", 0, "Cdag", 3)], 5, "fermion")
    assert np.abs(mine - ref).max() < 1e-12


def test_local_space_fermionic_validation():
    ops = {"Id": (1, np.eye(2)), "a": (1, np.array([[0.0, 1.0], [0.0, 0.0]]))}
    with pytest.raises(t4a.UnknownOperatorError, match="'b'"):
        LocalSpace("x", 2, ops, fermionic={"b"})
    with pytest.raises(t4a.UnknownOperatorError, match="string operator 'F'"):
        LocalSpace("x", 2, ops, fermionic={"a"})
    with pytest.raises(t4a.Tensor4allTypeError, match="fermionic"):
        LocalSpace("x", 2, ops, fermionic="a")
    with pytest.raises(t4a.InvalidOptionError, match="bosonic"):
        LocalSpace("x", 2, ops, fermionic={"a", "Id"}, string="Id")


def test_correlation_of_fermions_is_the_one_particle_density_matrix():
    """MPS.correlation with fermionic names includes the strings: after a TEBD evolution of
    free fermions from a product state it equals the single-particle propagator's
    C(t) = U^* C(0) U^T (U = expm(-i t h)); a lone fermionic operator in expect is refused."""
    import scipy.linalg

    L, t = 6, 0.7
    os = t4a.OpSum()
    for i in range(L - 1):
        os += (-1.0, "Cdag", i, "C", i + 1)
        os += (-1.0, "Cdag", i + 1, "C", i)
    H = t4a.MPO.from_opsum(os, L, "fermion")
    occ = [1, 0, 1, 1, 0, 1]
    res = t4a.tebd(H, t4a.MPS.product_state(occ, local="fermion"), t, 0.01, order=4, max_bond=64, cutoff=0.0)
    h = -np.eye(L, k=1) - np.eye(L, k=-1)
    u = scipy.linalg.expm(-1j * t * h)
    want = u.conj() @ np.diag(np.asarray(occ, float)) @ u.T
    got = np.array(
        [
            [complex(np.asarray(res.state.correlation("Cdag", "C", i, j, local="fermion"))) for j in range(L)]
            for i in range(L)
        ]
    )
    np.testing.assert_allclose(got, want, atol=1e-9)
    with pytest.raises(t4a.InvalidOptionError, match="fermionic"):
        res.state.expect("C", 2, local="fermion")
    with pytest.raises(t4a.InvalidOptionError, match="odd"):
        res.state.correlation("C", "N", 1, 3, local="fermion")
