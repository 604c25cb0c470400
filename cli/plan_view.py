"""How a plan reads on stdout: one line per change with what it does to traffic, the counts, the rollouts
and their expected durations, the replacements with downtime and how to avoid them; and the stack's outputs
after an apply. `plan` and `deploy` show a plan through here, whether or not it is then applied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastscale.cli.common import print_table
from fastscale.cli.output import console, say
from fastscale.cli.output import escape as _esc
from fastscale.infra.terraform.plan_cost import signed_usd, usd
from fastscale.infra.terraform.rollout import TYPE_LABELS

if TYPE_CHECKING:
    from fastscale.infra.terraform.drift import Drift
    from fastscale.infra.terraform.plan_cost import Fleet, Monthly, PlanCost
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
    drift: list[Drift] | None = None, cost: PlanCost | None = None,
) -> None:
    """The plan as a result on stdout: one line per resource that would change, then the counts. (The
    progress stream on stderr leaves planned changes out, so a `plan > plan.txt` holds the whole plan.)

    With a classification, a change that is not a plain create or delete says what it does to traffic
    (in place, rolling, blue/green, replace, downtime), and the rollouts and replacements with downtime
    follow the counts, with the expected duration and what to do about the downtime; so does every change
    of an ownership tag on a resource that exists (`ownership: fastscale:stack a -> b on <address>`). Drift
    comes first, as :func:`print_drift` sorts it out. With a cost, the endpoints' monthly on-demand cost
    before and after the change closes it (:func:`print_cost`)."""
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
    for c, o in classification.ownership_changes:
        say(f"[bold yellow]ownership:[/] {_esc(o.describe())} on {_esc(c.address)}")
    for c in classification.changes:
        if c.notice:
            say(f"[bold yellow]Note:[/] {_esc(c.notice)}.")
    if classification.downtime:
        print_downtime(classification.downtime)
    for c in classification.name_collisions:
        say(f"[bold red]Cannot apply:[/] {_esc(c.address)} would be created as {_esc(c.collides_as or '')} while the live one "
            f"still holds that name ({_esc(c.reason)}); AWS refuses that, so `fastscale deploy` stops before applying.")
    if cost is not None:
        print_cost(cost)


def print_cost(cost: PlanCost) -> None:
    """The endpoints' monthly on-demand cost before and after the change, at min capacity, on a typical day and
    at max capacity; the total; one sentence on what the change adds or saves; the basis of the figures."""
    from rich import box  # lazy: rich, as everything printed
    from rich.table import Table

    if not cost.endpoints:
        return
    say(f"[bold]Cost per month[/] ({_esc(cost.basis())}):")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("endpoint", no_wrap=True)
    table.add_column("instances")
    for heading in ("at min", "typical day", "at max"):
        table.add_column(heading, justify="right", no_wrap=True)

    def row(label: str, what: str, money: list[str], style: str = "") -> None:
        table.add_row(label, what, *money, style=style)

    for e in cost.endpoints:
        if e.status == "unchanged" and e.after is not None:
            row(_esc(e.endpoint), _esc(e.after.describe()) + _estimated(e.after), _money(e.after.monthly))
            continue
        row(_esc(e.endpoint), "", ["", "", ""], style="bold")
        row("  before", _fleet(e.before, "(new)"), _money(e.before.monthly) if e.before else ["-"] * 3)
        row("  after", _fleet(e.after, "(removed)"), _money(e.after.monthly) if e.after else ["-"] * 3)
        row("  change", "", _money(e.delta, signed=True))
    if len(cost.endpoints) > 1:
        row("total", "", ["", "", ""], style="bold")
        before = cost.total("before")
        row("  before", "new stack" if cost.new_stack else "", _money(before) if before is not None else ["-"] * 3)
        row("  after", "", _money(cost.total("after")))
        if not cost.new_stack:
            row("  change", "", _money(cost.delta, signed=True))
    print_table(table)
    say(f"[bold]{_esc(cost.summary())}[/]")
    if cost.delta is not None and not (cost.complete("before") and cost.complete("after")):
        say(f"  [yellow]totals leave out what has no price:[/] {_esc('; '.join(cost.unknown_reasons()))}", indent="    ")
    for note in cost.notes():
        say(f"  [dim]{_esc(note)}[/]", indent="    ")


def _fleet(fleet: Fleet | None, absent: str) -> str:
    return absent if fleet is None else _esc(fleet.describe()) + _estimated(fleet)


def _estimated(fleet: Fleet) -> str:
    return " (est.)" if fleet.estimated else ""


def _money(monthly: Monthly | None, signed: bool = False) -> list[str]:
    if monthly is None:
        return ["price unknown"] * 3
    show = signed_usd if signed else usd
    return [show(monthly.min), show(monthly.typical), show(monthly.max)]


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

