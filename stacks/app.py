"""`synthesize(config)`: write the Terraform JSON of a config in cdktf's standard layout.

    <outdir>/manifest.json
    <outdir>/stacks/<stack>/cdk.tf.json

The bytes depend only on the config: synthesizing twice, anywhere, gives identical files.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastscale.infra.base import writer
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.model.naming import stack_name
from fastscale.infra.model.state import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, local_state_placement, protect_state_files
from fastscale.infra.project.stack_snapshot import snapshot_json
from fastscale.infra.terraform.outputs import STACK_FILE, check_output_dir, refuse_links, synth_writes
from fastscale.infra.terraform.workdir import (
    leftovers_notice,
    refuse_foreign_files,
    remove_legacy_files,
    terraform_leftovers,
)
from fastscale.stacks.engine_choice import select_engine
from fastscale.stacks.resources.base import StackContent, render_document, stable_json
from fastscale.stacks.stack import EndpointContent

if TYPE_CHECKING:
    from fastscale.stacks.engine import App
    from fastscale.stacks.engine_stack import EndpointStack


@dataclass
class SynthResult:
    outdir: Path
    stack_name: str
    stack_dir: Path  # outdir/stacks/<stack_name>
    resource_counts: dict[str, int] = field(default_factory=dict)  # Terraform resource type -> count
    #: Terraform's data directory and lock file found in the stack directory (`infra.terraform.workdir`), by name.
    terraform_leftovers: list[str] = field(default_factory=list)

    @property
    def stack_file(self) -> Path:
        return self.stack_dir / STACK_FILE

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["outdir"], d["stack_dir"] = str(self.outdir), str(self.stack_dir)
        d["stack_file"] = str(self.stack_file)
        return d


def build_app(
    config: FastscaleConfig, outdir: str | Path = "cdktf.out", project_root: str | Path | None = None
) -> tuple[App, EndpointStack]:
    """The cdktf app holding the stack, not yet synthesized (`main.py` hands it to the cdktf CLI).

    `project_root` anchors the default local state (default: the current directory); raises
    `infra.model.state.StateLayoutError` when the state would be lost or orphaned, and
    `infra.terraform.outputs.OutputPathError` when a file the engine writes is reached through a symbolic link.

    The cdktf CLI then runs Terraform in the stack directory itself, so what fastscale can check is checked here,
    before anything is built: files there that Terraform would read and fastscale did not write are refused
    (`infra.terraform.workdir.ForeignFilesError`, exit code 2 in `main.py`), the cut-over file earlier releases
    wrote there is removed, and Terraform's data directory or lock file found there is named on stderr."""
    placement = local_state_placement(config, outdir, project_root)
    stack_dir = Path(outdir) / "stacks" / stack_name(config)
    refuse_foreign_files(stack_dir)
    # The engine writes these itself: refuse a symbolic link on the way before it is handed the directory.
    refuse_links(synth_writes(Path(outdir), stack_name(config)), root=writer.root_for(outdir, project_root))
    remove_legacy_files(stack_dir)
    notice = leftovers_notice(stack_dir, terraform_leftovers(stack_dir))
    if notice:
        print(notice, file=sys.stderr)

    from fastscale.stacks.engine import App  # lazy: cdktf/jsii and node, only for the engine's path
    from fastscale.stacks.engine_stack import EndpointStack  # lazy: cdktf/jsii and node, only for the engine's path

    # skip_validation: cdktf's validations only check provider presence, which the stack guarantees, and
    # cost a round trip per construct through jsii.
    app = App(outdir=str(outdir), skip_validation=True)
    return app, EndpointStack(app, config, state_path=placement.backend_path if placement else None)


#: The engine's manifest file in the output directory.
MANIFEST_FILE = "manifest.json"


#: Engines that write an empty list or object as `[]` / `{}` (CDK Terrain's safe-stable-stringify); CDK for
#: Terraform's json-stable-stringify puts the brackets on two lines.
COLLAPSES_EMPTY = {"cdktf": False, "cdktn": True}


def engine_files(content: StackContent) -> tuple[str, str]:
    """The stack file and the manifest, as the selected engine's `App.synth` writes them for a `ResourceStack`
    of `content` alone, stamped with its version (its package's, read without loading it);
    tests/stacks/test_engine_parity.py compares the bytes with the engine's own, on either engine."""
    engine = select_engine()
    version, collapse = engine.version, COLLAPSES_EMPTY[engine.module]
    name = content.name
    manifest = {"stacks": {name: {
        "annotations": [], "constructPath": name, "dependencies": [], "name": name,
        "stackMetadataPath": f"stacks/{name}/metadata.json", "synthesizedStackPath": f"stacks/{name}/{STACK_FILE}",
        "workingDirectory": f"stacks/{name}"}}, "version": version}
    return (stable_json(render_document(content, version), collapse_empty=collapse),
            stable_json(manifest, collapse_empty=collapse))


