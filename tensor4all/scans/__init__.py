"""Parameter scans on Dask: :func:`scan` runs each point of a grid as one Dask task and
streams the rows into one Arrow/Parquet file as the points finish.

The project states what to compute (the points, :class:`ScanTask` or a function) and Dask
schedules it (``client.submit`` per point, ``as_completed``, Dask's own ``retries=`` and its
``allowed-failures`` for workers that die). The file is rewritten atomically after each
batch of finished points (:mod:`tensor4all.scans.table`), so an interrupted scan resumes
from it: points with status ``ok`` are skipped (matched by their parameter values), the
others run. Dask is the optional ``distributed`` extra; without it :func:`scan` raises
:class:`OptionalDependencyError` naming the extra.

>>> task = ScanTask("tfim", params={"L": 32}, settings={"max_bond": 64}, observables=("X",))
>>> table = scan(task, {"g": np.linspace(0.2, 2.0, 37)}, out="tfim.parquet")  # doctest: +SKIP
"""

from __future__ import annotations

from types import ModuleType as _ModuleType

import contextlib
import logging
import multiprocessing
import numbers
import os
import time
import uuid
from typing import Any, Callable, Iterator, Mapping

import numpy as np
from tenferro.checks import import_optional, install_hint
from tqdm import tqdm

from ..tools.keywords import keyword_hints
from ..tools.errors import InvalidOptionError, OptionalDependencyError, Tensor4allTypeError
from .errors import ScanClusterError
from .grid import Grid, make_grid
from .table import ScanTable, check_out
from .task import META_COLUMNS, ScanTask, describe, run_point
from ..tools.checks import check_callable

__all__ = ["scan", "ScanTask", "ScanRun", "default_workers", "local_cluster", "FORKSERVER_PRELOAD"]

_INSTALL = install_hint("distributed")


def default_workers() -> int:
    """The cores this process may run on (one single-threaded worker per core)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def import_distributed() -> Any:
    return import_optional(
        ("distributed", "dask"),
        OptionalDependencyError,
        f"tensor4all.scan runs its points on Dask, which is not installed; {_INSTALL}",
    )


def _default_start_method() -> str:
    """``"forkserver"`` where the platform has it (Linux, macOS), else ``"spawn"``."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


#: what the fork server imports before it forks any worker (Dask's nanny would preload
#: ``distributed`` and its required packages; the points need tensor4all too)
FORKSERVER_PRELOAD = ("distributed", "numpy", "scipy", "tensor4all")

LOST_RESULT_WAIT = 60.0
"""Seconds a point whose result was lost with its worker waits while the cluster has no worker
to compute it again (see :meth:`ScanRun._row`); then it is recorded failed, for a rerun."""


def _preload_forkserver(dd: Any) -> None:
    """Have the fork server import :data:`FORKSERVER_PRELOAD` once, so that forked workers
    start with them (no effect once the fork server runs). Dask's context sets its own preload
    list on first use: it is taken first, then replaced."""
    ctx = dd.utils.get_mp_context()  # under the forkserver method (the caller's config)
    ctx.set_forkserver_preload(list(FORKSERVER_PRELOAD))


