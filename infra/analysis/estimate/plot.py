"""Draw estimated scale-out timelines as horizontal stacked bars, one row per scenario.

matplotlib is an optional dependency (``fastscale[plot]``), imported only here and only when a plot is
asked for. Image pull and model download run at the same time, so they share a row as two half-height bars.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from fastscale.infra.analysis.estimate.timeline import PHASE_LABELS, WorkloadEstimate
from fastscale.infra.base import writer

#: Phases drawn in the lower / upper half of a row because they overlap in time.
_PARALLEL = {"image_pull": 0, "model_download": 1}

#: One colour per phase (matplotlib's colour-blind-safe tab10 order), fixed so every plot reads the same.
_COLOURS = dict(
    zip(PHASE_LABELS, ("#1f77b4", "#ff7f0e", "#7f7f7f", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"), strict=True)
)


class PlotUnavailable(RuntimeError):
    """matplotlib is not installed."""


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise PlotUnavailable("plotting needs matplotlib: pip install 'fastscale[plot]'") from None
    matplotlib.use("Agg")  # files only: never needs a display
    import matplotlib.pyplot as plt

    return plt


def save_png(fig: Any, path: str | Path, **options: Any) -> Path:
    """Render ``fig`` as PNG in memory, then write it through the one writer (``infra.base.writer``): never
    through a symbolic link, replaced atomically. matplotlib would open the path itself and follow links.
    The figure is closed afterwards, written or not."""
    try:
        png = io.BytesIO()
        fig.savefig(png, format="png", **options)
        return writer.write_file(path, png.getvalue(), what="plot file")
    finally:
        _pyplot().close(fig)


def plot_timelines(estimates: list[WorkloadEstimate], path: str | Path) -> Path:
    """Write a PNG with one panel per workload that has scenarios; returns the path written."""
    plt = _pyplot()
    drawn = [e for e in estimates if e.scenarios]
    if not drawn:
        raise ValueError("nothing to plot: no workload could be estimated")
    rows = sum(len(e.scenarios) for e in drawn)
    fig, axes = plt.subplots(
        len(drawn), 1, figsize=(11, 1.2 + 0.55 * rows + 0.6 * len(drawn)), squeeze=False,
        gridspec_kw={"height_ratios": [len(e.scenarios) for e in drawn]},
    )
    seen: set[str] = set()
    for ax, est in zip(axes[:, 0], drawn):
        labels = []
        for y, sc in enumerate(reversed(est.scenarios)):
            labels.append(sc.label)
            for p in sc.phases:
                if p.seconds <= 0:
                    continue
                half = _PARALLEL.get(p.name)
                height, offset = (0.4, -0.2) if half is None else (0.2, -0.2 + 0.2 * half)
                ax.barh(
                    y + offset + height / 2, p.seconds, left=p.start, height=height, color=_COLOURS[p.name],
                    label=None if p.name in seen else p.label, edgecolor="white", linewidth=0.5,
                )
                seen.add(p.name)
            ax.text(sc.total_seconds, y, f" {sc.total_seconds:.0f} s", va="center", fontsize=8)
        ax.set_yticks(range(len(labels)), labels, fontsize=8)
        title = est.endpoint + (f" / {est.component}" if est.component else "") + f" ({est.instance_type})"
        ax.set_title(title, fontsize=9, loc="left")
        ax.set_xlabel("seconds after the traffic spike", fontsize=8)
        ax.margins(x=0.08)
        ax.grid(axis="x", alpha=0.3)
    legend: dict[str, Any] = {}
    for ax in axes[:, 0]:
        legend.update(zip(*reversed(ax.get_legend_handles_labels())))
    order = [label for label in PHASE_LABELS.values() if label in legend]  # timeline order, not drawing order
    fig.legend([legend[label] for label in order], order, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return save_png(fig, path, dpi=120)
