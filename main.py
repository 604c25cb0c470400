"""Entry point of the cdktf CLI (`cdktf synth`, `cdktf deploy`), as named in cdktf.json.

Synthesizes the config named by FASTSCALE_CONFIG (default examples/qwen3-8b.yaml). The config is validated
first: on errors the findings are printed and the process exits with code 2 before anything is written.
`fastscale synth` does the same without the cdktf CLI.
"""

from __future__ import annotations

import os

from fastscale.cli.common import load_checked

DEFAULT_CONFIG = "examples/qwen3-8b.yaml"


def main() -> None:
    checked = load_checked(os.environ.get("FASTSCALE_CONFIG", DEFAULT_CONFIG), quiet_if_clean=True)

    from fastscale.stacks.app import build_app

    # The cdktf CLI tells the app where to write through CDKTF_OUTDIR.
    app, _ = build_app(checked.config, os.environ.get("CDKTF_OUTDIR", "cdktf.out"))
    app.synth()


if __name__ == "__main__":
    main()
