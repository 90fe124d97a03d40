"""The figure of ``tensor4all evolve --plot`` (matplotlib, an optional dependency)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .evolve_states import staggered

__all__ = ["write_evolve_plot"]


def write_evolve_plot(
    path: str, res: Any, observe: Sequence[str], rows: Sequence[dict[str, Any]], L: int, title: str
) -> None:
    """Three panels: the observables' site and staggered averages against time (the exact
    staggered magnetization dashed where known); the entanglement entropy at the middle bond
    with the largest bond dimension; the first observable over sites and time (or the energy
    when nothing is observed)."""
    import matplotlib  # (optional dependency)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    times = np.asarray(res.times, dtype=float)
    obs = {k: np.asarray(v) for k, v in res.observables.items()}
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(14, 3.8), constrained_layout=True)
    for k, op in enumerate(observe):
        ax1.plot(times, obs[op].mean(axis=-1), "-", color=f"C{2 * k}", label=f"<{op}> mean")
        ax1.plot(times, staggered(obs[op]), "-", color=f"C{2 * k + 1}", label=f"<{op}> staggered")
    if rows and "exact" in rows[0]:
        ax1.plot(times, [r["exact"] for r in rows], "k--", lw=1, label="exact (free fermions)")
    if not observe:
        ax1.plot(times, obs["energy"], "-", label="energy <H>")
    ax1.set_xlabel("time")
    ax1.set_title("observables")
    ax1.grid(True, alpha=0.3)
    ax1.legend(fontsize="small")
    ax2.plot(times, obs["entropy"], ".-", color="C1", label="S at the middle bond")
    ax2.set_xlabel("time")
    ax2.set_ylabel("S (natural log)")
    ax2.set_title("entanglement growth")
    ax2.grid(True, alpha=0.3)
    ax4 = ax2.twinx()
    ax4.step(times, obs["max_bond"], where="post", color="gray", alpha=0.6)
    ax4.set_ylabel("max bond dimension", color="gray")
    if observe:
        op = observe[0]
        # one band per output time, between the midpoints to its neighbours (the last interval
        # may be shorter: the final time is always an output time)
        mids = 0.5 * (times[1:] + times[:-1])
        first = times[0] - (mids[0] - times[0] if len(mids) else 0.5)
        last = times[-1] + (times[-1] - mids[-1] if len(mids) else 0.5)
        edges = np.concatenate([[first], mids, [last]])
        vmax = float(np.max(np.abs(obs[op]))) or 1.0
        im = ax3.pcolormesh(np.arange(L + 1) - 0.5, edges, obs[op], cmap="RdBu_r", vmin=-vmax, vmax=vmax)
        ax3.invert_yaxis()
        fig.colorbar(im, ax=ax3, label=f"<{op}_i>")
        ax3.set_xlabel("site i")
        ax3.set_ylabel("time")
        ax3.set_title(f"<{op}_i(t)>")
    else:
        ax3.plot(times, obs["norm"], ".-")
        ax3.set_xlabel("time")
        ax3.set_title("norm")
    fig.suptitle(f"evolve  {title}")
    fig.savefig(path, dpi=100)
    plt.close(fig)
