"""`fastscale init`: render a new project from the Jinja2 templates in `templates/`.

Rendering is pure (files in memory); the CLI validates the rendered config with the same rules as
`fastscale validate` before it writes anything, so a new project always starts valid.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from fastscale.infra import __version__
from fastscale.infra.base import catalog, writer
from fastscale.infra.config import dump_json_schema, parse_config
from fastscale.infra.project import pipeline
from fastscale.infra.project.stack_snapshot import PROJECT_SNAPSHOT
from fastscale.infra.rules import Severity, run_rules
from fastscale.infra.terraform.outputs import check_output_dir, refuse_links
from fastscale.templates import render

if TYPE_CHECKING:
    from fastscale.infra.rules import Finding

CI_CHOICES = ("github", "gitlab", "none")
CI_FILES = {"github": ".github/workflows/fastscale.yml", "gitlab": ".gitlab-ci.yml"}
#: The JSON Schema of the config, written next to it so editors complete and check it offline.
SCHEMA_FILE = "fastscale.schema.json"
#: The one place a generated project names the fastscale it installs (README, Makefile and CI read it).
REQUIREMENTS_FILE = "requirements.txt"
#: What `make test` installs besides fastscale: pytest and syrupy.
DEV_REQUIREMENTS_FILE = "requirements-dev.txt"
#: The project's own stack tests (fastscale.stacks.testing); their snapshot is written by `init` too.
STACK_TEST_FILE = "tests/test_stack.py"
DISTRIBUTION = "fastscale"
#: Versions written into generated pipelines (pinned so a pipeline run is reproducible).
CHECKOV_VERSION = "3.3.30"
#: GPU instance types an emulator project may use, cheapest first: the ones moto 5.2.5 accepts for an
#: endpoint configuration (it rejects current types such as ml.g6.*). tests/test_scaffold_emulator.py
#: creates an endpoint configuration with each in moto.
EMULATOR_INSTANCE_TYPES = (
    "ml.g4dn.xlarge", "ml.g4dn.2xlarge", "ml.g4dn.4xlarge", "ml.g4dn.8xlarge", "ml.g4dn.12xlarge",
    "ml.g4dn.16xlarge", "ml.p3.2xlarge", "ml.p3.8xlarge", "ml.p3.16xlarge",
)


@cache
def presets() -> dict[str, Any]:
    text = resources.files("fastscale.templates").joinpath("project", "presets.yaml").read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def model_choices() -> list[str]:
    return sorted(presets()["models"])


def installed_requirement(dist: metadata.Distribution | None = None) -> str:
    """The pip requirement that installs this same fastscale elsewhere, from the installer's record.

    pip (and other installers) record where a distribution came from in ``direct_url.json`` (PEP 610) when it
    was not installed from a package index: a VCS URL with the exact commit, a local directory (editable or
    not) or an archive. That record is turned back into a requirement, so a new project installs the fastscale
    that created it; without one, fastscale came from an index and is pinned by version.
    """
    if dist is None:
        # Only an install has an INSTALLER file: a `*.egg-info` that a build left in a source tree on sys.path
        # also answers to the name, but records nothing about where fastscale came from.
        dist = next((d for d in metadata.distributions(name=DISTRIBUTION) if d.read_text("INSTALLER")), None)
        if dist is None:
            return f"{DISTRIBUTION}=={__version__}"
    pinned = f"{DISTRIBUTION}=={dist.version}"
    text = dist.read_text("direct_url.json")
    if not text:
        return pinned
    try:
        record = json.loads(text)
        url = record["url"]
    except (ValueError, KeyError, TypeError):
        return pinned  # an unreadable record: the version is still right
    vcs = record.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") and vcs.get("commit_id"):
        requirement = f"{DISTRIBUTION} @ {vcs['vcs']}+{url}@{vcs['commit_id']}"
    else:
        requirement = f"{DISTRIBUTION} @ {url}"
    if record.get("subdirectory"):
        requirement += f"#subdirectory={record['subdirectory']}"
    return requirement


@dataclass(frozen=True)
class ProjectOptions:
    project: str
    model: str = "qwen3-8b"
    instance_type: str | None = None
    region: str = "us-east-1"
    ci: str = "github"
    scale_to_zero: bool = False
    model_bucket: str | None = None
    state_bucket: str | None = None
    #: pip requirement for fastscale in the new project; None: how this fastscale was installed.
    fastscale_requirement: str | None = None
    #: URL of an AWS emulator: a project that rehearses there (single-model endpoint, local state, no CI).
    emulator: str | None = None


def _context(opts: ProjectOptions) -> dict[str, Any]:
    data = presets()
    model = data["models"][opts.model]
    state_bucket = opts.state_bucket
    if state_bucket is None and opts.ci != "none" and not opts.emulator:
        # A pipeline needs shared state with locking; local state would be lost with the runner.
        state_bucket = f"{opts.project}-tfstate"
    state_key = f"fastscale/{opts.project}.tfstate"
    image = (
        f"{data['image_account']}.dkr.ecr.{opts.region}.amazonaws.com/{data['image_repository']}:{data['image_tag']}"
    )
    return {
        "project": opts.project,
        "region": opts.region,
        "model": model,
        "instance_type": opts.instance_type or _default_instance_type(opts, model),
        "accelerators": model["accelerators"],
        "endpoint": "llm",
        "component": opts.model,
        "image": image,
        "image_size_gb": data["image_size_gb"],
        "model_bucket": opts.model_bucket or f"{opts.project}-models",
        "state_bucket": state_bucket,
        "state_key": state_key,
        "scale_to_zero": opts.scale_to_zero,
        "max_instances": 2,
        "max_copies": 2,
        "ci": opts.ci,
        "ci_file": CI_FILES.get(opts.ci, ""),
        "requirement": opts.fastscale_requirement or installed_requirement(),
        "requirements_file": REQUIREMENTS_FILE,
        "dev_requirements_file": DEV_REQUIREMENTS_FILE,
        "snapshot_file": PROJECT_SNAPSHOT,
        "schema_file": SCHEMA_FILE,
        "checkov_version": CHECKOV_VERSION,
        "emulator": opts.emulator,
        **pipeline.context(),
        **_policies(opts.ci, opts.project, state_bucket, state_key),
    }


def _policies(ci: str, project: str, state_bucket: str | None, state_key: str) -> dict[str, str]:
    """The IAM policies the README prints for a project with a pipeline, as JSON text."""
    if ci == "none" or state_bucket is None:
        return {}

    def text(policy: dict[str, Any]) -> str:
        return json.dumps(policy, indent=2)

    return {
        "plan_trust_policy": text(pipeline.trust_policy(ci, "plan")),
        "deploy_trust_policy": text(pipeline.trust_policy(ci, "deploy")),
        "plan_role_policy": text(pipeline.plan_role_policy(project, state_bucket, state_key)),
    }


def _default_instance_type(opts: ProjectOptions, model: dict[str, Any]) -> str:
    if opts.emulator:
        return emulator_instance_type(opts) or EMULATOR_INSTANCE_TYPES[0]
    return str(model["instance_type"])


def _config_template(opts: ProjectOptions) -> str:
    return "project/fastscale-emulator.yaml.j2" if opts.emulator else "project/fastscale.yaml.j2"


def emulator_instance_type(opts: ProjectOptions) -> str | None:
    """The cheapest of EMULATOR_INSTANCE_TYPES on which the model's config has no finding at all (neither
    error nor warning); None when there is none (the model is too large for the emulator's older types)."""
    from dataclasses import replace

    prices = {spec.instance_type: spec.price_per_hour_usd for spec in catalog.all_instances()}
    for instance_type in sorted(EMULATOR_INSTANCE_TYPES, key=lambda t: prices.get(t, float("inf"))):
        if not config_findings(replace(opts, instance_type=instance_type)):
            return instance_type
    return None


def render_config(opts: ProjectOptions) -> str:
    """Only the new project's fastscale.yaml (what the rules check)."""
    return render(_config_template(opts), **_context(opts))


def config_findings(opts: ProjectOptions) -> list[Finding]:
    """Every finding (errors and warnings) of the config `opts` would write."""
    text = render_config(opts)
    config = parse_config(yaml.safe_load(text), "fastscale.yaml", text)
    return list(run_rules(config))


def config_errors(opts: ProjectOptions) -> list[Finding]:
    """The error findings of the config `opts` would write (empty: the project starts valid)."""
    return [f for f in config_findings(opts) if f.severity is Severity.ERROR]


@dataclass(frozen=True)
class Alternatives:
    """Choices `init` itself can make that give a valid project, when the requested one is not."""

    instance_types: list[str]  # for the requested model, cheapest first
    models: list[str]  # presets that fit the requested instance type


def alternatives(opts: ProjectOptions, limit: int = 3) -> Alternatives:
    """Instance types (for the same model) and models (for the same instance type) that pass every rule.

    Each candidate is rendered and checked with the same rules as the project itself, so a suggestion is only
    made when following it gives a valid project. Only NVIDIA GPU types are tried: the presets' serving image
    is a CUDA build.
    """
    from dataclasses import replace

    gpu_types = sorted(
        (spec for spec in catalog.all_instances() if spec.accelerator_kind == "nvidia-gpu"),
        key=lambda spec: (spec.price_per_hour_usd, spec.instance_type),
    )
    instance_types: list[str] = []
    for spec in gpu_types:
        if len(instance_types) == limit:
            break
        if spec.instance_type != opts.instance_type and not config_errors(
            replace(opts, instance_type=spec.instance_type)
        ):
            instance_types.append(spec.instance_type)
    models = []
    if opts.instance_type:
        models = [
            name for name in model_choices()
            if name != opts.model and not config_errors(replace(opts, model=name))
        ]
    return Alternatives(instance_types, models)


def render_project(opts: ProjectOptions) -> dict[str, str]:
    """Relative path -> file content of the new project."""
    ctx = _context(opts)
    files = {
        "fastscale.yaml": render(_config_template(opts), **ctx),
        SCHEMA_FILE: dump_json_schema(),
        REQUIREMENTS_FILE: render("project/requirements.txt.j2", **ctx),
        DEV_REQUIREMENTS_FILE: render("project/requirements-dev.txt.j2", **ctx),
        STACK_TEST_FILE: render("project/test_stack.py.j2", **ctx),
        ".checkov.yaml": _checkov_config(),
        "cdktf.json": render("project/cdktf.json.j2", **ctx),
        "main.py": render("project/main.py.j2", **ctx),
        "Makefile": render("project/Makefile.j2", **ctx),
        ".gitignore": render("project/gitignore.j2", **ctx),
        "README.md": render("project/README.md.j2", **ctx),
    }
    if opts.ci != "none":
        files[CI_FILES[opts.ci]] = render(f"ci/{opts.ci}.yml.j2", **ctx)
    return files


def _checkov_config() -> str:
    return resources.files("fastscale.templates").joinpath("project", "checkov.yaml").read_text(encoding="utf-8")


def existing_files(target: Path, files: dict[str, str]) -> list[str]:
    """Files that are already there, dangling symbolic links included (they exist as links)."""
    return sorted(rel for rel in files if os.path.lexists(target / rel))


def _paths_written(target: Path, files: dict[str, str]) -> list[Path]:
    """Every file and every directory under ``target`` that writing ``files`` creates or writes into."""
    paths: list[Path] = []
    for rel in files:
        parts = Path(rel).parts
        paths += [target.joinpath(*parts[: i + 1]) for i in range(len(parts))]
    return list(dict.fromkeys(paths))


def check_project_target(target: Path, files: dict[str, str]) -> None:
    """Refuse, before writing anything, a target inside ``.git``, one that cannot be written, and any
    file or directory of the project that is, or is reached through, a symbolic link (even with --force:
    a link, dangling or not, would make init write outside the project)."""
    root = writer.root_for(target)
    check_output_dir(target, "project directory", root=root)
    refuse_links(_paths_written(target, files), "project path", root=root)


def write_project(target: Path, files: dict[str, str]) -> list[Path]:
    check_project_target(target, files)
    root = writer.root_for(target)
    written = []
    for rel, content in files.items():
        path = target / rel
        writer.write_file(path, content, root=root, parents=True, what="project path")
        written.append(path)
    return written
