"""`fastscale validate`."""

from __future__ import annotations

import sys

import click

from fastscale.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    config_error_report,
    json_option,
    print_config_error,
    print_findings,
    print_json,
)
from fastscale.infra.config import ConfigError, load_config
from fastscale.infra.rules import has_errors, run_rules


@click.command("validate")
@click.argument("config_files", metavar="FILE...", nargs=-1, required=True, type=click.Path(dir_okay=False))
@json_option
@click.option(
    "--check-aws",
    is_flag=True,
    help="Also check with AWS (boto3, default credentials) that each ECR image and S3 model data exists.",
)
def validate_command(config_files: tuple[str, ...], as_json: bool, check_aws: bool) -> None:
    """Check FILE(s) and report every problem at once.

    Errors (the deploy would fail or not behave as configured) exit with code 2; warnings (slower or
    costlier than it should be) are reported but exit 0. No AWS call is made unless --check-aws is given.
    """
    worst = 0
    results = []
    for path in config_files:
        try:
            config = load_config(path)
        except ConfigError as err:
            if as_json:
                results.append(config_error_report(err))
            else:
                print_config_error(err)
            worst = EXIT_BAD_INPUT
            continue
        findings = run_rules(config)
        if check_aws:
            from fastscale.infra.aws.preflight import check_artifacts

            try:
                findings = findings + check_artifacts(config)
            except Exception as exc:
                click.echo(f"error: --check-aws could not reach AWS: {exc}", err=True)
                worst = max(worst, EXIT_FAILED)
        if has_errors(findings):
            worst = EXIT_BAD_INPUT
        if as_json:
            results.append({"valid": not has_errors(findings), "file": path, "findings": [f.to_dict() for f in findings]})
        else:
            print_findings(findings, path)
    if as_json:
        print_json(results[0] if len(results) == 1 else {"valid": all(r["valid"] for r in results), "files": results})
    sys.exit(worst)
