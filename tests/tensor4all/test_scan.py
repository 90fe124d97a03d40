"""Parameter scans on Dask (issue 27): ``tensor4all.scan`` on a ``LocalCluster`` of 2
single-threaded worker processes equals the serial loop bit for bit; the file resumes after
the scan process is killed (no point lost or run twice); a point whose worker dies is run
again, and one that keeps failing is recorded with its error; ``tensor4all scan`` on the
command line. Small chains and few points: the whole file runs in well under a minute. Worker
deaths: ``test_scan_worker_deaths.py``."""

from __future__ import annotations

import builtins
import functools
import math
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tensor4all as t4a
from tensor4all import cli
from tensor4all.scans import local_cluster

from .conftest import heisenberg_chain_matrix

dask = pytest.importorskip("dask", reason="the 'distributed' extra (in 'dev') runs these tests")
distributed = pytest.importorskip("distributed")
pq = pytest.importorskip("pyarrow.parquet")
cloudpickle = pytest.importorskip("cloudpickle")

# the task functions below go to the workers by value (the workers cannot import this test module)
cloudpickle.register_pickle_by_value(sys.modules[__name__])

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}


@pytest.fixture(scope="module")
def client():
    """2 single-threaded worker processes (as scan starts them); a worker that dies twice
    under one task fails it."""
    cluster = local_cluster(2, retries=1)
    with cluster, distributed.Client(cluster) as c:
        yield c


def _rows(path) -> list[dict]:
    """The file's rows, read through one open file: pyarrow's readers given a path open it more
    than once (footer, then pages), and a scan replacing the file in between mixes two
    versions ("Page was smaller than expected")."""
    with open(path, "rb") as f:
        return pq.read_table(f).to_pylist()


QUIET = (False, 0.5, 5.0)


def _quiet_settings() -> tuple:
    """A worker's Dask settings that :func:`local_cluster` changes (run on the worker)."""
    return (
        dask.config.get("distributed.worker.profile.enabled"),
        dask.utils.parse_timedelta(dask.config.get("distributed.admin.tick.interval")),
        dask.utils.parse_timedelta(dask.config.get("distributed.admin.system-monitor.interval")),
    )


def test_the_local_cluster_workers_run_without_profiler_and_with_slow_ticks(client):
    """Dask's per-thread profiler and its 20 ms loop tick take CPU that the points need;
    the workers of ``local_cluster`` run with them off and slowed (set while forking)."""
    assert set(client.run(_quiet_settings).values()) == {QUIET}
    assert _quiet_settings() != QUIET  # this process keeps Dask's defaults


def _has_tensor4all() -> bool:
    return "tensor4all" in sys.modules


def test_the_default_workers_come_from_a_preloaded_fork_server(client):
    """Not forked from this multi-threaded process (a CI run hung in a worker forked while
    another thread held a logging lock): from the fork server, which imported tensor4all once."""
    parents = set(client.run(os.getppid).values())
    assert len(parents) == 1 and os.getpid() not in parents  # forked or spawned: this process
    assert set(client.run(_has_tensor4all).values()) == {True}


def test_a_spawned_cluster_gives_the_same_rows_and_a_bad_start_method_is_named(tmp_path):
    """``start_method="spawn"`` starts fresh interpreters (the default: workers forked from a
    preloaded fork server), with the same results."""
    task = t4a.ScanTask("tfim", params={"L": 8}, settings={"max_bond": 8, "conserve": "none"}, observables=("X",))
    with local_cluster(1, start_method="spawn") as cluster, distributed.Client(cluster) as c:
        rows = t4a.scan(task, {"g": [0.7, 1.3]}, client=c, out=tmp_path / "s.parquet", progress=False).to_pylist()
        assert set(c.run(_quiet_settings).values()) == {QUIET}  # passed to a fresh interpreter too
    assert [{k: r[k] for k in ("energy", "X")} for r in rows] == [
        {k: task(g=g)[k] for k in ("energy", "X")} for g in (0.7, 1.3)
    ]
    with pytest.raises(t4a.InvalidOptionError, match="start_method must be one of") as info:
        local_cluster(1, start_method="thread")
    assert isinstance(info.value, ValueError)


