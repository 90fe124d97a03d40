"""Bad-input rows of tensor4all's networks: MPS, MPO, OpSum, local spaces, models, dmrg, symmetric chains."""

from __future__ import annotations

import importlib.util

import numpy as np

import tenferro as tf
import tensor4all as t4a
from tensor4all import models

from .common import new_table

ROWS, row = new_table()


# ---- tensor4all -----------------------------------------------------------------------------
row("mps-random-L0", t4a.MPS.random, (0,), t4a.Tensor4allError, "positive integer", bond_dim=2)
row("mps-random-bond0", t4a.MPS.random, (4,), t4a.Tensor4allError, "bond_dim must be", bond_dim=0)
row("mps-random-d-not-local", t4a.MPS.random, (3, 2), t4a.DimensionMismatchError, "drop d=", local="electron")
row(
    "opsum-site",
    lambda: t4a.MPO.from_opsum(t4a.OpSum() + (1.0, "Sz", 5), 3, local="spin-1/2"),
    (),
    t4a.Tensor4allError,
    "outside 0..2",
)
row(
    "opsum-local",
    lambda: t4a.MPO.from_opsum(t4a.OpSum() + (1.0, "Sz", 0), 3, local="spin-7"),
    (),
    t4a.Tensor4allError,
    "unknown local space",
)
row("dmrg-max_bond", lambda: t4a.dmrg(models.heisenberg(4), max_bond=0), (), t4a.Tensor4allError, "max_bond must be")
row("diagonal-ndim", t4a.DiagonalTensor, (tf.ones((2, 2, 2)),), t4a.Tensor4allError, "must be 1-d")


# ---- issue 21: tensor networks (MPS, MPO, OpSum, local spaces, models, dmrg) -------
NW_NAN, NW_INF = float("nan"), float("inf")
NW_PSI = t4a.MPS.random(4, bond_dim=2, seed=7)
NW_ZERO = t4a.MPS([np.zeros((1, 2, 1))] * 3)
NW_H = models.heisenberg(4)
NW_OS = models.heisenberg_opsum(4)
for label, bad, exc, fragment in (
    ("int", 5, t4a.Tensor4allTypeError, "an MPS takes a list of site tensors"),
    ("bools", [np.ones((1, 2, 1), bool)], t4a.Tensor4allTypeError, "dtype bool"),
    ("extent0", [np.ones((1, 0, 1))], t4a.DimensionMismatchError, "extent 0"),
    ("inf", [np.full((1, 2, 1), NW_INF)], t4a.NonFiniteError, "NaN or infinity"),
):
    row(f"MPS-{label}", t4a.MPS, (bad,), exc, fragment)
row("MPS.product_state-bool", t4a.MPS.product_state, ([True, 0],), t4a.Tensor4allTypeError, "got True")
row("MPS.product_state-nan", t4a.MPS.product_state, ([[NW_NAN, 0.0]],), t4a.NonFiniteError, "NaN or infinity")
row(
    "MPS.from_dense-nan",
    t4a.MPS.from_dense,
    (np.r_[NW_NAN, np.zeros(7)], 3),
    t4a.NonFiniteError,
    "NaN or infinity (entry 0)",
)
row("MPS.from_dense-str", t4a.MPS.from_dense, (["a"] * 8, 3), t4a.Tensor4allTypeError, "must hold numbers")
row(
    "MPS.compress-cutoff-nan",
    lambda: t4a.MPS.random(4, bond_dim=2, seed=7).compress(cutoff=NW_NAN),
    (),
    t4a.InvalidOptionError,
    "cutoff",
)
row(
    "MPS.compress-cutoff-one",
    lambda: t4a.MPS.random(4, bond_dim=2, seed=7).compress(cutoff=1.0),
    (),
    t4a.InvalidOptionError,
    "cutoff",
)
row(
    "MPS.compress-max_bond-0",
    lambda: t4a.MPS.random(4, bond_dim=2, seed=7).compress(max_bond=0),
    (),
    t4a.BondDimensionError,
    "max_bond",
)
row(
    "MPS.normalize-zero",
    lambda: t4a.MPS([np.zeros((1, 2, 1))] * 3).normalize(),
    (),
    t4a.ZeroNormError,
    "the state has norm 0",
)
row("MPS.schmidt_values-zero", lambda: NW_ZERO.schmidt_values(), (), t4a.ZeroNormError, "the state has norm 0")
row("MPS.schmidt_form-zero", lambda: NW_ZERO.schmidt_form(), (), t4a.ZeroNormError, "the state has norm 0")
# files other codes read: the argument is checked before the optional peer is imported; a peer's
# own object can only be recognized with the peer, so without it the call names the extra
_HAVE_PEERS = all(importlib.util.find_spec(m) is not None for m in ("tenpy", "quimb", "h5py"))
_PEER_EXC = t4a.Tensor4allTypeError if _HAVE_PEERS else t4a.OptionalDependencyError
for _name in ("to_tenpy", "to_quimb"):
    row(f"{_name}-not-an-MPS", getattr(t4a, _name), (3,), t4a.Tensor4allTypeError, "expects a tensor4all MPS")
