"""What the CDK for Terraform CLI 0.21 (`cdktf-cli` on npm, a Node.js program) runs for `cdktf synth`, `cdktf diff`,
`cdktf deploy` and `cdktf destroy` in a project of one stack, for the tests of a machine where that CLI is not
installed: the same commands in the same order, with the same environment.

- synth: cdktf.json's `app` through the shell in the project directory, with `CDKTF_OUTDIR` (the absolute output
  directory, cdktf.json's `output`, default cdktf.out), `CDKTF_CONTEXT_JSON` and
  `CDKTF_CONTINUE_SYNTH_ON_ERROR_ANNOTATIONS` added to the environment;
- diff, deploy, destroy: synth, then in the stack's working directory (manifest.json) `terraform init`, then
  `terraform providers lock -platform=linux_amd64` when the directory had no lock file before the init, unless
  `--skip-provider-lock` or `CDKTF_SKIP_PROVIDER_LOCK=true` (the CLI takes every option from a `CDKTF_` variable
  too), then `terraform plan -input=false -out plan`, `terraform apply [-auto-approve]` or
  `terraform destroy [-auto-approve]`.

Every Terraform command inherits this process's environment unchanged, as the CLI's do; the binary is
`TERRAFORM_BINARY_NAME`, else `terraform`. Usage: python cdktf_standin.py synth|diff|deploy|destroy [options].
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path


def _synth(project: Path) -> Path:
    settings = json.loads((project / "cdktf.json").read_text())
    outdir = (project / settings.get("output", "cdktf.out")).resolve()
    context = json.loads(os.environ.get("CDKTF_CONTEXT_JSON") or "{}")
    env = {**os.environ, "CDKTF_OUTDIR": str(outdir), "CDKTF_CONTINUE_SYNTH_ON_ERROR_ANNOTATIONS": "true",
           "CDKTF_CONTEXT_JSON": json.dumps({**context, "cdktfRelativeModules": []})}
    subprocess.run(settings["app"], shell=True, cwd=project, env=env, check=True)  # a shell, as the CLI runs it
    return outdir


def _terraform(workdir: Path, *args: str) -> None:
    subprocess.run([os.environ.get("TERRAFORM_BINARY_NAME", "terraform"), *args], cwd=workdir, check=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="cdktf")
    parser.add_argument("command", choices=("synth", "diff", "deploy", "destroy"))
    parser.add_argument("--auto-approve", action="store_true")
    parser.add_argument("--skip-provider-lock", action="store_true",
                        default=os.environ.get("CDKTF_SKIP_PROVIDER_LOCK", "").lower() == "true")
    args = parser.parse_args(argv)
    outdir = _synth(Path.cwd())
    if args.command == "synth":
        return 0
    [stack] = json.loads((outdir / "manifest.json").read_text())["stacks"].values()
    workdir = outdir / stack["workingDirectory"]
    needs_lock = not args.skip_provider_lock and not (workdir / ".terraform.lock.hcl").exists()
    _terraform(workdir, "init")
    if needs_lock:
        _terraform(workdir, "providers", "lock", "-platform=linux_amd64")
    approve = ["-auto-approve"] if args.auto_approve else []
    if args.command == "diff":
        _terraform(workdir, "plan", "-input=false", "-out", "plan")
    elif args.command == "deploy":
        _terraform(workdir, "apply", *approve)
    else:
        _terraform(workdir, "destroy", *approve)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except subprocess.CalledProcessError as exc:
        print(f"cdktf stand-in: {exc}", file=sys.stderr)
        sys.exit(1)
