"""Bad-input rows of MPO application, MPS arithmetic, TEBD and TDVP."""

from __future__ import annotations

import numpy as np

import tensor4all as t4a
from tensor4all import models

from .common import new_table
from .networks import NW_H, NW_INF, NW_NAN, NW_PSI, NW_SYM, NW_ZERO

ROWS, row = new_table()


# ---- issue 24: MPO application and MPS arithmetic ------------------------------------------
row("apply-swapped", t4a.apply, (NW_PSI, NW_H), t4a.Tensor4allTypeError, "the MPO comes first")
row("apply-length", t4a.apply, (NW_H, t4a.MPS.random(5, bond_dim=2)), t4a.DimensionMismatchError, "the MPS has 5 sites")
row(
    "apply-method",
    t4a.apply,
    (NW_H, NW_PSI),
    t4a.InvalidOptionError,
    "valid methods: zipup, fit, naive",
    method="exact",
)
row("apply-max_bond", t4a.apply, (NW_H, NW_PSI), t4a.BondDimensionError, "apply: max_bond", max_bond=0)
row("apply-cutoff-nan", t4a.apply, (NW_H, NW_PSI), t4a.InvalidOptionError, "apply: cutoff", cutoff=NW_NAN)
row("apply-tol", t4a.apply, (NW_H, NW_PSI), t4a.InvalidOptionError, "apply: tol", method="fit", tol=-1.0)
row("apply-threads-negative", t4a.apply, (NW_H, NW_PSI), t4a.InvalidOptionError, "threads must be None", threads=-1)
row("apply-threads-float", t4a.apply, (NW_H, NW_PSI), t4a.Tensor4allTypeError, "threads must be None", threads=1.5)
row("add-empty", t4a.add, (), t4a.Tensor4allTypeError, "add needs at least one MPS")
row("add-not-mps", t4a.add, (NW_PSI, NW_H), t4a.Tensor4allTypeError, "operand 1 must be an MPS")
row("add-cutoff", t4a.add, (NW_PSI, NW_PSI), t4a.InvalidOptionError, "add: cutoff", cutoff=1.0)
row(
    "MPS.add-lengths",
    lambda: NW_PSI.add(t4a.MPS.random(3, bond_dim=2)),
    (),
    t4a.DimensionMismatchError,
    "differ in length",
)
row("MPS.add-max_bond", lambda: NW_PSI.add(NW_PSI, max_bond=-1), (), t4a.BondDimensionError, "max_bond")
row("MPS.__add__-dense-symmetric", lambda: NW_PSI + NW_SYM, (), t4a.Tensor4allTypeError, ".dense()")
row(
    "MPS.__add__-sectors",
    lambda: NW_SYM + t4a.MPS.random(4, bond_dim=2, charge=1),
    (),
    t4a.SectorMismatchError,
    "different sectors",
)
row("MPS.__radd__-number", lambda: 1.0 + NW_PSI, (), t4a.Tensor4allTypeError, "operand 0 must be an MPS")
row(
    "MPS.__sub__-phys-dims",
    lambda: NW_PSI - t4a.MPS.random(4, d=3, bond_dim=2),
    (),
    t4a.DimensionMismatchError,
    "physical dimensions",
)
row("MPS.__mul__-str", lambda: NW_PSI * "2", (), t4a.Tensor4allTypeError, "the factor must be a number")
row("MPS.__rmul__-mps", lambda: NW_PSI.__rmul__(NW_PSI), (), t4a.Tensor4allTypeError, "tensor4all.overlap")
row("MPS.__mul__-inf", lambda: NW_PSI * NW_INF, (), t4a.NonFiniteError, "must be finite")
row("MPS.__truediv__-zero", lambda: NW_PSI / 0.0, (), t4a.InvalidOptionError, "division by zero")


