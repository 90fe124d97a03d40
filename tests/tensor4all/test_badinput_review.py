"""Bad inputs a review found accepted silently or failing with a raw exception (each test fails
on the code before the fix): the project's rule is a typed error (a subclass of the package's
base exception and of the matching built-in) naming the argument, before any work."""

from __future__ import annotations

import numpy as np
import pytest

import tensor4all as t4a
import tensor4all.infinite as infinite
from tensor4all import models, trees
from tensor4all.tools.errors import (
    InvalidOptionError,
    NonFiniteError,
    Tensor4allError,
    Tensor4allMemoryError,
    Tensor4allTypeError,
)
from tensor4all.trees import Tree, TreeTN

TREE = Tree([(0, 1), (1, 2), (1, 3)])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"two_site": "no"}, Tensor4allTypeError, "two_site"),
        ({"cutoff": -1.0}, InvalidOptionError, "cutoff"),
        ({"cutoff": float("nan")}, InvalidOptionError, "cutoff"),
        ({"cutoff": "x"}, Tensor4allTypeError, "cutoff"),
        ({"cutoff": 2.0}, InvalidOptionError, "cutoff"),
        ({"noise": float("nan")}, InvalidOptionError, "noise"),
        ({"noise": -1.0}, InvalidOptionError, "noise"),
        ({"tol": float("nan")}, InvalidOptionError, "tol"),
        ({"progress": 3}, Tensor4allTypeError, "progress"),
        ({"seed": -1}, InvalidOptionError, "seed"),
        ({"seed": "a"}, Tensor4allTypeError, "seed"),
    ],
)
def test_tree_dmrg_checks_its_options(kwargs, error, match):
    """``two_site="no"`` ran two-site; negative or NaN cutoff, noise, tol were accepted."""
    H = trees.tree_heisenberg(TREE)
    with pytest.raises(error, match=match):
        trees.tree_dmrg(H, sweeps=1, **kwargs)


@pytest.mark.parametrize("cutoff", [float("nan"), -1.0, 2.0, "x"])
def test_tree_fit_and_linsolve_check_cutoff(cutoff):
    H = trees.tree_heisenberg(TREE)
    psi = TreeTN.random(TREE, 2, 2, seed=1)
    with pytest.raises(Tensor4allError, match="cutoff"):
        trees.apply_fit(H, psi, max_bond=4, cutoff=cutoff)
    with pytest.raises(Tensor4allError, match="cutoff"):
        trees.tree_linsolve(H, psi, max_bond=4, cutoff=cutoff)


def test_treetn_center_seed_dtype_and_size():
    P = TreeTN.random(TREE, 2, 2, seed=1)
    with pytest.raises(trees.TreeError, match="center"):
        TreeTN(TREE, P.tensors, center=9)
    with pytest.raises(trees.TreeError, match="center"):
        TreeTN(TREE, P.tensors, center="a")
    with pytest.raises(Tensor4allTypeError, match="seed"):
        TreeTN.random(TREE, 2, 2, seed="a")
    with pytest.raises(InvalidOptionError, match="dtype"):
        TreeTN.random(TREE, 2, 2, dtype="foo")
    with pytest.raises(trees.TreeError, match="site_dims"):
        TreeTN.random(TREE, True, 2)
    with pytest.raises(Tensor4allMemoryError, match="TreeTN.random"):
        TreeTN.random(TREE, 2, 10**6)
    with pytest.raises(Tensor4allTypeError, match="J"):
        trees.tree_heisenberg(TREE, J="1")


def test_excited_states_and_gap_take_seed_none():
    """``seed=None`` (accepted by dmrg) crashed on ``None + k``."""
    H = models.heisenberg(4)
    res = t4a.excited_states(H, 2, seed=None, sweeps=4, max_bond=8)
    exact = np.linalg.eigvalsh(np.asarray(H.to_dense()).reshape(16, 16))
    assert [r.energy for r in res] == pytest.approx(exact[:2], abs=1e-8)
    with pytest.raises(Tensor4allTypeError, match="seed"):
        t4a.excited_states(H, 2, seed="a")


