"""Draw a recommendation: monthly cost against TTFT p99, every candidate within ``--max-rejected`` as a point, the
Pareto front as a line, the choice, the SLO, and the current config marked (with the share it rejects when that
is over the limit, so a baseline that is cheap because it turns requests away is not read as a bargain).

matplotlib is optional (``fastscale[plot]``) and imported only when a plot is asked for.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from fastscale.infra.analysis.estimate.plot import PlotUnavailable, _pyplot, save_png
from fastscale.infra.analysis.recommend.front import Recommendation

__all__ = ["PlotUnavailable", "front_figure", "plot_front"]

BASELINE_LABEL = "current config"


def front_figure(rec: Recommendation) -> Any:
    """The matplotlib figure of ``rec``, for a caller to save or inspect."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 5.5))
    eligible = [o for o in rec.outcomes if o.error is None and o.ttft_p99_s is not None and math.isfinite(o.cost_usd)
                and o.rejected_fraction <= rec.max_rejected]
    if eligible:
        ax.scatter([o.ttft_p99_s for o in eligible], [rec.monthly(o) for o in eligible], s=12, color="#bbbbbb",
                   label=f"candidates within {rec.max_rejected:.2%} rejected ({len(eligible)})", zorder=1)
    if rec.pareto:
        ax.plot([o.ttft_p99_s for o in rec.pareto], [rec.monthly(o) for o in rec.pareto], "-o", color="#1f77b4",
                markersize=5, linewidth=1.6, label="Pareto front", zorder=2)
    if rec.choice is not None:
        ax.scatter([rec.choice.ttft_p99_s], [rec.monthly(rec.choice)], marker="*", s=260, color="#2ca02c",
                   edgecolors="black", linewidths=0.6, label="chosen", zorder=4)
    ax.axvline(rec.ttft_p99_slo, color="#d62728", linestyle="--", linewidth=1.2,
               label=f"SLO: TTFT p99 <= {rec.ttft_p99_slo:g} s", zorder=0)
    b = rec.baseline.outcome if rec.baseline is not None else None
    if b is not None and b.error is None and b.ttft_p99_s is not None and math.isfinite(b.cost_usd):
        label = BASELINE_LABEL + (f" (rejects {b.rejected_fraction:.2%})" if b.rejected_fraction > rec.max_rejected else "")
        ax.scatter([b.ttft_p99_s], [rec.monthly(b)], marker="X", s=160, color="#ff7f0e", edgecolors="black",
                   linewidths=0.6, label=label, zorder=5)
        ax.annotate(label, (b.ttft_p99_s, rec.monthly(b)), textcoords="offset points", xytext=(8, 8), fontsize=8)
    elif rec.baseline is not None:
        ax.plot([], [], " ", label=f"{BASELINE_LABEL}: serves no request or cannot be simulated")
    search = rec.search
    where = search.endpoint + (f" / {search.component}" if search.component else "")
    ax.set_title(f"{where}: {search.trace.description}", fontsize=9, loc="left")
    ax.set_xlabel("TTFT p99 (s)", fontsize=8)
    ax.set_ylabel(f"cost per month (USD, {rec.monthly_factor:,.1f} x the trace's)", fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
    fig.tight_layout()
    return fig


def plot_front(rec: Recommendation, path: str | Path) -> Path:
    """Write the PNG of :func:`front_figure` to ``path`` (through the one writer)."""
    return save_png(front_figure(rec), path, dpi=110, bbox_inches="tight")
