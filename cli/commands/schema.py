"""`fastscale schema`."""

from __future__ import annotations

import click

from fastscale.cli.common import OutputPath
from fastscale.infra.base import writer
from fastscale.infra.base.printable import printable
from fastscale.infra.config import dump_json_schema


@click.command("schema")
@click.option("--out", type=OutputPath(dir_okay=False, writable=True), help="Write to this file instead of stdout.")
def schema_command(out: str | None) -> None:
    """Print the JSON Schema of the config file.

    Point your editor at it for completion and checking, e.g. with the YAML language server:
    `# yaml-language-server: $schema=fastscale.schema.json` at the top of fastscale.yaml.

    \b
    Exit codes:
      0  the schema was printed (or written to --out)
      1  writing --out failed (one `error:` line says why)
      2  bad arguments (e.g. --out names a file that cannot be written, is a
         symbolic link or is reached through one)
    """
    text = dump_json_schema()
    if out:
        writer.write_file(out, text, what="output file")  # an OSError ends as one line, exit 1 (cli.errors)
        click.echo(f"wrote {printable(out)}", err=True)
    else:
        click.echo(text, nl=False)
