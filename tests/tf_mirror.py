"""Finding a Terraform filesystem provider mirror that holds hashicorp/aws, for the tests that run the real
aws provider offline (terraform validate of every example, the emulator lifecycle).

Looked for in order: the directory in FASTSCALE_TF_MIRROR; the `filesystem_mirror` paths of the Terraform CLI
configuration (TF_CLI_CONFIG_FILE, else ~/.terraformrc); /opt/tf-plugins (where the CI image keeps its
mirror); Terraform's implicit local mirror directories on Linux.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

AWS_PROVIDER = "registry.terraform.io/hashicorp/aws"
MIRROR_ENV = "FASTSCALE_TF_MIRROR"
CANDIDATES = (
    "/opt/tf-plugins",
    "~/.terraform.d/plugins",
    "~/.local/share/terraform/plugins",
    "/usr/local/share/terraform/plugins",
    "/usr/share/terraform/plugins",
)


def _cli_config_mirrors() -> list[str]:
    config = Path(os.environ.get("TF_CLI_CONFIG_FILE") or Path.home() / ".terraformrc")
    if not config.is_file():
        return []
    return re.findall(r'filesystem_mirror\s*{[^}]*path\s*=\s*"([^"]+)"', config.read_text())


def where_looked() -> str:
    return f"{MIRROR_ENV}, the Terraform CLI configuration's filesystem_mirror, {', '.join(CANDIDATES)}"


def find_aws_mirror() -> tuple[Path, str] | None:
    """(mirror directory, newest hashicorp/aws version in it), or None."""
    explicit = os.environ.get(MIRROR_ENV)
    for raw in [explicit] if explicit else [*_cli_config_mirrors(), *CANDIDATES]:
        base = Path(raw).expanduser()
        versions = sorted(
            (p.name for p in (base / AWS_PROVIDER).glob("*") if p.is_dir() and re.fullmatch(r"\d+\.\d+\.\d+", p.name)),
            key=lambda v: tuple(map(int, v.split("."))),
        )
        if versions:
            return base, versions[-1]
    return None


def cli_config(mirror: Path) -> str:
    """A Terraform CLI configuration that installs hashicorp/aws from `mirror` and nothing else from it."""
    return (
        "provider_installation {\n"
        f'  filesystem_mirror {{\n    path = "{mirror}"\n    include = ["{AWS_PROVIDER}"]\n  }}\n'
        f'  direct {{\n    exclude = ["{AWS_PROVIDER}"]\n  }}\n'
        "}\n"
    )