# ---- results -------------------------------------------------------------------------------
def test_scan_equals_the_serial_loop_bit_for_bit(client, tmp_path):
    task = t4a.ScanTask(
        "tfim", params={"L": 10}, settings={"max_bond": 16, "conserve": "none"}, observables=("X", "Z@0*Z@-1", "X@3")
    )
    gs = np.linspace(0.5, 1.5, 4)
    table = t4a.scan(task, {"g": gs}, client=client, out=tmp_path / "s.parquet", progress=False)
    rows = table.to_pylist()
    assert rows == _rows(tmp_path / "s.parquet")
    assert [r["g"] for r in rows] == gs.tolist()
    assert table.column_names == [
        "g",
        "energy",
        "variance",
        "entropy",
        "X",
        "Z@0*Z@-1",
        "X@3",
        "bond_dim",
        "sweeps_run",
        "converged",
        "seconds",
        "worker",
        "status",
        "error",
    ]
    for g, r in zip(gs, rows):
        serial = task(g=float(g))
        assert {k: r[k] for k in serial} == serial  # ==: the same float64 bits
        assert r["status"] == "ok" and r["error"] is None and r["seconds"] > 0
        client.wait_for_workers(2, timeout=60)  # the scheduler's view: once listed an empty "workers" (CI)
        assert r["worker"] in client.nthreads()
    assert rows[0]["X"] > 0.2 and 0 < rows[-1]["Z@0*Z@-1"] < 1  # transverse magnetization, end-to-end order


def test_a_conserved_scan_and_a_scanned_setting(client, tmp_path):
    task = t4a.ScanTask("heisenberg", params={"L": 8}, settings={"conserve": "Sz"}, observables=("Sz@0*Sz@1",))
    table = t4a.scan(task, [{"max_bond": 4}, {"max_bond": 16}], client=client, out=tmp_path / "h.arrow", progress=False)
    low, high = table.to_pylist()
    exact = np.linalg.eigvalsh(heisenberg_chain_matrix(8))[0]  # exact diagonalization, -3.374932598688
    # bond 16 holds the L = 8 ground state exactly (full bonds are <= 16); 1e-9: DMRG's stopping rule
    assert high["energy"] == pytest.approx(exact, abs=1e-9) and low["energy"] > high["energy"]
    assert high["bond_dim"] == 16 and low["bond_dim"] == 4 and high["Sz@0*Sz@1"] < 0


def _square(a, b):
    return {"product": a * len(b), "label": f"{a}{b}", "big": a > 1}


def test_function_tasks_and_the_cartesian_order(client, tmp_path):
    table = t4a.scan(
        _square, {"a": [1, 2], "b": ["x", "yy", "zzz"]}, client=client, out=tmp_path / "f.parquet", progress=False
    )
    rows = table.to_pylist()
    assert [(r["a"], r["b"]) for r in rows] == [(1, "x"), (1, "yy"), (1, "zzz"), (2, "x"), (2, "yy"), (2, "zzz")]
    assert [r["product"] for r in rows] == [1, 2, 3, 2, 4, 6] and rows[3]["label"] == "2x" and rows[3]["big"]
    meta = pq.read_schema(tmp_path / "f.parquet").metadata[b"tensor4all.scan"]
    assert b'"parameters": ["a", "b"]' in meta and b"_square" in meta


# ---- failures --------------------------------------------------------------------------------
def _fails_on_two(x, log):
    with open(log, "a") as fh:
        fh.write(f"{x}\n")
    if x == 2:
        raise ValueError(f"no convergence at x = {x}")
    return {"y": 10 * x}


def test_a_failing_point_is_retried_then_recorded_and_rerun_on_resume(client, tmp_path):
    log, out = tmp_path / "log", tmp_path / "f.parquet"
    task = functools.partial(_fails_on_two, log=str(log))
    rows = t4a.scan(task, {"x": [1, 2, 3]}, client=client, out=out, retries=1, progress=False).to_pylist()
    assert [r["status"] for r in rows] == ["ok", "failed", "ok"]
    assert rows[1]["error"] == "ValueError: no convergence at x = 2" and rows[1]["y"] is None
    assert sorted(log.read_text().split()) == ["1", "2", "2", "3"]  # retries=1: two attempts
    t4a.scan(task, {"x": [1, 2, 3]}, client=client, out=out, retries=0, progress=False)
    assert sorted(log.read_text().split()) == ["1", "2", "2", "2", "3"]  # only the failed point ran again
    assert [r["status"] for r in _rows(out)] == ["ok", "failed", "ok"]


