"""How a plan reads on stdout: one line per change with what it does to traffic, the counts, the rollouts
and their expected durations, the replacements with downtime and how to avoid them; and the stack's outputs
after an apply. `plan` and `deploy` show a plan through here, whether or not it is then applied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastscale.cli.output import console, say
from fastscale.cli.output import escape as _esc
from fastscale.infra.terraform.rollout import TYPE_LABELS

if TYPE_CHECKING:
    from fastscale.infra.terraform.drift import Drift
    from fastscale.infra.terraform.rollout import ClassifiedChange, PlanClassification
    from fastscale.infra.terraform.runner import TerraformResult

#: How each planned action is marked, as Terraform marks it in its own plan output (an import, which Terraform
#: writes out in words, as an arrow into the state).
_ACTION_MARKS = {"create": "+", "update": "~", "delete": "-", "replace": "-/+", "read": "<=", "move": "->", "import": "<-"}
_ACTION_STYLES = {"create": "green", "update": "yellow", "delete": "red", "replace": "magenta", "import": "cyan"}
_KIND_STYLES = {"replace_with_downtime": "bold red", "rolling": "cyan", "blue_green": "cyan", "in_place": "dim"}


def print_drift(drift: list[Drift]) -> None:
    """The drift that matters to the plan, value by value with what the plan does about it; then, on one line,
    the resources whose drift does not (provider normalisation, or values the config does not set)."""
    matters = [d for d in drift if d.matters]
    if matters:
        say("[bold yellow]Changed outside Terraform:[/]")
        for d in matters:
            for value in d.values:
                if value.matters:
                    say(f"  {_esc(d.address)} {_esc(value.describe())}", indent="      ")
    rest = [d.address for d in drift if not d.matters]
    if rest:
        say(f"[dim]Read back differently from the saved state, nothing for the plan to change (provider "
            f"normalisation, or values the config does not set): {_esc(', '.join(rest))}[/]")


def print_change_summary(
    result: TerraformResult, changes: list[dict[str, str | None]], classification: PlanClassification | None = None,
    drift: list[Drift] | None = None,
) -> None:
    """The plan as a result on stdout: one line per resource that would change, then the counts. (The
    progress stream on stderr leaves planned changes out, so a `plan > plan.txt` holds the whole plan.)

    With a classification, a change that is not a plain create or delete says what it does to traffic
    (in place, rolling, blue/green, replace, downtime), and the rollouts and replacements with downtime
    follow the counts, with the expected duration and what to do about the downtime. Drift comes first, as
    :func:`print_drift` sorts it out."""
    out = console()
    print_drift(drift or [])
    if not result.has_changes:
        out.print("[bold green]No changes:[/] the deployed stack matches the config.", highlight=False)
        return
    found = {c.address: c for c in classification.changes} if classification is not None else {}
    for change in changes:
        action = change.get("action") or "?"
        address = change["address"] or ""
        style = _ACTION_STYLES.get(action, "")
        mark = f"{_ACTION_MARKS.get(action, '?'):>3} {action}"
        line = f"[{style}]{mark}[/] {_esc(address)}" if style else f"{mark} {_esc(address)}"
        importing = change.get("importing")
        if importing is not None:
            first = "" if action == "import" else "imported first, "
            line += f"  [cyan]({first}ID {_esc(importing)})[/]"
        kind = found[address].kind if address in found else None
        if kind is not None and kind.value not in ("create", "delete"):
            line += f"  [{_KIND_STYLES.get(kind.value, 'dim')}]({_esc(kind.label)})[/]"
        say(line, indent="      ")
    imports = f"{result.imported} to import, " if result.imported else ""  # as Terraform's own summary reads
    out.print(
        f"[bold]Plan:[/] {imports}{result.added} to add, {result.changed} to change, {result.destroyed} to destroy.",
        highlight=False,
    )
    if classification is None:
        return
    if classification.rollouts:
        say("[bold]Rollouts[/] (SageMaker keeps serving while it replaces the old version):")
        for c in classification.rollouts:
            what = f"{_type_label(c)} {c.name}" if c.name else c.address
            timing = f"about {_duration(c.duration.seconds)} ({c.duration.formula})" if c.duration else c.duration_note
            say(f"  {_esc(what)}: {_esc(c.strategy.describe() if c.strategy else c.kind.label)}; {_esc(timing)}", indent="    ")
            for note in c.notes:
                say(f"    {_esc(note)}", indent="      ")
        longest = classification.longest_rollout_seconds()
        if longest is not None and len(classification.rollouts) > 1:
            say(f"  Terraform applies them side by side: about {_duration(longest)} for the longest.", indent="    ")
    for c in classification.changes:
        if c.notice:
            say(f"[bold yellow]Note:[/] {_esc(c.notice)}.")
    if classification.downtime:
        print_downtime(classification.downtime)
    for c in classification.name_collisions:
        say(f"[bold red]Cannot apply:[/] {_esc(c.address)} would be created as {_esc(c.collides_as or '')} while the live one "
            f"still holds that name ({_esc(c.reason)}); AWS refuses that, so `fastscale deploy` stops before applying.")


def print_downtime(found: list[ClassifiedChange]) -> None:
    """Each replacement with downtime: what is replaced, why (Terraform's replace path), how to avoid it."""
    say("[bold red]Downtime[/] (replaced: requests fail until the new one is in service):")
    for c in found:
        what = f"{_type_label(c)} {c.name}" if c.name else c.address
        say(f"  {_esc(what)} ({_esc(c.address)}): {_esc(c.reason)}", indent="    ")
        if c.avoid:
            say(f"    to avoid it: {_esc(c.avoid)}", indent="      ")
    say("  `fastscale deploy` applies this only with --allow-downtime.", indent="    ")


def _type_label(change: ClassifiedChange) -> str:
    return TYPE_LABELS.get(change.type, change.type)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def print_outputs(outputs: dict[str, Any]) -> None:
    if not outputs:
        return
    out = console()
    out.print("[bold]Outputs:[/]")
    for key, value in outputs.items():
        out.print(f"  {_esc(key)} = {_esc(str(value))}", highlight=False)

