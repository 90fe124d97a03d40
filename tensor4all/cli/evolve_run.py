"""The run of a checked ``tensor4all evolve`` command line (:class:`EvolveRun`): the
evolution by TDVP or TEBD with a progress bar over the steps, the measurements and the table
row at each output time (with the exact free-fermion reference where it applies), the header
and the final report, and the outputs (the saved MPS, the JSON record of
:func:`write_json_doc`, the figure of :mod:`tensor4all.cli.evolve_plot`)."""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from typing import Any, Callable

import numpy as np
from tqdm import tqdm

from .common import PROG, _version, run_reported, write_json_record, write_outputs
from .models import DEFAULT_OBSERVE, ROTATED, exact_profile, exact_reference_applies, letters_of, local_of
from ..tools.errors import Tensor4allError
from ..algorithms.evolution import auto_dense, time_grid
from ..networks.mpo import expectation
from ..networks.mps import MPS
from ..algorithms.tdvp import tdvp
from ..algorithms.tebd import tebd
from ..tools.threads import threads_for
from .evolve_plot import write_evolve_plot
from .evolve_states import States, build_states, staggered

__all__ = ["EvolveRun", "write_json_doc", "SCHEMA"]

SCHEMA = "tensor4all.evolve/2"  # 2: the final time is t_final (t is the hubbard hopping)
#: the function of tensor4all.references behind the exact reference (by: is the model hubbard)
_REFERENCE_NAMES = {False: "xx_magnetization", True: "hubbard_free_densities"}


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
        self.steps = time_grid(args.t_final, args.dt, "evolve")
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
        p: dict[str, Any] = {
            "model": a.model,
            "L": a.L,
            **st.before,
            "quench": dict(st.after) if quenched else None,
            "state": a.state,
            "method": a.method,
            "two_site": (not a.one_site) if a.method == "tdvp" else None,
            "order": (2 if a.order is None else a.order) if a.method == "tebd" else None,
            "t_final": a.t_final,
            "dt": a.dt,
            "steps": self.steps,
            "every": a.every,
            "imaginary": a.imaginary,
            "max_bond": a.max_bond,
            "cutoff": a.cutoff,
            "conserve": st.conserve,
            "sector": dict(st.psi0.sector) if st.conserve else None,
            "observe": list(self.observe),
            "seed": a.seed,
            "threads": a.threads,
            "blas_threads": self.blas_threads,
        }
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
            name, sign = ROTATED[op] if self.rotated else (op, 1.0)
            v[op] = sign * np.array(
                [float(np.real(complex(np.asarray(psi.expect(name, i, self.local))))) for i in range(psi.L)]
            )
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
        line = (
            f"{t:>8.6g}  {_fixed(v['energy'], 16, 10)}  {r['norm_drift']:>9.2e}  {v['max_bond']:>5}  "
            f"{_fixed(v['entropy'], 8, 5)}"
        )
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
        self.auto = self.auto_choice(st)
        self.header(st)
        if self.show_table:
            self.print(self.header_row())
        kwargs: dict[str, Any] = {
            "max_bond": a.max_bond,
            "cutoff": a.cutoff,
            "imaginary": a.imaginary,
            "observables": self.observables(),
            "callback": self.on_step,
            "every": a.every,
            "threads": a.threads,
        }
        if a.method == "tdvp":
            kwargs["two_site"] = not a.one_site
        else:
            kwargs["order"] = 2 if a.order is None else a.order
        if self.auto is not None:  # --conserve auto: as tdvp/tebd(conserve="auto"), small runs go dense
            kwargs["conserve"] = "auto"
        if self.show_bar:
            self.bar = tqdm(
                total=self.steps,
                desc=a.method,
                unit="step",
                leave=False,
                file=sys.stderr,
                dynamic_ncols=True,
                mininterval=0.1,
            )
        t1 = time.perf_counter()
        res = run_reported(lambda: evolve(st.H, st.psi0, a.t_final, a.dt, **kwargs), self.parser.error, self.close_bar)
        t_evolve = time.perf_counter() - t1
        self.summary(res, t_evolve)
        return write_outputs(
            a,
            (
                ("save", lambda path: res.state.save(path)),
                ("json", lambda path: self.write_json(path, p, st, res, started, t0, t_setup, t_evolve)),
                ("plot", lambda path: write_evolve_plot(path, res, self.observe, self.rows, a.L, self.title(st))),
            ),
            self.print,
            PROG,
        )

    def auto_choice(self, st: States) -> str | None:
        """With ``--conserve auto`` and a symmetric state: what ``conserve="auto"`` of the library
        will do (the sentence of :func:`~tensor4all.algorithms.evolution.auto_dense`, for the header);
        else None (the run conserves what the state carries)."""
        a = self.args
        if a.conserve != "auto" or not st.psi0.symmetric:
            return None
        chi = a.max_bond if a.method == "tebd" or not a.one_site else max(st.psi0.bond_dims, default=1)
        real = a.imaginary and not st.psi0.dtype.is_complex and not st.H.dtype.is_complex
        return auto_dense(st.psi0, chi, a.method, real)[1]

    def title(self, st: States) -> str:
        a = self.args
        text = f"{a.method} {self.model_text(st.after)} from {a.state}"
        return text + (f" ({self.model_text(st.before)})" if a.state == "ground" and st.after != st.before else "")

    def header(self, st: States) -> None:
        a = self.args
        kind = "imaginary time tau" if a.imaginary else "real time t"
        how = (
            (("two-site" if not a.one_site else "one-site") + " TDVP")
            if a.method == "tdvp"
            else f"TEBD order {2 if a.order is None else a.order}"
        )
        self.print(f"EVOLVE  {self.model_text(st.after)}  (MPO bond dimension {max(st.H.bond_dims, default=1)})")
        self.print(
            f"        {how}, {kind} {a.t_final:g}, dt {a.dt:g} ({self.steps} steps, a row every {_steps(a.every)}), "
            f"max bond {a.max_bond}, cutoff {a.cutoff:g}, BLAS threads {self.blas_threads or 'default'}"
        )
        if a.state == "ground":
            g = st.ground
            self.print(
                f"        state ground: DMRG ground state of {self.model_text(st.before)}: "
                f"E0 = {g.energy:.12f}, {len(g.history)} sweeps, "
                f"{'converged' if g.converged else 'not converged'}, max bond {max(g.state.bond_dims, default=1)}"
                + ("" if st.after != st.before else "; no quench (--quench-* not given): a stationary state")
            )
        else:
            self.print(
                f"        state {a.state}"
                + ("" if a.state.startswith("product:") else f" ({letters_of(a.state, a.L)})")
            )
        if st.conserve in ("Sz", "N", "N,Sz"):
            group = "U(1) x U(1)" if st.conserve == "N,Sz" else "U(1)"
            shown = ", ".join(f"{k} = {v:g}" for k, v in st.psi0.sector.items())
            sym = f"{group} {st.conserve}, sector {shown}"
        elif st.conserve == "parity":
            sym = (
                f"Z2 parity prod X, sector {st.psi0.sector.get('parity', 0.0):g} (run as -J sum XX - g sum Z; "
                "states and observables printed in the model's basis)"
            )
        else:
            sym = "none (dense" + (f": {st.dense_reason})" if st.dense_reason else ")")
        self.print(f"        symmetry {sym}")
        if self.auto is not None:
            self.print(f"        runs     {self.auto}")
        if self.exact:
            self.print(
                f"        exact: free fermions (Jordan-Wigner{', each spin' if self.args.model == 'hubbard' else ''}"
                f"), staggered <Sz>; error = max_i |<{self.error_text()}_i> - exact|"
            )

    def summary(self, res: Any, t_evolve: float) -> None:
        r0, r1 = self.rows[0], self.rows[-1]
        psi = res.state
        bonds = [int(b) for b in psi.bond_dims]
        ents = [float(s) + 0.0 for s in psi.entanglement_entropy()] if psi.L > 1 else [0.0]
        mid = self.args.L // 2 - 1
        drift = max(abs(r["energy"] - r0["energy"]) for r in self.rows)
        self.print(
            f"final       {'tau' if self.args.imaginary else 't'} = {r1['time']:g}: energy "
            f"{_fixed(r1['energy'], 0, 12)}, "
            f"|norm - 1| = {r1['norm_drift']:.2e}, "
            + (
                f"E(0) - E = {r0['energy'] - r1['energy']:.6e}"
                if self.args.imaginary
                else f"max |E(t) - E(0)| = {drift:.2e}"
            )
        )
        if self.exact:
            worst = max(r["error"] for r in self.rows)
            self.print(
                f"exact       max |<{self.error_text()}_i> - exact| = {worst:.3e} over all sites and output "
                f"times (references.{_REFERENCE_NAMES[self.args.model == 'hubbard']})"
            )
        self.print(
            f"bond dims   max {max(bonds, default=1)}, middle bond {bonds[mid] if bonds else 1};  entanglement "
            f"entropy at the middle bond {ents[mid]:.6f}"
        )
        if self.auto is not None and res.conserve_reason != self.auto:  # the library decided otherwise
            self.print(f"ran         {res.conserve_reason}")
        trunc = max((h.max_truncation_error for h in res.history), default=0.0)
        matvecs = sum(getattr(h, "matvecs", 0) for h in res.history)
        self.print(
            f"time        {t_evolve:.2f} s {self.args.method}, {len(res.history)} steps, {matvecs} "
            f"{'matvecs' if self.args.method == 'tdvp' else 'gates'}, max truncation error {trunc:.2e}"
        )

    def write_json(
        self,
        path: str,
        p: dict[str, Any],
        st: States,
        res: Any,
        started: str,
        t0: float,
        t_setup: float,
        t_evolve: float,
    ) -> None:
        doc = write_json_doc(self, p, st, res, started)
        doc["timing"] = {
            "setup_seconds": t_setup,
            "evolve_seconds": t_evolve,
            "step_seconds": [float(h.seconds) for h in res.history],
            "total_seconds": time.perf_counter() - t0,
        }
        write_json_record(path, doc)


