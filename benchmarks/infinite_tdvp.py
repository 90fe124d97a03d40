"""The XX chain's Neel quench by infinite TDVP (and iTEBD beside it) against the exact
free-fermion result ``<Sz_j(t)> = (-1)^j J_0(2t) / 2``, up to ``t = 3``.

``itdvp`` grows the bond by iTEBD steps until it reaches ``max_bond`` and evolves by one-site
TDVP on the uniform MPS from there; the table gives the largest error over the time grid, the
time from which TDVP ran, and seconds (one BLAS thread). No peer is timed: TeNPy 1.1's TDVP is
finite only ("Only finite TDVP is implemented").

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 taskset -c 0 python benchmarks/infinite_tdvp.py
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.special
from threadpoolctl import threadpool_limits

import tensor4all as t4a


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-bond", type=int, nargs="+", default=[16, 24, 32])
    parser.add_argument("--t-final", type=float, default=3.0)
    parser.add_argument("--dt", type=float, default=0.05)
    parser.add_argument("--cutoff", type=float, default=1e-24)
    args = parser.parse_args()
    H = t4a.infinite_model("xx", cell=2)
    psi = t4a.iMPS.product_state([0, 1])
    print(f"XX chain, Neel quench, t_final {args.t_final}, dt {args.dt}, cutoff {args.cutoff}")
    print(f"{'method':8} {'bond':>5} {'max |err|':>11} {'err(t_final)':>13} {'TDVP from t':>12} {'seconds':>8}")
    with threadpool_limits(1):
        for D in args.max_bond:
            for name in ("itdvp", "itebd"):
                fn = t4a.itdvp if name == "itdvp" else t4a.itebd
                t0 = time.perf_counter()
                res = fn(H, psi, args.t_final, args.dt, max_bond=D, cutoff=args.cutoff, observables={"Sz": "Sz"})
                seconds = time.perf_counter() - t0
                exact = 0.5 * scipy.special.j0(2 * res.times)
                sz = res.expectations["Sz"]
                err = np.maximum(np.abs(sz[:, 0] - exact), np.abs(sz[:, 1] + exact))
                start = "-"
                if name == "itdvp" and (res.substeps > 0).any():
                    start = f"{res.times[int(np.argmax(res.substeps > 0))]:.2f}"
                print(f"{name:8} {D:5d} {err.max():11.2e} {err[-1]:13.2e} {start:>12} {seconds:8.1f}")


if __name__ == "__main__":
    main()
