"""Conserved against dense runs on small chains: is a run in one charge sector ever slower than
the dense run of the same state, and what does ``conserve="auto"`` pick?

Cases (each in one process pinned to one core with one BLAS thread; the conserved and the dense
run of a case alternate, their order swapped every round, and the table shows the median of
``--repeat`` rounds after one untimed warm-up of each; CPU time by default, ``--clock wall`` for
elapsed time, which on a shared machine also counts the other processes' turns on the core):

* ``tebd``: ``tensor4all.tebd`` (order 2), real time ``t = 2``, ``dt = 0.05`` (40 steps);
* ``tdvp``: two-site ``tensor4all.tdvp``, real time ``t = 1``, ``dt = 0.05`` (20 steps);
* ``tdvp-imag``: the same in imaginary time, ``t = 2``, ``dt = 0.1`` (20 steps);
* ``dmrg``: two-site ``tensor4all.dmrg``, 4 sweeps (``tol=0``: all of them), ``noise=0``, from a
  random symmetric state of bond dimension 8 (``MPS.random(..., conserve=...)``, seed 1): the
  dense run starts from the same state (``psi0.dense()``, ``conserve="none"``), so both do the
  same sweeps (the noise would take the dense run out of the sector);

each at ``max_bond = 32`` (``--chi``), ``cutoff = 1e-10``, on the Heisenberg chain
(``models.heisenberg(L, conserve="Sz")``, Neel start state) and on the Hubbard chain
(``models.hubbard(L)``, ``U = 4``, conserving ``N`` and ``Sz``; start ``u d u d ...``, half
filling), at ``L = 8, 12, 16``. The dense run is the same call with the dense MPO
(``conserve=None``) and the dense start state.

The ``auto`` columns: what the same call with ``conserve="auto"`` ran (conserved or dense) and its
time (the better of two runs). The evolutions decide by the run's size
(``tensor4all.algorithms.evolution.AUTO_DENSE_BELOW``); ``dmrg``'s ``"auto"`` conserves whatever
charge the Hamiltonian conserves.

``--sizes 8,16,32,...``: instead of the table, the cost of a few steps (``--steps``; dmrg: one
sweep) at bonds held at each ``chi`` (from a random symmetric state of that bond dimension,
``max_bond = chi``, cutoff 0), conserved against dense, at ``L = --size-L``: where the conserved
step starts to win. ``--cases`` may add ``tebd-imag``. These are the measurements behind
``AUTO_DENSE_BELOW``.

``--save FILE`` writes the values of every run (energy, norm, ``<Sz_i>`` or ``<Ntot_i>`` of the
final state; DMRG's energy), ``--compare FILE`` prints the largest difference of each run from a
saved file: the check that a change left the results as they were. Compare with ``--exact`` (no
truncation: ``chi = 10**6``, cutoff 0; e.g. ``--L 8,12 --models heisenberg`` and ``--L 6 --models
hubbard``): with truncation, where the kept bond cuts through a degenerate multiplet of singular
values (the SU(2) multiplets of both chains), which member is kept follows the rounding, and the
values move by the truncation error.

``--cli``: the command line's default (``--conserve auto``) against ``--conserve none`` for small
cases of ``evolve`` (TEBD and TDVP, Heisenberg L = 10) and of ``dmrg`` (Heisenberg L = 12): the
time each command prints for its evolution or sweeps (elapsed), median of ``--repeat``
alternated runs.

Usage: ``python benchmarks/conserve_small.py [--cases tebd,tdvp] [--models heisenberg]
[--L 8,12] [--repeat 3] [--save FILE | --compare FILE] [--exact] [--sizes 8,16,32] [--cli]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

threadpool_limits(1)

import tensor4all as t4a  # noqa: E402
from tensor4all import MPS, models  # noqa: E402

CASES = ("tebd", "tdvp", "tdvp-imag", "dmrg")
MODELS = ("heisenberg", "hubbard")
CHARGE = {"heisenberg": "Sz", "hubbard": "N,Sz"}
OBSERVED = {"heisenberg": "Sz", "hubbard": "Ntot"}


def problem(model: str, L: int, conserved: bool) -> tuple[Any, MPS]:
    """The Hamiltonian and the start state (symmetric or dense)."""
    charge = CHARGE[model] if conserved else None
    if model == "heisenberg":
        return models.heisenberg(L, conserve=charge), MPS.product_state([i % 2 for i in range(L)], conserve=charge)
    states = [1 if i % 2 == 0 else 2 for i in range(L)]  # u d u d ...
    return models.hubbard(L, conserve=charge), MPS.product_state(states, conserve=charge, local="electron")


def dmrg_start(model: str, L: int) -> MPS:
    """The symmetric random start state of the DMRG cases, at half filling (Sz = 0)."""
    local = "electron" if model == "hubbard" else None
    charge = {"N": L, "Sz": 0} if model == "hubbard" else 0
    return MPS.random(L, 4 if local else 2, bond_dim=8, seed=1, conserve=CHARGE[model], charge=charge, local=local)


def runner(case: str, model: str, L: int, mode: str, chi: int, cutoff: float = 1e-10) -> tuple[Any, Any]:
    """``(call, values)``: a call running one case in ``mode`` (``"conserved"``, ``"dense"`` or
    ``"auto"``) and a function of its result giving the values compared between versions (the
    energy; an evolution's ``<Sz_i>`` or ``<Ntot_i>`` and norm at the end), outside the timing."""
    conserved = mode != "dense"
    H, psi = problem(model, L, conserved)
    kw: dict[str, Any] = {"conserve": "auto"} if mode == "auto" else {}
    if case == "dmrg":
        start = dmrg_start(model, L)
        psi0 = start if conserved else start.dense()
        conserve = {"conserved": None, "dense": "none", "auto": "auto"}[mode]

        def call() -> Any:
            return t4a.dmrg(H, psi0, max_bond=chi, sweeps=4, tol=0.0, noise=0.0, conserve=conserve, cutoff=cutoff)

        return call, lambda res: {"energy": float(res.energy), "dense": not res.state.symmetric}

    def evolve() -> Any:
        if case == "tebd":
            return t4a.tebd(H, psi, 2.0, 0.05, max_bond=chi, cutoff=cutoff, **kw)
        if case == "tdvp":
            return t4a.tdvp(H, psi, 1.0, 0.05, max_bond=chi, cutoff=cutoff, **kw)
        return t4a.tdvp(H, psi, 2.0, 0.1, max_bond=chi, cutoff=cutoff, imaginary=True, **kw)

    def values(res: Any) -> dict[str, Any]:
        s = res.state
        return {
            "energy": float(np.real(complex(t4a.expectation(s, H)))),
            "norm": float(s.norm()),
            "o": np.real(
                np.asarray(s.expect(OBSERVED[model], None, "electron" if model == "hubbard" else None))
            ).tolist(),
            "dense": not s.symmetric,
        }

    return evolve, values


CLOCK = {"cpu": time.process_time, "wall": time.perf_counter}
clock = time.process_time


def timed(call: Any) -> tuple[float, Any]:
    t0 = clock()
    out = call()
    return clock() - t0, out


def measure(case: str, model: str, L: int, chi: int, repeat: int, auto: bool, cutoff: float) -> dict[str, Any]:
    """Median times of the conserved and the dense run (alternated), and the ``auto`` run's."""
    made = {m: runner(case, model, L, m, chi, cutoff) for m in ("conserved", "dense")}
    calls = {m: c for m, (c, _) in made.items()}
    values = {m: f(calls[m]()) for m, (_, f) in made.items()}  # warm-up; the values compared across versions
    times: dict[str, list[float]] = {m: [] for m in calls}
    for r in range(repeat):
        for m in ("conserved", "dense") if r % 2 == 0 else ("dense", "conserved"):
            times[m].append(timed(calls[m])[0])
    row = {m: statistics.median(v) for m, v in times.items()}
    row["values"] = values
    if auto:
        call, value = runner(case, model, L, "auto", chi, cutoff)
        try:
            dt, out = timed(call)
            row["auto"] = (("dense" if value(out)["dense"] else "conserved"), min(dt, timed(call)[0]))
        except TypeError as e:  # no conserve= keyword
            row["auto"] = ("n/a (no conserve=)" if "conserve" in str(e) else f"n/a ({e})", float("nan"))
    return row


def size_runner(case: str, model: str, L: int, chi: int, conserved: bool, steps: int) -> Any:
    """A call running ``steps`` steps of one case from a random state of bond dimension ``chi`` at
    half filling (``MPS.random(..., conserve=...)``, seed 1; dense: the same state), its bonds
    held at ``chi`` (``max_bond=chi``, cutoff 0): the cost of a step at that size."""
    H = problem(model, L, conserved)[0]
    local = "electron" if model == "hubbard" else None
    charge = {"N": L, "Sz": 0} if model == "hubbard" else 0
    start = MPS.random(L, 4 if local else 2, bond_dim=chi, seed=1, conserve=CHARGE[model], charge=charge, local=local)
    psi = start if conserved else start.dense()
    if case == "dmrg":
        conserve = None if conserved else "none"
        return lambda: t4a.dmrg(
            H, psi, max_bond=chi, sweeps=1, tol=0.0, noise=0.0, cutoff=0.0, conserve=conserve, compute_variance=False
        )
    imaginary = case.endswith("-imag")
    if case.startswith("tebd"):
        return lambda: t4a.tebd(H, psi, steps * 0.05, 0.05, max_bond=chi, cutoff=0.0, imaginary=imaginary)
    return lambda: t4a.tdvp(H, psi, steps * 0.05, 0.05, max_bond=chi, cutoff=0.0, imaginary=imaginary)


def size_table(a: argparse.Namespace) -> None:
    """Conserved against dense at held bond dimensions: where does the conserved step win?"""
    print("\n| case | model | L | chi | d^2 chi^2 | conserved s | dense s | conserved/dense |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for case in a.cases.split(","):
        for model in a.models.split(","):
            d = 4 if model == "hubbard" else 2
            for chi in map(int, a.sizes.split(",")):
                calls = {c: size_runner(case, model, a.size_L, chi, c, a.steps) for c in (True, False)}
                for c in calls.values():
                    c()
                ts: dict[bool, list[float]] = {True: [], False: []}
                for r in range(a.repeat):
                    for c in (True, False) if r % 2 == 0 else (False, True):
                        ts[c].append(timed(calls[c])[0])
                tc, td = statistics.median(ts[True]), statistics.median(ts[False])
                print(
                    f"| {case} | {model} | {a.size_L} | {chi} | {d * d * chi * chi} | {tc:.3f} | {td:.3f} | "
                    f"{tc / td:.2f} |",
                    flush=True,
                )


def cli_times(repeat: int) -> None:
    """The command line's default (``--conserve auto``) against ``--conserve none``, run from a
    neutral directory (so that ``python -m tensor4all`` is the package the benchmark imports)."""
    cmds = {
        "evolve tebd heisenberg L=10": "evolve --model heisenberg --L 10 --method tebd --t-final 2 --dt 0.05 --max-bond 32",
        "evolve tdvp heisenberg L=10": "evolve --model heisenberg --L 10 --method tdvp --t-final 1 --dt 0.05 --max-bond 32",
        "dmrg heisenberg L=12": "dmrg --model heisenberg --L 12 --chi 32 --sweeps 4 --tol 0",
    }
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    print("\n| command | auto s | none s | auto/none | auto runs |")
    print("|---|---:|---:|---:|---|")
    for name, cmd in cmds.items():
        ts: dict[str, list[float]] = {"auto": [], "none": []}
        sym = ""
        for r in range(repeat):
            for mode in ("auto", "none") if r % 2 == 0 else ("none", "auto"):
                out = _cli([*cmd.split(), "--quiet", "--conserve", mode], env)
                ts[mode].append(float(re.search(r"^time\s+([0-9.]+) s", out, re.M).group(1)))
                if mode == "auto":  # evolve's header says what --conserve auto runs ("runs"), dmrg's its symmetry
                    found = re.search(r"^\s+runs\s+(.*)", out, re.M) or re.search(r"symmetry\s+(.*)", out)
                    sym = found.group(1).strip()[:60]
        a, n = statistics.median(ts["auto"]), statistics.median(ts["none"])
        print(f"| {name} | {a:.3f} | {n:.3f} | {a / n:.2f} | {sym} |", flush=True)


def _cli(args: list[str], env: dict[str, str]) -> str:
    """The output of ``python -m tensor4all args`` (``--t-final`` given as ``--t`` to a command
    line from before it was renamed)."""
    run = subprocess.run([sys.executable, "-m", "tensor4all", *args], capture_output=True, text=True, env=env, cwd="/")
    if run.returncode and "--t-final" in run.stderr and "unrecognized" in run.stderr:
        args = ["--t" if a == "--t-final" else a for a in args]
        run = subprocess.run(
            [sys.executable, "-m", "tensor4all", *args], capture_output=True, text=True, env=env, cwd="/"
        )
    if run.returncode:
        raise RuntimeError(f"tensor4all {' '.join(args)} failed:\n{run.stderr[-2000:]}")
    return run.stdout


def differences(saved: dict[str, Any], now: dict[str, Any]) -> float:
    """The largest absolute difference between two runs' values."""
    worst = 0.0
    for k, v in now.items():
        if k == "dense":
            continue
        a, b = np.asarray(saved[k], dtype=complex), np.asarray(v, dtype=complex)
        worst = max(worst, float(np.max(np.abs(a - b))) if a.size else 0.0)
    return worst


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--L", default="8,12,16")
    p.add_argument("--chi", type=int, default=32)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument(
        "--exact",
        action="store_true",
        help="no truncation (chi 10^6, cutoff 0): the runs whose values --save/--compare check to 1e-12 (with "
        "truncation, where the kept bond cuts through a degenerate multiplet of singular values, which member "
        "is kept follows rounding, and the values move by the truncation error)",
    )
    p.add_argument(
        "--sizes",
        help="instead of the table: conserved against dense at these held bond dimensions (e.g. 8,16,32,64), "
        "from a random state of that bond dimension, --steps steps (dmrg: one sweep) at L = --size-L",
    )
    p.add_argument("--size-L", type=int, default=16)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--save")
    p.add_argument("--compare")
    p.add_argument("--no-auto", action="store_true")
    p.add_argument(
        "--clock",
        choices=tuple(CLOCK),
        default="cpu",
        help="cpu: the process's CPU time (default; on a shared machine the wall time also counts the "
        "other processes' turns on the core), wall: elapsed time",
    )
    p.add_argument("--cli", action="store_true", help="also time the command line (--conserve auto/none)")
    p.add_argument("--cli-only", action="store_true", help="only time the command line")
    a = p.parse_args()
    global clock
    clock = CLOCK[a.clock]
    if a.sizes:
        size_table(a)
        return
    if a.cli_only:
        cli_times(a.repeat)
        return
    saved = json.load(open(a.compare)) if a.compare else None
    cutoff = 1e-10
    if a.exact:
        a.chi, cutoff = 10**6, 0.0
    record: dict[str, Any] = {}
    print(
        f"one core, one BLAS thread; chi {a.chi}, cutoff {cutoff:g}; {a.clock} time, median of {a.repeat} "
        "alternated rounds\n"
    )
    head = "| case | model | L | conserved s | dense s | conserved/dense | auto runs | auto s |"
    if saved is not None:
        head += " max diff (cons, dense) |"
    print(head)
    print("|---|---|---:|---:|---:|---:|---|---:|" + ("---|" if saved is not None else ""))
    for case in a.cases.split(","):
        for model in a.models.split(","):
            for L in map(int, a.L.split(",")):
                row = measure(case, model, L, a.chi, a.repeat, not a.no_auto, cutoff)
                key = f"{case}/{model}/{L}"
                record[key] = row["values"]
                auto, ta = row.get("auto", ("-", float("nan")))
                line = (
                    f"| {case} | {model} | {L} | {row['conserved']:.3f} | {row['dense']:.3f} | "
                    f"{row['conserved'] / row['dense']:.2f} | {auto} | {ta:.3f} |"
                )
                if saved is not None and key in saved:
                    d = [differences(saved[key][m], row["values"][m]) for m in ("conserved", "dense")]
                    line += f" {d[0]:.1e}, {d[1]:.1e} |"
                print(line, flush=True)
    if a.save:
        with open(a.save, "w") as f:
            json.dump(record, f, default=lambda x: [x.real, x.imag] if isinstance(x, complex) else float(x))
    if a.cli:
        cli_times(a.repeat)


if __name__ == "__main__":
    main()
