"""Is a synthesized stack valid Terraform? `terraform validate`, offline, against a provider mirror.

`terraform validate` needs the providers installed, and without registry access they come from a filesystem
mirror holding hashicorp/aws. Looked for, in order: the directory in FASTSCALE_TF_MIRROR; the
`filesystem_mirror` paths of the Terraform CLI configuration (TF_CLI_CONFIG_FILE, else ~/.terraformrc);
/opt/tf-plugins; Terraform's implicit local mirror directories on Linux. A mirror is a directory as
`terraform providers mirror DIR` writes it (DIR/registry.terraform.io/hashicorp/aws/<version>/...).

What is validated is the aws part of the stack: no awscc provider can be installed from such a mirror here,
so the awscc resources, the awscc provider and every reference to them are cut out first (a reference becomes
a plain string, a dependency on it is dropped). The aws constraint (``~> 6.25``) is set to the mirror's
version; with a 5.x mirror, the one attribute set the stacks use that 5.x lacks (an endpoint configuration
for inference components: ``execution_role_arn``, variants without ``model_name``) is adjusted, and
:class:`ValidateReport` lists what was adjusted. References inside nested blocks are given literal stand-ins
(:func:`literal_stand_ins`), so the provider validates every value there instead of skipping the block.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastscale.infra.base import writer
from fastscale.infra.terraform.runner import TerraformNotFound, find_binary

AWS_PROVIDER = "registry.terraform.io/hashicorp/aws"
MIRROR_ENV = "FASTSCALE_TF_MIRROR"
CANDIDATES = (
    "/opt/tf-plugins",
    "~/.terraform.d/plugins",
    "~/.local/share/terraform/plugins",
    "/usr/local/share/terraform/plugins",
    "/usr/share/terraform/plugins",
)

ENDPOINT_CONFIGURATION = "aws_sagemaker_endpoint_configuration"
#: The model name set on inference-component variants for a 5.x mirror, which requires one.
PLACEHOLDER_MODEL = "model-set-by-aws-6"
_AWSCC_REF = re.compile(r"\$\{awscc_[^}]*\}")


class TerraformUnavailable(Exception):
    """The check cannot run here: no terraform/tofu binary, or no provider mirror holding hashicorp/aws.
    The message says which, and where it looked. Not a pass and not a failure: skip the test with it."""


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


def aws_part(doc: dict[str, Any], aws_version: str) -> tuple[dict[str, Any], list[str]]:
    """The document without anything awscc and without a backend, the aws constraint pinned to
    ``aws_version``; and the attributes adjusted because that version is older than the pin."""

    def scrub(value: Any) -> Any:
        if isinstance(value, str):
            return _AWSCC_REF.sub("awscc-removed", value)
        if isinstance(value, list):
            return [scrub(v) for v in value if not (isinstance(v, str) and v.startswith("awscc_"))]
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items()}
        return value

    out = scrub({k: v for k, v in doc.items() if k != "//"})
    out["resource"] = {t: items for t, items in out.get("resource", {}).items() if not t.startswith("awscc_")}
    out["provider"] = {k: v for k, v in out.get("provider", {}).items() if k != "awscc"}
    terraform = out.setdefault("terraform", {})
    terraform.pop("backend", None)  # validate never touches state (and a child module has no backend)
    aws = terraform.get("required_providers", {}).get("aws", {"source": "hashicorp/aws"})
    terraform["required_providers"] = {"aws": {**aws, "version": aws_version}}
    cut = []
    if int(aws_version.split(".")[0]) < 6:
        for name, body in out["resource"].get(ENDPOINT_CONFIGURATION, {}).items():
            if body.pop("execution_role_arn", None) is not None:
                cut.append(f"{ENDPOINT_CONFIGURATION}.{name}.execution_role_arn")
            for variant in body.get("production_variants", []):
                if "model_name" not in variant:
                    variant["model_name"] = PLACEHOLDER_MODEL
                    cut.append(f"{ENDPOINT_CONFIGURATION}.{name}.production_variants.model_name")
    return out, cut


_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_WHOLE_VARIABLE = re.compile(r"\$\{var\.([A-Za-z0-9_-]+)\}")
#: Terraform's own arguments of a resource: never a value a provider validates.
_META = frozenset({"//", "depends_on", "lifecycle", "count", "for_each", "provider", "provisioner", "connection"})
#: What an ARN-valued reference stands in as (a provider checks an ARN's shape).
STAND_IN_ARN = "arn:aws:iam::123456789012:role/stand-in"
STAND_IN = "stand-in"


def literal_stand_ins(doc: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The document with a literal in place of every reference inside a resource's nested blocks, and where.

    Terraform (SDKv2 providers) skips the provider's validation of a whole nested block when any value in it
    is unknown at validate time: one reference (the variant's `model_name`) or variable (the cut-over count)
    hides every other value of `production_variants` from `terraform validate`. With literals there, the
    provider checks each value. A variable becomes its default; any other reference `stand-in` (an ARN-valued
    one an ARN). Top-level attributes keep their references: an unknown one hides only itself."""
    variables = doc.get("variable", {})
    replaced: list[str] = []

    def literal(text: str, where: str) -> Any:
        whole = _WHOLE_VARIABLE.fullmatch(text)
        if whole and "default" in variables.get(whole.group(1), {}):
            replaced.append(where)
            return variables[whole.group(1)]["default"]
        if not _REFERENCE.search(text):
            return text
        replaced.append(where)
        if _REFERENCE.fullmatch(text):
            return STAND_IN_ARN if text[2:-1].rsplit(".", 1)[-1] == "arn" else STAND_IN
        return _REFERENCE.sub(STAND_IN, text)

    def walk(value: Any, where: str) -> Any:
        if isinstance(value, str):
            return literal(value, where)
        if isinstance(value, list):
            return [walk(v, f"{where}.{i}") for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {k: walk(v, f"{where}.{k}") for k, v in value.items()}
        return value

    out = json.loads(json.dumps(doc))
    for rtype, items in out.get("resource", {}).items():
        for rid, body in items.items():
            for key, value in body.items():
                if key not in _META and isinstance(value, (dict, list)):
                    body[key] = walk(value, f"{rtype}.{rid}.{key}")
    return out, replaced


def offline_env(workdir: Path, mirror: Path) -> dict[str, str]:
    """The environment for a terraform run that installs hashicorp/aws from ``mirror`` only, with its own
    data directory under ``workdir`` (a CLI configuration file is written there)."""
    writer.write_file(workdir / "terraformrc", cli_config(mirror), root=workdir, what="Terraform CLI configuration")
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(workdir / "terraformrc"), "TF_DATA_DIR": str(workdir / "tf-data"),
           "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"}
    env.pop("TF_PLUGIN_CACHE_DIR", None)
    return env


