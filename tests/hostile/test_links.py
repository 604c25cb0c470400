"""No write through a symbolic link, anywhere: a repository can commit links, and a link where fastscale
writes would send the write outside the project.

Every command-line path that writes is listed in :data:`WRITES` and planted with a link at each position it
has (the file itself, its directory, the output directory, a component in the middle, and what is written
below an output directory: the stack, the lock file, the cut-over tfvars, ``.terraform/``, a project file).
Each run must end with exit code 2, one message naming the link and how to fix it, nothing outside the
project changed (the link's target neither written, nor its time stamps moved, nor a file added next to it)
and nothing in the project either. Each case runs twice: with the command line's early check
(``cli.common.OutputPath``) and without it, when the one writer (``infra.base.writer``) alone must refuse.

Two checks keep the list whole: every path parameter of every command is either listed as written here or
as only read, and no module of cli/, infra/ or stacks/ writes a file other than through the one writer.
"""

from __future__ import annotations

import ast
import datetime as dt
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
import yaml

from fastscale.cli.common import OutputPath, UserPath
from fastscale.cli.main import COMMANDS, cli
from fastscale.infra.base.writer import OutputPathError
from fastscale.infra.model.resolved import resolve
from fastscale.infra.project.stack_snapshot import PROJECT_SNAPSHOT
from tests.aws.factories import REGION, single_model_config
from tests.aws.test_adopt import NAME, sdk_endpoint
from tests.cli.conftest import _moto, aws, quotas, runtime  # noqa: F401  (the CLI tests' moto and runtime)
from tests.cli.support import run
from tests.conftest import ROOT
from tests.traffic_support import per_minute, put_metric, variant_dims

#: Every command-line parameter whose path fastscale writes: (command, parameter).
WRITES = {
    ("synth", "outdir"),
    ("plan", "out"),
    ("deploy", "out"),
    ("destroy", "out"),
    ("schema", "out"),
    ("recommend", "write_path"),
    ("recommend", "write_trace"),
    ("recommend", "plot_path"),
    ("estimate", "plot_path"),
    ("simulate", "plot_path"),
    ("simulate", "write_trace"),
    ("adopt", "out"),
    ("init", "directory"),
}
#: Every other path parameter: only read.
READS = {
    ("validate", "config_files"),
    ("synth", "config_files"),
    ("plan", "config_file"),
    ("deploy", "config_file"),
    ("status", "config_file"),
    ("destroy", "config_file"),
    ("verify-cleanup", "config_file"),
    ("sweep", "config_file"),
    ("estimate", "config_file"),
    ("simulate", "config_file"),
    ("simulate", "requests_path"),
    ("simulate", "profile_path"),
    ("simulate", "trace_path"),
    ("recommend", "config_file"),
    ("recommend", "trace_path"),
    ("recommend", "profile_path"),
    ("measure-scaleout", "config_file"),
    ("explain", "config_file"),
}

TF = ("--terraform-bin", "{bin}")
RECOMMEND = ("recommend", "tail.yaml", "--trace", "requests.csv", "--ttft-p99", "30",
             "--instance-types", "ml.g5.xlarge", "--workers", "1")
ADOPT = ("adopt", NAME, "--region", REGION)
LIVE = ("--from-endpoint", NAME, "--since", "1h")


@dataclass(frozen=True)
class Case:
    writes: tuple[str, str]  # the entry of WRITES it covers
    args: tuple[str, ...]
    link: str  # where the link is planted, relative to the project
    to: str  # what it points at: "dir" (a directory outside), "victim" (a file outside), "dangling"


