"""``tensor4all evolve``: real- or imaginary-time evolution of a chain by TDVP or TEBD.

The command builds the Hamiltonian (``xx``, ``heisenberg``, ``xxz``, ``tfim``: the ``dmrg``
command's models and couplings, plus the XX chain; ``hubbard``: the Fermi-Hubbard chain) and
an initial state (``--state``: a product state, or the DMRG ground state of the chain before a
quench), evolves it with :func:`tensor4all.tdvp` or :func:`tensor4all.tebd`, and prints one
table row per output time (energy, norm drift, largest bond, entanglement entropy at the
middle bond, and the observables: the site average and the staggered average of each local
operator). Where the evolution is exactly solvable (free fermions from a product of basis
states, real time: the XX chain, the Hubbard chain at U = 0) it also prints the exact
staggered ``<Sz_i>`` and the largest error of ``<Sz_i>`` (hubbard: and of ``<Ntot_i>``) over
the sites.
``--json``, ``--plot`` and ``--save`` write the full record, a figure and the final MPS.

States are written in the model's own basis: up/down are ``Sz = +-1/2`` (tfim: ``Z = +-1``,
the model being ``-J sum Z Z - g sum X``) and ``+``/``-`` the eigenstates of ``Sx`` (tfim:
``X``); hubbard sites are ``0`` (empty), ``u``, ``d``, ``2`` (both). A run conserves a charge
when the model and the state allow it (``--conserve auto``): ``Sz`` for the spin models from a
product of up/down spins, ``N`` for hubbard, the parity ``prod X`` of the tfim from a product
of ``+``/``-`` (the run then writes the model as ``-J sum X X - g sum Z``, TeNPy's
``TFIChain``, and maps states and observables through the Hadamard rotation, so everything
printed is in the model's own basis).

The model table (couplings, letters, charges, Hamiltonians, exact references) lives in
:mod:`._cli_models`. Parsing and checks (:func:`add_parser`, :func:`check`) come first, then
the run and its table (:class:`EvolveRun`) and its JSON record (:func:`write_json_doc`); the
states are :mod:`tensor4all.cli.evolve_states`, the figure :mod:`tensor4all.cli.evolve_plot`.
"""
from __future__ import annotations

import argparse
import copy
import datetime
import sys
import time
from typing import Any, Callable, Sequence

import numpy as np
from tqdm import tqdm

from .common import (CONSERVE, PROG, _version, add_output_options, integer_arg, real_arg, run_reported,
                     write_json_record, write_outputs)
from .models import (ALL_MODEL_OPTIONS, DEFAULT_OBSERVE, DEFAULTS, LETTERS, MODELS, ROTATED, exact_profile,
                     exact_reference_applies, letters_of, local_of)
from ..tools.errors import Tensor4allError
from ..algorithms.evolution import time_grid
from ..networks.mpo import expectation
from ..networks.mps import MPS
from ..algorithms.tdvp import tdvp
from ..algorithms.tebd import tebd
from ..tools.threads import threads_for
from .evolve_checks import ROWS, check
from .evolve_plot import write_evolve_plot
from .evolve_states import States, build_states, staggered

__all__ = ["add_parser", "check", "build_states", "EvolveRun", "write_evolve_plot", "SCHEMA", "MODELS", "METHODS"]

SCHEMA = "tensor4all.evolve/1"
METHODS = ("tdvp", "tebd")
NAMED_STATES = ("neel", "domain-wall", "up", "ground")
#: table rows of --every auto
#: the function of tensor4all.references behind the exact reference (by: is the model hubbard)
_REFERENCE_NAMES = {False: "xx_magnetization", True: "hubbard_free_densities"}

_EXAMPLES = """\
examples:
  tensor4all evolve                                      XX chain, L=16, Neel state, t=10, TDVP (exact reference)
  tensor4all evolve --model xx --L 10 --t 1 --dt 0.05 --method tebd --order 4
  tensor4all evolve --model heisenberg --state domain-wall --L 32 --t 8 --max-bond 128
  tensor4all evolve --model tfim --g 0.5 --state ground --quench-g 1.5 --observe Z,X --t 5
  tensor4all evolve --model tfim --state product:++++++++ --L 8 --g 2 --imaginary --t 5
  tensor4all evolve --model hubbard --L 8 --U 0 --t 2                Hubbard, free fermions (exact reference)
  tensor4all evolve --model hubbard --L 8 --state product:22220000 --U 4 --t 3 --method tebd --order 4
  tensor4all evolve --model hubbard --L 8 --state ground --U 2 --quench-U 8 --t 2
  tensor4all evolve --json run.json --plot run.png --save psi.npz
"""


