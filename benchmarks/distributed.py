"""Benchmarks of the distributed features (issue 27), one section each.

* ``scan``: 24 TFIM points (L = 32, g = 0.2 ... 2.0, chi 64, the options of ``tensor4all
  scan --model tfim --L 32 --g 0.2:2.0:24``: two-site, parity conserved, one BLAS thread)
  run three ways: a serial loop in this process (``task(g=g)``, after a warm-up point),
  ``tensor4all.scan`` with its own 2-worker ``LocalCluster`` (timed from the call: cluster
  start, the workers' imports, the points, the file), and ``tensor4all.scan`` on a
  2-worker cluster that is already running and warm; ``--repeats`` times, the three ways in
  turn, so that each repeat's ratio parallel / serial compares runs made minutes apart (the
  shared development machine's speed drifts: one serial loop took 4.1 s to 6.9 s). Prints each
  repeat, the median seconds and the median ratios (goal: <= 0.6), and whether the rows equal
  the serial results bit for bit, with the load average before and after. Measured (the shared
  2-core development machine, 2026-11-27, 5 repeats, two runs): median ratio own cluster 0.56x
  and 0.58x, running cluster 0.55x and 0.59x; serial 4.1-4.5 s (median). Before the local
  cluster slowed its event loops' ticks (500 ms) and system monitor (5 s), single runs gave
  0.67x, 0.64x, 0.58x; with spawned instead of forked workers 0.85x. Since 2026-11-27 the workers
  come from a preloaded fork server (forking the multi-threaded scanning process could hang):
  the first cluster of a run waits about 2 s for it.

* ``einsum``: a closed network and a memory limit of the largest intermediate of its best
  unsliced path (cotengra's hyper-optimizer, 32 greedy trials; its partitioning methods
  would start a process pool of their own) / ``--fraction`` (64: 4 MiB for the default
  circuit, 64 slices; at 16, 16 MiB intermediates, two workers' slices no longer share the
  32 MiB last-level cache of this machine and the 2-worker speedup drops to 1.55-1.74x): the
  contraction unsliced on that path, sliced in this process (overhead, goal <= 1.3x), and
  ``tenferro.distributed.einsum`` on a 1-worker and a 2-worker ``LocalCluster`` (speedup,
  goal >= 1.7x), medians of ``--repeats``. It also prints two ceilings: what two plain GEMM loops
  get at once against one alone (compute), and what this very contraction gets with its slices
  split between two plain processes without Dask (its intermediates stream through the memory
  the two cores share: on this host that ceiling moves between 1.0x and 2.4x from one repeat
  to the next). The two clusters run side by side and their calls
  alternate, so each repeat's speedup compares runs made seconds apart (the shared host's speed
  drifts by far more than the goal's margin from one minute to the next); the median of those
  paired ratios is the figure. Each Dask worker (every thread of it) is pinned to a CPU of its
  own physical core (:func:`distinct_cores`, :func:`pin_workers`), as the ceilings' plain
  processes are. Measured 2026-11-28, medians: 1.79x and 1.90x (7 repeats each) on the H100
  machine's 16-core Xeon host, 1.96x (5 repeats) on the H200 machine's; 1.61x, 1.79x, 1.59x
  and 1.71x (5 repeats each) on the shared 2-core development machine, where this
  contraction's own ceiling was 1.53x, 1.62x, 1.74x and 1.63x.
  ``--network circuit`` (default): the amplitude
  <0...0|C|0...0> of a random circuit on a ``--rows`` x ``--cols`` grid of qubits (4 x 6),
  ``--cycles`` (14) cycles of Haar-random two-qubit gates on the edges in the ABCDCDAB order
  of Google's supremacy circuits, complex128. ``--network lattice``: a closed square-lattice
  network (the shape of a PEPS norm, ``--side`` 5, ``--bond`` 16, float64), which slices
  badly: its best sliced tree costs about 1.4x the best unsliced tree's FLOPs.

Run: ``python benchmarks/distributed.py [--section scan|einsum] [--points 24] [--L 32]``
(the ``distributed`` extra).
"""

from __future__ import annotations

import os
import pickle
import sys

# this file's name is the Dask package's: without its directory on the path, 'import distributed'
# finds the package, not this script
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import tensor4all as t4a  # noqa: E402


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "n/a"


