"""Product charges packed into one integer (``tensor4all.sites.charges``), checked by properties.

The sector engine only adds, negates and compares charges; packing ``(N, 2Sz)`` into one
integer is right exactly when it is an injective homomorphism on the charges a chain can
carry, and the sector helpers must agree with a brute-force enumeration of product states.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor4all as t4a
from tensor4all.sites.charges import (
    PACK_BASE,
    charge_sector,
    charge_value,
    declared_charges,
    default_charge,
    pack,
    physical_charge,
    unpack,
)
from tensor4all.algorithms.sector_dmrg import sector_product_state, suffix_totals

LIMIT = PACK_BASE // 4  # the size of a part any chain the engine can hold stays below
parts = st.tuples(st.integers(-LIMIT, LIMIT), st.integers(-LIMIT, LIMIT))


@given(parts, parts)
def test_packing_is_an_injective_homomorphism(a, b):
    assert unpack(pack(a), 2) == a
    assert pack((a[0] + b[0], a[1] + b[1])) == pack(a) + pack(b)
    assert pack((-a[0], -a[1])) == -pack(a)
    assert (pack(a) == pack(b)) == (a == b)


@given(st.integers(-LIMIT, LIMIT), st.integers(-LIMIT, LIMIT))
def test_physical_values_round_trip(n, two_sz):
    q = pack((n, two_sz))
    assert charge_value(q, (1, 2)) == (float(n), two_sz / 2)
    assert charge_sector(q, "N,Sz", (1, 2)) == {"N": float(n), "Sz": two_sz / 2}
    assert physical_charge((n, two_sz / 2), "N,Sz", (1, 2), 0, "x") == q
    assert physical_charge({"Sz": two_sz / 2, "N": n}, "N,Sz", (1, 2), 0, "x") == q


@pytest.mark.parametrize(
    "bad,exc",
    [
        (3, t4a.Tensor4allTypeError),
        ((1, 2, 3), t4a.Tensor4allTypeError),
        ({"N": 1}, t4a.InvalidOptionError),
        ((1, 0.25), t4a.InvalidOptionError),
        ((float("nan"), 0), t4a.InvalidOptionError),
        (("1", 0), t4a.Tensor4allTypeError),
    ],
)
def test_bad_physical_values(bad, exc):
    with pytest.raises(exc):
        physical_charge(bad, "N,Sz", (1, 2), 0, "sector")


def _brute_totals(site_charges):
    """Every total of one basis state per site, by enumeration."""
    return {
        sum(qs[s] for qs, s in zip(site_charges, states))
        for states in itertools.product(*[range(len(qs)) for qs in site_charges])
    }


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["electron", "tj"]), st.integers(1, 5), st.data())
def test_sector_helpers_agree_with_enumeration(local, L, data):
    q = declared_charges(local, [4 if local == "electron" else 3] * L)["N,2Sz"]
    reach = _brute_totals(q)
    assert suffix_totals(q)[0] == reach
    target = data.draw(st.sampled_from(sorted(reach)))
    states = sector_product_state(q, target, 0, 2)
    assert sum(qs[s] for qs, s in zip(q, states)) == target
    # the default: N nearest the middle of its range, then 2Sz nearest the middle of its range
    # (0: the lowest |Sz|), remaining ties to the larger N, then the larger Sz
    pairs = sorted(unpack(x, 2) for x in reach)
    n_mid = min(p[0] for p in pairs) + max(p[0] for p in pairs)
    s_mid = min(p[1] for p in pairs) + max(p[1] for p in pairs)
    ranked = sorted(pairs, key=lambda p: (abs(2 * p[0] - n_mid), abs(2 * p[1] - s_mid), -p[0], -p[1]))
    assert unpack(default_charge(reach, (1, 2)), 2) == ranked[0]
    if local == "electron" and L % 2 == 0:
        assert ranked[0] == (L, 0)  # half filling, Sz = 0


def test_unreachable_product_sector_is_refused():
    q = declared_charges("electron", [4] * 3)["N,2Sz"]
    with pytest.raises(ValueError):
        sector_product_state(q, pack((3, 0)), 0, 2)  # three electrons cannot have Sz = 0
