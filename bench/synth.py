"""Benchmark: time and peak memory of synthesizing fastscale stacks.

Each measurement runs one synthesis in a fresh Python process, from interpreter start to written files,
and samples the resident memory of that process *and all its descendants* (the jsii node runtime does
most of the work) every 20 ms from /proc. The peak of the summed RSS is reported, plus
`ru_maxrss` of the largest single process (from getrusage) as a cross-check. CPU time (user + system of
the process and of node, which it waits for) is reported beside the wall time: on a shared, loaded machine
it moves much less than the wall time. Cases: the examples and generated stacks of 20 and 100 endpoints;
a least-squares line through them gives each side's fixed cost and cost per resource.

    .venv/bin/python bench/synth.py                  # fastscale's thin resource layer
    .venv/bin/python bench/synth.py --with-prebuilt  # side by side with cdktf-cdktf-provider-aws

`--with-prebuilt` builds the same stack (every aws_* resource, with the same attributes, read back from
fastscale's own output) through the prebuilt `cdktf-cdktf-provider-aws` binding, installed on demand into
.bench/venv so it never touches the project environment. awscc resources have no cdktf binding and are
built the same way in both.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH_VENV = ROOT / ".bench" / "venv"
PREBUILT = "cdktf-cdktf-provider-aws==21.22.1"
#: Same engine versions as the project, so only the provider layer differs.
ENGINE_PINS = ("cdktf==0.21.0", "constructs==10.8.1", "jsii==1.142.0")
PAGE = os.sysconf("SC_PAGE_SIZE")
ENV = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "18,20"}
#: The generated stacks beside the examples: endpoints per stack.
MANY = (20, 100)


# --------------------------------------------------------------------------------------------- configs


def many_endpoints(count: int) -> dict:
    """`count` endpoints (even): half single-model, half with two inference components each."""
    image = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
    endpoints = []
    for i in range(count // 2):
        endpoints.append({
            "name": f"single-{i}",
            "instance_type": "ml.g6.2xlarge",
            "instances": {"initial": 1, "min": 1, "max": 4},
            "model": {"image": image, "model_data": f"s3://bench-models/single-{i}/", "model_size_gb": 16},
        })
        endpoints.append({
            "name": f"shared-{i}",
            "instance_type": "ml.g6.12xlarge",
            "instances": {"initial": 1, "min": 0, "max": 3},
            "inference_components": [
                {"name": f"ic-{i}-{j}", "image": image, "model_data": f"s3://bench-models/ic-{i}-{j}/",
                 "resources": {"accelerators": 1, "memory_mb": 32768}, "copies": {"initial": 1, "min": 0, "max": 4}}
                for j in range(2)
            ],
        })
    return {"project": "bench", "region": "us-east-1", "tags": {"team": "bench"}, "endpoints": endpoints}


def cases(workdir: Path) -> dict[str, Path]:
    import yaml

    out = {p.stem: p for p in sorted((ROOT / "examples").glob("*.yaml"))}
    for count in MANY:
        path = workdir / f"{count}-endpoints.yaml"
        path.write_text(yaml.safe_dump(many_endpoints(count), sort_keys=False))
        out[f"{count} endpoints"] = path
    return out


# --------------------------------------------------------------------------------------------- children


def child_fastscale(config: str, outdir: str) -> None:
    sys.path.insert(0, str(ROOT))
    from fastscale.infra.config import load_config
    from fastscale.infra.model.resolved import resolve
    from fastscale.stacks.app import synthesize

    synthesize(resolve(load_config(config)), outdir)


def child_engine(config: str, outdir: str) -> None:
    """The same stack through the engine (`cdktf synth`'s path: `build_app`, then the engine's `App.synth`)."""
    sys.path.insert(0, str(ROOT))
    from fastscale.infra.config import load_config
    from fastscale.infra.model.resolved import resolve
    from fastscale.stacks.app import build_app

    app, _ = build_app(resolve(load_config(config)), Path(outdir).resolve(), Path.cwd())
    app.synth()


def child_prebuilt(reference: str, outdir: str) -> None:
    """Rebuild the reference stack JSON with the prebuilt aws binding (generic classes for awscc)."""
    import collections.abc
    import importlib
    import typing

    from cdktf import App, LocalBackend, TerraformProvider, TerraformResource, TerraformStack
    from cdktf_cdktf_provider_aws.provider import AwsProvider

    doc = json.loads(Path(reference).read_text())
    app = App(outdir=outdir, skip_validation=True)
    stack = TerraformStack(app, doc["//"]["metadata"]["stackName"])
    AwsProvider(stack, "aws", region=doc["provider"]["aws"][0]["region"])

    class Raw(TerraformResource):
        def __init__(self, scope, id_, rtype, attrs):
            lifecycle = attrs.pop("lifecycle", None)
            super().__init__(scope, id_, terraform_resource_type=rtype, lifecycle=lifecycle)
            self._attrs = attrs

        def _synthesize_attributes(self):
            return self._attrs

    def classes(hint):
        """(struct classes, element hints of sequences) named anywhere in a type hint."""
        found, elements = [], []
        origin = typing.get_origin(hint)
        if origin is typing.Union:
            for arg in typing.get_args(hint):
                f, e = classes(arg)
                found += f
                elements += e
        elif origin in (list, collections.abc.Sequence):
            elements.append(typing.get_args(hint)[0])
        elif isinstance(hint, type) and hasattr(hint, "__init__") and hint.__module__.startswith("cdktf_cdktf_provider_aws"):
            found.append(hint)
        return found, elements

    def build(hint, value):
        """jsii converts only top-level dicts to structs: build nested structs from the type hints."""
        found, elements = classes(hint)
        if isinstance(value, dict) and found:
            cls = found[0]
            hints = typing.get_type_hints(cls.__init__)
            return cls(**{k: build(hints[k], v) for k, v in value.items()})
        if isinstance(value, list) and elements:
            return [build(elements[0], v) for v in value]
        return value

    TerraformProvider(stack, "awscc", terraform_resource_type="awscc", terraform_provider_source="hashicorp/awscc")
    LocalBackend(stack, path=doc["terraform"]["backend"]["local"]["path"])
    for rtype, items in doc["resource"].items():
        for rid, body in items.items():
            attrs = {k: v for k, v in body.items() if k not in ("//", "depends_on")}
            if rtype.startswith("awscc_"):
                Raw(stack, rid, rtype, attrs)
                continue
            module = importlib.import_module(f"cdktf_cdktf_provider_aws.{rtype.removeprefix('aws_')}")
            cls = getattr(module, "".join(p.capitalize() for p in rtype.removeprefix("aws_").split("_")))
            hints = typing.get_type_hints(cls.__init__)
            cls(stack, rid, **{k: build(hints[k], v) for k, v in attrs.items()})
    app.synth()


# --------------------------------------------------------------------------------------------- measuring


def _tree_rss(root: int) -> int:
    """Summed RSS in bytes of `root` and all its descendants (one /proc scan)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])  # ppid (field 4 of stat; 2 after the command name)
        rss[pid] = int(fields[21]) * PAGE  # rss in pages (field 24)
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    return sum(rss.get(pid, 0) for pid in tree)


