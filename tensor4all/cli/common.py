"""Small helpers the command-line programs share (``cli``, ``_cli_evolve``, ``_cli_scan``): the
package version, JSON-safe values, atomic text files, argument types for numbers, and the
writing of the ``--save``/``--json``/``--plot`` outputs after a run."""

from __future__ import annotations


import argparse
import difflib
import importlib.util
import json
import math
import os
import sys
from importlib import metadata
from typing import Any, Callable, Sequence

from tqdm import tqdm

from tenferro.checks import available_memory, fmt_bytes
from tenferro.files import atomic_write

from ..tools.errors import Tensor4allError
from ..tools.files import output_problem
from ..tools.threads import blas_threads

__all__ = [
    "Parser",
    "DeprecatedAliases",
    "deprecated_aliases",
    "suggestion",
    "PROG",
    "CONSERVE",
    "_version",
    "_json_safe",
    "_write_atomic",
    "run_memory",
    "check_memory",
    "real_arg",
    "integer_arg",
    "write_outputs",
    "finite_float",
    "nonnegative_float",
    "noise_arg",
    "threads_arg",
    "command_threads",
    "bond_schedule",
    "cutoff_schedule",
    "installed",
    "add_output_options",
    "run_reported",
    "write_json_record",
]

#: the program's name in messages and records
PROG = "tensor4all"
#: what ``--conserve`` takes, in every command
CONSERVE = ("auto", "Sz", "parity", "N", "N,Sz", "none")


def suggestion(word: str, choices: Sequence[str]) -> str:
    """`` (did you mean --max-bond?)`` for the closest of ``choices`` to ``word``, else ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


class Parser(argparse.ArgumentParser):
    """The program's argument parser: options are never abbreviated (``--cutof`` is an error, not
    ``--cutoff``), and an unknown option is named with the closest known one of its command."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            sub = getattr(self, "commands", {}).get(getattr(parsed, "command", None), self)
            known = [o for o in sub._option_string_actions if o.startswith("--")]
            named = [f"{x}{suggestion(x.split('=')[0], known) if x.startswith('-') else ''}" for x in extras]
            sub.error(f"unrecognized arguments: {' '.join(named)}")
        return parsed


class DeprecatedAliases(argparse.Action):
    """Store an option's value (its ``type`` applied by argparse), warning on stderr when it was given
    by one of its deprecated spellings, ``deprecated = {old: new}`` (kept for one release)."""

    deprecated: dict[str, str] = {}

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        new = self.deprecated.get(option_string or "")
        if new is not None:
            print(f"{PROG}: warning: {option_string} is deprecated, use {new} (same meaning)", file=sys.stderr)
        setattr(namespace, self.dest, values)


def deprecated_aliases(mapping: dict[str, str]) -> type[DeprecatedAliases]:
    """A :class:`DeprecatedAliases` action class for ``mapping`` (old spelling -> new)."""
    return type("DeprecatedAliases", (DeprecatedAliases,), {"deprecated": dict(mapping)})


def _version() -> str:
    try:
        return metadata.version("tidu-tenferro")
    except metadata.PackageNotFoundError:  # running from a checkout that is not installed
        return "unknown"


def _json_safe(x: Any) -> Any:
    """NaN/inf become null (JSON has no NaN); NumPy scalars become Python numbers."""
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _write_atomic(path: str, text: str) -> None:
    """``text`` (UTF-8) to ``path``, atomically (:func:`tenferro.files.atomic_write`)."""
    with atomic_write(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)


def run_memory(L: int, d: int, D: int, chi: int, itemsize: int, basis: int) -> int:
    """Bytes a sweep run needs, from its largest bond ``chi`` (capped by the Hilbert space,
    ``d^min(b, L-b)`` at bond ``b``): environments ``chi_b^2 D`` and MPS ``chi_b^2 d`` per bond,
    and a Krylov or Lanczos basis of ``basis`` two-site vectors (``chi^2 d^2``) of the largest bond."""
    k = math.ceil(math.log(chi, d)) if chi > 1 else 0  # bonds at each end where d^b may be < chi
    if L - 1 <= 2 * k:  # sum over bonds of min(chi, d^min(b, L-b))^2, without forming d^L for huge L
        squares = sum(min(chi, d ** min(b, L - b)) ** 2 for b in range(1, L))
        top = max((min(chi, d ** min(b, L - b)) for b in range(1, L)), default=1)
    else:
        squares = 2 * sum(min(chi, d**b) ** 2 for b in range(1, k + 1)) + (L - 1 - 2 * k) * chi * chi
        top = chi
    return int(itemsize * (squares * (D + d) + basis * top * top * d * d))