def local_cluster(workers: int | None = None, retries: int = 2, start_method: str | None = None) -> Any:
    """The ``LocalCluster`` that :func:`scan` starts for ``client=None``: ``workers``
    single-threaded worker processes (default one per core), no dashboard (its HTTP
    server on a free port), the workers' profiler off, worker logs below CRITICAL silenced
    (failures are in the rows), the event loops' health tick at 500 ms and their system
    monitor at 5 s (Dask's 20 ms and 500 ms feed a dashboard this cluster does not serve),
    and a point whose worker dies ``retries + 1`` times recorded as failed
    (``distributed.scheduler.allowed-failures``); a worker holds only the point it runs
    (``distributed.scheduler.worker-saturation`` 1.0: with Dask's 1.1 a point queued behind one
    that killed its worker failed with it, never having started). Close it (``with``) when done.

    ``start_method`` is how the worker processes start (Dask's
    ``distributed.worker.multiprocessing-method``, set while the cluster starts): by default
    ``"forkserver"`` where the platform has it, else ``"spawn"``. The fork server is a fresh
    single-threaded process, started once per process and preloaded with tensor4all
    (:data:`FORKSERVER_PRELOAD`); the workers forked from it start with NumPy, SciPy and
    tensor4all imported (the first cluster of a process waits about 2 s for the fork server's
    imports, later ones start in 0.15 s). ``"fork"`` forks this process itself: the fastest
    start (0.1 s), but this process has threads (Dask's event loop, which logs while the nanny
    forks), and a worker forked while one of them held a lock waits on it forever (a CI run
    hung so, in a logging handler's flush). ``"spawn"`` starts fresh interpreters that import
    everything again. As with any of Dask's process clusters, a script that starts one needs
    the ``if __name__ == "__main__":`` guard (the workers import the main module). A worker
    that Dask restarts later starts by Dask's configured method."""
    dd = import_distributed()
    import dask  # noqa: PLC0415  (optional dependency, present once import_distributed passed)

    method = _default_start_method() if start_method is None else start_method
    if method not in multiprocessing.get_all_start_methods():
        raise InvalidOptionError(
            f"local_cluster: start_method must be one of "
            f"{', '.join(multiprocessing.get_all_start_methods())} here, got {start_method!r}"
        )
    # the workers' statistical profiler samples every thread's stack each 10 ms: it slowed the
    # Python-heavy DMRG points 2.2x (15.4 s of worker time for 24 TFIM points against 6.9 s off).
    # The event loops' health tick (20 ms) and system monitor (500 ms) feed Dask's dashboard
    # and its blocked-loop warning: with 500 ms and 5 s this process (scheduler and nannies)
    # spent 0.22 s of CPU instead of 0.29 s on the 24-point scan benchmark, CPU that its two
    # worker processes need on a 2-core machine.
    with dask.config.set(
        {
            "distributed.scheduler.allowed-failures": retries,
            # one task per worker thread, none queued behind it: a worker that dies (a point
            # out of memory) then takes only its own point with it, not a queued one that never
            # started (Dask's default 1.1 queues a second task on a one-thread worker)
            "distributed.scheduler.worker-saturation": 1.0,
            "distributed.worker.profile.enabled": False,
            "distributed.admin.tick.interval": "500ms",
            "distributed.admin.system-monitor.interval": "5s",
            "distributed.worker.multiprocessing-method": method,
        }
    ):
        if method == "forkserver":
            _preload_forkserver(dd)
        return dd.LocalCluster(
            n_workers=default_workers() if workers is None else workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": ":0"},
            silence_logs=logging.CRITICAL,
        )


@keyword_hints
def scan(
    task: ScanTask | Callable[..., Mapping[str, Any]],
    grid: Any,
    *,
    client: Any = None,
    out: Any = "scan.parquet",
    retries: int = 2,
    workers: int | None = None,
    progress: bool = True,
    callback: Callable[[dict[str, Any]], Any] | None = None,
) -> Any:
    """Run every point of ``grid`` as one Dask task and write one row per point to ``out``.

    Before any point runs, every point of a :class:`ScanTask` is checked as ``dmrg`` checks
    a run (its names and values, the observables' sites on its chain, and ``dmrg``'s own
    checks of its Hamiltonian and sector) and ``out`` must take a new file: typed errors
    name the point or the file and the fix.

    Args:
        task: a :class:`ScanTask` (model, DMRG settings, observables), or a function
            ``f(**point) -> dict`` of column -> scalar (picklable: module-level, or any
            function cloudpickle can send).
        grid: a mapping name -> values (the cartesian product, the first name varying
            slowest) or a list of points (mappings with the same names). A
            :class:`ScanTask` scans its model parameters and DMRG settings by name.
        client: a ``dask.distributed.Client``, a scheduler address (``"tcp://host:8786"``;
            :class:`ScanClusterError` when it cannot be reached), or ``None``: a
            ``LocalCluster`` of ``workers`` single-threaded worker processes (default one
            per core, :func:`local_cluster`), closed at the end.
        out: the file (``.parquet``, or ``.arrow`` for Arrow IPC). If it exists it must be a
            scan of the same task over the same names: its ``ok`` points are not run again
            (rows of other points are kept); failed points run again. A function task is
            the same when its name, code, defaults, closure values and bound arguments
            are (:mod:`tensor4all.scans._identity`); else, and for a task holding a value
            that cannot be pickled, :class:`~tensor4all.ScanFileError`.
        retries: how many times Dask reruns a point whose task raised; a local cluster also
            reruns a point this many times after its worker died (``allowed-failures``;
            an existing cluster keeps its own setting). Then the row has ``status`` "failed"
            and ``error`` (``"ValueError: ..."``, ``"KilledWorker: ..."``). A
            :class:`ScanTask` point whose energy, entropy, an observable or its variance
            is NaN or infinite is "failed" at once, with its values and ``"NonFiniteError: ..."``.
        progress: a tqdm bar over the points (on stderr).
        callback: called in this process with each new row (a dict) once it is in the file.

    Returns:
        The file's table (``pyarrow.Table``): the scanned parameters, the results
        (:class:`ScanTask`: ``energy``, ``variance``, ``entropy``, the observables,
        ``bond_dim``, ``sweeps_run``, ``converged``; a function: its keys), ``seconds``,
        ``worker``, ``status`` (``"ok"``/``"failed"``) and ``error``, in grid order.
    """
    return ScanRun(
        task, grid, client=client, out=out, retries=retries, workers=workers, progress=progress, callback=callback
    ).run()


