"""``tensor4all scan``: DMRG over a grid of model parameters on Dask (:func:`tensor4all.scan`).

The command takes the model and algorithm options of ``tensor4all dmrg`` (copied from its
parser, so the two never drift apart; ``--states`` and ``--device``, which a scan point does
not run, are refused with the reason unless they ask for what it runs: 1 state, the CPU); ``--L``, ``--J``, ``--Jz``, ``--h`` and ``--g`` also
take a range ``START:STOP:NUM`` (NUM evenly spaced values, both ends included) or a list
``V1,V2,...``, and the points are the cartesian product of the ranges. Each point is
checked as ``tensor4all dmrg`` would check it, before anything runs. One table row is
printed per finished point (in the order they finish), the rows go to ``--out`` as they
arrive, and a rerun with the same options resumes from that file. ``--plot`` draws the
energy per site, the entanglement entropy and the observables against the scanned
parameter with the most values (one line per value of the others).
"""

from __future__ import annotations

import argparse
import copy
import math
import sys
import time
from typing import Any, Callable, Sequence

import numpy as np
from tqdm import tqdm

from .checks import conserve_of, sector_of, validate
from .common import check_plot, integer_arg
from ..tools.errors import Tensor4allError
from ..scans.errors import ScanClusterError
from ..tools.files import output_problem
from ..scans.table import check_out
from ..scans.task import MODEL_PARAMETERS, ScanTask
from ..scans import ScanRun, default_workers

__all__ = ["add_parser", "write_scan_plot"]

#: the dmrg options that take a range or a list in ``tensor4all scan``
SCANNABLE = ("L", "J", "Jz", "h", "g")

#: the options of dmrg's copied groups that a scan point (a :class:`ScanTask`) does not run:
#: refused (exit 2) with the reason, not accepted and ignored
NOT_IN_SCAN = {
    "states": "a scan computes the ground state of each point; run 'tensor4all dmrg --states N' "
    "at a point for its lowest states",
    "device": "a scan runs its points on the CPU workers of a Dask cluster; run 'tensor4all dmrg "
    "--device gpu' at a point to run it on a GPU",
}


class _NotInScan(argparse.Action):
    """A dmrg option that ``tensor4all scan`` does not run (:data:`NOT_IN_SCAN`): given with
    another value than dmrg's default (what every scan point does: ``--states 1``,
    ``--device cpu``), a usage error naming the reason; not shown by ``--help``."""

    def __init__(self, option_strings: Sequence[str], dest: str, allowed: Any = None, **kwargs: Any):
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, default=argparse.SUPPRESS, **kwargs)
        self.allowed = allowed

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option_string: Any = None) -> None:
        if values != self.allowed:
            parser.error(f"argument {'/'.join(self.option_strings)}: {NOT_IN_SCAN[self.dest]}")


_EXAMPLES = """\
examples:
  tensor4all scan --model tfim --L 64 --g 0.2:2.0:37 --max-bond 64 --workers 2 --out tfim.parquet
  tensor4all scan --model tfim --L 32 --g 0.5,1,1.5 --observables X,Z@0*Z@-1 --conserve none
  tensor4all scan --model xxz --L 16,32 --Jz=-0.5:1.5:9 --plot xxz.png --out xxz.parquet
  tensor4all scan --model tfim --L 64 --g 0.2:2.0:37 --scheduler tcp://host:8786
"""


def _values(parse: Callable[[str], Any], integral: bool) -> Callable[[str], list[Any]]:
    """A dmrg option's parser extended to ``START:STOP:NUM`` and ``V1,V2,...`` (each value
    through ``parse``, so the dmrg option's checks and messages hold for every value)."""

    def values(text: str) -> list[Any]:
        if ":" in text:
            parts = text.split(":")
            try:
                start, stop, num = float(parts[0]), float(parts[1]), int(parts[2])
                if len(parts) != 3 or num < 1 or not (math.isfinite(start) and math.isfinite(stop)):
                    raise ValueError
            except (ValueError, IndexError):
                raise argparse.ArgumentTypeError(
                    f"invalid range {text!r}; a range is START:STOP:NUM with NUM >= 1 values, such as 0.2:2.0:37"
                ) from None
            grid = np.linspace(start, stop, num)
            if integral:
                if not np.all(grid == np.round(grid)):
                    raise argparse.ArgumentTypeError(
                        f"the range {text!r} gives values that are not integers "
                        f"({', '.join(f'{v:g}' for v in grid[:4])}, ...)"
                    )
                return [parse(str(int(v))) for v in grid]
            return [parse(repr(float(v))) for v in grid]
        return [parse(p.strip()) for p in text.split(",")]

    values.__name__ = getattr(parse, "__name__", "values")
    return values


