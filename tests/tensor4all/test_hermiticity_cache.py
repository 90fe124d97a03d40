"""The Hermiticity test of a Hamiltonian is remembered by the MPO's content
(``networks.mpo.hermiticity``): the same tensors in other arrays answer at once, and any change of
an entry is tested again (a cache by object identity would pass a tensor changed in place)."""

from __future__ import annotations

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all import models
from tensor4all.networks import mpo as mpo_module


def _arrays(H: t4a.MPO) -> list[np.ndarray]:
    return [np.array(t) for t in H.tensors]


def test_a_changed_entry_is_tested_again():
    ws = _arrays(models.heisenberg(6))
    defect, scale = mpo_module.hermiticity(ws)
    assert defect < 1e-14
    assert mpo_module.hermiticity([w.copy() for w in ws]) == (defect, scale)  # other arrays, one content
    # one entry of the same arrays changed in place: a term without its conjugate
    nonzero = np.argwhere(np.abs(ws[2]) > 0)
    entry = tuple(nonzero[len(nonzero) // 2])
    original = ws[2][entry]
    ws[2][entry] += 0.5
    assert mpo_module.hermiticity(ws)[0] > 1e-6
    with pytest.raises(t4a.NonHermitianError):
        t4a.dmrg(t4a.MPO(ws), max_bond=4, sweeps=1)
    ws[2][entry] = original
    assert mpo_module.hermiticity(ws) == (defect, scale)


def test_the_remembered_answer_is_the_computed_one():
    """The digest covers shapes and dtypes: a real MPO and its complex copy (the same entries) are
    two keys with the same answer, as computed afresh."""
    ws = _arrays(models.tfim(5, g=0.7))
    fresh = mpo_module._hermiticity(ws)
    assert mpo_module.hermiticity(ws) == fresh
    assert mpo_module.hermiticity([w.astype(complex) for w in ws]) == pytest.approx(fresh, abs=1e-15)
    assert mpo_module._content_key(ws) != mpo_module._content_key([w.astype(complex) for w in ws])