def write_json_doc(run: EvolveRun, p: dict[str, Any], st: States, res: Any, started: str) -> dict[str, Any]:
    """The JSON document of a finished run (without its timing); the schema is in the README."""

    obs = res.observables
    summaries = {
        op: {
            "mean": np.mean(np.asarray(obs[op]), axis=-1).tolist(),
            "staggered": staggered(np.asarray(obs[op])).tolist(),
        }
        for op in run.observe
    }
    reference = None
    if run.exact:
        exact = run.exact_values(np.asarray(res.times))
        reference = {
            "source": "free fermions (Jordan-Wigner), tensor4all.references."
            + _REFERENCE_NAMES[run.args.model == "hubbard"],
            **{op: x.tolist() for op, x in exact.items()},
            "staggered": staggered(exact["Sz"]).tolist(),
            "error": np.max(
                [np.max(np.abs(np.asarray(obs[op]) - x), axis=-1) for op, x in exact.items()], axis=0
            ).tolist(),
        }
    ground = None
    if st.ground is not None:
        g = st.ground
        ground = {
            "energy": float(g.energy),
            "sweeps": len(g.history),
            "converged": bool(g.converged),
            "variance": float(g.variance),
        }
    psi = res.state
    return {
        "schema": SCHEMA,
        "program": {
            "name": f"{PROG} evolve",
            "version": _version(),
            "argv": run.argv,
            "started": started,
            "python": sys.version.split()[0],
            "numpy": np.__version__,
        },
        "parameters": p,
        "ground_state": ground,
        "times": [float(x) for x in np.asarray(res.times)],
        "observables": {k: np.asarray(v).tolist() for k, v in obs.items()},
        "summaries": summaries,
        "reference": reference,
        "history": [h.as_dict() for h in res.history],
        "final": {
            "bond_dims": [int(b) for b in psi.bond_dims],
            "entanglement_entropy": [float(s) for s in psi.entanglement_entropy()] if psi.L > 1 else [],
            # a symmetric state that --conserve auto ran densely keeps its sector (the evolution conserves it)
            "sector": dict(psi.sector if psi.symmetric else st.psi0.sector) if st.conserve else {},
            "conserve": res.conserve,
            "conserve_reason": res.conserve_reason,
        },
    }


def _fixed(x: float, width: int, digits: int) -> str:
    """``x`` in fixed point, without the sign of a value that rounds to zero (no "-0.000")."""
    text = f"{x:.{digits}f}"
    if text.startswith("-") and float(text) == 0.0:
        text = text[1:]
    return f"{text:>{width}}"


def _steps(n: int) -> str:
    return "step" if n == 1 else f"{n} steps"
