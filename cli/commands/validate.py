"""`fastscale validate`."""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any

import click

from fastscale.cli import runtime
from fastscale.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    apply_target,
    config_error_report,
    endpoint_url_option,
    json_option,
    print_config_error,
    print_findings,
    print_json,
    rule_findings,
    validation_document,
    with_file_lines,
)
from fastscale.cli.output import say
from fastscale.infra.config import ConfigError, load_config, partial_config
from fastscale.infra.model.resolved import resolve
from fastscale.infra.rules import has_errors, run_rules


@click.command("validate")
@click.argument("config_files", metavar="FILE...", nargs=-1, required=True, type=click.Path(dir_okay=False))
# (not UserPath: a FIFO or device is a finding of its file, in the text and JSON reports, from load_config)
@json_option
@endpoint_url_option
@click.option(
    "--check-aws",
    is_flag=True,
    help="Also check with AWS (boto3, default credentials) that each ECR image and S3 model data exists, and "
    "that the account's Service Quotas for endpoint usage cover every instance type's maximum instances.",
)
def validate_command(config_files: tuple[str, ...], as_json: bool, check_aws: bool) -> None:
    """Check FILE(s) and report every problem at once.

    Errors (the deploy would fail or not behave as configured) are reported with the config path, its
    line, why and how to fix it; warnings (slower or costlier than it should be) are reported too but
    do not fail; notes (severity `info`: what AWS's own documentation or samples do, worth knowing)
    are shown, never fail and are not counted as warnings. No AWS call is made unless --check-aws is given; with it, the images and model data
    must exist and the account's Service Quotas for endpoint usage must cover the maximum instances of
    each instance type, summed over the file's endpoints. With --json, one document on stdout
    whatever the number of files: `valid`, `exit_code` and `files` (per file: `file`, `valid`,
    `findings`, and with --check-aws `aws_checked` and, when AWS could not be asked, `aws_error`).

    \b
    Exit codes:
      0  every file is valid (warnings and notes allowed)
      1  --check-aws could not ask AWS (no credentials, unreachable, refused);
         the files have no errors, but their images and model data are
         unchecked, so no file is reported valid
      2  bad input: a file has errors (with --check-aws also a missing image or
         model data, or instances over quota), cannot be read, or is not a
         config (this wins over 1)
    """
    worst = EXIT_OK
    rt = runtime.current()  # the AWS checks' clients (--check-aws)
    results: list[dict[str, Any]] = []
    for path in config_files:
        try:
            config = load_config(path)
        except ConfigError as err:
            worst = EXIT_BAD_INPUT
            partial = partial_config(err.data) if err.data is not None else None
            if partial is None:  # nothing the rules could check
                if as_json:
                    results.append(config_error_report(err))
                else:
                    print_config_error(err)
                continue
            checked = apply_target(partial.config, announce=False)
            findings = [replace(f, path=partial.file_path(f.path)) for f in run_rules(checked)]
            findings = with_file_lines([f for f in findings if not partial.covers(f.path)], path)
            if as_json:
                report = config_error_report(err)
                report["findings"] += [f.to_dict() for f in findings]
                report["not_checked_by_rules"] = list(partial.left_out)
                results.append(report)
            else:
                print_config_error(err)
                say("  the rules checked the rest of the file; they could not check "
                    + ", ".join(partial.left_out) + " (schema errors above)", indent="    ")
                print_findings(findings, path, schema_errors=len(err.problems))
            continue
        config = apply_target(config, announce=check_aws)
        stack = resolve(config)  # once: for the rules, and the AWS checks below
        findings = rule_findings(config, path, stack)
        entry: dict[str, Any] = {"file": path}
        aws_error = None
        if check_aws:
            from botocore.exceptions import BotoCoreError, ClientError

            from fastscale.infra.aws.clients import (  # lazy: boto3, loaded only when this runs
                AwsError,
                describe_failure,
            )
            from fastscale.infra.aws.preflight import (  # lazy: boto3, loaded only when this runs
                check_artifacts,
                check_quotas,
            )

            try:
                findings = (findings + check_artifacts(stack, rt.aws_clients(stack))
                            + check_quotas(stack, rt.quota_clients(stack)))
            except AwsError as exc:
                aws_error = str(exc)
            except (ClientError, BotoCoreError) as exc:  # e.g. throttling: the check was not made, the file is not at fault
                aws_error = describe_failure(exc)
            entry["aws_checked"] = aws_error is None
            if aws_error is not None:
                entry["aws_error"] = aws_error
        invalid = has_errors(findings)
        if invalid:
            worst = EXIT_BAD_INPUT
        elif aws_error is not None:
            worst = max(worst, EXIT_FAILED)
        entry.update(valid=not invalid and aws_error is None, findings=[f.to_dict() for f in findings])
        results.append(entry)
        if not as_json:
            print_findings(findings, path, unchecked=aws_error)
    if as_json:
        print_json(validation_document(results, worst))
    sys.exit(worst)
