#!/usr/bin/env python3
"""Time and memory of `fastscale validate` on every hostile file: each must finish under 2 s and 200 MB.

Every file of tests/hostile/files/ (alias bomb, deep nesting, duplicate keys, tabs, .nan/.inf, huge
integers, 1e300 sizes, literal tokens, state paths outside the project, remote endpoint URLs and metadata or
other cloud-internal ones in every spelling, an escape sequence in a key, a name ending in a line break,
misspelt regions in every partition, values AWS would refuse at deploy (file:// model data, a shell string
as image, wildcard role ARNs, aws: tag keys, a queue as SNS topic, /opt/ml/model without model data),
overrides that move a resource to another region or give a shadow variant another team's model,
secrets in tags and in connection strings, ...) plus generated ones too large or too strange to commit (a
file just over the size limit, a file of the largest accepted size made of many small keys, a FIFO,
/dev/zero, /proc/self/environ, Terraform template payloads planted in every string field of the schema by
tests/template_fields.py) is run through the
installed console script, once as text and once with --json, each in a fresh process: the exit code must
be 2 and the output must hold no traceback. The budget applies to reading, loading and validating the
file (timed inside a fresh process, imports excluded) and to the peak resident memory of the CLI process
(from wait4()). The whole CLI's wall time, Python start-up and imports included, is shown beside it.

Last, `status` runs against a local server that accepts connections and never answers, with a 4 s call
limit: exit 1, within the limit plus start-up, saying on stderr what it waits for.

Usage: python bench/hostile.py [--json]      (exit 1 when a budget or check fails)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FILES = ROOT / "tests" / "hostile" / "files"
TIME_BUDGET_S = 2.0
MEMORY_BUDGET_MB = 200
#: Python start-up and imports allowed on top of the call limit in the never-answering-server run.
SILENT_STARTUP_S = 6.0


def fastscale() -> str:
    script = Path(sys.executable).with_name("fastscale")
    return str(script) if script.exists() else (shutil.which("fastscale") or "fastscale")


def generated(directory: Path) -> list[Path]:
    from fastscale.infra.config.safe_yaml import MAX_BYTES

    over = directory / "generated_over_size_limit.yaml"
    over.write_text("project: demo\n" + "#" * (MAX_BYTES * 8))
    # As many tiny keys as the size limit allows, all unknown to the schema: the worst case for the
    # parser, the line index and the error list together.
    many = directory / "generated_many_keys.yaml"
    head = "project: demo\nregion: us-east-1\nendpoints: []\n"
    lines, size, i = [head], len(head), 0
    while size < MAX_BYTES - 32:
        line = f"k{i}: {i}\n"
        lines.append(line)
        size += len(line)
        i += 1
    many.write_text("".join(lines))
    # As many endpoints as fit, all with the same name and a literal token: thousands of rule findings.
    endpoints = directory / "generated_many_endpoints.yaml"
    entry = ("  - name: chat\n    instance_type: ml.g6.2xlarge\n    model:\n"
             "      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0\n"
             "      environment: {HF_TOKEN: hf_FAKEfakeFAKEfakeFAKEfakeFAKEfake12}\n")
    count = (MAX_BYTES - 100) // len(entry)
    endpoints.write_text("project: demo\nregion: us-east-1\nendpoints:\n" + entry * count)
    # Not files at all: reading a FIFO used to block every command for ever; a device never ends.
    fifo = directory / "generated_fifo.yaml"
    os.mkfifo(fifo)
    # The kernel's files: /proc/self/environ holds the job's credentials, and must be refused unread.
    return [over, many, endpoints, fifo, Path("/dev/zero"), Path("/proc/self/environ"), *template_payloads(directory)]


def silent_server_run() -> dict[str, object]:
    """`status` against a server that accepts connections and never answers, with a 4 s call limit: it must
    end with exit 1 within the limit plus start-up, say on stderr what it waits for, and keep --json intact."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "fastscale.yaml"
        config.write_text("project: demo\nregion: us-east-1\nendpoints:\n  - name: chat\n    instance_type: "
                          "ml.g6.2xlarge\n    model:\n      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0\n")
        env = {**os.environ, "FASTSCALE_AWS_CALL_TIMEOUT": "4", "AWS_ACCESS_KEY_ID": "testing",
               "AWS_SECRET_ACCESS_KEY": "testing"}
        start = time.perf_counter()
        done = subprocess.run([fastscale(), "status", str(config), "--endpoint-url", url, "--json"], env=env,
                              capture_output=True, text=True, timeout=120, cwd=tmp)
        elapsed = time.perf_counter() - start
    server.close()
    try:
        error = json.loads(done.stdout).get("error", "")
    except ValueError:
        error = ""
    ok = (done.returncode == 1 and elapsed < 4 + SILENT_STARTUP_S and "no answer from" in error
          and "waiting for sagemaker DescribeEndpoint" in done.stderr)
    return {"file": "status vs. a never-answering server", "load_validate_s": 0.0, "cli_s": round(elapsed, 3),
            "peak_rss_mb": 0.0, "exit": done.returncode, "ok": ok}


