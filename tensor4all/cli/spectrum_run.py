"""The run of a checked ``tensor4all spectrum`` command line (:class:`SpectrumRun`): the ground state
(the ``evolve`` command's :func:`~tensor4all.cli.evolve_states.build_states`), ``G(x, t)`` and
``S(q, omega)`` (or ``S`` by Chebyshev moments), the table per momentum, the summary, and the outputs:
the JSON record (:data:`SCHEMA`), the ``.npz`` arrays and the heat map."""

from __future__ import annotations

import argparse
import datetime
import math
import sys
import time
from typing import Any

import numpy as np
from tqdm import tqdm

from tenferro.files import atomic_write

from .common import PROG, BarReport, _version, run_reported, write_json_record, write_outputs
from .evolve_states import States, build_states
from .models import ROTATED
from ..spectra.chebyshev import spectral_function_chebyshev
from ..spectra.correlation import dynamical_correlation
from ..spectra.records import DynamicalCorrelation, SpectralFunction, jsonable
from ..spectra.transform import spatial_transform, spectral_function, window_resolution
from ..tools.errors import Tensor4allError

__all__ = ["SpectrumRun", "SCHEMA", "crop", "write_spectrum_plot"]

SCHEMA = "tensor4all.spectrum/1"
#: the automatic frequency grid ends where max_q |S| has fallen below this fraction of its maximum
CROP_BELOW = 1e-3


def crop(S: SpectralFunction) -> SpectralFunction:
    """``S`` on the frequencies up to where ``max_q |S|`` last exceeds :data:`CROP_BELOW` of its maximum,
    plus two resolutions (the automatic ``--omega-max``)."""
    top = np.max(np.abs(S.values), axis=0)
    if not top.size or not np.max(top) > 0.0:
        return S
    last = float(S.omega[np.nonzero(top >= CROP_BELOW * np.max(top))[0][-1]]) + 2.0 * S.resolution
    keep = S.omega <= last
    S.omega, S.values = S.omega[keep], S.values[:, keep]
    return S


