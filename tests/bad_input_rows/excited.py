"""Bad-input rows of excited states and gaps: excited_states, gap, dmrg's orthogonal_to."""

from __future__ import annotations

import tensor4all as t4a
from tensor4all import models

from .common import new_table
from .networks import NW_PSI, NW_ZERO

ROWS, row = new_table()


# ---- issue 51: excited states and gaps ------------------------------------------------------
row("excited_states-n-zero", t4a.excited_states, (models.heisenberg(4), 0), t4a.InvalidOptionError, "n must be")
row("excited_states-not-mpo", t4a.excited_states, (NW_PSI, 2), t4a.Tensor4allTypeError, "expects an MPO")
row(
    "excited_states-sector-too-small",
    t4a.excited_states,
    (models.heisenberg(4), 2),
    t4a.NoOrthogonalStateError,
    "holds 1 states, fewer than n = 2",
    conserve="Sz",
    sector=2,
)
row(
    "excited_states-psi0-count",
    t4a.excited_states,
    (models.heisenberg(4), 3),
    t4a.InvalidOptionError,
    "psi0 has",
    psi0=[NW_PSI],
)
row("gap-sectors-one", t4a.gap, (models.heisenberg(4),), t4a.InvalidOptionError, "a pair", conserve="Sz", sectors=(0,))
row("gap-sectors-no-charge", t4a.gap, (models.heisenberg(4),), t4a.InvalidOptionError, "needs conserve", sectors=(0, 1))
row(
    "dmrg-orthogonal_to-mps",
    t4a.dmrg,
    (models.heisenberg(4),),
    t4a.Tensor4allTypeError,
    "list of MPS",
    orthogonal_to=NW_PSI,
)
row(
    "dmrg-orthogonal_to-zero",
    t4a.dmrg,
    (models.heisenberg(3),),
    t4a.ZeroNormError,
    "orthogonal_to[0] has norm 0",
    orthogonal_to=[NW_ZERO],
)
row("dmrg-zero-start", t4a.dmrg, (models.heisenberg(3), NW_ZERO), t4a.ZeroNormError, "psi0 has norm 0", max_bond=4)