# ---- issue 47: every point checked before any runs, NaN is a failure, the error is printed -------
class _BrokenTask(t4a.ScanTask):
    """A ScanTask whose run breaks down numerically at g > 1: its observable is NaN there."""

    def _results(self, point):
        row = super()._results(point)
        if point["g"] > 1:
            row["X"] = float("nan")
        return row


def test_a_point_whose_results_are_not_finite_is_failed_not_ok(client, tmp_path):
    task = _BrokenTask(
        "tfim", params={"L": 6}, settings={"max_bond": 4, "sweeps": 2, "conserve": "none"}, observables=("X",)
    )
    rows = t4a.scan(task, {"g": [0.5, 1.5]}, client=client, out=tmp_path / "n.parquet", progress=False).to_pylist()
    assert [r["status"] for r in rows] == ["ok", "failed"]
    assert rows[1]["error"].startswith("NonFiniteError: ScanTask: the observable 'X' is nan, not a finite number")
    assert math.isnan(rows[1]["X"]) and math.isfinite(rows[1]["energy"])  # the values are kept
    with pytest.raises(t4a.NonFiniteError, match="the observable 'X' is nan") as info:
        task(g=1.5)  # one point here: a typed error, not a silent NaN
    assert isinstance(info.value, ValueError)


def _logged_square(a, b, log):
    with open(log, "a") as fh:
        fh.write(f"{a}\n")
    return _square(a, b)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc/self: no file can be created there")
def test_an_output_where_no_file_can_be_created_is_refused_before_any_point_runs(client, tmp_path):
    log = tmp_path / "log"
    task = functools.partial(_logged_square, log=str(log))
    with pytest.raises(t4a.ScanFileIOError, match="cannot write in directory '/proc/self'") as info:
        t4a.scan(task, {"a": [1, 2], "b": ["x"]}, client=client, out="/proc/self/s.parquet", progress=False)
    assert isinstance(info.value, OSError) and "give a path in a writable directory" in str(info.value)
    assert not log.exists()  # no point ran


def test_scanned_points_are_checked_as_dmrg_checks_a_run_before_any_runs(tmp_path, monkeypatch):
    def no_cluster(*args, **kwargs):
        raise AssertionError("a cluster started")

    monkeypatch.setattr(distributed, "LocalCluster", no_cluster)
    sz = t4a.ScanTask("heisenberg", settings={"conserve": "Sz", "sector": 0.5, "max_bond": 4})
    with pytest.raises(t4a.Tensor4allError, match=r"the point L=4: dmrg: the sector Sz = 0.5 has no states") as info:
        t4a.scan(sz, {"L": [4, 5]}, out=tmp_path / "s.parquet")
    assert isinstance(info.value, ValueError) and "give a sector that the chain of every point reaches" in str(
        info.value
    )
    obs = t4a.ScanTask("tfim", settings={"max_bond": 4}, observables=("X@5",))
    with pytest.raises(t4a.SiteOutOfRangeError, match=r"the point L=4: observable 'X@5': site 5 is outside"):
        t4a.scan(obs, {"L": [8, 4]}, out=tmp_path / "s.parquet")
    with pytest.raises(t4a.ValueRangeError, match=r"the point g=1e\+200: dmrg: the Hamiltonian's scale"):
        t4a.scan(t4a.ScanTask("tfim", params={"L": 6}), {"g": [1.0, 1e200]}, out=tmp_path / "s.parquet")
    assert list(tmp_path.iterdir()) == []