class SpectrumRun(BarReport):
    def __init__(self, parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]):
        super().__init__(args)
        self.parser, self.args, self.argv = parser, args, argv
        self.G: DynamicalCorrelation | None = None
        self.rows: list[dict[str, Any]] = []

    def on_step(self, rec: Any) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"t={rec.time:.4g} chi={rec.max_bond}", refresh=False)
            self.bar.update(1)

    # ---- the computation ---------------------------------------------------------------------------
    def grid(self, resolution: float) -> np.ndarray:
        """The frequency grid: 0 .. --omega-max in --n-omega steps, or (automatic, cropped later) from
        two resolutions below 0 (the broadened tail of the weight near 0, so the sum rule holds over
        the grid) to the Nyquist frequency, a quarter of the resolution apart."""
        a = self.args
        if a.omega_max is None:
            nyquist = math.pi / a.dt
            return np.arange(max(-2.0 * resolution, -nyquist), nyquist, resolution / 4.0)
        n = a.n_omega if a.n_omega is not None else max(2, math.ceil(a.omega_max / (resolution / 4.0)) + 1)
        return np.linspace(0.0, a.omega_max, n)

    def compute(self, st: States, A: str, B: str) -> SpectralFunction:
        a = self.args
        if a.method == "chebyshev":
            n = a.moments if a.moments is not None else 200
            omega = None if a.omega_max is None else np.linspace(0.0, a.omega_max, a.n_omega or 400)
            S = spectral_function_chebyshev(
                st.H, st.psi0, A, B, n_moments=n, omega=omega, max_bond=a.max_bond, cutoff=a.cutoff
            )
            if a.omega_max is None:  # from two resolutions below 0 to the top of the spectrum
                keep = S.omega >= -2.0 * S.resolution
                S.omega, S.values = S.omega[keep], S.values[:, keep]
            return S
        if self.show_bar:
            steps = round(a.t_final / a.dt)
            self.bar = tqdm(total=steps, desc=a.method, unit="step", leave=False, file=sys.stderr, mininterval=0.1)
        self.G = dynamical_correlation(
            st.H,
            st.psi0,
            A,
            B,
            t_final=a.t_final,
            dt=a.dt,
            method=a.method,
            order=(4 if a.order is None else a.order) if a.method == "tebd" else None,
            max_bond=a.max_bond,
            cutoff=a.cutoff,
            threads=a.threads,
            callback=self.on_step,
        )
        self.close_bar()
        resolution = window_resolution(a.window, a.t_final * (a.extend or 1.0))
        return spectral_function(self.G, omega=self.grid(resolution), window=a.window, extend=a.extend)

    def static(self, S: SpectralFunction) -> np.ndarray:
        """``Re sum_x e^{-iq(x-c)} G(x, 0)`` (the Chebyshev run: from the moment mu_0), what the weight equals."""
        if self.G is not None:
            g0, c = self.G.values[:1], self.G.center
        else:
            g0, c = np.asarray(S.details["moments"])[:1], self.args.L // 2
        return spatial_transform(g0, c, S.q)[0].real

    # ---- the command -------------------------------------------------------------------------------
    def run(self) -> int:
        a = self.args
        t0 = time.perf_counter()
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        try:
            st = build_states(a)
        except Tensor4allError as e:
            self.parser.error(str(e))
        t_ground = time.perf_counter() - t0
        rotated = st.conserve == "parity"  # the tfim runs as -J sum XX - g sum Z: operators through ROTATED
        B = ROTATED[a.op][0] if rotated else a.op
        A = ROTATED[a.op_adjoint][0] if rotated else a.op_adjoint
        self.header(st)
        t1 = time.perf_counter()
        S = run_reported(lambda: self.compute(st, A, B), self.parser.error, self.close_bar)
        t_spectrum = time.perf_counter() - t1
        if a.omega_max is None:
            S = crop(S)
        self.table(S)
        self.summary(S, t_ground, t_spectrum)
        return write_outputs(
            a,
            (
                ("json", lambda path: self.write_json(path, st, S, started, t0, t_ground, t_spectrum)),
                ("save", lambda path: self.write_npz(path, S)),
                ("plot", lambda path: write_spectrum_plot(path, S, a, self.title(st))),
            ),
            self.print,
            PROG,
        )

    def title(self, st: States) -> str:
        return f"{self.args.model} L={self.args.L} " + " ".join(f"{k}={v:g}" for k, v in st.before.items())

    def header(self, st: States) -> None:
        a, g = self.args, st.ground
        self.print(f"SPECTRUM  {self.title(st)}  (MPO bond dimension {max(st.H.bond_dims, default=1)})")
        self.print(
            f"          ground state: DMRG E0 = {g.energy:.12f}, {len(g.history)} sweeps, "
            f"{'converged' if g.converged else 'not converged'}, max bond {max(g.state.bond_dims, default=1)}, "
            f"variance {g.variance:.2e}"
            + (f", sector {', '.join(f'{k} = {v:g}' for k, v in st.psi0.sector.items())}" if st.conserve else "")
        )
        self.print(f"          G(x, t) = <0| {a.op_adjoint}_x(t) {a.op}_c(0) |0>, c = {a.L // 2}")
        if a.method == "chebyshev":
            self.print(
                f"          Chebyshev: {a.moments or 200} moments, Jackson kernel, max bond {a.max_bond}, cutoff {a.cutoff:g}"
            )
        else:
            how = "two-site TDVP" if a.method == "tdvp" else f"TEBD order {4 if a.order is None else a.order}"
            ext = f", linear prediction to t = {a.t_final * a.extend:g}" if a.extend else ""
            res = window_resolution(a.window, a.t_final * (a.extend or 1.0))
            self.print(
                f"          {how}, t_final {a.t_final:g}, dt {a.dt:g} ({round(a.t_final / a.dt)} steps), max bond {a.max_bond}, "
                f"cutoff {a.cutoff:g}; window {a.window}{ext}, resolution {res:.4g} (FWHM)"
            )

    def table(self, S: SpectralFunction) -> None:
        static = self.static(S)
        weight = S.weight()
        if not self.args.quiet:
            self.print(f"{'q/pi':>8}  {'omega_peak':>10}  {'S_peak':>10}  {'weight':>10}  {'S(q)':>10}")
        for k, q in enumerate(S.q):
            j = int(np.argmax(S.values[k]))
            row = {
                "q": float(q),
                "omega_peak": float(S.omega[j]),
                "peak": float(S.values[k, j]),
                "weight": float(weight[k]),
                "static": float(static[k]),
            }
            self.rows.append(row)
            if not self.args.quiet:
                self.print(
                    f"{q / math.pi:>8.4f}  {row['omega_peak']:>10.4f}  {row['peak']:>10.5f}  {row['weight']:>10.5f}  "
                    f"{row['static']:>10.5f}"
                )

    def summary(self, S: SpectralFunction, t_ground: float, t_spectrum: float) -> None:
        worst = max(abs(r["weight"] - r["static"]) for r in self.rows)
        self.print(
            f"sum rule    max_q |int S d omega - S(q)| = {worst:.2e} over omega in [{S.omega[0]:g}, {S.omega[-1]:.4g}] "
            f"({len(S.omega)} frequencies, {len(S.q)} momenta)"
        )
        if self.G is not None and self.G.history:
            h = self.G.history
            self.print(
                f"evolution   max bond {max(r.max_bond for r in h)}, max truncation error "
                f"{max(r.max_truncation_error for r in h):.2e}, ground-state variance {self.G.ground_variance:.2e}"
            )
        self.print(f"time        {t_ground:.2f} s ground state, {t_spectrum:.2f} s {self.args.method}")

    # ---- outputs -----------------------------------------------------------------------------------
    def write_json(
        self, path: str, st: States, S: SpectralFunction, started: str, t0: float, tg: float, ts: float
    ) -> None:
        a, g = self.args, st.ground
        G = self.G
        doc = {
            "schema": SCHEMA,
            "program": {"name": f"{PROG} spectrum", "version": _version(), "argv": self.argv, "started": started},
            "parameters": {
                "model": a.model,
                "L": a.L,
                **st.before,
                "op": a.op,
                "op_adjoint": a.op_adjoint,
                "center": a.L // 2,
                "method": a.method,
                "order": (4 if a.order is None else a.order) if a.method == "tebd" else None,
                "moments": (a.moments or 200) if a.method == "chebyshev" else None,
                "t_final": a.t_final,
                "dt": a.dt,
                "window": a.window,
                "extend": a.extend,
                "omega_max": a.omega_max,
                "n_omega": a.n_omega,
                "max_bond": a.max_bond,
                "cutoff": a.cutoff,
                "conserve": st.conserve,
                "sector": dict(st.psi0.sector) if st.conserve else None,
                "seed": a.seed,
                "threads": a.threads,
            },
            "ground_state": {
                "energy": float(g.energy),
                "sweeps": len(g.history),
                "converged": bool(g.converged),
                "variance": float(g.variance),
            },
            "q": [float(x) for x in S.q],
            "omega": [float(x) for x in S.omega],
            "S": jsonable(S.values),
            "resolution": float(S.resolution),
            "rows": self.rows,
            "correlation": None if G is None else {k: v for k, v in G.as_dict().items() if k != "ground_energy"},
            "chebyshev": None
            if G is not None
            else {"bounds": S.details["bounds"], "n_moments": S.details["n_moments"]},
            "timing": {"ground_seconds": tg, "spectrum_seconds": ts, "total_seconds": time.perf_counter() - t0},
        }
        write_json_record(path, doc)

    def write_npz(self, path: str, S: SpectralFunction) -> None:
        arrays: dict[str, Any] = {"q": S.q, "omega": S.omega, "S": S.values}
        if self.G is not None:
            arrays.update(times=self.G.times, G=self.G.values, center=np.asarray(self.G.center))
        with atomic_write(path) as tmp, open(tmp, "wb") as fh:
            np.savez(fh, **arrays)


