"""The BLAS thread policy across Python threads and after a failed start (a review found both).

A pthreads OpenBLAS (NumPy's and SciPy's wheels) has one thread count for the process, whichever
setter writes it: two threads each saving and restoring it undid each other's limits and left
the process at a stale count for good. The policy now shares the count (the least any active
call asks for) and restores the caller's when the last call ends."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import tenferro as tf
from threadpoolctl import threadpool_info, threadpool_limits

import tensor4all as t4a
from tensor4all.structured import BlockDiagonal
from tensor4all.tools import threads as policy


class _GlobalLibrary:
    """A BLAS library with one process-wide count, set alike by both of its setters (a pthreads
    OpenBLAS: its ``_local`` setter writes the process's count)."""

    internal_api = "openblas"

    def __init__(self, count: int):
        self.num_threads = count
        self.setter = self.set_num_threads

    def set_num_threads(self, n: int) -> None:
        self.num_threads = n


def _overlapping(lib: _GlobalLibrary, first: int | None, second: int) -> dict[str, int]:
    """The count inside two overlapping calls (``first`` in this thread, ``second`` in a worker
    that starts inside it and ends after it) and after both."""
    seen: dict[str, int] = {}
    inside, first_done = threading.Event(), threading.Event()

    def worker() -> None:
        with policy.blas_threads(second, 8):
            inside.set()
            first_done.wait(10)
            seen["second alone"] = lib.num_threads

    with policy.blas_threads(first, 8):
        seen["first alone"] = lib.num_threads
        t = threading.Thread(target=worker)
        t.start()
        inside.wait(10)
        seen["both"] = lib.num_threads
    seen["after first"] = lib.num_threads
    first_done.set()
    t.join()
    seen["after both"] = lib.num_threads
    return seen


def test_overlapping_calls_share_the_count_and_restore_the_callers(monkeypatch):
    lib = _GlobalLibrary(3)
    monkeypatch.setattr(policy, "_blas_libraries", lambda: [lib])
    monkeypatch.setattr(policy._Libraries, "local", {id(lib): lib.setter})
    seen = _overlapping(lib, None, 2)
    # before: the first's 1 while the second runs became 2, and the process ended at 1 for good
    assert seen == {"first alone": 1, "both": 1, "after first": 2, "second alone": 2, "after both": 3}
    assert policy._Shared.requests == {} and policy._Shared.saved == [] == policy._Shared.applied


def _blas() -> set[int]:
    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


def test_overlapping_calls_on_the_loaded_blas():
    """The same with the BLAS libraries this process loaded (a caller's count of 3)."""
    with threadpool_limits(3, user_api="blas"):
        if _blas() != {3}:
            pytest.skip("the loaded BLAS does not take a count of 3")
        seen: dict[str, set[int]] = {}
        inside, first_done = threading.Event(), threading.Event()

        def worker() -> None:
            with policy.blas_threads(2, 8):
                inside.set()
                first_done.wait(10)
                seen["second alone"] = _blas()

        with policy.blas_threads(None, 8):
            t = threading.Thread(target=worker)
            t.start()
            inside.wait(10)
            seen["both"] = _blas()
        first_done.set()
        t.join()
        seen["after both"] = _blas()
        assert seen == {"both": {1}, "second alone": {2}, "after both": {3}}


@pytest.mark.parametrize("bad", [2.5, "2", True, -1, 2**64 + 2, 4097])
def test_a_bad_count_leaves_no_policy_behind(bad):
    """``thermodynamics(threads=2.5)`` raised a raw ctypes error inside the policy's start and left
    it marked active, so every later ``threads=None`` call in the thread ran at the caller's count."""
    with pytest.raises(t4a.Tensor4allError, match="threads"):
        t4a.thermodynamics(t4a.models.xx(4), 0.2, dbeta=0.1, threads=bad)
    assert not policy._active() and policy._Shared.requests == {}
    with pytest.raises(t4a.Tensor4allError, match="threads"):
        t4a.dmrg(t4a.models.heisenberg(4), max_bond=4, sweeps=1, threads=bad)
    assert not policy._active()


def test_the_matmul_operator_of_structured_tensors_is_under_the_policy(monkeypatch):
    """``BlockDiagonal @ BlockDiagonal`` ran at the caller's count where ``tensor4all.matmul`` ran at 1."""
    seen: list[int] = []
    enter = policy._enter
    monkeypatch.setattr(policy, "_enter", lambda n: (seen.append(n), enter(n))[1])
    a = BlockDiagonal([tf.asarray(np.eye(2) * 2.0), tf.asarray(np.eye(3))])
    a @ a
    assert seen == [1]