class ScanRun:
    """One call of :func:`scan`: the arguments checked, the file read; :meth:`run` runs the
    points the file does not hold. ``todo`` (grid indices to run), ``skipped`` (points the
    file held), ``ran`` and ``failed`` (rows written by this run) are there for programs
    that report on the run (``tensor4all scan``)."""

    def __init__(
        self,
        task: Any,
        grid: Any,
        *,
        client: Any = None,
        out: Any = "scan.parquet",
        retries: int = 2,
        workers: int | None = None,
        progress: bool = True,
        callback: Callable[[dict[str, Any]], Any] | None = None,
    ):
        if not callable(task):
            raise Tensor4allTypeError(
                f"scan: task must be a ScanTask or a function f(**point) -> dict, got {type(task).__name__} {task!r}"
            )
        self.task = task
        reserved = set(META_COLUMNS) | (set(task._columns()) if isinstance(task, ScanTask) else set())
        self.grid: Grid = make_grid(grid, reserved)
        if isinstance(task, ScanTask):
            for i in range(len(self.grid)):
                task._check_point(self.grid.point(i))
        if isinstance(retries, bool) or not isinstance(retries, numbers.Integral) or retries < 0:
            raise InvalidOptionError(f"scan: retries must be a non-negative integer, got {retries!r}")
        self.retries = int(retries)
        if workers is not None:
            if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
                raise InvalidOptionError(f"scan: workers must be a positive integer or None, got {workers!r}")
            if client is not None:
                raise InvalidOptionError(
                    "scan: workers= sizes the local cluster that client=None starts; an "
                    "existing cluster has its own workers"
                )
        self.workers = default_workers() if workers is None else int(workers)
        if not isinstance(progress, (bool, np.bool_)):
            raise Tensor4allTypeError(f"scan: progress must be True or False, got {progress!r}")
        self.progress = bool(progress)
        self.callback = check_callable(callback, "scan: callback")
        self.path = check_out(out)
        self.dd = import_distributed()
        if client is not None and not isinstance(client, (str, self.dd.Client)):
            raise Tensor4allTypeError(
                f"scan: client must be a dask.distributed.Client, a scheduler address or "
                f"None, got {type(client).__name__}"
            )
        self.client = client
        self.table = ScanTable(
            self.path, self.grid, describe(task), task._columns() if isinstance(task, ScanTask) else None
        )
        self.todo = [i for i, key in enumerate(self.grid.keys) if not self.table.done(key)]
        self.skipped = len(self.grid) - len(self.todo)
        self.ran = self.failed = 0

    # ---- the cluster -----------------------------------------------------------------
    @contextlib.contextmanager
    def _client(self) -> Iterator[Any]:
        dd = self.dd
        if isinstance(self.client, dd.Client):
            yield self.client
            return
        if isinstance(self.client, str):
            try:
                c = dd.Client(self.client)
            except (OSError, TimeoutError) as e:
                raise ScanClusterError(
                    f"scan: cannot reach the Dask scheduler at {self.client!r} ({type(e).__name__}: {e})"
                ) from e
            with c:
                yield c
            return
        cluster = local_cluster(self.workers, self.retries)
        with cluster, dd.Client(cluster) as c:
            yield c

    # ---- the run -----------------------------------------------------------------------
    def run(self) -> Any:
        """Run the points not yet in the file; returns the file's table."""
        if not self.todo:
            return self.table.table()
        bar = tqdm(
            total=len(self.grid),
            initial=self.skipped,
            desc="scan",
            unit="point",
            disable=not self.progress,
            dynamic_ncols=True,
        )
        token = uuid.uuid4().hex[:8]
        try:
            with self._client() as client:
                futures: dict[Any, int] = {}
                try:
                    for i in self.todo:
                        f = client.submit(
                            run_point,
                            self.task,
                            self.grid.point(i),
                            key=f"tensor4all-scan-{token}-{i}",
                            retries=self.retries,
                            pure=False,
                        )
                        futures[f] = i
                    for batch in self.dd.as_completed(list(futures)).batches():
                        rows = [(i, self._row(f, i)) for f in batch for i in (futures.pop(f),)]
                        for i, row in rows:
                            self.table.put(self.grid.keys[i], row)
                        self.table.write()
                        for _, row in rows:
                            self.ran += 1
                            self.failed += row["status"] != "ok"
                            bar.update(1)
                            if self.failed:
                                bar.set_postfix_str(f"failed={self.failed}", refresh=False)
                            if self.callback is not None:
                                self.callback(row)
                finally:
                    if futures:  # interrupted: Dask drops what is still queued or running
                        client.cancel(list(futures))
        finally:
            bar.close()
        return self.table.table()

    def _row(self, future: Any, i: int) -> dict[str, Any]:
        row = self.grid.point(i)
        out = self._result(future)
        if out is not None:
            row.update(out["result"])
            error = out.get("error")  # a ScanTask's NaN or infinite energy or observable
            row.update(
                seconds=out["seconds"], worker=out["worker"], status="ok" if error is None else "failed", error=error
            )
        elif future.status in ("error", "cancelled"):
            try:
                e = future.exception()
                error = f"{type(e).__name__}: {e}"
            except Exception as exc:  # noqa: BLE001  (cancelled, or the scheduler went away)
                error = f"{type(exc).__name__}: {exc}"
            row.update(seconds=None, worker=None, status="failed", error=error)
        else:
            error = (
                "LostResult: the point ran, but its result was on a worker that died before it was read, "
                f"and no worker was left to compute it again for {LOST_RESULT_WAIT:g} s; run the scan again"
            )
            row.update(seconds=None, worker=None, status="failed", error=error)
        future.release()
        return row

    def _result(self, future: Any) -> dict[str, Any] | None:
        """The point's result, or None when it failed. A point that finished on a worker that died
        before its result was read (another point killed it) is "lost", and Dask computes it again:
        wait for that (it was recorded failed, "NoneType: None"), but not while the cluster has had
        no worker for :data:`LOST_RESULT_WAIT` seconds (then None: recorded failed, run again by a
        rerun)."""
        since = None  # when the cluster was last seen without a worker (None: it has some)
        while True:
            if future.status in ("error", "cancelled"):
                return None
            if future.status == "finished":
                try:
                    return future.result(timeout=1.0)
                except TimeoutError:  # lost between the status and the read: wait again
                    pass
            else:
                try:
                    self.dd.wait(future, timeout=1.0)
                    continue
                except TimeoutError:
                    pass
            try:
                workers = len(future.client.nthreads())
            except Exception:  # noqa: BLE001  (the scheduler went away)
                workers = 0
            if workers:
                since = None
            elif since is None:
                since = time.monotonic()
            elif time.monotonic() - since >= LOST_RESULT_WAIT:
                return None


def __dir__() -> list[str]:
    """The public names (``__all__``) and the public submodules: what ``dir`` and tab completion show
    (the imports this module uses stay out of sight)."""
    return sorted(
        set(__all__) | {n for n, v in globals().items() if isinstance(v, _ModuleType) and not n.startswith("_")}
    )