def _copy_options(src: argparse.ArgumentParser, dst: argparse.ArgumentParser, titles: Sequence[str]) -> None:
    """Add ``src``'s argument groups named ``titles`` to ``dst`` (copies of the actions, the
    mutually exclusive groups kept); the options in :data:`SCANNABLE` take ranges, those in
    :data:`NOT_IN_SCAN` are refused when given."""
    groups = {g.title: g for g in src._action_groups}
    mutex_of = {a: m for m in src._mutually_exclusive_groups for a in m._group_actions}
    made: dict[Any, Any] = {}
    for title in titles:
        group = dst.add_argument_group(title)
        for action in groups[title]._group_actions:
            if action.dest in NOT_IN_SCAN:
                group.add_argument(
                    *action.option_strings,
                    dest=action.dest,
                    action=_NotInScan,
                    allowed=action.default,
                    type=action.type,
                    choices=action.choices,
                    metavar=action.metavar,
                )
                continue
            a = copy.copy(action)
            if a.dest in SCANNABLE:
                a.type = _values(action.type, integral=a.dest == "L")
                a.help = (a.help or "") + "; a range START:STOP:NUM or a list V1,V2,... scans it"
            if a.dest == "threads":  # one worker per core: one BLAS thread per point
                a.help = (
                    "BLAS threads per point (default: auto: 1, as each worker of the local cluster has "
                    "one core; 0 keeps the BLAS library's own setting)"
                )
            mutex = mutex_of.get(action)
            if mutex is not None and mutex not in made:
                made[mutex] = group.add_mutually_exclusive_group(required=mutex.required)
            (group if mutex is None else made[mutex])._add_action(a)


