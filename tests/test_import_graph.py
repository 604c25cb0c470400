"""The import graph of fastscale: no cycles, and a function-level import of fastscale code only where it keeps a
heavy module (boto3, the CDK engine) out of start-up, saying so. The direction of imports between the parts is
checked by import-linter's contracts in pyproject.toml (`lint-imports`, part of `make test`)."""

from __future__ import annotations

import ast

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
