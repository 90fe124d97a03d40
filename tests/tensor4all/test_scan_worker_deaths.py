"""Scans whose workers die (a point out of memory, ``os._exit``): a point is run again where its
worker died under it once, recorded as failed (``KilledWorker``) where it keeps killing them,
and only that point fails: one that finished on the dying worker is computed again, never
blamed, and a lost result waits for a worker only so long (``LOST_RESULT_WAIT``)."""

from __future__ import annotations

import functools
import os
import sys
import time

import pytest

import tensor4all as t4a
from tensor4all.scans import ScanRun, local_cluster

distributed = pytest.importorskip("distributed", reason="the 'distributed' extra (in 'dev') runs these tests")
pytest.importorskip("pyarrow.parquet")
cloudpickle = pytest.importorskip("cloudpickle")

# the task functions below go to the workers by value (the workers cannot import this test module)
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def client():
    """2 single-threaded worker processes (as scan starts them); a worker that dies twice
    under one task fails it."""
    cluster = local_cluster(2, retries=1)
    with cluster, distributed.Client(cluster) as c:
        yield c


def _kills_its_worker_once(x, marker):
    if x == 1 and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)  # the worker process dies mid-task
    return {"y": x + 0.5}


def test_a_worker_killed_mid_task_is_retried_and_the_scan_completes(client, tmp_path):
    marker = tmp_path / "marker"
    rows = t4a.scan(
        functools.partial(_kills_its_worker_once, marker=str(marker)),
        {"x": [0, 1, 2]},
        client=client,
        out=tmp_path / "k.parquet",
        progress=False,
    ).to_pylist()
    assert marker.exists()
    assert [(r["x"], r["y"], r["status"]) for r in rows] == [(0, 0.5, "ok"), (1, 1.5, "ok"), (2, 2.5, "ok")]
    client.wait_for_workers(2, timeout=60)


def _always_kills_its_worker(x):
    os._exit(1)


def test_a_point_that_keeps_killing_workers_is_recorded_as_failed(client, tmp_path):
    rows = t4a.scan(
        _always_kills_its_worker, {"x": [7]}, client=client, out=tmp_path / "d.parquet", progress=False
    ).to_pylist()
    assert rows[0]["status"] == "failed" and rows[0]["error"].startswith("KilledWorker: ")
    client.wait_for_workers(2, timeout=60)


def _kills_its_worker_at_seven(x):
    if x == 7:
        os._exit(1)
    time.sleep(0.2)  # the other points are still running or queued when a worker dies
    return {"y": x + 0.5}


def test_a_point_that_kills_its_workers_fails_alone(client, tmp_path):
    """A point that finished on the worker that the killing point then took down lost its result
    before the scan read it, and was recorded "failed" with the error "NoneType: None" (3 runs in
    3); with Dask's default worker saturation (1.1) a point queued on that worker, never started,
    was also blamed (``KilledWorker``). Both now run again; only the killing point fails."""
    client.wait_for_workers(2, timeout=60)
    rows = t4a.scan(
        _kills_its_worker_at_seven, {"x": list(range(12))}, client=client, out=tmp_path / "q.parquet", progress=False
    ).to_pylist()
    assert [r["x"] for r in rows if r["status"] != "ok"] == [7]
    assert all(r["y"] == r["x"] + 0.5 for r in rows if r["x"] != 7)
    client.wait_for_workers(2, timeout=60)


class _LostFuture:
    """A future whose result was lost with its worker, on a cluster with no worker left."""

    status = "lost"

    class client:
        @staticmethod
        def nthreads():
            return {}

    def release(self):
        pass


class _NoWorkers:
    @staticmethod
    def wait(future, timeout=None):
        time.sleep(0.1)  # (Dask's wait returns after its timeout)
        raise TimeoutError


def test_a_lost_result_with_no_worker_left_is_a_failed_row_not_a_hang(tmp_path, monkeypatch):
    """Waiting for Dask to compute a lost result again must end when no worker is left to do it
    (a full-suite run hung so, its cluster's workers gone): the point is recorded failed."""
    monkeypatch.setattr(t4a.scans, "LOST_RESULT_WAIT", 2.0)
    run = ScanRun(_kills_its_worker_at_seven, {"x": [1]}, out=tmp_path / "lost.parquet")
    run.dd = _NoWorkers
    start = time.monotonic()
    row = run._row(_LostFuture(), 0)
    assert 2.0 <= time.monotonic() - start < 10.0
    assert (
        row["status"] == "failed" and row["error"].startswith("LostResult: ") and "no worker was left" in row["error"]
    )
