"""Entry point of the cdktf CLI (`cdktf synth`, `cdktf deploy`), as named in cdktf.json.

Synthesizes the config named by FASTSCALE_CONFIG (default examples/qwen3-8b.yaml). The config is validated
first: on errors the findings are printed on stderr and the process exits with code 2 before anything is
written. So does a stack directory holding files Terraform would read there that fastscale did not write (the
cdktf CLI runs Terraform in that directory), and a state placement that would lose the state. The cdktf CLI shows only its app's stderr when the app fails, and exits 1 itself whatever the app's
code; `fastscale synth` (or `python main.py`) does the same work and keeps fastscale's exit codes.
"""

from __future__ import annotations

import contextlib
import os
import sys

from fastscale.cli.common import load_checked

DEFAULT_CONFIG = "examples/qwen3-8b.yaml"


def main() -> None:
    with contextlib.redirect_stdout(sys.stderr):  # the findings: stderr is what the cdktf CLI shows
        checked = load_checked(os.environ.get("FASTSCALE_CONFIG", DEFAULT_CONFIG), quiet_if_clean=True)

    from fastscale.infra.model.state import StateLayoutError
    from fastscale.infra.terraform.outputs import OutputPathError
    from fastscale.stacks.app import build_app

    try:  # the cdktf CLI tells the app where to write through CDKTF_OUTDIR
        app, _ = build_app(checked.config, os.environ.get("CDKTF_OUTDIR", "cdktf.out"))
    except (StateLayoutError, OutputPathError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    app.synth()


if __name__ == "__main__":
    main()
