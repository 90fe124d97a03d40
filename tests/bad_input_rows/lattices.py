"""Bad-input rows of tensor4all.lattices and the models built on a lattice."""

from __future__ import annotations

import numpy as np

import tensor4all as t4a
from tensor4all import models

from .common import new_table
from .networks import NW_INF, NW_NAN

ROWS, row = new_table()


# ---- issue 23: lattices (tensor4all.lattices) and the spin models on them -------
LAT = t4a.lattices
row("lattices.chain-L0", LAT.chain, (0,), t4a.BondDimensionError, "chain: L must be a positive integer")
row(
    "lattices.chain-periodic-str",
    LAT.chain,
    (4,),
    t4a.Tensor4allTypeError,
    "periodic must be True or False",
    periodic="yes",
)
row(
    "lattices.ladder-legs0", LAT.ladder, (4,), t4a.BondDimensionError, "ladder: legs must be a positive integer", legs=0
)
row("lattices.square-Lx-float", LAT.square, (2.5, 2), t4a.Tensor4allTypeError, "square: Lx must be a positive integer")
row(
    "lattices.square-xperiodic-None",
    LAT.square,
    (3, 2),
    t4a.Tensor4allTypeError,
    "xperiodic must be True or False",
    xperiodic=None,
)
row("lattices.triangular-Ly0", LAT.triangular, (3, 0), t4a.BondDimensionError, "triangular: Ly must be a positive")
row("lattices.chain-memory", LAT.chain, (10**12,), t4a.Tensor4allMemoryError, "chain lattice of 1000000000000 sites")
row("lattices.square-memory", LAT.square, (10**6, 10**6), t4a.Tensor4allMemoryError, "more than this machine")
row("lattices.ladder-memory", LAT.ladder, (10**12,), t4a.Tensor4allMemoryError, "more than this machine")
row("lattices.triangular-memory", LAT.triangular, (10**6, 10**6), t4a.Tensor4allMemoryError, "triangular lattice")
row("lattices.honeycomb-memory", LAT.honeycomb, (10**6, 10**6), t4a.Tensor4allMemoryError, "honeycomb lattice")
row(
    "lattices.honeycomb-odd-cylinder", LAT.honeycomb, (3, 3), t4a.InvalidOptionError, "needs an even Ly", yperiodic=True
)
row(
    "lattices.Lattice-bond-outside",
    LAT.Lattice,
    ("p", [[0, 0], [1, 0]], [(0, 2)]),
    t4a.InvalidOptionError,
    "outside 0..1",
)
row(
    "lattices.Lattice-self-bond",
    LAT.Lattice,
    ("p", [[0, 0], [1, 0]], [(1, 1)]),
    t4a.InvalidOptionError,
    "joins a site to itself",
)
row(
    "lattices.Lattice-bond-not-pair",
    LAT.Lattice,
    ("p", [[0, 0], [1, 0]], [(0, 1.0)]),
    t4a.Tensor4allTypeError,
    "is not a pair of ints",
)
row(
    "lattices.Lattice-bonds-not-iterable",
    LAT.Lattice,
    ("p", [[0, 0], [1, 0]], 3),
    t4a.Tensor4allTypeError,
    "iterable of (i, j) pairs",
)
row("lattices.Lattice-coords-shape", LAT.Lattice, ("p", [0, 1], []), t4a.InvalidOptionError, "N x 2 array")
row("lattices.Lattice-coords-str", LAT.Lattice, ("p", "ab", []), t4a.Tensor4allTypeError, "coords must be")
row("lattices.Lattice-coords-nan", LAT.Lattice, ("p", [[0, np.nan]], []), t4a.InvalidOptionError, "finite")
row("lattices.Lattice-name-int", LAT.Lattice, (3, [[0, 0]], []), t4a.Tensor4allTypeError, "name must be a str")
row(
    "lattices.Lattice-ordering-int",
    LAT.Lattice,
    ("p", [[0, 0]], []),
    t4a.Tensor4allTypeError,
    "ordering must be a str",
    ordering=1,
)
row("models.j1j2-J2-nan", models.j1j2, (LAT.square(2, 2),), t4a.NonFiniteError, "J2 must be finite", J2=NW_NAN)
row("models.j1j2-conserve", models.j1j2, (4,), t4a.InvalidOptionError, "None or 'Sz'", conserve="N")
row("models.j1j2-L0", models.j1j2, (0,), t4a.BondDimensionError, "L (number of sites) must be a positive integer")
row(
    "models.j1j2_opsum-J1-str",
    models.j1j2_opsum,
    (LAT.chain(4),),
    t4a.Tensor4allTypeError,
    "J1 must be a number",
    J1="1",
)
row(
    "models.heisenberg-lattice-h-inf",
    models.heisenberg,
    (LAT.triangular(2, 2),),
    t4a.NonFiniteError,
    "h must be finite",
    h=NW_INF,
)
row(
    "models.tfim-lattice-conserve",
    models.tfim,
    (LAT.honeycomb(2, 2),),
    t4a.InvalidOptionError,
    "None or 'parity'",
    conserve="Sz",
)
row("models.hubbard-lattice-1-site", models.hubbard, (LAT.chain(1),), t4a.InvalidOptionError, "at least 2 sites")
row(
    "models.hubbard-lattice-mu-inf",
    models.hubbard,
    (LAT.square(2, 2),),
    t4a.NonFiniteError,
    "mu must be finite",
    mu=NW_INF,
)
row("models.spinless_fermions-L1", models.spinless_fermions, (1,), t4a.InvalidOptionError, "at least 2 sites")
row(
    "models.spinless_fermions-L-str",
    models.spinless_fermions,
    ("4",),
    t4a.Tensor4allTypeError,
    "L (number of sites) must be a positive integer",
)
row(
    "models.spinless_fermions-conserve",
    models.spinless_fermions,
    (4,),
    t4a.InvalidOptionError,
    "None or 'N'",
    conserve="Sz",
)
row(
    "models.spinless_fermions-V-nan",
    models.spinless_fermions,
    (LAT.square(2, 2),),
    t4a.NonFiniteError,
    "V must be finite",
    V=NW_NAN,
)
row(
    "models.spinless_fermions_opsum-t-str",
    models.spinless_fermions_opsum,
    (4,),
    t4a.Tensor4allTypeError,
    "t must be a number",
    t="1",
)
row("models.tj-L0", models.tj, (0,), t4a.BondDimensionError, "L (number of sites) must be a positive integer")
row("models.tj-conserve", models.tj, (4,), t4a.InvalidOptionError, "None, 'N', 'Sz' or 'N,Sz'", conserve="parity")
row("models.tj-J-inf", models.tj, (LAT.ladder(2, 2),), t4a.NonFiniteError, "J must be finite", J=NW_INF)
row("models.tj_opsum-1-site", models.tj_opsum, (LAT.chain(1),), t4a.InvalidOptionError, "at least 2 sites")
row("models.tj_opsum-t-str", models.tj_opsum, (4,), t4a.Tensor4allTypeError, "t must be a number", t="1")