# ---- scan ------------------------------------------------------------------------------------
def scan_section(args: argparse.Namespace) -> None:
    import distributed

    from tensor4all.scan import local_cluster

    task = t4a.ScanTask(
        "tfim",
        params={"L": args.L, "J": 1.0},
        settings={
            "max_bond": 64,
            "cutoff": 1e-12,
            "sweeps": 10,
            "tol": 1e-10,
            "seed": 0,
            "threads": 1,
            "conserve": "parity",
            "sector": 0.0,
        },
        observables=("Z", "X@0*X@-1"),
    )
    gs = np.linspace(0.2, 2.0, args.points)
    print(
        f"scan: {args.points} TFIM points, L = {args.L}, g = 0.2..2.0, chi 64, parity conserved, 1 BLAS thread; "
        f"{args.workers} workers; {args.repeats} repeats, each the three ways in turn; load average before {_load()}"
    )
    t4a.ScanTask("tfim", params={"L": 8}, settings={"threads": 1})(g=1.0)  # warm-up of this process
    times: dict[str, list[float]] = {"serial": [], "own": [], "warm": []}
    same = True
    for r in range(args.repeats):
        t0 = time.perf_counter()
        serial = [task(g=float(g)) for g in gs]
        times["serial"].append(time.perf_counter() - t0)
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            table = t4a.scan(
                task, {"g": gs}, workers=args.workers, out=os.path.join(tmp, "fresh.parquet"), progress=False
            )
            times["own"].append(time.perf_counter() - t0)
            same &= _same(table.to_pylist(), serial)
            cluster = local_cluster(args.workers)  # as scan starts it
            with cluster, distributed.Client(cluster) as client:
                t4a.scan(
                    t4a.ScanTask("tfim", params={"L": 8}),
                    {"g": [0.5, 1.0, 1.5, 2.0]},
                    client=client,
                    out=os.path.join(tmp, "warm-up.parquet"),
                    progress=False,
                )  # the workers import tensor4all
                t0 = time.perf_counter()
                table = t4a.scan(task, {"g": gs}, client=client, out=os.path.join(tmp, "warm.parquet"), progress=False)
                times["warm"].append(time.perf_counter() - t0)
            same &= _same(table.to_pylist(), serial)
        s, o, w = (times[k][-1] for k in ("serial", "own", "warm"))
        print(
            f"  repeat {r + 1}: serial {s:6.2f} s   own LocalCluster {o:6.2f} s (ratio {o / s:.2f})   "
            f"running warm cluster {w:6.2f} s (ratio {w / s:.2f})"
        )
    ratios = {k: [t / s for t, s in zip(times[k], times["serial"])] for k in ("own", "warm")}
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(
        f"  serial loop (this process)              {med['serial']:8.2f} s   "
        f"{med['serial'] / args.points:.3f} s per point (median)"
    )
    print(
        f"  scan, own LocalCluster (from the call)  {med['own']:8.2f} s   median ratio "
        f"{np.median(ratios['own']):.2f} (each repeat against its own serial loop)"
    )
    print(
        f"  scan, running warm cluster              {med['warm']:8.2f} s   median ratio {np.median(ratios['warm']):.2f}"
    )
    print(f"  rows equal to the serial ones bit for bit: {same}; goal: ratio <= 0.6; load average after {_load()}")


def _same(rows: list[dict], serial: list[dict]) -> bool:
    return len(rows) == len(serial) and all(
        r["status"] == "ok" and {k: r[k] for k in s} == s for r, s in zip(rows, serial)
    )


# ---- sliced einsum -----------------------------------------------------------------------------
def lattice_network(side: int, bond: int, seed: int = 0) -> tuple[list, list]:
    """A closed side x side square-lattice network (the shape of a PEPS norm), Gaussian
    entries: the label lists and the operands."""
    import tenferro as tf

    rng = np.random.default_rng(seed)
    names: dict = {}
    terms = []
    for x in range(side):
        for y in range(side):
            terms.append(
                [
                    names.setdefault(frozenset([(x, y), nb]), len(names))
                    for nb in ((x + 1, y), (x, y + 1), (x - 1, y), (x, y - 1))
                    if 0 <= nb[0] < side and 0 <= nb[1] < side
                ]
            )
    ops = [tf.asarray(rng.standard_normal((bond,) * len(t)) / np.sqrt(bond)) for t in terms]
    return terms, ops