def test_a_task_is_checked_when_built():
    with pytest.raises(t4a.SiteOutOfRangeError, match="observable 'X@99': site 99 is outside the chain of L = 6"):
        t4a.ScanTask("tfim", params={"L": 6}, observables=("X@99",))
    with pytest.raises(t4a.SiteOutOfRangeError, match="site -7 is outside"):
        t4a.ScanTask("tfim", params={"L": 6}, observables=("Z@0*Z@-7",))
    with pytest.raises(t4a.UnknownOperatorError, match="'Q' is not a Hermitian operator .* no such operator"):
        t4a.ScanTask("tfim", params={"L": 6}, observables=("Q",))
    assert t4a.ScanTask("tfim", params={"L": 6}, observables=("X@5", "Z@0*Z@-6")).observables == ("X@5", "Z@0*Z@-6")


def test_cli_scan_prints_the_first_error_of_the_failed_points(tmp_path, monkeypatch, capsys):
    real = t4a.ScanTask._results

    def broken(self, point):  # in this process: the Dask workers below are threads
        if point["g"] == 1.5:
            raise ValueError("no convergence at g = 1.5")
        row = real(self, point)
        if point["g"] == 2.0:
            row["energy"] = float("inf")
        return row

    monkeypatch.setattr(t4a.ScanTask, "_results", broken)
    monkeypatch.chdir(tmp_path)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as c:
        code = cli.main(
            [
                "scan",
                "--model",
                "tfim",
                "--L",
                "6",
                "--g",
                "0.5,1.5,2",
                "--max-bond",
                "4",
                "--sweeps",
                "2",
                "--conserve",
                "none",
                "--retries",
                "0",
                "--quiet",
                "--scheduler",
                c.scheduler.address,
            ]
        )
    out, err = capsys.readouterr()
    assert code == 1
    assert "points      3: 1 ok (1 run now, 0 from the file), 2 failed" in out
    assert "2 point(s) failed; the first, g=1.5: ValueError: no convergence at g = 1.5; their rows hold" in err
    rows = _rows(tmp_path / "scan.parquet")
    assert rows[2]["status"] == "failed" and rows[2]["error"].startswith("NonFiniteError: ScanTask: the energy is inf")


# ---- resuming ----------------------------------------------------------------------------------
_SLOW_SCAN = textwrap.dedent("""
    import sys, time
    import tensor4all as t4a
    log, out, address = sys.argv[1:4]

    def slow(x):
        with open(log, "a") as fh:
            fh.write(f"{x}\\n")
        time.sleep(1.0)   # slow enough that a loaded machine still sees the scan halfway (4 of 16 rows)
        return {"y": x * x}

    t4a.scan(slow, {"x": list(range(16))}, client=address, out=out, progress=False)
""")


