"""The bad-input table (issue 9): one row per malformed call over the public API of
tidu, tenferro and tensor4all: (function, arguments, expected exception, message
fragment). Every expected exception derives from its package's base exception, so
each family keeps its contract: a typed error that names what was wrong, never a raw
NumPy/SciPy traceback or a silent wrong value. The rows live beside this file in
tests/bad_input_rows/, one module per area; ``ROWS`` joins them in a fixed order."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import types
import warnings

import pytest

import tenferro as tf
import tensor4all as t4a
import tensor4all.structured as st
import tidu
from tensor4all import models

sys.path.insert(0, os.path.dirname(__file__))  # the row modules beside this file (no package __init__ in tests/)
from bad_input_rows.cli import CLI_ROWS, EVOLVE_CLI_ROWS, SCAN_CLI_ROWS

# the order of the table (and of the test ids): the order the areas were written in
AREAS = (
    "tenferro_ops",
    "tenferro_linalg",
    "tidu_transforms",
    "networks",
    "infinite",
    "thermal",
    "excited",
    "measurements",
    "lattices",
    "evolution",
    "spectra",
    "structured",
    "symmetric",
    "scans",
    "tci",
    "quantics",
    "trees",
    "tenferro_jit",
    "tenferro_files",
    "fix_messages_tenferro",
    "fix_messages_tensor4all",
)
ROW_MODULES = tuple(importlib.import_module(f"bad_input_rows.{area}") for area in AREAS)
ROWS: list[tuple] = [r for module in ROW_MODULES for r in module.ROWS]  # (id, fn, args, kwargs, exception, fragment)


# 'tensor4all scan' refuses bad arguments with exit 2 before any point runs (header "SCAN  "), nothing written
@pytest.mark.parametrize("name,args,fragment", SCAN_CLI_ROWS, ids=[r[0] for r in SCAN_CLI_ROWS])
def test_cli_scan_bad_arguments(name, args, fragment, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tensor4all", "scan", "--model", "tfim", "--L", "6", "--max-bond", "4", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, (name, proc.returncode, proc.stderr[-500:])
    assert fragment in proc.stderr, (name, proc.stderr[-500:])
    assert "Traceback" not in proc.stderr and "SCAN  " not in proc.stdout + proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc/self: no file can be created there")
@pytest.mark.parametrize(
    "command,args",
    [
        ("dmrg", ["--json"]),
        ("evolve", ["--t-final", "0.1", "--json"]),
        ("scan", ["--model", "tfim", "--g", "1,2", "--out"]),
    ],
    ids=["dmrg", "evolve", "scan"],
)
def test_cli_outputs_share_one_check(command, args, tmp_path):
    """dmrg, evolve and scan refuse an output where no file can be created with one message."""
    path = "/proc/self/out." + ("parquet" if command == "scan" else "json")
    proc = subprocess.run(
        [sys.executable, "-m", "tensor4all", command, "--L", "6", *args, path],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, (command, proc.stderr[-500:])
    assert (
        "cannot write in directory '/proc/self': no file can be created there (No such file or directory); "
        "give a path in a writable directory"
    ) in proc.stderr, proc.stderr[-500:]
    assert list(tmp_path.iterdir()) == []


BASES = {"tenferro": tf.TenferroError, "tidu": tidu.TiduError, "tensor4all": t4a.Tensor4allError}


def _base(exc: type) -> type:
    return BASES[exc.__module__.split(".")[0]]


@pytest.mark.parametrize("name,fn,args,kwargs,exc,fragment", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input(name, fn, args, kwargs, exc, fragment):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no NumPy warning leaks on the way
        with pytest.raises(exc) as info:
            fn(*args, **kwargs)
    assert fragment in str(info.value), f"{name}: {fragment!r} not in {str(info.value)!r}"
    assert isinstance(info.value, _base(exc))


def test_the_table_is_large_and_every_expected_exception_is_typed():
    assert len(ROWS) >= 300
    for name, _, _, _, exc, _ in ROWS:
        assert issubclass(exc, _base(exc)), f"{name}: {exc} does not derive from its package's base exception"


# ---- the command-line program (issue 21): bad arguments end with exit code 2 and a message,
# before any simulation runs (the report header "DMRG  " is never printed); the rows are bad_input_rows/cli.py -----
@pytest.mark.parametrize("name,args,fragment", CLI_ROWS, ids=[r[0] for r in CLI_ROWS])
def test_cli_bad_arguments(name, args, fragment, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tensor4all", "dmrg", "--L", "6", "--max-bond", "4", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 2, (name, proc.returncode, proc.stderr[-500:])
    assert fragment in proc.stderr, (name, proc.stderr[-500:])
    assert "Traceback" not in proc.stderr and "DMRG  " not in proc.stdout + proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written


# 'tensor4all evolve' (issue 24): the same contract, before any evolution (header "EVOLVE  ")
@pytest.mark.parametrize("name,args,fragment", EVOLVE_CLI_ROWS, ids=[r[0] for r in EVOLVE_CLI_ROWS])
def test_cli_evolve_bad_arguments(name, args, fragment, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tensor4all", "evolve", "--L", "6", "--t-final", "0.1", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 2, (name, proc.returncode, proc.stderr[-500:])
    assert fragment in proc.stderr, (name, proc.stderr[-500:])
    assert "Traceback" not in proc.stderr and "EVOLVE  " not in proc.stdout + proc.stderr
    assert list(tmp_path.iterdir()) == []


# ---- coverage: every public callable of tenferro.jit, tensor4all (networks, models, lattices, quantics) and
# tensor4all.structured is exercised by at least one row of the table -------------------
def _names_used(obj, seen=None) -> set[str]:
    """Names a row's callable refers to: its own name, and every attribute or global name in
    its code and the code nested in it (lambdas calling ``t4a.dmrg(...)`` name ``dmrg``)."""
    seen = set() if seen is None else seen
    out: set[str] = set()
    name = getattr(obj, "__name__", None)
    if isinstance(name, str):
        out.add(name)
    func = getattr(obj, "__func__", obj)
    func = getattr(func, "__wrapped__", func)  # a decorated entry point (tools.threads.thread_policy): its body
    code = getattr(func, "__code__", None)
    stack = [code] if code is not None else []
    while stack:
        c = stack.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        out.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    for d in getattr(func, "__defaults__", None) or ():
        if callable(d):
            out |= _names_used(d, seen)
    return out


# records the library builds and hands out (a sweep's history, a progress update): never
# input, no validation of their own to exercise
OUTPUT_RECORDS = {
    "ExcitedStates",
    "Gap",
    "SweepRecord",
    "BondUpdate",
    "TCIResult",
    "EvolutionRecord",
    "EvolutionResult",
    "SectorEntanglement",
    "ThermalResult",
    "Thermodynamics",
    "MettsResult",
    "SpectralFunction",
    "VUMPSResult",
    "IDMRGResult",
}


def _public_callables() -> list[str]:
    names = {"jit", "lower", "cache_info"}  # tenferro.jit and the methods of a jitted function
    for mod in (t4a, st, models, t4a.lattices, t4a.quantics, t4a.tci, t4a.measurements, t4a.trees):
        for n in getattr(mod, "__all__", [n for n in dir(mod) if not n.startswith("_")]):
            if n in OUTPUT_RECORDS:
                continue
            obj = getattr(mod, n)
            if not callable(obj) or (isinstance(obj, type) and issubclass(obj, BaseException)):
                continue
            if getattr(obj, "__module__", "").split(".")[0] not in ("tensor4all", "tenferro"):
                continue  # re-exported from elsewhere (e.g. typing helpers)
            names.add(n)
            if isinstance(obj, type) and obj.__module__.startswith("tensor4all"):
                names.update(
                    m
                    for m, v in vars(obj).items()
                    if not m.startswith("_") and (callable(v) or isinstance(v, (classmethod, staticmethod)))
                )
    return sorted(names)


def test_every_public_callable_appears_in_the_table():
    used: set[str] = set()
    for name, fn, args, kwargs, _, _ in ROWS:
        used |= _names_used(fn)
        for a in list(args) + list(kwargs.values()):
            if callable(a):
                used |= _names_used(a)
    missing = [n for n in _public_callables() if n not in used]
    assert not missing, f"public callables without a bad-input row: {missing}"
