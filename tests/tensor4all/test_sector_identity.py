"""A symmetric state's sector compared as the tensors carry it, and read back from quimb per bond
state. ``MPS(tensors)`` of ``"N,Sz"`` sites has no grading, so its ``charge`` is the packed integer
where a graded state's is the pair ``(N, 2Sz)``: ``overlap`` compared the two forms and returned 0
for two equal states, and ``a + b`` raised ``SectorMismatchError``. ``from_quimb(conserve=...)``
dropped a bond state whose column on one site was below 1e-12 of the site's largest entry, though
the next site carried it (a harmless gauge): half of the state was lost. Exact values from the dense
vectors."""

from __future__ import annotations

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all import MPS


def test_overlap_and_sum_of_a_graded_and_an_ungraded_state_of_one_sector():
    a = MPS.random(4, 4, 8, seed=1, conserve="N,Sz", local="electron")
    b = MPS(a.tensors)
    va = np.asarray(a.to_dense())
    assert abs(complex(np.asarray(t4a.overlap(a, b))) - np.vdot(va, va)) < 1e-12
    s = a + b
    assert np.linalg.norm(np.asarray(s.to_dense()) - 2 * va) < 1e-12


def test_states_of_different_sectors_stay_orthogonal():
    a = MPS.random(4, 4, 8, seed=1, conserve="N,Sz", local="electron")
    c = MPS.random(4, 4, 8, seed=2, conserve="N,Sz", local="electron", charge={"N": 4, "Sz": 1})
    assert complex(np.asarray(t4a.overlap(a, MPS(c.tensors)))) == 0
    with pytest.raises(t4a.SectorMismatchError):
        a + MPS(c.tensors)


def test_from_quimb_keeps_a_bond_state_scaled_down_on_one_site():
    pytest.importorskip("quimb")
    from tensor4all.networks.interchange import from_quimb, to_quimb

    psi = MPS.random(6, 2, 4, seed=1, conserve="Sz")
    v = np.asarray(psi.to_dense())
    q = to_quimb(psi)
    t2, t3 = q[q.site_tag(2)], q[q.site_tag(3)]
    bond = list(set(t2.inds) & set(t3.inds))[0]
    g = np.ones(t2.ind_size(bond))
    g[0] = 1e-13  # the state is unchanged: site 2's bond state scaled down, site 3's up
    i2, i3 = t2.inds.index(bond), t3.inds.index(bond)
    t2.modify(data=np.moveaxis(np.moveaxis(t2.data, i2, -1) * g, -1, i2))
    t3.modify(data=np.moveaxis(np.moveaxis(t3.data, i3, -1) / g, -1, i3))
    back = from_quimb(q, conserve="Sz")
    assert back.symmetric
    assert np.linalg.norm(np.asarray(back.to_dense()) - v) < 1e-12 * np.linalg.norm(v)