def test_a_killed_scan_resumes_from_its_file_without_losing_or_repeating_a_point(client, tmp_path):
    script, out = tmp_path / "slow.py", tmp_path / "slow.parquet"
    script.write_text(_SLOW_SCAN)
    address = client.scheduler.address
    with open(tmp_path / "stderr1", "w") as err:
        proc = subprocess.Popen(
            [sys.executable, str(script), str(tmp_path / "log1"), str(out), address], cwd=ROOT, stderr=err, env=ENV
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and len(_rows(out)) >= 4:  # the file is replaced atomically: always whole
                break
            time.sleep(0.02)
        proc.kill()  # SIGKILL: no cleanup in the scan process
        proc.wait()
    assert proc.returncode == -9, (tmp_path / "stderr1").read_text()[-2000:]
    rows = _rows(out)
    assert 4 <= len(rows) < 16, "the scan was to be killed halfway"
    assert len({r["x"] for r in rows}) == len(rows) and all(r["status"] == "ok" for r in rows)
    done_at_kill = [r["x"] for r in rows]
    subprocess.run(
        [sys.executable, str(script), str(tmp_path / "log2"), str(out), address],
        cwd=ROOT,
        check=True,
        timeout=120,
        env=ENV,
    )
    rows = _rows(out)
    assert [r["x"] for r in rows] == list(range(16))  # every point exactly once, in grid order
    assert all(r["status"] == "ok" and r["y"] == r["x"] ** 2 for r in rows)
    rerun = sorted(int(x) for x in (tmp_path / "log2").read_text().split())
    assert rerun == sorted(set(range(16)) - set(done_at_kill))  # the finished points did not run again


def test_a_file_of_another_scan_is_refused(client, tmp_path):
    out = tmp_path / "a.parquet"
    t4a.scan(_square, {"a": [1], "b": ["x"]}, client=client, out=out, progress=False)
    task = t4a.ScanTask("tfim", params={"L": 6})
    with pytest.raises(t4a.ScanFileError, match="holds a scan over"):
        t4a.scan(task, {"g": [1.0]}, client=client, out=out)
    with pytest.raises(t4a.ScanFileError, match="holds a scan of another task"):
        t4a.scan(lambda a, b: {}, {"a": [1], "b": ["x"]}, client=client, out=out)
    pq.write_table(pq.read_table(out).replace_schema_metadata({}), tmp_path / "plain.parquet")
    with pytest.raises(t4a.ScanFileError, match="was not written by tensor4all.scan"):
        t4a.scan(_square, {"a": [1], "b": ["x"]}, client=client, out=tmp_path / "plain.parquet")
    (tmp_path / "junk.parquet").write_bytes(b"not parquet")
    with pytest.raises(t4a.ScanFileError, match="not a readable parquet file"):
        t4a.scan(_square, {"a": [1], "b": ["x"]}, client=client, out=tmp_path / "junk.parquet")


def test_a_finished_scan_starts_no_cluster(client, tmp_path, monkeypatch):
    out = tmp_path / "f.parquet"
    first = t4a.scan(_square, {"a": [1, 2], "b": ["x"]}, client=client, out=out, progress=False)

    def no_cluster(*args, **kwargs):
        raise AssertionError("a finished scan started a cluster")

    monkeypatch.setattr(distributed, "LocalCluster", no_cluster)
    assert t4a.scan(_square, {"a": [1, 2], "b": ["x"]}, out=out, progress=False) == first


def test_without_dask_scan_names_the_extra(monkeypatch, tmp_path):
    real_import = builtins.__import__

    def no_distributed(name, *args, **kwargs):
        if name.split(".")[0] in ("dask", "distributed"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_distributed)
    with pytest.raises(t4a.OptionalDependencyError, match=r"the 'distributed' extra \(pip install") as info:
        t4a.scan(_square, {"a": [1], "b": ["x"]}, out=tmp_path / "x.parquet")
    assert isinstance(info.value, ImportError) and not (tmp_path / "x.parquet").exists()


def _mixed_types(x):
    return {"y": "text" if x else 1.5}


def test_a_task_whose_results_do_not_form_a_table_is_a_typed_error(client, tmp_path):
    with pytest.raises(t4a.Tensor4allTypeError, match="the column 'y' holds values of types float, str"):
        t4a.scan(_mixed_types, {"x": [0, 1]}, client=client, out=tmp_path / "m.parquet", progress=False)


def test_an_unreachable_scheduler_is_a_typed_error(tmp_path):
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        with pytest.raises(
            t4a.ScanClusterError, match="cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'"
        ) as info:
            t4a.scan(
                _square, {"a": [1], "b": ["x"]}, client="tcp://127.0.0.1:9", out=tmp_path / "u.parquet", progress=False
            )
    assert isinstance(info.value, ConnectionError) and not (tmp_path / "u.parquet").exists()


def test_scan_task_is_a_picklable_hashable_value():
    import pickle

    task = t4a.ScanTask("xxz", params={"L": 8, "Jz": 0.5}, settings={"max_bond": [8, 16]}, observables="Sz@0")
    assert task.params == (("Jz", 0.5), ("L", 8)) and task.settings == (("max_bond", (8, 16)),)
    assert pickle.loads(pickle.dumps(task)) == task and hash(task) == hash(t4a.ScanTask(**vars(task)))
    assert task.observables == ("Sz@0",)


# ---- the command line --------------------------------------------------------------------------
def _cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "tensor4all", "scan", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env=ENV,
    )


