"""Bad-input rows of parameter scans: ScanTask and scan, each failing before a cluster starts."""

from __future__ import annotations

import tensor4all as t4a

from .common import new_table

ROWS, row = new_table()


# ---- issue 27: parameter scans (ScanTask, scan); every row fails before a cluster starts -------
SC_T = t4a.ScanTask("tfim", params={"L": 6}, settings={"max_bond": 4})
SC_G = {"g": [0.5, 1.0]}
row("ScanTask-model", t4a.ScanTask, ("potts",), t4a.InvalidOptionError, "valid models: heisenberg, xxz, tfim")
row("ScanTask-algorithm", t4a.ScanTask, ("tfim",), t4a.InvalidOptionError, "valid algorithms: dmrg", algorithm="tebd")
row("ScanTask-params-list", t4a.ScanTask, ("tfim", [1, 2]), t4a.Tensor4allTypeError, "params must be a mapping")
row(
    "ScanTask-param-of-other-model", t4a.ScanTask, ("tfim", {"Jz": 1.0}), t4a.InvalidOptionError, "valid names: L, J, g"
)
row(
    "ScanTask-setting-chi",
    t4a.ScanTask,
    ("tfim",),
    t4a.InvalidOptionError,
    "valid names: max_bond",
    settings={"chi": 4},
)
row("ScanTask-max_bond-0", t4a.ScanTask, ("tfim",), t4a.BondDimensionError, "max_bond", settings={"max_bond": 0})
row("ScanTask-g-nan", t4a.ScanTask, ("tfim", {"g": float("nan")}), t4a.NonFiniteError, "g")
row(
    "ScanTask-conserve",
    t4a.ScanTask,
    ("tfim",),
    t4a.InvalidOptionError,
    "valid values: None, auto",
    settings={"conserve": "U1"},
)
row(
    "ScanTask-conserve-Sz-tfim",
    t4a.ScanTask,
    ("tfim",),
    t4a.InvalidOptionError,
    "tfim conserves the parity, not Sz",
    settings={"conserve": "Sz"},
)
row(
    "ScanTask-observable-S+",
    t4a.ScanTask,
    ("heisenberg",),
    t4a.InvalidOptionError,
    "not a Hermitian operator",
    observables=("S+",),
)
row(
    "ScanTask-observable-syntax",
    t4a.ScanTask,
    ("tfim",),
    t4a.InvalidOptionError,
    "is not 'OP', 'OP@SITE'",
    observables=("X@a",),
)
row(
    "ScanTask-observable-int",
    t4a.ScanTask,
    ("tfim",),
    t4a.Tensor4allTypeError,
    "an observable is a string",
    observables=(3,),
)
row("ScanTask-observable-twice", t4a.ScanTask, ("tfim",), t4a.InvalidOptionError, "given twice", observables=("X", "X"))
row(
    "ScanTask-call-no-L",
    lambda: t4a.ScanTask("tfim")(g=0.5),
    (),
    t4a.InvalidOptionError,
    "the chain length L is neither",
)
row("ScanTask-call-unknown", lambda: SC_T(chi=3), (), t4a.InvalidOptionError, "not a parameter of tfim")
row("scan-task-not-callable", t4a.scan, ("tfim", SC_G), t4a.Tensor4allTypeError, "task must be a ScanTask")
row("scan-grid-empty", t4a.scan, (SC_T, {}), t4a.InvalidOptionError, "the grid is empty")
row("scan-grid-scalar", t4a.scan, (SC_T, {"g": 0.5}), t4a.Tensor4allTypeError, "must be a list of values")
row("scan-grid-nan", t4a.scan, (SC_T, {"g": [float("nan")]}), t4a.InvalidOptionError, "not a finite number")
row("scan-grid-twice", t4a.scan, (SC_T, {"g": [1, 1.0]}), t4a.InvalidOptionError, "is given twice")
row(
    "scan-grid-points-differ",
    t4a.scan,
    (SC_T, [{"g": 1.0}, {"J": 1.0}]),
    t4a.InvalidOptionError,
    "every point names the same parameters",
)
row(
    "scan-grid-result-column",
    t4a.scan,
    (SC_T, {"energy": [1.0]}),
    t4a.InvalidOptionError,
    "has the name of a result column",
)
row(
    "scan-grid-fixed-and-scanned",
    t4a.scan,
    (SC_T, {"L": [4, 6]}),
    t4a.InvalidOptionError,
    "scan it or fix it, not both",
)
row("scan-grid-bad-value", t4a.scan, (SC_T, {"g": [0.5, "a"]}), t4a.Tensor4allTypeError, "the values of 'g' mix")
row(
    "scan-retries", t4a.scan, (SC_T, SC_G), t4a.InvalidOptionError, "retries must be a non-negative integer", retries=-1
)
row(
    "scan-workers-with-client",
    t4a.scan,
    (SC_T, SC_G),
    t4a.InvalidOptionError,
    "an existing cluster",
    workers=2,
    client="tcp://127.0.0.1:1",
)
row(
    "scan-out-extension",
    t4a.scan,
    (SC_T, SC_G),
    t4a.UnsupportedFileFormatError,
    "valid extensions: .parquet, .arrow",
    out="scan.csv",
)
row(
    "scan-out-missing-directory",
    t4a.scan,
    (SC_T, SC_G),
    t4a.ScanFileIOError,
    "does not exist",
    out="/nonexistent-dir/scan.parquet",
)
row("scan-callback", t4a.scan, (SC_T, SC_G), t4a.Tensor4allTypeError, "callback must be a callable", callback=3)
