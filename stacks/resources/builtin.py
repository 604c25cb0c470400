"""Terraform's built-in `terraform_data` resource (provider `terraform.io/builtin/terraform`, no download).

It holds a value in the state and is updated whenever the value changes, which makes it a trigger: a
resource whose `lifecycle.replace_triggered_by` names it is replaced whenever the value changes, and only
then. The stacks use it where AWS needs a resource deleted and created around another change that the
provider would otherwise make in place (see `stacks.scaling` and `stacks.endpoint`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from fastscale.stacks.resources.base import Resource


@dataclass(frozen=True, kw_only=True)
class TerraformDataProps:
    #: Any value; a change of it is an update of the `terraform_data`, which triggers the replacements.
    input: Any


class TerraformData(Resource[TerraformDataProps]):
    TYPE: ClassVar[str] = "terraform_data"
    PROVIDER: ClassVar[str] = "terraform"