@dataclass
class ValidateReport:
    """What `terraform validate -json` said, and what had to be changed to run it offline."""

    valid: bool
    diagnostics: list[dict[str, Any]]
    provider_version: str  # the hashicorp/aws version from the mirror
    adjusted: list[str] = field(default_factory=list)  # attributes changed for a 5.x mirror
    removed_types: list[str] = field(default_factory=list)  # awscc resource types that were not validated
    stand_ins: list[str] = field(default_factory=list)  # references in blocks given literals (literal_stand_ins)

    def problems(self) -> list[str]:
        out = []
        for d in self.diagnostics:
            where = (d.get("snippet") or {}).get("context") or d.get("address")
            out.append(f"{d.get('severity')}: {d.get('summary')}: {d.get('detail', '')}" + (f" (in {where})" if where else ""))
        return out


def _document(template: Any) -> dict[str, Any]:
    document = getattr(template, "document", template)
    if not isinstance(document, dict):
        raise TypeError(f"expected a Template or a cdk.tf.json dict, not {type(template).__name__}")
    return document


def validate(template: Any, *, terraform: str | None = None, mirror: tuple[Path, str] | None = None) -> ValidateReport:
    """Run `terraform init` and `terraform validate` on the aws part of ``template`` (a Template or the
    document dict), offline. Raises :class:`TerraformUnavailable` when there is no binary or no mirror."""
    try:
        binary = find_binary(terraform)
    except TerraformNotFound as err:
        raise TerraformUnavailable(f"cannot check the Terraform offline: {err}") from None
    mirror = mirror or find_aws_mirror()
    if mirror is None:
        raise TerraformUnavailable(
            f"cannot check the Terraform offline: no provider mirror holding {AWS_PROVIDER} (looked in "
            f"{where_looked()}). Make one with `terraform providers mirror DIR` where the registry is reachable "
            f"and set {MIRROR_ENV}=DIR.")
    document = _document(template)
    part, adjusted = aws_part(document, mirror[1])
    part, stand_ins = literal_stand_ins(part)
    with tempfile.TemporaryDirectory(prefix="fastscale-validate-") as tmp:
        work = Path(tmp)
        writer.write_file(work / "stack" / "main.tf.json", json.dumps(part, indent=1), root=work, parents=True,
                          what="stack file")
        env = offline_env(work, mirror[0])
        init = subprocess.run([binary, "init", "-backend=false", "-input=false", "-no-color"], cwd=work / "stack",
                              env=env, capture_output=True, text=True, timeout=300)
        if init.returncode != 0:
            raise AssertionError(f"terraform init failed (hashicorp/aws {mirror[1]} from {mirror[0]}):\n"
                                 f"{init.stdout}{init.stderr}")
        run = subprocess.run([binary, "validate", "-json", "-no-color"], cwd=work / "stack", env=env,
                             capture_output=True, text=True, timeout=300)
    try:
        report = json.loads(run.stdout)
    except ValueError:
        raise AssertionError(f"terraform validate gave no JSON report:\n{run.stdout}{run.stderr}") from None
    removed = sorted(t for t in document.get("resource", {}) if t.startswith("awscc_"))
    return ValidateReport(valid=bool(report.get("valid")) and report.get("error_count", 1) == 0,
                          diagnostics=report.get("diagnostics", []), provider_version=mirror[1],
                          adjusted=adjusted, removed_types=removed, stand_ins=stand_ins)


def assert_valid_terraform(template: Any, *, terraform: str | None = None,
                           mirror: tuple[Path, str] | None = None) -> ValidateReport:
    """AssertionError listing Terraform's diagnostics unless `terraform validate` accepts the aws part of
    ``template``; :class:`TerraformUnavailable` when the check cannot run here. Warnings do not fail it
    (they are in the returned report)."""
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    report = validate(template, terraform=terraform, mirror=mirror)
    if not report.valid:
        problems = "\n".join(f"  {p}" for p in report.problems())
        raise AssertionError(f"terraform validate (hashicorp/aws {report.provider_version}) rejects the stack:\n"
                             f"{problems}")
    return report