def test_cli_scan_on_a_local_cluster_then_resumed_on_an_existing_one(client, tmp_path):
    common = (
        "--model",
        "tfim",
        "--L",
        "8",
        "--max-bond",
        "8",
        "--conserve",
        "none",
        "--observables",
        "X,Z@0*Z@-1",
        "--out",
        "tfim.parquet",
    )
    first = _cli(*common, "--g", "0.5,1.0", "--workers", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-2000:]
    assert "SCAN  tfim L=8 J=1  over g 0.5..1 (2): 2 points" in first.stdout
    assert "local cluster of 1 worker, out tfim.parquet: 0 point(s) done earlier, 2 to run" in first.stdout
    assert "points      2: 2 ok (2 run now, 0 from the file), 0 failed" in first.stdout
    second = _cli(
        *common, "--g", "0.5:1.5:3", "--scheduler", client.scheduler.address, "--plot", "tfim.png", cwd=tmp_path
    )
    assert second.returncode == 0, second.stderr[-2000:]
    assert "points      3: 3 ok (1 run now, 2 from the file), 0 failed" in second.stdout
    assert f"scheduler {client.scheduler.address}" in second.stdout
    rows = _rows(tmp_path / "tfim.parquet")
    assert [r["g"] for r in rows] == [0.5, 1.0, 1.5] and (tmp_path / "tfim.png").stat().st_size > 0
    task = t4a.ScanTask(
        "tfim",
        params={"L": 8, "J": 1.0, "g": 1.5},
        settings={
            "max_bond": 8,
            "cutoff": 1e-10,  # the one default cutoff of the commands and of Python
            "sweeps": 10,
            "tol": 1e-10,
            "two_site": True,
            "seed": 0,
            "dtype": "float64",
            "noise": None,
            "threads": 1,
            "conserve": None,
            "sector": None,
        },
        observables=("X", "Z@0*Z@-1"),
    )
    expected = task()
    assert {k: rows[2][k] for k in expected} == expected  # the command's row is the library's


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["--g", "0.2:2.0"], "invalid range '0.2:2.0'"),
        (["--g", "0.5"], "nothing to scan"),
        (["--L", "4:9:3"], "not integers"),
        (["--L", "1,4"], "the chain needs at least 2 sites"),
        (["--g", "1,2", "--out", "x.csv"], "valid extensions: .parquet, .arrow"),
        (["--g", "1,2", "--observables", "S+"], "not a Hermitian operator"),
        (["--g", "1,2", "--Jz", "0.5,1"], "not a parameter of --model tfim"),
        (["--g", "1,2", "--plot", "x.gif"], "valid extensions: .png, .pdf, .svg"),
        (["--g", "1,1"], "is given twice"),
        (["--g", "1,2", "--workers", "0"], "positive integer"),
        (["--g", "1,2", "--workers", "2", "--scheduler", "tcp://x:1"], "not allowed with argument"),
        (["--g", "1,2", "--observables", "X@99"], "argument --observables: ScanTask: observable 'X@99': site 99 is"),
        (
            ["--L", "4,8", "--observables", "X@5"],
            "the point L=4: observable 'X@5': site 5 is outside the chain of L = 4",
        ),
        (
            ["--model", "heisenberg", "--L", "4,5", "--sz", "0.5"],
            "the point L=4: dmrg: the sector Sz = 0.5 has no states",
        ),
        (["--g", "1,1e200"], "the point g=1e+200: dmrg: the Hamiltonian's scale"),
        (
            ["--g", "1,2", "--out", "/proc/self/s.parquet"],
            "argument --out: out='/proc/self/s.parquet': cannot write in",
        ),
        (["--g", "1,2", "--plot", "/proc/self/s.png"], "argument --plot: cannot write in directory '/proc/self'"),
    ],
    ids=[
        "range",
        "nothing",
        "L-range",
        "L-small",
        "out",
        "observable",
        "Jz-tfim",
        "plot",
        "twice",
        "workers",
        "workers-and-scheduler",
        "observable-site",
        "observable-site-scanned-L",
        "sector-unreachable",
        "coupling-beyond-range",
        "out-unwritable",
        "plot-unwritable",
    ],
)
def test_cli_bad_arguments_exit_2_before_anything_runs(args, fragment, tmp_path, capsys, monkeypatch):
    if "/proc/self" in " ".join(args) and not os.path.isdir("/proc/self"):
        pytest.skip("needs /proc/self: no file can be created there")

    def no_cluster(*args, **kwargs):
        raise AssertionError("a point ran: a cluster started")

    monkeypatch.setattr(distributed, "LocalCluster", no_cluster)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        cli.main(["scan", "--model", "tfim", "--L", "6", *args])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
