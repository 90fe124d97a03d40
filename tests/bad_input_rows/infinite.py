"""Bad-input rows of tensor4all.infinite: iMPS, InfiniteMPO, vumps, idmrg, itebd, itdvp, fits."""

from __future__ import annotations

import numpy as np

import tensor4all as t4a
from tensor4all import models

from .common import new_table

ROWS, row = new_table()


# ---- infinite systems (tensor4all.infinite): iMPS, InfiniteMPO, vumps, itebd -----------------
_IPSI = t4a.iMPS.product_state([0, 1])
_IH = t4a.infinite_model("xx", cell=2)
row(
    "iMPS.from_tensors-bonds",
    t4a.iMPS.from_tensors,
    ([np.ones((2, 2, 3))],),
    t4a.DimensionMismatchError,
    "must match the left bond",
)
row("iMPS.random-max-bond", t4a.iMPS.random, ("spin-1/2", 1, 0), t4a.BondDimensionError, "max_bond")
row("iMPS.product_state-index", t4a.iMPS.product_state, ([0, 5],), t4a.InvalidOptionError, "outside 0..1")
row("iMPS.AC-site", lambda: _IPSI.AC("0"), (), t4a.Tensor4allTypeError, "must be an integer")
row("iMPS.schmidt_values-bond", lambda: _IPSI.schmidt_values(0.5), (), t4a.Tensor4allTypeError, "must be an integer")
row(
    "iMPS.entanglement_entropy-bond",
    lambda: _IPSI.entanglement_entropy("a"),
    (),
    t4a.Tensor4allTypeError,
    "must be an integer",
)
row(
    "iMPS.entanglement_spectrum-bond",
    lambda: _IPSI.entanglement_spectrum(None),
    (),
    t4a.Tensor4allTypeError,
    "must be an integer",
)
row(
    "InfiniteMPO.from_opsum-outside-cell",
    t4a.InfiniteMPO.from_opsum,
    (t4a.OpSum([(1.0, "Sz", 2, "Sz", 3)]), 2),
    t4a.SiteOutOfRangeError,
    "must lie in the cell",
)
row("infinite_model-unknown", t4a.infinite_model, ("ising",), t4a.InvalidOptionError, "valid models")
row("vumps-not-impo", t4a.vumps, (models.tfim(4),), t4a.Tensor4allTypeError, "must be an InfiniteMPO")
row("vumps-cell", t4a.vumps, (t4a.infinite_model("tfim"), _IPSI), t4a.DimensionMismatchError, "same cell")
row("itebd-steps", t4a.itebd, (_IH, _IPSI, 1.0, 0.3), t4a.InvalidOptionError, "whole number")
row(
    "itebd-local-space",
    t4a.itebd,
    (t4a.infinite_model("heisenberg", cell=2), t4a.iMPS.product_state([0, 2], "spin-1"), 0.1, 0.05),
    t4a.DimensionMismatchError,
    "physical dimensions",
)
row("itdvp-not-impo", t4a.itdvp, (models.tfim(4), _IPSI, 1.0, 0.1), t4a.Tensor4allTypeError, "InfiniteMPO")
row("itdvp-dt", t4a.itdvp, (_IH, _IPSI, 1.0, 0.0), t4a.InvalidOptionError, "dt must be positive")
row("itdvp-steps", t4a.itdvp, (_IH, _IPSI, 1.0, 0.3), t4a.InvalidOptionError, "whole number")
row("itdvp-max-bond", t4a.itdvp, (_IH, _IPSI, 1.0, 0.1), t4a.BondDimensionError, "max_bond", max_bond=0)
row(
    "itdvp-cells",
    t4a.itdvp,
    (t4a.infinite_model("tfim", cell=3), _IPSI, 1.0, 0.1),
    t4a.DimensionMismatchError,
    "divide one another",
)
row(
    "itdvp-local-space",
    t4a.itdvp,
    (t4a.infinite_model("heisenberg", spin="1", cell=2), _IPSI, 1.0, 0.1),
    t4a.DimensionMismatchError,
    "physical dimensions",
)
row(
    "fit_correlation_length-distances",
    t4a.infinite.fit_correlation_length,
    (_IPSI, "Sz", [1, 2]),
    t4a.InvalidOptionError,
    "at least 3 different distances",
)
row(
    "fit_decay-form",
    t4a.infinite.fit_decay,
    ([1, 2, 3], [1.0, 0.5, 0.2], "power"),
    t4a.InvalidOptionError,
    "valid forms",
)
row("idmrg-not-impo", t4a.idmrg, (models.tfim(4),), t4a.Tensor4allTypeError, "must be an InfiniteMPO")
row("idmrg-cell", t4a.idmrg, (_IH, t4a.iMPS.product_state([0, 1, 0])), t4a.DimensionMismatchError, "cell")
row(
    "idmrg-charge-per-cell",
    t4a.idmrg,
    (t4a.infinite_model("heisenberg", cell=3),),
    t4a.SymmetryViolationError,
    "cannot have the charge 0",
    conserve="Sz",
)
row("idmrg-conserve", t4a.idmrg, (_IH,), t4a.InvalidOptionError, "conserve must be one of", conserve="N")
row("vumps-conserve", t4a.vumps, (_IH,), t4a.InvalidOptionError, "conserve must be one of", conserve="N")
row(
    "vumps-charge-per-cell",
    t4a.vumps,
    (t4a.infinite_model("heisenberg", cell=3),),
    t4a.SymmetryViolationError,
    "cannot have the charge 0",
    conserve="Sz",
)
row(
    "vumps-conserve-psi0",
    t4a.vumps,
    (_IH, t4a.iMPS.product_state([0, 1])),
    t4a.InvalidOptionError,
    "psi0=None",
    conserve="Sz",
)
