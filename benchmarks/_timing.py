"""Shared timing helpers for the benchmark scripts (best-of-N or median wall clock)."""
from __future__ import annotations

import statistics
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


def interleaved_times(fns: dict[str, Callable[[], Any]], repeat: int = 15,
                      budget: float = 0.15) -> dict[str, list[float]]:
    """Per-call times of each of ``fns`` over ``repeat`` rounds, the rounds of the different
    functions interleaved (round ``r`` of every function runs before round ``r + 1`` of any),
    each round looping enough calls to last about ``budget / repeat`` seconds. On a shared host
    whose speed drifts over seconds, the ratio of two functions' times in the same round
    (:func:`paired_ratio`) is steadier than the ratio of medians taken one after the other."""
    numbers = {}
    for name, fn in fns.items():
        fn()  # warm up (plans, caches, jit compilation)
        t0 = time.perf_counter()
        fn()
        numbers[name] = max(1, int(budget / repeat / max(time.perf_counter() - t0, 1e-7)))
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            n = numbers[name]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            times[name].append((time.perf_counter() - t0) / n)
    return times


def paired_ratio(ours: list[float], theirs: list[float]) -> float:
    """The median over rounds of ``ours[r] / theirs[r]`` (see :func:`interleaved_times`)."""
    return statistics.median(a / b for a, b in zip(ours, theirs))


def fmt_time(t: float | None) -> str:
    if t is None:
        return "n/a"
    if t < 1e-3:
        return f"{t * 1e6:8.1f} us"
    return f"{t * 1e3:8.2f} ms"


def fmt_ratio(ours: float, theirs: float | None) -> str:
    return "n/a" if theirs is None else f"{ours / theirs:6.2f}x"