def template_payloads(directory: Path) -> list[Path]:
    """One file per Terraform template payload (`${file("x")}`, a `%{}` directive, the engine's token), planted in
    every string field of each base config of tests/template_fields.py at once: names and other checked
    fields are refused, the rest get FS073 warnings."""
    import yaml

    from tests.template_fields import BASE_CONFIGS, PAYLOADS, plant, string_fields

    files = []
    for kind, payload in PAYLOADS.items():
        for base, config in BASE_CONFIGS.items():
            data = json.loads(json.dumps(config))
            for field in string_fields():
                plant(data, field, payload)
            path = directory / f"generated_template_{kind}_{base}.yaml"
            path.write_text(yaml.safe_dump(data, sort_keys=False))
            files.append(path)
    return files


def load_and_validate_once(path: str) -> None:
    """Child mode: time reading + loading + every rule in this process, print it with the peak RSS as JSON."""
    import resource

    start = time.perf_counter()
    from fastscale.infra.config import ConfigError, load_config
    from fastscale.infra.rules import run_rules

    imported = time.perf_counter()
    try:
        findings = len(run_rules(load_config(path)))
    except ConfigError as exc:
        findings = len(exc.problems)
    done = time.perf_counter()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"import_s": imported - start, "load_validate_s": done - imported, "peak_mb": peak_mb,
                      "findings": findings}))


def measure(cmd: list[str]) -> tuple[float, float, int, str]:
    """(seconds, peak RSS in MB, exit code, combined output) of one fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss / 1024, proc.returncode, out.decode("utf-8", "replace")


def main() -> int:
    if sys.argv[1:2] == ["--one"]:
        load_and_validate_once(sys.argv[2])
        return 0
    as_json = "--json" in sys.argv[1:]
    rows, failures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        paths = sorted(FILES.glob("*.yaml")) + generated(Path(tmp))
        for path in paths:
            inner = json.loads(subprocess.run([sys.executable, __file__, "--one", str(path)], capture_output=True,
                                              text=True, check=True, cwd=ROOT).stdout)
            for mode in ([], ["--json"]):
                seconds, mb, code, out = measure([fastscale(), "validate", *mode, str(path)])
                name = path.name + (" --json" if mode else "")
                ok = (inner["load_validate_s"] < TIME_BUDGET_S and max(mb, inner["peak_mb"]) < MEMORY_BUDGET_MB
                      and code == 2 and "Traceback" not in out)
                if mode:
                    try:
                        ok = ok and bool(json.loads(out)["files"][0]["findings"])
                    except (ValueError, KeyError):
                        ok = False
                rows.append({"file": name, "load_validate_s": round(inner["load_validate_s"], 3),
                             "cli_s": round(seconds, 3), "peak_rss_mb": round(max(mb, inner["peak_mb"]), 1),
                             "exit": code, "ok": bool(ok)})
                if not ok:
                    failures.append(name)
    silent = silent_server_run()
    rows.append(silent)
    if not silent["ok"]:
        failures.append(str(silent["file"]))
    if as_json:
        print(json.dumps({"budget": {"seconds": TIME_BUDGET_S, "mb": MEMORY_BUDGET_MB}, "runs": rows}, indent=2))
    else:
        print(f"{'file':<46} {'load+rules':>10} {'whole CLI':>10} {'peak RSS':>10} exit")
        for r in rows:
            mark = "" if r["ok"] else "  <-- FAILED"
            print(f"{r['file']:<46} {r['load_validate_s']:>9.3f}s {r['cli_s']:>9.2f}s {r['peak_rss_mb']:>7.1f} MB "
                  f"{r['exit']:>4}{mark}")
        worst_t = max(r["load_validate_s"] for r in rows)
        worst_m = max(r["peak_rss_mb"] for r in rows)
        print(f"\n{len(rows)} runs; slowest load+rules {worst_t:.2f} s (whole CLI up to "
              f"{max(r['cli_s'] for r in rows):.2f} s, Python start-up included), largest {worst_m:.1f} MB "
              f"(budget {TIME_BUDGET_S} s, {MEMORY_BUDGET_MB} MB)")
    if failures:
        print("over budget, wrong exit code or traceback: " + ", ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
