"""A scan resumes from its file only for the same task. A function task was recorded by its
name alone, so ``functools.partial(f, scale=1.0)`` and ``functools.partial(f, scale=10.0)``
(and any two lambdas) shared the file's ``ok`` rows: the second scan returned the first
one's results. Now a function task is recorded with a digest of its code, defaults, closure
values and bound arguments; another task is a ``ScanFileError``, a task that cannot be
identified (a value that cannot be pickled) is refused with the reason, a file of the earlier
name-only record is refused, and an unchanged module-level function resumes (its digest is
the same in every process: checked in subprocesses with other hash seeds)."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all.scans import ScanRun
from tensor4all.scans.grid import make_grid
from tensor4all.scans.table import ScanTable
from tensor4all.scans.task import describe
from tensor4all.scans._identity import function_identity

distributed = pytest.importorskip("distributed", reason="the 'distributed' extra (in 'dev') runs these tests")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def client():
    """One in-process worker thread: the tasks here are tiny."""
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as c:
        yield c


def _scale(x, scale):
    return {"y": x * scale}


def _logged(x, log):
    with open(log, "a") as fh:
        fh.write(f"{x}\n")
    return {"y": 2 * x}


def _rows(path):
    with open(path, "rb") as f:
        return pq.read_table(f).select(["x", "y", "status"]).to_pylist()


# ---- the reproducer: another partial, another lambda -------------------------------------------
def test_a_partial_with_other_bound_arguments_is_another_task(client, tmp_path):
    out = tmp_path / "s.parquet"
    t4a.scan(functools.partial(_scale, scale=1.0), {"x": [1.0, 2.0]}, client=client, out=out, progress=False)
    before = _rows(out)
    with pytest.raises(t4a.ScanFileError, match="holds a scan of another task") as info:
        t4a.scan(functools.partial(_scale, scale=10.0), {"x": [1.0, 2.0, 3.0]}, client=client, out=out)
    assert '"scale": 1.0' in str(info.value) and '"scale": 10.0' in str(info.value)
    assert "other arguments" in str(info.value)
    assert _rows(out) == before == [{"x": 1.0, "y": 1.0, "status": "ok"}, {"x": 2.0, "y": 2.0, "status": "ok"}]


def test_two_lambdas_are_two_tasks(client, tmp_path):
    out = tmp_path / "l.parquet"
    t4a.scan(lambda x: {"y": x + 1}, {"x": [1.0]}, client=client, out=out, progress=False)
    with pytest.raises(t4a.ScanFileError, match="holds a scan of another task"):
        t4a.scan(lambda x: {"y": x * 100}, {"x": [1.0, 2.0]}, client=client, out=out)
    assert _rows(out) == [{"x": 1.0, "y": 2.0, "status": "ok"}]


def test_the_same_partial_made_again_resumes(client, tmp_path):
    out, log = tmp_path / "p.parquet", tmp_path / "log"
    t4a.scan(functools.partial(_logged, log=str(log)), {"x": [1, 2]}, client=client, out=out, progress=False)
    rows = t4a.scan(functools.partial(_logged, log=str(log)), {"x": [1, 2, 3]}, client=client, out=out, progress=False)
    assert log.read_text().split() == ["1", "2", "3"]  # only the new point ran
    assert [r["y"] for r in rows.to_pylist()] == [2, 4, 6]


# ---- what the identity holds ---------------------------------------------------------------------
def test_bound_arguments_count_exactly_and_keyword_order_does_not():
    d = describe
    assert d(functools.partial(_scale, scale=2.0)) == d(functools.partial(_scale, scale=2.0))
    assert d(functools.partial(_scale, scale=2.0)) != d(functools.partial(_scale, scale=2))  # 2 and 2.0 differ
    assert d(functools.partial(_scale, scale=1)) != d(functools.partial(_scale, scale=True))
    assert d(functools.partial(_scale, scale=[1, 2])) != d(functools.partial(_scale, scale=(1, 2)))
    assert d(functools.partial(_scale, 1.0)) != d(functools.partial(_scale, scale=1.0))
    a, b = np.arange(3.0), np.arange(3.0)
    assert d(functools.partial(_scale, scale=a)) == d(functools.partial(_scale, scale=b))
    b[0] = 5.0
    assert d(functools.partial(_scale, scale=a)) != d(functools.partial(_scale, scale=b))
    f = functools.partial(_logged, x=1, log="a")
    g = functools.partial(_logged, log="a", x=1)
    assert d(f) == d(g)
    rec = d(functools.partial(_scale, scale=float("nan")))
    assert rec["function"].endswith("._scale") and rec["keywords"] == {"scale": "nan"}
    assert rec["code"].startswith("sha256:") and json.loads(json.dumps(rec)) == rec


def _make(c):
    def g(x):
        return {"y": x * c}

    return g


def test_closures_defaults_and_code_count():
    assert describe(_make(2)) == describe(_make(2))
    assert describe(_make(2)) != describe(_make(3))

    def with_default(x, k=1):
        return {"y": x * k}

    def with_other_default(x, k=2):
        return {"y": x * k}

    with_other_default.__qualname__ = with_default.__qualname__
    assert describe(with_default)["function"] == describe(with_other_default)["function"]
    assert describe(with_default) != describe(with_other_default)


_SCRIPT = """
def helper(x):
    return x in {"p", "q", "r"}