# ---- argument types ------------------------------------------------------------------------
_positive_float = real_arg(0.0, strict=True)
_positive_int = integer_arg(1, "a positive integer")


_STATE_HINT = ("valid states: neel, domain-wall, up, ground, product:SPEC (SPEC: one letter per site, u or 0 "
               "for up, d or 1 for down, + and - for the eigenstates of Sx (tfim: X); hubbard: 0 empty, u up, "
               "d down, 2 both; e.g. product:uudd, product:0,1,1,0, product:++-- or product:2u0d)")


def _state(text: str) -> str:
    """``--state``: a named state or ``product:SPEC`` (one letter per site, commas dropped; the
    letters are read for the model by :func:`check`)."""
    if text in NAMED_STATES:
        return text
    if text.startswith("product:"):
        spec = text[len("product:"):]
        tokens = [t.strip() for t in spec.split(",")] if "," in spec else list(spec)
        if tokens and all(any(t in table for table in LETTERS.values()) for t in tokens):
            return "product:" + "".join(tokens)
        raise argparse.ArgumentTypeError(f"invalid product state {text!r}; {_STATE_HINT}")
    raise argparse.ArgumentTypeError(f"invalid state {text!r}; {_STATE_HINT}")


def _every(text: str) -> int | None:
    """``--every``: ``auto`` (None) or a positive integer."""
    return None if text == "auto" else _positive_int(text)


def _observe(text: str) -> list[str] | None:
    """``--observe``: ``auto`` (None), ``none`` (no operator) or a comma-separated list."""
    if text == "auto":
        return None
    if text == "none":
        return []
    names = [t.strip() for t in text.split(",")]
    if not all(names) or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"invalid list {text!r}; give operator names separated by commas, "
                                         "each once, such as Sz,Sx (or auto, or none)")
    return names


