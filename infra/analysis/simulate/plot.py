"""Draw a simulation: demand and serving capacity over time, one line per variant, one panel per workload.

Variants often coincide (a layer that changes nothing for this spike gives the same capacity as the
configured endpoint), and a line drawn exactly over another disappears. So every variant has its own
line style and marker as well as its colour, its markers sit at its own offset along the line, and a
variant identical to one drawn before it says so in the legend ("same as ..."). The legend sits to the
right of each panel, outside the data, and the file is cropped to what is drawn.

matplotlib is optional (``fastscale[plot]``) and imported only when a plot is asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastscale.infra.analysis.estimate.plot import PlotUnavailable, _pyplot, save_png
from fastscale.infra.analysis.simulate.build import WorkloadSimulation

__all__ = ["PlotUnavailable", "plot_figure", "plot_simulations"]

#: Per variant, fixed so every plot reads the same: colour (matplotlib's colour-blind-safe tab10 order),
#: line style and marker, so coinciding lines stay tellable apart in colour and in black and white.
_STYLES = {
    "configured": ("#1f77b4", "-", "o"),
    "metrics": ("#ff7f0e", "--", "s"),
    "data_cache": ("#2ca02c", ":", "^"),
    "image_cache": ("#d62728", "-.", "D"),
    "warm_minimum": ("#9467bd", (0, (5, 1)), "v"),
    "capacity_fallback": ("#8c564b", (0, (3, 1, 1, 1, 1, 1)), "P"),
}
#: Markers per line: enough to tell the lines apart, few enough not to hide the steps.
_MARKERS_PER_LINE = 8


def plot_figure(sims: list[WorkloadSimulation]) -> Any:
    """The matplotlib figure of ``sims`` (one panel per workload), for a caller to save or inspect."""
    plt = _pyplot()
    if not sims:
        raise ValueError("nothing to plot: no workload was simulated")
    fig, axes = plt.subplots(len(sims), 1, figsize=(12, 1.5 + 3.2 * len(sims)), squeeze=False)
    for ax, sim in zip(axes[:, 0], sims):
        minutes = [t / 60 for t in range(sim.traffic.seconds)]
        ax.fill_between(minutes, sim.traffic.demand, step="post", color="#bbbbbb", alpha=0.6, label="demand")
        drawn = [v for v in sim.variants if v.result is not None]
        every = max(1, len(minutes) // _MARKERS_PER_LINE)
        seen: list[tuple[list[float], str]] = []  # capacity series already drawn, with their label
        for i, v in enumerate(drawn):
            assert v.result is not None
            capacity = list(v.result.capacity)
            twin = next((label for series, label in seen if series == capacity), None)
            seen.append((capacity, v.label))
            colour, style, marker = _STYLES[v.name]
            ax.step(
                minutes, capacity, where="post", color=colour, linestyle=style,
                linewidth=2.2 if v.name == "configured" else 1.3,
                marker=marker, markersize=4, markevery=(i * every // max(1, len(drawn)), every),
                label=f"{v.label} (same as {twin})" if twin else v.label,
            )
        w = sim.workload
        ax.set_title(f"{w.name} ({w.instance_type}): {sim.traffic.description}", fontsize=9, loc="left")
        ax.set_ylabel("concurrent requests", fontsize=8)
        ax.set_xlabel("minutes", fontsize=8)
        ax.grid(alpha=0.3)
        # Outside the data, to the right of the panel; savefig's tight bounding box keeps it in the file.
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    fig.tight_layout()
    return fig


def plot_simulations(sims: list[WorkloadSimulation], path: str | Path) -> Path:
    """Write a PNG: per workload, the demand (grey, filled) and each variant's capacity as a step line."""
    return save_png(plot_figure(sims), path, dpi=110, bbox_inches="tight")
