"""Bad-input rows whose messages lead to the fix (issue 47, parts b-d): scans, TCI, quantics, sites, evolution."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import numpy as np

import tenferro as tf
import tenferro.linalg as la
import tensor4all as t4a
import tidu
from tensor4all import measurements as MS, models, quantics as QG, tci as TC
from tensor4all.symmetry import Leg as SY_Leg, U1 as SY_U1

from .common import M, new_table
from .quantics import QG_G
from .scans import SC_G, SC_T

ROWS, row = new_table()


# ---- issue 47: messages that lead to the fix -----------------------------------------------
# (b) scans and the CLI's shared checks before work starts
SB_DIR = tempfile.mkdtemp(prefix="t4a-scan-bad-inputs-")
atexit.register(shutil.rmtree, SB_DIR, True)
SB_AS_DIR = os.path.join(SB_DIR, "d.parquet")  # a directory with a table's name
os.mkdir(SB_AS_DIR)


class _SBBrokenTask(t4a.ScanTask):
    """A ScanTask whose run ends in a NaN observable (a run that broke down numerically)."""

    def _results(self, point):
        row = super()._results(point)
        row["X"] = float("nan")
        return row


# 2. a task is checked when built: the observables' sites on its chain, their operators, its settings together
row(
    "ScanTask-observable-site-out-of-range",
    t4a.ScanTask,
    ("tfim", {"L": 6}),
    t4a.SiteOutOfRangeError,
    "observable 'X@99': site 99 is outside the chain of L = 6 sites; valid sites: 0 .. 5, or -6 .. -1",
    observables=("X@99",),
)
row(
    "ScanTask-observable-negative-site",
    t4a.ScanTask,
    ("tfim", {"L": 6}),
    t4a.SiteOutOfRangeError,
    "observable 'Z@0*Z@-7': site -7 is outside the chain of L = 6 sites",
    observables=("Z@0*Z@-7",),
)
row(
    "ScanTask-observable-unknown-operator",
    t4a.ScanTask,
    ("heisenberg", {"L": 4}),
    t4a.UnknownOperatorError,
    "'X' is not a Hermitian operator of the model's local space 'spin-1/2' (it has no such operator); valid "
    "operators: Id, Sz, Sx, Sy",
    observables=("X",),
)
row(
    "ScanTask-conserve-N",
    t4a.ScanTask,
    ("heisenberg",),
    t4a.InvalidOptionError,
    "heisenberg conserves Sz, not N; conserve='N'; valid values: None, 'none', 'auto', 'Sz'",
    settings={"conserve": "N"},
)
row(
    "ScanTask-sector-without-conserve",
    t4a.ScanTask,
    ("heisenberg",),
    t4a.InvalidOptionError,
    "sector=0.5 needs conserve=... (the charge whose sector it names): give conserve='Sz'",
    settings={"conserve": "none", "sector": 0.5},
)
row(
    "ScanTask-conserved-complex",
    t4a.ScanTask,
    ("heisenberg",),
    t4a.InvalidOptionError,
    "conserve='Sz' runs in float64 (from a real start state); drop dtype='complex128'",
    settings={"conserve": "Sz", "dtype": "complex128"},
)
# 4. a NaN or infinite result is a typed error (scan records the point as failed, with this text)
row(
    "ScanTask-call-nan-observable",
    lambda: _SBBrokenTask("tfim", {"L": 4}, settings={"max_bond": 2, "sweeps": 1}, observables=("X",))(g=1.0),
    (),
    t4a.NonFiniteError,
    "ScanTask: the observable 'X' is nan, not a finite number: the run broke down numerically",
)
# 1. every point is checked as dmrg checks a run (its own checks of the Hamiltonian and the sector), before any runs
row(
    "scan-point-site-out-of-range",
    t4a.scan,
    (t4a.ScanTask("tfim", settings={"max_bond": 4}, observables=("X@5",)), {"L": [8, 4]}),
    t4a.SiteOutOfRangeError,
    "scan: the point L=4: observable 'X@5': site 5 is outside the chain of L = 4 sites",
)
row(
    "scan-point-sector-unreachable",
    t4a.scan,
    (t4a.ScanTask("heisenberg", settings={"conserve": "Sz", "sector": 0.5}), {"L": [5, 4]}),
    t4a.SymmetryViolationError,
    "scan: the point L=4: dmrg: the sector Sz = 0.5 has no states on this chain of 4 sites",
)
row(
    "scan-point-sector-unreachable-fix",
    t4a.scan,
    (t4a.ScanTask("heisenberg", settings={"conserve": "Sz", "sector": 0.5}), {"L": [5, 4]}),
    t4a.SymmetryViolationError,
    "give a sector that the chain of every point reaches, or none",
)
row(
    "scan-point-coupling-beyond-range",
    t4a.scan,
    (SC_T, {"g": [1.0, 1e200]}),
    t4a.ValueRangeError,
    "scan: the point g=1e+200: dmrg: the Hamiltonian's scale",
)
row(
    "scan-point-conserve-N",
    t4a.scan,
    (t4a.ScanTask("heisenberg", {"L": 4}), {"conserve": ["Sz", "N"]}),
    t4a.InvalidOptionError,
    "scan: the point conserve=N: heisenberg conserves Sz, not N",
)
row(
    "scan-point-sector-needs-conserve",
    t4a.scan,
    (t4a.ScanTask("heisenberg", {"L": 4}, settings={"sector": 0.0}), {"conserve": ["Sz", "none"]}),
    t4a.InvalidOptionError,
    "scan: the point conserve=none: sector=0.0 needs conserve=",
)
row(
    "scan-point-auto-finds-no-charge",
    t4a.scan,
    (t4a.ScanTask("tfim", {"L": 4}, settings={"conserve": "auto", "sector": 1}), {"g": [1.0]}),
    t4a.InvalidOptionError,
    "conserve='auto' found no charge that the Hamiltonian conserves; give conserve='Sz' (heisenberg/xxz) or "
    "'parity' (tfim)",
)
# 3. the output is checked as the command-line programs check theirs (one helper), before any point runs
row(
    "scan-out-is-a-directory",
    t4a.scan,
    (SC_T, SC_G),
    t4a.ScanFileIOError,
    "is a directory; give a file name",
    out=SB_AS_DIR,
)
row(
    "scan-out-name-too-long",
    t4a.scan,
    (SC_T, SC_G),
    t4a.ScanFileIOError,
    "is too long (at most",
    out=os.path.join(SB_DIR, "a" * 300 + ".parquet"),
)
row(
    "scan-out-missing-directory-fix",
    t4a.scan,
    (SC_T, SC_G),
    t4a.ScanFileIOError,
    "does not exist; create it or give a path in an existing directory",
    out=os.path.join(SB_DIR, "no", "s.arrow"),
)
if os.path.isdir("/proc/self"):  # a directory where nobody, root included, can create files
    row(
        "scan-out-unwritable-directory",
        t4a.scan,
        (SC_T, SC_G),
        t4a.ScanFileIOError,
        "cannot write in directory '/proc/self': no file can be created there",
        out="/proc/self/scan.parquet",
    )

# end (b)

# (c) TCI, quantics and structured einsum
C_V = SY_Leg(SY_U1(), {-1: 2, 0: 3, 1: 2})
C_B = t4a.SymmetricTensor.random([C_V, C_V.dual()], charge=0, seed=1)
C_RES = TC.crossinterpolate2(lambda i: 1.0 + i.sum(axis=1), [4, 4, 4], batched=True)
C_NAN = np.where(np.arange(len(C_RES.points)) == 2, np.nan, 1.0 + C_RES.points.sum(axis=1))
# 'ab,ab->ab' (batch labels, elementwise like b * b) falls back to dense; a label contracted
# beside a batch label is still checked
row(
    "einsum-symmetric-batch-and-contracted-non-dual",
    t4a.einsum,
    ("ab,ab->a", C_B, C_B),
    t4a.SectorMismatchError,
    "label 'b' (leg 1 of operand 0, leg 1 of operand 1) joins two dual legs",
)
row(
    "interpolant-values-nan",
    TC.interpolant,
    (C_RES, C_NAN),
    TC.NonFiniteValueError,
    f"interpolant: values[2] is nan, the value at result.points[2] = {C_RES.points[2].tolist()}",
)
row(
    "tci-crossinterpolate2-tolerance-relative-2",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 2]),
    TC.TCIOptionError,
    "tolerance must be a finite number > 0 and < 1 (it is relative to max|f|",
    tolerance=2,
)
row(
    "tci-crossinterpolate2-tolerance-absolute-inf",
    TC.crossinterpolate2,
    (lambda i: 1.0, [2, 2]),
    TC.TCIOptionError,
    "(an absolute error with normalize_error=False), got inf",
    tolerance=float("inf"),
    normalize_error=False,
)
row(
    "quantics_interpolate-tolerance-relative-1",
    QG.quantics_interpolate,
    (np.sin, QG_G),
    TC.TCIOptionError,
    "quantics_interpolate: tolerance must be a finite number > 0 and < 1",
    tolerance=1.0,
)
# quantics_interpolate of a traced parameter works under tidu.grad (tests/tensor4all/test_quantics.py);
# under tenferro.jit there are no values to search pivots on: the message names the supported way
row(
    "quantics_interpolate-under-jit",
    tf.jit(lambda th: QG.quantics_interpolate(lambda x: tf.exp(-th * x), QG_G).integral()),
    (tf.asarray(1.0),),
    t4a.NotDifferentiableError,
    "qtt.interpolant(lambda x: f(x, theta)) inside (QuanticsTT.interpolant)",
)
row(
    "tci-crossinterpolate2-under-vmap",
    tidu.vmap(lambda th: TC.tt_sum(TC.crossinterpolate2(lambda i: tf.exp(-th * float(i.sum())), [2, 2]).tt)),
    (tf.asarray([1.0, 2.0]),),
    t4a.NotDifferentiableError,
    "tci.interpolant(res, f(res.points, theta)) inside",
)
# end (c)


# (d) sites, DMRG, time evolution, truncation cutoff
def _h_of_changing_length(t):
    return models.heisenberg(4 if t < 0.1 else 5)


_D_PSI4 = t4a.MPS.random(4, bond_dim=2, seed=0)
_D_HOP = t4a.OpSum()
for _i in range(3):
    _D_HOP += (1.0, "S+", _i, "S-", _i + 1)  # no Hermitian conjugate
row(
    "product_state-no-default-space-d4",
    t4a.MPS.product_state,
    ([1, 2, 3, 0],),
    t4a.InvalidOptionError,
    "there is no default local space of dimension 4",
    d=4,
    conserve="N,Sz",
)
row(
    "product_state-names-the-space-with-the-charge",
    t4a.MPS.product_state,
    ([1, 2, 3, 0],),
    t4a.InvalidOptionError,
    "pass local='electron' (d = 4)",
    d=4,
    conserve="N,Sz",
)
row(
    "product_state-d-against-local",
    t4a.MPS.product_state,
    ([0, 2],),
    t4a.DimensionMismatchError,
    "drop d= (local= sets it)",
    d=2,
    local="spin-1",
)
row(
    "dmrg-conserving-mpo-dense-psi0",
    t4a.dmrg,
    (models.heisenberg(4, conserve="Sz"), _D_PSI4),
    t4a.InvalidOptionError,
    "(the MPO, built with conserve='Sz')",
    max_bond=8,
)
row(
    "dmrg-conserving-mpo-dense-psi0-fix",
    t4a.dmrg,
    (models.heisenberg(4, conserve="Sz"), _D_PSI4),
    t4a.InvalidOptionError,
    "or conserve='none' to run dense from this psi0",
    max_bond=8,
)
row(
    "double_occupancy-spin-state",
    MS.double_occupancy,
    (t4a.MPS.random(4, bond_dim=2),),
    t4a.InvalidOptionError,
    "needs a state on sites of the space 'electron' (d = 4)",
)
for _name, _evolve in (("tdvp", t4a.tdvp), ("tebd", t4a.tebd)):
    row(
        f"{_name}-H(t)-changes-length",
        _evolve,
        (_h_of_changing_length, _D_PSI4, 0.2, 0.05),
        t4a.DimensionMismatchError,
        "returned an MPO of 5 sites at t = 0.125, but the state has 4 sites",
    )
    row(
        f"{_name}-dt-subnormal",
        _evolve,
        (models.heisenberg(4), _D_PSI4, 0.1, 5e-324),
        t4a.ValueRangeError,
        "is too small for t = 0.1",
    )
row(
    "tebd-real-time-non-hermitian",
    t4a.tebd,
    (t4a.MPO.from_opsum(_D_HOP, 4), t4a.MPS.product_state([0, 1, 0, 1]), 0.1, 0.05),
    t4a.NonHermitianError,
    "pass allow_nonhermitian=True",
)
row(
    "truncated_svd-cutoff-two",
    la.truncated_svd,
    (M,),
    tf.TenferroValueError,
    "cutoff (the discarded weight) must be a real number in [0, 1)",
    cutoff=2,
)
row(
    "t4a-truncated_svd-cutoff-two",
    t4a.linalg.truncated_svd,
    (M,),
    tf.TenferroValueError,
    "cutoff (the discarded weight) must be a real number in [0, 1)",
    cutoff=2,
)
row(
    "truncation_rank-cutoff-two",
    la.truncation_rank,
    ([1.0, 0.5],),
    tf.TenferroValueError,
    "cutoff (the discarded weight) must be a real number in [0, 1)",
    cutoff=2,
)
row(
    "truncated_svd-rtol-one",
    la.truncated_svd,
    (M,),
    tf.TenferroValueError,
    "rtol (relative to the largest singular value) must be a real number in [0, 1)",
    rtol=1.0,
)
# end (d)