CASES = {
    "synth: the default output directory": Case(("synth", "outdir"), ("synth", "fastscale.yaml"), "cdktf.out", "dir"),
    "synth: a directory above --out": Case(
        ("synth", "outdir"), ("synth", "fastscale.yaml", "--out", "build/cdktf.out"), "build", "dir"),
    "synth: stacks/": Case(("synth", "outdir"), ("synth", "fastscale.yaml"), "cdktf.out/stacks", "dir"),
    "synth: the stack directory": Case(
        ("synth", "outdir"), ("synth", "fastscale.yaml"), "cdktf.out/stacks/demo", "dir"),
    "synth: the stack file": Case(
        ("synth", "outdir"), ("synth", "fastscale.yaml"), "cdktf.out/stacks/demo/cdk.tf.json", "victim"),
    "synth: the manifest": Case(("synth", "outdir"), ("synth", "fastscale.yaml"), "cdktf.out/manifest.json", "dangling"),
    "synth: one of several stacks": Case(
        ("synth", "outdir"), ("synth", "fastscale.yaml", "second.yaml", "--out", "out"), "out/second", "dir"),
    "plan: the default output directory": Case(("plan", "out"), ("plan", "fastscale.yaml", *TF), "cdktf.out", "dir"),
    "plan: the stack directory": Case(("plan", "out"), ("plan", "fastscale.yaml", *TF), "cdktf.out/stacks/demo", "dir"),
    "plan: the lock file": Case(
        ("plan", "out"), ("plan", "fastscale.yaml", *TF), "cdktf.out/stacks/demo/fastscale.lock", "victim"),
    "plan: the cut-over tfvars": Case(
        ("plan", "out"), ("plan", "fastscale.yaml", *TF),
        "cdktf.out/stacks/demo/fastscale-cutover.auto.tfvars.json", "victim"),
    "plan: .terraform/": Case(("plan", "out"), ("plan", "fastscale.yaml", *TF), "cdktf.out/stacks/demo/.terraform", "dir"),
    "deploy: a directory above --out": Case(
        ("deploy", "out"), ("deploy", "fastscale.yaml", "--auto-approve", "--out", "build/out", *TF), "build", "dir"),
    "deploy: the cut-over tfvars": Case(
        ("deploy", "out"), ("deploy", "fastscale.yaml", "--auto-approve", *TF),
        "cdktf.out/stacks/demo/fastscale-cutover.auto.tfvars.json", "dangling"),
    "destroy: the default output directory": Case(
        ("destroy", "out"), ("destroy", "fastscale.yaml", "--auto-approve", *TF), "cdktf.out", "dir"),
    "destroy: the lock file": Case(
        ("destroy", "out"), ("destroy", "fastscale.yaml", "--auto-approve", *TF),
        "cdktf.out/stacks/demo/fastscale.lock", "dangling"),
    "schema --out: the file": Case(
        ("schema", "out"), ("schema", "--out", "fastscale.schema.json"), "fastscale.schema.json", "victim"),
    "schema --out: its directory": Case(("schema", "out"), ("schema", "--out", "editor/schema.json"), "editor", "dir"),
    "schema --out: a middle component": Case(("schema", "out"), ("schema", "--out", "a/b/schema.json"), "a", "dir"),
    "recommend --write: the file": Case(
        ("recommend", "write_path"), (*RECOMMEND, "--write", "tuned.yaml"), "tuned.yaml", "dangling"),
    "recommend --write --force: the file": Case(
        ("recommend", "write_path"), (*RECOMMEND, "--write", "tuned.yaml", "--force"), "tuned.yaml", "victim"),
    "recommend --write: its directory": Case(
        ("recommend", "write_path"), (*RECOMMEND, "--write", "tuned/tail.yaml", "--force"), "tuned", "dir"),
    "recommend --plot: the file": Case(
        ("recommend", "plot_path"), (*RECOMMEND, "--plot", "front.png"), "front.png", "victim"),
    "recommend --write-trace: the file": Case(
        ("recommend", "write_trace"), ("recommend", "tail.yaml", *LIVE, "--ttft-p99", "30", "--write-trace", "live.csv"),
        "live.csv", "dangling"),
    "simulate --write-trace: the file": Case(
        ("simulate", "write_trace"), ("simulate", "fastscale.yaml", *LIVE, "--write-trace", "live.csv"), "live.csv",
        "victim"),
    "simulate --write-trace: its directory": Case(
        ("simulate", "write_trace"), ("simulate", "fastscale.yaml", *LIVE, "--write-trace", "traces/live.csv"), "traces",
        "dir"),
    "estimate --plot: the file": Case(
        ("estimate", "plot_path"), ("estimate", "fastscale.yaml", "--plot", "timeline.png"), "timeline.png", "victim"),
    "estimate --plot: its directory": Case(
        ("estimate", "plot_path"), ("estimate", "fastscale.yaml", "--plot", "plots/timeline.png"), "plots", "dir"),
    "simulate --plot: the file": Case(
        ("simulate", "plot_path"), ("simulate", "fastscale.yaml", "--plot", "spike.png"), "spike.png", "dangling"),
    "simulate --plot: its directory": Case(
        ("simulate", "plot_path"), ("simulate", "fastscale.yaml", "--plot", "plots/spike.png"), "plots", "dir"),
    "adopt --out: the file": Case(
        ("adopt", "out"), (*ADOPT, "--out", "adopted.yaml", "--force"), "adopted.yaml", "victim"),
    "adopt --out: its directory": Case(
        ("adopt", "out"), (*ADOPT, "--out", "adopted/fastscale.yaml", "--force"), "adopted", "dir"),
    "init: DIR": Case(("init", "directory"), ("init", "newproj", "--project", "p1"), "newproj", "dir"),
    "init: a directory above DIR": Case(
        ("init", "directory"), ("init", "projects/newproj", "--project", "p1"), "projects", "dir"),
    "init: a directory in DIR": Case(
        ("init", "directory"), ("init", "newproj", "--project", "p1"), "newproj/.github", "dir"),
    "init: a file in DIR": Case(
        ("init", "directory"), ("init", "newproj", "--project", "p1", "--force"), "newproj/README.md", "dangling"),
    "init: the snapshot's directory": Case(
        ("init", "directory"), ("init", "newproj", "--project", "p1"),
        f"newproj/{Path(PROJECT_SNAPSHOT).parent}", "dir"),
}


