"""What the commands reach outside the process through (AWS, Terraform, the stacks' synthesis, the emulator's
server, the prompt, the clock): one :class:`Runtime`.

A command gets its runtime from Click's context object (:func:`current`): the real one
(:meth:`Runtime.default`) unless whoever invoked the CLI handed one in, as tests do with
``CliRunner().invoke(cli, args, obj=Runtime.default().replace(synthesize=...))``. Nothing here imports boto3
or the stacks: each real part loads them only when it is called.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click

from fastscale.infra.base.printable import printable
from fastscale.infra.project.emulator import Emulator, require_moto
from fastscale.infra.terraform.runner import TerraformRunner

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from fastscale.infra.aws.clients.factory import ClientTarget
    from fastscale.infra.config import FastscaleConfig
    from fastscale.infra.model.resolved import ResolvedStack
    from fastscale.infra.terraform.runner import TerraformEvent


def _synthesize(stack: ResolvedStack, outdir: str) -> Any:
    """Synthesize the stack with fastscale's own writer; returns :class:`stacks.app.SynthResult`. The stacks and
    their resource layer take a third of a second to import, which `status` and `--help` must not pay."""
    from fastscale.stacks.app import synthesize  # lazy: the stacks, loaded only when this runs

    return synthesize(stack, outdir=outdir)


def _stack_snapshot(config: FastscaleConfig, project_dir: Path) -> str:
    """The stack snapshot `fastscale init` writes for a new project's tests (synthesized by fastscale's writer)."""
    from fastscale.infra.model.resolved import resolve  # lazy: with the stacks it feeds
    from fastscale.stacks.app import project_snapshot  # lazy: the stacks, loaded only when this runs

    return project_snapshot(resolve(config), project_dir)


def _terraform(binary: str, workdir: Path, *, env: Mapping[str, str | None] | None,
               on_event: Callable[[TerraformEvent], None]) -> TerraformRunner:
    return TerraformRunner(binary, workdir, env=env, on_event=on_event)


def _emulator(host: str, port: int) -> Emulator:
    """moto's server with fastscale's additions, not yet bound; EmulatorUnavailable without moto's server."""
    require_moto()
    return Emulator(host=host, port=port)


def _aws_clients(target: ClientTarget) -> Any:
    """Clients for the stack's region and, when it has one, its emulator (``endpoint_url``)."""
    from fastscale.infra.aws.clients import for_config  # lazy: boto3, loaded only when this runs

    return for_config(target)


def _verify_live(stack: ResolvedStack, *, clients: Any, **kwargs: Any) -> Any:
    from fastscale.infra.aws.verify import verify_live  # lazy: boto3, loaded only when this runs

    return verify_live(stack, clients=clients, **kwargs)


def _plan_document(runner: TerraformRunner, plan_file: Path) -> dict[str, Any]:
    """The saved plan as Terraform's JSON representation (``terraform show -json``)."""
    return runner.show_plan(plan_file)


def _is_interactive() -> bool:
    return sys.stdin.isatty()


def _confirm(question: str) -> bool:
    """Ask on stderr; the default is No. Click turns EOF and Ctrl-C at its prompt into ``click.Abort``."""
    return click.confirm(printable(question), default=False, err=True)


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Runtime:
    """Every part of a command that reaches outside the process, each a plain callable."""

    #: ``(stack, outdir) -> SynthResult``: the resolved stack written by fastscale's writer, in cdktf's layout
    #: (tests: a fixture stack of ``terraform_data``).
    synthesize: Callable[[ResolvedStack, str], Any]
    #: ``(config, project_dir) -> str``: the stack snapshot `init` gives a new project.
    stack_snapshot: Callable[[FastscaleConfig, Path], str]
    #: ``(binary, workdir, *, env, on_event) -> TerraformRunner``: Terraform in the run's own directory
    #: (``infra.terraform.workdir.RunDirectory``), holding the stack just synthesized (``env``: changes to the
    #: inherited environment, ``None`` removing a variable).
    terraform: Callable[..., TerraformRunner]
    #: ``stack -> clients``: the ``clients=`` argument of the AWS checks, inventory, cut-over, cleanup, sweep,
    #: `explain` and `measure-scaleout` (an ``AwsClients``, or a mapping of service name to client), for the
    #: resolved stack's region and emulator (`adopt`, which has no stack yet: for the region and emulator it reads).
    aws_clients: Callable[[ClientTarget], Any]
    #: ``stack -> clients``: those of the Service Quotas checks (`plan`/`deploy` preflight, `validate --check-aws`).
    quota_clients: Callable[[ResolvedStack], Any]
    #: ``(stack, *, clients, **kwargs) -> VerifyReport``: the live verification after a deploy and in `status`.
    verify_live: Callable[..., Any]
    #: ``(runner, plan_file) -> dict``: the saved plan as Terraform's JSON.
    plan_document: Callable[[TerraformRunner, Path], dict[str, Any]]
    #: ``() -> bool``: whether someone can answer a confirmation prompt.
    is_interactive: Callable[[], bool]
    #: ``question -> bool``: the confirmation prompt (may raise ``click.Abort``).
    confirm: Callable[[str], bool]
    #: ``() -> datetime`` (aware, UTC): the clock rollouts are followed from and `explain` looks back from.
    now: Callable[[], datetime]
    #: ``() -> float`` and ``seconds -> None``: the monotonic clock and the sleep of `measure-scaleout`'s waits.
    monotonic: Callable[[], float]
    sleep: Callable[[float], None]
    #: ``(host, port) -> Emulator``: `fastscale emulator`'s server, unbound (``EmulatorUnavailable`` without moto).
    emulator: Callable[[str, int], Emulator]
    #: ``stack -> clients``: those the rollout follower reads (SageMaker and CloudWatch); None: ``aws_clients``.
    rollout_clients: Callable[[ResolvedStack], Any] | None = None

    @classmethod
    def default(cls) -> Runtime:
        """The real parts; boto3 and the stacks load only when a part that needs them is called."""
        return cls(
            synthesize=_synthesize,
            stack_snapshot=_stack_snapshot,
            terraform=_terraform,
            aws_clients=_aws_clients,
            quota_clients=_aws_clients,
            verify_live=_verify_live,
            plan_document=_plan_document,
            is_interactive=_is_interactive,
            confirm=_confirm,
            now=_now,
            monotonic=time.monotonic,
            sleep=time.sleep,
            emulator=_emulator,
        )

    def clients_for_rollouts(self, stack: ResolvedStack) -> Any:
        """The rollout follower's clients: ``rollout_clients`` when given, else those of ``aws_clients``."""
        return (self.rollout_clients or self.aws_clients)(stack)

    def replace(self, **parts: Any) -> Runtime:
        """This runtime with some parts swapped (``dataclasses.replace``: an unknown name is a TypeError)."""
        return dataclasses.replace(self, **parts)


def current() -> Runtime:
    """The runtime of the command being run: the one handed to the CLI as Click's context object
    (``cli(obj=...)``, ``CliRunner().invoke(cli, args, obj=...)``), else the real one."""
    ctx = click.get_current_context(silent=True)
    found = ctx.find_object(Runtime) if ctx is not None else None
    return found if found is not None else Runtime.default()