def write_spectrum_plot(path: str, S: SpectralFunction, args: argparse.Namespace, title: str) -> None:
    """A heat map of ``S(q, omega)`` over ``q / pi`` and ``omega``; the Heisenberg chain's two-spinon
    continuum ((pi/2) J |sin q|, pi J |sin(q/2)|) and the XX chain's particle-hole one (J |sin q|,
    2 J |sin(q/2)|) dashed where they apply."""
    import matplotlib  # (optional dependency)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    q, w, s = S.q / math.pi, S.omega, np.real(S.values)
    fig, ax = plt.subplots(figsize=(6.4, 4.8), constrained_layout=True)
    qe = _edges(q)
    we = _edges(w)
    vmax = float(np.max(s)) or 1.0
    im = ax.pcolormesh(qe, we, s.T, cmap="magma", vmin=min(0.0, float(np.min(s))), vmax=vmax, shading="flat")
    fig.colorbar(im, ax=ax, label=f"S(q, omega)  [{args.op_adjoint}, {args.op}]")
    J = args.J
    qq = np.linspace(0.0, float(np.max(q)), 200)
    no_field = not args.h
    if args.model in ("heisenberg", "xxz") and args.op == "Sz" and no_field and (args.Jz is None or args.Jz == J):
        ax.plot(qq, 0.5 * math.pi * abs(J) * np.abs(np.sin(math.pi * qq)), "w--", lw=1, label="(pi/2) J |sin q|")
        ax.plot(qq, math.pi * abs(J) * np.abs(np.sin(0.5 * math.pi * qq)), "w:", lw=1, label="pi J |sin(q/2)|")
        ax.legend(fontsize="small", loc="upper left")
    elif args.model == "xx" and args.op == "Sz" and no_field:
        ax.plot(qq, abs(J) * np.abs(np.sin(math.pi * qq)), "w--", lw=1, label="J |sin q|")
        ax.plot(qq, 2 * abs(J) * np.abs(np.sin(0.5 * math.pi * qq)), "w:", lw=1, label="2 J |sin(q/2)|")
        ax.legend(fontsize="small", loc="upper left")
    ax.set_xlabel("q / pi")
    ax.set_ylabel("omega")
    ax.set_ylim(we[0], we[-1])
    ax.set_title(f"spectrum  {title}  ({S.method}, resolution {S.resolution:.3g})", fontsize="small")
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _edges(x: np.ndarray) -> np.ndarray:
    """Cell edges around the points ``x`` (midpoints; the ends a half step out)."""
    if len(x) == 1:
        return np.array([x[0] - 0.5, x[0] + 0.5])
    mids = 0.5 * (x[1:] + x[:-1])
    return np.concatenate([[x[0] - (mids[0] - x[0])], mids, [x[-1] + (x[-1] - mids[-1])]])