def circuit_network(rows: int, cols: int, cycles: int, seed: int = 0) -> tuple[list, list]:
    """The amplitude <0...0|C|0...0> of a random circuit on a rows x cols grid of qubits:
    ``cycles`` layers of Haar-random two-qubit gates, each layer on one of four edge classes
    (vertical or horizontal, even or odd) in the order ABCDCDAB (Arute et al., Nature 574,
    505 (2019)); the label lists and the operands (complex128)."""
    import tenferro as tf

    rng = np.random.default_rng(seed)
    n = rows * cols
    wire = list(range(n))
    terms: list = [[w] for w in wire]
    classes: list[list[tuple[int, int]]] = [[], [], [], []]
    for x in range(rows):
        for y in range(cols):
            if x + 1 < rows:
                classes[x % 2].append((x * cols + y, (x + 1) * cols + y))
            if y + 1 < cols:
                classes[2 + y % 2].append((x * cols + y, x * cols + y + 1))
    fresh = n
    for c in range(cycles):
        for a, b in classes[(0, 1, 2, 3, 2, 3, 0, 1)[c % 8]]:
            terms.append([wire[a], wire[b], fresh, fresh + 1])
            wire[a], wire[b] = fresh, fresh + 1
            fresh += 2
    terms += [[w] for w in wire]
    zero = np.array([1.0, 0.0], dtype=complex)
    ops = []
    for t in terms:
        if len(t) == 1:
            ops.append(tf.asarray(zero))
        else:
            q, r = np.linalg.qr(rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4)))
            ops.append(tf.asarray((q * (np.diag(r) / abs(np.diag(r)))).reshape(2, 2, 2, 2)))
    return terms, ops


