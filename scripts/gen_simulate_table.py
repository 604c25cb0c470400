"""Write bench/simulate_anchors.md: the traffic simulation against AWS's published scaling figures, and the
layer table of every example config under its default spike.

    python scripts/gen_simulate_table.py          # rewrite the table
    python scripts/gen_simulate_table.py --check  # exit 1 when the committed table is stale

The published figures are written down here as comparison data; the simulation never reads them. Every
simulated figure is read off a simulated run (its per-second series), not computed from the parameters.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fastscale.infra.analysis.simulate import (  # noqa: E402
    FALLBACK_VARIANT,
    LAYER_VARIANTS,
    Result,
    default_traffic,
    select_workloads,
    simulate,
    simulate_workload,
    spike,
)
from fastscale.infra.config import load_config, parse_config  # noqa: E402
from scripts.generated_file import write_or_check  # noqa: E402

OUT = ROOT / "bench" / "simulate_anchors.md"
LMI = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
FAST_POST = "AWS ML Blog, *Amazon SageMaker inference launches faster auto scaling for generative AI models*"
CACHING_POST = "AWS ML Blog, *Introducing container caching in Amazon SageMaker AI for faster model scaling*"
ZERO_POST = "AWS ML Blog, *Unlock cost savings with the new scale down to zero feature in SageMaker Inference*"


@dataclass(frozen=True)
class Anchor:
    group: str
    what: str
    published: float
    simulated: float
    unit: str = "s"


def _first(series: tuple[int, ...], above: int, start: int = 0) -> int:
    return next(t for t in range(start, len(series)) if series[t] > above)


def _single_model(metric: str):
    config = parse_config({
        "project": "bench", "region": "us-east-1",
        "endpoints": [{
            "name": "qwen3", "instance_type": "ml.g6.2xlarge", "instances": {"initial": 1, "min": 1, "max": 4},
            "model": {"image": LMI, "image_size_gb": 17.7, "model_size_gb": 16, "serving": {"max_concurrency": 5},
                      "autoscaling": {"metric": metric, "target_concurrency": 4}},
        }],
    })
    return select_workloads(config).workloads[0]


def _from_zero():
    config = parse_config({
        "project": "bench", "region": "us-east-1",
        "endpoints": [{
            "name": "llama3", "instance_type": "ml.g5.12xlarge", "instances": {"initial": 1, "min": 0, "max": 1},
            "inference_components": [{
                "name": "llama3-8b", "image": LMI, "image_size_gb": 17.7, "model_size_gb": 16,
                "resources": {"accelerators": 4, "memory_mb": 1024}, "serving": {"max_concurrency": 5},
                "copies": {"initial": 1, "min": 0, "max": 1},
                "autoscaling": {"target_concurrency": 4, "scale_from_zero": {"period": 60, "evaluation_periods": 1}},
            }],
        }],
    })
    return select_workloads(config).workloads[0]


def _run(workload, text: str, **layers) -> Result:
    from dataclasses import replace

    traffic = spike(text, duration=1800, default_window=1800, service_time=10)
    spec = workload.spec(replace(workload.layers, **layers) if layers else None)
    return simulate(spec, traffic.demand)


def anchors() -> list[Anchor]:
    out: list[Anchor] = []
    # 1. Detection: a step from one instance's worth to twice that, at a period boundary.
    fast = _run(_single_model("high_resolution"), "4:8@60").summary.detection_seconds
    slow = _run(_single_model("invocations"), "4:8@60").summary.detection_seconds
    assert fast is not None and slow is not None
    out += [
        Anchor("detection (Qwen3-8B, ml.g6.2xlarge, 4 -> 8 concurrent at 60 s)", "first scale-out alarm, 10-second metrics",
               30, fast),
        Anchor("", "first scale-out alarm, 60-second metrics", 180, slow),
        Anchor("", "60-second / 10-second", 6.0, round(slow / fast, 1), "x"),
    ]
    # 2. A new instance, with and without container image caching: timed from the instance's launch.
    for cached, published in ((True, 258), (False, 525)):
        r = _run(_single_model("high_resolution"), "4:8@60", image_cache=cached)
        launched = _first(r.instances, 1)
        serving = _first(r.serving, 1)
        out.append(Anchor(
            "new instance (Qwen3-8B, ml.g6.2xlarge, image 17.7 GB, model 16 GB)" if cached else "",
            f"launch to serving, {'with' if cached else 'without'} container image caching", published, serving - launched,
        ))
    # 3. Scale from zero: the first request fails at 60 s; AWS's breakdown of the time to the first copy serving.
    r = _run(_from_zero(), "0:1@60")
    first_fail = r.summary.short_at
    requested = _first(r.instances, 0)
    in_service = _first(r.instances_serving, 0)
    serving = _first(r.serving, 0)
    alarm = requested - r.summary.short_at if first_fail is not None else 0
    out += [
        Anchor("scale from zero (Llama 3 8B, ml.g5.12xlarge, 4 GPUs, alarm 60 s x 1)", "first request to a copy serving",
               5.03 * 60, serving - first_fail),
        Anchor("", "alarm trigger (to the instance request)", 60, alarm),
        Anchor("", "instance provisioning", 1.75 * 60, in_service - requested),
        Anchor("", "adding the model copy", 2.28 * 60, serving - in_service),
    ]
    return out


def _contention() -> list[str]:
    """The new-instance start with the pull and the download sharing the link (the model) or one after the other."""
    from fastscale.infra.analysis.estimate import estimate_config

    config = parse_config({
        "project": "bench", "region": "us-east-1",
        "endpoints": [{"name": "q", "instance_type": "ml.g6.2xlarge",
                       "model": {"image": LMI, "image_size_gb": 17.7, "model_size_gb": 16}}],
    })
    est = estimate_config(config)[0]
    pulled, cached = est.scenario("instance_no_image_cache"), est.scenario("instance_image_cache")
    parallel = pulled.seconds_from("instance_provisioning")
    pull, shared = pulled.phase("image_pull").seconds, pulled.phase("model_download").seconds
    alone = cached.phase("model_download").seconds
    summed = parallel - max(pull, shared) + pull + alone
    return [
        "| transfers | start without container caching (s) | published (s) | error |",
        "|---|---:|---:|---:|",
        f"| image pull and model download at once, sharing the link (the model) | {parallel:.0f} | 525 | {_pct(parallel, 525)} |",
        f"| image pull, then model download alone (times added) | {summed:.0f} | 525 | {_pct(summed, 525)} |",
    ]


def _pct(simulated: float, published: float) -> str:
    if published == 0:
        return "-"
    return f"{(simulated - published) / published * 100:+.1f}%"


def _fmt(x: float, unit: str) -> str:
    return f"{x:.1f}" if unit == "x" or x != int(x) else f"{x:.0f}"


def render() -> str:
    lines = [
        "# Traffic simulation against published figures",
        "",
        "Generated by `scripts/gen_simulate_table.py` from `infra/analysis/simulate_params.json`, `infra/analysis/estimate_params.json`",
        "and the instance catalog; do not edit by hand. A test fails when this file is stale.",
        "",
        "## AWS's published figures",
        "",
        "Each simulated figure is read off a one-second simulation of the stated spike (series of copies, instances",
        "and capacity), not computed from the parameters. Spikes start on a metric period boundary, as AWS's runs",
        "are reported; a spike in the middle of a period is detected up to one period later. Detection includes the",
        "estimate model's 5 s publishing lag, an assumption AWS publishes no figure for, which is why 10-second",
        "detection reads 35 s rather than 30 s and the ratio 5.3x rather than 6x.",
        "",
        "| case | figure | published | simulated | error |",
        "|---|---|---:|---:|---:|",
    ]
    for a in anchors():
        unit = "" if a.unit == "s" else f" {a.unit}"
        lines.append(f"| {a.group} | {a.what} | {_fmt(a.published, a.unit)}{unit} | {_fmt(a.simulated, a.unit)}{unit} "
                     f"| {_pct(a.simulated, a.published)} |")
    lines += [
        "",
        f"Sources: {FAST_POST}; {CACHING_POST}; {ZERO_POST}.",
        "",
        "## Image pull and model download: contention or sum",
        "",
        "On a new instance without container caching the image pull (333 s) and the model download run at the same",
        "time; the download took 168 s sharing the link and 77 s alone. Only a shared link gives that 168 s download;",
        "adding the two transfers would leave it at 77 s. The estimate model (and so the simulation) uses the shared",
        "link. Both starts below miss 525 s by a few percent because the image extraction rate is fitted on four",
        "published runs, this one among them, not on this run alone (`bench/estimate_table.md`).",
        "",
        *_contention(),
        "",
        "## Example configs under their default spike",
        "",
        "Idle, then a spike to 75% of what the maximum capacity serves at 60 s for 20 minutes, in a one-hour window.",
        "Seconds from the spike until capacity caught up with it; each layer flipped from its configured state",
        "(*what-if* turns on a layer the config leaves off; - : does not apply). capacity_fallback: as configured,",
        "with the first instance type out of capacity and new instances from the next pool (`capacity.fallback`).",
        "",
        "| file | endpoint / component | peak | as configured | " + " | ".join([*LAYER_VARIANTS, FALLBACK_VARIANT]) + " |",
        "|---|---|---:|---:|" + "---:|" * (len(LAYER_VARIANTS) + 1),
    ]
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        for w in select_workloads(load_config(path)).workloads:
            sim = simulate_workload(w, default_traffic(w))
            cells = []
            for v in sim.variants:
                if v.result is None:
                    cells.append("-")
                    continue
                s = v.result.summary
                text = "never" if s.served_after_seconds is None else str(s.served_after_seconds)
                cells.append(text + (" (what-if)" if v.turns_off is False else ""))
            lines.append(f"| `examples/{path.name}` | {w.name} | {sim.traffic.peak:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed table differs")
    args = parser.parse_args(argv)
    return write_or_check(OUT, render(), ROOT, "python scripts/gen_simulate_table.py", args.check)


if __name__ == "__main__":
    sys.exit(main())