def test_infinite_correlation_connected_is_a_bool():
    """``connected="no"`` computed the connected correlator."""
    P = t4a.iMPS.random("spin-1/2", 2, 4, seed=1)
    with pytest.raises(Tensor4allTypeError, match="connected"):
        infinite.correlation(P, "Sz", "Sz", 3, connected="no")


def test_imps_random_dtype_and_size():
    with pytest.raises(InvalidOptionError, match="dtype"):
        t4a.iMPS.random("spin-1/2", 1, 2, dtype="foo")
    with pytest.raises(Tensor4allMemoryError, match="iMPS.random"):
        t4a.iMPS.random("spin-1/2", 1, 10**6)


def test_tt_sum_nan_weights():
    A = t4a.MPS.random(3, 2, bond_dim=2, seed=1)
    with pytest.raises(NonFiniteError, match=r"weights\[0\]"):
        t4a.tci.tt_sum(A, [np.full(2, np.nan)] * 3)


@pytest.mark.parametrize(
    ("ids", "error"),
    [
        ([1, 1, 2], InvalidOptionError),
        ([1.5, 2.5, 3.5], Tensor4allTypeError),
        (["a", "b", "c"], Tensor4allTypeError),
        (5, Tensor4allTypeError),
        ([0, 1, 2], InvalidOptionError),
        ([True, 2, 3], Tensor4allTypeError),
    ],
)
def test_itensors_site_ids(tmp_path, ids, error):
    """Duplicate ids wrote a file the loader refuses; float ids were truncated."""
    pytest.importorskip("h5py")
    psi = t4a.MPS.random(3, 2, bond_dim=2, seed=1)
    path = tmp_path / "c.h5"
    with pytest.raises(error, match="site_ids"):
        t4a.save_itensors_hdf5(psi, str(path), site_ids=ids)
    assert not path.exists()


def test_parity_charge_out_of_range():
    """A parity of 2 or -1 was reduced mod 2 by every entry point but dmrg(sector=) alone."""
    H = models.tfim(4, g=0.5, conserve="parity")
    for charge in (2, -1):
        with pytest.raises(InvalidOptionError, match="parity is one of 0, 1"):
            t4a.MPS.random(4, local="pauli", conserve="parity", charge=charge)
    p0 = t4a.MPS.random(4, local="pauli", conserve="parity", charge=0)
    with pytest.raises(InvalidOptionError, match="parity is one of 0, 1"):
        t4a.dmrg(H, p0, sector=2)
    with pytest.raises(InvalidOptionError, match="parity is one of 0, 1"):
        t4a.thermal_state(H, 0.5, conserve="parity", sector=2)
    assert t4a.MPS.random(4, local="pauli", conserve="parity", charge=1).sector == {"parity": 1.0}


def test_non_conserving_messages_name_physical_charges():
    """The errors printed packed integers (33554432 -> 0, changes [-16777215, 16777217])."""
    ops = models.hubbard_opsum(3)
    ops += (0.2, "Cup", 0, "Cdn", 1)
    ops += (0.2, "Cdagdn", 1, "Cdagup", 0)
    H = t4a.MPO.from_opsum(ops, 3, "electron")
    psi = t4a.MPS.random(3, local="electron", conserve="N,Sz", charge=(3, 0.5), bond_dim=8)
    with pytest.raises(t4a.NonConservingError, match=r"\(2\.0, 0\.0\) -> \(0\.0, 0\.0\)"):
        t4a.tebd(H, psi, 0.1, 0.05)
    with pytest.raises(t4a.NonConservingError, match=r"N,Sz changes \[\(-1\.0, 0\.5\), \(1\.0, 0\.5\)\]"):
        t4a.tdvp(H, psi, 0.1, 0.05)