def check_memory(error: Callable[[str], Any], needed: int, what: str, fix: str) -> None:
    """``error(message)`` (an argparse ``error``: exit 2) when a run needs more than the memory
    available now (:func:`tenferro.checks.available_memory`)."""
    available = available_memory()
    if available is not None and needed > available:
        error(
            f"the run would need about {fmt_bytes(needed)} ({what}) but {fmt_bytes(available)} of memory is "
            f"available; {fix}"
        )


def real_arg(low: float, *, strict: bool) -> Callable[[str], float]:
    """An argparse type: a finite number ``> low`` (``strict``) or ``>= low``."""
    what = (
        f"{'a positive' if strict else 'a non-negative'} finite number"
        if low == 0
        else f"a finite number {'>' if strict else '>='} {low:g}"
    )

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid number {text!r}") from None
        if not (math.isfinite(x) and (x > low if strict else x >= low)):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return x

    parse.__name__ = "number"
    return parse


def integer_arg(low: int, what: str) -> Callable[[str], int]:
    """An argparse type: an integer ``>= low``; ``what`` names it in the message."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid integer {text!r}; {what}") from None
        if n < low:
            raise argparse.ArgumentTypeError(f"invalid value {text!r}; {what}")
        return n

    parse.__name__ = "integer"
    return parse


def write_outputs(
    args: Any, writers: Sequence[tuple[str, Callable[[str], Any]]], say: Callable[[str], None], prog: str
) -> int:
    """Run ``writer(path)`` for each option of ``writers`` the user gave (``args.<option>``):
    a failed write is one line on stderr and exit status 1, the others are still written;
    the written ones are reported through ``say``. Returns the exit status."""
    written, status = [], 0
    for opt, writer in writers:
        path = getattr(args, opt)
        if path is None:
            continue
        try:
            writer(path)
            written.append(f"{opt} {'(standard output)' if path == '-' else path}")
        except OSError as e:
            print(f"{prog}: error: --{opt} {path}: {e}", file=sys.stderr)
            status = 1
    if written:
        say("wrote       " + ", ".join(written))
    return status


# ---- argument types shared by the commands (argparse turns ArgumentTypeError into "argument --x: message", exit 2)
def finite_float(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}") from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return x


def nonnegative_float(text: str) -> float:
    x = finite_float(text)
    if x < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative number, got {text!r}")
    return x


def noise_arg(text: str) -> float:
    x = nonnegative_float(text)
    if x >= 1.0:
        raise argparse.ArgumentTypeError(f"the noise is a relative size below 1 (1e-4 is typical), got {text!r}")
    return x


def threads_arg(text: str) -> int | None:
    if text == "auto":
        return None
    return integer_arg(0, "the thread count is 'auto' or a non-negative integer")(text)


def command_threads(args: argparse.Namespace) -> blas_threads:
    """The BLAS thread limit of a whole command (``--threads``; ``auto`` sized by the largest bond
    dimension it asks for, ``--chi`` or ``--max-bond``): the runs, the exact references and the
    analysis after them all run under it."""
    bond = getattr(args, "chi", None) or getattr(args, "max_bond", None)
    bonds = bond if isinstance(bond, (list, tuple)) else [bond]
    return blas_threads(args.threads, max((b for b in bonds if isinstance(b, int)), default=None))


def bond_schedule(text: str) -> list[int]:
    hint = "bond dimensions are positive integers: a number such as 64 or a per-sweep schedule such as 16,32,64"
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}; {hint}") from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"invalid value {text!r}; {hint}")
    return values


def cutoff_schedule(text: str) -> list[float]:
    hint = "cutoffs are non-negative numbers: a number such as 1e-12 or a per-sweep schedule such as 1e-8,1e-12"
    try:
        values = [float(p) for p in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}; {hint}") from None
    if not values or any(not (math.isfinite(v) and v >= 0) for v in values):
        raise argparse.ArgumentTypeError(f"invalid value {text!r}; {hint}")
    return values


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def add_output_options(group: Any, *, json_what: str, plot_what: str, rows_what: str) -> None:
    """The output options every simulation command has, worded for it: ``--json`` (``json_what``:
    what the record holds), ``--plot`` (``plot_what``: what the figure shows), ``--save`` (the final
    MPS) and ``--quiet`` (``rows_what``: the table rows it silences)."""
    group.add_argument(
        "--json",
        metavar="PATH",
        default=None,
        help=f"write the full result as JSON: {json_what}; '-' writes it to standard output (and the "
        "report to stderr) (default: none)",
    )
    group.add_argument(
        "--plot",
        metavar="PATH",
        default=None,
        help=f"write a figure (.png, .pdf or .svg) of {plot_what}; needs matplotlib, the 'plot' extra (default: none)",
    )
    group.add_argument(
        "--save",
        metavar="PATH",
        default=None,
        help="write the final MPS: .arrow (Arrow IPC) or .parquet via tenferro.save (the 'arrow' "
        "extra), or .npz (NumPy); read it back with tensor4all.MPS.load(PATH) (default: none)",
    )
    group.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help=f"no progress bar and no {rows_what}, only the final summary (default: off; the progress "
        "bar is also off when stderr is not a terminal)",
    )


def run_reported(run: Callable[[], Any], error: Callable[[str], Any], close_bar: Callable[[], None]) -> Any:
    """``run()`` (a simulation with a progress bar); a :class:`Tensor4allError` it raises becomes
    ``error(message)`` (argparse's exit 2), and the bar is closed either way."""
    try:
        return run()
    except Tensor4allError as e:
        close_bar()
        error(str(e))
    finally:
        close_bar()


def write_json_record(path: str, doc: Any) -> None:
    """A command's JSON record (NaN/inf as null) to ``path``, atomically, or to standard output
    for ``-``."""
    text = json.dumps(_json_safe(doc), indent=2, allow_nan=False) + "\n"
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        _write_atomic(path, text)


class BarReport:
    """The report of a command with a progress bar over its steps (``spectrum``, ``thermal``): lines
    go to ``out`` (standard error when the JSON record takes standard output; written around the bar
    while it runs), the bar only on a terminal and without ``--quiet``; ``close_bar`` ends it."""

    def __init__(self, args: argparse.Namespace):
        self.out = sys.stderr if args.json == "-" else sys.stdout
        isatty = getattr(sys.stderr, "isatty", None)
        self.show_bar = not args.quiet and bool(isatty and isatty())
        self.bar: Any = None

    def print(self, line: str) -> None:
        if self.bar is not None:
            tqdm.write(line, file=self.out)
        else:
            print(line, file=self.out, flush=True)

    def close_bar(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


PLOT_EXTENSIONS = (".png", ".pdf", ".svg")


def check_outputs(
    error: Callable[[str], Any], args: argparse.Namespace, save_extensions: Sequence[str], save_what: str
) -> None:
    """The output options' checks before any work: ``--json``, ``--plot`` and ``--save`` name files
    that can be written (``--json -``: standard output), ``--plot`` a known extension with matplotlib
    installed (:func:`check_plot`), ``--save`` one of ``save_extensions`` (``save_what``: what it holds)."""
    check_output_paths(error, args)
    check_plot(error, args.plot)
    save = getattr(args, "save", None)
    if save is not None and os.path.splitext(save)[1].lower() not in save_extensions:
        error(f"argument --save: {save!r} must end in {', '.join(save_extensions)} ({save_what})")


def check_output_paths(error: Callable[[str], Any], args: argparse.Namespace) -> None:
    """``--json``, ``--plot`` and ``--save`` name files that can be written (``--json -``: standard
    output), each its own: the second write replaced the first (``--json p.npz --save p.npz`` left
    JSON where the state was to be, and exit code 0)."""
    seen: dict[str, str] = {}  # the file each option writes -> the option
    for opt in ("json", "plot", "save"):
        path = getattr(args, opt, None)
        if path is None or (opt == "json" and path == "-"):
            continue
        problem = output_problem(path)  # the check scan's --out and tensor4all.scan make too
        if problem is not None:
            error(
                f"argument --{opt}: {problem}"
                + (" (or - for standard output)" if opt == "json" and not path.strip() else "")
            )
        where = os.path.realpath(path)
        if where in seen:
            error(f"argument --{opt}: {path!r} is also the file of --{seen[where]}; give each output its own file")
        seen[where] = opt


def check_plot(error: Callable[[str], Any], path: str | None) -> None:
    """``--plot``'s checks before any work: a known extension and matplotlib installed."""
    if path is None:
        return
    ext = os.path.splitext(path)[1].lower()
    if ext not in PLOT_EXTENSIONS:
        error(
            f"argument --plot: unknown extension {ext or '(none)'!r} of {path!r}; valid extensions: "
            f"{', '.join(PLOT_EXTENSIONS)}"
        )
    if not installed("matplotlib"):
        error(
            "argument --plot: matplotlib is not installed; install the 'plot' extra: pip install 'tidu-tenferro[plot]'"
        )