def tree(root: Path, *, times: bool) -> dict[str, tuple]:
    """Everything under ``root`` (``root`` included): kind, mode, content or link target, and with ``times``
    the modification time of each entry (a file added and removed again moves its directory's)."""
    found = {}
    entries = [Path(top, name) for top, dirs, files in os.walk(root) for name in dirs + files]  # links not followed
    for path in [root, *sorted(entries)]:
        info = path.lstat()
        kind = stat.S_IFMT(info.st_mode)
        body = (path.read_bytes() if stat.S_ISREG(info.st_mode)
                else os.readlink(path) if stat.S_ISLNK(info.st_mode) else None)
        found[str(path.relative_to(root))] = (kind, stat.S_IMODE(info.st_mode), body,
                                              info.st_mtime_ns if times else None)
    return found


@pytest.fixture
def repository(tmp_path, monkeypatch, aws):  # noqa: F811  (the fixture imported above)
    """tmp_path/project, the working directory, holding what the commands read; tmp_path/outside, where the
    planted links point; a stand-in terraform that leaves a mark if it is ever run."""
    project = tmp_path / "project"
    project.mkdir()
    config = single_model_config().model_dump(mode="json", exclude_defaults=True)
    (project / "fastscale.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (project / "second.yaml").write_text(yaml.safe_dump({**config, "project": "second"}, sort_keys=False))
    shutil.copy(ROOT / "examples" / "scale-to-zero-short-tail.yaml", project / "tail.yaml")
    rows = [f"{120 + i * 1.5:.1f},{700 + i % 300},{100 + i % 120}" for i in range(300)]
    (project / "requests.csv").write_text("timestamp,input_tokens,output_tokens\n" + "\n".join(rows) + "\n")
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "dir" / "keep.txt").write_text("keep")
    (outside / "victim").write_text("precious")
    os.utime(outside / "victim", ns=(1_000_000_000, 1_000_000_000))
    fake = tmp_path / "bin" / "terraform"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\ntouch {tmp_path / 'terraform-ran'}\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.chdir(project)
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("FASTSCALE_TERRAFORM", raising=False)
    sdk_endpoint(aws)  # what adopt takes over, and --from-endpoint reads
    recent = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0) - dt.timedelta(minutes=5)
    put_metric(aws["cloudwatch"], "Invocations", per_minute([3, 3, 3], recent), variant_dims(NAME))
    component = [{"Name": "InferenceComponentName", "Value": "helpdesk-llama3-8b"}]  # tail.yaml's, in AWS
    put_metric(aws["cloudwatch"], "Invocations", per_minute([3, 3, 3], recent), component)
    return project


