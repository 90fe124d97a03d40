"""Bad-argument rows of the command-line program: tensor4all scan, dmrg and evolve, each ending with exit 2."""

from __future__ import annotations

import os

# 'tensor4all scan' refuses the same with exit 2 before any point runs (header "SCAN  "), nothing written
SCAN_CLI_ROWS = [
    ("observable-site", ["--g", "1,2", "--observables", "X@99"], "site 99 is outside the chain of L = 6 sites"),
    ("observable-site-scanned-L", ["--L", "4,8", "--observables", "X@5"], "the point L=4: observable 'X@5'"),
    (
        "sector-unreachable",
        ["--model", "heisenberg", "--L", "4,5", "--sz", "0.5"],
        "the point L=4: dmrg: the sector Sz = 0.5 has no states",
    ),
    ("coupling-beyond-range", ["--g", "1,1e200"], "the point g=1e+200"),
]
if os.path.isdir("/proc/self"):
    SCAN_CLI_ROWS += [
        (
            "out-unwritable",
            ["--g", "1,2", "--out", "/proc/self/s.parquet"],
            "argument --out: out='/proc/self/s.parquet': cannot write in directory",
        ),
        (
            "plot-unwritable",
            ["--g", "1,2", "--plot", "/proc/self/s.png"],
            "argument --plot: cannot write in directory '/proc/self'",
        ),
    ]


# ---- the command-line program (issue 21): bad arguments end with exit code 2 and a message,
# before any simulation runs (the report header "DMRG  " is never printed) -----------------
CLI_ROWS = [
    ("json-empty", ["--json", ""], "the file name is empty"),
    ("plot-empty", ["--plot", " "], "the file name is empty"),
    ("L-beyond-memory", ["--L", "99999999999999999999999"], "would need about"),
    ("chi-beyond-memory", ["--L", "100000", "--max-bond", "4000"], "of memory is available"),
    ("json-name-too-long", ["--json", "a" * 300 + ".json"], "is too long"),
    ("threads-word", ["--threads", "many"], "'auto' or a non-negative integer"),
    ("noise-huge", ["--one-site", "--noise", "1e200"], "relative size below 1"),
    ("conserve-sz-tfim", ["--model", "tfim", "--conserve", "Sz"], "conserves no Sz"),
    ("sz-with-tfim", ["--model", "tfim", "--sz", "1"], "the tfim conserves no Sz"),
    ("parity-with-heisenberg", ["--parity", "1"], "conserves Sz, not a parity"),
    ("conserve-complex", ["--conserve", "Sz", "--dtype", "complex128"], "runs in float64"),
]
if os.path.isdir("/proc/self"):  # a directory where nobody, root included, can create files
    CLI_ROWS.append(("json-unwritable-dir", ["--json", "/proc/self/run.json"], "cannot write in directory"))
if os.path.exists("/dev/null"):
    CLI_ROWS.append(("save-device", ["--save", "/dev/null"], "is not a regular file"))


# 'tensor4all evolve' (issue 24): the same contract, before any evolution (header "EVOLVE  ")
EVOLVE_CLI_ROWS = [
    ("t-not-multiple-of-dt", ["--t-final", "1", "--dt", "0.3"], "is not a multiple of dt"),
    ("state-length", ["--state", "product:uud"], "gives 3 sites, but --L is 6"),
    ("json-empty", ["--json", ""], "the file name is empty"),
    ("beyond-memory", ["--L", "100000", "--max-bond", "100000"], "of memory is available"),
    ("hubbard-conserve-Sz", ["--model", "hubbard", "--conserve", "Sz"], "N and Sz together or of N alone"),
    ("hubbard-letter", ["--model", "hubbard", "--state", "product:0u1d2u"], "is not a state of a --model hubbard"),
    ("dt-too-small", ["--dt", "1e-320"], "argument --dt: dt = 1e-320 is too small for t = 0.1"),
]
