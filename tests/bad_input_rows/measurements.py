"""Bad-input rows of tensor4all.measurements and the lattice references (tensor4all.references)."""

from __future__ import annotations

import tensor4all as t4a

from .common import new_table

ROWS, row = new_table()


# ---- tensor4all.measurements and the lattice references (tensor4all.references) ------
MS = t4a.measurements
MS_E = t4a.MPS.random(4, 4, bond_dim=2, seed=3)  # electron sites (dimension 4)
row("measurements.density-not-mps", MS.density, ("psi",), t4a.Tensor4allTypeError, "expected an MPS, got str")
row("measurements.density-spin-space", MS.density, (MS_E,), t4a.InvalidOptionError, "has no Ntot/N", local="spin-1/2")
row(
    "measurements.density-dimension",
    MS.density,
    (MS_E,),
    t4a.DimensionMismatchError,
    "has dimension 2",
    local="fermion",
)
row(
    "measurements.density-unknown-space",
    MS.density,
    (MS_E,),
    t4a.UnknownLocalSpaceError,
    "unknown local space",
    local="quark",
)
row(
    "measurements.density-no-space",
    MS.density,
    (t4a.MPS.random(3, 5),),
    t4a.InvalidOptionError,
    "no built-in local space of dimension 5 has",
)
row(
    "measurements.double_occupancy-tj", MS.double_occupancy, (MS_E,), t4a.InvalidOptionError, "has no Nupdn", local="tj"
)
row(
    "measurements.spin_correlation-site",
    MS.spin_correlation,
    (MS_E, 4),
    t4a.SiteOutOfRangeError,
    "site i 4 is outside 0..3",
)
row(
    "measurements.spin_correlation-site-float",
    MS.spin_correlation,
    (MS_E, 1.0),
    t4a.Tensor4allTypeError,
    "must be an integer site",
)
row(
    "measurements.charge_correlation-row-and-pairs",
    MS.charge_correlation,
    (MS_E, 0),
    t4a.InvalidOptionError,
    "not both",
    pairs=[(0, 1)],
)
row(
    "measurements.charge_correlation-pair-shape",
    MS.charge_correlation,
    (MS_E,),
    t4a.Tensor4allTypeError,
    "pair of sites",
    pairs=[(0, 1, 2)],
)
row(
    "measurements.one_particle_density_matrix-spin",
    MS.one_particle_density_matrix,
    (MS_E,),
    t4a.InvalidOptionError,
    "'up', 'dn' or None",
    spin="left",
)
row(
    "measurements.one_particle_density_matrix-spinless",
    MS.one_particle_density_matrix,
    (t4a.MPS.random(3, 2),),
    t4a.InvalidOptionError,
    "spinless",
    spin="up",
)
row(
    "measurements.entanglement_per_sector-dense",
    MS.entanglement_per_sector,
    (MS_E, 1),
    t4a.InvalidOptionError,
    "dense and has no charge sectors",
)
row(
    "measurements.entanglement_per_sector-bond",
    MS.entanglement_per_sector,
    (MS_E, 3),
    t4a.SiteOutOfRangeError,
    "bond 3 is outside 0..2",
)
REF = t4a.references
row(
    "references.hopping_matrix-bond",
    REF.hopping_matrix,
    (3, [(0, 3)]),
    t4a.InvalidOptionError,
    "bond (0, 3) must join two different sites of 0..2",
)
row(
    "references.hopping_matrix-bond-type",
    REF.hopping_matrix,
    (3, [(0, 1.5)]),
    t4a.Tensor4allTypeError,
    "pair of integer sites",
)
row(
    "references.free_fermion_energy-N",
    REF.free_fermion_energy,
    (3, [(0, 1)]),
    t4a.InvalidOptionError,
    "N = 4 has no states: it must lie in 0..3",
    N=4,
)
row(
    "references.free_electron_energy-Sz",
    REF.free_electron_energy,
    (3, [(0, 1)]),
    t4a.InvalidOptionError,
    "does not fit N = 2",
    N=2,
    Sz=0.5,
)
row(
    "references.sector_dimension-model",
    REF.sector_dimension,
    ("kitaev", 4),
    t4a.InvalidOptionError,
    "unknown model 'kitaev'",
)
row(
    "references.sector_dimension-charge",
    REF.sector_dimension,
    ("spinless", 4),
    t4a.InvalidOptionError,
    "'spinless' conserves N, not Sz",
    Sz=0.0,
)
row(
    "references.exact_sector_energy-too-big",
    REF.exact_sector_energy,
    ("hubbard", 8, [(0, 1)]),
    t4a.InvalidOptionError,
    "more than max_dim = 1000",
    max_dim=1000,
)
row(
    "references.exact_sector_energy-coupling",
    REF.exact_sector_energy,
    ("tj", 3, [(0, 1)]),
    t4a.InvalidOptionError,
    "'U' not a coupling of 'tj'",
    couplings={"U": 1.0},
)
row(
    "references.exact_sector_energy-coupling-nan",
    REF.exact_sector_energy,
    ("xxz", 3, [(0, 1)]),
    t4a.InvalidOptionError,
    "Jz must be a finite number",
    couplings={"Jz": float("nan")},
)
row(
    "references.exact_sector_energy-next-bonds",
    REF.exact_sector_energy,
    ("xxz", 3, [(0, 1)]),
    t4a.InvalidOptionError,
    "next_bonds are only used by 'j1j2'",
    next_bonds=[(0, 2)],
)
