"""Where Terraform runs: a directory of one run's own that holds only what fastscale wrote.

Terraform reads more than the configuration it is handed. In the directory it runs in it loads every ``*.tf`` and
``*.tf.json`` (OpenTofu also ``*.tofu``, ``*.tofu.json``), override files among them, ``terraform.tfvars`` and
``*.auto.tfvars*``; it takes installed providers, modules and the backend it was initialised with from its data
directory ``.terraform/``, which provider packages to trust from ``.terraform.lock.hcl``, and (without a
``provider_installation`` block in the CLI configuration) provider binaries from ``terraform.d/plugins``. A
repository is input like the config: a pull request can commit any of these into ``cdktf.out/stacks/<stack>/``,
and Terraform would run its provisioners with the job's credentials, print its outputs, let its overrides replace
the stack's own attributes, or start a planted provider binary.

Two guards, each enough on its own for what it covers:

- **Refused** (exit 2, each file named, nothing written or run): a stack directory holding configuration,
  override, variable files, ``terraform.d`` or a CLI configuration file fastscale did not write
  (:func:`refuse_foreign_files`). fastscale writes only ``cdk.tf.json`` there, and earlier releases ran Terraform
  in that directory: a file of the user's own would have been read then, and ignoring it now would make
  Terraform plan to destroy whatever it created. `plan`, `deploy`, `destroy`, `synth` and the cdktf app
  (`cdktf synth`, `cdktf deploy`) all refuse.
- **Never read**: `plan`, `deploy` and `destroy` run Terraform in a :class:`RunDirectory`, made afresh inside
  the stack directory for each run (a name nobody else has, mode 0700, created exclusively), holding the stack's
  JSON this run synthesized, the variables it sets (:mod:`infra.model.cutover`), Terraform's data directory
  (``TF_DATA_DIR``, so the providers it installs and the lock file its ``init`` writes are this run's) and the
  run's saved plans. It is removed when the run ends; one left by a run that died is removed by the next holder
  of the stack's lock (:mod:`.plan_session`). A ``.terraform/`` or lock file in the stack directory itself is
  therefore ignored, not refused: earlier releases of fastscale, and `cdktf deploy`, write them there.
  The cdktf app can only warn about them (:func:`terraform_leftovers`): the cdktf CLI runs Terraform in the
  stack directory.

The state stays where the config says: a remote backend is unchanged, and the local backend's relative path
(relative to the stack directory, as synthesized) is anchored one level up in the run directory's copy, so it
names the same file (:func:`for_run_directory`). Outputs the stack does not define are never reported
(:func:`defined_outputs`).

Pure Python.
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastscale.infra.base import writer
from fastscale.infra.base.safe_files import read_bytes
from fastscale.infra.base.writer import OutputPathError
from fastscale.infra.model import cutover
from fastscale.infra.model.state import PRIVATE_FILE_MODE
from fastscale.infra.terraform.runner import TerraformError

#: The stack file of cdktf's layout: `<outdir>/stacks/<stack>/cdk.tf.json`.
STACK_FILE = "cdk.tf.json"

#: Every run directory is ``<stack dir>/.fastscale-run-<random>``.
RUN_PREFIX = ".fastscale-run-"
#: Terraform's data directory inside the run directory (``TF_DATA_DIR``).
DATA_DIR = ".terraform"
#: Terraform's dependency lock file, which ``init`` writes into its working directory.
LOCK_FILE = ".terraform.lock.hcl"
#: Largest stack JSON read back from the stack directory (a stack of many endpoints is a few hundred kB).
MAX_STACK_BYTES = 64 * 2**20

#: Kinds of entries Terraform reads from its working directory that are refused in a stack directory.
REFUSED_KINDS = frozenset({"configuration", "override", "variables", "provider plugins", "CLI configuration"})
#: Kinds Terraform itself writes into the directory it runs in: ignored by `plan`/`deploy`/`destroy`, warned about
#: by `synth` and the cdktf app.
LEFTOVER_KINDS = frozenset({"data directory", "lock file"})

_CONFIG_SUFFIXES = (".tf.json", ".tofu.json", ".tf", ".tofu")
_VARIABLE_FILES = ("terraform.tfvars", "terraform.tfvars.json")
_VARIABLE_SUFFIXES = (".auto.tfvars", ".auto.tfvars.json")
_NAMED = {"terraform.d": "provider plugins", ".terraformrc": "CLI configuration", "terraform.rc": "CLI configuration",
          DATA_DIR: "data directory", LOCK_FILE: "lock file"}
#: What earlier releases wrote into the stack directory and no release reads there any more: the cut-over
#: counts (now in the run directory). Removed by synthesis, so no Terraform run in the stack directory reads one.
LEGACY_FILES = (cutover.TFVARS_FILE,)


class ForeignFilesError(OutputPathError):
    """The stack directory holds files Terraform would read that fastscale did not write; bad input (exit 2)."""


@dataclass(frozen=True)
class ForeignFile:
    """An entry of a stack directory that Terraform reads when it runs there, and what Terraform takes it for."""

    name: str
    kind: str

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


def entry_kind(name: str) -> str | None:
    """What Terraform takes the directory entry ``name`` for when it runs in that directory; None if nothing.
    Matched without regard to case, so a case-insensitive file system cannot slip one past."""
    lower = name.lower()
    if lower in _NAMED:
        return _NAMED[lower]
    if lower in _VARIABLE_FILES or lower.endswith(_VARIABLE_SUFFIXES):
        return "variables"
    for suffix in _CONFIG_SUFFIXES:
        if lower.endswith(suffix):
            base = lower[: -len(suffix)]
            return "override" if base == "override" or base.endswith("_override") else "configuration"
    return None


def foreign_files(stack_dir: str | os.PathLike[str]) -> list[ForeignFile]:
    """Everything in ``stack_dir`` that Terraform reads when it runs there and that is not fastscale's: any
    entry but the stack file (``cdk.tf.json``) and the files of earlier releases (:data:`LEGACY_FILES`), which
    synthesis removes. Links and directories count like files. A missing directory holds nothing."""
    try:
        entries = sorted(os.scandir(stack_dir), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for entry in entries:
        if entry.name == STACK_FILE or entry.name in LEGACY_FILES:
            continue
        kind = entry_kind(entry.name)
        if kind is not None:
            found.append(ForeignFile(entry.name, kind))
    return found


def refuse_foreign_files(stack_dir: str | os.PathLike[str]) -> None:
    """Raise :class:`ForeignFilesError`, naming each one, when ``stack_dir`` holds configuration, variables,
    provider plugins or a CLI configuration that fastscale did not write."""
    refused = [f for f in foreign_files(stack_dir) if f.kind in REFUSED_KINDS]
    if not refused:
        return
    raise ForeignFilesError(
        f"the stack directory {os.fspath(stack_dir)} holds {len(refused)} file(s) that Terraform reads when it runs "
        f"there and that fastscale did not write: {', '.join(map(str, refused))}. fastscale writes only {STACK_FILE} "
        "there, and a repository can hold any file, so it refuses to go on: remove them (to change what the stack "
        "holds, use `overrides:` in the config). Nothing was written or run."
    )


def terraform_leftovers(stack_dir: str | os.PathLike[str]) -> list[ForeignFile]:
    """Terraform's data directory and lock file in ``stack_dir``: a Terraform run there (``cdktf deploy``,
    ``terraform -chdir``) uses them as they are; `plan`, `deploy` and `destroy` never read them."""
    return [f for f in foreign_files(stack_dir) if f.kind in LEFTOVER_KINDS]


def leftovers_notice(stack_dir: str | os.PathLike[str], found: list[ForeignFile]) -> str:
    """The warning for :func:`terraform_leftovers` (empty when there are none)."""
    if not found:
        return ""
    return (f"notice: {os.fspath(stack_dir)} holds {', '.join(map(str, found))}, not written by this synthesis. A "
            "Terraform run in that directory (`cdktf deploy`, `terraform -chdir`) trusts them as they are, provider "
            "binaries included; fastscale plan, deploy and destroy never read them. Remove them unless you made "
            "them yourself.")


def remove_legacy_files(stack_dir: str | os.PathLike[str]) -> None:
    """Remove what earlier releases wrote into ``stack_dir`` and nothing reads there any more (a link is removed,
    never followed)."""
    for name in LEGACY_FILES:
        path = Path(stack_dir) / name
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                path.unlink()
        except FileNotFoundError:
            pass


# --------------------------------------------------------------------------------------------- the run directory


def for_run_directory(document: dict[str, Any], endpoint_url: str | None = None) -> dict[str, Any]:
    """The stack document as a run directory holds it: unchanged, except

    - that the local backend's relative paths, written relative to the stack directory, are anchored one level up
      (the run directory lies in the stack directory), so they name the same state file and workspace directory.
      Terraform's defaults for the two (``terraform.tfstate``, ``terraform.tfstate.d``) are anchored the same way;
    - with ``endpoint_url`` (an emulator target, for which the run's Terraform has ``AWS_ENDPOINT_URL`` set to it:
      ``infra.base.credentials.terraform_environment``), an aws provider block whose ``endpoints`` all name that
      URL leaves them out (:func:`without_emulator_endpoints`)."""
    if endpoint_url:
        document = without_emulator_endpoints(document, endpoint_url)
    settings = document.get("terraform")
    backend = settings.get("backend") if isinstance(settings, dict) else None
    local = backend.get("local") if isinstance(backend, dict) else None
    if not isinstance(settings, dict) or not isinstance(backend, dict) or not isinstance(local, dict):
        return document
    anchored = dict(local)
    for key, default in (("path", "terraform.tfstate"), ("workspace_dir", "terraform.tfstate.d")):
        value = local.get(key, default)
        if isinstance(value, str) and not posixpath.isabs(value):
            anchored[key] = posixpath.normpath(posixpath.join("..", value))
    return {**document, "terraform": {**settings, "backend": {**backend, "local": anchored}}}


def without_emulator_endpoints(document: dict[str, Any], endpoint_url: str) -> dict[str, Any]:
    """``document`` with the ``endpoints`` block left out of every aws provider block whose endpoints all name
    ``endpoint_url``; everything else as it is.

    The stack names the emulator in that block so that another tool (`cdktf deploy`, plain `terraform`) reaches
    it too. fastscale's own runs need no block: their Terraform has ``AWS_ENDPOINT_URL`` set to the same URL,
    which sends every service's calls there (the block's services and any other). And the block is costly:
    hashicorp/aws validates all of its few hundred service attributes each time it is configured, about 3 s of CPU
    each, and a plan configures it twice (measured with 5.100: a plan of the bundled emulator project 11 s of CPU
    with the block, 3.6 s without). A block naming any other URL is kept."""
    providers = document.get("provider")
    blocks = providers.get("aws") if isinstance(providers, dict) else None
    if not isinstance(providers, dict) or not isinstance(blocks, (list, dict)):
        return document

    def trimmed(block: Any) -> Any:
        if not isinstance(block, dict) or "endpoints" not in block:
            return block
        endpoints = block["endpoints"]
        entries = endpoints if isinstance(endpoints, list) else [endpoints]
        urls = [url for entry in entries if isinstance(entry, dict) for url in entry.values()]
        if not all(isinstance(entry, dict) for entry in entries) or any(url != endpoint_url for url in urls):
            return block
        return {key: value for key, value in block.items() if key != "endpoints"}

    aws = [trimmed(b) for b in blocks] if isinstance(blocks, list) else trimmed(blocks)
    return {**document, "provider": {**providers, "aws": aws}}


def defined_outputs(document: Mapping[str, Any]) -> frozenset[str]:
    """The names of the outputs ``document`` defines."""
    outputs = document.get("output")
    return frozenset(outputs) if isinstance(outputs, dict) else frozenset()


class RunDirectory:
    """The private working directory of one run: see the module's docstring. Made by :meth:`create`, removed by
    :meth:`remove`."""

    def __init__(self, path: Path, document: dict[str, Any], root: str | os.PathLike[str] | None = None):
        self.path = path
        #: The stack document this run synthesized (as in the stack directory, before :func:`for_run_directory`).
        self.document = document
        #: Where the paths below are checked from for links (:mod:`infra.base.writer`).
        self.root = root

    @classmethod
    def create(cls, stack_dir: Path, root: str | os.PathLike[str] | None = None,
               endpoint_url: str | None = None) -> RunDirectory:
        """A new run directory in ``stack_dir`` holding the stack file just synthesized there; no link on the way
        from ``root`` (default: :func:`infra.base.writer.root_for`). ``endpoint_url``: the emulator the run's
        Terraform is pointed at (:func:`for_run_directory`).

        Raises :class:`TerraformError` when that file cannot be read as a JSON object (synthesis wrote none)."""
        source = stack_dir / STACK_FILE
        try:
            document = json.loads(read_bytes(source, MAX_STACK_BYTES, "stack file"))
        except (OSError, ValueError) as exc:
            raise TerraformError(f"cannot read the synthesized stack {source} ({exc}); synthesize the stack first") \
                from None
        if not isinstance(document, dict):
            raise TerraformError(f"the synthesized stack {source} is not a JSON object; synthesize the stack again")
        # A name nobody else has, made by this call alone, mode 0700. Absolute, because Terraform runs in it: a
        # relative TF_DATA_DIR would count from there.
        made = writer.create_unique_directory(stack_dir, RUN_PREFIX, root=root, mode=0o700,
                                              what="Terraform's directory of this run")
        run = cls(Path(os.path.abspath(made)), document, root)
        try:
            run.write(STACK_FILE, json.dumps(for_run_directory(document, endpoint_url), indent=2) + "\n")
        except BaseException:
            run.remove()
            raise
        return run

    def write(self, name: str, text: str) -> Path:
        """Create the file ``name`` in the run directory, owner-only, through the one writer (once: it is new)."""
        path = self.path / name
        writer.write_file(path, text, root=self.root, mode=PRIVATE_FILE_MODE, exclusive=True, what=name)
        return path

    @property
    def env(self) -> dict[str, str]:
        """What Terraform's environment must say for it to keep its data in the run directory (over a
        ``TF_DATA_DIR`` of the caller's)."""
        return {"TF_DATA_DIR": str(self.path / DATA_DIR)}

    @property
    def variables(self) -> dict[str, Any]:
        """The variables the stack declares."""
        declared = self.document.get("variable")
        return declared if isinstance(declared, dict) else {}

    def remove(self) -> None:
        """Remove the directory and everything in it (plans can hold sensitive values). Links inside it are
        removed, never followed. Idempotent."""
        shutil.rmtree(self.path, ignore_errors=True)


def remove_leftover_run_directories(stack_dir: str | os.PathLike[str]) -> list[Path]:
    """Remove the run directories in ``stack_dir`` (a link or file by such a name too, never followed); only a
    holder of the stack's lock makes one, so any found while holding it belongs to a run that ended without
    removing its own."""
    removed = []
    try:
        entries = list(os.scandir(stack_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    for entry in entries:
        if not entry.name.startswith(RUN_PREFIX):
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    return sorted(removed)
