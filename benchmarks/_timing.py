"""Shared timing helpers for the benchmark scripts (best-of-N or median wall clock)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

#: the first lines of a benchmark's child process: pinned to one core, one BLAS thread
CHILD_PRELUDE = r"""
import json, os, sys, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
try:
    from threadpoolctl import threadpool_limits
    threadpool_limits(1)
except ImportError:
    pass
import numpy as np
"""


def best_time(fn: Callable[[], Any], repeat: int = 7, number: int | None = None, budget: float = 0.2) -> float:
    """Best per-call time in seconds over ``repeat`` rounds of ``number`` calls."""
    fn()  # warm up (plans, caches, jit compilation)
    if number is None:
        t0 = time.perf_counter()
        fn()
        dt = max(time.perf_counter() - t0, 1e-7)
        number = max(1, int(budget / repeat / dt))
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def median_time(fn: Callable[[], Any], repeat: int = 7, budget: float = 0.2, warmup: bool = True) -> float:
    """Median per-call time in seconds over ``repeat`` rounds; each round loops enough
    calls to last about ``budget / repeat`` seconds (one call at least)."""
    if warmup:
        fn()
    t0 = time.perf_counter()
    fn()
    dt = max(time.perf_counter() - t0, 1e-7)
    number = max(1, int(budget / repeat / dt))
    times = [dt] if number == 1 else []  # a slow call already counts as one round
    while len(times) < repeat:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


_READY, _ROUND = "@@ready", "@@round"


def serve_rounds(fn: Callable[[], Any], repeat: int = 15, budget: float = 0.6) -> None:
    """The child side of :func:`interleaved_processes`: warm ``fn`` up, then for each line read
    from stdin run one untimed call (the process has slept while the others ran: its caches and
    branch predictors are the others'), time one round of calls (as many as last about
    ``budget / repeat`` seconds) and write the per-call time to stdout; return at the end of
    stdin. The calls per round are counted in the first round, which runs alone on the core
    (counted from one call at start-up, while every child warms up on the same core, a fast
    function got 2-3 calls a round and one interruption moved a whole round)."""
    fn()  # warm up (plans, caches, jit compilation)
    print(_READY, flush=True)
    number = 0
    while sys.stdin.readline():
        fn()
        t0 = time.perf_counter()
        if number == 0:  # the first round: calls until its share of the budget has passed
            while number == 0 or time.perf_counter() - t0 < budget / repeat:
                fn()
                number += 1
        else:
            for _ in range(number):
                fn()
        print(f"{_ROUND} {(time.perf_counter() - t0) / number!r}", flush=True)


def _tagged(proc: subprocess.Popen, name: str, tag: str) -> str:
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the child process timing {name!r} ended (exit status {proc.wait()})")
        if line.startswith(tag):
            return line[len(tag) :].strip()


def interleaved_processes(
    commands: dict[str, list[str]], repeat: int = 15, env: dict[str, dict[str, str]] | None = None
) -> dict[str, list[float]]:
    """Per-call times of each command's function over ``repeat`` rounds, the rounds interleaved
    (round ``r`` of every function runs before round ``r + 1`` of any), each function in a
    process of its own: ``commands[name]`` starts a child that calls :func:`serve_rounds` (which
    sets the calls per round). The children inherit this process's core, and the rounds run one
    at a time (the waiting children block on a read), so no two frameworks share a heap or an
    allocator's state, only the core. On a shared host whose speed drifts over seconds, the
    ratio of two functions' times in the same round (:func:`paired_ratio`) is steadier than the
    ratio of medians taken one after the other. ``env[name]`` adds to a child's environment."""
    procs = {}
    try:
        for name, cmd in commands.items():
            procs[name] = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, **(env or {}).get(name, {})},
            )
        for name, proc in procs.items():
            _tagged(proc, name, _READY)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(repeat):
            for name, proc in procs.items():
                proc.stdin.write("\n")
                proc.stdin.flush()
                times[name].append(float(_tagged(proc, name, _ROUND)))
        return times
    finally:
        for proc in procs.values():
            try:
                proc.stdin.close()  # the child's loop ends at the end of its input
            except OSError:  # it ended already (its error went to stderr)
                pass
            proc.wait()


def paired_ratio(ours: list[float], theirs: list[float]) -> float:
    """The median over rounds of ``ours[r] / theirs[r]`` (see :func:`interleaved_processes`)."""
    return statistics.median(a / b for a, b in zip(ours, theirs))


def fmt_time(t: float | None) -> str:
    if t is None:
        return "n/a"
    if t < 1e-3:
        return f"{t * 1e6:8.1f} us"
    return f"{t * 1e3:8.2f} ms"


def fmt_ratio(ours: float, theirs: float | None) -> str:
    return "n/a" if theirs is None else f"{ours / theirs:6.2f}x"
