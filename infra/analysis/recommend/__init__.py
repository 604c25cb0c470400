"""The cheapest settings that meet a latency SLO on a request trace: a grid search over the request-level model.

For one workload (a single-model endpoint or one inference component) the search varies what decides cost and
latency on SageMaker: the instance type (memory-fitting types of the same accelerator kind from the catalog,
or a given list), accelerators per copy (and so copies per instance), the minimum (scale to zero where AWS
allows it: inference components), the maximum, the target as a fraction of a copy's capacity, the scale-in and
scale-out cooldowns and the metric resolution. Every candidate is a whole config: the settings are applied to
the file's data and the result is loaded and simulated exactly as ``fastscale simulate --requests`` would,
so what the search found is what the written config does.

One step per module, in the order ``fastscale recommend`` runs them:

- :mod:`~fastscale.infra.analysis.recommend.search`: the candidates, the settings each writes (``build_search``);
- :mod:`~fastscale.infra.analysis.recommend.evaluation`: every candidate simulated (``evaluate_all``), with the
  two shortcuts that change no result: a shared run for candidates that differ only in a minimum that never
  bound, and a run stopped once it failed more requests than ``--max-rejected`` allows;
- :mod:`~fastscale.infra.analysis.recommend.baseline`: the current config on the same trace (``evaluate_baseline``),
  costs per month, and why the choice wins;
- :mod:`~fastscale.infra.analysis.recommend.front`: the Pareto front of cost against TTFT p99 and the choice
  under the SLO (``recommend``);
- :mod:`~fastscale.infra.analysis.recommend.settings`: a candidate's settings put into the config, into its data
  to be simulated and into its text to be written (``apply_to_text``);
- :mod:`~fastscale.infra.analysis.recommend.window`: a long trace searched on a sample of its hours
  (``sample_window``), and the chosen settings replayed on the whole trace to measure that shortcut's error
  (``on_whole_trace``);
- :mod:`~fastscale.infra.analysis.recommend.plot`: the front drawn, the current config marked (``plot_front``).

This package exports those entry points.
"""

from fastscale.infra.analysis.recommend.baseline import evaluate_baseline
from fastscale.infra.analysis.recommend.evaluation import evaluate_all
from fastscale.infra.analysis.recommend.front import recommend
from fastscale.infra.analysis.recommend.search import RecommendInputError, build_search
from fastscale.infra.analysis.recommend.settings import apply_to_text
from fastscale.infra.analysis.recommend.window import on_whole_trace, sample_window

__all__ = ["RecommendInputError", "apply_to_text", "build_search", "evaluate_all", "evaluate_baseline", "on_whole_trace",
           "recommend", "sample_window"]
