"""Benchmark of tensor4all.tci.crossinterpolate2 (TCI2) against teneva's TT-cross (``teneva.cross``).

The same functions and tolerance for both; one thread. For each problem TCI2 runs once
and its maximum error is measured on 10^4 random multi-indices (relative to the largest
``|f|`` seen, there or by TCI2: random points of a peaked function miss its maximum). teneva's rank-adaptive cross (maxvol, ``dr_max`` = 1 and 2; the better one
is reported) starts from a random rank-1 train and is stopped, through its callback, after
the first sweep whose maximum error on the same points is at most ``max(TCI2's error,
tolerance)``: the evaluations it needed to get there (distinct multi-indices, with its
cache) and the seconds (its run without the cache, which is faster, callback time
excluded). Ratios below 1 favour tensor4all (target: at most 0.5).

Problems:

* ``random-tt``: a random tensor train (L = 20, d = 2, rank 10) evaluated exactly, tolerance 1e-12;
* ``gauss-5d``: exp(-x.A.x/2) with A tridiagonal (1 on the diagonal, 0.35 beside it) on a
  40-point Gauss-Legendre grid on [-9, 9]^5 (the README's and the tests' integrand),
  tolerance 1e-8 (TCI2 with rook pivoting; its integral is printed against the closed form);
* ``qtci-1d``: the 1D example of the QTCI paper (Ritter et al., PRL 132, 056501 (2024),
  Fig. 1): f(x) = cos(x/B) cos(x/(4 sqrt5 B)) e^(-x^2) + 2 e^(-x), B = 2^-30, on 2^40 points of
  [0, ln 20] (40 binary sites), tolerance 1e-8 and max_bond 15 as in TensorCrossInterpolation.jl's
  published run (T4APlutoExamples ``quantics1d.jl``: rank 15, 45775 cached evaluations,
  error estimates 3.0e-8 .. 4.0e-8), which is printed beside ours.

Run: ``OMP_NUM_THREADS=1 python benchmarks/tci.py [--quick] [--problems random-tt gauss-5d qtci-1d]``
(teneva from the ``bench`` extra).
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

try:
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
except ImportError:  # pragma: no cover
    pass

from tensor4all import tci  # noqa: E402

try:
    import teneva
except ImportError:  # pragma: no cover
    teneva = None

TEST_POINTS = 10_000
JL_QTCI_1D = {"evaluations": 45775, "rank": 15, "error": "3.0e-8 .. 4.0e-8"}


@dataclass
class Problem:
    name: str
    dims: list[int]
    f: Callable[[np.ndarray], np.ndarray]
    tolerance: float
    tci_options: dict = field(default_factory=dict)
    integral: tuple[list[np.ndarray], float] | None = None     # (weights per site, exact value)


def random_tt_problem(L: int, d: int, rank: int) -> Problem:
    rng = np.random.default_rng(0)
    bonds = [1] + [min(rank, d ** min(k + 1, L - k - 1)) for k in range(L - 1)] + [1]
    cores = [rng.standard_normal((bonds[k], d, bonds[k + 1])) / math.sqrt(bonds[k]) for k in range(L)]

    def f(idx: np.ndarray) -> np.ndarray:
        env = cores[0][0, idx[:, 0], :]
        for k in range(1, L):
            env = np.einsum("nr,rns->ns", env, cores[k][:, idx[:, k], :])
        return env[:, 0]

    return Problem(f"random-tt (L={L}, d={d}, rank {rank})", [d] * L, f, 1e-12)


def gauss_problem(n: int, L: int = 5, coupling: float = 0.35, half_width: float = 9.0) -> Problem:
    x, w = np.polynomial.legendre.leggauss(n)
    x, w = half_width * x, half_width * w
    A = np.eye(L) + coupling * (np.eye(L, k=1) + np.eye(L, k=-1))

    def f(idx: np.ndarray) -> np.ndarray:
        X = x[idx]
        return np.exp(-0.5 * np.einsum("ni,ij,nj->n", X, A, X))

    exact = (2 * np.pi) ** (L / 2) / math.sqrt(np.linalg.det(A))
    return Problem(f"gauss-5d ({n}^{L} Gauss-Legendre)", [n] * L, f, 1e-8, {"pivot_search": "rook"},
                   ([w] * L, exact))


def qtci_1d_problem(R: int = 40) -> Problem:
    B, xmax = 2.0 ** -30, math.log(20.0)
    powers = 2.0 ** np.arange(R - 1, -1, -1)

    def f(idx: np.ndarray) -> np.ndarray:
        x = (idx @ powers) * (xmax / (2.0 ** R - 1))          # includeendpoint = true
        return np.cos(x / B) * np.cos(x / (4 * math.sqrt(5) * B)) * np.exp(-x * x) + 2 * np.exp(-x)

    h = xmax / (2.0 ** R - 1)                                  # the sum over the grid times h
    weights = [np.full(2, h ** (1.0 / R))] * R
    return Problem(f"qtci-1d (2^{R} points)", [2] * R, f, 1e-8, {"max_bond": 15}, (weights, 1.9))


# ---- the runs ---------------------------------------------------------------------------------
@dataclass
class Run:
    evaluations: int | None
    seconds: float | None
    error: float | None
    rank: int | None
    note: str = ""


def max_error(values: np.ndarray, ref: np.ndarray, scale: float) -> float:
    return float(np.max(np.abs(values - ref)) / scale)


def run_tci(p: Problem, test: np.ndarray, ref: np.ndarray) -> tuple[Run, Any]:
    t0 = time.perf_counter()
    res = tci.crossinterpolate2(p.f, p.dims, batched=True, tolerance=p.tolerance, **p.tci_options)
    seconds = time.perf_counter() - t0
    err = max_error(np.asarray(tci.tt_evaluate(res.tt, test)), ref, max(np.max(np.abs(ref)), res.max_sample))
    return Run(res.evaluations, seconds, err, max(res.tt.bond_dims, default=1),
               f"{res.termination}, {len(res.errors)} sweeps"), res


def run_teneva(p: Problem, test: np.ndarray, ref: np.ndarray, scale: float, target: float, dr_max: int,
               cache: bool, max_sweeps: int) -> Run:
    info: dict = {}
    spent = [0.0]
    reached: list[tuple[int, float]] = []

    def callback(Y: Any, info: dict, opts: Any) -> bool:
        t = time.perf_counter()
        err = max_error(teneva.get_many(Y, test), ref, scale)
        spent[0] += time.perf_counter() - t
        if err <= target:
            reached.append((info["m"], err))
            return True
        return False

    Y0 = teneva.rand(p.dims, 1, seed=0)
    t0 = time.perf_counter()
    Y = teneva.cross(p.f, Y0, nswp=max_sweeps, dr_min=1, dr_max=dr_max, cache={} if cache else None, info=info,
                     cb=callback)
    seconds = time.perf_counter() - t0 - spent[0]
    if not reached:
        return Run(None, None, max_error(teneva.get_many(Y, test), ref, scale), int(max(teneva.ranks(Y))),
                   f"target not reached in {max_sweeps} sweeps")
    return Run(reached[0][0], seconds, reached[0][1], int(max(teneva.ranks(Y))), f"dr_max={dr_max}")


def fmt(x: Any, spec: str) -> str:
    return "n/a" if x is None else format(x, spec)


def ratio(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or b is None else f"{a / b:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller problems (a few seconds)")
    ap.add_argument("--problems", nargs="+", default=["random-tt", "gauss-5d", "qtci-1d"],
                    choices=["random-tt", "gauss-5d", "qtci-1d"], help="which problems to run (default: all)")
    ap.add_argument("--sweeps", type=int, default=40, help="teneva's largest number of sweeps (default 40)")
    args = ap.parse_args()
    makers = {
        "random-tt": lambda: random_tt_problem(12 if args.quick else 20, 2, 6 if args.quick else 10),
        "gauss-5d": lambda: gauss_problem(16 if args.quick else 40),
        "qtci-1d": lambda: qtci_1d_problem(20 if args.quick else 40),
    }
    rng = np.random.default_rng(1)
    rows = []
    for name in args.problems:
        p = makers[name]()
        test = np.stack([rng.integers(0, d, TEST_POINTS) for d in p.dims], axis=1)
        ref = p.f(test)
        ours, res = run_tci(p, test, ref)
        print(f"\n{p.name}: tolerance {p.tolerance:g}")
        print(f"  tensor4all TCI2   evaluations {ours.evaluations:>9}  {ours.seconds:7.2f} s  max error "
              f"{ours.error:.2e}  rank {ours.rank}  ({ours.note})")
        if p.integral is not None:
            w, exact = p.integral
            print(f"  integral {float(tci.tt_sum(res.tt, w)):.12g}  exact {exact:.12g}")
        if name == "qtci-1d" and not args.quick:
            print(f"  TensorCrossInterpolation.jl (published): evaluations {JL_QTCI_1D['evaluations']}, rank "
                  f"{JL_QTCI_1D['rank']}, error estimates {JL_QTCI_1D['error']}; ours: error estimate "
                  f"{res.errors[-1]:.1e}")
        theirs = None
        if teneva is None:
            print("  teneva: not installed (pip install teneva; the bench extra)")
        else:
            target = max(ours.error, p.tolerance)
            scale = max(float(np.max(np.abs(ref))), res.max_sample)
            best = None
            for dr in (1, 2):
                counted = run_teneva(p, test, ref, scale, target, dr, True, args.sweeps)
                print(f"  teneva dr_max={dr}      evaluations {fmt(counted.evaluations, '>9')}  "
                      f"{fmt(counted.seconds, '7.2f')} s  max error {fmt(counted.error, '.2e')}  rank {counted.rank}  "
                      f"(cache; {counted.note})")
                if counted.evaluations is not None and (best is None or counted.evaluations < best[0].evaluations):
                    best = (counted, dr)
            if best is not None:
                fast = run_teneva(p, test, ref, scale, target, best[1], False, args.sweeps)
                print(f"  teneva dr_max={best[1]}      requests    {fmt(fast.evaluations, '>9')}  "
                      f"{fmt(fast.seconds, '7.2f')} s  (no cache)")
                secs = [s for s in (best[0].seconds, fast.seconds) if s is not None]
                theirs = Run(best[0].evaluations, min(secs) if secs else None, best[0].error, best[0].rank,
                             f"dr_max={best[1]}")
        rows.append((p, ours, theirs))

    print("\n| problem | tolerance | TCI2 evals | teneva evals | ratio | TCI2 s | teneva s | ratio | "
          "TCI2 max error | teneva max error |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for p, ours, theirs in rows:
        te = theirs if theirs is not None else Run(None, None, None, None)
        print(f"| {p.name} | {p.tolerance:g} | {ours.evaluations} | {fmt(te.evaluations, 'd')} | "
              f"{ratio(ours.evaluations, te.evaluations)} | {ours.seconds:.2f} | {fmt(te.seconds, '.2f')} | "
              f"{ratio(ours.seconds, te.seconds)} | {ours.error:.1e} | {fmt(te.error, '.1e')} |")


if __name__ == "__main__":
    main()
