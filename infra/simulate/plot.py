"""Draw a simulation: demand and serving capacity over time, one line per variant, one panel per workload.

matplotlib is optional (``fastscale[plot]``) and imported only when a plot is asked for.
"""

from __future__ import annotations

from pathlib import Path

from fastscale.infra.estimate.plot import PlotUnavailable, _pyplot
from fastscale.infra.simulate.build import WorkloadSimulation

__all__ = ["PlotUnavailable", "plot_simulations"]

#: Variant colours (matplotlib's colour-blind-safe tab10 order), fixed so every plot reads the same.
_COLOURS = {
    "configured": "#1f77b4",
    "metrics": "#ff7f0e",
    "data_cache": "#2ca02c",
    "image_cache": "#d62728",
    "warm_minimum": "#9467bd",
    "capacity_fallback": "#8c564b",
}


def plot_simulations(sims: list[WorkloadSimulation], path: str | Path) -> Path:
    """Write a PNG: per workload, the demand (grey, filled) and each variant's capacity as a step line."""
    plt = _pyplot()
    if not sims:
        raise ValueError("nothing to plot: no workload was simulated")
    fig, axes = plt.subplots(len(sims), 1, figsize=(11, 1.5 + 3.2 * len(sims)), squeeze=False)
    for ax, sim in zip(axes[:, 0], sims):
        minutes = [t / 60 for t in range(sim.traffic.seconds)]
        ax.fill_between(minutes, sim.traffic.demand, step="post", color="#bbbbbb", alpha=0.6, label="demand")
        for v in sim.variants:
            if v.result is None:
                continue
            width = 2.2 if v.name == "configured" else 1.2
            ax.step(minutes, v.result.capacity, where="post", color=_COLOURS[v.name], linewidth=width, label=v.label)
        w = sim.workload
        ax.set_title(f"{w.name} ({w.instance_type}): {sim.traffic.description}", fontsize=9, loc="left")
        ax.set_ylabel("concurrent requests", fontsize=8)
        ax.set_xlabel("minutes", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper right", frameon=False)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
