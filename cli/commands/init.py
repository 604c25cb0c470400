"""`fastscale init`."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from fastscale.cli import runtime
from fastscale.cli.common import EXIT_BAD_INPUT, OutputPath, console, say
from fastscale.cli.output import escape
from fastscale.infra.config import ConfigError, check_endpoint_url, parse_config
from fastscale.infra.project.pipeline import LOCK_FILE
from fastscale.infra.project.scaffold import (
    CI_CHOICES,
    DISTRIBUTION,
    EMULATOR_INSTANCE_TYPES,
    REQUIREMENTS_FILE,
    ProjectOptions,
    alternatives,
    check_project_target,
    config_errors,
    emulator_instance_type,
    existing_files,
    model_choices,
    render_project,
    write_project,
)
from fastscale.infra.project.stack_snapshot import PROJECT_SNAPSHOT

_PROJECT_PATTERN = r"[a-z0-9](-?[a-z0-9])*"


def _project_name(ctx: click.Context, param: click.Parameter | None, value: str | None) -> str | None:

    if value is not None and not re.fullmatch(_PROJECT_PATTERN, value):
        raise click.BadParameter(
            f"{value!r} is not a usable project name: use lowercase letters, digits and single hyphens, e.g. chat-prod",
            param_hint="--project",
        )
    return value


def _requirement(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:

    if value is not None and not re.fullmatch(rf"\s*{DISTRIBUTION}\s*(\[[^]]*\])?\s*([@=<>!~].*)?", value):
        raise click.BadParameter(
            f"{value!r} does not install {DISTRIBUTION}: give a pip requirement for it, e.g. "
            f"'{DISTRIBUTION}==0.1.0' or '{DISTRIBUTION} @ git+https://git.example.com/you/fastscale.git@COMMIT'",
            param_hint="--fastscale-requirement",
        )
    return value.strip() if value else None


def _emulator_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    try:
        return check_endpoint_url(value)
    except ValueError as exc:
        raise click.BadParameter(f"{exc}; give the URL `fastscale emulator` printed", param_hint="--emulator") from None


@click.command("init")
@click.argument("directory", type=OutputPath(file_okay=False, path_type=Path))
@click.option("--project", callback=_project_name, help="Project name (resource prefix). Default: the directory name.")
@click.option("--model", type=click.Choice(model_choices()), default="qwen3-8b", show_default=True,
              help="Workload preset: model size, instance type, GPUs per copy.")
@click.option("--instance-type", help="Override the preset's instance type (checked: the model must fit).")
@click.option("--region", default="us-east-1", show_default=True)
@click.option("--ci", type=click.Choice(CI_CHOICES), default=None,
              help="CI/CD pipeline to generate (OIDC credentials, S3 state with locking). Default: github; none "
                   "with --emulator.")
@click.option("--scale-to-zero/--no-scale-to-zero", default=False, show_default=True,
              help="Let the component and the instances scale down to zero when idle.")
@click.option("--model-bucket", help="S3 bucket holding the weights. Default: <project>-models.")
@click.option("--state-bucket", help="S3 bucket for Terraform state. Default with CI: <project>-tfstate.")
@click.option("--fastscale-requirement", "requirement", callback=_requirement, metavar="REQUIREMENT",
              help="pip requirement for fastscale written to requirements.txt. Default: how this fastscale was "
                   "installed (a VCS URL at its commit, a local path, or the released version).")
@click.option("--emulator", "emulator", metavar="URL", callback=_emulator_url,
              help="Rehearse against the AWS emulator at URL (see `fastscale emulator`): a single-model endpoint with "
                   "auto scaling, on an instance type the emulator accepts, local state, no CI pipeline.")
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
def init_command(directory: Path, project: str | None, model: str, instance_type: str | None, region: str,
                 ci: str | None, scale_to_zero: bool, model_bucket: str | None, state_bucket: str | None,
                 requirement: str | None, emulator: str | None, force: bool) -> None:
    """Create a new fastscale project in DIRECTORY.

    Writes fastscale.yaml (commented, valid for the chosen workload) and its JSON Schema for editors,
    requirements.txt (the fastscale to install), cdktf.json and main.py (so `cdktf synth` / `cdktf deploy`
    work), tests/test_stack.py (a snapshot test and property tests of the stack) with its snapshot,
    requirements-dev.txt (pytest, syrupy), a CI/CD workflow, a Makefile (`make test` runs the tests),
    .checkov.yaml, .gitignore and a README. Existing files are never
    overwritten without --force. The rendered config is validated first: if it has errors (for example the
    model does not fit --instance-type), nothing is written and the options that would work are suggested.

    With --emulator URL the project rehearses against a local AWS emulator instead (`fastscale emulator`):
    the model as a single-model endpoint with high-resolution auto scaling (inference components need the
    AWS Cloud Control API, which the emulator lacks), on the cheapest instance type the emulator accepts
    that the model fits, with local Terraform state and no pipeline. `fastscale deploy fastscale.yaml
    --auto-approve` in DIRECTORY then deploys it there, with no edits.

    \b
    Exit codes:
      0  the project was written
      1  writing failed part-way (the error line names the file)
      2  bad input: options that give an invalid project (or --emulator with
         --ci github|gitlab, --state-bucket or --scale-to-zero), files that
         already exist (without --force), or DIRECTORY inside .git, not
         writable, a symbolic link or reached through one, or holding one
         where a project file goes (nothing was written)
    """
    # Without --project the directory name is used, and must be a valid name too.
    name = project or directory.resolve().name.lower()
    _project_name(click.get_current_context(), None, name)
    if emulator:
        clash = ("--ci " + ci if ci not in (None, "none") else "--state-bucket" if state_bucket
                 else "--scale-to-zero" if scale_to_zero else None)
        if clash:
            raise click.BadParameter(
                f"{clash} does not go with --emulator: an emulator project keeps its state in a local file, has "
                "no pipeline, and is a single-model endpoint (scale to zero needs inference components)",
                param_hint="--emulator")
    ci = ci or ("none" if emulator else "github")
    opts = ProjectOptions(project=name, model=model, instance_type=instance_type, region=region, ci=ci,
                          scale_to_zero=scale_to_zero, model_bucket=model_bucket, state_bucket=state_bucket,
                          fastscale_requirement=requirement, emulator=emulator)
    if emulator and not instance_type:
        opts = _emulator_options(opts)
    out = console()
    try:
        errors = config_errors(opts)
    except ConfigError as err:
        raise click.BadParameter(str(err)) from None
    if errors:
        _explain_refusal(opts, errors)
        sys.exit(EXIT_BAD_INPUT)
    files = render_project(opts)
    files[PROJECT_SNAPSHOT] = ""  # written below, once the checks pass (synthesizing takes a few seconds)

    check_project_target(directory, files)  # .git, unwritable, symbolic links: exit 2, nothing written
    clashes = existing_files(directory, files)
    if clashes and not force:
        say(
            f"[bold red]error:[/] {len(clashes)} file(s) already exist in {directory}: {', '.join(clashes)}\n"
            "Nothing was written. Use --force to overwrite them.",
            stderr=True,
            indent="  ",
        )
        sys.exit(EXIT_BAD_INPUT)
    no_snapshot = _add_snapshot(files, directory, runtime.current())
    written = write_project(directory, files)
    say(f"[bold green]Created {name}[/] in {directory}:", indent="  ")
    for path in written:
        out.print(f"  {path}")
    cfg = directory / "fastscale.yaml"
    if emulator:
        out.print("\nNext (with `fastscale emulator` running at " + emulator + "):")
        out.print(f"  cd {directory}")
        out.print("  fastscale deploy fastscale.yaml --auto-approve")
        out.print("  fastscale status fastscale.yaml")
        out.print("  fastscale destroy fastscale.yaml --auto-approve")
        return
    out.print("\nNext:")
    out.print(f"  fastscale validate {cfg}")
    out.print(f"  fastscale estimate {cfg}")
    out.print(f"  fastscale synth {cfg} --out {directory / 'cdktf.out'}")
    out.print(f"  make -C {directory} install-dev test")
    if ci != "none":
        out.print(f"  make -C {directory} lock    # then commit {LOCK_FILE}")
        out.print(f"  (the pipeline's AWS jobs install fastscale only from {LOCK_FILE})")
    out.print(f"  upload the weights to s3://{opts.model_bucket or name + '-models'}/{model}/, then:")
    out.print(f"  fastscale deploy {cfg}")
    if no_snapshot:
        say(f"[yellow]warning:[/] {PROJECT_SNAPSHOT} was not written, so `make test` fails until `make snapshot` "
            f"writes it: synthesizing the stack failed here ({escape(no_snapshot)})", stderr=True, indent="  ")
    installs = files[REQUIREMENTS_FILE].strip().splitlines()[-1]
    say(f"\n{REQUIREMENTS_FILE} installs {escape(installs)}", indent="  ")
    if ci != "none" and "file:" in installs:
        say(
            f"[yellow]warning:[/] that is a local path, which a CI runner cannot reach: edit {REQUIREMENTS_FILE} "
            "(e.g. `fastscale==VERSION`, or a wheel URL) or pass --fastscale-requirement.",
            stderr=True,
            indent="  ",
        )
    elif ci != "none" and re.search(r"@\s*(git|hg|svn|bzr)\+", installs):
        say(
            f"[yellow]warning:[/] that is a checkout from version control, whose hashes pip cannot check: the "
            f"pipeline's AWS jobs install {LOCK_FILE} with --require-hashes, so give fastscale from a package "
            f"index (`fastscale==VERSION`) or a wheel URL in {REQUIREMENTS_FILE}.",
            stderr=True,
            indent="  ",
        )


def _add_snapshot(files: dict[str, str], directory: Path, rt: runtime.Runtime) -> str | None:
    """Put the stack snapshot of tests/test_stack.py into ``files``, so `make test` passes on the new project.
    Returns why not (the file is left out) when the stack cannot be synthesized here, e.g. without a CDK
    engine installed. The CDK engine is the runtime's ``stack_snapshot``."""
    import yaml

    try:
        config = parse_config(yaml.safe_load(files["fastscale.yaml"]), "fastscale.yaml", files["fastscale.yaml"])
        files[PROJECT_SNAPSHOT] = rt.stack_snapshot(config, directory)
    except Exception as err:  # any failure of synthesis leaves the snapshot out, whatever its class
        del files[PROJECT_SNAPSHOT]
        return f"{type(err).__name__}: {err}"
    return None


