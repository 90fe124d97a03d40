"""The figure of ``tensor4all dmrg --plot`` (matplotlib, an optional dependency)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["write_plot"]


def write_plot(path: str, res: Any, ref: Any, bonds: Sequence[int], entropy: Sequence[float], title: str) -> None:
    """Two panels: ``|E - E_best|`` per sweep on a log scale (with the largest truncation error
    per sweep) and the entanglement entropy across the bonds (with the bond dimensions)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    sweeps = np.array([r.sweep for r in res.history])
    energies = np.array([r.energy for r in res.history])
    if ref is not None and ref.exact:
        e_best, label = ref.energy, "|E - E_exact|"
    else:
        e_best = float(min(energies.min(), ref.energy if ref is not None else np.inf))
        label = "|E - E_best|" if ref is None else "|E - E_best| (best of DMRG and reference)"
    diff = np.abs(energies - e_best)
    trunc = np.array([r.max_truncation_error for r in res.history])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    shown = diff > 0
    if shown.any():
        ax1.semilogy(sweeps[shown], diff[shown], "o-", label=label)
    if (trunc > 0).any():
        ax1.semilogy(sweeps[trunc > 0], trunc[trunc > 0], "s--", color="gray", alpha=0.7, label="max truncation error")
    if not shown.any() and not (trunc > 0).any():
        ax1.text(0.5, 0.5, "no positive errors to show", ha="center", va="center", transform=ax1.transAxes)
    ax1.set_xlabel("sweep")
    ax1.set_ylabel("energy error")
    ax1.set_title("convergence")
    ax1.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax1.grid(True, which="major", alpha=0.3)
    if ax1.get_legend_handles_labels()[0]:
        ax1.legend(fontsize="small")
    x = np.arange(len(entropy))
    ax2.plot(x, entropy, ".-", color="C1", label="entanglement entropy S")
    ax2.set_xlabel("bond b (between sites b and b+1)")
    ax2.set_ylabel("S (natural log)")
    ax2.set_title("entanglement profile")
    ax2.grid(True, alpha=0.3)
    ax3 = ax2.twinx()
    ax3.step(x, bonds, where="mid", color="gray", alpha=0.5, label="bond dimension")
    ax3.set_ylabel("bond dimension", color="gray")
    fig.suptitle(f"DMRG  {title}   E = {res.history[-1].energy:.12f}")
    fig.savefig(path, dpi=100)
    plt.close(fig)
