"""Validation rules: one rule per module, each a pure function of the config that yields its findings.

A rule about what will be built (after defaults and fastscale's choices: names, counts, instance fit and pools,
scaling, alarms, routing, placement, updates, tags per resource) is a function of the resolved stack instead
(`stack_rule`, `infra.model.resolved`): it checks what the stacks synthesize from, not a second reading of the
config, so the two never disagree about a default. Only a value checked as the user wrote it (its syntax: an
ARN, an image reference, a tag's characters, a path, a host, a region name, a secret or template token) is read
from the config; docs/extending.md sorts every rule. `run_rules` resolves the config once for all of them.

A rule never raises for a bad config and never stops at the first problem: every rule runs and every
finding is reported together, so a user fixes their file in one pass.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from enum import Enum
from functools import cache
from typing import NamedTuple

from fastscale.infra.config import FastscaleConfig, LineMap
from fastscale.infra.config.secrets import is_literal_secret, redact
from fastscale.infra.model.resolved import ResolvedStack, resolve
from fastscale.infra.rules._common import environments


class Severity(str, Enum):
    ERROR = "error"  # the deploy would fail or the endpoint would not work as configured
    WARNING = "warning"  # it works, but slower, costlier or riskier than it should
    #: a note on what AWS's own documentation or samples do, or an AWS behaviour worth knowing: shown by
    #: `validate`, never fails a command and is never counted as a warning
    INFO = "info"


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: Severity
    path: str  # config path, e.g. endpoints[0].inference_components[1].resources.accelerators
    message: str  # what is wrong and why it matters
    hint: str  # how to fix it
    line: int | None = None  # where ``path`` is in the YAML file, when the file's text is known

    def to_dict(self) -> dict[str, str | int | None]:
        d = asdict(self)
        d["severity"] = self.severity.value
        return d


class Hit(NamedTuple):
    """What a rule yields: where, what, how to fix. The registry adds the code and severity."""

    path: str
    message: str
    hint: str


ConfigCheck = Callable[[FastscaleConfig], Iterable[Hit]]
StackCheck = Callable[[ResolvedStack], Iterable[Hit]]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str
    #: a ConfigCheck, or a StackCheck when `on_stack`
    check: Callable[..., Iterable[Hit]]
    #: a rule about what will be built reads the resolved stack instead of the config
    on_stack: bool = False

    def run(self, config: FastscaleConfig, stack: ResolvedStack | None = None) -> list[Finding]:
        """The findings of the rule on ``config``; ``stack`` is the config resolved, when the caller has it."""
        hits = self.check(stack or resolve(config)) if self.on_stack else self.check(config)
        return [Finding(self.code, self.severity, h.path, h.message, h.hint) for h in hits]


_REGISTRY: dict[str, Rule] = {}


def rule(code: str, name: str, severity: Severity, summary: str) -> Callable[[ConfigCheck], Rule]:
    """Register a rule function `check(config) -> Iterable[Hit]` under a stable code."""

    def register(fn: ConfigCheck) -> Rule:
        return _register(Rule(code, name, severity, summary, fn))

    return register


def stack_rule(code: str, name: str, severity: Severity, summary: str) -> Callable[[StackCheck], Rule]:
    """Register a rule about what will be built, `check(stack) -> Iterable[Hit]` on the resolved stack."""

    def register(fn: StackCheck) -> Rule:
        return _register(Rule(code, name, severity, summary, fn, on_stack=True))

    return register


def _register(r: Rule) -> Rule:
    if r.code in _REGISTRY:
        raise RuntimeError(f"rule code {r.code} registered twice")
    _REGISTRY[r.code] = r
    return r


@cache
def all_rules() -> tuple[Rule, ...]:
    """Import every rule module of this package once; rules register themselves on import."""
    for mod in pkgutil.iter_modules(__path__):
        if not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")
    return tuple(sorted(_REGISTRY.values(), key=lambda r: r.code))


_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def run_rules(config: FastscaleConfig, stack: ResolvedStack | None = None) -> list[Finding]:
    """Every rule's findings on ``config``; ``stack`` is the config resolved, when the caller has it (else it is
    resolved here, once, for every rule about what will be built)."""
    stack = stack or resolve(config)
    findings = masked([f for r in all_rules() for f in r.run(config, stack)], config)
    return sorted(findings, key=lambda f: (_SEVERITY_ORDER[f.severity], f.path, f.code))


def masked(findings: list[Finding], config: FastscaleConfig) -> list[Finding]:
    """The findings with every secret in their text masked, whichever rule wrote them: what looks like a
    credential by its shape, and the literal values of environment variables named like secrets (FS018)."""
    literals = {value for _, env in environments(config) for key, value in env.items() if is_literal_secret(key, value)}
    return [replace(f, message=redact(f.message, literals), hint=redact(f.hint, literals)) for f in findings]


def with_lines(findings: list[Finding], text: str) -> list[Finding]:
    """The findings with the line of their path in ``text`` (the same line map schema errors use)."""
    if not findings:
        return findings
    lines = LineMap(text)
    return [replace(f, line=lines.line_of(f.path)) for f in findings]


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.severity is Severity.ERROR for f in findings)


def count(findings: Iterable[Finding], severity: Severity) -> int:
    """How many of ``findings`` have ``severity`` (a note is never counted as a warning)."""
    return sum(f.severity is severity for f in findings)