@dataclass
class Sample:
    seconds: float
    cpu_seconds: float  # user + system time of the process and the children it waited for (node)
    peak_tree_mb: float
    max_process_mb: float


def measure(argv: list[str]) -> Sample:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, cpu_before = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss(proc.pid))
        time.sleep(0.02)
    seconds = time.perf_counter() - start
    stderr = proc.stderr.read().decode()
    if proc.returncode != 0:
        raise SystemExit(f"benchmark child failed ({' '.join(argv)}):\n{stderr}")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    after, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime - cpu_before
    # ru_maxrss of children is the largest single descendant so far (KiB); it only tells something new
    # when it grows, so keep the larger of it and the sampled tree's biggest moment as a floor.
    return Sample(seconds, cpu, peak / 2**20, max(after, before) / 1024)


def ensure_bench_venv() -> Path:
    python = BENCH_VENV / "bin" / "python"
    probe = [str(python), "-c", "import cdktf_cdktf_provider_aws"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"creating {BENCH_VENV} with {PREBUILT} (about 0.5 GB, once)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(BENCH_VENV)], check=True)
    subprocess.run([str(BENCH_VENV / "bin" / "pip"), "install", "--quiet", *ENGINE_PINS, PREBUILT], check=True)
    return python


# --------------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--with-prebuilt", action="store_true", help="also measure the prebuilt aws binding")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the median is reported")
    parser.add_argument("--with-engine", action="store_true",
                        help="also measure the engine's path (build_app + App.synth, what `cdktf synth` runs)")
    parser.add_argument("--baseline", type=Path, metavar="CHECKOUT",
                        help="also measure `fastscale synth` of another checkout (its .venv), interleaved run by run")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--child", nargs=3, metavar=("KIND", "INPUT", "OUTDIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, source, outdir = args.child
        {"fastscale": child_fastscale, "engine": child_engine, "prebuilt": child_prebuilt}[kind](source, outdir)
        return

    sides = {"fastscale": [sys.executable, __file__, "--child", "fastscale"]}
    if args.with_engine:
        sides["engine"] = [sys.executable, __file__, "--child", "engine"]
    if args.baseline:
        base = args.baseline.resolve()
        sides["baseline"] = [str(base / ".venv" / "bin" / "python"), str(base / "bench" / "synth.py"), "--child",
                             "fastscale"]

    prebuilt_python = ensure_bench_venv() if args.with_prebuilt else None
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, config in cases(work).items():
            runs: dict[str, list[Sample]] = {side: [] for side in sides}
            for i in range(args.repeat):  # the sides take turns, so a change of the machine's load hits all
                for side, argv in sides.items():
                    out = work / f"{name}-{i}-{side}".replace(" ", "-")
                    runs[side].append(measure([*argv, str(config), str(out)]))
            first = next((work / f"{name}-0-fastscale".replace(" ", "-")).glob("stacks/*/cdk.tf.json"))
            doc = json.loads(first.read_text())
            for side in sides:
                other = next((work / f"{name}-0-{side}".replace(" ", "-")).glob("stacks/*/cdk.tf.json"))
                if other.read_bytes() != first.read_bytes():
                    raise SystemExit(f"{name}: the {side} side wrote other bytes than fastscale synth ({other})")
            row = {"case": name, "resources": sum(len(v) for v in doc.get("resource", {}).values()),
                   **{side: _median(side_runs) for side, side_runs in runs.items()}}
            if prebuilt_python:
                stack_file = first
                reference = work / f"{name}-reference.json".replace(" ", "-")
                reference.write_bytes(stack_file.read_bytes())
                pre = [measure([str(prebuilt_python), __file__, "--child", "prebuilt", str(reference),
                                str(work / f"{name}-pre-{i}".replace(" ", "-"))]) for i in range(args.repeat)]
                row["prebuilt"] = _median(pre)
                _check_same_resources(stack_file, next((work / f"{name}-pre-0".replace(" ", "-")).glob("stacks/*/cdk.tf.json")))
            results.append(row)
    load = os.getloadavg()
    fits = {f"{side} {measure}": _fit(results, side, measure) for side in ("fastscale", "engine", "baseline", "prebuilt")
            if side in results[0] for measure in ("seconds", "cpu_seconds")}
    if args.json:
        print(json.dumps({"load_average": load, "cpus": os.cpu_count(), "fits": fits, "cases": results}, indent=2))
    else:
        print(_table(results))
        print()
        for side, (fixed, per) in fits.items():
            print(f"{side}: {fixed:.2f} s fixed + {per * 1000:.2f} ms per resource (least squares over the cases)")
        print(f"load average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} CPUs")


def _median(runs: list[Sample]) -> dict[str, float]:
    return {
        "seconds": round(statistics.median(r.seconds for r in runs), 2),
        "cpu_seconds": round(statistics.median(r.cpu_seconds for r in runs), 2),
        "peak_tree_mb": round(statistics.median(r.peak_tree_mb for r in runs)),
    }


def _fit(results: list[dict], side: str, measure: str = "seconds") -> tuple[float, float]:
    """Fixed cost (s) and cost per resource (s) of `side`: a least-squares line through the cases."""
    xs = [r["resources"] for r in results]
    ys = [r[side][measure] for r in results]
    slope, intercept = statistics.linear_regression(xs, ys)
    return round(intercept, 3), round(slope, 6)


def _check_same_resources(ours: Path, theirs: Path) -> None:
    """The comparison is only fair if both built the same resources with the same attributes."""
    a, b = json.loads(ours.read_text())["resource"], json.loads(theirs.read_text())["resource"]
    def strip(doc):
        return {t: {i: {k: v for k, v in body.items() if k not in ("//", "depends_on")}
                                 for i, body in items.items()} for t, items in doc.items()}
    if strip(a) != strip(b):
        raise SystemExit(f"prebuilt stack differs from fastscale's ({theirs})")


def _table(results: list[dict]) -> str:
    prebuilt = "prebuilt" in results[0]
    extra = [side for side in ("engine", "baseline") if side in results[0]]
    head = "| case | resources | fastscale time | fastscale CPU | fastscale peak RSS |"
    rule = "|---|---:|---:|---:|---:|"
    for side in extra:
        head += f" {side} time | {side} CPU | {side} peak RSS |"
        rule += "---:|---:|---:|"
    if prebuilt:
        head += " prebuilt time | prebuilt CPU | prebuilt peak RSS | faster | less CPU | less memory |"
        rule += "---:|---:|---:|---:|---:|---:|"
    lines = [head, rule]
    for r in results:
        f = r["fastscale"]
        line = f"| {r['case']} | {r['resources']} | {f['seconds']:.2f} s | {f['cpu_seconds']:.2f} s | {f['peak_tree_mb']} MB |"
        for side in extra:
            e = r[side]
            line += f" {e['seconds']:.2f} s | {e['cpu_seconds']:.2f} s | {e['peak_tree_mb']} MB |"
        if prebuilt:
            p = r["prebuilt"]
            line += (f" {p['seconds']:.2f} s | {p['cpu_seconds']:.2f} s | {p['peak_tree_mb']} MB |"
                     f" {p['seconds'] / f['seconds']:.1f}x | {p['cpu_seconds'] / f['cpu_seconds']:.1f}x |"
                     f" {p['peak_tree_mb'] / f['peak_tree_mb']:.1f}x |")
        lines.append(line)
    return "\n".join(lines)


if __name__ == "__main__":
    main()