# ---- issue 24 (part 2): TEBD (tensor4all.tebd) -------
TE_H, TE_PSI = models.heisenberg(4), t4a.MPS.product_state([0, 1, 0, 1])
for label, args, kwargs, exc, fragment in (
    ("dt-zero", (TE_H, TE_PSI, 0.2, 0.0), {}, t4a.InvalidOptionError, "dt must be positive"),
    ("dt-negative", (TE_H, TE_PSI, 0.2, -0.1), {}, t4a.InvalidOptionError, "dt"),
    ("t-not-multiple", (TE_H, TE_PSI, 1.0, 0.3), {}, t4a.InvalidOptionError, "is not a multiple of dt"),
    ("t-nan", (TE_H, TE_PSI, NW_NAN, 0.1), {}, t4a.InvalidOptionError, "finite"),
    ("order-3", (TE_H, TE_PSI, 0.2, 0.1), dict(order=3), t4a.InvalidOptionError, "order must be one of 2, 4"),
    ("max_bond-0", (TE_H, TE_PSI, 0.2, 0.1), dict(max_bond=0), t4a.BondDimensionError, "max_bond"),
    ("cutoff-one", (TE_H, TE_PSI, 0.2, 0.1), dict(cutoff=1.0), t4a.InvalidOptionError, "cutoff"),
    ("normalize-str", (TE_H, TE_PSI, 0.2, 0.1), dict(normalize="no"), t4a.Tensor4allTypeError, "normalize"),
    ("every-0", (TE_H, TE_PSI, 0.2, 0.1), dict(every=0), t4a.InvalidOptionError, "every"),
    ("callback-int", (TE_H, TE_PSI, 0.2, 0.1), dict(callback=3), t4a.Tensor4allTypeError, "callback"),
    (
        "observables-list",
        (TE_H, TE_PSI, 0.2, 0.1),
        dict(observables=["Sz"]),
        t4a.Tensor4allTypeError,
        "observables must be a mapping",
    ),
    ("psi-list", (TE_H, TE_PSI.tensors, 0.2, 0.1), {}, t4a.Tensor4allTypeError, "psi must be an MPS"),
    ("H-str", ("heisenberg", TE_PSI, 0.2, 0.1), {}, t4a.Tensor4allTypeError, "H must be an MPO"),
    ("H-callable-int", (lambda t: 5, TE_PSI, 0.2, 0.1), {}, t4a.Tensor4allTypeError, "returned int"),
    (
        "sites-mismatch",
        (models.heisenberg(5), TE_PSI, 0.2, 0.1),
        {},
        t4a.DimensionMismatchError,
        "the MPS has 4 sites but the MPO has 5",
    ),
    (
        "bond-count",
        ([np.eye(4)] * 2, TE_PSI, 0.2, 0.1),
        {},
        t4a.DimensionMismatchError,
        "2 bond Hamiltonians for a chain of 4 sites",
    ),
    (
        "gate-dimension",
        ([np.eye(4), np.eye(3), np.eye(4)], TE_PSI, 0.2, 0.1),
        {},
        t4a.DimensionMismatchError,
        "bond Hamiltonian 1 has shape (3, 3)",
    ),
    ("gate-nan", ([np.full((4, 4), NW_NAN)] * 3, TE_PSI, 0.2, 0.1), {}, t4a.NonFiniteError, "NaN or infinity"),
    (
        "three-site-term",
        (t4a.MPO.from_opsum(t4a.OpSum([(1.0, "Sz", 0, "Sz", 1, "Sz", 2)]), 4), TE_PSI, 0.2, 0.1),
        {},
        t4a.InvalidOptionError,
        "acts on 3 sites",
    ),
    (
        "mpo-without-opsum",
        (t4a.MPO(TE_H.tensors), TE_PSI, 0.2, 0.1),
        {},
        t4a.InvalidOptionError,
        "not compiled from an OpSum",
    ),
    (
        "non-conserving",
        (models.tfim(4), t4a.MPS.product_state([0, 1, 0, 1], conserve="Sz"), 0.2, 0.1),
        {},
        t4a.NonConservingError,
        "changes the conserved charge",
    ),
    ("zero-state", (models.heisenberg(3), NW_ZERO, 0.2, 0.1), {}, t4a.ZeroNormError, "norm 0"),
):
    row(f"tebd-{label}", t4a.tebd, args, exc, fragment, **kwargs)


# ---- issue 24 (part 1): TDVP (tensor4all.tdvp) -------
TD_NONHERM = t4a.MPO(
    [np.asarray(w) + (0.3j * np.abs(np.asarray(w)) if i == 1 else 0) for i, w in enumerate(TE_H.tensors)]
)
for label, args, kwargs, exc, fragment in (
    ("dt-zero", (TE_H, TE_PSI, 0.2, 0.0), {}, t4a.InvalidOptionError, "dt must be positive"),
    ("t-not-multiple", (TE_H, TE_PSI, 1.0, 0.3), {}, t4a.InvalidOptionError, "is not a multiple of dt"),
    ("t-inf", (TE_H, TE_PSI, NW_INF, 0.1), {}, t4a.InvalidOptionError, "finite"),
    ("max_bond-0", (TE_H, TE_PSI, 0.2, 0.1), dict(max_bond=0), t4a.BondDimensionError, "max_bond"),
    ("cutoff-one", (TE_H, TE_PSI, 0.2, 0.1), dict(cutoff=1.0), t4a.InvalidOptionError, "cutoff"),
    ("krylov_tol", (TE_H, TE_PSI, 0.2, 0.1), dict(krylov_tol=0.0), t4a.InvalidOptionError, "krylov_tol"),
    ("two_site-str", (TE_H, TE_PSI, 0.2, 0.1), dict(two_site="yes"), t4a.Tensor4allTypeError, "two_site"),
    ("every-0", (TE_H, TE_PSI, 0.2, 0.1), dict(every=0), t4a.InvalidOptionError, "every"),
    ("progress-int", (TE_H, TE_PSI, 0.2, 0.1), dict(progress=3), t4a.Tensor4allTypeError, "progress"),
    ("observables-spec", (TE_H, TE_PSI, 0.2, 0.1), dict(observables={"x": 3}), t4a.Tensor4allTypeError, "has spec 3"),
    (
        "observables-correlation-key",
        (TE_H, TE_PSI, 0.2, 0.1),
        dict(observables={"x": {"pair": ("Sz", "Sz"), "sting": "Sz"}}),
        t4a.InvalidOptionError,
        "unknown key 'sting'",
    ),
    ("psi-list", (TE_H, TE_PSI.tensors, 0.2, 0.1), {}, t4a.Tensor4allTypeError, "psi must be an MPS"),
    ("H-str", ("heisenberg", TE_PSI, 0.2, 0.1), {}, t4a.Tensor4allTypeError, "H must be an MPO"),
    ("sites-mismatch", (models.heisenberg(5), TE_PSI, 0.2, 0.1), {}, t4a.DimensionMismatchError, "5"),
    ("non-hermitian", (TD_NONHERM, TE_PSI, 0.2, 0.1), {}, t4a.NonHermitianError, "allow_nonhermitian"),
    ("zero-state", (models.heisenberg(3), NW_ZERO, 0.2, 0.1), {}, t4a.ZeroNormError, "norm 0"),
    (
        "symmetric-other-space",
        (models.tfim(4), t4a.MPS.product_state([0, 1, 0, 1], conserve="Sz"), 0.2, 0.1),
        {},
        t4a.InvalidOptionError,
        "local space",
    ),
):
    row(f"tdvp-{label}", t4a.tdvp, args, exc, fragment, **kwargs)