def _emulator_options(opts: ProjectOptions) -> ProjectOptions:
    """The options with the emulator instance type the model fits without a finding; exit 2 when none does."""
    from dataclasses import replace

    found = emulator_instance_type(opts)
    if found is None:
        fitting = [m for m in model_choices() if m != opts.model and emulator_instance_type(replace(opts, model=m))]
        raise click.BadParameter(
            f"{opts.model} does not fit any instance type the emulator accepts ({', '.join(EMULATOR_INSTANCE_TYPES)}) "
            f"without a warning: rehearse with --model {' | '.join(fitting) or '?'} instead, or pass --instance-type",
            param_hint="--model")
    return replace(opts, instance_type=found)


def _explain_refusal(opts: ProjectOptions, errors: list) -> None:
    """Why the options give an invalid project, and the options that would give a valid one."""
    err = console(stderr=True)
    chosen = f"--model {opts.model}" + (f" --instance-type {opts.instance_type}" if opts.instance_type else "")
    err.print("[bold red]error:[/] these options do not give a valid project:")
    err.print(f"  {escape(chosen)}")
    for finding in errors:
        # Only the region's fix is an init option (--region); other fixes are edits of the YAML, which
        # the options below replace.
        fix = f" Fix: --region ({escape(finding.hint)})" if finding.path == "region" else ""
        say(f"  {finding.code} {escape(finding.message)}{fix}", stderr=True, indent="    ")
    found = alternatives(opts)
    if found.instance_types or found.models:
        err.print("These options give a valid project:")
        for instance_type in found.instance_types:
            err.print(f"  --model {opts.model} --instance-type {instance_type}")
        for model in found.models:
            err.print(f"  --model {model} --instance-type {opts.instance_type}")
    err.print("Nothing was written.")