def synthesize(
    config: FastscaleConfig, outdir: str | Path = "cdktf.out", project_root: str | Path | None = None
) -> SynthResult:
    """Synthesize `config` into `outdir`; the config must already have passed validation.

    The stack file is written owner-only (0600): it holds the containers' environment values. An existing
    local state file is made owner-only too. Raises `infra.model.state.StateLayoutError` (nothing written) when
    the local state would lie inside `outdir` or an old-path state file would be orphaned.

    Also refused before anything is written (:class:`infra.terraform.outputs.OutputPathError`): an output directory
    inside ``.git``, one that cannot be created or written, any file or directory synthesis would write that
    is, or is reached through, a symbolic link (checked from the project directory, `project_root`, when
    `outdir` is inside it), and files in the stack directory that Terraform would read there and fastscale did
    not write (:class:`infra.terraform.workdir.ForeignFilesError`). Every file is written by
    :mod:`infra.base.writer`. The cut-over file earlier releases wrote there is removed; Terraform's data
    directory and lock file found there are named in `terraform_leftovers`.

    The files are written from Python (`engine_files`), byte for byte what the engine's `App.synth` writes for
    `build_app`'s app; the engine itself is not loaded."""
    out = Path(outdir)
    root = Path(project_root) if project_root is not None else Path.cwd()
    placement = local_state_placement(config, out, root)  # checked before anything is written
    name = stack_name(config)
    stack_dir = out / "stacks" / name
    refuse_foreign_files(stack_dir)
    base = writer.root_for(out, project_root)  # where links are looked for from: the project, if out is inside
    check_output_dir(out, root=base)
    refuse_links(synth_writes(out, name), root=base)
    content = EndpointContent(config, state_path=placement.backend_path if placement else None)
    stack_text, manifest_text = engine_files(content)
    # Owner-only: the stack file holds environment values, and each run's Terraform directory lands here too.
    writer.make_dirs(stack_dir, root=base, mode=PRIVATE_DIR_MODE, what="stack directory")
    remove_legacy_files(stack_dir)
    writer.write_file(stack_dir / STACK_FILE, stack_text, root=base, mode=PRIVATE_FILE_MODE, what="stack file")
    writer.write_file(out / MANIFEST_FILE, manifest_text, root=base, what="manifest")
    protect_state_files(placement)
    counts = Counter(e.TYPE for e in content.elements if e.SECTION == "resource")
    return SynthResult(outdir=out, stack_name=name, stack_dir=stack_dir, resource_counts=dict(sorted(counts.items())),
                       terraform_leftovers=[f.name for f in terraform_leftovers(stack_dir)])


def synthesize_document(config: FastscaleConfig) -> dict[str, Any]:
    """The stack's Terraform JSON, synthesized into a temporary directory that is removed again.

    The temporary directory stands for the project directory, holding `cdktf.out`: the JSON is the same as
    `fastscale synth --out cdktf.out` writes in a project (the default local state path is relative to it).
    Should the engine ever write the temporary path into the JSON, it reads ``<synth dir>`` instead."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fastscale-synth-") as tmp:
        result = synthesize(config, Path(tmp) / "cdktf.out", project_root=tmp)
        text = result.stack_file.read_text()
        for spelling in {tmp, str(Path(tmp).resolve())}:
            text = text.replace(json.dumps(spelling)[1:-1], "<synth dir>")
        document: dict[str, Any] = json.loads(text)
    return document


def project_snapshot(config: FastscaleConfig, project_dir: str | Path) -> str:
    """The snapshot file `fastscale init` writes for a new project's tests/test_stack.py: the stack as
    `fastscale.stacks.testing.synth` gives it, normalized the same way, in syrupy's JSON format."""
    return snapshot_json(synthesize_document(config), {str(Path(project_dir).resolve()): "<project>"})


def import_blocks(config: FastscaleConfig) -> list[dict[str, str]]:
    """The stack's Terraform import blocks (`{"to": address, "id": live id}`), as the stack file holds them:
    what the next deploy reads into the state instead of creating (see `adopted` in the config)."""
    return [{"to": block["to"], "id": block["id"]} for block in synthesize_document(config).get("import", [])]