def add_parser(commands: Any, dmrg: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``scan`` subcommand to ``commands`` with the model and algorithm options of
    the ``dmrg`` subparser; each point is checked by the dmrg command's checks and symmetry
    choices (:mod:`tensor4all.cli.checks`)."""
    p = commands.add_parser(
        "scan",
        help="DMRG over a grid of model parameters on Dask, one row per point in a Parquet file (resumable)",
        description=(
            "Ground states over a grid of model parameters, each point one Dask task (DMRG as in\n"
            "'tensor4all dmrg', one BLAS thread per worker). --L, --J, --Jz, --h and --g take a\n"
            "range START:STOP:NUM or a list V1,V2,...; the points are the cartesian product\n"
            "(write --g=-1:1:21 when the value starts with a minus sign).\n"
            "Rows go to --out as points finish; a rerun resumes from the file (finished points\n"
            "are not run again). Needs the 'distributed' extra (Dask and pyarrow)."
        ),
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _copy_options(dmrg, p, ("model", "algorithm"))
    m = p.add_argument_group("measurements")
    m.add_argument(
        "--observables",
        metavar="OBS[,OBS...]",
        default="",
        help="observables of the final state, one column each: OP (the average of <OP_i> over the "
        "sites), OP@I (<OP_I>; negative sites count from the end) or A@I*B@J (<A_I B_J>), with "
        "the Hermitian operators of the model (tfim: X, Y, Z, Id; in a conserved tfim run the "
        "transverse field is Z; heisenberg/xxz: Sx, Sy, Sz, Id) (default: none)",
    )
    c = p.add_argument_group("cluster")
    where = c.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        help="single-threaded worker processes of a local Dask cluster (default: one per core, "
        f"{default_workers()} here)",
    )
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        default=None,
        help="the address of an existing Dask scheduler, such as tcp://host:8786, instead of a "
        "local cluster (default: none)",
    )
    c.add_argument(
        "--retries",
        type=_nonnegative_int,
        default=2,
        help="reruns of a point whose task failed or whose worker died, before its row says "
        "'failed' (default: %(default)s)",
    )
    o = p.add_argument_group("output")
    o.add_argument(
        "--out",
        metavar="PATH",
        default="scan.parquet",
        help="the table, one row per point (.parquet, or .arrow for Arrow IPC), rewritten as points "
        "finish; an existing scan of the same options is resumed (default: %(default)s)",
    )
    o.add_argument(
        "--plot",
        metavar="PATH",
        default=None,
        help="write a figure (.png, .pdf or .svg) of the energy per site, the entanglement entropy "
        "and the observables against the scanned parameter with the most values (one line "
        "per value of the others); needs matplotlib, the "
        "'plot' extra (default: none)",
    )
    o.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="no progress bar and no row per point, only the summary (default: off; the progress "
        "bar is also off when stderr is not a terminal)",
    )
    p.set_defaults(func=lambda parser, args, argv: _ScanCommand(p, args).run())
    return p


_positive_int = integer_arg(1, "the number of workers is a positive integer")
_nonnegative_int = integer_arg(0, "retries is a non-negative integer")


# ---- the command -------------------------------------------------------------------------
class _ScanCommand:
    def __init__(self, parser: argparse.ArgumentParser, args: argparse.Namespace):
        self.parser = parser
        self.args = args
        isatty = getattr(sys.stderr, "isatty", None)
        self.show_bar = not args.quiet and bool(isatty and isatty())

    def print(self, line: str) -> None:
        tqdm.write(line, file=sys.stdout)
        sys.stdout.flush()

    # ---- the grid, checked as dmrg checks one run ------------------------------------
    def grid(self) -> dict[str, list[Any]]:
        a = self.args
        grid = {}
        for name in SCANNABLE:
            v = getattr(a, name)
            if isinstance(v, list) and len(v) > 1:
                grid[name] = v
            elif isinstance(v, list):
                setattr(a, name, v[0])
        if not grid:
            self.parser.error(
                "nothing to scan: give a range or a list to one of --L, --J, --Jz, --h, --g "
                "(such as --g 0.2:2.0:37 or --L 16,32,64)"
            )
        return grid

    def points(self, grid: dict[str, list[Any]]) -> list[argparse.Namespace]:
        names = list(grid)
        out = []
        for values in np.ndindex(*(len(grid[n]) for n in names)):
            ns = copy.copy(self.args)
            for n, k in zip(names, values):
                setattr(ns, n, grid[n][k])
            ns.json = ns.save = ns.plot = None  # the scan writes its own files
            out.append(ns)
        return out

    def check(self, points: list[argparse.Namespace]) -> tuple[Any, Any]:
        """Each point checked by the dmrg command's rules; the symmetry of the scan: the one
        every point would run in, else (``--conserve auto``) none, for one basis throughout."""
        for ns in points:
            validate(self.parser, ns)  # dmrg's checks, scan's usage line
        choices = {(conserve_of(ns), sector_of(ns)) for ns in points}
        if len(choices) == 1:
            return next(iter(choices))
        if self.args.conserve == "auto":
            self.note = "the points lie in different symmetry sectors: the scan runs dense"
            return None, None
        return conserve_of(points[0]), None  # dmrg's default sector at each point

    def task(self, conserve: Any, sector: Any) -> ScanTask:
        a = self.args
        params: dict[str, Any] = {}
        for name in ("L", "J", "Jz", "h", "g", "spin"):
            v = getattr(a, name)
            if name in self.scanned or v is None:
                continue
            params[name] = v
        if a.model == "tfim" and "g" not in self.scanned and a.g is None:
            params["g"] = 1.0
        settings = {
            "max_bond": a.chi[0] if len(a.chi) == 1 else list(a.chi),
            "cutoff": a.cutoff[0] if len(a.cutoff) == 1 else list(a.cutoff),
            "sweeps": a.sweeps,
            "tol": a.tol,
            "two_site": a.two_site,
            "seed": a.seed,
            "dtype": a.dtype,
            "noise": None if a.two_site else (1e-4 if a.noise is None else a.noise),
            "threads": 1 if a.threads is None else a.threads,
            "conserve": conserve,
            "sector": sector,
        }
        observables = [o.strip() for o in a.observables.split(",") if o.strip()]
        try:
            return ScanTask(a.model, params=params, settings=settings, observables=observables)
        except Tensor4allError as e:
            self.parser.error(f"argument --observables: {e}")
            raise  # unreachable: error() exits

    def check_outputs(self) -> None:
        a = self.args
        try:
            check_out(a.out)
        except Tensor4allError as e:
            self.parser.error(f"argument --out: {e}".replace("scan: ", ""))
        if a.plot is not None:
            check_plot(self.parser.error, a.plot)
            problem = output_problem(a.plot)  # as --out and dmrg's outputs: before any point runs
            if problem is not None:
                self.parser.error(f"argument --plot: {problem}")

    # ---- the run -----------------------------------------------------------------------
    def run(self) -> int:
        a = self.args
        self.note = None
        grid = self.grid()
        self.scanned = list(grid)
        conserve, sector = self.check(self.points(grid))
        task = self.task(conserve, sector)
        self.check_outputs()
        try:
            run = ScanRun(
                task,
                grid,
                client=a.scheduler,
                out=a.out,
                retries=a.retries,
                workers=a.workers,
                progress=self.show_bar,
                callback=self.row,
            )
        except Tensor4allError as e:  # a file of another scan, Dask not installed
            self.parser.error(str(e))
        self.header(task, run, conserve, sector)
        t0 = time.perf_counter()
        try:
            table = run.run()
        except ScanClusterError as e:
            self.parser.error(f"argument --scheduler: {e}")
        except Tensor4allError as e:  # the file cannot be written, a task's results do not form a table
            print(f"tensor4all: error: {e}", file=sys.stderr)
            return 1
        seconds = time.perf_counter() - t0
        rows = table.to_pylist()
        ok = sum(r["status"] == "ok" for r in rows)
        failed = len(rows) - ok
        self.print(
            f"points      {len(run.grid)}: {ok} ok ({run.ran - run.failed} run now, {run.skipped} from "
            f"the file), {failed} failed"
        )
        if run.ran:
            self.print(f"time        {seconds:.2f} s for {run.ran} points ({self.where(run)})")
        written = [a.out]
        status = 0
        if a.plot is not None:
            try:
                write_scan_plot(a.plot, rows, self.scanned, task, self.title(task))
                written.append(a.plot)
            except OSError as e:
                print(f"tensor4all: error: --plot {a.plot}: {e}", file=sys.stderr)
                status = 1
        self.print("wrote       " + ", ".join(written))
        if failed:
            first = next(r for r in rows if r["status"] != "ok")
            print(
                f"tensor4all: {failed} point(s) failed; the first, "
                f"{', '.join(f'{n}={_fmt(first[n])}' for n in self.scanned)}: {first['error']}; their rows hold "
                "the error, and a rerun runs them again",
                file=sys.stderr,
            )
            status = 1
        return status

    def where(self, run: ScanRun) -> str:
        if self.args.scheduler is not None:
            return f"scheduler {self.args.scheduler}"
        return f"local cluster of {run.workers} worker{'s' if run.workers != 1 else ''}"

    def title(self, task: ScanTask) -> str:
        params = dict(task.params)
        fixed = " ".join(f"{k}={_fmt(params[k])}" for k in MODEL_PARAMETERS[task.model] if k in params)
        return f"{task.model} {fixed}".strip()

    def header(self, task: ScanTask, run: ScanRun, conserve: Any, sector: Any) -> None:
        a = self.args
        ranges = ", ".join(
            f"{n} {_fmt(min(v))}..{_fmt(max(v))} ({len(v)})"
            for n, v in ((n, [run.grid.point(i)[n] for i in range(len(run.grid))]) for n in self.scanned)
        )
        self.print(f"SCAN  {self.title(task)}  over {ranges}: {len(run.grid)} points")
        sites = "two-site" if a.two_site else "one-site"
        self.print(
            f"      {sites}, chi {','.join(map(str, a.chi))}, cutoff {','.join(f'{c:g}' for c in a.cutoff)}, "
            f"at most {a.sweeps} sweeps, tol {a.tol:g}, {a.dtype}, seed {a.seed}, BLAS threads "
            f"{1 if a.threads is None else (a.threads or 'default')} per point"
        )
        sym = {"Sz": "U(1) Sz", "parity": "Z2 parity (tfim written as -J sum XX - g sum Z)"}.get(
            conserve, "none (dense)"
        )
        if conserve is not None and sector is not None:
            sym += f", sector {sector:g}"
        self.print(f"      symmetry {sym}" + (f"  ({self.note})" if self.note else ""))
        self.print(f"      {self.where(run)}, out {a.out}: {run.skipped} point(s) done earlier, {len(run.todo)} to run")
        if not a.quiet and run.todo:
            obs = "".join(f"  {o:>12}" for o in task.observables)
            params = "".join(f"{n:>10}  " for n in self.scanned)
            self.print(
                f"{params}{'energy':>20}  {'variance':>9}  {'entropy':>8}{obs}  {'sweeps':>6}  "
                f"{'seconds':>7}  {'worker':<16}  status"
            )
        self.observables = task.observables

    def row(self, r: dict[str, Any]) -> None:
        if self.args.quiet:
            return
        params = "".join(f"{_fmt(r[n]):>10}  " for n in self.scanned)
        worker = (r.get("worker") or "-").replace("tcp://", "")
        if r["status"] != "ok":
            self.print(
                f"{params}{'-':>20}  {'-':>9}  {'-':>8}"
                + "".join(f"  {'-':>12}" for _ in self.observables)
                + f"  {'-':>6}  {'-':>7}  {worker:<16}  failed: {_short(r.get('error'))}"
            )
            return
        obs = "".join(f"  {r[o]:>12.8f}" for o in self.observables)
        self.print(
            f"{params}{r['energy']:>20.12f}  {r['variance']:>9.2e}  {r['entropy']:>8.5f}{obs}  "
            f"{r['sweeps_run']:>6}  {r['seconds']:>7.2f}  {worker:<16}  ok"
        )


def _fmt(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _short(text: Any, n: int = 100) -> str:
    s = str(text).splitlines()[0] if text else ""
    return s if len(s) <= n else s[: n - 3] + "..."


# ---- the figure --------------------------------------------------------------------------
def write_scan_plot(path: str, rows: list[dict[str, Any]], scanned: Sequence[str], task: ScanTask, title: str) -> None:
    """One panel each for the energy per site, the entanglement entropy at the middle bond
    and every observable, against the scanned parameter with the most values (the first of
    those); one line per combination of the other scanned parameters. Failed points are
    left out."""
    import matplotlib  # noqa: PLC0415  (optional dependency)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    ok = [r for r in rows if r.get("status") == "ok"]
    counts = {n: len({r[n] for r in rows}) for n in scanned}
    x = max(scanned, key=lambda n: counts[n])  # the parameter with the most values; one line per other point
    others = [n for n in scanned if n != x]
    fixed_L = dict(task.params).get("L")
    panels = [
        ("energy per site", lambda r: r["energy"] / (r["L"] if "L" in r else fixed_L)),
        ("entanglement entropy (middle bond)", lambda r: r["entropy"]),
    ]
    panels += [
        (f"<{o}>" + (" (site average)" if "@" not in o else ""), (lambda o: lambda r: r[o])(o))
        for o in task.observables
    ]
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(7, 2.4 * len(panels) + 0.6), sharex=True, constrained_layout=True, squeeze=False
    )
    lines: dict[tuple, list[dict[str, Any]]] = {}
    for r in ok:
        lines.setdefault(tuple(r[n] for n in others), []).append(r)
    for ax, (label, value) in zip(axes[:, 0], panels):
        for key, rs in lines.items():
            rs = sorted(rs, key=lambda r: r[x])
            ax.plot(
                [r[x] for r in rs],
                [value(r) for r in rs],
                ".-",
                label=", ".join(f"{n}={_fmt(v)}" for n, v in zip(others, key)) or None,
            )
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
        if others and ax is axes[0, 0]:
            ax.legend(fontsize="small")
    axes[-1, 0].set_xlabel(x)
    fig.suptitle(f"scan  {title}  ({len(ok)} of {len(rows)} points)")
    fig.savefig(path, dpi=100)
    plt.close(fig)