# ---- the parser ------------------------------------------------------------------------------
def add_parser(commands: Any, dmrg_parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``evolve`` subcommand to ``commands``. The couplings, ``--seed``, ``--threads``
    and ``--quiet`` are copies of the ``dmrg`` subparser's options (``dmrg_parser``), so their
    checks never drift apart; the dmrg command's checks (:mod:`tensor4all.cli.checks`) apply to
    the output files, its symmetry choice to a ground state."""
    p = commands.add_parser(
        "evolve",
        help="time evolution of a spin or Hubbard chain by TDVP or TEBD (table per output time, JSON, plot, "
             "saved MPS)",
        description=(
            "Real- or imaginary-time evolution of an open spin or Hubbard chain from a product\n"
            "state or from the ground state before a quench, by TDVP (tensor4all.tdvp) or TEBD\n"
            "(tensor4all.tebd). Prints a progress bar over the steps (on stderr, when it is a\n"
            "terminal) and one table row per output time: time, energy <H>, |norm - 1|, the\n"
            "largest bond dimension, the entanglement entropy S at the middle bond, and for each\n"
            "observed operator its site average and staggered average (1/L) sum (-1)^i <O_i>.\n"
            "The XX chain from a product of up/down spins is free fermions: the table then shows\n"
            "the exact staggered magnetization and the largest error of <Sz_i> over the sites;\n"
            "so is the Hubbard chain at U = 0 from any product state (exact <Sz_i> and <Ntot_i>).\n"
            "The Hubbard chain conserves N and Sz together (--conserve N,Sz, the default), or N."
        ),
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dmrg_actions = {a.dest: a for a in dmrg_parser._actions}

    def copied(group: Any, dest: str, help: str | None = None, default: Any = "keep") -> None:
        a = copy.copy(dmrg_actions[dest])
        if help is not None:
            a.help = help
        if default != "keep":
            a.default = default
        group._add_action(a)

    m = p.add_argument_group("model")
    m.add_argument("--model", choices=MODELS, default="xx",
                   help="xx: H = sum J (SxSx + SySy) - h sum Sz; heisenberg/xxz: H = sum J (SxSx + SySy) + "
                        "Jz SzSz - h sum Sz (spin 1/2); tfim: H = -J sum ZZ - g sum X (Pauli matrices); hubbard: "
                        "H = -J sum_s (c+_{i s} c_{i+1 s} + h.c.) + U sum n_up n_dn - mu sum n (the hopping t "
                        "given as --J, --t being the final time; tensor4all.models.hubbard). Default: %(default)s")
    copied(m, "L", default=16)
    copied(m, "J", help="exchange coupling (xx/heisenberg/xxz: the XX+YY part; tfim: the ZZ coupling; hubbard: "
                        "the hopping t) (default: 1.0)")
    copied(m, "Jz")
    copied(m, "h", help="longitudinal field of xx/heisenberg/xxz, the term -h sum Sz (default: 0)")
    copied(m, "g")
    m.add_argument("--U", type=dmrg_actions["J"].type, default=None,
                   help=f"on-site interaction of hubbard, U sum n_up n_dn (default: {DEFAULTS['U']:g})")
    m.add_argument("--mu", type=dmrg_actions["J"].type, default=None,
                   help=f"chemical potential of hubbard, the term -mu sum n (default: {DEFAULTS['mu']:g})")
    q = p.add_argument_group("quench (with --state ground: the ground state of the couplings above, then the "
                             "evolution with these)")
    for name in ("J",) + ALL_MODEL_OPTIONS:
        q.add_argument(f"--quench-{name}", dest=f"quench_{name}", type=dmrg_actions["J"].type, default=None,
                       metavar=name.upper(),
                       help=f"--{name} of the Hamiltonian that evolves the ground state (default: --{name}, no "
                            "change)")
    s = p.add_argument_group("state and time")
    s.add_argument("--state", type=_state, default="neel", metavar="STATE",
                   help="initial state: neel (up, down, up, ...), domain-wall (sites 0..L/2-1 up, the rest "
                        "down), up (all up), product:SPEC (one letter per site: u or 0 up, d or 1 down, + and - "
                        "the eigenstates of Sx, tfim: X; hubbard: 0 empty, u up, d down, 2 both; e.g. product:uudd, "
                        "product:0,1,1,0 or product:2u0d), or ground (the DMRG ground state of the chain, hubbard: "
                        "at half filling N = L, evolved with the --quench-* couplings); up/down are Sz = +-1/2 "
                        "(tfim: Z = +-1; hubbard: one electron of that spin) (default: %(default)s)")
    s.add_argument("--t", type=_nonnegative_time, default=10.0,
                   help="final time, a multiple of --dt (with --imaginary: the imaginary time tau of "
                        "exp(-tau H)) (default: %(default)g)")
    s.add_argument("--dt", type=_positive_float, default=0.05, help="time step (default: %(default)g)")
    s.add_argument("--every", type=_every, default=None, metavar="N",
                   help="a table row and a measurement every N steps, and at the final time (default: auto: "
                        f"about {ROWS} rows, N = ceil(steps / {ROWS}))")
    s.add_argument("--imaginary", action="store_true",
                   help="imaginary-time evolution exp(-tau H), the state normalized after each step "
                        "(default: off, real time exp(-i t H))")
    a = p.add_argument_group("algorithm")
    a.add_argument("--method", choices=METHODS, default="tdvp",
                   help="tdvp: time-dependent variational principle (Krylov exponentials on the sweep); "
                        "tebd: Trotter gates on even and odd bonds. Default: %(default)s")
    a.add_argument("--order", type=int, choices=(2, 4), default=None,
                   help="Trotter order of --method tebd: 2 (Strang) or 4 (Suzuki) (default: 2)")
    a.add_argument("--one-site", dest="one_site", action="store_true",
                   help="one-site TDVP (the bond dimensions stay those of the initial state; cheaper per "
                        "step) (default: off, two-site TDVP, bonds grow through the SVD)")
    a.add_argument("--max-bond", dest="max_bond", type=_positive_int, default=64,
                   help="largest bond dimension after each truncation (default: %(default)s)")
    a.add_argument("--cutoff", type=dmrg_actions["tol"].type, default=1e-10,
                   help="truncation cutoff: the largest discarded weight (relative sum of squared singular "
                        "values) per bond (default: %(default)g)")
    a.add_argument("--conserve", choices=CONSERVE, default="auto",
                   help="run in one sector of a conserved charge: auto (default: Sz for xx/heisenberg/xxz from "
                        "a product of u/d or the ground state, the parity prod X for tfim from a product of +/- "
                        "or the ground state at g != 0, N and Sz together (N,Sz) for hubbard; else none), Sz, "
                        "parity, N, N,Sz or none (dense)")
    copied(a, "seed", help="seed of the random initial state of the ground-state DMRG (--state ground) "
                           "(default: 0)")
    copied(a, "threads", help=dmrg_actions["threads"].help.replace("during the sweeps", "during the evolution")
           .replace("largest chi", "--max-bond"))
    o = p.add_argument_group("output")
    o.add_argument("--observe", type=_observe, default=None, metavar="OP[,OP...]",
                   help="local operators measured at every site and output time: Sx, Sy, Sz (tfim: X, Y, Z; "
                        "hubbard: Ntot, Sz, Nup, Ndn, Nupdn), or none; the table shows their site average and "
                        "staggered average, --json every site (default: auto: Sz; tfim: Z,X; hubbard: Ntot,Sz)")
    add_output_options(o, json_what="parameters, output times, every observable at every site, the exact "
                                    "reference, the history per step, timing",
                       plot_what="the observables and the entanglement entropy against time and of the first "
                                 "observable over sites and time",
                       rows_what="table row per output time")

    def run(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: Sequence[str] | None) -> int:
        check(p, args)
        return EvolveRun(p, args, list(sys.argv[1:] if argv is None else argv)).run()

    p.set_defaults(func=run)
    return p


_nonnegative_time = real_arg(0.0, strict=False)


# ---- the run ---------------------------------------------------------------------------------------
class EvolveRun:
    def __init__(self, parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]):
        self.parser = parser
        self.args = args
        self.argv = argv
        self.out = sys.stderr if args.json == "-" else sys.stdout
        self.show_table = not args.quiet
        isatty = getattr(sys.stderr, "isatty", None)
        self.show_bar = not args.quiet and bool(isatty and isatty())
        self.bar: Any = None
        self.observe = list(DEFAULT_OBSERVE[args.model] if args.observe is None else args.observe)
        self.exact = exact_reference_applies(args)
        #: the operators of the exact reference: <Sz_i(t)> of the XX chain, and <Ntot_i(t)> of hubbard at U = 0
        self.exact_ops = ["Sz", "Ntot"] if args.model == "hubbard" else ["Sz"]
        if self.exact:
            self.observe += [op for op in self.exact_ops if op not in self.observe]
        self.steps = time_grid(args.t, args.dt, "evolve")
        self.blas_threads = threads_for(args.threads, args.max_bond)
        self._last: tuple[float, dict[str, Any]] | None = None
        self.rows: list[dict[str, Any]] = []

    def print(self, line: str) -> None:
        if self.bar is not None:
            tqdm.write(line, file=self.out)
            self.out.flush()
        else:
            print(line, file=self.out, flush=True)

    # ---- parameters ------------------------------------------------------------------------------
    def parameters(self, st: States) -> dict[str, Any]:
        a = self.args
        quenched = a.state == "ground" and st.after != st.before
        p: dict[str, Any] = {"model": a.model, "L": a.L, **st.before,
                             "quench": dict(st.after) if quenched else None,
                             "state": a.state, "method": a.method,
                             "two_site": (not a.one_site) if a.method == "tdvp" else None,
                             "order": (2 if a.order is None else a.order) if a.method == "tebd" else None,
                             "t": a.t, "dt": a.dt, "steps": self.steps, "every": a.every, "imaginary": a.imaginary,
                             "max_bond": a.max_bond, "cutoff": a.cutoff, "conserve": st.conserve,
                             "sector": dict(st.psi0.sector) if st.conserve else None,
                             "observe": list(self.observe), "seed": a.seed, "threads": a.threads,
                             "blas_threads": self.blas_threads}
        return p

    def model_text(self, p: dict[str, float]) -> str:
        return f"{self.args.model} L={self.args.L} " + " ".join(f"{k}={v:g}" for k, v in p.items())

    # ---- measurements (one per output time, through the evolution's observables) ------------------
    def measure(self, psi: MPS, t: float) -> dict[str, Any]:
        """Everything measured at an output time, once per time (each observable's callable asks
        here; the first call measures and prints the table row)."""
        if self._last is not None and self._last[0] == t:
            return self._last[1]
        ents = [float(s) + 0.0 for s in psi.entanglement_entropy()] if psi.L > 1 else []  # + 0.0: no -0
        bonds = [int(b) for b in psi.bond_dims]
        v: dict[str, Any] = {
            "energy": float(np.real(complex(np.asarray(expectation(psi, self.H))))) + 0.0,
            "norm": float(np.asarray(psi.norm())),
            "entropy": ents[self.args.L // 2 - 1] if ents else 0.0,
            "max_bond": max(bonds, default=1),
            "entropies": np.asarray(ents),
            "bond_dims": np.asarray(bonds),
        }
        for op in self.observe:
            name, sign = (ROTATED[op] if self.rotated else (op, 1.0))
            v[op] = sign * np.array([float(np.real(complex(np.asarray(psi.expect(name, i, self.local)))))
                                     for i in range(psi.L)])
        self._last = (t, v)
        self.row(t, v)
        return v

    def observables(self) -> dict[str, Callable[[MPS, float], Any]]:
        names = list(self.observe) + ["energy", "norm", "entropy", "max_bond", "entropies", "bond_dims"]
        def value(name: str) -> Callable[[MPS, float], Any]:
            return lambda psi, t: self.measure(psi, t)[name]

        return {n: value(n) for n in names}

    def header_row(self) -> str:
        cols = f"{'time':>8}  {'energy':>16}  {'|norm-1|':>9}  {'bond':>5}  {'S(L/2)':>8}"
        for op in self.observe:
            cols += f"  {op + ' mean':>10}  {op + ' stag':>10}"
        if self.exact:
            cols += f"  {'exact':>10}  {'error':>9}"
        return cols

    def row(self, t: float, v: dict[str, Any]) -> None:
        r: dict[str, Any] = {"time": t, "energy": v["energy"], "norm_drift": abs(v["norm"] - 1.0)}
        line = (f"{t:>8.6g}  {_fixed(v['energy'], 16, 10)}  {r['norm_drift']:>9.2e}  {v['max_bond']:>5}  "
                f"{_fixed(v['entropy'], 8, 5)}")
        for op in self.observe:
            line += f"  {_fixed(np.mean(v[op]), 10, 6)}  {_fixed(staggered(v[op]), 10, 6)}"
        if self.exact:
            exact = self.exact_values(t)
            r["exact"] = float(staggered(exact["Sz"]))
            r["error"] = float(max(np.max(np.abs(v[op] - x)) for op, x in exact.items()))
            line += f"  {_fixed(r['exact'], 10, 6)}  {r['error']:>9.2e}"
        self.rows.append(r)
        if self.show_table:
            self.print(line)

    def error_text(self) -> str:
        return "/".join(self.exact_ops)

    def exact_values(self, times: Any) -> dict[str, np.ndarray]:
        """The exact references of :attr:`exact_ops` at every site (free fermions)."""
        return exact_profile(self.args.model, letters_of(self.args.state, self.args.L), times, self.after)

    # ---- progress ---------------------------------------------------------------------------------
    def on_step(self, rec: Any) -> None:
        if self.bar is None:
            return
        self.bar.set_postfix_str(f"t={rec.time:.4g} chi={rec.max_bond}", refresh=False)
        self.bar.update(1)
        if rec.step == self.steps:
            self.bar.refresh()

    def close_bar(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    # ---- the command ------------------------------------------------------------------------------
    def run(self) -> int:
        a = self.args
        t0 = time.perf_counter()
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        evolve = {"tdvp": tdvp, "tebd": tebd}[a.method]
        try:
            st = build_states(a)
        except Tensor4allError as e:
            self.parser.error(str(e))
        t_setup = time.perf_counter() - t0
        self.H, self.after = st.H, st.after
        self.rotated = st.conserve == "parity"
        self.local = local_of(a.model)
        p = self.parameters(st)
        self.header(st)
        if self.show_table:
            self.print(self.header_row())
        kwargs: dict[str, Any] = {"max_bond": a.max_bond, "cutoff": a.cutoff, "imaginary": a.imaginary,
                                  "observables": self.observables(), "callback": self.on_step, "every": a.every,
                                  "threads": a.threads}
        if a.method == "tdvp":
            kwargs["two_site"] = not a.one_site
        else:
            kwargs["order"] = 2 if a.order is None else a.order
        if self.show_bar:
            self.bar = tqdm(total=self.steps, desc=a.method, unit="step", leave=False, file=sys.stderr,
                            dynamic_ncols=True, mininterval=0.1)
        t1 = time.perf_counter()
        res = run_reported(lambda: evolve(st.H, st.psi0, a.t, a.dt, **kwargs), self.parser.error, self.close_bar)
        t_evolve = time.perf_counter() - t1
        self.summary(res, t_evolve)
        return write_outputs(a, (("save", lambda path: res.state.save(path)),
                                 ("json", lambda path: self.write_json(path, p, st, res, started, t0, t_setup,
                                                                       t_evolve)),
                                 ("plot", lambda path: write_evolve_plot(path, res, self.observe, self.rows, a.L,
                                                                         self.title(st)))), self.print, PROG)

    def title(self, st: States) -> str:
        a = self.args
        text = f"{a.method} {self.model_text(st.after)} from {a.state}"
        return text + (f" ({self.model_text(st.before)})" if a.state == "ground" and st.after != st.before else "")

    def header(self, st: States) -> None:
        a = self.args
        kind = "imaginary time tau" if a.imaginary else "real time t"
        how = (("two-site" if not a.one_site else "one-site") + " TDVP") if a.method == "tdvp" else \
            f"TEBD order {2 if a.order is None else a.order}"
        self.print(f"EVOLVE  {self.model_text(st.after)}  (MPO bond dimension {max(st.H.bond_dims, default=1)})")
        self.print(f"        {how}, {kind} {a.t:g}, dt {a.dt:g} ({self.steps} steps, a row every {_steps(a.every)}), "
                   f"max bond {a.max_bond}, cutoff {a.cutoff:g}, BLAS threads {self.blas_threads or 'default'}")
        if a.state == "ground":
            g = st.ground
            self.print(f"        state ground: DMRG ground state of {self.model_text(st.before)}: "
                       f"E0 = {g.energy:.12f}, {len(g.history)} sweeps, "
                       f"{'converged' if g.converged else 'not converged'}, max bond {max(g.state.bond_dims, default=1)}"
                       + ("" if st.after != st.before else "; no quench (--quench-* not given): a stationary state"))
        else:
            self.print(f"        state {a.state}" + ("" if a.state.startswith("product:") else
                                                     f" ({letters_of(a.state, a.L)})"))
        if st.conserve in ("Sz", "N", "N,Sz"):
            group = "U(1) x U(1)" if st.conserve == "N,Sz" else "U(1)"
            shown = ", ".join(f"{k} = {v:g}" for k, v in st.psi0.sector.items())
            sym = f"{group} {st.conserve}, sector {shown}"
        elif st.conserve == "parity":
            sym = (f"Z2 parity prod X, sector {st.psi0.sector.get('parity', 0.0):g} (run as -J sum XX - g sum Z; "
                   "states and observables printed in the model's basis)")
        else:
            sym = "none (dense" + (f": {st.dense_reason})" if st.dense_reason else ")")
        self.print(f"        symmetry {sym}")
        if self.exact:
            self.print(f"        exact: free fermions (Jordan-Wigner{', each spin' if self.args.model == 'hubbard' else ''}"
                       f"), staggered <Sz>; error = max_i |<{self.error_text()}_i> - exact|")

    def summary(self, res: Any, t_evolve: float) -> None:
        r0, r1 = self.rows[0], self.rows[-1]
        psi = res.state
        bonds = [int(b) for b in psi.bond_dims]
        ents = [float(s) + 0.0 for s in psi.entanglement_entropy()] if psi.L > 1 else [0.0]
        mid = self.args.L // 2 - 1
        drift = max(abs(r["energy"] - r0["energy"]) for r in self.rows)
        self.print(f"final       {'tau' if self.args.imaginary else 't'} = {r1['time']:g}: energy "
                   f"{_fixed(r1['energy'], 0, 12)}, "
                   f"|norm - 1| = {r1['norm_drift']:.2e}, " +
                   (f"E(0) - E = {r0['energy'] - r1['energy']:.6e}" if self.args.imaginary else
                    f"max |E(t) - E(0)| = {drift:.2e}"))
        if self.exact:
            worst = max(r["error"] for r in self.rows)
            self.print(f"exact       max |<{self.error_text()}_i> - exact| = {worst:.3e} over all sites and output "
                       f"times (references.{_REFERENCE_NAMES[self.args.model == 'hubbard']})")
        self.print(f"bond dims   max {max(bonds, default=1)}, middle bond {bonds[mid] if bonds else 1};  entanglement "
                   f"entropy at the middle bond {ents[mid]:.6f}")
        trunc = max((h.max_truncation_error for h in res.history), default=0.0)
        matvecs = sum(getattr(h, "matvecs", 0) for h in res.history)
        self.print(f"time        {t_evolve:.2f} s {self.args.method}, {len(res.history)} steps, {matvecs} "
                   f"{'matvecs' if self.args.method == 'tdvp' else 'gates'}, max truncation error {trunc:.2e}")

    def write_json(self, path: str, p: dict[str, Any], st: States, res: Any, started: str, t0: float,
                   t_setup: float, t_evolve: float) -> None:
        doc = write_json_doc(self, p, st, res, started)
        doc["timing"] = {"setup_seconds": t_setup, "evolve_seconds": t_evolve,
                         "step_seconds": [float(h.seconds) for h in res.history],
                         "total_seconds": time.perf_counter() - t0}
        write_json_record(path, doc)


def write_json_doc(run: EvolveRun, p: dict[str, Any], st: States, res: Any, started: str) -> dict[str, Any]:
    """The JSON document of a finished run (without its timing); the schema is in the README."""

    obs = res.observables
    summaries = {op: {"mean": np.mean(np.asarray(obs[op]), axis=-1).tolist(),
                      "staggered": staggered(np.asarray(obs[op])).tolist()} for op in run.observe}
    reference = None
    if run.exact:
        exact = run.exact_values(np.asarray(res.times))
        reference = {"source": "free fermions (Jordan-Wigner), tensor4all.references."
                               + _REFERENCE_NAMES[run.args.model == "hubbard"],
                     **{op: x.tolist() for op, x in exact.items()}, "staggered": staggered(exact["Sz"]).tolist(),
                     "error": np.max([np.max(np.abs(np.asarray(obs[op]) - x), axis=-1) for op, x in exact.items()],
                                     axis=0).tolist()}
    ground = None
    if st.ground is not None:
        g = st.ground
        ground = {"energy": float(g.energy), "sweeps": len(g.history), "converged": bool(g.converged),
                  "variance": float(g.variance)}
    psi = res.state
    return {
        "schema": SCHEMA,
        "program": {"name": f"{PROG} evolve", "version": _version(), "argv": run.argv, "started": started,
                    "python": sys.version.split()[0], "numpy": np.__version__},
        "parameters": p,
        "ground_state": ground,
        "times": [float(x) for x in np.asarray(res.times)],
        "observables": {k: np.asarray(v).tolist() for k, v in obs.items()},
        "summaries": summaries,
        "reference": reference,
        "history": [h.as_dict() for h in res.history],
        "final": {"bond_dims": [int(b) for b in psi.bond_dims],
                  "entanglement_entropy": [float(s) for s in psi.entanglement_entropy()] if psi.L > 1 else [],
                  "sector": dict(psi.sector) if st.conserve else {}},
    }


def _fixed(x: float, width: int, digits: int) -> str:
    """``x`` in fixed point, without the sign of a value that rounds to zero (no "-0.000")."""
    text = f"{x:.{digits}f}"
    if text.startswith("-") and float(text) == 0.0:
        text = text[1:]
    return f"{text:>{width}}"


def _steps(n: int) -> str:
    return "step" if n == 1 else f"{n} steps"
