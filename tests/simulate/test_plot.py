"""`simulate --plot`: coinciding variants stay tellable apart, and the legend never covers the data.

Checked on matplotlib's own figure objects (line styles, labels, the legend's and the axes' extents), not
on pixels."""

from __future__ import annotations

import pytest

from fastscale.infra.analysis import simulate as sim_mod
from fastscale.infra.config import load_config
from fastscale.infra.model.resolved import resolve
from tests.conftest import ROOT

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def sims():
    params = sim_mod.load_params()
    # Its default spike leaves the configured endpoint, the 1-minute-metrics one and the no-data-cache one
    # identical: the three lines that used to draw over each other.
    config = load_config(ROOT / "examples" / "scale-to-zero-short-tail.yaml")
    selection = sim_mod.select_workloads(resolve(config), None, None, cold_start=None)
    service = params.default_service_time_seconds.value
    return [sim_mod.simulate_workload(w, sim_mod.default_traffic(w, params, service, window=None))
            for w in selection.workloads]


@pytest.fixture(scope="module")
def figure(sims):
    import matplotlib.pyplot as plt

    from fastscale.infra.analysis.simulate.plot import plot_figure

    fig = plot_figure(sims)
    fig.canvas.draw()
    yield fig
    plt.close(fig)


def _capacity_lines(ax):
    return [line for line in ax.get_lines() if line.get_label() != "demand"]


def test_every_variant_has_its_own_line_style_and_marker(figure, sims):
    lines = _capacity_lines(figure.axes[0])
    assert len(lines) == sum(v.result is not None for v in sims[0].variants) >= 2
    styles = [(line.get_linestyle(), line.get_marker()) for line in lines]
    assert len(set(styles)) == len(styles)
    # markers of coinciding lines sit at different places along them
    assert len({line.get_markevery() for line in lines}) == len(lines)


def test_identical_variants_say_which_one_they_match(figure, sims):
    lines = _capacity_lines(figure.axes[0])
    series = [list(line.get_ydata()) for line in lines]
    twins = [i for i, s in enumerate(series) if s in series[:i]]
    assert len(twins) == 2, "this spike has three variants that coincide (the case the legend must explain)"
    for i in twins:
        first = series.index(series[i])
        assert lines[i].get_label().endswith(f"(same as {lines[first].get_label()})")
    for i, line in enumerate(lines):
        if i not in twins:
            assert "same as" not in line.get_label()


def test_the_legend_is_outside_the_data_area(figure):
    renderer = figure.canvas.get_renderer()
    for ax in figure.axes:
        legend = ax.get_legend()
        assert legend is not None
        box, data = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
        assert box.x0 >= data.x1, (box, data)  # entirely to the right of the panel
        assert not box.overlaps(data)


def test_the_written_file_keeps_the_legend(tmp_path, sims):
    from matplotlib.image import imread

    from fastscale.infra.analysis.simulate.plot import plot_simulations

    out = plot_simulations(sims, tmp_path / "sim.png")
    height, width = imread(out).shape[:2]
    # 12 inches at 110 dpi is 1320 pixels before cropping; the tight box keeps the legend beside the panel
    assert width > 1000 and height > 200