for _name in ("mpo_to_tenpy", "mpo_to_quimb"):
    row(f"{_name}-not-an-MPO", getattr(t4a, _name), ("H",), t4a.Tensor4allTypeError, "expects a tensor4all MPO")
for _name in ("from_tenpy", "from_quimb", "mpo_from_tenpy", "mpo_from_quimb"):
    row(f"{_name}-foreign", getattr(t4a, _name), ("x",), _PEER_EXC, "tenpy" if "tenpy" in _name else "quimb")
row("save_itensors_hdf5-not-a-chain", t4a.save_itensors_hdf5, (3, "x.h5"), t4a.Tensor4allTypeError, "MPS or an MPO")
row("load_itensors_hdf5-missing", t4a.load_itensors_hdf5, ("/nonexistent/x.h5",), t4a.MPSFileNotFoundError, "no file")
row(
    "MPS.entanglement_entropy-bool",
    lambda: NW_PSI.entanglement_entropy(True),
    (),
    t4a.Tensor4allTypeError,
    "must be an integer bond, got bool True",
)
# symmetric networks (issue 22, item 9)
NW_SYM = t4a.MPS.random(4, bond_dim=2, seed=7, charge=0)
row(
    "MPS.entanglement_spectrum-dense",
    lambda: NW_PSI.entanglement_spectrum(1),
    (),
    t4a.InvalidOptionError,
    "no charge sectors",
)
row(
    "MPS.entanglement_spectrum-bond",
    lambda: NW_SYM.entanglement_spectrum(3),
    (),
    t4a.SiteOutOfRangeError,
    "bond 3 is outside 0..2",
)
row(
    "MPS.random-empty-sector",
    lambda: t4a.MPS.random(4, charge=0.5),
    (),
    t4a.SymmetryViolationError,
    "Sz = 0.5 has no states",
)
row(
    "MPS.random-charge-not-multiple",
    lambda: t4a.MPS.random(4, charge=0.25),
    (),
    t4a.InvalidOptionError,
    "not a multiple of 1/2",
)
row(
    "MPS.random-undeclared",
    lambda: t4a.MPS.random(4, conserve="Sz", local="pauli"),
    (),
    t4a.InvalidOptionError,
    "does not declare",
)
row(
    "MPS.random-conserve-name",
    lambda: t4a.MPS.random(4, conserve="Q"),
    (),
    t4a.InvalidOptionError,
    "conserve must be one of",
)
row(
    "MPS.product_state-conserve-vector",
    lambda: t4a.MPS.product_state([0, [1.0, 0.0]], conserve="Sz"),
    (),
    t4a.Tensor4allTypeError,
    "site 1 must be a basis index",
)
row(
    "MPS-symmetric-bond-mismatch",
    lambda: t4a.MPS(
        [t4a.MPS.random(4, charge=0, seed=1).tensors[0], *t4a.MPS.random(4, charge=0, bond_dim=1, seed=1).tensors[1:]]
    ),
    (),
    t4a.SectorMismatchError,
    "MPS bond 0",
)
row(
    "MPS-mixed-symmetric-dense",
    lambda: t4a.MPS([NW_SYM.tensors[0], *NW_PSI.tensors[1:]]),
    (),
    t4a.Tensor4allTypeError,
    "all SymmetricTensor or all dense",
)
row(
    "MPO.from_opsum-conserve-breaking",
    lambda: t4a.MPO.from_opsum(t4a.OpSum([(1.0, "Sx", 0, "Sx", 1)]), 3, conserve="Sz"),
    (),
    t4a.NonConservingError,
    "term 0 (1.0 * Sx(0) Sx(1)) does not conserve 2Sz",
)
row(
    "MPO.from_opsum-conserve-net-charge",
    lambda: t4a.MPO.from_opsum(t4a.OpSum([(1.0, "S+", 0)]), 3, conserve="Sz"),
    (),
    t4a.NonConservingError,
    "changes 2Sz by 2",
)
row(
    "MPO.from_opsum-conserve-undeclared",
    lambda: t4a.MPO.from_opsum(t4a.OpSum([(1.0, "Z", 0)]), 3, "pauli", conserve="Sz"),
    (),
    t4a.InvalidOptionError,
    "does not declare",
)
row(
    "dmrg-symmetric-psi0-sector",
    lambda: t4a.dmrg(t4a.models.heisenberg(4), NW_SYM, sector=1),
    (),
    t4a.InvalidOptionError,
    "psi0 is in the sector Sz = 0",
)
row(
    "dmrg-symmetric-psi0-other-charge",
    lambda: t4a.dmrg(t4a.models.heisenberg(4, conserve="Sz"), t4a.MPS.random(4, charge=0, local="pauli")),
    (),
    t4a.InvalidOptionError,
    "the MPO conserves 'Sz' but psi0 'parity'",
)
row(
    "MPS.expect-nan-operator",
    lambda: NW_PSI.expect(np.full((2, 2), NW_NAN), 0),
    (),
    t4a.NonFiniteError,
    "holds NaN or infinity",
)
row("MPS.expect-unknown-operator", lambda: NW_PSI.expect("Q", 0), (), t4a.UnknownOperatorError, "'Q'")
row(
    "MPS.correlation-zero", lambda: NW_ZERO.correlation("Sz", "Sz", 0, 2), (), t4a.ZeroNormError, "the state has norm 0"
)
row("MPS.correlation-site", lambda: NW_PSI.correlation("Sz", "Sz", 0, 9), (), t4a.SiteOutOfRangeError, "9")
row(
    "MPS.correlation-odd-string",
    lambda: NW_PSI.correlation("Cdag", "C", 0, 3, local="fermion", string="C"),
    (),
    t4a.InvalidOptionError,
    "string 'C' is odd",
)
row(
    "MPS.correlation-odd-pair",
    lambda: NW_PSI.correlation("Cdag*N", "N", 0, 3, local="fermion"),
    (),
    t4a.InvalidOptionError,
    "changes the fermion parity",
)
row("MPS.expect-empty-factor", lambda: NW_PSI.expect("Sz**Sz", 0), (), t4a.InvalidOptionError, "empty factor")
row(
    "MPS.correlation_matrix-unknown-operator",
    lambda: NW_PSI.correlation_matrix("Sz", "Q"),
    (),
    t4a.UnknownOperatorError,
    "'Q'",
)
row(
    "MPS.correlation_matrix-string-shape",
    lambda: NW_PSI.correlation_matrix("Sz", "Sz", string=np.eye(3)),
    (),
    t4a.DimensionMismatchError,
    "must be 2x2, got shape (3, 3)",
)
row(
    "MPS.correlation_matrix-sites",
    lambda: NW_PSI.correlation_matrix("Sz", "Sz", sites=[0, 9]),
    (),
    t4a.SiteOutOfRangeError,
    "site 9 is outside 0..3",
)
row(
    "MPS.correlation_matrix-sites-int",
    lambda: NW_PSI.correlation_matrix("Sz", "Sz", sites=2),
    (),
    t4a.Tensor4allTypeError,
    "sites must be a list",
)
row("MPS.correlation_matrix-zero", lambda: NW_ZERO.correlation_matrix("Sz", "Sz"), (), t4a.ZeroNormError, "norm 0")
row("overlap-not-mps", t4a.overlap, (NW_PSI, 5), t4a.Tensor4allTypeError, "overlap expects two MPS")
row(
    "overlap-lengths",
    t4a.overlap,
    (NW_PSI, t4a.MPS.random(3, bond_dim=2)),
    t4a.DimensionMismatchError,
    "differ in length",
)
row(
    "expectation-result",
    lambda: t4a.expectation(t4a.DMRGResult(0.0, NW_PSI), NW_H),
    (),
    t4a.Tensor4allTypeError,
    "got DMRGResult (pass its .state)",
)
row("expectation-zero", t4a.expectation, (NW_ZERO, models.heisenberg(3)), t4a.ZeroNormError, "norm 0")
row(
    "MPO.is_hermitian-tol-nan",
    lambda: NW_H.is_hermitian(tol=NW_NAN),
    (),
    t4a.InvalidOptionError,
    "tol must be a finite number",
)
row("MPO.from_opsum-rtol-nan", lambda: t4a.MPO.from_opsum(NW_OS, 4, rtol=NW_NAN), (), t4a.InvalidOptionError, "rtol")
row("MPO.from_opsum-rtol-two", lambda: t4a.MPO.from_opsum(NW_OS, 4, rtol=2.0), (), t4a.InvalidOptionError, "rtol")
row(
    "OpSum.check_sites-str",
    lambda: NW_OS.check_sites("4"),
    (),
    t4a.Tensor4allTypeError,
    "L (number of sites) must be a positive integer",
)
row("OpSum.check_sites-outside", lambda: NW_OS.check_sites(2), (), t4a.SiteOutOfRangeError, "outside 0..1")
row("Term-nan", lambda: t4a.OpSum([t4a.Term(NW_NAN, (("Sz", 0),))]), (), t4a.NonFiniteError, "must be finite")
row("local_space-unknown", t4a.local_space, ("spin-7",), t4a.UnknownLocalSpaceError, "spin-7")
row(
    "LocalSpace.factor-unhashable",
    lambda: t4a.local_space("pauli").factor(["X"]),
    (),
    t4a.UnknownOperatorError,
    "valid operators: Id, X, Y, Z",
)
row(
    "LocalSpace.operator_names-dim0",
    lambda: t4a.LocalSpace("q", 0, {}).operator_names(),
    (),
    t4a.BondDimensionError,
    "dim",
)
row(
    "LocalSpace.matrix-shape",
    lambda: t4a.LocalSpace("q", 2, {"A": (1, np.eye(3))}).matrix("A"),
    (),
    t4a.DimensionMismatchError,
    "must be a real 2x2 matrix",
)
row(
    "LocalSpace-fermionic-unknown",
    lambda: t4a.LocalSpace("q", 2, {"A": (1, np.eye(2))}, fermionic={"C"}),
    (),
    t4a.UnknownOperatorError,
    "fermionic operators 'C'",
)
row(
    "MPO.from_opsum-odd-fermions",
    lambda: t4a.MPO.from_opsum(t4a.OpSum([(1.0, "Cdag", 0, "C", 1, "C", 2)]), 3, "fermion"),
    (),
    t4a.OpSumTermError,
    "odd number",
)
row("models.heisenberg-J-nan", models.heisenberg, (4,), t4a.NonFiniteError, "J must be finite", J=NW_NAN)
row(
    "models.heisenberg_opsum-J-str", models.heisenberg_opsum, (4,), t4a.Tensor4allTypeError, "J must be a number", J="a"
)
row("models.xxz-Jz-inf", models.xxz, (4,), t4a.NonFiniteError, "Jz must be finite", Jz=NW_INF)
row("models.tfim-g-nan", models.tfim, (4,), t4a.NonFiniteError, "g must be finite", g=NW_NAN)
row("models.xx-h-nan", models.xx, (4,), t4a.NonFiniteError, "h must be finite", h=NW_NAN)
row("models.tfim_opsum-J-str", models.tfim_opsum, (4,), t4a.Tensor4allTypeError, "J must be a number", J="1")
row("models.hubbard-L1", models.hubbard, (1,), t4a.InvalidOptionError, "at least 2 sites")
row(
    "models.hubbard-conserve",
    models.hubbard,
    (4,),
    t4a.InvalidOptionError,
    "None, 'N', 'Sz' or 'N,Sz'",
    conserve="parity",
)
row("models.hubbard-U-nan", models.hubbard, (4,), t4a.NonFiniteError, "U must be finite", U=NW_NAN)
row("models.hubbard_opsum-t-str", models.hubbard_opsum, (4,), t4a.Tensor4allTypeError, "t must be a number", t="1")
row("models.hubbard_opsum-L1", models.hubbard_opsum, (1,), t4a.InvalidOptionError, "at least 2 sites")
row(
    "dmrg-hubbard-conserve-Sz",
    lambda: t4a.dmrg(models.hubbard(4, conserve="Sz")),
    (),
    t4a.InvalidOptionError,
    "conserve another charge ('N,Sz': N and Sz together, or 'N')",
)
row(
    "dmrg-hubbard-sector-pair",
    lambda: t4a.dmrg(models.hubbard(4, conserve="N,Sz"), sector=4),
    (),
    t4a.Tensor4allTypeError,
    "must be a pair (N,Sz)",
)
row(
    "dmrg-hubbard-sector-keys",
    lambda: t4a.dmrg(models.hubbard(4, conserve="N,Sz"), sector={"N": 4}),
    (),
    t4a.InvalidOptionError,
    "must give N, Sz",
)
row(
    "dmrg-hubbard-sector-empty",
    lambda: t4a.dmrg(models.hubbard(4, conserve="N,Sz"), sector=(3, 0)),
    (),
    t4a.SymmetryViolationError,
    "has no states",
)
for kwargs, exc, fragment in (
    (dict(cutoff=NW_INF), t4a.InvalidOptionError, "cutoff"),
    (dict(tol=NW_NAN), t4a.InvalidOptionError, "tol"),
    (dict(tol=-1.0), t4a.InvalidOptionError, "tol"),
    (dict(two_site="False"), t4a.Tensor4allTypeError, "two_site"),
    (dict(seed=-1), t4a.InvalidOptionError, "seed"),
    (dict(callback=5), t4a.Tensor4allTypeError, "callback"),
    (dict(progress="bar"), t4a.Tensor4allTypeError, "progress"),
    (dict(noise=1e200), t4a.InvalidOptionError, "noise (a relative size in [0, 1)"),
    (dict(noise=[1e-4, 1.0]), t4a.InvalidOptionError, "must be < 1"),
    (dict(conserve="U1"), t4a.InvalidOptionError, "conserve must be one of"),
    (dict(sector=1), t4a.InvalidOptionError, "sector=... needs conserve"),
    (dict(conserve="parity"), t4a.InvalidOptionError, "does not declare"),
):
    row(
        "dmrg-" + ",".join(f"{k}={v!r}" for k, v in kwargs.items()),
        t4a.dmrg,
        (NW_H,),
        exc,
        fragment,
        max_bond=4,
        **kwargs,
    )
