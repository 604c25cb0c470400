"""`fastscale init`: render a new project from the Jinja2 templates in `templates/`.

Rendering is pure (files in memory); the CLI validates the rendered config with the same rules as
`fastscale validate` before it writes anything, so a new project always starts valid.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from fastscale.infra import __version__

CI_CHOICES = ("github", "gitlab", "none")
CI_FILES = {"github": ".github/workflows/fastscale.yml", "gitlab": ".gitlab-ci.yml"}
#: Versions written into generated pipelines (pinned so a pipeline run is reproducible).
CHECKOV_VERSION = "3.3.30"
TERRAFORM_VERSION = "1.11.4"


@cache
def presets() -> dict[str, Any]:
    text = resources.files("fastscale.templates").joinpath("project", "presets.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def model_choices() -> list[str]:
    return sorted(presets()["models"])


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


def _context(opts: ProjectOptions) -> dict[str, Any]:
    data = presets()
    model = data["models"][opts.model]
    state_bucket = opts.state_bucket
    if state_bucket is None and opts.ci != "none":
        # A pipeline needs shared state with locking; local state would be lost with the runner.
        state_bucket = f"{opts.project}-tfstate"
    image = (
        f"{data['image_account']}.dkr.ecr.{opts.region}.amazonaws.com/{data['image_repository']}:{data['image_tag']}"
    )
    return {
        "project": opts.project,
        "region": opts.region,
        "model": model,
        "instance_type": opts.instance_type or model["instance_type"],
        "accelerators": model["accelerators"],
        "endpoint": "llm",
        "component": opts.model,
        "image": image,
        "image_size_gb": data["image_size_gb"],
        "model_bucket": opts.model_bucket or f"{opts.project}-models",
        "state_bucket": state_bucket,
        "scale_to_zero": opts.scale_to_zero,
        "max_instances": 2,
        "max_copies": 2,
        "ci": opts.ci,
        "ci_file": CI_FILES.get(opts.ci, ""),
        "version": __version__,
        "checkov_version": CHECKOV_VERSION,
        "terraform_version": TERRAFORM_VERSION,
    }


def render_project(opts: ProjectOptions) -> dict[str, str]:
    """Relative path -> file content of the new project."""
    from fastscale.templates import render

    ctx = _context(opts)
    files = {
        "fastscale.yaml": render("project/fastscale.yaml.j2", **ctx),
        "cdktf.json": render("project/cdktf.json.j2", **ctx),
        "main.py": render("project/main.py.j2", **ctx),
        "Makefile": render("project/Makefile.j2", **ctx),
        ".gitignore": render("project/gitignore.j2", **ctx),
        "README.md": render("project/README.md.j2", **ctx),
    }
    if opts.ci != "none":
        files[CI_FILES[opts.ci]] = render(f"ci/{opts.ci}.yml.j2", **ctx)
    return files


def existing_files(target: Path, files: dict[str, str]) -> list[str]:
    return sorted(rel for rel in files if (target / rel).exists())


def write_project(target: Path, files: dict[str, str]) -> list[Path]:
    written = []
    for rel, content in files.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        written.append(path)
    return written