def plant(project: Path, case: Case) -> None:
    link = project / case.link
    link.parent.mkdir(parents=True, exist_ok=True)
    outside = project.parent / "outside"
    link.symlink_to({"dir": outside / "dir", "victim": outside / "victim", "dangling": outside / "new-file"}[case.to])


@pytest.mark.parametrize("early", [True, False], ids=["command-line check", "writer alone"])
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_a_link_where_fastscale_writes_is_refused_and_nothing_changes(repository, case, early, monkeypatch):
    if not early:  # the option's own check off: the one writer must refuse by itself
        monkeypatch.setattr(OutputPath, "convert", UserPath.convert)
    plant(repository, case)
    project_before = tree(repository, times=False)
    outside = repository.parent / "outside"
    outside_before = tree(outside, times=True)

    result = run(*[a.replace("{bin}", str(repository.parent / "bin" / "terraform")) for a in case.args])

    output = " ".join((result.output + (result.stderr or "")).split())
    assert result.exit_code == 2, output
    assert f"'{case.link}' is a symbolic link (to " in output, output
    assert "Remove the link" in output and "Traceback" not in output
    assert tree(outside, times=True) == outside_before, "something outside the project changed"
    assert tree(repository, times=False) == project_before, "something was written in the project"
    assert not (repository.parent / "terraform-ran").exists(), "Terraform ran"


@pytest.mark.parametrize("link", ["cdktf.out", "cdktf.out/stacks/demo", "cdktf.out/stacks/demo/cdk.tf.json"])
def test_the_cdktf_app_refuses_a_link_before_the_engine_is_handed_the_directory(repository, link):
    """`cdktf synth` runs main.py, which builds the app with `build_app`; the engine then writes by itself."""
    from fastscale.stacks.app import build_app

    case = Case(("synth", "outdir"), (), link, "victim" if link.endswith(".json") else "dir")
    plant(repository, case)
    outside = repository.parent / "outside"
    before = tree(outside, times=True)
    with pytest.raises(OutputPathError, match=f"'{link}' is a symbolic link"):
        build_app(resolve(single_model_config()), "cdktf.out")
    assert tree(outside, times=True) == before


# ------------------------------------------------------------------------- the list stays whole


def _path_parameters() -> dict[tuple[str, str], click.Parameter]:
    ctx = click.Context(cli)
    found = {}
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None, name
        for param in command.params:
            if isinstance(param.type, click.Path):
                found[(name, param.name or "")] = param
    return found


def test_every_path_a_command_takes_is_listed_as_written_or_read():
    params = _path_parameters()
    written = {key for key, param in params.items() if isinstance(param.type, OutputPath)}
    assert written == WRITES, "a path option that writes must use cli.common.OutputPath and be listed in WRITES"
    assert set(params) - written == READS, "a new path option: list it in READS, or in WRITES (with OutputPath)"
    assert {case.writes for case in CASES.values()} == WRITES, "every path that writes needs its planted links"


#: Calls that write a file or make a directory, by name: through the one writer only.
_WRITING_CALLS = {
    "write_text", "write_bytes", "mkdir", "makedirs", "touch", "symlink_to", "hardlink_to", "mkstemp",
    "NamedTemporaryFile", "TemporaryFile", "SpooledTemporaryFile", "mkfifo", "copyfile", "copy", "copy2",
    "copytree", "move",
}
#: Receivers those names are checked on when the name alone is too common (dict.copy, str.replace).
_MODULE_ONLY = {"copy": "shutil", "copy2": "shutil", "copyfile": "shutil", "copytree": "shutil", "move": "shutil",
                "replace": "os", "rename": "os", "link": "os", "symlink": "os", "makedirs": "os"}
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"}
#: (module, what) that write outside the one writer on purpose, and why.
_ALLOWED = {
    ("cli/output.py", "os.open"): "opens /dev/null to silence a closed pipe; no file is written",
}


