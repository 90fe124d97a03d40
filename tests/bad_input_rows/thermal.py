"""Bad-input rows of tensor4all.thermal: thermal_state, thermodynamics, metts, evolve_thermal."""

from __future__ import annotations

import tensor4all as t4a
from tensor4all import models

from .common import new_table
from .networks import NW_H, NW_PSI

ROWS, row = new_table()


# ---- finite temperature (tensor4all.thermal): thermal_state, thermodynamics, metts ----------
_TH = models.xx(4, conserve="Sz")
row("thermal_state-beta-zero", t4a.thermal_state, (_TH, 0.0), t4a.InvalidOptionError, "beta must be positive")
row("thermal_state-beta-negative", t4a.thermal_state, (_TH, -1.0), t4a.InvalidOptionError, "beta must be positive")
row(
    "thermal_state-dbeta-not-dividing",
    t4a.thermal_state,
    (_TH, 1.0),
    t4a.InvalidOptionError,
    "does not divide beta",
    dbeta=0.3,
)
row("thermal_state-empty-sector", t4a.thermal_state, (_TH, 1.0), t4a.SymmetryViolationError, "has no states", sector=5)
row("thermal_state-not-mpo", t4a.thermal_state, (NW_PSI, 1.0), t4a.Tensor4allTypeError, "H must be an MPO")
row(
    "thermal_state-method",
    t4a.thermal_state,
    (_TH, 1.0),
    t4a.InvalidOptionError,
    "method must be one of",
    method="dmrg",
)
row(
    "thermal_state-conserve",
    t4a.thermal_state,
    (_TH, 1.0),
    t4a.InvalidOptionError,
    "conserve must be one of",
    conserve="S",
)
row("thermodynamics-beta-zero", t4a.thermodynamics, (_TH, 0.0), t4a.InvalidOptionError, "beta must be positive")
row("thermodynamics-mode", t4a.thermodynamics, (_TH, 1.0), t4a.InvalidOptionError, "mode must be one of", mode="both")
row("thermodynamics-field", t4a.thermodynamics, (_TH, 1.0), t4a.UnknownOperatorError, "unknown operator", field="Q")
row("metts-zero-samples", t4a.metts, (_TH, 1.0, 0), t4a.InvalidOptionError, "n_samples (samples per chain) must be")
row("metts-beta-zero", t4a.metts, (_TH, 0.0, 2), t4a.InvalidOptionError, "beta must be positive")
row("metts_tasks-bases", t4a.metts_tasks, (_TH, 1.0, 2), t4a.InvalidOptionError, "bases must be one of", bases="y")
row(
    "metts_tasks-conserve-x",
    t4a.metts_tasks,
    (_TH, 1.0, 2),
    t4a.InvalidOptionError,
    "needs basis states",
    conserve="Sz",
)
row("metts-client", t4a.metts, (_TH, 1.0, 1), t4a.Tensor4allTypeError, "client must be", client="tcp://nowhere")
row(
    "thermal_state-splitting",
    t4a.thermal_state,
    (_TH, 1.0),
    t4a.InvalidOptionError,
    "splitting must be",
    splitting="odd",
)
row("tebd-splitting", t4a.tebd, (NW_H, NW_PSI, 1.0, 0.5), t4a.InvalidOptionError, "splitting must be", splitting="odd")
row("thermodynamics-dbeta", t4a.thermodynamics, (_TH, 1.0), t4a.InvalidOptionError, "does not divide beta", dbeta=0.3)
row(
    "thermodynamics-empty-sector", t4a.thermodynamics, (_TH, 1.0), t4a.SymmetryViolationError, "has no states", sector=5
)
row(
    "thermodynamics-differentiate",
    t4a.thermodynamics,
    (_TH, 1.0),
    t4a.InvalidOptionError,
    "differentiate must be one of",
    differentiate="C",
)
row("thermodynamics-callback", t4a.thermodynamics, (_TH, 1.0), t4a.Tensor4allTypeError, "callback", callback=3)
row("metts-dbeta", t4a.metts, (_TH, 1.0, 2), t4a.InvalidOptionError, "does not divide beta", dbeta=0.3)
row("evolve_thermal-state", t4a.evolve_thermal, (NW_H, _TH, 1.0, 0.5), t4a.Tensor4allTypeError, "state must be")
row(
    "evolve_thermal-disentangle",
    t4a.evolve_thermal,
    (t4a.MPS.random(4, 4, bond_dim=2, seed=1), _TH, 1.0, 0.5),
    t4a.InvalidOptionError,
    "disentangle must be None or one of",
    disentangle="renyi",
)
row(
    "evolve_thermal-sites",
    t4a.evolve_thermal,
    (NW_PSI, _TH, 1.0, 0.5),
    t4a.InvalidOptionError,
    "but H's purification has",
)
row("thermodynamics-engine", t4a.thermodynamics, (_TH, 1.0), t4a.InvalidOptionError, "engine must be", engine="jit")
row("metts-chains-zero", t4a.metts, (_TH, 1.0, 2), t4a.InvalidOptionError, "chains", chains=0)
row(
    "references.thermal_reference-model",
    t4a.references.thermal_reference,
    ("ising", 4, [1.0], {}),
    t4a.InvalidOptionError,
    "model must be one of",
)
row(
    "references.free_fermion_thermodynamics-beta",
    t4a.references.free_fermion_thermodynamics,
    ([0.5, -0.5], [-1.0]),
    t4a.InvalidOptionError,
    "betas finite and >= 0",
)