def task(x, scale=2.0):
    return {"y": x * scale, "h": helper("p")}
"""


def _exec(source, name="script"):
    ns = {"__name__": name}
    exec(compile(source, f"<{name}>", "exec"), ns)  # a script's module-level functions
    return ns["task"]


def test_an_edited_function_or_helper_is_another_task_and_an_unchanged_one_the_same():
    same = describe(_exec(_SCRIPT))
    assert describe(_exec(_SCRIPT)) == same  # another function object, the same code
    assert describe(_exec("# a comment moves every line\n\n" + _SCRIPT)) == same  # lines do not count
    assert describe(_exec(_SCRIPT.replace("x * scale", "x * scale + 1"))) != same
    assert describe(_exec(_SCRIPT.replace('"q"', '"s"'))) != same  # the helper it calls
    assert describe(_exec(_SCRIPT.replace("scale=2.0", "scale=3.0"))) != same


_CACHED = """
import functools

@functools.lru_cache(maxsize=None)
def cached_helper(a):
    return a * 1

def scaled(a, by):
    return a * by

partial_helper = functools.partial(scaled, by=1)

@functools.cache
def task(a):
    return {"v": a * 1, "h": cached_helper(a), "p": partial_helper(a)}
"""


def test_cached_tasks_and_helpers_count_by_their_code():
    """A task under ``functools.cache`` (or ``lru_cache``) counted by its pickle, which names the
    function only, and a cached or ``functools.partial`` helper of its module was not recorded:
    an edited task resumed and one table held rows of both versions."""
    same = describe(_exec(_CACHED))
    assert "code" in same and describe(_exec(_CACHED)) == same
    assert describe(_exec(_CACHED.replace('"v": a * 1', '"v": a * 2'))) != same  # the cached task
    assert describe(_exec(_CACHED.replace("return a * 1", "return a * 2"))) != same  # a cached helper
    assert describe(_exec(_CACHED.replace("return a * by", "return a * by + 1"))) != same  # a partial's function
    assert describe(_exec(_CACHED.replace("by=1)", "by=2)"))) != same  # a partial's bound value


def test_a_resumed_scan_removes_the_temporary_files_a_killed_write_left(tmp_path):
    """A scan killed (SIGKILL) while it wrote its file left ``.<name>.<hex>.tmp`` beside it, and
    no later run removed it; the next run on the file now does, and only files of that pattern."""
    out = tmp_path / "r.parquet"
    _write(out, _make(1))
    stale = [tmp_path / ".r.parquet.0123456789ab.tmp", tmp_path / ".r.parquet.a1b2c3d4e5f6.tmp"]
    kept = [
        tmp_path / ".r.parquet.tmp",
        tmp_path / ".s.parquet.0123456789ab.tmp",
        tmp_path / "r.parquet.0123456789ab.tmp",
    ]
    for f in stale + kept:
        f.write_bytes(b"partial")
    ScanTable(str(out), make_grid({"x": [1.0]}), describe(_make(1)), None)
    assert [f.exists() for f in stale] == [False, False] and all(f.exists() for f in kept)


_PRINT_IDENTITY = textwrap.dedent(
    """
    import json, sys
    import functools
    from tensor4all.scans import _identity as identity

    def helper(x):
        return x in {"p", "q", "r"} or x in frozenset({"s", "t"})

    def task(x, scale=2.0):
        return {"y": x * scale, "h": helper("p"), "k": {"a", "b"}}

    class Holder:  # pickle refuses it (it holds a lambda of __main__): read by its __reduce_ex__
        def __init__(self, g):
            self.g = g

    if sys.argv[1] == "warm":
        for _ in range(2000):   # the interpreter specializes hot bytecode in place
            task(1.0)
    tasks = {
        "f": task,
        "p": functools.partial(task, scale={"u", "v", "w"}),
        "l": lambda x: {"y": x in {"a", "b"}},
        "o": functools.partial(task, scale=Holder(lambda x: x in {"c", "d"})),
    }
    print(json.dumps({k: identity.function_identity(v) for k, v in tasks.items()}, sort_keys=True))
    """
)


def test_a_module_level_function_has_the_same_identity_in_every_process(tmp_path):
    """What resuming a script after an interruption needs: the same digest in a new process,
    whatever its string hash seed (sets of strings iterate in another order) and whether or
    not the function ran (specialized bytecode)."""
    script = tmp_path / "ident.py"
    script.write_text(_PRINT_IDENTITY)
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        for seed, mode in (("1", "cold"), ("2", "warm"), ("3", "cold"))
    ]
    outs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    records = [json.loads(o) for o, _ in outs]
    assert records[0] == records[1] == records[2]
    assert records[0]["f"]["function"] == "__main__.task" and records[0]["f"]["code"].startswith("sha256:")
    assert records[0]["p"]["keywords"] == {"scale": "<builtins.set>"}
    assert records[0]["o"]["keywords"] == {"scale": "<__main__.Holder>"} and "code" in records[0]["o"]


def test_describe_of_a_function_is_its_identity():
    assert describe(_scale) == function_identity(_scale)
    task = t4a.ScanTask("tfim", params={"L": 4})
    assert set(describe(task)) == {"model", "params", "algorithm", "settings", "observables"}  # unchanged


# ---- tasks that cannot be identified, files of the earlier record -----------------------------------
def _locked():
    lock = threading.Lock()

    def h(x):
        with lock:
            return {"y": x}

    return h


def _write(path, task, x=(1.0,)):
    grid = make_grid({"x": list(x)})
    table = ScanTable(str(path), grid, describe(task), None)
    for i, key in enumerate(grid.keys):
        table.put(key, {**grid.point(i), "y": 1.0, "seconds": 0.0, "worker": None, "status": "ok", "error": None})
    table.write()


def test_a_task_that_cannot_be_identified_is_not_resumed(tmp_path):
    rec = describe(_locked())
    assert "code" not in rec and "cannot be pickled" in rec["unknown"] and "_thread.lock" in rec["unknown"]
    out = tmp_path / "u.parquet"
    _write(out, _locked())  # a fresh scan runs and records the task as unknown
    with pytest.raises(t4a.ScanFileError, match="cannot resume from") as info:
        ScanRun(_locked(), {"x": [1.0]}, out=out)
    msg = str(info.value)
    assert "cannot be told apart from another task" in msg and "give another output path" in msg
    assert "ScanTask or a module-level function" in msg


def test_a_file_whose_task_was_not_identified_is_not_resumed(tmp_path):
    out = tmp_path / "v.parquet"
    _write(out, _locked())
    ok = _make(1)  # the same name as the file's task, identifiable
    ok.__qualname__ = _locked().__qualname__
    with pytest.raises(t4a.ScanFileError, match=r"cannot be pickled .*\(when the file was written\)"):
        ScanRun(ok, {"x": [1.0]}, out=out)


def test_a_file_of_the_earlier_name_only_record_is_refused(tmp_path):
    """tensor4all before this fix recorded ``{"function": "module.qualname"}``: it cannot tell
    which partial, lambda or version of the function wrote the rows."""
    out = tmp_path / "old.parquet"
    _write(out, _scale)
    table = pq.read_table(out)
    meta = json.loads(table.schema.metadata[b"tensor4all.scan"])
    meta["task"] = {"function": meta["task"]["function"]}
    pq.write_table(table.replace_schema_metadata({b"tensor4all.scan": json.dumps(meta).encode()}), out)
    with pytest.raises(t4a.ScanFileError, match="by its name only") as info:
        ScanRun(_scale, {"x": [1.0]}, out=out)
    assert "give another output path" in str(info.value)
    with pytest.raises(t4a.ScanFileError, match="holds a scan of another task"):
        ScanRun(_logged, {"x": [1.0]}, out=out)  # another name: another task, as before


def test_an_unchanged_module_level_function_resumes_without_running_its_points(tmp_path):
    out = tmp_path / "r.parquet"
    _write(out, _scale, x=(1.0, 2.0))
    run = ScanRun(_scale, {"x": [1.0, 2.0, 3.0]}, out=out)
    assert run.skipped == 2 and run.todo == [2]
