"""The import graph of fastscale: no cycles, and a function-level import of fastscale code only where it keeps a
heavy module (boto3, the CDK engine) out of start-up, saying so. The direction of imports between the parts is
checked by import-linter's contracts in pyproject.toml (`lint-imports`, part of `make test`)."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import grimp

from tests.conftest import ROOT

ROOT_PACKAGES = ("fastscale.cli", "fastscale.stacks", "fastscale.infra", "fastscale.templates")


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every set of modules that import each other in a ring (strongly connected components of two or more
    modules), each sorted; found with Tarjan's algorithm, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.find_modules_directly_imported_by(nxt)))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    ring = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        ring.append(member)
                        if member == node:
                            break
                    if len(ring) > 1:
                        found.append(sorted(ring))
    return found


def test_no_import_cycle_in_fastscale():
    # Imports under `if TYPE_CHECKING:` never run, so they cannot make a cycle at import time.
    graph = grimp.build_graph(*ROOT_PACKAGES, exclude_type_checking_imports=True, cache_dir=None)
    assert len(graph.modules) > 100  # the whole package was read, not an empty namespace
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_ring_through_a_function_level_import():
    graph = grimp.ImportGraph()
    for module in ("a", "a.config", "a.versions", "a.naming", "a.leaf"):
        graph.add_module(module)
    graph.add_import(importer="a.config", imported="a.versions")
    graph.add_import(importer="a.versions", imported="a.config")  # e.g. inside a function
    graph.add_import(importer="a.naming", imported="a.config")
    graph.add_import(importer="a.naming", imported="a.leaf")
    assert cycles(graph) == [["a.config", "a.versions"]]


def function_level_imports() -> list[tuple[str, int, str]]:
    """(file, line, statement) of every import of fastscale code made inside a function."""
    found = []
    for top in ("cli", "infra", "stacks", "templates"):
        for path in sorted((ROOT / top).rglob("*.py")):
            lines = path.read_text(encoding="utf-8").splitlines()
            for func in ast.walk(ast.parse("\n".join(lines))):
                if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for node in ast.walk(func):
                    ours = (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fastscale")) or (
                        isinstance(node, ast.Import) and any(a.name.startswith("fastscale") for a in node.names))
                    if ours:
                        text = "\n".join(lines[node.lineno - 1 : node.end_lineno])
                        found.append((str(path.relative_to(ROOT)), node.lineno, text))
    return sorted(set(found))


def test_every_function_level_import_says_why_it_is_lazy():
    """Module level is the rule; an import inside a function is kept only to keep a heavy module out of
    start-up (`fastscale --help`, a command's --help, the pure layers), with a `# lazy: <reason>` comment."""
    imports = function_level_imports()
    assert imports, "the walk found no function-level import at all: it is looking in the wrong place"
    unexplained = [f"{path}:{line}: {text.strip()}" for path, line, text in imports if "# lazy:" not in text]
    assert unexplained == []


# --------------------------------------------------------------------------------------------- the resolved stack

RESOLVED_CONTRACT = "read the resolved stack"
CONFIG = "fastscale.infra.config"

#: (module, config module it imports) -> why it may: every consumer of a config reads it resolved
#: (`infra.model.resolved`) except these, which load, edit or write a config file themselves.
CONFIG_READERS = {
    ("fastscale.stacks.testing.template", CONFIG): "the users' testing helper validates a path or dict before it "
    "synthesizes",
    ("fastscale.infra.analysis.recommend.settings", CONFIG): "recommend's candidates are settings written into the "
    "file's YAML and loaded again",
    ("fastscale.infra.analysis.recommend.settings", f"{CONFIG}.yaml_edit"): "it edits the file's YAML",
    ("fastscale.infra.analysis.recommend.settings", f"{CONFIG}.safe_yaml"): "it reads the file's YAML back",
    ("fastscale.infra.analysis.recommend.baseline", CONFIG): "the baseline is the current values at the paths "
    "recommend writes",
    ("fastscale.infra.analysis.recommend.evaluation", CONFIG): "a candidate is evaluated as the config it writes",
    ("fastscale.infra.analysis.recommend.window", CONFIG): "a window's candidates are configs loaded again",
    ("fastscale.infra.analysis.simulate.requests.closed_loop", CONFIG): "a benchmark point is described as a "
    "one-component config",
    ("fastscale.infra.analysis.simulate.requests.rates", f"{CONFIG}.safe_yaml"): "a traffic profile is YAML, not a "
    "config, read with the one safe loader",
    ("fastscale.infra.aws.adopt", CONFIG): "adopt writes a config: it validates the endpoint it writes to know "
    "whether its configuration is awscc's",
}


def _contract() -> dict:
    with (ROOT / "pyproject.toml").open("rb") as f:
        contracts = tomllib.load(f)["tool"]["importlinter"]["contracts"]
    (found,) = [c for c in contracts if c["name"].endswith(RESOLVED_CONTRACT)]
    return found


def _path(module: str) -> Path:
    """Where fastscale module ``module`` lies: a file, or a package's folder."""
    top, *rest = module.removeprefix("fastscale.").split(".")
    base = ROOT.joinpath(top, *rest)
    return base if base.is_dir() else base.with_suffix(".py")


def _is_module(name: str) -> bool:
    return name.startswith("fastscale.") and _path(name).exists()


def _files(module: str) -> list[tuple[str, Path]]:
    """(module name, file) of ``module`` and, for a package, every module in it."""
    base = _path(module)
    if not base.is_dir():
        return [(module, base)]
    top = ROOT / module.split(".")[1]
    return [(".".join(["fastscale", top.name, *p.relative_to(top).with_suffix("").parts]).removesuffix(".__init__"), p)
            for p in sorted(base.rglob("*.py"))]


def imported_modules(source: str) -> set[str]:
    """Every fastscale module ``source`` imports, anywhere: at module level, in a function, and under
    ``if TYPE_CHECKING:`` (which import-linter's contracts do not count). As import-linter counts them,
    ``from a import b`` imports module ``a.b`` when there is one, else ``a``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{a.name}" if _is_module(f"{node.module}.{a.name}") else node.module
                      for a in node.names}
    return {m for m in found if m.startswith("fastscale.")}


def config_imports(module: str) -> set[tuple[str, str]]:
    """(module, config module) for every import of the raw config (`fastscale.infra.config` or a module in it)
    by ``module`` or a module in it."""
    return {(name, imported) for name, path in _files(module)
            for imported in imported_modules(path.read_text(encoding="utf-8"))
            if imported == CONFIG or imported.startswith(f"{CONFIG}.")}


def test_the_import_scanner_sees_type_checking_and_function_level_imports():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from fastscale.infra.config import FastscaleConfig\n"
        "def f():\n    from fastscale.infra.config import yaml_edit  # lazy: x\n"
        "import fastscale.infra.model.naming\n"
    )
    assert imported_modules(source) == {"fastscale.infra.config", "fastscale.infra.config.yaml_edit",
                                        "fastscale.infra.model.naming"}


def test_what_reads_the_resolved_stack_never_imports_the_config_not_even_for_type_checking():
    """The contract's modules import no config class, even under ``if TYPE_CHECKING:``, which import-linter does not
    see (`exclude_type_checking_imports`): a type named only for mypy still lets a function take the raw config.
    The exceptions, each with its reason, are `CONFIG_READERS`; the contract ignores the same imports."""
    contract = _contract()
    found = set().union(*(config_imports(m) for m in contract["source_modules"]))
    assert len(found) >= len(CONFIG_READERS) // 2  # the scan reads the files: the known exceptions are among them
    assert sorted(found - CONFIG_READERS.keys()) == []
    assert sorted(CONFIG_READERS.keys() - found) == []  # an exception no longer needed is taken out


def _ignored(pattern: str, importer: str, imported: str) -> bool:
    """Whether import-linter's ``ignore_imports`` entry ``pattern`` covers ``importer -> imported`` (``*``: one
    module name, ``**``: any number)."""
    def regex(side: str) -> str:
        return r"\.".join(r"[^.]+(\.[^.]+)*" if p == "**" else "[^.]+" if p == "*" else re.escape(p)
                          for p in side.split("."))

    left, right = (s.strip() for s in pattern.split("->"))
    return bool(re.fullmatch(regex(left), importer) and re.fullmatch(regex(right), imported))


def test_the_contract_ignores_exactly_the_exceptions():
    patterns = _contract()["ignore_imports"]
    assert [p for p in patterns if not any(_ignored(p, *pair) for pair in CONFIG_READERS)] == []
    assert [pair for pair in CONFIG_READERS if not any(_ignored(p, *pair) for p in patterns)] == []
