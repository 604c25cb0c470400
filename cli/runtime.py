"""What the commands that work on a stack reach outside the process through: one :class:`Runtime`.

A command gets its runtime from Click's context object (:func:`current`): the real one
(:meth:`Runtime.default`) unless whoever invoked the CLI handed one in, as tests do with
``CliRunner().invoke(cli, args, obj=Runtime.default().replace(synthesize=...))``. Nothing here imports boto3
or the CDK engine: each real part loads them only when it is called.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from pathlib import Path

    from fastscale.infra.config import FastscaleConfig
    from fastscale.infra.terraform.runner import TerraformRunner


def _synthesize(config: FastscaleConfig, outdir: str) -> Any:
    """Synthesize the stack; returns :class:`stacks.app.SynthResult`. cdktf and jsii cost seconds, which
    `status` and `--help` must not pay."""
    from fastscale.stacks.app import synthesize  # lazy: cdktf/jsii, loaded only when this runs

    return synthesize(config, outdir=outdir)


def _aws_clients(config: FastscaleConfig) -> Any:
    """Clients for the config's region and, when it has one, its emulator (``endpoint_url``)."""
    from fastscale.infra.aws.clients import for_config  # lazy: boto3, loaded only when this runs

    return for_config(config)


def _verify_live(config: FastscaleConfig, *, clients: Any, **kwargs: Any) -> Any:
    from fastscale.infra.aws.verify import verify_live  # lazy: boto3, loaded only when this runs

    return verify_live(config, clients=clients, **kwargs)


def _plan_document(runner: TerraformRunner, plan_file: Path) -> dict[str, Any]:
    """The saved plan as Terraform's JSON representation (``terraform show -json``)."""
    return runner.show_plan(plan_file)


def _is_interactive() -> bool:
    return sys.stdin.isatty()


def _confirm(question: str) -> bool:
    """Ask on stderr; the default is No. Click turns EOF and Ctrl-C at its prompt into ``click.Abort``."""
    return click.confirm(question, default=False, err=True)


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Runtime:
    """Every part of a stack command that reaches outside the process, each a plain callable."""

    #: ``(config, outdir) -> SynthResult``: the CDKTF app (tests: a fixture stack of ``terraform_data``).
    synthesize: Callable[[FastscaleConfig, str], Any]
    #: ``config -> clients``: the ``clients=`` argument of the AWS checks, inventory, cut-over and cleanup.
    aws_clients: Callable[[FastscaleConfig], Any]
    #: ``config -> clients``: those of the Service Quotas preflight.
    quota_clients: Callable[[FastscaleConfig], Any]
    #: ``(config, *, clients, **kwargs) -> VerifyReport``: the live verification after a deploy and in `status`.
    verify_live: Callable[..., Any]
    #: ``(runner, plan_file) -> dict``: the saved plan as Terraform's JSON.
    plan_document: Callable[[TerraformRunner, Path], dict[str, Any]]
    #: ``() -> bool``: whether someone can answer a confirmation prompt.
    is_interactive: Callable[[], bool]
    #: ``question -> bool``: the confirmation prompt (may raise ``click.Abort``).
    confirm: Callable[[str], bool]
    #: ``() -> datetime`` (aware, UTC): the clock rollouts are followed from and `explain` looks back from.
    now: Callable[[], datetime]
    #: ``config -> clients``: those the rollout follower reads (SageMaker and CloudWatch); None: ``aws_clients``.
    rollout_clients: Callable[[FastscaleConfig], Any] | None = None

    @classmethod
    def default(cls) -> Runtime:
        """The real parts; boto3 and the CDK engine load only when a part that needs them is called."""
        return cls(
            synthesize=_synthesize,
            aws_clients=_aws_clients,
            quota_clients=_aws_clients,
            verify_live=_verify_live,
            plan_document=_plan_document,
            is_interactive=_is_interactive,
            confirm=_confirm,
            now=_now,
        )

    def clients_for_rollouts(self, config: FastscaleConfig) -> Any:
        """The rollout follower's clients: ``rollout_clients`` when given, else those of ``aws_clients``."""
        return (self.rollout_clients or self.aws_clients)(config)

    def replace(self, **parts: Any) -> Runtime:
        """This runtime with some parts swapped (``dataclasses.replace``: an unknown name is a TypeError)."""
        return dataclasses.replace(self, **parts)


def current() -> Runtime:
    """The runtime of the command being run: the one handed to the CLI as Click's context object
    (``cli(obj=...)``, ``CliRunner().invoke(cli, args, obj=...)``), else the real one."""
    ctx = click.get_current_context(silent=True)
    found = ctx.find_object(Runtime) if ctx is not None else None
    return found if found is not None else Runtime.default()