def _median(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def einsum_section(args: argparse.Namespace) -> None:
    """The slicing overhead (sliced in this process vs unsliced, goal <= 1.3x) and the 2-worker
    speedup of ``tenferro.distributed.einsum`` (1-worker vs 2-worker cluster, same slicing,
    goal >= 1.7x) on a closed square-lattice network whose memory limit forces >= 16 slices."""
    import distributed
    import tenferro as tf
    import tenferro.distributed as td

    from tensor4all.scan import local_cluster

    import cotengra
    import warnings

    if args.network == "circuit":
        terms, ops = circuit_network(args.rows, args.cols, args.cycles)
        what = f"random circuit {args.rows}x{args.cols} qubits, {args.cycles} cycles, complex128"
    else:
        terms, ops = lattice_network(args.side, args.bond)
        what = f"{args.side}x{args.side} lattice, bond {args.bond}, float64"
    interleaved = [x for pair in zip(ops, terms) for x in pair] + [[]]
    sizes = {lab: int(op.shape[k]) for op, t in zip(ops, terms) for k, lab in enumerate(t)}
    itemsize = np.dtype(np.asarray(ops[0]).dtype).itemsize
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cotengra: kahypar missing
        random.seed(0)  # cotengra's greedy trials draw from the global generator
        best = cotengra.HyperOptimizer(
            methods=("greedy",), max_repeats=32, optlib="random", progbar=False, parallel=False, seed=0
        ).search(terms, (), sizes)
    best_path = [list(p) for p in best.get_path()]
    limit = int(best.max_size()) * itemsize // args.fraction
    sc = tf.einsum_slicing(*interleaved, memory_limit=limit)
    _, info = tf.einsum_path(*interleaved)
    print(
        f"sliced einsum: {what}; best unsliced path (cotengra) {best.contraction_cost():.3g} FLOPs ('auto': "
        f"{info.flops:.3g}), largest intermediate {best.max_size() * itemsize / 2**20:.1f} MiB; memory_limit = that / "
        f"{args.fraction} = {limit / 2**20:.2f} MiB -> {sc.slices} slices of {len(sc.sliced)} labels, largest "
        f"{sc.largest_intermediate / 2**20:.2f} MiB, sliced tree {sc.overhead:.2f}x the FLOPs of einsum's own unsliced "
        f"path; {args.repeats} repeats (medians); load {_load()}"
    )
    tf.einsum(*interleaved, optimize=best_path)
    t_plain, want = _median(lambda: tf.einsum(*interleaved, optimize=best_path), args.repeats)
    t_sliced, got = _median(lambda: tf.einsum(*interleaved, memory_limit=limit), args.repeats)
    print(f"  unsliced, best path                  {t_plain:8.3f} s")
    print(
        f"  sliced, this process                 {t_sliced:8.3f} s   overhead {t_sliced / t_plain:.2f}x (goal <= 1.3)"
        f"   rel. diff {abs(complex(got) / complex(want) - 1):.1e}"
    )
    # both clusters run side by side (the idle one's workers sleep), their calls alternate: each
    # repeat's ratio compares runs made seconds apart, not minutes (the shared host's speed drifts)
    with contextlib.ExitStack() as stack:
        clients = {}
        cores = distinct_cores(args.workers)
        for workers in (1, args.workers):
            cluster = stack.enter_context(local_cluster(workers))  # single-threaded workers, profiler off
            clients[workers] = stack.enter_context(distributed.Client(cluster))
            pin_workers(clients[workers], cores)  # as the plain processes of the ceilings below
        print(
            f"  workers pinned to CPUs {cores} (each its own physical core; the 1-worker cluster's on the first)"
            if cores
            else "  workers not pinned (the platform does not say which CPUs are distinct cores)"
        )
        runs = {
            w: (lambda c=c: td.einsum(*interleaved, client=c, memory_limit=limit, tasks=2 * args.workers))
            for w, c in clients.items()
        }
        for run in runs.values():
            run()  # the workers import tenferro and cache the plan
        times: dict[int, list[float]] = {w: [] for w in runs}
        outs = {}
        for _ in range(args.repeats):
            for w, run in runs.items():
                t0 = time.perf_counter()
                outs[w] = run()
                times[w].append(time.perf_counter() - t0)
    for w in runs:
        print(
            f"  distributed, {w} worker{'s' if w > 1 else ' '}                 {np.median(times[w]):8.3f} s"
            f"   rel. diff {abs(complex(outs[w]) / complex(want) - 1):.1e}"
        )
    ceilings = _parallel_ceiling(args.workers, args.repeats)
    print(
        f"  this machine's ceiling: {args.workers} processes of a plain GEMM loop at once against one alone, "
        f"{np.median(ceilings):.2f}x median ({', '.join(f'{x:.2f}' for x in ceilings)})"
    )
    own = _workload_ceiling(
        tf.einsum_slicing(*interleaved, memory_limit=limit, min_slices=2 * args.workers),
        ops,
        args.workers,
        args.repeats,
    )
    print(
        f"  this contraction's ceiling without Dask: its slices split in {args.workers} plain processes at once "
        f"against one share alone, {np.median(own):.2f}x median ({', '.join(f'{x:.2f}' for x in own)})"
    )
    speedups = [a / b for a, b in zip(times[1], times[args.workers])]
    t_two = float(np.median(times[args.workers]))
    print(
        f"  {args.workers}-worker speedup over 1 worker: {np.median(speedups):.2f}x median of the repeats' "
        f"ratios ({', '.join(f'{x:.2f}' for x in speedups)}; goal >= 1.7); over the sliced single process "
        f"{t_sliced / t_two:.2f}x; over the unsliced best path {t_plain / t_two:.2f}x; load after {_load()}"
    )


_GEMM_LOOP = """
import sys, time
import numpy as np
rng = np.random.default_rng(0)
a = rng.standard_normal((256, 256)) + 1j * rng.standard_normal((256, 256))
b = rng.standard_normal((256, 1024)) + 1j * rng.standard_normal((256, 1024))   # 4 MiB, as a slice's operands
t0 = time.perf_counter()
for _ in range(60):
    a @ b
print(time.perf_counter() - t0)
"""


def distinct_cores(n: int) -> list[int] | None:
    """``n`` CPUs this process may run on, each on its own physical core (the kernel's
    ``topology/core_id`` and ``physical_package_id``; hyperthreads of one core share its
    arithmetic and caches, so two processes on them do not make a 2-worker measurement), the
    first package's first; ``None`` where the platform does not say or has too few."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
        seen: dict[tuple[int, int], int] = {}
        for cpu in allowed:
            topo = f"/sys/devices/system/cpu/cpu{cpu}/topology"
            with open(f"{topo}/physical_package_id") as f_pkg, open(f"{topo}/core_id") as f_core:
                seen.setdefault((int(f_pkg.read()), int(f_core.read())), cpu)
    except (AttributeError, OSError, ValueError):
        return None
    cores = [seen[key] for key in sorted(seen)]
    return cores[:n] if len(cores) >= n else None


def _pinned(cmd: list[str], k: int, workers: int) -> list[str]:
    """``cmd`` run on the ``k``-th of :func:`distinct_cores` alone (``taskset``) where the
    platform has ``workers`` such."""
    cores = distinct_cores(workers)
    if shutil.which("taskset") and cores is not None:
        return ["taskset", "-c", str(cores[k])] + cmd
    return cmd


def pin_workers(client, cores: list[int] | None) -> dict[str, int]:
    """Pin each of ``client``'s worker processes (every thread, so the task thread Dask
    starts later inherits it) to one of ``cores``, in the order of the workers' addresses;
    worker address -> core. Nothing where ``cores`` is ``None``."""
    if cores is None:
        return {}
    placed = {}
    for (address, pid), core in zip(sorted(client.run(os.getpid).items()), cores):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):  # a thread that ended meanwhile
                os.sched_setaffinity(int(tid), {core})
        placed[address] = core
    return placed


def _parallel_ceiling(workers: int, repeats: int) -> list[float]:
    """What ``workers`` processes get from this machine at once: per repeat, one plain GEMM loop
    (one BLAS thread, the size of a slice's operands) alone, then ``workers`` of them at once,
    each pinned to its own core where the platform allows; ``workers x alone / slowest``."""

    def run(k: int) -> subprocess.Popen:
        return subprocess.Popen(
            _pinned([sys.executable, "-c", _GEMM_LOOP], k, workers), stdout=subprocess.PIPE, text=True
        )

    out = []
    for _ in range(repeats):
        alone = float(run(0).communicate()[0])
        procs = [run(k) for k in range(workers)]
        together = max(float(p.communicate()[0]) for p in procs)
        out.append(workers * alone / together)
    return out


_SLICE_SHARE = """
import pickle, sys, time
import tenferro as tf
with open(sys.argv[1], "rb") as f:
    sc, arrays, keys = pickle.load(f)
ops = [tf.asarray(a) for a in arrays]
sc.contract_keys(tf.einsum, ops, keys[:1])   # plans built and cached, as on a warm worker
print("ready", flush=True)
sys.stdin.readline()
t0 = time.perf_counter()
sc.contract_keys(tf.einsum, ops, keys)
print(time.perf_counter() - t0, flush=True)
"""


def _workload_ceiling(sc, ops: list, workers: int, repeats: int) -> list[float]:
    """What ``workers`` processes get from this machine on this very contraction, without Dask:
    per repeat, one plain process contracting its share of the slices (1/workers of them) alone,
    then ``workers`` such processes at once, each pinned to its own core where the platform
    allows; ``workers x alone / slowest``. A contraction of many small slices streams its
    intermediates through memory; it can scale worse on a shared host than the GEMM loop of
    :func:`_parallel_ceiling`, and no scheduler can do better than this."""
    keys = list(sc.keys())
    shares = [keys[len(keys) * k // workers : len(keys) * (k + 1) // workers] for k in range(workers)]
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k, share in enumerate(shares):
            paths.append(os.path.join(tmp, f"share{k}.pickle"))
            with open(paths[-1], "wb") as f:
                pickle.dump((sc, [np.asarray(x) for x in ops], share), f)

        def run(ks: list[int]) -> list[float]:
            procs = []
            for k in ks:
                procs.append(
                    subprocess.Popen(
                        _pinned([sys.executable, "-c", _SLICE_SHARE, paths[k]], k, workers),
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        text=True,
                    )
                )
            for p in procs:
                assert p.stdout.readline().strip() == "ready"
            for p in procs:
                p.stdin.write("\n")
                p.stdin.flush()
            out = [float(p.stdout.readline()) for p in procs]
            for p in procs:
                p.wait()
            return out

        return [workers * run([0])[0] / max(run(list(range(workers)))) for _ in range(repeats)]


SECTIONS = {"scan": scan_section, "einsum": einsum_section}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--section", choices=sorted(SECTIONS), action="append", help="run only this section (repeatable; default: all)"
    )
    parser.add_argument("--points", type=int, default=24, help="scan: points of the grid (default: %(default)s)")
    parser.add_argument("--L", type=int, default=32, help="scan: chain length (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default: %(default)s)")
    parser.add_argument(
        "--network",
        choices=("circuit", "lattice"),
        default="circuit",
        help="einsum: the network (default: %(default)s)",
    )
    parser.add_argument("--rows", type=int, default=4, help="einsum: circuit qubit rows (default: %(default)s)")
    parser.add_argument("--cols", type=int, default=6, help="einsum: circuit qubit columns (default: %(default)s)")
    parser.add_argument("--cycles", type=int, default=14, help="einsum: circuit cycles (default: %(default)s)")
    parser.add_argument("--side", type=int, default=5, help="einsum: lattice side (default: %(default)s)")
    parser.add_argument("--bond", type=int, default=16, help="einsum: bond dimension (default: %(default)s)")
    parser.add_argument(
        "--fraction",
        type=int,
        default=64,
        help="einsum: memory limit = the best unsliced path's largest intermediate / this (default: %(default)s)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="timed repeats: scan, each way in turn; einsum, of each timing (default: %(default)s)",
    )
    args = parser.parse_args()
    for name in args.section or SECTIONS:
        SECTIONS[name](args)


if __name__ == "__main__":
    main()
