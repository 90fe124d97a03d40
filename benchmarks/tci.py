"""Benchmark of tensor4all.tci.crossinterpolate2 (TCI2) against teneva's TT-cross (``teneva.cross``).

The same functions and tolerance for both; one thread. Each method's maximum error is
measured on the same 10^4 random multi-indices (relative to the largest ``|f|`` seen, there
or by TCI2: random points of a peaked function miss its maximum).

The target error is ``max(tolerance, the error of TCI2's self-stopped run, 100 x f's float64
evaluation noise)``, the noise being the largest error of ``f``'s float64 values on the test
points against the same grid points evaluated in long double (grid integers exact; printed).
Why the last term: an interpolant of float64 samples carries their noise, amplified by the
interpolation, and a target inside that band measures luck, not convergence. On ``qtci-1d``
(``x / B`` with ``B = 2^-30`` puts ~9e8 times x's rounding error into a cosine) the noise is
2.4e-8 of ``max |f|`` on the test points (2.6e-8 on 4,000 others against mpmath at 30 digits;
long double agrees with mpmath to 3e-11), and TCI2's interpolants, converged at max_bond 15, 20,
30 (seeds 0-7, 0-2, 0-1), end 0.9-2.7e-7, 2.2-9.5e-7 and 0.4-2.1e-6 from the float64 values:
more rank makes them worse, only noise is left to fit. The old target, TCI2's own stop, 2.2e-7, sat in that band, so whether a run met it in
two sweeps or four varied with the seed for both codes (TCI2 9,989-38,911 evaluations, teneva
21,758-33,163, seeds 0-7). 100x the noise is above the band at every rank tried. On ``gauss-5d``
(1e-18) and ``random-tt`` (1e-15) the term is far below the tolerance and changes nothing.
Both methods are then stopped by the same rule, the test set: the first sweep whose maximum
error on the test points is at most the target. teneva's rank-adaptive cross (maxvol, ``dr_max`` = 1 and 2, the
better one reported) starts from a random rank-1 train and is stopped through its callback;
TCI2 is run with ``max_iter`` = 1, 2, ... sweeps (the run is deterministic: its first k sweeps
are the same with any larger ``max_iter``) until it reaches the target. Reported: the
evaluations each needed (distinct multi-indices, teneva with its cache) and the seconds: the
median CPU time of ``--repeat`` runs, interleaved, of TCI2 with those sweeps and of teneva
with the sweeps its stopped run took (``nswp``: the same work without the callback; with and
without its cache, the faster). TCI2's own stop (its error estimate below the tolerance over
three sweeps) is reported beside it: it certifies convergence without a test set, at the
price of the extra sweeps. ``--seeds`` lists the evaluations and median CPU seconds with other
seeds of TCI2 (its probes and global pivots) and of teneva's random start, against the same
targets and test sets.

The last columns are the number of parameters of each interpolant (``sum r d r - sum r^2``,
the dimension of the manifold of tensor trains of those ranks): no method that learns from
samples can pin a generic element of that manifold down with fewer samples, so it bounds
from below what any cross approximation reaching that rank can spend.
``--svd-bound`` adds the TT-SVD at the target (random-tt: of its exact train, truncated by
the discarded singular values; gauss-5d: of the full tensor): the fewest parameters, up to
TT-SVD's quasi-optimality, of any tensor train within the target, and TCI2's evaluations
divided by it.
Ratios below 1 favour tensor4all (target: at most 0.5).

Problems:

* ``random-tt``: a random tensor train (L = 20, d = 2, rank 10) evaluated exactly, tolerance 1e-12
  (TCI2 with ``pivot_search="fiber"``, ``global_pivots=0``: the test set checks instead);
* ``gauss-5d``: exp(-x.A.x/2) with A tridiagonal (1 on the diagonal, 0.35 beside it) on a
  40-point Gauss-Legendre grid on [-9, 9]^5 (the README's and the tests' integrand),
  tolerance 1e-8 (TCI2 as for random-tt; its integral is printed against the closed form);
* ``qtci-1d``: the 1D example of the QTCI paper (Ritter et al., PRL 132, 056501 (2024),
  Fig. 1): f(x) = cos(x/B) cos(x/(4 sqrt5 B)) e^(-x^2) + 2 e^(-x), B = 2^-30, on 2^40 points of
  [0, ln 20] (40 binary sites), tolerance 1e-8 and max_bond 15 as in TensorCrossInterpolation.jl's
  published run (T4APlutoExamples ``quantics1d.jl``: rank 15, 45775 cached evaluations,
  error estimates 3.0e-8 .. 4.0e-8), which is printed beside ours.

Run: ``OMP_NUM_THREADS=1 taskset -c 0 python benchmarks/tci.py [--quick] [--svd-bound] [--repeat 5]
[--seeds 0 1 2 3] [--problems random-tt gauss-5d qtci-1d]`` (teneva from the ``bench`` extra).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
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
NOISE_MULTIPLE = 100  # the target is at least this many times f's float64 evaluation noise (docstring)
JL_QTCI_1D = {"evaluations": 45775, "rank": 15, "error": "3.0e-8 .. 4.0e-8"}


@dataclass
class Problem:
    name: str
    dims: list[int]
    f: Callable[[np.ndarray], np.ndarray]
    tolerance: float
    tci_options: dict = field(default_factory=dict)
    integral: tuple[list[np.ndarray], float] | None = None  # (weights per site, exact value)
    cores: list[np.ndarray] | None = None  # the exact tensor train, where there is one
    exact: Callable[[np.ndarray], np.ndarray] | None = None  # f in extended precision (np.longdouble)


def random_tt_problem(L: int, d: int, rank: int) -> Problem:
    rng = np.random.default_rng(0)
    bonds = [1] + [min(rank, d ** min(k + 1, L - k - 1)) for k in range(L - 1)] + [1]
    cores = [rng.standard_normal((bonds[k], d, bonds[k + 1])) / math.sqrt(bonds[k]) for k in range(L)]

    def f(idx: np.ndarray) -> np.ndarray:
        env = cores[0][0, idx[:, 0], :]
        for k in range(1, L):
            env = np.einsum("nr,rns->ns", env, cores[k][:, idx[:, k], :])
        return env[:, 0]

    def exact(idx: np.ndarray) -> np.ndarray:
        env = cores[0][0, idx[:, 0], :].astype(np.longdouble)
        for k in range(1, L):
            env = np.einsum("nr,rns->ns", env, cores[k][:, idx[:, k], :].astype(np.longdouble))
        return env[:, 0]

    return Problem(
        f"random-tt (L={L}, d={d}, rank {rank})",
        [d] * L,
        f,
        1e-12,
        {"pivot_search": "fiber", "global_pivots": 0},
        cores=cores,
        exact=exact,
    )


def gauss_problem(n: int, L: int = 5, coupling: float = 0.35, half_width: float = 9.0) -> Problem:
    x, w = np.polynomial.legendre.leggauss(n)
    x, w = half_width * x, half_width * w
    A = np.eye(L) + coupling * (np.eye(L, k=1) + np.eye(L, k=-1))

    def f(idx: np.ndarray) -> np.ndarray:
        X = x[idx]
        return np.exp(-0.5 * np.einsum("ni,ij,nj->n", X, A, X))

    def f_exact(idx: np.ndarray) -> np.ndarray:
        X = x[idx].astype(np.longdouble)
        return np.exp(-0.5 * np.einsum("ni,ij,nj->n", X, A.astype(np.longdouble), X))

    exact = (2 * np.pi) ** (L / 2) / math.sqrt(np.linalg.det(A))
    return Problem(
        f"gauss-5d ({n}^{L} Gauss-Legendre)",
        [n] * L,
        f,
        1e-8,
        {"pivot_search": "fiber", "global_pivots": 0},
        ([w] * L, exact),
        exact=f_exact,
    )


def qtci_1d_problem(R: int = 40) -> Problem:
    B, xmax = 2.0**-30, math.log(20.0)
    powers = 2.0 ** np.arange(R - 1, -1, -1)

    def f(idx: np.ndarray) -> np.ndarray:
        x = (idx @ powers) * (xmax / (2.0**R - 1))  # includeendpoint = true
        return np.cos(x / B) * np.cos(x / (4 * math.sqrt(5) * B)) * np.exp(-x * x) + 2 * np.exp(-x)

    def exact(idx: np.ndarray) -> np.ndarray:  # the grid's integers exactly, ln 20 and the rest in long double
        n = idx.astype(np.int64) @ (np.int64(1) << np.arange(R - 1, -1, -1, dtype=np.int64))
        x = n.astype(np.longdouble) * (np.log(np.longdouble(20)) / (np.longdouble(2) ** R - 1))
        xb = x * np.longdouble(2) ** 30
        return np.cos(xb) * np.cos(xb / (4 * np.sqrt(np.longdouble(5)))) * np.exp(-x * x) + 2 * np.exp(-x)

    h = xmax / (2.0**R - 1)  # the sum over the grid times h
    weights = [np.full(2, h ** (1.0 / R))] * R
    return Problem(f"qtci-1d (2^{R} points)", [2] * R, f, 1e-8, {"max_bond": 15}, (weights, 1.9), exact=exact)


# ---- the runs ---------------------------------------------------------------------------------
@dataclass
class Run:
    evaluations: int | None
    seconds: float | None
    error: float | None
    rank: int | None
    note: str = ""
    parameters: int | None = None
    sweeps: int | None = None  # the sweeps it ran (TCI2: max_iter; teneva: nswp)


def max_error(values: np.ndarray, ref: np.ndarray, scale: float) -> float:
    return float(np.max(np.abs(values - ref)) / scale)


def evaluation_noise(p: Problem, test: np.ndarray, ref: np.ndarray, scale: float) -> float | None:
    """The largest error of ``f``'s float64 values on the test points against the same points in
    extended precision, relative to ``scale``; None where long double is float64 (no check)."""
    if p.exact is None or np.finfo(np.longdouble).eps > 1e-18:
        return None
    return float(np.max(np.abs(ref - p.exact(test).astype(np.float64)))) / scale


def parameters(dims: list[int], bonds: list[int]) -> int:
    """The dimension of the manifold of tensor trains with these ranks: sum r d r - sum r^2."""
    r = [1, *bonds, 1]
    return sum(r[k] * d * r[k + 1] for k, d in enumerate(dims)) - sum(b * b for b in bonds)


def interpolate(p: Problem, max_iter: int, seed: int) -> Any:
    return tci.crossinterpolate2(
        p.f, p.dims, batched=True, tolerance=p.tolerance, max_iter=max_iter, seed=seed, **p.tci_options
    )


def run_tci(p: Problem, test: np.ndarray, ref: np.ndarray, max_iter: int = 20, seed: int = 0) -> tuple[Run, Any]:
    t0 = time.process_time()
    res = interpolate(p, max_iter, seed)
    seconds = time.process_time() - t0
    bonds = list(res.tt.bond_dims)
    err = max_error(np.asarray(tci.tt_evaluate(res.tt, test)), ref, max(np.max(np.abs(ref)), res.max_sample))
    return Run(
        res.evaluations,
        seconds,
        err,
        max(bonds, default=1),
        f"{res.termination}, {len(res.errors)} sweeps",
        parameters(p.dims, bonds),
    ), res


def svd_bound(p: Problem, target: float) -> tuple[list[int], int, float] | None:
    """The ranks, parameter count and maximum error of the TT-SVD (Oseledets 2011) of the full
    tensor at the smallest ranks within ``target``: the fewest parameters a tensor train
    within the target needs, up to TT-SVD's quasi-optimality. Only for tensors of at most
    2e8 entries (the full tensor is built)."""
    if math.prod(p.dims) > 2e8:
        return None
    rest = np.stack(np.unravel_index(np.arange(math.prod(p.dims[1:])), p.dims[1:]), axis=1)
    full = np.empty(p.dims)
    for i0 in range(p.dims[0]):  # by the first index: the index arrays of one slice at a time
        full[i0] = p.f(np.concatenate([np.full((len(rest), 1), i0), rest], axis=1)).reshape(p.dims[1:])
    del rest
    scale = float(np.max(np.abs(full)))
    best = None
    for cut in CUTS:
        cores, r, m = [], 1, full.reshape(1, -1)
        for d in p.dims[:-1]:
            u, s, vt = np.linalg.svd(m.reshape(r * d, -1), full_matrices=False)
            keep = max(1, int(np.sum(s > cut * s[0])))
            cores.append(u[:, :keep].reshape(r, d, keep))
            r, m = keep, s[:keep, None] * vt[:keep]
        cores.append(m.reshape(r, p.dims[-1], 1))
        approx = cores[0]
        for c in cores[1:]:
            approx = np.tensordot(approx, c, axes=([-1], [0]))
        err = float(np.max(np.abs(approx.reshape(p.dims) - full))) / scale
        bonds = [c.shape[2] for c in cores[:-1]]
        if err <= target:
            best = (bonds, parameters(p.dims, bonds), err)
            break
    return best


CUTS = (1e-6, 3e-7, 1e-7, 3e-8, 1e-8, 3e-9, 1e-9, 3e-10, 1e-10, 3e-11, 1e-11, 3e-12, 1e-12, 3e-13, 1e-13)


def svd_bound_tt(cores: list[np.ndarray], dims: list[int], scale: float, target: float) -> tuple[list[int], int, float]:
    """The TT-SVD bound from the exact tensor train (no full tensor): right-orthogonalized, then
    truncated left to right at each relative cut in turn; the error is bounded by the root of the
    sum of the squared discarded singular values (Frobenius, above the largest entry's error),
    divided by ``scale``. The smallest ranks whose bound is within ``target``."""
    ts = [c.copy() for c in cores]
    for k in range(len(ts) - 1, 0, -1):  # right-orthogonal sites 1 .. L-1
        r, d, c = ts[k].shape
        q, rr = np.linalg.qr(ts[k].reshape(r, d * c).T)
        ts[k] = q.T.reshape(-1, d, c)
        ts[k - 1] = np.tensordot(ts[k - 1], rr.T, axes=([2], [0]))
    best = None
    for cut in CUTS:
        m, bonds, lost = ts[0], [], 0.0
        for k in range(len(ts) - 1):
            r, d, c = m.shape
            u, sv, vt = np.linalg.svd(m.reshape(r * d, c), full_matrices=False)
            keep = max(1, int(np.sum(sv > cut * sv[0])))
            lost += float(np.sum(sv[keep:] ** 2))
            bonds.append(keep)
            m = np.tensordot(sv[:keep, None] * vt[:keep], ts[k + 1], axes=([1], [0]))
        best = (bonds, parameters(dims, bonds), math.sqrt(lost) / scale)
        if best[2] <= target:
            break
    return best


def run_tci_to(
    p: Problem, test: np.ndarray, ref: np.ndarray, scale: float, target: float, sweeps: int, seed: int = 0
) -> Run:
    """TCI2 stopped by the test set: the fewest sweeps whose interpolant is within ``target``
    (``sweeps`` of them in ``Run.sweeps``)."""
    for k in range(1, sweeps + 1):
        run, res = run_tci(p, test, ref, max_iter=k, seed=seed)
        err = max_error(np.asarray(tci.tt_evaluate(res.tt, test)), ref, scale)
        if err <= target:
            return Run(run.evaluations, run.seconds, err, run.rank, f"{k} sweeps", run.parameters, k)
        if res.termination != "max_iter":
            break
    return Run(None, None, None, None, f"target not reached in {sweeps} sweeps")


def run_teneva(
    p: Problem,
    test: np.ndarray,
    ref: np.ndarray,
    scale: float,
    target: float,
    dr_max: int,
    cache: bool,
    max_sweeps: int,
    seed: int = 0,
) -> Run:
    info: dict = {}
    spent = [0.0]
    reached: list[tuple[int, float]] = []

    def callback(Y: Any, info: dict, opts: Any) -> bool:
        t = time.process_time()
        err = max_error(teneva.get_many(Y, test), ref, scale)
        spent[0] += time.process_time() - t
        if err <= target:
            reached.append((info["m"], err))
            return True
        return False

    Y0 = teneva.rand(p.dims, 1, seed=seed)
    t0 = time.process_time()
    Y = teneva.cross(
        p.f, Y0, nswp=max_sweeps, dr_min=1, dr_max=dr_max, cache={} if cache else None, info=info, cb=callback
    )
    seconds = time.process_time() - t0 - spent[0]
    if not reached:
        return Run(
            None,
            None,
            max_error(teneva.get_many(Y, test), ref, scale),
            int(max(teneva.ranks(Y))),
            f"target not reached in {max_sweeps} sweeps",
        )
    bonds = [int(r) for r in teneva.ranks(Y)[1:-1]]
    return Run(
        reached[0][0],
        seconds,
        reached[0][1],
        max(bonds, default=1),
        f"dr_max={dr_max}",
        parameters(p.dims, bonds),
        int(info["nswp"]),
    )


def teneva_best(
    p: Problem, test: np.ndarray, ref: np.ndarray, scale: float, target: float, max_sweeps: int, seed: int
) -> tuple[Run | None, int, list[Run]]:
    """teneva with ``dr_max`` = 1 and 2 (its cache counting the evaluations): the one with fewer."""
    runs = [run_teneva(p, test, ref, scale, target, dr, True, max_sweeps, seed) for dr in (1, 2)]
    reached = [(r.evaluations, dr, r) for dr, r in zip((1, 2), runs) if r.evaluations is not None]
    if not reached:
        return None, 1, runs
    _, dr, best = min(reached, key=lambda x: x[0])
    return best, dr, runs


def median_cpu(
    p: Problem, sweeps: int, seed: int, dr_max: int, theirs: Run | None, repeat: int
) -> tuple[float, float | None]:
    """Median CPU seconds of TCI2 (``max_iter=sweeps``) and of teneva (``nswp`` = the sweeps of
    its run ``theirs`` stopped by the test set: the same work, without the callback; with and
    without its cache, the faster), ``repeat`` runs each, interleaved."""
    ours, bare, cached = [], [], []
    for _ in range(repeat):
        t0 = time.process_time()
        interpolate(p, sweeps, seed)
        ours.append(time.process_time() - t0)
        if theirs is None or theirs.sweeps is None:
            continue
        for cache, out in ((None, bare), ({}, cached)):
            Y0 = teneva.rand(p.dims, 1, seed=seed)
            t0 = time.process_time()
            teneva.cross(p.f, Y0, nswp=theirs.sweeps, dr_min=1, dr_max=dr_max, cache=cache, info={})
            out.append(time.process_time() - t0)
    theirs = min(statistics.median(bare), statistics.median(cached)) if bare else None
    return statistics.median(ours), theirs


def fmt(x: Any, spec: str) -> str:
    return "n/a" if x is None else format(x, spec)


def ratio(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or b is None else f"{a / b:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller problems (a few seconds)")
    ap.add_argument(
        "--problems",
        nargs="+",
        default=["random-tt", "gauss-5d", "qtci-1d"],
        choices=["random-tt", "gauss-5d", "qtci-1d"],
        help="which problems to run (default: all)",
    )
    ap.add_argument("--sweeps", type=int, default=40, help="teneva's largest number of sweeps (default 40)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs of each method, interleaved (default 5)")
    ap.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[0],
        help="seeds of TCI2 (its probes and global pivots) and of teneva's random start; the first one is "
        "tabled, the evaluations and median CPU seconds of each are listed (default: 0)",
    )
    ap.add_argument(
        "--svd-bound",
        action="store_true",
        help="also the TT-SVD bound at the target: the parameters of the smallest tensor train within it "
        "(random-tt: from its exact train; gauss-5d: from the full tensor, 10^8 entries, ~2 GB, ~2 min)",
    )
    args = ap.parse_args()
    makers = {
        "random-tt": lambda: random_tt_problem(12 if args.quick else 20, 2, 6 if args.quick else 10),
        "gauss-5d": lambda: gauss_problem(16 if args.quick else 40),
        "qtci-1d": lambda: qtci_1d_problem(20 if args.quick else 40),
    }
    seed = args.seeds[0]
    rng = np.random.default_rng(1)
    rows, by_seed = [], []
    for name in args.problems:
        p = makers[name]()
        test = np.stack([rng.integers(0, d, TEST_POINTS) for d in p.dims], axis=1)
        ref = p.f(test)
        own, res = run_tci(p, test, ref, seed=seed)
        scale = max(float(np.max(np.abs(ref))), res.max_sample)
        noise = evaluation_noise(p, test, ref, scale)
        target = max(own.error, p.tolerance, NOISE_MULTIPLE * (noise or 0.0))
        print(
            f"\n{p.name}: tolerance {p.tolerance:g}, float64 evaluation noise {fmt(noise, '.1e')}, "
            f"TCI2's own error {own.error:.1e}, target error {target:.1e}"
        )
        print(
            f"  TCI2, its own stop        evaluations {own.evaluations:>9}  {own.seconds:7.3f} s  max error "
            f"{own.error:.2e}  rank {own.rank}  ({own.note})"
        )
        ours = run_tci_to(p, test, ref, scale, target, 20, seed)
        print(
            f"  TCI2, to the target       evaluations {fmt(ours.evaluations, '>9')}  {fmt(ours.seconds, '7.3f')} s  "
            f"max error {fmt(ours.error, '.2e')}  rank {ours.rank}  ({ours.note})"
        )
        bound = None
        if args.svd_bound:
            bound = svd_bound_tt(p.cores, p.dims, scale, target) if p.cores is not None else svd_bound(p, target)
            if bound is not None:
                print(
                    f"  TT-SVD within the target ({'exact train' if p.cores is not None else 'full tensor'}): "
                    f"ranks {bound[0]}, {bound[1]} parameters, "
                    f"max error {bound[2]:.1e}"
                )
        if p.integral is not None:
            w, exact = p.integral
            print(f"  integral {float(tci.tt_sum(res.tt, w)):.12g}  exact {exact:.12g}")
        if name == "qtci-1d" and not args.quick:
            print(
                f"  TensorCrossInterpolation.jl (published): evaluations {JL_QTCI_1D['evaluations']}, rank "
                f"{JL_QTCI_1D['rank']}, error estimates {JL_QTCI_1D['error']}; ours: error estimate "
                f"{res.errors[-1]:.1e}"
            )
        theirs, dr = None, 1
        if teneva is None:
            print("  teneva: not installed (pip install teneva; the bench extra)")
        else:
            best, dr, runs = teneva_best(p, test, ref, scale, target, args.sweeps, seed)
            for d, counted in zip((1, 2), runs):
                print(
                    f"  teneva dr_max={d}, target  evaluations {fmt(counted.evaluations, '>9')}  "
                    f"{fmt(counted.seconds, '7.3f')} s  max error {fmt(counted.error, '.2e')}  rank {counted.rank}  "
                    f"(cache; {counted.note}, {fmt(counted.sweeps, 'd')} sweeps)"
                )
            theirs = best
        if ours.sweeps is not None:  # the timings: medians of interleaved runs, CPU seconds
            mine, other = median_cpu(p, ours.sweeps, seed, dr, theirs, args.repeat)
            ours.seconds = mine
            if theirs is not None:
                theirs.seconds = other
            print(
                f"  median of {args.repeat} (CPU s): TCI2 {mine:.3f}, teneva {fmt(other, '.3f')} "
                f"(ratio {ratio(mine, other)})"
            )
        rows.append((p, target, own, ours, theirs, bound))
        for s_ in args.seeds[1:]:  # the evaluations with the other seeds, same target and test set
            o = run_tci_to(p, test, ref, scale, target, 20, s_)
            t, dr_s = teneva_best(p, test, ref, scale, target, args.sweeps, s_)[:2] if teneva is not None else (None, 1)
            if o.sweeps is not None:  # timed as for the first seed
                o.seconds, other = median_cpu(p, o.sweeps, s_, dr_s, t, args.repeat)
                if t is not None:
                    t.seconds = other
            by_seed.append((p.name, s_, o, t))
        if len(args.seeds) > 1:
            by_seed.insert(len(by_seed) - len(args.seeds) + 1, (p.name, seed, ours, theirs))

    print("\nBoth stopped at the first sweep within the target error (ratios: TCI2 / teneva; seconds: median CPU):\n")
    print(
        "| problem | options | target error | TCI2 evals | teneva evals | ratio | TCI2 s | teneva s | ratio | "
        "TCI2 own stop: evals, s | parameters TCI2 / teneva / TT-SVD | TCI2 evals / TT-SVD |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p, target, own, ours, theirs, bound in rows:
        te = theirs if theirs is not None else Run(None, None, None, None)
        svd = None if bound is None else bound[1]
        opts = ", ".join(f"{k}={v}" for k, v in p.tci_options.items())
        print(
            f"| {p.name} | {opts} | {target:.1e} | {fmt(ours.evaluations, 'd')} | {fmt(te.evaluations, 'd')} | "
            f"{ratio(ours.evaluations, te.evaluations)} | {fmt(ours.seconds, '.3f')} | {fmt(te.seconds, '.3f')} | "
            f"{ratio(ours.seconds, te.seconds)} | {own.evaluations}, {own.seconds:.3f} | "
            f"{fmt(ours.parameters, 'd')} / {fmt(te.parameters, 'd')} / {fmt(svd, 'd')} | "
            f"{ratio(ours.evaluations, svd)} |"
        )
    if by_seed:
        print("\nEvaluations by seed (TCI2's seed and teneva's random start; same targets and test sets):\n")
        print(
            "| problem | seed | TCI2 evals (sweeps) | teneva evals (dr_max, sweeps) | ratio | TCI2 s | teneva s | ratio |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for name, s_, o, t in by_seed:
            te = t if t is not None else Run(None, None, None, None)
            print(
                f"| {name} | {s_} | {fmt(o.evaluations, 'd')} ({fmt(o.sweeps, 'd')}) | {fmt(te.evaluations, 'd')} "
                f"({te.note}, {fmt(te.sweeps, 'd')}) | {ratio(o.evaluations, te.evaluations)} | "
                f"{fmt(o.seconds, '.3f')} | {fmt(te.seconds, '.3f')} | {ratio(o.seconds, te.seconds)} |"
            )


if __name__ == "__main__":
    main()
