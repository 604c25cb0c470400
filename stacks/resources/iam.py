"""IAM resources (hashicorp/aws 6.25): the endpoint's execution role and its inline policy, and the
`aws_caller_identity` data source its trust policy reads the account from (a data source creates nothing).

The resources' props are generated from the provider schema (`stacks.resources.generated.aws`: `IamRoleProps`,
`IamRolePolicyProps`). Policies are JSON strings, as the provider takes them; `stacks.role` builds the
documents, and sets `force_detach_policies` so that `destroy` deletes the role even if someone attached
extra policies to it by hand. The data source is not in the extracted schemas (they hold resources only),
so its props, none, are written here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from fastscale.stacks.resources.base import DataSource, Resource, Scope
from fastscale.stacks.resources.generated.aws import IamRolePolicyProps, IamRoleProps


class IamRole(Resource[IamRoleProps]):
    """`aws_iam_role`."""

    TYPE: ClassVar[str] = "aws_iam_role"
    PROVIDER: ClassVar[str] = "aws"


class IamRolePolicy(Resource[IamRolePolicyProps]):
    """`aws_iam_role_policy`: an inline policy, deleted with its role (no managed policy to leave behind)."""

    TYPE: ClassVar[str] = "aws_iam_role_policy"
    PROVIDER: ClassVar[str] = "aws"


#: Construct id of the stack's one `aws_caller_identity` data source.
CALLER_IDENTITY_ID = "caller"


@dataclass(frozen=True, kw_only=True)
class CallerIdentityProps:
    """`aws_caller_identity` takes no arguments."""


class CallerIdentity(DataSource[CallerIdentityProps]):
    """`data.aws_caller_identity`: the account Terraform deploys into (unknown at synthesis)."""

    TYPE: ClassVar[str] = "aws_caller_identity"
    PROVIDER: ClassVar[str] = "aws"

    @classmethod
    def of_stack(cls, stack: Scope, id_: str) -> CallerIdentity:
        return cls(stack, id_, CallerIdentityProps())