def _mode_writes(call: ast.Call, position: int) -> bool:
    mode = call.args[position] if len(call.args) > position else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and bool(set(mode.value) & set("wax+"))


def _bytes_buffers(function: ast.AST) -> set[str]:
    """Names assigned ``io.BytesIO()`` in ``function``: savefig into one of them writes no file."""
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            callee = node.value.func
            if (isinstance(callee, ast.Attribute) and callee.attr == "BytesIO") or (
                    isinstance(callee, ast.Name) and callee.id == "BytesIO"):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _write_kind(node: ast.Call, buffers: set[str]) -> str | None:
    """What ``node`` is when it writes a file other than through the one writer, else None."""
    func = node.func
    receiver = ast.unparse(func.value) if isinstance(func, ast.Attribute) else None
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    what = f"{receiver}.{name}" if receiver else str(name)
    if name == "open" and receiver is None:
        return "open(..., write mode)" if _mode_writes(node, 1) else None
    if name == "open" and receiver == "os":
        flags = {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)} if len(node.args) > 1 else set()
        return what if flags & _WRITE_FLAGS else None
    if name in ("open", "fdopen"):
        return f"{what}(write mode)" if _mode_writes(node, 0 if name == "open" else 1) else None
    if name == "savefig":
        target = node.args[0] if node.args else None
        into_buffer = isinstance(target, ast.Name) and target.id in buffers
        return None if into_buffer else "savefig to a path (render into io.BytesIO, then write it)"
    if name == "dump":
        return what if receiver in ("json", "yaml", "pickle") else None
    if name in _MODULE_ONLY:
        return what if receiver == _MODULE_ONLY[name] else None
    return what if name in _WRITING_CALLS else None


def _writes(tree_: ast.Module) -> list[tuple[int, str]]:
    """(line, what) of every call in a module that writes a file other than through the one writer."""
    functions = [n for n in ast.walk(tree_) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    buffers = {id(call): names for f in functions for names in [_bytes_buffers(f)]
               for call in ast.walk(f) if isinstance(call, ast.Call)}
    found = []
    for node in ast.walk(tree_):
        if isinstance(node, ast.Call):
            kind = _write_kind(node, buffers.get(id(node), set()))
            if kind is not None:
                found.append((node.lineno, kind))
    return sorted(found)


def test_no_module_writes_a_file_but_through_the_one_writer():
    offenders = []
    for package in ("cli", "infra", "stacks"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "infra/base/writer.py":
                continue
            for line, what in _writes(ast.parse(path.read_text(), rel)):
                if (rel, what) not in _ALLOWED:
                    offenders.append(f"{rel}:{line}: {what}")
    assert offenders == [], "write through infra.base.writer instead:\n" + "\n".join(offenders)


def test_the_scan_finds_each_kind_of_write():
    # The scan above is only as good as what it recognises: each of these is a write it must name.
    source = '''
import io, json, os, shutil, tempfile
def f(p, fig, fd, data):
    open(p, "w")
    self.path.open("a")
    os.fdopen(fd, "wb")
    os.open(p, os.O_WRONLY | os.O_CREAT)
    p.write_text("x")
    p.mkdir()
    os.makedirs(p)
    tempfile.mkstemp()
    shutil.copy(p, p)
    os.replace(p, p)
    json.dump(data, p)
    fig.savefig(p)
def g(fig):
    png = io.BytesIO()
    fig.savefig(png)
    open("x")
    os.open("x", os.O_RDONLY)
    {}.copy()
    "a".replace("a", "b")
'''
    found = _writes(ast.parse(source))
    assert [line for line, _ in found] == list(range(4, 16)), found  # each line of f(), none of g()
